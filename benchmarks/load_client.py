"""A lean load client for hundreds of concurrent SSE streams: one asyncio ``Protocol`` per stream.

The stream-per-coroutine client in ``sse_client.py`` parses every event in Python,
which costs the client more CPU than the server spends at a few hundred streams.
This one records only what the figures need, per read rather than per event: the
arrival time of each read that carries text, how many text events it carried, and
how many SSE events came in all (``bytes.count`` does the counting, in C).

The server under test closes each connection after its reply (``connection: close``),
which is how the client knows a stream is over.
"""

from __future__ import annotations

import asyncio
import functools
import time
import typing
from dataclasses import dataclass, field

import orjson

# Markers of an event that carries visible text, per wire format.
CHAT_TEXT = b'"delta":{"content":"'
RESPONSES_TEXT = b"event: response.output_text.delta"


@dataclass
class Trace:
    """What one stream looked like from the client."""

    sent_at: float = 0.0
    status: int = 0
    events: int = 0  # every SSE event, text or not
    text_events: int = 0
    reads: list[tuple[float, int]] = field(default_factory=list)  # (arrival, text events in that read)
    ended_at: float = 0.0
    error: str | None = None

    @property
    def first_text(self) -> float:
        return self.reads[0][0]

    @property
    def last_text(self) -> float:
        return self.reads[-1][0]

    def gaps(self) -> list[float]:
        """Seconds between consecutive text events (0 for events that arrived in the same read)."""
        out: list[float] = []
        previous = None
        for when, count in self.reads:
            if previous is not None:
                out.append(when - previous)
            out.extend([0.0] * (count - 1))
            previous = when
        return out


class _StreamProtocol(asyncio.Protocol):
    def __init__(self, request: bytes, marker: bytes, trace: Trace, done: asyncio.Future[Trace]) -> None:
        self.request = request
        self.marker = marker
        self.trace = trace
        self.done = done
        self.buffer = b""
        self.head_seen = False
        self.keep = len(marker) - 1  # shorter than any marker: never holds a whole one

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.trace.sent_at = time.perf_counter()
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        # Runs once per read of every stream: at 250 streams x 750 tokens/s that is up to
        # 190k calls a second, so it only counts. A marker cut across two reads is counted
        # once, by looking at the tail of the previous read.
        now = time.perf_counter()
        if not self.head_seen:
            buffer = self.buffer + data
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self.buffer = buffer
                return
            self.trace.status = int(buffer[9:12])
            self.head_seen = True
            data = buffer[end + 4 :]
        joined = self.buffer + data
        trace = self.trace
        trace.events += data.count(b"\n\n") + (self.buffer[-1:] == b"\n" and data[:1] == b"\n")
        text = joined.count(self.marker)
        self.buffer = data[-self.keep :]
        if text:
            trace.text_events += text
            trace.reads.append((now, text))

    def connection_lost(self, exc: Exception | None) -> None:
        self.trace.ended_at = time.perf_counter()
        if exc is not None:
            self.trace.error = str(exc)
        if not self.done.done():
            self.done.set_result(self.trace)


def request_bytes(port: int, path: str, body: dict[str, object], headers: dict[str, str]) -> bytes:
    payload = orjson.dumps(body)
    head = [
        f"POST {path} HTTP/1.1",
        f"host: 127.0.0.1:{port}",
        "content-type: application/json",
        f"content-length: {len(payload)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


async def run_streams(port: int, requests: list[bytes], marker: bytes = CHAT_TEXT, ramp_s: float = 0.0) -> list[Trace]:
    """Open one connection per request, all at once (or spread evenly over ``ramp_s`` seconds);
    return when every stream has ended."""
    loop = asyncio.get_running_loop()
    futures: list[asyncio.Future[Trace]] = [loop.create_future() for _ in requests]

    def protocol(request: bytes, done: asyncio.Future[Trace]) -> _StreamProtocol:
        return _StreamProtocol(request, marker, Trace(), done)

    async def connect(index: int, request: bytes, done: asyncio.Future[Trace]) -> None:
        if ramp_s:
            await asyncio.sleep(ramp_s * index / len(requests))
        await loop.create_connection(lambda: protocol(request, done), "127.0.0.1", port)

    await asyncio.gather(
        *(connect(i, request, done) for i, (request, done) in enumerate(zip(requests, futures, strict=True)))
    )
    return list(await asyncio.gather(*futures))


class _OpeningProtocol(asyncio.Protocol):
    """Sends one request and resolves once the reply's head (status line and headers) is in."""

    def __init__(self, request: bytes, opened: asyncio.Future[asyncio.Transport]) -> None:
        self.request, self.opened, self.received = request, opened, b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if b"\r\n\r\n" in self.received and not self.opened.done():
            if self.received.startswith(b"HTTP/1.1 200"):
                self.opened.set_result(self.transport)
            else:
                self.opened.set_exception(RuntimeError(self.received.split(b"\r\n", 1)[0].decode()))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"closed before the reply's head: {exc}"))


async def open_streams(port: int, requests: list[bytes]) -> list[asyncio.Transport]:
    """Open one connection per request, all at once, and return as soon as every reply's head
    (a 200 and its headers) has come: the streams are open, and none of their events need have
    come. The caller closes the transports (the client leaving)."""
    loop = asyncio.get_running_loop()
    futures: list[asyncio.Future[asyncio.Transport]] = [loop.create_future() for _ in requests]
    for request, opened in zip(requests, futures, strict=True):
        await loop.create_connection(functools.partial(_OpeningProtocol, request, opened), "127.0.0.1", port)
    return list(await asyncio.gather(*futures))
