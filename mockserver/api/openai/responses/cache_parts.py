"""A Responses API request's prompt as OpenAI's prompt cache matches it (:mod:`mockserver.service.prompt_cache`):
the tools and ``text.format``, the instructions, an earlier response's turns, then this ``input``;
each with its tokens as ``usage.input_tokens`` counts them."""

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
    body: ResponseCreateRequest, raw_body: dict[str, Any], previous: StoredResponse | None
) -> Iterator[Part]:
    """The parts one at a time, so that the service cuts a long conversation in pieces. Nothing for a
    request its planning will refuse (an earlier response that is not there), and nothing past an input
    item it cannot read: the planner's own check answers it, and a refused request writes nothing."""
    if body.previous_response_id is not None and previous is None:
        return
    text = raw_body.get("text")
    output_format = text.get("format") if isinstance(text, dict) else None
    yield prompt_cache.head(raw_body.get("tools"), output_format, body.tools)
    earlier = previous.conversation if previous else ()
    for message in conversation.prompt_messages(body.instructions, earlier):
        yield _part(message)
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
        for message in conversation.prompt_messages(None, items):
            yield _part(message)


def _part(message: tokens.PromptMessage) -> Part:
    return prompt_cache.part([message.role, message.text], prompt_cache.message_tokens(message))
