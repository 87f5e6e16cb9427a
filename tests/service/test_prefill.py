"""Prefill: a reply's first token waits for its prompt to be read, on the injected fake clock (no sleeping).

TTFT = ttft_ms + prompt tokens / prefill_tokens_per_second, per tier; x-mock-ttft-ms sets it exactly;
the journal and /metrics show the prefill part. (Cached prompt tokens, read faster, are
tests/e2e/test_prompt_caching.py's.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from mockserver import MockServer
from mockserver.config.fixture import TimingProfile, load_fixture
from mockserver.config.settings import Settings
from mockserver.engine import tokens
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app
from mockserver.service import prefill
from tests.support import fixture

KEY = "sk-mock-preview"
FAST_OUTPUT = {"x-mock-tokens-per-second": "100000", "x-mock-output-tokens": "1"}  # the reply adds ~nothing
PROMPT = " hello" * 100_000


@pytest.fixture(scope="module")
def paced() -> Iterator[tuple[MockServer, FakeClock]]:
    clock = FakeClock()
    # The same prompt again and again: without prompt caching, so that each one is read whole.
    world = fixture(prompt_caching={"enabled": False})
    with MockServer(app=create_app(Settings(), fixture=world, clock=clock)) as server:
        yield server, clock


def reply_time(paced: tuple[MockServer, FakeClock], headers: dict[str, str], **body: Any) -> float:
    server, clock = paced
    started = clock.now()
    request = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": PROMPT}], **body}
    reply = httpx.post(
        f"{server.url}/v1/chat/completions",
        json=request,
        headers={"authorization": f"Bearer {KEY}", **FAST_OUTPUT, **headers},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    return clock.now() - started


def prompt_tokens() -> int:
    return tokens.count_messages([PROMPT])


@pytest.mark.parametrize(
    ("tier", "ttft_s", "prefill_rate"),
    [("default", 3.0, 25_000), ("priority", 1.2, 50_000), ("flex", 6.0, 12_500), ("ultrafast", 0.2, 200_000)],
)
def test_the_first_token_waits_for_the_prompt_at_the_tiers_prefill_rate(
    paced: tuple[MockServer, FakeClock], tier: str, ttft_s: float, prefill_rate: float
) -> None:
    expected = ttft_s + prompt_tokens() / prefill_rate
    assert reply_time(paced, {}, service_tier=tier) == pytest.approx(expected, abs=0.01)


def test_ultrafast_reads_a_prompt_faster_than_standard() -> None:
    profiles = load_fixture().profiles
    standard, ultrafast = profiles["default"], profiles["ultrafast"]
    assert standard.prefill_tokens_per_second is not None and ultrafast.prefill_tokens_per_second is not None
    assert ultrafast.prefill_tokens_per_second > standard.prefill_tokens_per_second
    assert prefill.prefill_seconds(ultrafast, 100_000) < prefill.prefill_seconds(standard, 100_000)


def test_x_mock_ttft_ms_sets_the_ttft_exactly_whatever_the_prompt(paced: tuple[MockServer, FakeClock]) -> None:
    assert reply_time(paced, {"x-mock-ttft-ms": "500"}) == pytest.approx(0.5, abs=0.01)


def test_the_journal_and_metrics_show_the_prefill_part(paced: tuple[MockServer, FakeClock]) -> None:
    server, _ = paced
    httpx.delete(f"{server.url}/_mock/requests")
    reply_time(paced, {})
    [entry] = httpx.get(f"{server.url}/_mock/requests").json()["data"]
    assert entry["prefill_ms"] == pytest.approx(prompt_tokens() / 25_000 * 1000, abs=0.01)
    families = {f.name: f for f in text_string_to_metric_families(httpx.get(f"{server.url}/metrics").text)}
    sums = [s for s in families["mockserver_prefill_seconds"].samples if s.name.endswith("_sum")]
    assert any(s.labels == {"tier": "default"} and s.value >= entry["prefill_ms"] / 1000 for s in sums)


def test_the_formula_reads_cached_tokens_faster() -> None:
    profile = TimingProfile(tokens_per_second=50, ttft_ms=100, prefill_tokens_per_second=10_000)
    assert prefill.prefill_seconds(profile, 20_000) == 2.0
    cached = prefill.prefill_seconds(profile, 20_000, cached_tokens=10_000)
    assert cached == pytest.approx(1.0 + 10_000 / (10_000 * prefill.CACHED_SPEEDUP))
    assert prefill.prefill_seconds(profile, 20_000, cached_tokens=99_999) == pytest.approx(20_000 / 100_000)
    assert prefill.prefill_seconds(TimingProfile(tokens_per_second=50, ttft_ms=100), 20_000) == 0.0


def test_the_responses_api_waits_for_the_prompt_too(paced: tuple[MockServer, FakeClock]) -> None:
    server, clock = paced
    started = clock.now()
    reply = httpx.post(
        f"{server.url}/v1/responses",
        json={"model": "gpt-5.6-sol", "input": PROMPT, "service_tier": "ultrafast"},
        headers={"authorization": f"Bearer {KEY}", **FAST_OUTPUT},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    assert clock.now() - started == pytest.approx(0.2 + prompt_tokens() / 200_000, abs=0.01)
