"""A Chat Completions request's prompt as OpenAI's prompt cache matches it (:mod:`mockserver.service.prompt_cache`):
the tools and ``response_format``, then each message as it was sent, each with its tokens as
``usage.prompt_tokens`` counts them (so a cached prefix is never longer than the prompt reported)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockserver.api.openai.chat.completions import message_text
from mockserver.api.openai.schemas import ChatCompletionRequest
from mockserver.engine import tokens
from mockserver.service import prompt_cache
from mockserver.service.prompt_cache import Part


def chat_parts(body: ChatCompletionRequest, raw_body: dict[str, Any]) -> Iterator[Part]:
    """The parts one at a time, so that the service cuts a long conversation in pieces."""
    yield prompt_cache.head(raw_body.get("tools"), raw_body.get("response_format"), body.tools)
    for message, sent in zip(body.messages, raw_body.get("messages") or (), strict=False):
        counted = prompt_cache.message_tokens(tokens.PromptMessage(message.role, message_text(message), message.name))
        yield prompt_cache.part(sent, counted)
