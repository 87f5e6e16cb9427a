"""A Responses conversation fitted to the window: what the model reads, what usage counts, and the
prompt-cache parts of a truncated prompt."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockserver import errors
from mockserver.api.openai.responses import cache_parts, lifecycle, prompt_fit
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.config.fixture import ModelSpec
from mockserver.engine.conversation import ConversationItem
from mockserver.engine.in_turns import ITEMS_PER_TURN
from tests.support import with_loop_turns

CONTEXT: list[ConversationItem] = [
    ("user", "first question" + " word" * 100),
    ("assistant", "first answer" + " word" * 100),
    ("user", "second question" + " word" * 100),
    ("assistant", "second answer" + " word" * 100),
    ("user", "the last question"),
]


def fitted(window: int, truncation: str | None, output: int | None = None) -> prompt_fit.Fitted:
    model = ModelSpec(id="m", context_window=window)
    raw = {"max_output_tokens": output} if output else {}
    return asyncio.run(prompt_fit.fit(model, raw, CONTEXT, instructions="Be brief.", tools=None, truncation=truncation))


def test_a_conversation_that_fits_is_read_whole_and_counted_as_usage_counts_it() -> None:
    whole = fitted(10_000, None)
    assert whole.dropped == 0 and whole.kept == CONTEXT
    assert whole.input_tokens == lifecycle.count_input_tokens("Be brief.", CONTEXT, None)


def test_disabled_refuses_and_auto_drops_the_oldest_turns() -> None:
    total = lifecycle.count_input_tokens("Be brief.", CONTEXT, None)
    with pytest.raises(errors.InvalidRequestError) as caught:
        fitted(total + 50, "disabled", output=51)
    assert (caught.value.param, caught.value.code) == ("input", "context_length_exceeded")
    cut = fitted(total + 50, "auto", output=51)
    assert cut.dropped == 1 and cut.kept == CONTEXT[1:]
    assert cut.input_tokens == lifecycle.count_input_tokens("Be brief.", CONTEXT[1:], None)
    assert cut.input_tokens + 51 <= total + 50
    last = fitted(lifecycle.count_input_tokens("Be brief.", CONTEXT[-1:], None), "auto")
    assert last.kept == CONTEXT[-1:]
    with pytest.raises(errors.InvalidRequestError):
        fitted(lifecycle.count_input_tokens("Be brief.", CONTEXT[-1:], None) - 1, "auto")


def test_the_cache_parts_of_a_truncated_prompt_leave_out_the_dropped_items() -> None:
    raw = {"model": "m", "input": [{"role": role, "content": text} for role, text in CONTEXT]}
    body = ResponseCreateRequest.model_validate(raw)
    whole = list(cache_parts.response_parts(body, raw, None))
    cut = list(cache_parts.response_parts(body, raw, None, dropped=2))
    assert len(cut) == len(whole) - 2
    assert cut[0] == whole[0] and cut[1:] == whole[3:]  # the head stays; the first two items are gone


def test_a_long_conversation_is_fitted_as_in_one_go_with_the_loops_turns() -> None:
    context: list[ConversationItem] = [
        ("user" if i % 2 == 0 else "assistant", f"Line {i} of the log.") for i in range(20_000)
    ]
    total = lifecycle.count_input_tokens("Be brief.", context, None)
    model = ModelSpec(id="m", context_window=total // 2)

    def fit() -> Any:
        return prompt_fit.fit(model, {}, context, instructions="Be brief.", tools=None, truncation="auto")

    cut, turns = with_loop_turns(fit)
    assert 0 < cut.dropped < len(context)
    assert cut.input_tokens == lifecycle.count_input_tokens("Be brief.", context[cut.dropped :], None)
    assert cut.input_tokens <= total // 2 < lifecycle.count_input_tokens("Be brief.", context[cut.dropped - 1 :], None)
    assert turns >= len(context) // ITEMS_PER_TURN


def test_a_long_input_continuing_a_conversation_is_read_with_the_loops_turns() -> None:
    raw = [{"role": "user", "content": f"Line {i} of the log."} for i in range(20_000)]
    read, turns = with_loop_turns(lambda: prompt_fit.read_context_in_turns(raw, None, None))
    assert read == prompt_fit.read_context(raw, None, None)
    assert turns >= len(raw) // ITEMS_PER_TURN - 1
