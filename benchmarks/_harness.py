"""What the real-clock benchmarks share: the command line, the servers under test, and the report.

mockserver and the bare-asyncio floor server (``_floor_server.py``) each run in their
own process pinned to core 0; the caller, the load client, pins itself to core 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclass(frozen=True)
class Running:
    """A server under test: where it listens and its process id (to read its CPU time)."""

    port: int
    pid: int


def parse_args(description: str | None, name: str) -> tuple[float, Path]:
    """``--quick`` and ``--output``; returns the stream length in seconds and where to write."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one-second streams, for a smoke run")
    parser.add_argument("--output", type=Path, help=f"where to write the figures (default results/{name}.json)")
    parser.add_argument("--seconds", type=float, default=None, help="length of each stream")
    args = parser.parse_args()
    output = args.output or RESULTS / (f"{name}-quick.json" if args.quick else f"{name}.json")
    seconds = args.seconds or (1.0 if args.quick else 0.0)
    return seconds, output


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_on_core_zero(port: int) -> list[str]:
    """The command that runs ``mockserver serve`` on ``port`` pinned to core 0, with this process
    moved to core 1, so the server and its client don't take turns on one core (one core alone:
    no pinning)."""
    two_cores = (os.cpu_count() or 1) > 1
    if two_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    command = ["taskset", "-c", "0"] if two_cores else []
    return [*command, sys.executable, "-m", "mockserver", "serve", "--port", str(port), "--log-level", "warning"]


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on port {port}")


@contextlib.contextmanager
def servers_under_test() -> Iterator[dict[str, Running]]:
    """Start mockserver and the floor on core 0, pin this process to core 1, stop both after."""
    two_cores = (os.cpu_count() or 1) > 1
    if two_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    pin = ["taskset", "-c", "0"] if two_cores else []
    ports = {"mockserver": free_port(), "floor": free_port()}
    commands = {
        "mockserver": [
            sys.executable,
            "-m",
            "mockserver",
            "serve",
            "--port",
            str(ports["mockserver"]),
            "--log-level",
            "warning",
        ],
        "floor": [sys.executable, str(HERE / "_floor_server.py"), str(ports["floor"])],
    }
    processes = {
        name: subprocess.Popen(pin + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, cmd in commands.items()
    }
    try:
        for port in ports.values():
            wait_for_port(port)
        yield {name: Running(ports[name], processes[name].pid) for name in ports}
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(timeout=10)


def checkouts(baseline: Path | None) -> dict[str, Path]:
    """The checkouts a CPU benchmark measures: this one as ``mockserver``, and ``--baseline DIR`` if given."""
    return {"mockserver": HERE.parent, **({"baseline": baseline.resolve()} if baseline else {})}


def run_in_checkout(root: Path, program: str, *args: object) -> list[str]:
    """Run ``program`` in a fresh interpreter that imports ``root``'s mockserver; the words it printed."""
    done = subprocess.run(
        [sys.executable, "-c", program, *map(str, args)],
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return done.stdout.split()


def alternate(trees: dict[str, Path], rounds: int, measure: Callable[[Path], float]) -> dict[str, list[float]]:
    """``measure`` every checkout ``rounds`` times, taking turns, so each sees the same machine."""
    runs: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, root in trees.items():
            runs[name].append(measure(root))
    return runs


def write_report(output: Path, report: dict[str, Any]) -> None:
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **report}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
