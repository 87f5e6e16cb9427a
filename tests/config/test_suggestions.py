"""A misspelled name gets "unknown field `X`, did you mean `Y`?", the guess found with difflib."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mockserver.config import suggestions
from mockserver.config.faults import FaultSyntaxError, parse_fault
from mockserver.config.fixture import ConfigError, Fixture, load_fixture


def test_the_closest_name_or_the_known_ones() -> None:
    assert suggestions.unknown("stauts", ["status", "code"]) == "unknown field `stauts`, did you mean `status`?"
    assert suggestions.unknown("zzz", ["status", "code"]) == "unknown field `zzz`; known: code, status"


def test_the_fields_at_a_place_in_the_schema() -> None:
    assert "tokens_per_second" in suggestions.fields_at(Fixture, ["profiles", "ultrafast"])
    assert "retry_after_ms" in suggestions.fields_at(Fixture, ["capacity"])
    assert "status" in suggestions.fields_at(Fixture, ["faults", "rules", 0, "fault"])
    assert "accounts" in suggestions.fields_at(Fixture, [])


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        (
            "profiles:\n  ultrafast:\n    tokens_per_secnd: 300\n",
            "profiles.ultrafast: unknown field `tokens_per_secnd`, did you mean `tokens_per_second`?",
        ),
        ("capacity:\n  retry_after: 5\n", "capacity: unknown field `retry_after`, did you mean `retry_after_ms`?"),
        ("acounts: []\n", "(top level): unknown field `acounts`, did you mean `accounts`?"),
        (
            "faults:\n  rules:\n    - fault: {stauts: 503}\n",
            "faults.rules.0.fault: unknown field `stauts`, did you mean `status`?",
        ),
    ],
)
def test_a_fixture_typo_names_the_closest_field(yaml: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("extends: default\n" + yaml, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_fixture(path)
    assert message in str(caught.value)
    assert "Extra inputs are not permitted" not in str(caught.value)


def test_a_fault_typo_names_the_closest_field_or_flag() -> None:
    with pytest.raises(FaultSyntaxError, match=re.escape("unknown fault `onse`, did you mean `once`?")):
        parse_fault("onse status=503")


@pytest.mark.parametrize("text", ["status", "status once", "retry_after", "CODE"])
def test_a_fault_field_without_its_value_is_told_to_give_one(text: str) -> None:
    """Not "unknown fault `status`, did you mean `status`?": the field is known, its value is missing."""
    with pytest.raises(FaultSyntaxError) as caught:
        parse_fault(text)
    message = str(caught.value)
    assert "needs a value" in message and "did you mean" not in message
