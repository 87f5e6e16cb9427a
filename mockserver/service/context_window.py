"""The model's context window: a prompt that does not fit is refused as the live APIs refuse it.

Each model has a ``context_window`` (prompt and output together). A request whose prompt, plus
the output it asks for (``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens``, when
set), passes the window gets a 400 ``invalid_request_error`` before anything is counted against
its limits (an output limit past the model's ``max_output_tokens`` is left out: the live API
refuses it as too large, :mod:`.output_limits`), worded per API:

- Chat Completions: ``param: "messages"``, ``code: "context_length_exceeded"``, "This model's maximum
  context length is N tokens. However, your messages resulted in M tokens. ..." (or, with an output
  limit, "... you requested M tokens (A in the messages, B in the completion). ...");
- the Responses API: ``param: "input"``, the same code, "Your input exceeds the context window of
  this model. Please adjust your input and try again.";
- Anthropic's Messages API: "prompt is too long: M tokens > N maximum", or with ``max_tokens``
  "input length and `max_tokens` exceed context limit: A + B > N, ...".

The count is the one the reply's usage reports (``prompt_tokens``, ``input_tokens``), read by the same
functions (:func:`count_prompt`): on Chat Completions each message's role, its ``name``, its content
parts' text and its tool calls' names and arguments; on the Responses API each input item as
``usage.input_tokens`` reads it (a ``function_call`` item's name and arguments, a
``function_call_output``'s output), and the instructions. Images, audio and files add nothing.

The count includes the tool definitions, as every API's usage does. On the Messages API it is what
``usage.input_tokens`` and ``count_tokens`` report: every block's text as
:func:`mockserver.engine.conversation.block_text` reads it (earlier tool calls' ``input`` and thinking
included), plus the tool definitions.

The prompt is counted once per request, here (:mod:`mockserver.engine.prompt_count`: in pieces
that let the event loop run, and only as far as the window); the rate limits and the prefill use
that count, and the reply's usage reuses the counts of its long texts.

A Responses request that continues a conversation (``previous_response_id``) is held to the window
with the whole conversation: the earlier turns, as ``usage.input_tokens`` counts them, plus its own
input and tools. With ``truncation: "auto"`` it is not refused but shortened: :func:`items_to_drop`
says how many whole items to drop from the conversation's beginning so that it fits.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from itertools import accumulate
from typing import Any, Literal

from mockserver import errors
from mockserver.config.fixture import ModelSpec
from mockserver.engine import conversation, in_turns, prompt_count, tokens
from mockserver.engine.prompt_count import PromptCount
from mockserver.service import ratelimits

Dialect = Literal["chat", "responses", "anthropic"]
CODE = "context_length_exceeded"
RESPONSES_MESSAGE = "Your input exceeds the context window of this model. Please adjust your input and try again."


async def measure(model: ModelSpec, body: Any, dialect: Dialect) -> PromptCount:
    """Count the prompt of a parsed request ``body`` (at most one window of it), or raise the live 400
    when it does not fit ``model``'s window with the output the request asks for."""
    counted = _chat_prompt_at_once(body) if dialect == "chat" else None
    if counted is None:
        counted = await count_prompt(body, dialect, limit=model.context_window)
    return _held_to_window(model, body, dialect, counted)


def measured_at_once(model: ModelSpec, body: Any) -> PromptCount | None:
    """:func:`measure` of a Chat prompt of a few short messages (most), without a coroutine to await;
    None for any other prompt, which :func:`measured_in_turns` counts with the event loop's turns."""
    counted = _chat_prompt_at_once(body)
    return None if counted is None else _held_to_window(model, body, "chat", counted)


async def measured_in_turns(model: ModelSpec, body: Any, dialect: Dialect) -> PromptCount:
    """:func:`measure` of a prompt that :func:`measured_at_once` could not count: it is not read again
    to be tried at once."""
    return _held_to_window(model, body, dialect, await count_prompt(body, dialect, limit=model.context_window))


def _held_to_window(model: ModelSpec, body: Any, dialect: Dialect, counted: PromptCount) -> PromptCount:
    """The prompt's count with its tool definitions, once checked against ``model``'s window."""
    tools = body.get("tools") if isinstance(body, dict) else None
    if tools:
        # Every API's usage counts the tool definitions as prompt tokens: so does the window.
        counted = replace(counted, tokens=counted.tokens + conversation.tool_definition_tokens(tools))
    check(model, counted.tokens, requested_output(model, body), dialect)
    return counted


async def count_prompt(body: Any, dialect: Dialect, limit: int | None = None) -> PromptCount:
    """The messages of a parsed request ``body`` as its reply's usage counts them
    (:func:`mockserver.engine.prompt_count.count_messages`, stopping past ``limit``), read by the same
    functions the usage reads them with: :func:`mockserver.engine.conversation.chat_message` on Chat
    Completions, :func:`mockserver.engine.conversation.responses_prompt` on the Responses API, the
    Messages API's blocks as :func:`mockserver.service.ratelimits.prompt_texts` reads them.

    Many messages are read a piece at a time, the event loop getting its turn between pieces
    (:func:`mockserver.engine.prompt_count.count_read`), and only their texts are kept for the count."""
    if isinstance(body, dict) and dialect == "chat":
        messages = body.get("messages")
        if isinstance(messages, list):
            return await prompt_count.count_read(_chat_messages, messages, limit)
    if isinstance(body, dict) and dialect == "responses":
        instructions, raw = body.get("instructions"), body.get("input")
        if isinstance(raw, list) and len(raw) > in_turns.ITEMS_PER_TURN:
            head = instructions if isinstance(instructions, str) else None
            try:
                return await prompt_count.count_read(
                    partial(conversation.input_messages, head, raw), range(len(raw)), limit
                )
            except errors.MockAPIError:
                pass  # a malformed item: the request is refused for it later, in its place among the checks
        elif (read := conversation.responses_prompt(instructions, raw)) is not None:
            return await prompt_count.count_messages(read, limit)
    # The Messages API, or a body refused later for its shape.
    return await prompt_count.count_messages(await ratelimits.prompt_texts_in_turns(body), limit)


def _chat_prompt_at_once(body: Any) -> PromptCount | None:
    """:func:`count_prompt` of a Chat prompt of a few short messages (most), counted without its steps'
    coroutines (:func:`mockserver.engine.prompt_count.counted_at_once`); None for any other."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(messages, list) and len(messages) <= in_turns.ITEMS_PER_TURN:
        return prompt_count.counted_at_once(_chat_messages(messages))
    return None


def _chat_messages(messages: Sequence[Any]) -> list[tokens.PromptMessage]:
    return [conversation.chat_message(message) for message in messages]


def requested_output(model: ModelSpec, body: Any) -> int | None:
    """The output limit the request sets, as the window holds it (None when unset or too large)."""
    output = ratelimits.requested_output(body)
    if output is not None and output > model.max_output_tokens:
        # Past what the model can write at all: refused for that (:mod:`.output_limits`, "max_tokens is
        # too large"), as the live API does, whatever the prompt; the window is checked for the prompt alone.
        return None
    return output


def items_to_drop(items: Sequence[int], *, fixed: int, output: int | None, window: int, keep_from: int) -> int | None:
    """How many of the conversation's items to drop from its beginning (``truncation: "auto"``) so that
    ``fixed`` (framing, instructions, tool definitions), the kept ``items`` (their tokens, oldest first)
    and ``output`` fit ``window``; none when they already fit. Items from ``keep_from`` on (the last
    user message and what follows it) are never dropped: None when even they do not fit."""
    budget = window - (output or 0) - fixed
    # The tokens dropped with the first d items, for each d (counts are never negative: non-decreasing),
    # made and searched at C speed, as a conversation can hold many thousand items.
    dropped_tokens = [0, *accumulate(items)]
    dropped = bisect_left(dropped_tokens, dropped_tokens[-1] - budget)
    return dropped if dropped <= min(keep_from, len(items)) else None


def check(model: ModelSpec, prompt_tokens: int, output_tokens: int | None, dialect: Dialect) -> None:
    """Raise the live 400 if ``prompt_tokens`` plus ``output_tokens`` (when set) pass the window."""
    window = model.context_window
    if prompt_tokens + (output_tokens or 0) <= window:
        return
    raise exceeded(window, prompt_tokens, output_tokens if prompt_tokens <= window else None, dialect)


def exceeded(
    window: int, prompt_tokens: int, output_tokens: int | None, dialect: Dialect
) -> errors.InvalidRequestError:
    """The error for a prompt of ``prompt_tokens`` that, with ``output_tokens`` if not None, passes ``window``."""
    if dialect == "responses":
        return errors.InvalidRequestError(RESPONSES_MESSAGE, param="input", code=CODE)
    if dialect == "anthropic":
        if output_tokens is None:
            return errors.InvalidRequestError(f"prompt is too long: {prompt_tokens} tokens > {window} maximum")
        return errors.InvalidRequestError(
            f"input length and `max_tokens` exceed context limit: {prompt_tokens} + {output_tokens} > {window}, "
            "decrease input length or `max_tokens` and try again"
        )
    start = f"This model's maximum context length is {window} tokens. However, "
    if output_tokens is None:
        message = f"{start}your messages resulted in {prompt_tokens} tokens. Please reduce the length of the messages."
    else:
        message = (
            f"{start}you requested {prompt_tokens + output_tokens} tokens ({prompt_tokens} in the messages, "
            f"{output_tokens} in the completion). Please reduce the length of the messages or completion."
        )
    return errors.InvalidRequestError(message, param="messages", code=CODE)
