"""sse-starlette's ``EventSourceResponse`` against our stream path, on the same events, in one run.

Three servers (``servers/sse_paths.py``) play the same producer, the server's own Chat Completions
chunks on a deadline schedule: ``ours`` (the one scheduler, events written straight to uvicorn's
transport), ``sse-starlette`` (its ``EventSourceResponse``, a task per stream pacing itself) and
``sse-starlette-scheduled`` (``EventSourceResponse`` fed by the one scheduler through a queue per
stream). Each round starts each server in turn, pinned to core 0 (the lean load client of
``load_client.py`` on core 1), and opens ``--streams`` paced streams at 750 tokens/s together. Per
variant: the server's CPU per event (its process CPU time over the events the client received),
the slowest stream's achieved rate and the median, and the p99 of the gap between text events.
The ratios to ``ours`` are taken within each round, so every variant sees the same machine; the
load average is recorded with each run.

    python -m benchmarks sse_encoding [--streams 100] [--tokens 1500] [--rounds 3] [--output FILE]

Needs ``pip install -e ".[benchmarks]"`` (sse-starlette). Writes ``benchmarks/results/sse_encoding.json``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness import ROOT, SERVERS, arguments, free_port, results_path, wait_for_port, write_results
from benchmarks.load_client import CHAT_TEXT, request_bytes, run_streams

VARIANTS = ("ours", "sse-starlette", "sse-starlette-scheduled")
RATE = 750.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(variant: str, streams: int, tokens: int) -> dict[str, Any]:
    """One server of ``variant``, one burst of ``streams`` streams; its figures."""
    two_cores = (os.cpu_count() or 1) > 1
    pin = ["taskset", "-c", "0"] if two_cores else []
    port = free_port()
    server = subprocess.Popen(
        [*pin, sys.executable, str(SERVERS / "sse_paths.py"), variant, str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        body = {"model": "gpt-5.6-sol", "stream": True, "max_completion_tokens": tokens}
        request = request_bytes(port, "/v1/chat/completions", body, {})
        asyncio.run(
            run_streams(port, [request_bytes(port, "/v1/chat/completions", {**body, "max_completion_tokens": 50}, {})])
        )
        load = os.getloadavg()[0]
        before = cpu_seconds(server.pid)
        traces = asyncio.run(run_streams(port, [request] * streams, CHAT_TEXT))
        cpu = cpu_seconds(server.pid) - before
    finally:
        server.terminate()
        server.wait(timeout=10)
    failed = [t for t in traces if t.status != 200 or t.error or not t.reads]
    if failed:
        raise RuntimeError(f"{variant}: {len(failed)} stream(s) failed, e.g. {failed[0]}")
    events = sum(t.events for t in traces)
    rates = [(t.text_events - 1) / (t.last_text - t.first_text) for t in traces]
    gaps = [gap for t in traces for gap in t.gaps()]
    return {
        "cpu_us_per_event": round(cpu / events * 1e6, 2),
        "events": events,
        "slowest_stream_tokens_per_s": round(min(rates), 1),
        "median_stream_tokens_per_s": round(statistics.median(rates), 1),
        "gap_p99_ms": round(percentile(gaps, 0.99) * 1000, 2),
        "load_average_1m": round(load, 2),
    }


def main() -> None:
    parser = arguments("sse_encoding", __doc__)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if (os.cpu_count() or 1) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    rounds: list[dict[str, dict[str, Any]]] = []
    for number in range(args.rounds):
        rounds.append({variant: measure(variant, args.streams, args.tokens) for variant in VARIANTS})
        print(
            f"round {number + 1}: " + ", ".join(f"{v} {r['cpu_us_per_event']} µs/event" for v, r in rounds[-1].items())
        )
    summary: dict[str, Any] = {}
    for variant in VARIANTS:
        runs = [r[variant] for r in rounds]
        ratios = [r[variant]["cpu_us_per_event"] / r["ours"]["cpu_us_per_event"] for r in rounds]
        summary[variant] = {
            "cpu_us_per_event": statistics.median(run["cpu_us_per_event"] for run in runs),
            "cpu_per_event_vs_ours": round(statistics.median(ratios), 2),
            "slowest_stream_tokens_per_s": min(run["slowest_stream_tokens_per_s"] for run in runs),
            "median_stream_tokens_per_s": statistics.median(run["median_stream_tokens_per_s"] for run in runs),
            "gap_p99_ms": statistics.median(run["gap_p99_ms"] for run in runs),
        }
    write_results(
        results_path("sse_encoding", args),
        {
            "method": (
                f"{args.streams} streams opened together at {RATE:g} tokens/s, {args.tokens} tokens each, "
                "TTFT 0, one token per event; each server pinned to core 0 and the lean client to core 1; "
                f"{args.rounds} rounds, the variants in turn within each; ratios taken within a round, "
                "medians reported"
            ),
            "load": "1-minute load average at the start of each run, in the runs below (a shared 2-core machine)",
            "summary": summary,
            "rounds": rounds,
        },
    )
    for variant, figures in summary.items():
        print(variant, figures)


if __name__ == "__main__":
    main()
