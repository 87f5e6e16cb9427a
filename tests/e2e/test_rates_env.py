"""``MOCKSERVER_RATES`` on a real ``mockserver serve``: an Ultrafast stream runs at the rate set, as the
client measures it; a bad value ends the start-up with one line and status 2.

The pacing check here runs on the real clock on a shared machine, so its bound is generous (±20%);
``benchmarks/load/rates_env.py`` measures the figure itself (300 tokens/s within ±2%).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import openai

from tests.processes import ServerProcess

TOKENS = 300


def stream_rate(base_url: str) -> float:
    """Output tokens per second between the first and the last text delta of one Responses stream."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-mock-preview", max_retries=0)
    with client:
        stream = client.responses.create(
            model="gpt-5.6-sol-ultrafast",
            input="Write a long story",
            stream=True,
            extra_headers={"x-mock-output-tokens": str(TOKENS)},
        )
        times, tokens = [], 0
        for event in stream:
            if event.type == "response.output_text.delta":
                times.append(time.perf_counter())
            elif event.type == "response.completed":
                assert event.response.usage is not None
                tokens = event.response.usage.output_tokens
    assert tokens == TOKENS and len(times) >= 2
    return (len(times) - 1) / (times[-1] - times[0])


def test_mockserver_rates_paces_an_ultrafast_stream() -> None:
    env = {"MOCKSERVER_RATES": "ultrafast=300:150", "MOCKSERVER_TIME_SCALE": "1"}
    with ServerProcess(env=env) as server:
        rate = stream_rate(server.base_url)
    assert 240 <= rate <= 360, rate


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
