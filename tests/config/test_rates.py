"""``--rate TIER=TOKENS_PER_S[:TTFT_MS]`` and ``MOCKSERVER_RATES``: parsed, applied under a model's own
profiles, kept through a reset, and a bad one refused in one line."""

from __future__ import annotations

import re

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.fixture import ConfigError, load_fixture
from mockserver.config.rates import Rate, apply_rates, parse_rate
from mockserver.config.settings import Settings


def test_a_rate_with_and_without_its_ttft() -> None:
    assert parse_rate("ultrafast=300:150") == Rate("ultrafast", 300.0, 150.0)
    assert parse_rate(" Default=40 ") == Rate("default", 40.0, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("ultrafast", "is not TIER=TOKENS_PER_S[:TTFT_MS]"),
        ("turbo=300", "unknown tier 'turbo'; the tiers are default, priority, flex, ultrafast"),
        ("ultrafast=fast", "the values must be numbers"),
        ("ultrafast=0", "tokens per second must be from 0.01 to 100000"),
        ("ultrafast=300:-1", "the time to first token must be 0 to"),
        ("ultrafast=300:", "the time to first token is missing after ':'"),  # was taken as no TTFT
        ("ultrafast=300: ", "the time to first token is missing after ':'"),
        ("ultrafast=nan", "tokens per second must be from"),
        ("ultrafast=inf", "tokens per second must be from"),
        ("ultrafast=300:nan", "the time to first token must be 0 to"),
        ("ultrafast=300:150:20", "the values must be numbers"),
        ("=300", "is not TIER=TOKENS_PER_S[:TTFT_MS]"),
    ],
)
def test_a_bad_rate_is_one_line(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        parse_rate(text)
    with pytest.raises(ConfigError):
        Settings(rates=(text,))


def test_the_environment_variable_is_comma_separated() -> None:
    settings = Settings.from_env({"MOCKSERVER_RATES": "ultrafast=300:150, default=40"})
    assert settings.rates == ("ultrafast=300:150", "default=40")


def test_a_rate_sets_the_fixture_profile_and_drops_its_spread() -> None:
    base = load_fixture()
    spread = base.profiles["ultrafast"].model_copy(update={"tokens_per_second_min": 600, "tokens_per_second_max": 900})
    base = base.model_copy(update={"profiles": {**base.profiles, "ultrafast": spread}})
    fixture = apply_rates(base, ["ultrafast=300:150", "default=40"])
    ultrafast = fixture.profiles["ultrafast"]
    assert (ultrafast.tokens_per_second, ultrafast.ttft_ms, ultrafast.tokens_per_second_min) == (300, 150, None)
    assert (fixture.profiles["default"].tokens_per_second, fixture.profiles["default"].ttft_ms) == (40, 3000)
    assert fixture.profiles["priority"] == base.profiles["priority"]


def test_a_models_own_profile_wins_over_a_rate() -> None:
    fixture = apply_rates(load_fixture(presets=["claude-opus-4.8-fast"]), ["default=40"])
    claude = fixture.model("claude-opus-4-8")
    gpt = fixture.model("gpt-5.6-sol")
    assert claude is not None and gpt is not None
    assert fixture.profile(gpt, "default").tokens_per_second == 40
    assert fixture.profile(claude, "default").tokens_per_second == 60  # the preset's own figure


def test_a_server_keeps_its_rates_through_a_reset() -> None:
    with MockServer(time_scale=0, rates=("ultrafast=300:150",)) as server:
        shown = httpx.get(f"{server.url}/_mock/config").json()["profiles"]["ultrafast"]
        assert (shown["tokens_per_second"], shown["ttft_ms"]) == (300, 150)
        server.configure(tokens_per_second={"ultrafast": 500})  # a later PATCH changes it
        assert httpx.get(f"{server.url}/_mock/config").json()["profiles"]["ultrafast"]["tokens_per_second"] == 500
        server.reset()
        assert httpx.get(f"{server.url}/_mock/config").json()["profiles"]["ultrafast"]["tokens_per_second"] == 300
