"""Tool arguments taken from the prompt: the corpus's exact-match rate per rule, typing, refusals,
bounds and the order of the rules."""

from __future__ import annotations

import collections
import random
import time
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockserver.engine.structured import FunctionSpec, Prompt, call_arguments, pick_tool
from mockserver.engine.structured.bindings import bind
from mockserver.engine.structured.prompt_text import MAX_PROMPT_CHARS
from mockserver.engine.structured.schema import Schemas
from mockserver.engine.structured.tool_results import mention
from tests.engine.prompted_corpus import CASES, MAGIC, WEATHER, Case, obj

EXACT_FLOOR = 0.90


def _arguments(case: Case, seed: int = 1) -> Any:
    prompt = Prompt.of(case.prompt, [case.system] if case.system else [])
    return call_arguments(FunctionSpec(case.tool, case.parameters), random.Random(seed), prompt)


def exact_rates() -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per rule, (exact arguments, expected arguments); and a line for each miss."""
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    misses = []
    for case in CASES:
        arguments = _arguments(case)
        for name, expected in case.expected.items():
            counts[case.rule][1] += 1
            got = arguments.get(name)
            if got == expected and type(got) is type(expected):
                counts[case.rule][0] += 1
            else:
                misses.append(f"{case.rule}: {case.prompt!r} {name}={got!r}, expected {expected!r}")
    return {rule: (good, total) for rule, (good, total) in counts.items()}, misses


def test_the_corpus_has_sixty_prompts_in_english_and_chinese() -> None:
    languages = collections.Counter(case.language for case in CASES)
    assert len(CASES) >= 60 and languages["en"] >= 30 and languages["zh"] >= 20
    assert {case.rule for case in CASES} >= {"call", "named value", "enum", "format", "phrase", "number", "quoted"}


def test_at_least_ninety_percent_of_the_corpus_arguments_are_exact() -> None:
    rates, misses = exact_rates()
    good = sum(g for g, _ in rates.values())
    total = sum(t for _, t in rates.values())
    print("\nexact arguments per rule:")
    for rule, (g, t) in rates.items():
        print(f"  {rule:22} {g}/{t} ({g / t:.0%})")
    print(f"  {'all':22} {good}/{total} ({good / total:.1%})")
    print("\n".join(misses))
    assert good / total >= EXACT_FLOOR, misses


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}:{c.prompt[:30]}")
def test_every_corpus_answer_is_valid_for_its_schema(case: Case) -> None:
    for seed in (1, 2, 3):
        jsonschema.validate(_arguments(case, seed), case.parameters)


def test_chinese_and_other_non_latin_values_are_kept_exactly() -> None:
    customer = obj({"name": {"type": "string"}})
    for prompt, name in (
        ("create a customer named 你好啊集团", "你好啊集团"),
        ("Создай клиента с именем «Ромашка»", "Ромашка"),
        ("顧客「株式会社さくら」を作成して", "株式会社さくら"),
        ("name: Zoë Ångström", "Zoë Ångström"),
    ):
        assert _arguments(Case("x", prompt, "create_customer", customer, {})) == {"name": name}


def test_a_value_the_schema_refuses_falls_back_to_the_generated_one() -> None:
    lower = obj({"code": {"type": "string", "pattern": "^[a-z]{3}$"}, "count": {"type": "integer", "maximum": 10}})
    generated = call_arguments(FunctionSpec("f", lower), random.Random(5))
    prompted = _arguments(Case("x", "code: ABCD, count: 99", "f", lower, {}), seed=5)
    assert prompted == generated
    jsonschema.validate(prompted, lower)


def test_a_pattern_that_needs_backtracking_keeps_generated_strings() -> None:
    schema = obj({"word": {"type": "string", "pattern": "^(?=a)[a-z]+$"}})  # lookahead: not RE2
    generated = call_arguments(FunctionSpec("f", schema), random.Random(3))
    assert _arguments(Case("x", "word: apple", "f", schema, {}), seed=3) == generated


def test_typed_to_the_schema() -> None:
    schema = obj(
        {
            "n": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "when": {"type": "string", "format": "date-time"},
        }
    )
    args = _arguments(
        Case("x", "n: 2.5, flag: yes, tags: red, green and blue, maybe = 4, when: 2026-01-02", "f", schema, {})
    )
    assert args == {
        "n": 2.5,
        "flag": True,
        "tags": ["red", "green", "blue"],
        "maybe": 4,
        "when": "2026-01-02T00:00:00Z",
    }


def test_a_tool_without_parameters_is_called_with_an_empty_object() -> None:
    for parameters in (None, {}):
        assert call_arguments(FunctionSpec("ping", parameters or {}), random.Random(1)) == {}


def test_unmentioned_optional_parameters_are_left_out_once_the_prompt_gives_values() -> None:
    assert _arguments(Case("x", "What's the weather in Oslo?", "get_weather", WEATHER, {})) == {"city": "Oslo"}


def test_a_prompt_that_names_nothing_gets_the_generated_arguments() -> None:
    for seed in range(5):
        generated = call_arguments(FunctionSpec("get_weather", WEATHER), random.Random(seed))
        assert _arguments(Case("x", "Hello there.", "get_weather", WEATHER, {}), seed) == generated


def test_the_tool_a_prompt_calls_is_picked() -> None:
    tools = [FunctionSpec("get_weather", WEATHER), FunctionSpec("magic_function", MAGIC)]
    for seed in range(8):
        for prompt, name in (("what is magic_function(3)?", "magic_function"), ("use get_weather", "get_weather")):
            picked = pick_tool(tools, "auto", answered=False, rng=random.Random(seed), prompt=Prompt.of(prompt))
            assert picked is not None and picked.name == name


def test_the_rules_are_tried_in_order() -> None:
    schema = obj({"city": {"type": "string"}})
    schemas = Schemas(schema)
    # A written call beats a named value, which beats a cue phrase.
    bound = bind("get_weather", schema, schemas, "get_weather('Rome') -- city: Oslo, in Paris", "")
    assert bound["city"].value == "Rome" and bound["city"].rule == "call"
    bound = bind("get_weather", schema, schemas, "city: Oslo, in Paris", "")
    assert bound["city"].value == "Oslo" and bound["city"].rule == "named value"
    # The latest user turn's call beats the system prompt's.
    bound = bind("get_weather", schema, schemas, "get_weather('Rome')", "get_weather('Lima')")
    assert bound["city"].value == "Rome"


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300), seed=st.integers(0, 2**32))
def test_any_text_gives_valid_arguments_the_same_every_time(text: str, seed: int) -> None:
    for case in (CASES[0], CASES[3], CASES[15], CASES[31]):
        first = _arguments(Case("x", text, case.tool, case.parameters, {}), seed)
        assert first == _arguments(Case("x", text, case.tool, case.parameters, {}), seed)
        jsonschema.validate(first, case.parameters)


def test_a_long_adversarial_prompt_is_read_within_the_bounds() -> None:
    """Only the last MAX_PROMPT_CHARS characters are read, so a huge prompt costs what a short one does."""
    nasty = ("named 'a' in \"b\" for 1 city: " * 20_000) + "magic_function(5)"
    case = Case("x", nasty, "magic_function", MAGIC, {})
    assert len(Prompt.of(nasty).latest) == MAX_PROMPT_CHARS
    started = time.process_time()
    assert _arguments(case) == {"input": 5}
    # Generous: the point is that it is not quadratic in the 600,000 characters sent.
    assert time.process_time() - started < 2.0


def test_the_answer_after_a_tool_result_mentions_its_values() -> None:
    said = mention(['{"temperature": 4, "unit": "°C", "sky": {"clouds": "few"}}'], "en")
    assert "temperature: 4" in said and "°C" in said and "clouds: few" in said
    assert "晴" in mention(["北京：晴，4 °C"], "zh")
    assert mention(["   "], "en") == ""
