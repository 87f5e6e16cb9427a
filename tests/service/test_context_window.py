"""The context window check: each API's wording, and the edge to the token."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import errors
from mockserver.config.fixture import ModelSpec
from mockserver.engine import conversation, tokens
from mockserver.service import context_window

MODEL = ModelSpec(id="m", context_window=1000)


def refusal(prompt: int, output: int | None, dialect: context_window.Dialect) -> errors.MockAPIError:
    with pytest.raises(errors.InvalidRequestError) as caught:
        context_window.check(MODEL, prompt, output, dialect)
    return caught.value


def test_up_to_the_window_passes() -> None:
    context_window.check(MODEL, 1000, None, "chat")
    context_window.check(MODEL, 600, 400, "chat")
    context_window.check(MODEL, 1000, 0, "anthropic")


def test_chat_wordings() -> None:
    alone = refusal(1001, None, "chat")
    assert (alone.status_code, alone.param, alone.code) == (400, "messages", "context_length_exceeded")
    assert alone.message == (
        "This model's maximum context length is 1000 tokens. However, your messages resulted in 1001 tokens. "
        "Please reduce the length of the messages."
    )
    assert refusal(600, 401, "chat").message == (
        "This model's maximum context length is 1000 tokens. However, you requested 1001 tokens (600 in the "
        "messages, 401 in the completion). Please reduce the length of the messages or completion."
    )


def test_responses_wording() -> None:
    error = refusal(600, 401, "responses")
    assert (error.param, error.code) == ("input", "context_length_exceeded")
    assert error.message == context_window.RESPONSES_MESSAGE


def test_anthropic_wordings() -> None:
    assert refusal(1001, 10, "anthropic").message == "prompt is too long: 1001 tokens > 1000 maximum"
    assert refusal(990, 11, "anthropic").message == (
        "input length and `max_tokens` exceed context limit: 990 + 11 > 1000, decrease input length or "
        "`max_tokens` and try again"
    )


def test_measure_counts_the_body_as_the_rate_limits_do() -> None:
    body = {"messages": [{"role": "user", "content": "word " * 100}], "max_tokens": 10}
    counted = asyncio.run(context_window.measure(MODEL, body, "chat"))
    assert counted.tokens == tokens.count_messages(["word " * 100])
    with pytest.raises(errors.InvalidRequestError):
        asyncio.run(context_window.measure(MODEL, {**body, "max_tokens": 990}, "chat"))


def test_an_output_limit_past_the_models_own_is_left_to_the_output_check() -> None:
    small_output = ModelSpec(id="m", context_window=1000, max_output_tokens=100)
    body = {"messages": [{"role": "user", "content": "word " * 100}], "max_tokens": 10**12}
    counted = asyncio.run(context_window.measure(small_output, body, "chat"))  # "max_tokens is too large" comes later
    assert counted.tokens == tokens.count_messages(["word " * 100])
    with pytest.raises(errors.InvalidRequestError, match="your messages resulted in"):  # the prompt alone
        asyncio.run(
            context_window.measure(
                small_output, {**body, "messages": [{"role": "user", "content": "a " * 2000}]}, "chat"
            )
        )


@pytest.mark.parametrize("dialect", ["chat", "responses", "anthropic"])
def test_tool_definitions_count_toward_the_window(dialect: context_window.Dialect) -> None:
    tool = {"type": "function", "function": {"name": "lookup", "description": "word " * 400, "parameters": {}}}
    body = {"messages": [{"role": "user", "content": "word " * 100}], "tools": [tool]}
    counted = asyncio.run(context_window.measure(MODEL, {**body, "tools": []}, dialect)).tokens
    definitions = conversation.tool_definition_tokens([tool])
    assert definitions > 400
    with pytest.raises(errors.InvalidRequestError) as caught:  # the messages fit; with the tools they do not
        asyncio.run(context_window.measure(ModelSpec(id="m", context_window=counted + definitions - 1), body, dialect))
    assert caught.value.code == ("context_length_exceeded" if dialect != "anthropic" else None)
    fits = ModelSpec(id="m", context_window=counted + definitions)
    assert asyncio.run(context_window.measure(fits, body, dialect)).tokens == counted + definitions


def test_truncation_drops_nothing_when_the_conversation_fits() -> None:
    assert context_window.items_to_drop([100, 200, 300], fixed=10, output=390, window=1000, keep_from=2) == 0


def test_truncation_drops_the_oldest_items_until_prompt_and_output_fit() -> None:
    # 10 + 100 + 200 + 300 + 400 = 1010 > 1000: the oldest item goes, and no more than that.
    assert context_window.items_to_drop([100, 200, 300], fixed=10, output=400, window=1000, keep_from=2) == 1
    # With a larger output, the next one goes too: 10 + 300 + 600 = 910.
    assert context_window.items_to_drop([100, 200, 300], fixed=10, output=600, window=1000, keep_from=2) == 2
    # No output limit: the prompt alone is held to the window.
    assert context_window.items_to_drop([500, 400, 300], fixed=10, output=None, window=1000, keep_from=2) == 1


def test_truncation_never_drops_the_last_user_message_or_what_follows() -> None:
    # Items from keep_from on stay: past the window even then, it cannot fit (the caller's 400).
    assert context_window.items_to_drop([100, 200, 700], fixed=10, output=400, window=1000, keep_from=2) is None
    assert context_window.items_to_drop([100, 500, 100], fixed=10, output=400, window=1000, keep_from=1) is None
    assert context_window.items_to_drop([100, 400, 100], fixed=10, output=400, window=1000, keep_from=1) == 1
    assert context_window.items_to_drop([], fixed=1001, output=None, window=1000, keep_from=0) is None
