"""Replaying VCR cassettes against replaying native ones: the server's CPU per event, in one run.

The same 200 streams (300 one-token events each, from ``mockserver serve`` at 30,000 tokens/s) are
recorded twice at once: by ``mockserver record`` into a native cassette, and by vcrpy (its YAML
serializer, what pytest-recording writes) around the client. Each cassette is then served by its own
``mockserver serve --replay ... --replay-timing instant`` and the 200 streams are read from it; the
server's CPU time over the events read is the figure: the sum of its threads' time on a CPU, in
nanoseconds (``/proc/PID/task/*/schedstat``), as the tick-counted ``/proc/PID/stat`` is too coarse
for a difference of a few percent. The two replays alternate for
``--rounds`` rounds, each going first every other round, and the medians are kept, so the machine's
load falls on both alike. On a shared machine the CPU figures of single runs spread by a third;
so the same streams are also replayed by an in-process server with every Python and C call its
threads make counted: a count the machine's load does not change.

    python -m benchmarks replay_vcr [--rounds N] [--output FILE]

Writes ``benchmarks/results/replay_vcr.json``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import vcr

from benchmarks.harness import arguments, results_path, write_results
from benchmarks.load.replay import MODEL, process, stream
from mockserver import MockServer

STREAMS = 200
CALLS_STREAMS = 20  # streams replayed with every call counted (counting slows the server several times)
FAST = {"x-mock-tokens-per-second": "30000", "x-mock-ttft-ms": "0", "x-mock-output-tokens": "300"}


def record(work: Path, bodies: list[dict[str, Any]]) -> tuple[Path, Path]:
    native, recorded = work / "cpu.jsonl", work / "cpu.yaml"
    with process("serve", "--time-scale", "1") as (upstream, _), process(
        "record", "--upstream", upstream, "--cassette", str(native)
    ) as (proxy, _), vcr.VCR(record_mode="all").use_cassette(str(recorded)):  # fmt: skip
        for body in bodies:
            stream(proxy, body, FAST)
        time.sleep(0.5)  # the proxy appends an exchange after its last byte
    return native, recorded


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far: its threads' time on a CPU, from the scheduler's own count."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def cpu_per_event(cassette: Path, bodies: list[dict[str, Any]]) -> tuple[int, float]:
    with process("serve", "--replay", str(cassette), "--replay-timing", "instant", warm=bodies[0]) as (server, pid):
        before, events = cpu_seconds(pid), 0
        for body in bodies:
            events += len(stream(server, body)[1])
        return events, 1e6 * (cpu_seconds(pid) - before) / events


def calls_per_event(cassette: Path, bodies: list[dict[str, Any]]) -> float:
    """The calls (Python functions and C functions) the server's threads make per event read."""
    counts = [0]
    counting = [False]
    client = threading.get_ident()

    def count(frame: Any, event: str, arg: Any) -> None:
        if counting[0] and event in ("call", "c_call") and threading.get_ident() != client:
            counts[0] += 1

    threading.setprofile(count)  # the server's threads start after this, and inherit it
    try:
        with MockServer(replay=[str(cassette)], replay_timing="instant") as server:
            stream(server.url, bodies[0])  # the first request's one-off work is not counted
            counting[0] = True
            events = sum(len(stream(server.url, body)[1]) for body in bodies[:CALLS_STREAMS])
            counting[0] = False
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
    return counts[0] / events


def main() -> None:
    parser = arguments("replay_vcr", __doc__)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    load = os.getloadavg()
    bodies = [{"model": MODEL, "messages": [{"role": "user", "content": f"cpu {n}"}]} for n in range(STREAMS)]
    runs: dict[str, list[float]] = {"native": [], "vcr": []}
    events: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        native, recorded = record(Path(scratch), bodies)
        for round_ in range(args.rounds):
            pair = [("native", native), ("vcr", recorded)]
            for name, cassette in pair if round_ % 2 == 0 else pair[::-1]:  # each goes first every other round
                events[name], figure = cpu_per_event(cassette, bodies)
                runs[name].append(figure)
        calls = {"native": calls_per_event(native, bodies), "vcr": calls_per_event(recorded, bodies)}
    native_us, vcr_us = statistics.median(runs["native"]), statistics.median(runs["vcr"])
    report = {
        "machine": {"cpus": os.cpu_count(), "load_average_1m_at_start": round(load[0], 2)},
        "streams": STREAMS,
        "rounds": args.rounds,
        "native": {"events": events["native"], "cpu_us_per_event_median": round(native_us, 2),
                   "cpu_us_per_event_runs": [round(r, 2) for r in runs["native"]]},
        "vcr": {"events": events["vcr"], "cpu_us_per_event_median": round(vcr_us, 2),
                "cpu_us_per_event_runs": [round(r, 2) for r in runs["vcr"]]},
        "ratio_vcr_to_native": round(vcr_us / native_us, 3),
        "server_calls_per_event": {"streams": CALLS_STREAMS, "native": round(calls["native"], 2),
                                   "vcr": round(calls["vcr"], 2),
                                   "ratio_vcr_to_native": round(calls["vcr"] / calls["native"], 3)},
    }  # fmt: skip
    write_results(results_path("replay_vcr", args), report, show=True)


if __name__ == "__main__":
    main()
