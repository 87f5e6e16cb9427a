"""Pacing accuracy on the real clock: achieved tokens/s against the target, and against a raw floor.

Starts mockserver and a bare-asyncio floor server (``servers/floor.py``) in their
own processes pinned to core 0, and drives both from this process, pinned to
core 1, with the lean SSE client in ``sse_client.py`` (not the SDK, whose
per-chunk cost would be the bottleneck). For each target rate (54, 135 and 750
tokens/s, the standard, fast and Ultrafast tiers) it runs 1 and then 10
concurrent streams of about four seconds each.

Per stream it measures:
- achieved rate = (tokens - 1) / (last text event - first text event), as a
  ratio of the target;
- TTFT overhead: first text event minus the configured TTFT;
- the p99 gap between events.

Figures go to ``benchmarks/results/pacing.json`` (and a table on stdout), as
ratios measured in the same run: the machine is noisy, absolute times are not.

    python -m benchmarks pacing [--quick | --seconds S] [--output FILE]
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys

from benchmarks.harness import servers_under_test, stream_arguments, write_results
from benchmarks.sse_client import StreamTrace, stream

RATES = [54.0, 135.0, 750.0]
CONCURRENCY = [1, 10]
STREAM_SECONDS = 4.0
TTFT_MS = 200
CHAT_PATH = "/v1/chat/completions"


def summarise(traces: list[StreamTrace], rate: float, tokens: int) -> dict[str, float]:
    ratios, ttft_overheads, gaps = [], [], []
    for trace in traces:
        if trace.status != 200:
            raise RuntimeError(f"stream failed with HTTP {trace.status}")
        times = trace.content_times()
        ratios.append((tokens - 1) / (times[-1] - times[0]) / rate)
        ttft_overheads.append((times[0] - trace.sent_at) * 1000 - TTFT_MS)
        gaps.extend(b - a for a, b in itertools.pairwise(times))
    gaps.sort()
    return {
        "streams": len(traces),
        "rate_ratio_min": min(ratios),
        "rate_ratio_max": max(ratios),
        "rate_ratio_mean": statistics.fmean(ratios),
        "worst_rate_error_pct": max(abs(r - 1) for r in ratios) * 100,
        "ttft_overhead_ms_p50": statistics.median(ttft_overheads),
        "ttft_overhead_ms_max": max(ttft_overheads),
        "gap_ms_p99": gaps[int(len(gaps) * 0.99)] * 1000 if gaps else 0.0,
    }


async def run_case(port: int, rate: float, concurrency: int, seconds: float) -> dict[str, float]:
    tokens = max(50, int(rate * seconds))
    headers = {
        "authorization": "Bearer sk-mock-preview",
        "x-mock-tokens-per-second": str(rate),
        "x-mock-ttft-ms": str(TTFT_MS),
        "x-mock-output-tokens": str(tokens),
    }
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "benchmark"}], "stream": True}
    traces = await asyncio.gather(
        *(stream("127.0.0.1", port, CHAT_PATH, {**body, "seed": i}, headers) for i in range(concurrency))
    )
    return summarise(list(traces), rate, tokens)


async def run_all(mock_port: int, floor_port: int, seconds: float) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for rate in RATES:
        for concurrency in CONCURRENCY:
            ours = await run_case(mock_port, rate, concurrency, seconds)
            floor = await run_case(floor_port, rate, concurrency, seconds)
            rows.append(
                {
                    "target_tokens_per_second": rate,
                    "concurrent_streams": concurrency,
                    "mockserver": ours,
                    "raw_floor": floor,
                    "ttft_overhead_vs_floor_ms": ours["ttft_overhead_ms_p50"] - floor["ttft_overhead_ms_p50"],
                    "gap_p99_vs_floor": ours["gap_ms_p99"] / floor["gap_ms_p99"] if floor["gap_ms_p99"] else None,
                }
            )
            print(
                f"{rate:6.0f} tok/s x{concurrency:<3} achieved/target "
                f"{ours['rate_ratio_min']:.4f}..{ours['rate_ratio_max']:.4f} (floor "
                f"{floor['rate_ratio_min']:.4f}..{floor['rate_ratio_max']:.4f})  "
                f"TTFT overhead p50 {ours['ttft_overhead_ms_p50']:.1f} ms (floor {floor['ttft_overhead_ms_p50']:.1f})  "
                f"gap p99 {ours['gap_ms_p99']:.2f} ms (floor {floor['gap_ms_p99']:.2f})",
                flush=True,
            )
    return rows


def main() -> int:
    seconds, output = stream_arguments("pacing", __doc__)
    seconds = seconds or STREAM_SECONDS
    with servers_under_test() as servers:
        rows = asyncio.run(run_all(servers["mockserver"].port, servers["floor"].port, seconds))
    worst = max(row["mockserver"]["worst_rate_error_pct"] for row in rows)  # type: ignore[index]
    write_results(
        output,
        {
            "benchmark": "pacing",
            "command": f"python -m benchmarks pacing --seconds {seconds:g}",
            "stream_seconds": seconds,
            "configured_ttft_ms": TTFT_MS,
            "worst_rate_error_pct": worst,
            "within_1_pct": worst < 1.0,
            "cases": rows,
        },
    )
    print(f"worst achieved-rate error across all streams: {worst:.3f}% -> {output}")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
