"""A request's prompt as OpenAI's prompt cache matches it (:mod:`mockserver.service.prompt_cache`).

The parts come in the order the model reads them: the tools and the output format, then each
message (the Responses API's ``instructions`` first, and an earlier response's turns before this
``input``). Each part's tokens are counted as the reply's usage counts them, so a cached prefix is
never longer than the prompt reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from mockserver import errors
from mockserver.api.openai.chat.completions import message_text
from mockserver.api.openai.schemas import ChatCompletionRequest, ResponseCreateRequest
from mockserver.engine import conversation, tokens
from mockserver.service.prompt_cache import Part
from mockserver.state.responses import StoredResponse


def chat(body: ChatCompletionRequest, raw_body: dict[str, Any]) -> list[Part]:
    """Chat Completions: the tools and ``response_format``, then each message as it was sent."""
    parts = [_head(raw_body.get("tools"), raw_body.get("response_format"), body.tools)]
    for message, sent in zip(body.messages, raw_body.get("messages") or (), strict=False):
        counted = _tokens(tokens.PromptMessage(message.role, message_text(message), message.name))
        parts.append(Part(orjson.dumps(sent, option=orjson.OPT_SORT_KEYS), counted))
    return parts


def responses(body: ResponseCreateRequest, raw_body: dict[str, Any], previous: StoredResponse | None) -> list[Part]:
    """The Responses API: the tools and ``text.format``, the instructions, the earlier response's turns,
    then this ``input``. Nothing for a request its planning will refuse (an input it cannot read, an
    earlier response that is not there): the planner's own check answers it."""
    if body.previous_response_id is not None and previous is None:
        return []
    try:
        items = [*(previous.conversation if previous else ()), *conversation.read_input(body.input)]
    except errors.MockAPIError:
        return []
    text = raw_body.get("text")
    parts = [_head(raw_body.get("tools"), text.get("format") if isinstance(text, dict) else None, body.tools)]
    for message in conversation.prompt_messages(body.instructions, items):
        parts.append(Part(orjson.dumps([message.role, message.text]), _tokens(message)))
    return parts


def _head(tools: Any, output_format: Any, parsed_tools: Sequence[Any] | None) -> Part:
    data = orjson.dumps([tools, output_format], option=orjson.OPT_SORT_KEYS)
    return Part(data, conversation.tool_definition_tokens(parsed_tools))


def _tokens(message: tokens.PromptMessage) -> int:
    return tokens.count_messages([message]) - tokens.TOKENS_PER_REPLY
