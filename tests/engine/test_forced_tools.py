"""The forced tool-choice rule: a call on every turn, moving on through an agent loop to its output tool."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mockserver.engine.structured import FunctionSpec, Prompt, pick_tool
from mockserver.engine.structured.forced import MAX_CALL_ITEMS, called_tools, is_forced, is_output_tool

WEATHER = FunctionSpec("get_weather", {"type": "object"})
TIME = FunctionSpec("get_time", {"type": "object"})
FINAL = FunctionSpec("final_result", {"type": "object"})
REPORT = FunctionSpec("WeatherReport", {"type": "object"}, description="A weather report.")
DESCRIBED = FunctionSpec("submit", {"type": "object"}, description="The final response which ends this conversation")
TOOLS = [WEATHER, TIME, FINAL]


def _pick(tools: list[FunctionSpec], choice: Any, called: set[str], seed: int = 0, prompt: str = "") -> FunctionSpec:
    picked = pick_tool(
        tools, choice, answered=bool(called), rng=random.Random(seed), prompt=Prompt.of(prompt), called=called
    )
    assert picked is not None
    return picked


@pytest.mark.parametrize(
    ("choice", "forced"),
    [
        ("required", True),
        ("auto", False),
        ("none", False),
        (None, False),
        ({"type": "function", "name": "get_time"}, True),
        ({"type": "function", "function": {"name": "get_time"}}, True),
        ({"type": "allowed_tools", "mode": "required", "tools": []}, True),
        ({"type": "allowed_tools", "mode": "auto", "tools": []}, False),
        ({"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": []}}, True),
        ({"type": "web_search"}, False),
    ],
)
def test_which_choices_force_a_call(choice: Any, forced: bool) -> None:
    assert is_forced(choice) is forced


def test_output_tools_are_told_by_name_and_description() -> None:
    assert [is_output_tool(t) for t in (WEATHER, TIME, FINAL, REPORT, DESCRIBED)] == [False, False, True, True, True]
    assert is_output_tool(FunctionSpec("final_result_Answer")) and is_output_tool(FunctionSpec("structured_output"))


def test_a_forced_choice_calls_a_tool_after_tool_results() -> None:
    assert _pick([WEATHER], "required", {"get_weather"}) == WEATHER
    assert _pick(TOOLS, {"type": "function", "name": "get_time"}, {"get_time"}) == TIME
    assert pick_tool(TOOLS, "auto", answered=True, rng=random.Random(0), called={"get_weather"}) is None


@pytest.mark.parametrize("seed", range(12))
def test_a_loop_runs_a_work_tool_then_ends_with_the_output_tool(seed: int) -> None:
    first = _pick(TOOLS, "required", set(), seed)
    assert first in (WEATHER, TIME)
    assert _pick(TOOLS, "required", {first.name}, seed) == FINAL
    # The same conversation, the same call.
    assert _pick(TOOLS, "required", set(), seed) == first


def test_the_prompt_chooses_among_the_tools_not_called_yet() -> None:
    ask = "Call get_weather and then get_time for Oslo."
    assert _pick(TOOLS, "required", set(), prompt=ask) == WEATHER
    assert _pick(TOOLS, "required", {"get_weather"}, prompt="What is the time in Oslo? use get_time") == TIME
    assert _pick(TOOLS, "required", {"get_weather", "get_time"}, prompt=ask) == FINAL


def test_without_an_output_tool_a_loop_moves_through_the_tools_not_called_yet() -> None:
    assert _pick([WEATHER, TIME], "required", {"get_weather"}) == TIME
    assert _pick([WEATHER, TIME], "required", {"get_time"}) == WEATHER
    assert _pick([WEATHER, TIME], "required", {"get_time", "get_weather"}) in (WEATHER, TIME)


def test_a_class_named_output_tool_ends_a_loop() -> None:
    assert _pick([WEATHER, REPORT], "required", {"get_weather"}) == REPORT
    allowed = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]}
    assert _pick([WEATHER, REPORT], allowed, {"get_weather"}) == WEATHER  # only what the choice allows


def test_calls_are_read_from_every_apis_items() -> None:
    names = ["get_weather", "get_time", "final_result"]
    items = [
        ("user", "Weather? get_time{ is mentioned by the user"),
        ("function_call", 'get_weather{"city":"Oslo"}'),  # Responses
        ("assistant", 'Let me check.get_time{"tz":"CET"}'),  # Chat: content, then each call
        ("tool", '{"temp": 21}'),
    ]
    assert called_tools(items, names) == {"get_weather", "get_time"}


def test_only_the_latest_calls_are_read() -> None:
    items = [("function_call", 'get_time{"tz":"CET"}')] + [("function_call", "get_weather{}")] * MAX_CALL_ITEMS
    assert called_tools(items, ["get_weather", "get_time"]) == {"get_weather"}


@pytest.mark.parametrize(
    ("latest", "declined"),
    [
        ("Acknowledge the available exchange-rate tool without calling it.", True),
        ("Use tool search to load get_rate. Do not call it yet.", True),
        ("Reply only with: ready", True),
        ("Call one_tool and two_tool. Do not call any other tools.", False),
        ("What's the weather in Oslo?", False),
    ],
)
def test_a_prompt_may_ask_for_no_tool_under_auto(latest: str, declined: bool) -> None:
    picked = pick_tool(TOOLS, "auto", answered=False, rng=random.Random(0), prompt=Prompt.of(latest))
    assert (picked is None) is declined
    forced = pick_tool(TOOLS, "required", answered=False, rng=random.Random(0), prompt=Prompt.of(latest))
    assert forced is not None  # a forced choice calls whatever the prompt says


def test_auto_after_results_calls_a_named_tool_not_called_yet() -> None:
    ask = Prompt.of("Get the weather in Oslo, then call get_time.")
    rng = random.Random(0)
    assert pick_tool(TOOLS, "auto", answered=True, rng=rng, prompt=ask, called={"get_weather"}) == TIME
    assert pick_tool(TOOLS, "auto", answered=True, rng=rng, prompt=ask, called={"get_weather", "get_time"}) is None
