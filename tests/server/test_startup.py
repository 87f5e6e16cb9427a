"""The start-up summary: the built-in keys in full, a user's keys masked, the tier names said once,
and the rates in force (``--rate`` / ``MOCKSERVER_RATES``)."""

from __future__ import annotations

from mockserver.config.fixture import load_fixture
from mockserver.config.rates import apply_rates
from mockserver.config.settings import Settings
from mockserver.server.startup import banner
from tests.support import fixture

ROOT = "http://127.0.0.1:8000"


def test_the_built_in_keys_are_shown_in_full_and_a_users_own_masked() -> None:
    text = banner(Settings(), fixture(keys=[{"key": "sk-team-secret-1234", "organization": "org-team"}]), ROOT)
    assert "  keys         sk-mock-preview  default, priority, flex, ultrafast (Ultrafast preview access)" in text
    assert "sk-mock-standard  default, priority, flex" in text
    assert "sk-team-secret-1234" not in text
    assert "sk-tea" in text  # masked as the live API masks keys


def test_the_tier_names_are_mapped_once() -> None:
    text = banner(Settings(), load_fixture(), ROOT)
    assert 'tier names   standard = default, fast = priority, Ultrafast = ultrafast; Anthropic\'s speed: "fast"' in text


def test_the_rates_in_force_are_shown() -> None:
    settings = Settings(rates=("ultrafast=300:150", "default=40"))

    text = banner(settings, apply_rates(load_fixture(), settings.rates), ROOT)
    assert "ultrafast: 300 tokens/s, first token after 150 ms (--rate ultrafast=300:150)" in text
    assert "default: 40 tokens/s, first token after 3000 ms (--rate default=40)" in text
    assert "priority: 135 tokens/s, first token after 1200 ms" in text
