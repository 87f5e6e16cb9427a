"""A lean HTTP/1.1 + SSE load client: raw asyncio streams, no SDK, no HTTP library.

The official SDK spends about 100 µs of CPU per chunk, ten times the server's cost
(docs/benchmarks.md), so a benchmark that measures the server must not use it. This
client records the arrival time of every SSE event and nothing else.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import orjson


@dataclass
class StreamTrace:
    sent_at: float
    status: int = 0
    events: list[tuple[float, bytes]] = field(default_factory=list)  # (arrival, data payload)

    def content_times(self) -> list[float]:
        """Arrival times of events that carry visible text."""
        out = []
        for when, data in self.events:
            if data.startswith(b"[DONE]"):
                continue
            payload = orjson.loads(data)
            choices = payload.get("choices") or []
            if (choices and choices[0].get("delta", {}).get("content")) or payload.get(
                "type"
            ) == "response.output_text.delta":
                out.append(when)
        return out


async def stream(host: str, port: int, path: str, body: dict, headers: dict[str, str]) -> StreamTrace:
    reader, writer = await asyncio.open_connection(host, port)
    payload = orjson.dumps(body)
    head = [
        f"POST {path} HTTP/1.1",
        f"host: {host}:{port}",
        "content-type: application/json",
        f"content-length: {len(payload)}",
        "connection: close",
    ]
    head += [f"{k}: {v}" for k, v in headers.items()]
    trace = StreamTrace(sent_at=time.perf_counter())
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()
    status_line = await reader.readline()
    trace.status = int(status_line.split()[1])
    chunked = False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower():
            chunked = True
    buffer = b""
    while True:
        if chunked:
            size_line = await reader.readline()
            if not size_line:
                break
            size = int(size_line.strip() or b"0", 16)
            if size == 0:
                break
            data = await reader.readexactly(size + 2)
            buffer += data[:-2]
        else:
            data = await reader.read(65536)
            if not data:
                break
            buffer += data
        now = time.perf_counter()
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            for line in event.split(b"\n"):
                if line.startswith(b"data: "):
                    trace.events.append((now, line[6:]))
    writer.close()
    return trace
