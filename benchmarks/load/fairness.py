"""Fairness: paced streams beside a reply at the highest rate a client may ask for, whose reader
pauses and then reads at full speed.

20 streams at 750 tokens/s (Ultrafast's rate) run beside a 128,000-token reply at 100,000 tokens/s
(``MAX_TOKENS_PER_SECOND``). That reply's client reads nothing for 2 s, so its whole schedule falls
due, then reads as fast as it can. The figure: the paced streams' worst gap between two reads,
from their first token to their last, and the big reply's fastest 1,000 events against its rate.

The server runs in its own process (``mockserver serve``) pinned to core 0, the client here with raw
sockets pinned to core 1.
``tests/e2e/test_fairness.py`` runs the same with a generous bound; the tight figure is here.

    python -m benchmarks fairness            # writes benchmarks/results/fairness.json
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import sys
import time
from typing import Any

import orjson

from benchmarks.harness import arguments, results_path, write_results

PACED = 20
PACED_RATE = 750
PACED_TOKENS = 3000  # 4 s each: they span the big reply's pause and its catch-up
BIG_RATE = 100_000
BIG_TOKENS = 128_000
PAUSE_S = 2.0
KEY = "sk-mock-preview"


def _request(port: int, rate: float, tokens: int) -> bytes:
    body = orjson.dumps({"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True})
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nauthorization: Bearer {KEY}\r\nconnection: close\r\n"
        f"x-mock-tokens-per-second: {rate}\r\nx-mock-ttft-ms: 0\r\nx-mock-output-tokens: {tokens}\r\n\r\n"
    )
    return head.encode() + body


async def _paced(port: int) -> list[float]:
    """The arrival times of every read that brought data, until the connection closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_request(port, PACED_RATE, PACED_TOKENS))
    times = []
    while data := await reader.read(65536):
        if b"content" in data:
            times.append(time.perf_counter())
    writer.close()
    return times


async def _big(port: int) -> tuple[int, list[float]]:
    """Pauses, then reads at full speed; returns the bytes read and the time of each 1 MB."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_request(port, BIG_RATE, BIG_TOKENS))
    await asyncio.sleep(PAUSE_S)  # reads nothing: the buffers fill and the server's writes are held back
    total, marks, next_mark = 0, [], 1 << 20
    while data := await reader.read(1 << 20):
        total += len(data)
        if total >= next_mark:
            marks.append(time.perf_counter())
            next_mark += 1 << 20
    writer.close()
    return total, marks


def _big_reader(port: int, out: Any) -> None:
    out.send(asyncio.run(_big(port)))


async def _paced_gaps(port: int) -> list[float]:
    paced = await asyncio.gather(*(_paced(port) for _ in range(PACED)))
    return [b - a for times in paced for a, b in itertools.pairwise(times)]


def _gaps(gaps: list[float]) -> dict[str, float]:
    ordered = sorted(gaps)
    return {
        "worst_gap_ms": round(ordered[-1] * 1000, 1),
        "gap_p99_ms": round(ordered[int(len(ordered) * 0.99)] * 1000, 2),
    }


def measure(port: int) -> dict[str, Any]:
    """Run the scene against a server listening on ``port`` (with time scale 1): the paced streams
    alone, then beside the big reply, whose reader is a process of its own (so that reading 36 MB
    does not hold up this one's reads)."""
    alone = asyncio.run(_paced_gaps(port))
    receive, send = multiprocessing.Pipe(duplex=False)
    reader = multiprocessing.get_context("spawn").Process(target=_big_reader, args=(port, send))
    reader.start()
    time.sleep(0.5)  # the big reply first: its pause covers the paced streams' start
    beside = asyncio.run(_paced_gaps(port))
    total, marks = receive.recv()
    reader.join(30)
    return {
        "paced_streams": PACED,
        "alone": _gaps(alone),
        "beside_the_big_reply": _gaps(beside),
        "big_reply_bytes": total,
        "big_reply_seconds_after_pause": round(marks[-1] - marks[0], 2) if len(marks) > 1 else None,
    }


def main() -> None:
    args = arguments("fairness", __doc__).parse_args()
    from tests.processes import ServerProcess  # the tests' way of running `mockserver serve`

    load = os.getloadavg()
    with ServerProcess("--time-scale", "1") as server:
        assert server.proc is not None
        # The server on one core, this client on the other (as the sweep does).
        os.sched_setaffinity(server.proc.pid, {0})
        os.sched_setaffinity(0, {1})
        figures = measure(server.port)
    result = {
        "what": "20 streams at 750 tok/s beside a 128k-token reply at 100k tok/s paused 2 s, then read at full speed",
        "load_average_before": [round(x, 2) for x in load],
        "python": sys.version.split()[0],
        **figures,
    }
    write_results(results_path("fairness", args), result, stamp=False, show=True)


if __name__ == "__main__":
    main()
