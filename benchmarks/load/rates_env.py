"""``MOCKSERVER_RATES=ultrafast=300`` on ``mockserver serve``: the rate an Ultrafast stream runs at, as
the official SDK's caller measures it.

    python -m benchmarks rates_env [--output PATH]

The server (built-in fixture, time scale 1, ``MOCKSERVER_RATES=ultrafast=300``, nothing else set)
runs on core 0, this client on core 1. Each run streams ``gpt-5.6-sol-ultrafast`` with
``x-mock-output-tokens: 600`` (two seconds at 300 tokens/s) with the ``openai`` SDK, on the Responses
API and on Chat Completions, one run at a time, and takes the rate between the first and the last
text delta: (deltas - 1) / (last - first), every delta being one token. The goal: 300 tokens/s
within ±2% (294 to 306) for the median of each API. It also reports ``usage.output_tokens`` over the
whole call, TTFT (200 ms, the fixture's) included, which is what the announcement's check divides.
Figures go to ``benchmarks/results/rates_env.json``; it takes about 30 seconds.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import openai

from benchmarks.harness import arguments, free_port, results_path, serve_on_core_zero, wait_for_port, write_results

RATE = 300.0
TOKENS = 600
RUNS = 5  # per API; the median is the figure
TOLERANCE = 0.02


@contextlib.contextmanager
def mockserver() -> Iterator[str]:
    port = free_port()
    command = serve_on_core_zero(port)
    env = {**os.environ, "MOCKSERVER_TIME_SCALE": "1", "MOCKSERVER_RATES": f"ultrafast={RATE:g}"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, timeout=60)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def run(client: openai.OpenAI, api: str) -> dict[str, float]:
    headers = {"x-mock-output-tokens": str(TOKENS)}
    started = time.perf_counter()
    deltas: list[float] = []
    tokens = 0
    if api == "responses":
        for event in client.responses.create(
            model="gpt-5.6-sol-ultrafast", input="Write a long story", stream=True, extra_headers=headers
        ):
            if event.type == "response.output_text.delta":
                deltas.append(time.perf_counter())
            elif event.type == "response.completed" and event.response.usage is not None:
                tokens = event.response.usage.output_tokens
    else:
        for chunk in client.chat.completions.create(
            model="gpt-5.6-sol-ultrafast",
            messages=[{"role": "user", "content": "Write a long story"}],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=headers,
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                deltas.append(time.perf_counter())
            if chunk.usage is not None:
                tokens = chunk.usage.completion_tokens
    ended = time.perf_counter()
    return {
        "deltas": len(deltas),
        "output_tokens": tokens,
        "generation_rate": (len(deltas) - 1) / (deltas[-1] - deltas[0]),
        "whole_call_rate": tokens / (ended - started),
        "ttft_ms": (deltas[0] - started) * 1000,
    }


def main() -> None:
    parser = arguments("rates_env", __doc__)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "command": "python -m benchmarks rates_env",
        "server": f"mockserver serve, MOCKSERVER_RATES=ultrafast={RATE:g}, time scale 1, core 0; client on core 1",
        "load": f"one stream at a time; 1-minute load average at the start {os.getloadavg()[0]:.2f}",
        "goal": f"{RATE:g} tokens/s within ±{TOLERANCE:.0%}",
        "apis": {},
    }
    with mockserver() as base_url, openai.OpenAI(base_url=base_url, api_key="sk-mock-preview") as client:
        run(client, "responses")  # warm-up: connection and first imports
        for api in ("responses", "chat"):
            runs = [run(client, api) for _ in range(RUNS)]
            median = statistics.median(r["generation_rate"] for r in runs)
            report["apis"][api] = {
                "median_generation_rate": round(median, 2),
                "ratio_to_target": round(median / RATE, 4),
                "within_tolerance": abs(median / RATE - 1) <= TOLERANCE,
                "median_whole_call_rate": round(statistics.median(r["whole_call_rate"] for r in runs), 2),
                "runs": [{k: round(v, 2) for k, v in r.items()} for r in runs],
            }
            print(f"{api}: {median:.1f} tokens/s ({median / RATE:.3f} of {RATE:g})", flush=True)
    print(f"wrote {write_results(results_path('rates_env', args), report)}")


if __name__ == "__main__":
    main()
