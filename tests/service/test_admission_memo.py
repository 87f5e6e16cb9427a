"""What admission remembers between requests: per fixture, and in bounded caches.

Admission is on every request's path to its first token, so values that depend only on the
fixture (a key's rate-limit windows) are worked out once per fixture, and values that depend on
recurring prompt texts or headers (token counts, cues, timing profiles) are kept in bounded
caches. These tests check that a new fixture is always seen at once, that nothing is taken from
another fixture, and that every cache has its bound.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mockserver import errors
from mockserver.config.fixture import Account, Fixture, RateLimits, load_fixture
from mockserver.engine import generation, tokens
from mockserver.engine.pacing import FakeClock
from mockserver.service import access, ratelimits, tiers
from mockserver.service.exchange import Exchange
from mockserver.service.per_fixture import PerFixture
from mockserver.state.store import MemoryStore
from mockserver.testing.handle import MockServerHandle

FIXTURE = load_fixture()
MODEL = "gpt-5.6-sol"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 5}


def with_rate_limits(rpm: int) -> Fixture:
    return Fixture.model_validate({**FIXTURE.model_dump(), "rate_limits": {"rpm": rpm, "tpm": 1_000_000}})


def test_values_are_kept_for_the_fixture_in_force_and_dropped_when_it_is_replaced() -> None:
    memo: PerFixture[str, int] = PerFixture()
    computed: list[str] = []

    def work_out(label: str) -> int:
        computed.append(label)
        return len(computed)

    first, second = with_rate_limits(10), with_rate_limits(20)
    assert memo.get(first, "a", lambda: work_out("first")) == 1
    assert memo.get(first, "a", lambda: work_out("again")) == 1  # remembered
    assert memo.get(second, "a", lambda: work_out("second")) == 2  # another fixture: worked out anew
    assert memo.get(first, "a", lambda: work_out("first again")) == 3  # the first one's values were dropped
    assert computed == ["first", "second", "first again"]


def test_a_keys_windows_follow_the_fixture_and_the_account_object() -> None:
    plain = Account(key="sk-memo")
    assert ratelimits.model_target(with_rate_limits(10), plain, MODEL, "default").limits.rpm == 10
    assert ratelimits.model_target(with_rate_limits(20), plain, MODEL, "default").limits.rpm == 20
    # The same key in another account object (from a configuration change) gets that account's limits.
    fixture = with_rate_limits(30)
    assert ratelimits.model_target(fixture, plain, MODEL, "default").limits.rpm == 30
    own = Account(key="sk-memo", rate_limits=RateLimits.model_validate({"rpm": 4}))
    assert ratelimits.model_target(fixture, own, MODEL, "default").limits.rpm == 4
    # The key's overall window is its own entry, named for no model.
    overall = ratelimits.key_target(fixture, own)
    assert overall.requests_bucket == "sk-memo|*|shared|requests" and overall.limits.rpm == 4
    assert overall == ratelimits.target_for("sk-memo", "*", ratelimits.limits_for(fixture, own, None, None))


def test_a_config_patch_is_in_force_for_the_very_next_request(mockserver: MockServerHandle) -> None:
    with httpx.Client(base_url=mockserver.url, headers=mockserver.headers) as http:
        auth = {"authorization": "Bearer sk-mock-standard"}
        before = http.post("/v1/chat/completions", json=CHAT, headers=auth)
        assert before.status_code == 200, before.text
        patched = http.patch("/_mock/config", json={"rate_limits": {"rpm": 7, "tpm": 90_000, "tiers": {}}})
        assert patched.status_code == 200, patched.text
        after = http.post("/v1/chat/completions", json=CHAT, headers=auth)
        assert after.status_code == 200, after.text
        assert before.headers["x-ratelimit-limit-requests"] != "7"
        assert after.headers["x-ratelimit-limit-requests"] == "7"
        assert after.headers["x-ratelimit-limit-tokens"] == "90000"


def test_token_counts_are_remembered_for_short_texts_only_and_in_bounded_number() -> None:
    assert tokens._count_remembered.cache_info().maxsize == tokens._REMEMBERED_COUNTS
    long_text = "word " * tokens.REMEMBERED_CHARS
    before = tokens._count_remembered.cache_info().currsize
    assert tokens.count(long_text) == tokens._count(long_text)
    assert tokens._count_remembered.cache_info().currsize == before  # counted, not kept
    assert tokens.count("hello there") == tokens._count("hello there")


def test_prompt_cues_are_remembered_in_bounded_number_and_read_the_latest_text_that_is_not_blank() -> None:
    assert generation._remembered_cues.cache_info().maxsize == generation._REMEMBERED_CUES
    cues = generation.cues_of(["Write a 200 words story", "  "], ["system prompt", "Write a 200 words story", "  "])
    assert (cues.language, cues.kind, cues.size) == ("en", "long", (200, "words"))
    assert generation.cues_of(["写一个故事"], ["写一个故事"]).language == "zh"
    assert generation.cues_of([], []) == generation.Cues("en", "default", (), None)
    long_prompt = "Answer in one word. " + "x" * generation._REMEMBERED_CUES_CHARS
    assert generation.cues_of([long_prompt], [long_prompt]).kind == "short"


def test_timing_profiles_of_header_overrides_are_remembered_in_bounded_number() -> None:
    assert tiers._with_timing.cache_info().maxsize == tiers._APPLIED_PROFILES
    profile = FIXTURE.profiles["ultrafast"]
    assert tiers.Overrides().apply(profile) is profile
    faster = tiers.Overrides(tokens_per_second=900.0, ttft_ms=10.0)
    applied = faster.apply(profile)
    assert (applied.tokens_per_second, applied.ttft_ms, applied.jitter) == (900.0, 10.0, profile.jitter)
    assert faster.apply(profile) is applied  # the same immutable profile serves the next request
    # The output length a header sets is no part of the profile: it makes no entry of its own.
    assert tiers.Overrides(tokens_per_second=900.0, ttft_ms=10.0, output_tokens=7).apply(profile) is applied
    assert tiers.Overrides(ttft_ms=10.0).apply(profile).tokens_per_second == profile.tokens_per_second


def test_each_request_gets_the_profile_of_its_own_overrides_and_refusals_are_never_remembered() -> None:
    preview, standard = FIXTURE.account("sk-mock-preview"), FIXTURE.account("sk-mock-standard")
    assert preview is not None and standard is not None
    base = FIXTURE.profile(FIXTURE.model(MODEL), "default")  # type: ignore[arg-type]

    def ttft(headers: dict[str, str], account: Account = preview, tier: str | None = None) -> float:
        return access.resolve(FIXTURE, account, headers, MODEL, tier).profile.ttft_ms

    # Alternating overrides on the same key and model: each request has its own, none is left behind.
    for _ in range(2):
        assert ttft({"x-mock-ttft-ms": "7"}) == 7
        assert ttft({}) == base.ttft_ms
        assert ttft({"x-mock-ttft-ms": "9", "x-mock-tokens-per-second": "33"}) == 9
        assert ttft({"x-mock-tokens-per-second": "33"}) == base.ttft_ms
    # Another account on the same model gets its own entry (and its own refusal).
    assert ttft({}, standard) == base.ttft_ms
    assert access.resolve(FIXTURE, preview, {}, MODEL, "ultrafast").tier.tier == "ultrafast"
    for _ in range(2):  # refused again each time: a refusal is not remembered
        with pytest.raises(errors.MockAPIError) as refused:
            access.resolve(FIXTURE, standard, {}, MODEL, "ultrafast")
        assert refused.value.code == "service_tier_not_available"


def test_resources_are_taken_by_the_fixture_in_force_even_when_the_request_was_resolved_by_another() -> None:
    """The quota and rate windows found with a request's resolution are the resolving fixture's: a
    fixture put in place between the resolution and the taking of resources is the one that counts."""
    first, second = with_rate_limits(10), with_rate_limits(20)
    key = first.accounts[0].key

    def taken(resolved_by: Fixture, taken_by: Fixture) -> dict[str, str]:
        account = resolved_by.account(key)
        assert account is not None
        admission = access.resolve(resolved_by, account, {}, MODEL, None)
        exchange = Exchange(request_id="req_memo", method="POST", path="/v1/chat/completions", headers={}, started_at=0)
        resources = access.Resources(exchange, MemoryStore(), FakeClock())

        async def take() -> access.Admission:
            return await access.take_resources(taken_by, admission, request=resources, prompt_tokens=10)

        asyncio.run(take())
        assert exchange.rate_limit_headers is not None
        return exchange.rate_limit_headers

    assert taken(first, first)["x-ratelimit-limit-requests"] == "10"
    assert taken(first, second)["x-ratelimit-limit-requests"] == "20"
