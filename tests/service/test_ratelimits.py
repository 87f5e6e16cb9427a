"""Rate windows, limits resolution, durations and requested tokens, on a FakeClock (no sleeping)."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import errors
from mockserver.config.fixture import Account, Fixture, RateLimits, load_fixture
from mockserver.engine.pacing import FakeClock
from mockserver.service import ratelimits
from mockserver.state.store import MemoryStore

FIXTURE = load_fixture()
MODEL = "gpt-5.6-sol"


def account(**limits: object) -> Account:
    return Account(key="sk-test", organization="org-abc123", rate_limits=RateLimits.model_validate(limits))


def take(
    store: MemoryStore, clock: FakeClock, acct: Account, tokens: int = 10, tier: str = "default"
) -> dict[str, str]:
    limits = ratelimits.limits_for(FIXTURE, acct, MODEL, tier)  # type: ignore[arg-type]
    target = ratelimits.target_for(acct.key, MODEL, limits)
    headers, refused = asyncio.run(ratelimits.take(store, clock.now(), FIXTURE, acct, MODEL, target, tokens))
    if refused is not None:
        raise refused
    return headers


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (0.0004, "1ms"), (0.02, "20ms"), (1, "1s"), (1.5, "1.5s"), (8.64, "8.64s"), (20, "20s"),
     (59.9, "59.9s"), (360, "6m0s"), (61.25, "1m1.25s"), (3600, "1h0m0s")],
)  # fmt: skip
def test_go_durations(seconds: float, text: str) -> None:
    assert errors.go_duration(seconds) == text


def test_retry_headers_are_whole_ms_and_rounded_up_seconds() -> None:
    assert ratelimits.retry_headers(0.0301) == {"retry-after-ms": "31", "retry-after": "1"}
    assert ratelimits.retry_headers(19.9) == {"retry-after-ms": "19900", "retry-after": "20"}
    assert ratelimits.retry_delay(500) == ratelimits.MAX_RETRY_AFTER_S


def test_limits_most_specific_wins_and_the_key_wins_over_the_fixture() -> None:
    fixture = Fixture.model_validate(
        {**FIXTURE.model_dump(), "rate_limits": {"rpm": 100, "tpm": 1000, "models": {MODEL: {"rpm": 50}},
                                                 "tiers": {"ultrafast": {"rpm": 7, "tpm": 70}}}}
    )  # fmt: skip
    plain = Account(key="k")
    assert ratelimits.limits_for(fixture, plain, MODEL, "default") == ratelimits.Limits(50, 1000)
    assert ratelimits.limits_for(fixture, plain, "gpt-5.6-mini", "default") == ratelimits.Limits(100, 1000)
    # The model's own entry beats the tier's; the tier's window is separate from the shared one.
    assert ratelimits.limits_for(fixture, plain, "gpt-5.6-mini", "ultrafast") == ratelimits.Limits(7, 70, "ultrafast")
    assert ratelimits.limits_for(fixture, account(rpm=3), MODEL, "default") == ratelimits.Limits(3, 1000)
    assert ratelimits.limits_for(fixture, None, None, None) == ratelimits.Limits(100, 1000)


def test_headers_count_down_through_a_burst_then_429_with_the_live_wording() -> None:
    store, clock, acct = MemoryStore(), FakeClock(), account(rpm=3, tpm=1000)
    seen = [take(store, clock, acct, tokens=100) for _ in range(3)]
    assert [h["x-ratelimit-remaining-requests"] for h in seen] == ["2", "1", "0"]
    assert [h["x-ratelimit-remaining-tokens"] for h in seen] == ["900", "800", "700"]
    assert seen[0]["x-ratelimit-limit-requests"] == "3" and seen[0]["x-ratelimit-limit-tokens"] == "1000"
    # One request of a 3-RPM window comes back every 20 s; the window is full again 60 s after the burst.
    assert [h["x-ratelimit-reset-requests"] for h in seen] == ["20s", "40s", "1m0s"]
    assert seen[2]["x-ratelimit-reset-tokens"] == "18s"
    with pytest.raises(errors.RateLimitError) as caught:
        take(store, clock, acct)
    error = caught.value
    assert error.message == (
        "Rate limit reached for gpt-5.6-sol in organization org-abc123 on requests per min (RPM): "
        "Limit 3, Used 3, Requested 1. Please try again in 20s. "
        "Visit https://platform.openai.com/account/rate-limits to learn more."
    )
    assert (error.type, error.code, error.param) == ("requests", "rate_limit_exceeded", None)
    assert error.headers == {"retry-after-ms": "20000", "retry-after": "20"}


def test_the_window_replenishes_continuously() -> None:
    store, clock, acct = MemoryStore(), FakeClock(), account(rpm=3, tpm=1000)
    for _ in range(3):
        take(store, clock, acct)
    clock.advance(19.9)
    with pytest.raises(errors.RateLimitError) as caught:
        take(store, clock, acct)
    assert "Please try again in 100ms." in caught.value.message
    clock.advance(0.1)
    assert take(store, clock, acct)["x-ratelimit-remaining-requests"] == "0"
    clock.advance(60)
    assert take(store, clock, acct)["x-ratelimit-remaining-requests"] == "2"


def test_a_refused_request_takes_nothing() -> None:
    store, clock, acct = MemoryStore(), FakeClock(), account(rpm=10, tpm=1000)
    take(store, clock, acct, tokens=900)
    with pytest.raises(errors.RateLimitError) as caught:
        take(store, clock, acct, tokens=200)
    assert caught.value.type == "tokens"
    assert "tokens per min (TPM): Limit 1000, Used 900, Requested 200. Please try again in 6s." in caught.value.message
    target = ratelimits.target_for(acct.key, MODEL, ratelimits.limits_for(FIXTURE, acct, MODEL, "default"))
    after = asyncio.run(ratelimits.headers(store, clock.now(), target))
    assert after["x-ratelimit-remaining-requests"] == "9" and after["x-ratelimit-remaining-tokens"] == "100"


def test_a_request_larger_than_the_tpm_limit_can_never_fit() -> None:
    with pytest.raises(errors.RateLimitError) as caught:
        take(MemoryStore(), FakeClock(), account(tpm=1000), tokens=1001)
    assert caught.value.message.startswith(
        "Request too large for gpt-5.6-sol in organization org-abc123 on tokens per min (TPM): Limit 1000, "
        "Requested 1001. The input or output tokens must be reduced"
    )


def test_a_tier_with_its_own_limits_has_its_own_window() -> None:
    store, clock = MemoryStore(), FakeClock()
    acct = Account(key="k", rate_limits=RateLimits.model_validate({"rpm": 5, "tiers": {"ultrafast": {"rpm": 1}}}))
    take(store, clock, acct, tier="ultrafast")
    with pytest.raises(errors.RateLimitError):
        take(store, clock, acct, tier="ultrafast")
    assert take(store, clock, acct, tier="default")["x-ratelimit-remaining-requests"] == "4"
    assert take(store, clock, acct, tier="priority")["x-ratelimit-remaining-requests"] == "3"  # shared with default


def test_every_admitted_request_also_counts_in_the_keys_overall_window() -> None:
    store, clock, acct = MemoryStore(), FakeClock(), account(rpm=100, tpm=10_000)
    take(store, clock, acct, tokens=40)
    overall = asyncio.run(ratelimits.headers(store, clock.now(), ratelimits.key_target(FIXTURE, acct)))
    assert overall["x-ratelimit-remaining-requests"] == "99" and overall["x-ratelimit-remaining-tokens"] == "9960"


def test_unknown_callers_get_full_default_allowances() -> None:
    headers = ratelimits.unused_headers(ratelimits.limits_for(FIXTURE, None, None, None))
    assert headers["x-ratelimit-remaining-requests"] == headers["x-ratelimit-limit-requests"] == "10000"
    assert headers["x-ratelimit-reset-tokens"] == "0s"


def body(**fields: object) -> dict[str, object]:
    return fields


def test_requested_tokens_are_prompt_plus_max_output_times_n() -> None:
    messages = [{"role": "user", "content": "one two three"}]  # 3 + (3 framing + 1 role) + 3 priming = 10
    assert ratelimits.requested_tokens(FIXTURE, body(messages=messages, max_tokens=100)) == 110
    assert ratelimits.requested_tokens(FIXTURE, body(messages=messages, max_completion_tokens=50, n=2)) == 110
    assert ratelimits.requested_tokens(FIXTURE, body(messages=messages)) == 10 + FIXTURE.output_tokens.max
    # Responses API bodies: input as a string or items, plus instructions.
    assert ratelimits.requested_tokens(FIXTURE, body(input="one two three", max_output_tokens=1)) == 11
    items = [{"role": "user", "content": [{"type": "input_text", "text": "one two three"}]}]
    assert ratelimits.requested_tokens(FIXTURE, body(input=items, instructions="four", max_output_tokens=1)) == 16


@pytest.mark.parametrize("raw", [None, "not json", [1, 2], {"messages": 5, "max_tokens": True, "n": -1}])
def test_requested_tokens_never_fail_on_odd_bodies(raw: object) -> None:
    assert ratelimits.requested_tokens(FIXTURE, raw) >= FIXTURE.output_tokens.max
