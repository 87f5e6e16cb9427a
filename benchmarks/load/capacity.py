"""Capacity at Ultrafast speed: how many concurrent 750 tokens/s streams one worker keeps on rate.

Same set-up as ``pacing.py``: mockserver and the bare-asyncio floor server each in
their own process on core 0, the lean SSE client here on core 1. For each level of
concurrency it runs that many streams at once, one token per event, and reports:

- the slowest stream's achieved rate as a ratio of 750 tokens/s;
- TTFT overhead (first text event minus the configured TTFT), p50 and p99;
- server CPU per event in µs, read from /proc, for mockserver and for the floor,
  and their ratio: what the framework, routing and JSON cost on top of the floor.

Figures go to ``benchmarks/results/capacity.json``.

    python -m benchmarks capacity [--quick | --seconds S] [--output FILE]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from pathlib import Path

from benchmarks.harness import Running, servers_under_test, stream_arguments, write_results
from benchmarks.load.pacing import CHAT_PATH, TTFT_MS
from benchmarks.sse_client import StreamTrace, stream

RATE = 750.0
LEVELS = [10, 25, 50, 100]
STREAM_SECONDS = 3.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


async def run_level(port: int, pid: int, concurrency: int, seconds: float) -> dict[str, float]:
    tokens = int(RATE * seconds)
    headers = {
        "authorization": "Bearer sk-mock-preview",
        "x-mock-tokens-per-second": str(RATE),
        "x-mock-ttft-ms": str(TTFT_MS),
        "x-mock-output-tokens": str(tokens),
    }
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "capacity"}], "stream": True}
    cpu_before = cpu_seconds(pid)
    traces: list[StreamTrace] = list(
        await asyncio.gather(
            *(stream("127.0.0.1", port, CHAT_PATH, {**body, "seed": i}, headers) for i in range(concurrency))
        )
    )
    cpu = cpu_seconds(pid) - cpu_before
    ratios, ttfts, events = [], [], 0
    for trace in traces:
        if trace.status != 200:
            raise RuntimeError(f"stream failed with HTTP {trace.status}")
        times = trace.content_times()
        events += len(trace.events)
        ratios.append((tokens - 1) / (times[-1] - times[0]) / RATE)
        ttfts.append((times[0] - trace.sent_at) * 1000 - TTFT_MS)
    ttfts.sort()
    return {
        "streams": concurrency,
        "slowest_rate_ratio": min(ratios),
        "worst_rate_error_pct": max(abs(r - 1) for r in ratios) * 100,
        "ttft_overhead_ms_p50": statistics.median(ttfts),
        "ttft_overhead_ms_p99": ttfts[min(len(ttfts) - 1, int(len(ttfts) * 0.99))],
        "events": events,
        "server_cpu_s": cpu,
        "server_cpu_us_per_event": cpu / events * 1e6 if events else 0.0,
    }


async def run_all(servers: dict[str, Running], seconds: float) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for level in LEVELS:
        ours = await run_level(servers["mockserver"].port, servers["mockserver"].pid, level, seconds)
        floor = await run_level(servers["floor"].port, servers["floor"].pid, level, seconds)
        ratio = ours["server_cpu_us_per_event"] / floor["server_cpu_us_per_event"] if floor["events"] else None
        rows.append(
            {"concurrent_streams": level, "mockserver": ours, "raw_floor": floor, "cpu_per_event_vs_floor": ratio}
        )
        print(
            f"{level:4d} streams x 750 tok/s: slowest {ours['slowest_rate_ratio']:.4f} of target "
            f"(floor {floor['slowest_rate_ratio']:.4f}), TTFT overhead p50/p99 "
            f"{ours['ttft_overhead_ms_p50']:.1f}/{ours['ttft_overhead_ms_p99']:.1f} ms "
            f"(floor {floor['ttft_overhead_ms_p50']:.1f}/{floor['ttft_overhead_ms_p99']:.1f}), server CPU "
            f"{ours['server_cpu_us_per_event']:.1f} µs/event (floor {floor['server_cpu_us_per_event']:.1f}, "
            f"x{ratio:.2f})",
            flush=True,
        )
    return rows


def main() -> int:
    seconds, output = stream_arguments("capacity", __doc__)
    seconds = seconds or STREAM_SECONDS
    with servers_under_test() as servers:
        rows = asyncio.run(run_all(servers, seconds))
    held = [r["concurrent_streams"] for r in rows if r["mockserver"]["worst_rate_error_pct"] < 1.0]  # type: ignore[index]
    most = max(held, default=0)
    write_results(
        output,
        {
            "benchmark": "capacity",
            "command": f"python -m benchmarks capacity --seconds {seconds:g}",
            "tokens_per_second": RATE,
            "stream_seconds": seconds,
            "most_streams_within_1_pct": most,
            "levels": rows,
        },
    )
    print(f"most concurrent 750 tok/s streams all within 1% of rate: {most} -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
