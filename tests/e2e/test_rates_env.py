"""``MOCKSERVER_RATES`` on a real ``mockserver serve``: an Ultrafast stream runs at the rate set, as the
client measures it; a bad value ends the start-up with one line and status 2.

The check here runs on the real clock on a shared machine, so it asks only what no stall can fake: the
stream's last token comes no sooner than the rate set allows (a server is never early: a late first
token makes the rest come closer together, never the last one earlier; the built-in Ultrafast rate
would end the stream in half that time), and within a few seconds. ``python -m benchmarks rates_env``
measures the rate itself (300 tokens/s within ±2%).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import openai

from tests.processes import ServerProcess

TOKENS = 300


def stream_seconds(base_url: str) -> float:
    """Seconds from sending one Responses stream's request to its last text delta."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-mock-preview", max_retries=0)
    with client:
        sent = time.perf_counter()
        stream = client.responses.create(
            model="gpt-5.6-sol-ultrafast",
            input="Write a long story",
            stream=True,
            extra_headers={"x-mock-output-tokens": str(TOKENS)},
        )
        last, tokens = sent, 0
        for event in stream:
            if event.type == "response.output_text.delta":
                last = time.perf_counter()
            elif event.type == "response.completed":
                assert event.response.usage is not None
                tokens = event.response.usage.output_tokens
    assert tokens == TOKENS
    return last - sent


def test_mockserver_rates_paces_an_ultrafast_stream() -> None:
    env = {"MOCKSERVER_RATES": "ultrafast=300:150", "MOCKSERVER_TIME_SCALE": "1"}
    with ServerProcess(env=env) as server:
        seconds = stream_seconds(server.base_url)
    # 150 ms to the first token, then 299 more at 300 tokens/s: 1.15 s at the earliest. The built-in
    # Ultrafast (750 tokens/s, 200 ms) would take 0.6 s.
    assert 0.15 + (TOKENS - 1) / 300 - 0.02 <= seconds <= 3.0, seconds


def test_a_bad_rate_ends_the_start_up_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mockserver", "serve", "--port", "0", "--rate", "turbo=300"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MOCKSERVER_RATES": ""},
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "mockserver: rate 'turbo=300': unknown tier 'turbo'; the tiers are default, priority, flex, ultrafast"
    ]
