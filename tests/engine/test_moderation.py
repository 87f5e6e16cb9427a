"""Moderation results: only the rules flag, every category is reported, scores are stable."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mockserver.config.moderation import CATEGORIES, ModerationRule
from mockserver.engine.moderation import UNFLAGGED_CEILING, Part, classify

RULES = [
    ModerationRule(pattern=r"(?i)\bhit him\b", categories=["violence", "harassment/threatening"]),
    ModerationRule(pattern=r"forbidden\.png$", categories=["sexual"], input_types=["image"], score=0.99),
]


def test_nothing_is_flagged_without_a_rule() -> None:
    result = classify([], [Part("text", "I will hit him")])
    assert result["flagged"] is False
    assert list(result["categories"]) == list(CATEGORIES) and not any(result["categories"].values())
    assert all(0 <= score < UNFLAGGED_CEILING for score in result["category_scores"].values())


def test_a_rule_flags_its_categories_and_nothing_else() -> None:
    result = classify(RULES, [Part("text", "Then I will HIT HIM hard.")])
    assert result["flagged"] is True
    assert {c for c, on in result["categories"].items() if on} == {"violence", "harassment/threatening"}
    assert result["category_scores"]["violence"] == 0.95
    assert all(result["category_scores"][c] < UNFLAGGED_CEILING for c in CATEGORIES if not result["categories"][c])


def test_scores_are_the_same_for_the_same_input() -> None:
    assert classify([], [Part("text", "hello")]) == classify([], [Part("text", "hello")])
    assert classify([], [Part("text", "hello")]) != classify([], [Part("text", "goodbye")])


def test_an_image_is_flagged_only_by_an_image_rule() -> None:
    image = Part("image", "https://example.com/forbidden.png")
    flagged = classify(RULES, [Part("text", "what is this?"), image])
    assert {c for c, on in flagged["categories"].items() if on} == {"sexual"}
    assert flagged["category_scores"]["sexual"] == 0.99
    assert not classify(RULES, [Part("text", "https://example.com/forbidden.png")])["flagged"]  # a text rule it isn't


def test_applied_input_types_follow_the_parts() -> None:
    text_only = classify([], [Part("text", "hi")])["category_applied_input_types"]
    assert all(types == ["text"] for types in text_only.values())
    parts = [Part("text", "hi"), Part("image", "data:image/png;base64,AAAA")]
    both = classify([], parts)["category_applied_input_types"]
    assert both["violence"] == ["text", "image"] and both["hate"] == ["text"]
    image_only = classify([], [Part("image", "https://example.com/cat.png")])["category_applied_input_types"]
    assert image_only["sexual"] == ["image"] and image_only["harassment"] == []


def test_rules_are_checked_when_the_fixture_loads() -> None:
    with pytest.raises(ValidationError, match="RE2"):
        ModerationRule(pattern=r"(a)\1", categories=["hate"])
    with pytest.raises(ValidationError, match="images are scored only in"):
        ModerationRule(pattern="x", categories=["hate"], input_types=["image"])
    with pytest.raises(ValidationError):
        ModerationRule(pattern="x", categories=["not-a-category"])  # type: ignore[list-item]
