"""The reply planner on its own, without HTTP: what each choice says and when it is due."""

from __future__ import annotations

import asyncio

from mockserver.api.reply_sources import reply_sources
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine import generation
from mockserver.engine.generation import Text
from mockserver.engine.pacing import FakeClock
from mockserver.engine.structured import FunctionSpec
from mockserver.replies.planner import Facts, cut_at_stop, plan, whole_reply_schedule
from mockserver.server_state import ServerState
from mockserver.service import access

HEADERS = {"authorization": "Bearer sk-mock-preview"}
QUESTION = "Tell me a long story about a lighthouse keeper."


def facts(**changes: object) -> Facts:
    state = ServerState(settings=Settings(time_scale=1.0, seed=3), fixture=load_fixture(), clock=FakeClock(start=0.0))
    admission = asyncio.run(access.admission(state.fixture, state.fixture.accounts[0], HEADERS, "gpt-5.6-mini", None))
    base: dict[str, object] = {
        "sources": reply_sources(state),
        "admission": admission,
        "exchange": None,
        "seed": 7,
        "cues": generation.cues_of([QUESTION], [QUESTION]),
        "conversation": [("user", QUESTION)],
    }
    return Facts(**{**base, **changes})  # type: ignore[arg-type]


def test_choices_advance_side_by_side_on_one_schedule() -> None:
    planned = plan(facts(choices=3, reasoning=20))
    assert len(planned.choices) == 3
    assert all(c.reasoning == 20 for c in planned.choices)
    longest = max(len(c.text) for c in planned.choices)
    assert planned.schedule.total_tokens == 20 + longest


def test_the_output_limit_counts_reasoning_first() -> None:
    said = plan(facts(reasoning=30, output_limit=40)).said
    assert (said.reasoning, len(said.text), said.incomplete) == (30, 10, True)
    cut_in_reasoning = plan(facts(reasoning=30, output_limit=12)).said
    assert (cut_in_reasoning.reasoning, len(cut_in_reasoning.text), cut_in_reasoning.incomplete) == (12, 0, True)


def test_a_tool_call_the_limit_would_cut_is_left_out_when_calls_are_whole() -> None:
    tool = FunctionSpec("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    common = {"tools": [tool], "tool_choice": "required", "output_limit": 3}
    assert len(plan(facts(**common)).said.text) == 3  # cut short
    whole = plan(facts(**common, whole_calls=True)).said
    assert whole.tool is not None and len(whole.text) == 0 and whole.incomplete


def test_a_text_answer_ends_before_the_earliest_stop_sequence() -> None:
    text = Text(("The ", "cat ", "sat ", "on ", "the ", "mat"))
    cut, matched = cut_at_stop(text, ["mat", "on "])
    assert (cut.text, matched) == ("The cat sat ", "on ")
    assert cut_at_stop(text, ["dog"]) == (text, None)


def test_the_same_facts_give_the_same_plan() -> None:
    one, two = plan(facts()), plan(facts())
    assert one.said.text.text == two.said.text.text
    assert one.schedule.due_at(5) == two.schedule.due_at(5)


def test_a_reply_with_no_tokens_is_due_at_its_time_to_first_token() -> None:
    admission = facts().admission
    schedule = whole_reply_schedule(admission, FakeClock(start=0.0), time_scale=1.0)
    assert schedule.total_tokens == 0
    assert schedule.end == schedule.start + admission.profile.ttft_ms / 1000
