"""The fixture schema: the built-in fixture is valid, and mistakes are named precisely."""

from __future__ import annotations

import pytest

from mockserver.config.fixture import ConfigError, default_fixture_path, load_fixture, parse_fixture


def test_default_fixture_describes_the_announced_world() -> None:
    fixture = load_fixture()
    assert default_fixture_path().is_file()
    rates = {tier: fixture.profiles[tier].tokens_per_second for tier in ("default", "priority", "flex", "ultrafast")}
    assert rates == {"default": 54, "priority": 135, "flex": 27, "ultrafast": 750}
    assert fixture.profiles["ultrafast"].ttft_ms < fixture.profiles["default"].ttft_ms
    sol = fixture.model("gpt-5.6-sol")
    assert sol is not None and set(sol.tiers) == {"default", "priority", "flex", "ultrafast"}
    ultra = fixture.model("gpt-5.6-sol-ultrafast")
    assert ultra is not None and ultra.forced_tier == "ultrafast"
    mini = fixture.model("gpt-5.6-mini")
    assert mini is not None and "ultrafast" not in mini.tiers
    preview, standard = fixture.account("sk-mock-preview"), fixture.account("sk-mock-standard")
    assert preview is not None and preview.has_preview
    assert standard is not None and not standard.has_preview


def minimal(**changes: object) -> dict[str, object]:
    profile = {"tokens_per_second": 10, "ttft_ms": 0}
    data: dict[str, object] = {
        "profiles": {t: dict(profile) for t in ("default", "priority", "flex", "ultrafast")},
        "models": [{"id": "m"}],
        "accounts": [{"key": "k"}],
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"models": [{"id": "m"}, {"id": "m"}]}, "models has duplicate ids"),
        ({"models": [{"id": "m", "tiers": ["warp"]}]}, "models.0.tiers.0"),
        ({"models": [{"id": "m", "tiers": ["default"], "forced_tier": "flex"}]}, "forced_tier 'flex' is not in tiers"),
        ({"accounts": []}, "accounts: List should have at least 1 item"),
        ({"output_tokens": {"min": 10, "max": 5}}, "min (10) must not exceed max (5)"),
        ({"unknown": 1}, "(top level): unknown field `unknown`; known: accounts, capacity"),
    ],
)
def test_mistakes_are_named(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=r"config file my\.yaml: ") as caught:
        parse_fixture(minimal(**changes), source="my.yaml")
    assert message in str(caught.value)


def test_missing_tier_profile() -> None:
    data = minimal()
    del data["profiles"]["flex"]  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"profiles is missing the tiers \['flex'\]"):
        parse_fixture(data)
