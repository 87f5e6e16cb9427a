"""A Responses API request's prompt as OpenAI's prompt cache matches it (:mod:`mockserver.service.prompt_cache`):
the tools and ``text.format``, the instructions, an earlier response's turns, then this ``input``;
each with its tokens as ``usage.input_tokens`` counts them."""

from __future__ import annotations

from typing import Any

from mockserver import errors
from mockserver.api.openai.schemas import ResponseCreateRequest
from mockserver.engine import conversation
from mockserver.service import prompt_cache
from mockserver.service.prompt_cache import Part
from mockserver.state.responses import StoredResponse


def response_parts(
    body: ResponseCreateRequest, raw_body: dict[str, Any], previous: StoredResponse | None
) -> list[Part]:
    """Nothing for a request its planning will refuse (an input it cannot read, an earlier response
    that is not there): the planner's own check answers it."""
    if body.previous_response_id is not None and previous is None:
        return []
    try:
        items = [*(previous.conversation if previous else ()), *conversation.read_input(body.input)]
    except errors.MockAPIError:
        return []
    text = raw_body.get("text")
    output_format = text.get("format") if isinstance(text, dict) else None
    parts = [prompt_cache.head(raw_body.get("tools"), output_format, body.tools)]
    for message in conversation.prompt_messages(body.instructions, items):
        parts.append(prompt_cache.part([message.role, message.text], prompt_cache.message_tokens(message)))
    return parts
