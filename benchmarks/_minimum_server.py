"""The least an OpenAI-compatible streaming endpoint does before its stream opens, under uvicorn.

The uvicorn floor (``_uvicorn_floor.py``) reads nothing of a request. A server that answers
``POST /v1/chat/completions`` as the live API does must at least, before the reply's head goes out:

- read the body and parse it as JSON (orjson, as mockserver does);
- validate it against the Chat Completions request schema (mockserver's own pydantic model, in
  strict mode, as mockserver does);
- look the bearer key up;
- send the head with the headers the live API sends on a stream: ``x-request-id``,
  ``openai-organization``, ``openai-project``, ``openai-version``, ``openai-processing-ms``, the six
  ``x-ratelimit-*`` headers, and the event-stream ones.

This server does that and nothing else: no accounts, entitlements, capacity or rate-limit windows,
no prompt count, no plan, no journal or metrics. Then it paces the stream exactly as the uvicorn
floor does (pre-encoded events on the same deadlines). What it costs over the uvicorn floor is the
price of those steps; set beside mockserver in ``benchmarks/sweep.py``'s TTFT-0 cells and in
``benchmarks/http_servers.py``, it shows how much of a request's cost any server on this stack pays.

Usage: python _minimum_server.py PORT   (needs the repository on ``sys.path``, for the schema).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from _uvicorn_floor import lifespan, pace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockserver.api.openai.schemas import ChatCompletionRequest

Message = dict[str, Any]

VALIDATE = ChatCompletionRequest.__pydantic_validator__.validate_python
KEYS = {b"Bearer sk-mock-preview": (b"org-mock-preview", b"proj_mock_preview")}  # the built-in fixture's key
_draw = random.Random(0).getrandbits


def head(organization: bytes, project: bytes, started: float) -> list[tuple[bytes, bytes]]:
    return [
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"x-request-id", b"req_%032x" % _draw(128)),
        (b"openai-version", b"2020-10-01"),
        (b"openai-processing-ms", b"%d" % ((time.monotonic() - started) * 1000)),
        (b"openai-organization", organization),
        (b"openai-project", project),
        (b"x-ratelimit-limit-requests", b"10000"),
        (b"x-ratelimit-limit-tokens", b"30000000"),
        (b"x-ratelimit-remaining-requests", b"9999"),
        (b"x-ratelimit-remaining-tokens", b"29999832"),
        (b"x-ratelimit-reset-requests", b"6ms"),
        (b"x-ratelimit-reset-tokens", b"1ms"),
    ]


async def app(scope: Message, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    start = time.monotonic()
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    headers = scope["headers"]
    key = next((value for name, value in headers if name == b"authorization"), b"")
    organization, project = KEYS[key]
    VALIDATE(orjson.loads(b"".join(parts)), strict=True)
    await send({"type": "http.response.start", "status": 200, "headers": head(organization, project, start)})
    await pace(headers, start, send)


if __name__ == "__main__":
    # The same server options as `mockserver serve` and the uvicorn floor.
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="warning")
