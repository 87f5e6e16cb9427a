"""The FastAPI floor for start-up: a bare FastAPI app with one route, ``GET /health``, under uvicorn.

Usage: python benchmarks/servers/fastapi_floor.py PORT. What any FastAPI server pays to import, build and listen;
``weight.py`` sets ``mockserver serve``'s time to its first ``/health`` beside it.
"""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI

app = FastAPI()


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
