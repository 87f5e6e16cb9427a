"""Streams carried at 750 tokens/s by one worker and by two, on shared state in Redis, in one run.

For each set-up, the most concurrent Ultrafast streams (750 tokens/s, one token per chunk) that
the server carries with **every** stream within 1 % of its rate and at least 0.98 chunks per token
(no failed request either):

- ``1 worker, memory``: ``serve`` with its state in memory, for reference;
- ``1 worker, redis``: ``serve --state redis://...``;
- ``2 workers, redis``: ``serve --workers 2 --state redis://...``.

The three servers (and one ``redis-server`` for the two on Redis) run side by side and take turns,
level by level, so each is measured under the same load on the machine. Each search steps up by
``--step`` streams until a level fails, then halves the interval between the last level that held
and the first that did not, down to ``--resolution`` streams. The report gives each set-up's figure
and the ratio of 2 workers to 1 (both on Redis) measured in this run.

A stream's rate is measured from its first text event to its last. The streams of a level are
opened spread evenly over the first second (``--ramp``), as a load test ramps up, and last 6
seconds (``--seconds``): opened all at once, the last of a few dozen requests is admitted tens of
milliseconds late (more with every store call going to Redis), deadline pacing catches its first
tokens up in a burst, and that reads as a rate above the target. The ramp keeps the figure about
the streams carried, not about admitting a burst of them (``--ramp 0`` measures that instead).
A level that fails is measured once more, and holds if the second try holds: on a shared machine,
a stall caused by other work fails a level the server carries. Every try is in the report.

The load client is this process (``load_client.py``: raw sockets, one asyncio protocol per stream,
never the SDK). Nothing is pinned here, unlike ``sweep.py``: the workers need both cores, so
**the client competes with them for a core**, and two workers get less than two cores' worth.
The load average (``uptime``) before and after is in the report: on a shared machine, read the
figures next to it. The ``redis-server`` (Debian's package) is started by the script on a free
port, with no persistence.

    python -m benchmarks workers             # about 4 minutes
    python -m benchmarks workers --quick     # a smoke run: one-second streams, coarse steps

Writes ``benchmarks/results/workers.json`` (``workers-quick.json`` for ``--quick``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import uvloop

from benchmarks.harness import ROOT, arguments, command_line, free_port, results_path, wait_for_port, write_results
from benchmarks.load.sweep import PRIORITY, ULTRAFAST, Server, bench_fixture, raise_priority, run_cell

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
RATE_TOLERANCE = 0.01  # every stream within 1 % of 750 tokens/s
MIN_CHUNKS_PER_TOKEN = 0.98
STREAM_SECONDS = 6.0
RAMP_S = 1.0  # the streams of a level open spread over this long
FIRST_LEVEL = 50
STEP = 50
RESOLUTION = 10
MAX_STREAMS = 1000
SETTLE_S = 0.5  # between levels: the closed connections drain, leases are given back
SETUPS = {  # name: (workers, shared state)
    "1 worker, memory": (1, False),
    "1 worker, redis": (1, True),
    "2 workers, redis": (2, True),
}


class Served(Server):
    """A ``serve`` process whose CPU time includes its workers' (the supervisor's children)."""

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in [self.process.pid, *children(self.process.pid)]:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return total


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Debian's ``redis-server`` on a free loopback port, saving nothing; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="mockserver-bench-redis-") as directory:
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        process = subprocess.Popen([*command, "--dir", directory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(timeout=10)


@contextlib.contextmanager
def serving(name: str, fixture: Path, workers: int, state: str | None) -> Iterator[Served]:
    port = free_port()
    command = [sys.executable, "-m", "mockserver", "serve", "--port", str(port), "--log-level", "warning"]
    command += ["--config", str(fixture), "--quiet", "--workers", str(workers)]
    if state is not None:
        command += ["--state", state]
    process = subprocess.Popen(
        PRIORITY + command,  # the client's priority (sweep.raise_priority); workers inherit it
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, timeout=30)
        yield Served(name, port, process)
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=15)


def holds(row: dict[str, Any]) -> bool:
    """Every stream within 1 % of the rate, at least 0.98 chunks per token, nothing failed."""
    return (
        not row.get("failed")
        and "rate_ratio_min" in row
        and row["rate_ratio_min"] >= 1 - RATE_TOLERANCE
        and row["rate_ratio_max"] <= 1 + RATE_TOLERANCE
        and row["chunks_per_token_min"] >= MIN_CHUNKS_PER_TOKEN
    )


def measure(server: Served, streams: int, seconds: float, ramp_s: float) -> dict[str, Any]:
    before, wall = os.times(), time.perf_counter()
    row = uvloop.run(run_cell(server, ULTRAFAST, 1, streams, seconds, ramp_s))
    after, wall = os.times(), time.perf_counter() - wall
    row["client_cpu_pct"] = 100 * (after.user + after.system - before.user - before.system) / wall
    row["holds"] = holds(row)
    figures = (
        f"rate {row['rate_ratio_min']:.4f}..{row['rate_ratio_max']:.4f} chunks {row['chunks_per_token_min']:.3f} "
        f"cpu {row['server_cpu_pct']:.0f}% client {row['client_cpu_pct']:.0f}% "
        f"ttft99 +{row['ttft_overhead_ms_p99']:.0f}ms"
        if "rate_ratio_min" in row
        else "no stream answered"
    )
    verdict = "holds" if row["holds"] else "FAILS"
    print(f"  {server.name:17s} {streams:4d} streams: {verdict} ({figures}, failed {row['failed']})", flush=True)
    time.sleep(SETTLE_S)
    return row


def search(first: int, step: int, resolution: int) -> Generator[int, bool, tuple[int, int | None]]:
    """The levels to try, one at a time (send whether each held): step up until a level fails, then
    halve the interval between the last that held and the first that failed. Returns them both."""
    held, failed = 0, None
    level = first
    while level <= MAX_STREAMS:
        if not (yield level):
            failed = level
            break
        held = level
        level += step
    while failed is not None and failed - held > resolution:
        middle = (held + failed) // 2
        if (yield middle):
            held = middle
        else:
            failed = middle
    return held, failed


def most_streams(
    servers: dict[str, Served], seconds: float, ramp_s: float, step: int, resolution: int
) -> dict[str, Any]:
    """Every set-up's search, in turns: each round measures one level on each server still searching,
    so the set-ups are compared under the same load on the machine."""
    found: dict[str, Any] = {name: {"levels": []} for name in servers}
    searches = {name: search(FIRST_LEVEL, step, resolution) for name in servers}
    levels = {name: next(steps) for name, steps in searches.items()}
    while levels:
        for name in list(levels):
            row = measure(servers[name], levels[name], seconds, ramp_s)
            found[name]["levels"].append(row)
            if not row["holds"]:  # once more: a stall caused by other work on the machine fails a level too
                row = measure(servers[name], levels[name], seconds, ramp_s)
                found[name]["levels"].append(row)
            try:
                levels[name] = searches[name].send(bool(row["holds"]))
            except StopIteration as done:
                found[name]["most_streams"], found[name]["first_failing"] = done.value
                found[name]["uptime_after"] = uptime()
                print(f"  -> {name}: {done.value[0]} streams ({found[name]['uptime_after']})", flush=True)
                del levels[name]
    return found


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> int:
    parser = arguments(
        "workers",
        __doc__,
        quick="a smoke run: one-second streams, coarse steps",
        seconds=f"length of each stream (default {STREAM_SECONDS:g})",
    )
    parser.add_argument("--ramp", type=float, default=RAMP_S, help=f"open a level's streams over (default {RAMP_S:g}s)")
    parser.add_argument("--step", type=int, help=f"streams added per level until one fails (default {STEP})")
    parser.add_argument("--resolution", type=int, help=f"bisect down to this many streams (default {RESOLUTION})")
    args = parser.parse_args()
    seconds = args.seconds or (1.0 if args.quick else STREAM_SECONDS)
    step = args.step or (100 if args.quick else STEP)
    resolution = args.resolution or (50 if args.quick else RESOLUTION)
    output = results_path("workers", args)
    raise_priority()

    report: dict[str, Any] = {
        "benchmark": "workers",
        "command": command_line("workers"),
        "cores": os.cpu_count(),
        "priority": " ".join(PRIORITY) or "default",
        "uptime_before": uptime(),
        "client": "this process (benchmarks/load_client.py), not pinned: it competes with the workers for the cores",
        "rate_tokens_per_second": ULTRAFAST,
        "tokens_per_chunk": 1,
        "stream_seconds": seconds,
        "ramp_seconds": args.ramp,
        "criteria": {"rate_within": RATE_TOLERANCE, "min_chunks_per_token": MIN_CHUNKS_PER_TOKEN, "failed": 0},
        "setups": {},
    }
    started_at = time.monotonic()
    with contextlib.ExitStack() as stack:
        fixture = bench_fixture(Path(stack.enter_context(tempfile.TemporaryDirectory())), 1)
        redis_url = stack.enter_context(redis_server())
        servers = {
            name: stack.enter_context(serving(name, fixture, workers, redis_url if shared else None))
            for name, (workers, shared) in SETUPS.items()
        }
        for name, (workers, _) in SETUPS.items():
            uvloop.run(run_cell(servers[name], ULTRAFAST, 1, 8 * workers, 0.2))  # warm every worker up
        report["setups"] = most_streams(servers, seconds, args.ramp, step, resolution)
    one, two = (report["setups"][name]["most_streams"] for name in ("1 worker, redis", "2 workers, redis"))
    report["two_workers_over_one"] = two / one if one else None
    report["uptime_after"] = uptime()
    report["minutes"] = (time.monotonic() - started_at) / 60
    write_results(output, report)
    ratio = report["two_workers_over_one"]
    print(f"2 workers / 1 worker (Redis): {ratio:.2f}" if ratio else "2 workers / 1 worker: n/a")
    print(f"figures -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
