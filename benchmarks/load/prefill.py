"""Prefill on the real clock: a long prompt's first token waits ``ttft_ms + prompt tokens / prefill rate``.

    python -m benchmarks prefill [--output PATH]

``mockserver serve`` on the built-in fixture at time scale 1 runs on core 0, this client on core 1.
Each case streams a Chat Completion (five output tokens) and times the first content chunk from just
before the request is sent; three runs side by side, the median reported, set against the formula
with the tier's figures from the fixture:

- the default tier with a 100,000-token prompt: 3 s + 100,000 / 25,000 tokens/s = 7 s;
- Ultrafast with the same prompt: 0.2 s + 100,000 / 200,000 = 0.7 s;
- the default tier with a one-line prompt (no prefill to speak of): 3 s;
- ``x-mock-ttft-ms: 500`` with the long prompt: 0.5 s exactly.

Figures go to ``benchmarks/results/prefill.json``; the goal is each within 5% of the formula. A busy
machine adds the same delay to every first token, so the report also gives the prefill part alone,
measured in the same run: the 100k-token prompt's first token less the one-line prompt's, against
100,000 / 25,000 = 4 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from benchmarks.harness import arguments, free_port, results_path, serve_on_core_zero, wait_for_port, write_results
from mockserver.config.fixture import load_fixture
from mockserver.engine import tokens

KEY = "sk-mock-preview"
RUNS = 3
GOAL = 0.05
LONG = 100_000


def prompt_of(total_tokens: int) -> str:
    """A user message whose prompt counts exactly ``total_tokens`` (framing included)."""
    framing = tokens.count_messages([""])
    text = " hello" * (total_tokens - framing)
    assert tokens.count_messages([text]) == total_tokens
    return text


def first_token_s(url: str, prompt: str, tier: str, headers: dict[str, str]) -> float:
    messages = [{"role": "user", "content": prompt}]
    body = {"model": "gpt-5.6-sol", "service_tier": tier, "stream": True, "messages": messages}
    started = time.perf_counter()
    with httpx.stream(
        "POST",
        f"{url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {KEY}", "x-mock-output-tokens": "5", **headers},
        timeout=60,
    ) as reply:
        for line in reply.iter_lines():
            if '"content":"' in line and '"content":""' not in line:
                return time.perf_counter() - started
    raise RuntimeError(f"no content in the stream ({reply.status_code})")


def main() -> None:
    parser = arguments("prefill", __doc__)
    args = parser.parse_args()
    profiles = load_fixture().profiles
    long_prompt, short_prompt = prompt_of(LONG), "Say hi"

    def expected(tier: str, prompt_tokens: int) -> float:
        profile = profiles[tier]  # type: ignore[index]
        assert profile.prefill_tokens_per_second is not None
        return profile.ttft_ms / 1000 + prompt_tokens / profile.prefill_tokens_per_second

    cases: list[tuple[str, str, str, dict[str, str], float]] = [
        ("default, 100k-token prompt", long_prompt, "default", {}, expected("default", LONG)),
        ("ultrafast, 100k-token prompt", long_prompt, "ultrafast", {}, expected("ultrafast", LONG)),
        (
            "default, one-line prompt",
            short_prompt,
            "default",
            {},
            expected("default", tokens.count_messages(["Say hi"])),
        ),
        ("x-mock-ttft-ms 500, 100k-token prompt", long_prompt, "default", {"x-mock-ttft-ms": "500"}, 0.5),
    ]
    port = free_port()
    command = serve_on_core_zero(port)
    process = subprocess.Popen(
        command, env={**os.environ, "MOCKSERVER_TIME_SCALE": "1"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    results: list[dict[str, Any]] = []
    try:
        wait_for_port(port, timeout=60)
        url = f"http://127.0.0.1:{port}"
        httpx.get(f"{url}/health", timeout=30)
        for name, prompt, tier, headers, goal in cases:
            with ThreadPoolExecutor(RUNS) as pool:
                futures = [pool.submit(first_token_s, url, prompt, tier, headers) for _ in range(RUNS)]
                runs = [future.result() for future in futures]
            median = statistics.median(runs)
            results.append(
                {
                    "case": name,
                    "expected_s": round(goal, 4),
                    "runs_s": [round(r, 4) for r in runs],
                    "median_s": round(median, 4),
                    "error": round(median / goal - 1, 4),
                    "within_goal": abs(median / goal - 1) <= GOAL,
                }
            )
    finally:
        process.terminate()
        process.wait(timeout=10)
    # The prefill part alone, in the same run: the long prompt's first token less the one-line prompt's
    # (what the machine's load adds to every first token cancels out).
    by_case = {row["case"]: row for row in results}
    long_row, short_row = by_case["default, 100k-token prompt"], by_case["default, one-line prompt"]
    part = long_row["median_s"] - short_row["median_s"]
    goal_part = long_row["expected_s"] - short_row["expected_s"]
    prefill_part = {
        "measured_s": round(part, 4),
        "expected_s": round(goal_part, 4),
        "error": round(part / goal_part - 1, 4),
        "within_goal": abs(part / goal_part - 1) <= GOAL,
    }
    report = {
        "load_average_1m": round(os.getloadavg()[0], 2),
        "goal": GOAL,
        "cases": results,
        "default_prefill_part": prefill_part,
    }
    write_results(results_path("prefill", args), report)
    for row in results:
        print(row)


if __name__ == "__main__":
    main()
