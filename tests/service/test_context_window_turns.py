"""A long prompt read for the window check: the same messages and counts as reading it in one go, with
the event loop's turns between pieces of the reading (other requests and streams run meanwhile)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockserver import errors
from mockserver.config.fixture import ModelSpec
from mockserver.engine import conversation, tokens
from mockserver.engine.in_turns import ITEMS_PER_TURN
from mockserver.engine.prompt_count import PromptCount
from mockserver.service import context_window, ratelimits
from tests.support import with_loop_turns

DIALECTS: list[context_window.Dialect] = ["chat", "responses", "anthropic"]
LONG = 20_000


def request(dialect: context_window.Dialect, n: int) -> dict[str, Any]:
    """A request of ``n`` one-line messages, with a name, a tool call and (Responses) its result among them."""
    lines: list[dict[str, Any]] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i} of the log."} for i in range(n)
    ]
    if dialect == "chat":
        for i in range(0, n, 7):
            lines[i]["name"] = "ann"
        call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
        lines[1] = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"model": "m", "messages": lines}
    if dialect == "responses":
        lines[1] = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": "x"}'}
        lines[2] = {"type": "function_call_output", "call_id": "c1", "output": "found it"}
        return {"model": "m", "instructions": "Be brief.", "input": lines}
    lines[-1] = {"role": "user", "content": [{"type": "text", "text": "Sum it up."}]}
    return {"model": "m", "max_tokens": 8, "system": "Be brief.", "messages": lines}


def read_at_once(body: dict[str, Any], dialect: context_window.Dialect) -> list[Any]:
    """The prompt's messages read in one go, by the functions the reply's usage reads them with."""
    if dialect == "chat":
        return [conversation.chat_message(message) for message in body["messages"]]
    if dialect == "responses":
        return conversation.prompt_messages(body["instructions"], conversation.read_input(body["input"]))
    return ratelimits.prompt_texts(body)


def refused(model: ModelSpec, body: dict[str, Any], dialect: context_window.Dialect) -> errors.MockAPIError:
    with pytest.raises(errors.InvalidRequestError) as caught:
        asyncio.run(context_window.measure(model, body, dialect))
    return caught.value


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("n", [3, ITEMS_PER_TURN + 1, 3_000, LONG])
def test_the_count_is_that_of_the_messages_read_at_once(dialect: context_window.Dialect, n: int) -> None:
    body = request(dialect, n)
    whole = PromptCount(tokens.count_messages(read_at_once(body, dialect)))
    assert asyncio.run(context_window.count_prompt(body, dialect)) == whole
    assert asyncio.run(context_window.measure(ModelSpec(id="m", context_window=10_000_000), body, dialect)) == whole


# Past the window, counting stops and estimates the rest: the estimates the reading in one go gave.
ESTIMATES = [
    ("chat", 3_000, 1_000, 37_155),
    ("chat", LONG, 50_000, 249_188),
    ("chat", LONG, 10, 381_234),
    ("responses", 3_000, 1_000, 36_281),
    ("responses", LONG, 50_000, 243_331),
    ("responses", LONG, 10, 333_579),
    ("anthropic", 3_000, 1_000, 36_146),
    ("anthropic", LONG, 50_000, 243_313),
    ("anthropic", LONG, 10, 333_579),
]


@pytest.mark.parametrize(("dialect", "n", "window", "estimate"), ESTIMATES)
def test_past_the_window_the_estimate_is_unchanged(
    dialect: context_window.Dialect, n: int, window: int, estimate: int
) -> None:
    body = request(dialect, n)
    assert asyncio.run(context_window.count_prompt(body, dialect, limit=window)) == PromptCount(estimate, exact=False)
    refusal = refused(ModelSpec(id="m", context_window=window), body, dialect)
    wording = {"chat": f"resulted in {estimate} tokens", "anthropic": f"prompt is too long: {estimate} tokens"}
    assert wording.get(dialect, context_window.RESPONSES_MESSAGE) in refusal.message


@pytest.mark.parametrize("raw", [None, "Hello", []], ids=["none", "text", "empty"])
def test_a_responses_input_that_is_no_list_of_items_counts_as_before(raw: Any) -> None:
    body = {"model": "m", "instructions": "Be brief.", "input": raw}
    expected = conversation.prompt_messages("Be brief.", conversation.read_input(raw))
    assert asyncio.run(context_window.count_prompt(body, "responses")) == PromptCount(tokens.count_messages(expected))


@pytest.mark.parametrize(("n", "where"), [(20, 5), (LONG, 5), (LONG, 5_000)])
def test_a_malformed_responses_item_is_counted_as_the_rate_limits_count_it(n: int, where: int) -> None:
    body = request("responses", n)
    body["input"][where] = 42  # refused later, for its shape, in its place among the checks
    expected = PromptCount(tokens.count_messages(ratelimits.prompt_texts(body)))
    assert asyncio.run(context_window.count_prompt(body, "responses")) == expected
    assert (
        asyncio.run(context_window.measure(ModelSpec(id="m", context_window=10_000_000), body, "responses")) == expected
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_long_prompt_refused_at_its_first_message_is_read_with_the_loop_s_turns(
    dialect: context_window.Dialect,
) -> None:
    # A window of 10 tokens: counting stops at the first message, so the turns are the reading's own.
    body = request(dialect, LONG)
    tiny = ModelSpec(id="m", context_window=10)
    counted, turns = with_loop_turns(lambda: context_window.count_prompt(body, dialect, limit=10))
    assert not counted.exact
    assert turns >= LONG // ITEMS_PER_TURN - 1

    async def measure() -> errors.MockAPIError | None:
        try:
            await context_window.measure(tiny, body, dialect)
        except errors.InvalidRequestError as refusal:
            return refusal
        return None

    refusal, turns = with_loop_turns(measure)
    assert isinstance(refusal, errors.InvalidRequestError)
    assert turns >= LONG // ITEMS_PER_TURN // 2
