"""The granian floor: the same bare ASGI app as ``uvicorn_floor.py``, served by granian instead of uvicorn.

granian's HTTP layer is written in Rust; this runs its in-process server (``granian.server.embed``)
with one runtime thread, HTTP/1.1 and uvloop, so the whole server is one process whose CPU
``python -m benchmarks http_servers`` reads as it reads uvicorn's. What it costs over the raw floor is
granian's; set beside ``uvicorn_floor.py``, it shows what the HTTP server alone takes of a request.

Usage: python benchmarks/servers/granian_floor.py PORT   (granian comes with the ``benchmarks`` extra).
"""

from __future__ import annotations

import sys
from typing import Any

import uvloop
from granian.constants import HTTPModes, Interfaces
from granian.server.embed import Server
from uvicorn_floor import app


def server(app: Any, port: int) -> Server:
    """granian's in-process server for ``app`` on ``port``: one runtime thread, HTTP/1.1, uvloop."""
    return Server(
        app,
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        backlog=2048,  # as uvicorn's and the floor's
        log_enabled=False,
        runtime_threads=1,
        websockets=False,
    )


async def main(port: int) -> None:
    await server(app, port).serve()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
