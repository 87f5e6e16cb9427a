"""The raw floor: the least a server on this machine can do to pace an SSE stream.

A bare asyncio server on uvloop that answers any POST with pre-encoded chunks on
the same absolute deadlines mockserver uses. It has no framework, no parsing and
no JSON encoding per event, so it shows what the loop and the kernel alone cost.

Usage: python benchmarks/servers/floor.py PORT   (rate, TTFT and token count come from the
x-mock-* request headers, as with mockserver; tokens per event from
x-mock-tokens-per-chunk). When it wakes late it sends every due event, each its
own event, in one write.
"""

from __future__ import annotations

import asyncio
import sys
import time

import uvloop


def chunk_event(words: int) -> bytes:
    text = b" word" * words
    return b'data: {"choices":[{"index":0,"delta":{"content":"' + text + b'"},"finish_reason":null}]}\n\n'


DONE = b"data: [DONE]\n\n"


def frame(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    start = time.monotonic()
    head = await reader.readuntil(b"\r\n\r\n")
    headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:] if b": " in line)
    length = int(headers.get(b"content-length", b"0"))
    await reader.readexactly(length)
    rate = float(headers.get(b"x-mock-tokens-per-second", b"54"))
    ttft = float(headers.get(b"x-mock-ttft-ms", b"0")) / 1000
    n = int(headers.get(b"x-mock-output-tokens", b"100"))
    per_chunk = int(headers.get(b"x-mock-tokens-per-chunk", b"1"))
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
    first = start + ttft
    chunks = -(-n // per_chunk)
    event = chunk_event(per_chunk)
    sent = 0
    while sent < chunks:
        # Chunk j is due with its last token, at first + (j * per_chunk + per_chunk - 1) / rate.
        delay = first + (sent * per_chunk + per_chunk - 1) / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        due = min(chunks, int(((time.monotonic() - first) * rate + 1) // per_chunk))
        due = max(due, sent + 1)
        writer.write(frame(event * (due - sent)))  # every due chunk its own event, all in one write
        await writer.drain()
        sent = due
    delay = first + n / rate - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)
    writer.write(frame(DONE) + b"0\r\n\r\n")
    await writer.drain()
    writer.close()


async def main(port: int) -> None:
    # The same listen backlog as uvicorn (2048): asyncio's default of 100 drops SYNs of a big burst.
    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=2048)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
