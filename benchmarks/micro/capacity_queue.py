"""What 1,000 requests waiting for an Ultrafast slot cost the event loop, in memory and on Redis.

One process, one event loop, one slot (``capacity.ultrafast_concurrency: 1``, held), and 1,000
requests waiting for it (``capacity.acquire`` with a one-minute queue), as a worker would hold them.
Three measures:

- **idle, in memory**: two seconds of the real clock while all 1,000 wait and no slot comes back:
  the process's CPU milliseconds per second (the event loop is all that runs) and the store's
  ``acquire`` calls per second;
- **idle, on Redis**: the same against a ``redis-server`` on loopback (a shared store, whose line
  polls), with that server's CPU per second too;
- **hand-offs, in memory**: the slot is given back, and each request served gives it back at once,
  until all 1,000 have had it: ``acquire`` calls and CPU per hand-off, and whether they were served
  in order of arrival.

With ``--baseline DIR`` (a checkout of another revision, e.g. ``git worktree add --detach
/tmp/base main``) the same measures run on that revision's ``mockserver`` too, in the same run, and
the ratios are written beside them. The load average before and after is recorded (the machine may
be shared).

    python -m benchmarks capacity_queue [--baseline DIR] [--waiters N] [--seconds S]

Writes ``benchmarks/results/capacity_queue.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WAITERS = 1_000
IDLE_S = 2.0
QUEUE_S = 60.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
RATIOS = {"cpu_ms_per_s", "acquire_calls_per_s", "redis_cpu_ms_per_s", "seconds", "cpu_us_per_handoff"}


def load() -> list[float]:
    return [float(part) for part in Path("/proc/loadavg").read_text().split()[:3]]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- one revision's measures (run in a process of its own, with that revision on PYTHONPATH) ---------


async def measure(waiters: int, idle_s: float, redis_url: str | None, redis_pid: int | None) -> dict[str, Any]:
    from mockserver.config.fixture import Capacity, Fixture, load_fixture
    from mockserver.engine.pacing import MonotonicClock
    from mockserver.service import capacity
    from mockserver.state.store import MemoryStore

    try:
        from mockserver.service.capacity import queue as capacity_queue
    except ImportError:  # a baseline from before the capacity package (capacity_queue beside capacity)
        from mockserver.service import capacity_queue  # type: ignore[attr-defined,no-redef]
    Queue = capacity_queue.Queue

    data = load_fixture().model_dump()
    data["capacity"] = Capacity.model_validate({"ultrafast_concurrency": 1, "queue_ms": 60_000}).model_dump()
    fixture = Fixture.model_validate(data)
    org = fixture.organizations[0].id
    clock = MonotonicClock()

    def counted(store: Any) -> list[int]:
        calls = [0]
        original = store.acquire

        async def acquire(*args: Any) -> Any:
            calls[0] += 1
            return await original(*args)

        store.acquire = acquire
        return calls

    failed = [0]  # requests whose wait ended in an error (a shared store that stopped answering in time)

    async def line_up(store: Any, served: list[int]) -> tuple[Any, list[asyncio.Task[None]]]:
        holder = await capacity.acquire(store, fixture, org, "m")
        assert holder is not None

        async def wait(index: int) -> None:
            try:
                slot = await capacity.acquire(store, fixture, org, "m", queue=Queue(QUEUE_S, clock))
            except Exception:
                failed[0] += 1
                return
            assert slot is not None
            served.append(index)
            await slot.released()

        tasks = []
        for index in range(waiters):
            tasks.append(asyncio.ensure_future(wait(index)))
            await asyncio.sleep(0)
        while capacity_queue.waiting() + failed[0] < waiters:
            await asyncio.sleep(0.01)
        return holder, tasks

    async def idle(calls: list[int], redis: int | None = None) -> dict[str, float]:
        before_calls, before_cpu, before_failed = calls[0], time.process_time(), failed[0]
        before_redis = cpu_seconds(redis) if redis else 0.0
        start = time.monotonic()
        await asyncio.sleep(idle_s)
        wall = time.monotonic() - start
        figures = {
            "cpu_ms_per_s": round((time.process_time() - before_cpu) / wall * 1000, 3),
            "acquire_calls_per_s": round((calls[0] - before_calls) / wall, 1),
            "waiting_at_end": capacity_queue.waiting(),
            "failed_waiters": failed[0] - before_failed,
        }
        if redis:
            figures["redis_cpu_ms_per_s"] = round((cpu_seconds(redis) - before_redis) / wall * 1000, 1)
        return figures

    async def finish(holder: Any, tasks: list[asyncio.Task[None]]) -> None:
        await holder.released()
        await asyncio.gather(*tasks)

    report: dict[str, Any] = {"waiters": waiters}

    store = MemoryStore()
    calls = counted(store)
    served: list[int] = []
    holder, tasks = await line_up(store, served)
    report["idle_memory"] = await idle(calls)
    before_calls, before_cpu, start = calls[0], time.process_time(), time.monotonic()
    await finish(holder, tasks)
    wall, cpu = time.monotonic() - start, time.process_time() - before_cpu
    report["handoffs_memory"] = {
        "seconds": round(wall, 3),
        "cpu_us_per_handoff": round(cpu / waiters * 1e6, 1),
        "acquire_calls_per_handoff": round((calls[0] - before_calls) / waiters, 2),
        "in_order_of_arrival": served == sorted(served),
    }

    if redis_url is not None:
        from mockserver.state import shared
        from mockserver.state.redis import RedisStore

        redis_store = RedisStore(await shared.connect(redis_url), redis_url)
        try:
            calls = counted(redis_store)
            holder, tasks = await line_up(redis_store, [])
            report["idle_redis"] = await idle(calls, redis_pid)
            await finish(holder, tasks)
        finally:
            await redis_store.close()
    return report


# -- the run: this revision, and the baseline if given, in the same run -----------------------------


def run_revision(tree: Path, args: argparse.Namespace, redis_url: str | None, redis_pid: int | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--measure", "--waiters", str(args.waiters), "--seconds", str(args.seconds)]
    if redis_url is not None:
        command += ["--redis", redis_url, "--redis-pid", str(redis_pid)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the measure of {tree} failed:\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout)
    revision = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"tree": str(tree), "commit": revision.stdout.strip(), **report}


def ratio(before: float, after: float) -> float | None:
    return round(before / after, 1) if after else None  # None: nothing at all to divide by


def main() -> None:
    # Imported here: ``--measure`` runs this file in another checkout's tree, which may have no harness.
    from benchmarks.harness import arguments, results_path, write_results

    parser = arguments("capacity_queue", __doc__, baseline="a checkout of another revision to measure too")
    parser.add_argument("--waiters", type=int, default=WAITERS)
    parser.add_argument("--seconds", type=float, default=IDLE_S, help="length of each idle measure")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--redis", help=argparse.SUPPRESS)
    parser.add_argument("--redis-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(asyncio.run(measure(args.waiters, args.seconds, args.redis, args.redis_pid))))
        return

    binary = shutil.which("redis-server")
    load_before = load()
    with tempfile.TemporaryDirectory() as scratch:
        redis = None
        if binary is not None:
            port = free_port()
            redis = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", scratch],
                stdout=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(0.5)
        url = f"redis://127.0.0.1:{port}/0" if redis is not None else None
        pid = redis.pid if redis is not None else None
        try:
            revisions = {"this": run_revision(ROOT, args, url, pid)}
            if args.baseline is not None:
                revisions["baseline"] = run_revision(args.baseline.resolve(), args, url, pid)
        finally:
            if redis is not None:
                redis.terminate()
                redis.wait()
    report: dict[str, Any] = {
        "load_average_before": load_before,
        "load_average_after": load(),
        "cores": os.cpu_count(),
        **revisions,
    }
    if "baseline" in revisions:
        this, base = revisions["this"], revisions["baseline"]
        report["baseline_over_this"] = {
            section: {name: ratio(base[section][name], value) for name, value in figures.items() if name in RATIOS}
            for section, figures in this.items()
            if isinstance(figures, dict) and section in base
        }
    write_results(results_path("capacity_queue", args), report, show=True)


if __name__ == "__main__":
    main()
