"""One Ultrafast and one standard stream side by side, on the real clock: the manual's picture.

    pip install ".[benchmarks]"
    python -m benchmarks tiers_timeline [--tokens 300] [--output benchmarks/results/tiers_timeline.json]
        [--picture docs/images/tiers-timeline.png]

mockserver runs in its own process at time scale 1, pinned to core 0; this process, pinned to core
1, sends the same Chat Completions request twice at the same moment, once to `gpt-5.6-sol-ultrafast`
and once to `gpt-5.6-sol` on the default tier, and records when each text chunk arrives with the
lean SSE client (not the SDK, whose per-chunk cost would blur the timing). It writes the measured
rates, set against the fixture's targets in the same run, to a JSON file and draws the tokens
received over time as a PNG. It takes about ten seconds.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from benchmarks.harness import ROOT, arguments, free_port, results_path, wait_for_port, write_results
from benchmarks.sse_client import StreamTrace, stream
from mockserver.engine import tokens

PICTURE = ROOT / "docs" / "images" / "tiers-timeline.png"
PROMPT = "Explain in a few paragraphs why a faster service tier changes how an agent loop feels."
STREAMS = {  # label: (model, target tokens/s, target TTFT in s), the built-in fixture's values
    "Ultrafast (gpt-5.6-sol-ultrafast)": ("gpt-5.6-sol-ultrafast", 750.0, 0.2),
    "standard (gpt-5.6-sol)": ("gpt-5.6-sol", 54.0, 3.0),
}
COLOURS = ("#d6336c", "#1c7ed6")


def main() -> None:
    parser = arguments("tiers_timeline", __doc__)
    parser.add_argument("--tokens", type=int, default=300, help="answer length of both streams")
    parser.add_argument("--picture", type=Path, default=PICTURE)
    args = parser.parse_args()

    two_cores = (os.cpu_count() or 1) > 1
    if two_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {1})
    port = free_port()
    command = [sys.executable, "-m", "mockserver", "serve", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(
        (["taskset", "-c", "0"] if two_cores else []) + command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MOCKSERVER_TIME_SCALE": "1"},
    )
    try:
        wait_for_port(port)
        traces = asyncio.run(race(port, args.tokens))
    finally:
        server.terminate()
        server.wait(timeout=10)

    curves = {label: received(trace) for label, trace in traces.items()}
    report: dict[str, Any] = {"tokens": args.tokens, "streams": {}}
    for label, points in curves.items():
        model, rate, ttft = STREAMS[label]
        first, last, total = points[0][0], points[-1][0], points[-1][1]
        achieved = (total - points[0][1]) / (last - first) if last > first else float("nan")
        report["streams"][label] = {
            "model": model,
            "tokens": total,
            "ttft_s": round(first, 4),
            "ttft_target_s": ttft,
            "tokens_per_second": round(achieved, 2),
            "rate_target": rate,
            "achieved_over_target": round(achieved / rate, 4),
            "done_s": round(last, 4),
        }
    output = write_results(results_path("tiers_timeline", args), report)
    draw(curves, args.picture)
    print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    print(f"wrote {output} and {args.picture}")


async def race(port: int, length: int) -> dict[str, StreamTrace]:
    """Both requests at once, each on its own connection."""
    headers = {"authorization": "Bearer sk-mock-preview", "x-mock-output-tokens": str(length)}

    def body(model: str) -> dict[str, Any]:
        return {"model": model, "stream": True, "seed": 7, "messages": [{"role": "user", "content": PROMPT}]}

    runs = [stream("127.0.0.1", port, "/v1/chat/completions", body(model), headers) for model, _, _ in STREAMS.values()]
    return dict(zip(STREAMS, await asyncio.gather(*runs), strict=True))


def received(trace: StreamTrace) -> list[tuple[float, int]]:
    """(seconds since the request, tokens received so far) at each text chunk."""
    if trace.status != 200:
        raise RuntimeError(f"the server answered {trace.status}")
    points, total = [], 0
    for when, data in trace.events:
        if data.startswith(b"[DONE]"):
            continue
        choices = orjson.loads(data).get("choices") or []
        text = choices[0].get("delta", {}).get("content") if choices else None
        if text:
            total += len(tokens.split(text))
            points.append((when - trace.sent_at, total))
    return points


def draw(curves: dict[str, list[tuple[float, int]]], picture: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit('the picture needs matplotlib: pip install ".[benchmarks]"')
    figure, axes = plt.subplots(figsize=(8, 3.6), dpi=110)
    for (label, points), colour in zip(curves.items(), COLOURS, strict=True):
        times = [0.0] + [t for t, _ in points]
        counts = [0] + [n for _, n in points]
        axes.step(times, counts, where="post", color=colour, linewidth=2, label=label)
        axes.annotate(
            f"{points[-1][1]} tokens in {points[-1][0]:.1f} s",
            xy=points[-1],
            xytext=(6, -4),
            textcoords="offset points",
            color=colour,
            fontsize=9,
        )
    axes.set_xlabel("seconds since the request (measured on the real clock)")
    axes.set_ylabel("tokens received")
    axes.set_title("The same request on two tiers, as the client sees it", fontsize=11)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", frameon=False)
    longest = max(points[-1][0] for points in curves.values())
    most = max(points[-1][1] for points in curves.values())
    axes.set_xlim(0, longest * 1.3)  # room for the labels at the ends of the lines
    axes.set_ylim(0, most * 1.1)
    figure.tight_layout()
    picture.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(picture)


if __name__ == "__main__":
    main()
