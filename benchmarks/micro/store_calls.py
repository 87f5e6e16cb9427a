"""What the shared state costs per request: the store calls of one admission, in memory and in Redis.

One admission makes one rate-limit call, ``admit`` (as ``service.ratelimits.take`` does): the two
allowances, the two charges of the key's overall window and the two windows reported, in one step.
For comparison, the same work as five separate round trips is timed too: ``admit`` of the two
allowances alone, one ``admit`` with nothing to check per charge of the overall window, and two
``window``. An Ultrafast request adds ``acquire`` and ``release``; a completed reply adds
``record``. Each is timed in a loop on one connection, one call at a time
(the latency a request sees) and 32 at a time (the throughput of one worker's event loop), against
the in-memory store and against a ``redis-server`` on loopback. The floor is a bare ``PING`` on the
same connection: a Redis call cannot cost less than one round trip.

    python -m benchmarks store_calls            # needs redis-server (Debian: apt-get install redis-server)

Writes ``benchmarks/results/store_calls.json``.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

from benchmarks.harness import arguments, results_path, write_results
from mockserver.state import shared
from mockserver.state.redis import RedisStore
from mockserver.state.store import Allowance, MemoryStore, Store, UsageEntry

CONCURRENCY = 32
BIG = 10**12  # limits no loop reaches: every call takes the same path

Call = Callable[[], Awaitable[object]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def calls(store: Store) -> dict[str, Call]:
    leases = itertools.count()
    entry = UsageEntry("sk-a", "org-a", "proj-a", "gpt-5", "default", 100, 200, 0, 0.001)
    allowances = [Allowance("sk-a|gpt-5|shared|requests", BIG, 1), Allowance("sk-a|gpt-5|shared|tokens", BIG, 300)]

    overall = [Allowance("sk-a|*|shared|requests", BIG, 1), Allowance("sk-a|*|shared|tokens", BIG, 300)]
    report = [(a.bucket, BIG) for a in allowances]

    async def admission() -> None:  # what ratelimits.take asks of the store: one step
        await store.admit(0.0, allowances, also=overall, report=report)

    async def admission_in_five_calls() -> None:  # the same, one round trip per step
        await store.admit(0.0, allowances)
        await store.admit(0.0, (), also=overall[:1])
        await store.admit(0.0, (), also=overall[1:])
        await store.window(0.0, allowances[0].bucket, BIG)
        await store.window(0.0, allowances[1].bucket, BIG)

    async def slot() -> None:
        lease = f"lease-{next(leases)}"
        await store.acquire([("ultrafast", None), ("ultrafast|org-a", None)], lease)
        await store.release(["ultrafast", "ultrafast|org-a"], lease)

    return {
        "window": lambda: store.window(0.0, allowances[0].bucket, BIG),
        "acquire+release": slot,
        "record": lambda: store.record(entry),
        "admission (admit)": admission,
        "admission (5 calls)": admission_in_five_calls,
    }


async def timed(call: Call, seconds: float, concurrency: int) -> dict[str, float]:
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {"calls": done, "us_per_call": round(elapsed / done * 1e6, 1)}


async def measure(store: Store, seconds: float, floor: Call | None) -> dict[str, object]:
    figures: dict[str, object] = {}
    if floor is not None:
        figures["PING (floor)"] = {str(c): await timed(floor, seconds, c) for c in (1, CONCURRENCY)}
    for name, call in calls(store).items():
        figures[name] = {str(c): await timed(call, seconds, c) for c in (1, CONCURRENCY)}
    return figures


async def main(seconds: float) -> dict[str, object]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", scratch],
            stdout=subprocess.DEVNULL,
        )
        try:
            url = f"redis://127.0.0.1:{port}/0"
            for _ in range(100):
                try:
                    connection = await shared.connect(url)
                    break
                except shared.StateUnreachable:
                    await asyncio.sleep(0.05)
            store = RedisStore(connection, url, prefix="bench:")
            try:
                in_redis = await measure(store, seconds, connection.ping)
            finally:
                await store.close()
        finally:
            server.terminate()
            server.wait(10)
    in_memory = await measure(MemoryStore(), seconds, None)
    ratios = {
        name: round(in_redis[name]["1"]["us_per_call"] / in_redis["PING (floor)"]["1"]["us_per_call"], 2)  # type: ignore[index]
        for name in in_memory
    }
    return {"redis": in_redis, "memory": in_memory, "redis_over_ping_one_at_a_time": ratios}


if __name__ == "__main__":
    parser = arguments("store_calls", __doc__, quick="0.3 s per figure, written to store_calls-quick.json")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    options = parser.parse_args()
    seconds = 0.3 if options.quick else options.seconds
    results = asyncio.run(main(seconds))
    out = write_results(results_path("store_calls", options), results, stamp=False, show=True)
    print(f"written to {out}")
