"""A Responses API request's prompt as OpenAI's prompt cache matches it (:mod:`mockserver.service.prompt_cache`):
the tools and ``text.format``, the instructions, an earlier response's turns, then this ``input``;
each with its tokens as ``usage.input_tokens`` counts them.

A prompt shortened by ``truncation: "auto"`` (:mod:`mockserver.api.openai.responses.prompt_fit`) is
matched as the model reads it: without the dropped items. Its prefix is then one no earlier request
sent (the instructions are followed by a later item than before), so it misses the cache and writes
its own prefixes, which a later request truncated at the same item reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockserver import errors
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.engine import conversation, tokens
from mockserver.service import prompt_cache
from mockserver.service.prompt_cache import Part
from mockserver.state.responses import StoredResponse

_ITEMS_AT_ONCE = 256  # input items read at a time, so the service can let the event loop run between


def response_parts(
    body: ResponseCreateRequest, raw_body: dict[str, Any], previous: StoredResponse | None, *, dropped: int = 0
) -> Iterator[Part]:
    """The parts one at a time, so that the service cuts a long conversation in pieces. Nothing for a
    request its planning will refuse (an earlier response that is not there), and nothing past an input
    item it cannot read: the planner's own check answers it, and a refused request writes nothing.
    The first ``dropped`` items of the conversation (``truncation: "auto"``) are not part of it."""
    if body.previous_response_id is not None and previous is None:
        return
    text = raw_body.get("text")
    output_format = text.get("format") if isinstance(text, dict) else None
    yield prompt_cache.head(raw_body.get("tools"), output_format, body.tools)
    earlier = previous.conversation if previous else ()
    if body.instructions:
        yield _part(conversation.prompt_messages(body.instructions, ())[0])
    skip = dropped
    for message in conversation.prompt_messages(None, earlier[skip:]):
        yield _part(message)
    skip = max(0, skip - len(earlier))
    raw = body.input
    batches = (
        [raw]
        if not isinstance(raw, list)
        else (raw[i : i + _ITEMS_AT_ONCE] for i in range(0, len(raw), _ITEMS_AT_ONCE))
    )
    for batch in batches:
        try:
            items = conversation.read_input(batch)
        except errors.MockAPIError:
            return
        if skip:
            cut = min(skip, len(items))
            items, skip = items[cut:], skip - cut
        for message in conversation.prompt_messages(None, items):
            yield _part(message)


def _part(message: tokens.PromptMessage) -> Part:
    return prompt_cache.part([message.role, message.text], prompt_cache.message_tokens(message))
