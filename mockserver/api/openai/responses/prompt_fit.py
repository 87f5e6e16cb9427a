"""A Responses request's conversation held to the model's context window, and ``truncation``.

A request that continues a conversation (``previous_response_id``) is held to the window with the
whole conversation it continues: the earlier turns (the stored response's conversation, read once by
:func:`mockserver.api.openai.responses.lifecycle.earlier_turn`), its own input, the instructions and
the tool definitions, each counted as ``usage.input_tokens`` counts them. Past the window (with the
requested ``max_output_tokens``), ``truncation: "disabled"`` (the default) is the live 400
``context_length_exceeded``; ``truncation: "auto"`` drops whole items from the conversation's
beginning until it fits (:func:`mockserver.service.context_window.items_to_drop`: earlier turns first,
then this input's oldest items, never the last user message; the instructions are no item and stay).
The response then reads, and its usage counts, what was kept; the stored conversation keeps every
item, so the next turn is held to the window the same way.

The fit is made in :meth:`mockserver.api.openai.responses.family.ResponseAsked.measure`, when the
request is admitted and before any rate window is charged, so a refused request costs nothing. A
request without an earlier turn and without ``truncation: "auto"`` is measured as every other API's
is (:func:`mockserver.service.context_window.measure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from mockserver import errors
from mockserver.config.fixture import ModelSpec
from mockserver.engine import in_turns, prompt_count, tokens
from mockserver.engine.conversation import (
    ConversationItem,
    prompt_messages,
    read_input,
    read_input_in_turns,
    tool_definition_tokens,
)
from mockserver.service import context_window
from mockserver.state.responses import StoredResponse


@dataclass(frozen=True)
class Fitted:
    """The conversation as the request sent it (earlier turns first), how many of its items the model
    does not read (``truncation: "auto"``), and the input tokens of what it reads."""

    context: tuple[ConversationItem, ...]
    dropped: int
    input_tokens: int

    @property
    def kept(self) -> list[ConversationItem]:
        return list(self.context[self.dropped :])


def read_context(
    raw_input: str | list[Any] | None, previous_response_id: str | None, previous: StoredResponse | None
) -> list[ConversationItem]:
    """What the request sends: the earlier turns of ``previous_response_id`` (``previous``, read by
    :func:`mockserver.api.openai.responses.lifecycle.earlier_turn`: None is the live API's 404), then
    this ``input``."""
    return _after_history(read_input(raw_input), previous_response_id, previous)


async def read_context_in_turns(
    raw_input: str | list[Any] | None, previous_response_id: str | None, previous: StoredResponse | None
) -> list[ConversationItem]:
    """:func:`read_context`, the event loop getting its turn between pieces of a long ``input``."""
    return _after_history(await read_input_in_turns(raw_input), previous_response_id, previous)


def _after_history(
    items: list[ConversationItem], previous_response_id: str | None, previous: StoredResponse | None
) -> list[ConversationItem]:
    history: tuple[ConversationItem, ...] = ()
    if previous_response_id is not None:
        if previous is None:
            raise errors.previous_response_not_found(previous_response_id)
        history = previous.conversation
    return [*history, *items]


async def fitted(
    model: ModelSpec, body: Any, raw_body: dict[str, Any], previous: StoredResponse | None
) -> Fitted | None:
    """The conversation ``body`` continues (``previous``) and sends, held to ``model``'s window (:func:`fit`);
    None when it is measured as every other API's is: a conversation the planning refuses (in its
    place among the checks)."""
    try:
        context = await read_context_in_turns(body.input, body.previous_response_id, previous)
    except errors.MockAPIError:
        return None
    return await fit(
        model, raw_body, context, instructions=body.instructions, tools=body.tools, truncation=body.truncation
    )


async def fit(
    model: ModelSpec,
    raw_body: dict[str, Any],
    context: Sequence[ConversationItem],
    *,
    instructions: str | None,
    tools: Sequence[Any] | None,
    truncation: str | None,
) -> Fitted:
    """``context`` held to ``model``'s window with the output ``raw_body`` asks for: the items to drop
    with ``truncation: "auto"``, or the live 400 when it does not fit (or, with ``"auto"``, when even
    the last user message and what follows it do not)."""
    # Each item's tokens as usage.input_tokens counts them (tokens.count_messages), its text counted in pieces.
    # Many items are read in pieces, the event loop getting its turn between two (in_turns), and only
    # each one's text and framing kept, not a message object per item for the garbage collector to walk.
    framed = await in_turns.joined(_framed, context)
    counts = await prompt_count.count_each(await in_turns.mapped(itemgetter(0), framed))
    items = await in_turns.mapped(lambda i: framed[i][1] + counts[i], range(len(framed)))
    fixed = tokens.count_messages(prompt_messages(instructions, ())) + tool_definition_tokens(tools)
    output = context_window.requested_output(model, raw_body)
    dropped = 0
    if truncation == "auto":
        last_user = next((i for i in range(len(context) - 1, -1, -1) if context[i][0] == "user"), None)
        keep_from = last_user if last_user is not None else max(0, len(items) - 1)
        window = model.context_window
        fits = context_window.items_to_drop(items, fixed=fixed, output=output, window=window, keep_from=keep_from)
        if fits is None:
            raise context_window.exceeded(window, fixed + sum(items), output, "responses")
        dropped = fits
    else:
        context_window.check(model, fixed + sum(items), output, "responses")
    return Fitted(tuple(context), dropped, fixed + sum(items[dropped:]))


def _framed(items: Sequence[ConversationItem]) -> list[tuple[str, int]]:
    """Each item's text, with the framing tokens that come with it (:func:`tokens.framing_tokens`)."""
    return [(message.text, tokens.framing_tokens(message)) for message in prompt_messages(None, items)]
