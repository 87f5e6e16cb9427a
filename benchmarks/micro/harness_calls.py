"""What sharing the harness costs per request: fault counters, script sequences and stored responses,
in memory and in Redis.

- a request that meets a counted fault (``once``, ``times=N``) makes one ``take``;
- a request served while the rules hold a ``sequence`` makes one ``read`` before planning, and one
  ``claim`` after when it took a step;
- a stored response costs one ``put`` when it is created; ``GET``, ``input_items`` and
  ``previous_response_id`` one ``find``; a cancel one ``cancel``.

Each is timed in a loop, one call at a time (the latency a request sees), against the in-memory
implementation and against a ``redis-server`` on loopback; the floor is a bare ``PING`` on the same
connection (a Redis call cannot cost less than one round trip), so each Redis figure is also given
as a ratio to it, measured in the same run.

    python -m benchmarks harness_calls          # needs redis-server (Debian: apt-get install redis-server)

Writes ``benchmarks/results/harness_calls.json``.
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
from typing import Any

from benchmarks.harness import arguments, results_path, write_results
from mockserver.config.settings import Settings
from mockserver.state.counters import Counters, MemoryCounters
from mockserver.state.responses import BaseResponseStore, ResponseStore, StoredResponse
from mockserver.state.shared import Shared, unreachable
from mockserver.state.shared_counters import RedisCounters
from mockserver.state.shared_responses import RedisResponseStore

_DEFAULTS = Settings()  # the stored-response bounds a server runs with by default
BOUNDS = {
    "max_items": _DEFAULTS.stored_responses,
    "ttl_s": _DEFAULTS.stored_response_ttl,
    "max_bytes": _DEFAULTS.stored_response_bytes,
}
BODY = {"id": "resp_x", "object": "response", "status": "completed", "output": [{"type": "message"}] * 4}

Call = Callable[[], Awaitable[object]]


def calls(counters: Counters, responses: BaseResponseStore) -> dict[str, Call]:
    ids = itertools.count()
    steps = itertools.count()

    async def fault() -> None:
        await counters.take(f"test-{next(ids)}", "header:status=503,once", 1)

    async def sequence_step() -> None:
        scope = "seq"
        used = await counters.read(scope)
        await counters.claim(scope, {"0:rule": used.get("0:rule", 0)})
        next(steps)

    async def store() -> None:
        await responses.put(StoredResponse(f"resp_{next(ids)}", "p", BODY, BODY, 0.0, (("user", "Hi"),)))

    async def background() -> None:
        response_id = f"resp_bg_{next(ids)}"
        await responses.put(StoredResponse(response_id, "p", BODY, BODY, time.monotonic() + 60, (), background=True))
        await responses.cancel("p", response_id)

    return {
        "fault take (once)": fault,
        "sequence read + claim": sequence_step,
        "sequence read (no step taken)": lambda: counters.read("seq"),
        "response put": store,
        "response find": lambda: responses.find("p", "resp_0"),
        "background put + cancel": background,
    }


async def timed(call: Call, seconds: float) -> dict[str, float]:
    done = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        await call()
        done += 1
    return {"calls": done, "us_per_call": round((time.perf_counter() - started) / done * 1e6, 1)}


async def main(seconds: float) -> dict[str, Any]:
    memory = calls(MemoryCounters(), ResponseStore(time.monotonic, **BOUNDS))
    figures: dict[str, Any] = {"memory": {name: await timed(call, seconds) for name, call in memory.items()}}
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    with tempfile.TemporaryDirectory() as scratch:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", scratch],
            stdout=subprocess.DEVNULL,
        )
        where = Shared.from_url(f"redis://127.0.0.1:{port}/0")
        try:
            for _ in range(100):  # until it answers
                try:
                    await where.connection.ping()
                    break
                except unreachable():
                    await asyncio.sleep(0.05)
            ping = await timed(where.connection.ping, seconds)
            shared = calls(
                RedisCounters(where, "bench"), RedisResponseStore(where, time.monotonic, time.time, **BOUNDS)
            )
            redis_figures: dict[str, Any] = {"PING (floor)": ping}
            for name, call in shared.items():
                figure = await timed(call, seconds)
                figure["pings"] = round(figure["us_per_call"] / ping["us_per_call"], 2)
                redis_figures[name] = figure
            figures["redis"] = redis_figures
        finally:
            await where.connection.aclose()
            server.terminate()
            server.wait(10)
    return figures


if __name__ == "__main__":
    parser = arguments("harness_calls", __doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    result = asyncio.run(main(args.seconds))
    write_results(results_path("harness_calls", args), result, stamp=False, show=True)
