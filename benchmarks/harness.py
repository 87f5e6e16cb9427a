"""What every benchmark shares: the command line, the servers under test, and the results writer.

- :func:`arguments` starts each scenario's command line (``python -m benchmarks NAME``): its module's
  docstring as the help, and the flags they share (``--output``, and ``--quick``, ``--seconds``,
  ``--baseline`` where a scenario takes them).
- :func:`write_results` is how every scenario writes its figures, under ``benchmarks/results/``.
- mockserver and the bare-asyncio floor server (``servers/floor.py``) each run in their
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
from typing import Any, TypeVar

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SERVERS = HERE / "servers"


@dataclass(frozen=True)
class Running:
    """A server under test: where it listens and its process id (to read its CPU time)."""

    port: int
    pid: int


def arguments(
    name: str,
    doc: str | None,
    *,
    output: bool = True,
    quick: str | None = None,
    seconds: str | None = None,
    baseline: str | None = None,
) -> argparse.ArgumentParser:
    """The command line of the scenario ``name``, with the flags it shares with the others.

    ``doc`` (the module's docstring) is the help. ``--output FILE`` is always there unless ``output``
    is false (where the default is :func:`results_path`); ``quick``, ``seconds`` and ``baseline``,
    where given, are the help of ``--quick``, ``--seconds S`` and ``--baseline DIR`` (another
    checkout of mockserver, measured in the same run). The scenario adds its own flags after.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks {name}", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if output:
        parser.add_argument(
            "--output", type=Path, help=f"where to write the figures (default benchmarks/results/{name}.json)"
        )
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=quick)
    if seconds is not None:
        parser.add_argument("--seconds", type=float, default=None, help=seconds)
    if baseline is not None:
        parser.add_argument("--baseline", type=Path, metavar="DIR", help=baseline)
    return parser


def results_path(name: str, args: argparse.Namespace | None = None) -> Path:
    """Where the scenario ``name`` writes its figures: ``--output`` if given, else
    ``benchmarks/results/NAME.json`` (``NAME-quick.json`` for ``--quick``, which git ignores)."""
    given = getattr(args, "output", None)
    if given is not None:
        return Path(given)
    return RESULTS / (f"{name}-quick.json" if getattr(args, "quick", False) else f"{name}.json")


def stream_arguments(name: str, doc: str | None) -> tuple[float, Path]:
    """The command line of a scenario of paced streams (``--quick``, ``--seconds S``, ``--output FILE``):
    the length of each stream in seconds (0: the scenario's own) and where to write."""
    parser = arguments(name, doc, quick="one-second streams, for a smoke run", seconds="length of each stream")
    args = parser.parse_args()
    return args.seconds or (1.0 if args.quick else 0.0), results_path(name, args)


def command_line(name: str) -> str:
    """The command that ran this scenario, as its results file records it."""
    return " ".join(["python -m benchmarks", name, *sys.argv[1:]])


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
        "floor": [sys.executable, str(SERVERS / "floor.py"), str(ports["floor"])],
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


def alternate(trees: dict[str, Path], rounds: int, measure: Callable[[Path], T]) -> dict[str, list[T]]:
    """``measure`` every checkout ``rounds`` times, taking turns, so each sees the same machine."""
    runs: dict[str, list[T]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, root in trees.items():
            runs[name].append(measure(root))
    return runs


def write_results(
    output: Path, report: dict[str, Any] | str, *, stamp: bool = True, show: bool = False, ascii_only: bool = True
) -> Path:
    """Write a scenario's figures to ``output``: the one way every scenario writes its results.

    A dict is written as indented JSON: ``stamp`` puts the UTC time first (``"when"``), ``ascii_only``
    false keeps non-ASCII text as it is. A string (a table) is written as it is, in UTF-8. ``show``
    prints the same text on stdout. Returns ``output``.
    """
    if isinstance(report, str):
        text = report
    else:
        if stamp:
            report = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **report}
        text = json.dumps(report, indent=2, ensure_ascii=ascii_only)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n", encoding="utf-8")
    if show:
        print(text)
    return output
