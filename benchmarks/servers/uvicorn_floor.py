"""The uvicorn floor: the least an ASGI app under uvicorn can do to pace an SSE stream.

The raw floor (``floor.py``) parses nothing and has no HTTP server: it shows what the loop
and the kernel alone cost. This one is a bare ASGI callable (no framework, no routing, no
middleware, no JSON per event) served by uvicorn with uvloop and httptools, as ``mockserver serve``
is. What it costs over the raw floor is uvicorn's: the HTTP parsing, the ASGI messages, the
request task. What mockserver costs over it is mockserver's own.

Usage: python benchmarks/servers/uvicorn_floor.py PORT   (rate, TTFT and token count from the x-mock-* request
headers, tokens per event from x-mock-tokens-per-chunk, as the raw floor reads them). Events fall
due on the same absolute deadlines; when it wakes late it sends every due event, each its own
event, in one body message.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import uvicorn
from floor import DONE, chunk_event

Message = dict[str, Any]


def _header(headers: list[tuple[bytes, bytes]], name: bytes, default: bytes) -> bytes:
    for key, value in headers:
        if key == name:
            return value
    return default


async def lifespan(receive: Any, send: Any) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def app(scope: Message, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    start = time.monotonic()
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await pace(scope["headers"], start, send)


async def pace(headers: list[tuple[bytes, bytes]], start: float, send: Any) -> None:
    """Send the stream the ``x-mock-*`` headers ask for, on deadlines from ``start``, then end it."""
    rate = float(_header(headers, b"x-mock-tokens-per-second", b"54"))
    first = start + float(_header(headers, b"x-mock-ttft-ms", b"0")) / 1000
    n = int(_header(headers, b"x-mock-output-tokens", b"100"))
    per_chunk = int(_header(headers, b"x-mock-tokens-per-chunk", b"1"))
    chunks = -(-n // per_chunk)
    event = chunk_event(per_chunk)
    sent = 0
    while sent < chunks:
        delay = first + (sent * per_chunk + per_chunk - 1) / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        due = max(sent + 1, min(chunks, int(((time.monotonic() - first) * rate + 1) // per_chunk)))
        await send({"type": "http.response.body", "body": event * (due - sent), "more_body": True})
        sent = due
    delay = first + n / rate - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)
    await send({"type": "http.response.body", "body": DONE, "more_body": False})


if __name__ == "__main__":
    # The same server options as `mockserver serve`: uvloop, httptools, and its backlog of 2048.
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="warning")
