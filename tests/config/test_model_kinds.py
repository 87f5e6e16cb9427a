"""Model kinds, embedding dimensions, moderation rules and embedding scripts, as the fixture checks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockserver.config.fixture import ConfigError, load_fixture
from tests.conftest import fixture_with


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fixture.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_built_in_fixture_serves_embeddings_and_moderations() -> None:
    fixture = load_fixture()
    kinds = {m.id: (m.kind, m.dimensions) for m in fixture.models}
    assert kinds["text-embedding-3-small"] == ("embedding", 1536)
    assert kinds["text-embedding-3-large"] == ("embedding", 3072)
    assert kinds["omni-moderation-latest"] == ("moderation", None)
    assert kinds["gpt-5.6-sol"] == ("chat", None)
    assert fixture.pricing.price("text-embedding-3-small").input_per_million == 0.02
    assert fixture.pricing.price("text-embedding-3-large").input_per_million == 0.13
    assert fixture.moderation.rules == []


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ("{id: e, kind: embedding}", "dimensions is required for an embedding model"),
        ("{id: c, dimensions: 8}", "dimensions is required for an embedding model, and only for one"),
        ("{id: e, kind: embedding, dimensions: 0}", "greater than or equal to 1"),
        ("{id: e, kind: vision}", "kind"),
    ],
)
def test_model_kinds_are_checked(tmp_path: Path, model: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_fixture(write(tmp_path, f"extends: default\nmodels:\n  - {model}\n"))


def test_moderation_rules_load_from_yaml(tmp_path: Path) -> None:
    fixture = load_fixture(
        write(
            tmp_path,
            'extends: default\nmoderation:\n  rules:\n    - {pattern: "(?i)kill", categories: [violence], score: 0.8}'
            "\n",
        )
    )
    (rule,) = fixture.moderation.rules
    assert rule.categories == ["violence"] and rule.input_types == ["text"] and rule.score == 0.8
    with pytest.raises(ConfigError, match=r"moderation\.rules\.0\.score"):
        load_fixture(
            write(tmp_path, "extends: default\nmoderation: {rules: [{pattern: x, categories: [hate], score: 0.2}]}\n")
        )


def test_an_embedding_script_reply_is_a_finite_vector() -> None:
    fixture = fixture_with(scripts=[{"match": {"message": "x"}, "reply": {"embedding": [0.5, -0.5]}}])
    assert fixture.scripts[0].reply.embedding == [0.5, -0.5]
    for bad in ([], [float("nan")], [1.0, float("inf")]):
        with pytest.raises(ValueError, match="embedding"):
            fixture_with(scripts=[{"reply": {"embedding": bad}}])
    with pytest.raises(ValueError, match="exactly one of"):
        fixture_with(scripts=[{"reply": {"embedding": [1.0], "text": "both"}}])
