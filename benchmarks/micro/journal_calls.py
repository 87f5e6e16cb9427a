"""What the request journal costs, in memory and shared through Redis (``--state redis://...``).

- **record**: the journal's ``on_complete`` hook for one finished Chat Completions exchange (a
  300-byte body, the SDK's headers), which the middleware awaits before the end of the reply goes
  out. In Redis it is shaping and masking the entry, then one script (one round trip); the floor
  is a bare ``PING`` on the same connection.
- **read**: ``GET /_mock/requests``'s work for a full journal (``--entries``, the default
  ``journal_size``): every entry, and one test's 10 newest (the whole list is fetched and filtered
  either way).
- **bytes per entry**: what the shared journal stores for that exchange, against its body alone
  (``journal_bytes`` counts the former with Redis, the latter in memory).

    python -m benchmarks journal_calls          # needs redis-server (Debian: apt-get install redis-server)

Writes ``benchmarks/results/journal_calls.json``.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from benchmarks.harness import arguments, results_path, write_results
from mockserver.config.settings import DEFAULT_JOURNAL_SIZE
from mockserver.harness.journal import Journal, JournalQuery, RequestJournal
from mockserver.harness.journal.shared import SharedJournal
from mockserver.service.exchange import Exchange, Usage
from mockserver.state import shared
from mockserver.state.journal_log import JournalLog

ROUNDS = 5
KNOWN_KEYS = ["sk-mock-preview", "sk-mock-standard", "sk-mock-other"]
HEADERS = {
    "host": "127.0.0.1:8000",
    "accept": "application/json",
    "content-type": "application/json",
    "user-agent": "OpenAI/Python 2.8.1",
    "authorization": "Bearer sk-mock-preview",
    "x-stainless-lang": "python",
    "x-stainless-package-version": "2.8.1",
    "x-stainless-os": "Linux",
    "x-stainless-arch": "x64",
    "x-stainless-runtime": "CPython",
    "x-stainless-runtime-version": "3.11.2",
    "x-stainless-retry-count": "0",
    "x-mock-test-id": "tests/test_app.py::test_answer",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exchange(n: int, test_id: str) -> Exchange:
    body = {
        "model": "gpt-5.6-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. " * 3},
            {"role": "user", "content": f"Question number {n}: what is the capital of France, and why?"},
        ],
        "stream": True,
        "max_completion_tokens": 64,
    }
    raw = orjson.dumps(body)
    body["messages"][1]["content"] += "!" * (300 - len(raw))  # a 300-byte body
    done = Exchange(f"req_{n:032x}", "POST", "/v1/chat/completions", {**HEADERS, "x-mock-test-id": test_id}, 0.0)
    done.request_body, done.body = orjson.dumps(body), body
    done.model, done.tier, done.requested_tier, done.status, done.stream = "gpt-5.6-mini", "default", None, 200, True
    done.usage, done.finished_at = Usage(60, 64, 0), 0.8
    return done


async def per_call(call: Callable[[int], Awaitable[object]], count: int) -> float:
    """Microseconds per call, one at a time (what one request waits): the best of :data:`ROUNDS`
    rounds of ``count / ROUNDS`` calls, as other work on a shared machine only ever adds time."""
    best, size = float("inf"), max(1, count // ROUNDS)
    for round_start in range(0, size * ROUNDS, size):
        start = time.perf_counter()
        for n in range(round_start, round_start + size):
            await call(n)
        best = min(best, (time.perf_counter() - start) / size * 1e6)
    return best


async def record(journal: RequestJournal, done: Exchange) -> None:
    journal.on_response_start(done)
    finished = journal.on_complete(done)
    if finished is not None:
        await finished


async def measure(url: str, entries: int, count: int) -> dict[str, Any]:
    where = shared.Shared.from_url(url)
    log = JournalLog(where)
    memory = Journal(entries)
    redis_journal = SharedJournal(log, entries, lambda: KNOWN_KEYS)
    scopes = [f"test-{n % 50}" for n in range(count)]
    results: dict[str, Any] = {}
    try:
        await where.connection.ping()
        results["ping_us"] = await per_call(lambda n: where.connection.ping(), count)
        for name, journal in (("memory", memory), ("redis", redis_journal)):
            results[name] = await one_journal(journal, scopes, count)
        results["redis"]["shape_us"] = round(await per_call(_shape(redis_journal, scopes), count), 1)
        results["ping_us"] = min(results["ping_us"], await per_call(lambda n: where.connection.ping(), count))
        body = len(exchange(0, scopes[0]).request_body)
        held = results["redis"]["held"]
        results["bytes_per_entry"] = {"body": body, "stored": round(held["bytes"] / held["entries"])}
        results["ping_us"] = round(results["ping_us"], 1)
        results["ratios"] = {
            "record_redis_over_memory": round(results["redis"]["record_us"] / results["memory"]["record_us"], 1),
            "record_redis_over_ping": round(results["redis"]["record_us"] / results["ping_us"], 2),
        }
    finally:
        await where.connection.aclose()
    return results


async def one_journal(journal: RequestJournal, scopes: list[str], count: int) -> dict[str, Any]:
    """Record ``count`` exchanges one at a time (the journal keeps its newest), then read it whole."""
    await journal.forget()

    def recording(n: int) -> Awaitable[None]:
        return record(journal, exchange(n, scopes[n]))

    def reading(query: JournalQuery) -> Callable[[int], Awaitable[object]]:
        return lambda n: journal.read(query, KNOWN_KEYS)

    recorded = await per_call(recording, count)
    reads = max(5, count // 200)
    return {
        "record_us": round(recorded, 1),
        "held": (await journal.held()).__dict__,
        "read_all_ms": round(await per_call(reading(JournalQuery()), reads) / 1000, 2),
        "read_one_test_ms": round(await per_call(reading(JournalQuery(test_id="test-7", limit=10)), reads) / 1000, 2),
    }


def _shape(journal: SharedJournal, scopes: list[str]) -> Callable[[int], Awaitable[object]]:
    """The Python side of a Redis record alone: shaping, masking and writing the entry as JSON."""

    async def shape(n: int) -> tuple[bytes, bytes]:
        return journal.stored(exchange(n, scopes[n]), scopes[n])

    return shape


def _wait_for(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main() -> int:
    parser = arguments("journal_calls", __doc__)
    parser.add_argument("--entries", type=int, default=DEFAULT_JOURNAL_SIZE, help="journal_size: a full journal")
    parser.add_argument("--count", type=int, default=5000, help="exchanges recorded per journal")
    args = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed (Debian: apt-get install redis-server)", file=sys.stderr)
        return 2
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", scratch],
            stdout=subprocess.DEVNULL,
        )
        try:
            _wait_for(port)
            results = asyncio.run(measure(f"redis://127.0.0.1:{port}/0", args.entries, args.count))
        finally:
            proc.terminate()
            proc.wait(10)
    results["entries"], results["count"] = args.entries, args.count
    write_results(results_path("journal_calls", args), results, stamp=False, show=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
