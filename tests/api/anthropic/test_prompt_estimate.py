"""The prompt the Messages API counts before planning (the context window, the token rate window, the
prompt cache's minimum) is the one its usage and ``count_tokens`` report, block type by block type; and
the conversation is read ahead of planning with the event loop's turns between messages."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockserver.api.anthropic import cache_parts, messages, turns
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.engine import tokens
from mockserver.engine.conversation import tool_definition_tokens
from mockserver.errors import MockAPIError
from mockserver.service import ratelimits
from tests.support import with_loop_turns

TEXT = "The supplier delivers within ten working days. "
TOOLS = [{"name": "lookup", "input_schema": {"type": "object"}}]
BLOCKS: dict[str, list[dict[str, Any]]] = {
    "text": [{"role": "user", "content": [{"type": "text", "text": TEXT}]}],
    "string": [{"role": "user", "content": TEXT}],
    "image": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "text", "text": "What is it?"}]}],
    "document": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": TEXT}},
        {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": TEXT}]}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}}]}],
    "search_result": [{"role": "user", "content": [{"type": "search_result", "source": "https://example.com",
                                                    "title": "Terms", "content": [{"type": "text", "text": TEXT}]}]}],
    "tool_use_and_result": [
        {"role": "user", "content": "Look it up."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should look it up.", "signature": "c2ln"},
            {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"query": TEXT, "n": [1, 2]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "text", "text": TEXT},
            {"type": "search_result", "source": "s", "title": "T", "content": [{"type": "text", "text": TEXT}]}]}]},
    ],
}  # fmt: skip
SYSTEMS: list[Any] = [None, "You are terse.", [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]]


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_the_estimate_is_the_usage(kind: str, system: Any) -> None:
    raw: dict[str, Any] = {"model": "claude-opus-4-8", "max_tokens": 8, "messages": BLOCKS[kind], "tools": TOOLS}
    if system is not None:
        raw["system"] = system
    body = MessagesRequest.model_validate(raw)
    estimate = tokens.count_messages(ratelimits.prompt_texts(raw)) + tool_definition_tokens(raw["tools"])
    assert estimate == messages.input_tokens(body)


def test_a_tool_calls_input_counts() -> None:
    conversation = BLOCKS["tool_use_and_result"]
    without = [conversation[0], {"role": "assistant", "content": conversation[1]["content"][:2]}]
    raw = {"model": "claude-opus-4-8", "max_tokens": 8, "messages": conversation}
    assert tokens.count_messages(ratelimits.prompt_texts(raw)) > tokens.count_messages(
        ratelimits.prompt_texts({**raw, "messages": without})
    ) + tokens.count(TEXT)


def test_the_conversation_is_read_with_the_loops_turns_between_messages() -> None:
    lines = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i}."} for i in range(2_000)]
    marked = {"role": "user", "content": [{"type": "text", "text": "Sum up.", "cache_control": {"type": "ephemeral"}}]}
    body = MessagesRequest.model_validate({"model": "claude-opus-4-8", "max_tokens": 8, "messages": [*lines, marked]})
    reading, turns_taken = with_loop_turns(lambda: turns.read_ahead(body.system, body.messages))
    assert turns_taken >= len(body.messages) // turns.MESSAGES_PER_TURN
    assert reading.read().texts == turns.read(body.system, body.messages).texts
    parts = list(cache_parts.message_parts(body, reading))
    assert len(parts) == 1 + len(body.messages) and parts[-1].breakpoint == "5m"  # the tools' part, then each message


def test_a_fault_is_raised_when_the_request_is_planned() -> None:
    broken = {"role": "user", "content": [{"type": "text", "text": "", "cache_control": {"type": "ephemeral"}}]}
    body = MessagesRequest.model_validate({"model": "claude-opus-4-8", "max_tokens": 8, "messages": [broken]})
    reading = asyncio.run(turns.read_ahead(body.system, body.messages))  # no error yet
    assert list(cache_parts.message_parts(body, reading)) == []  # nothing cached of a request that is refused
    with pytest.raises(MockAPIError, match=r"messages\.0\.content\.0\.text: text content blocks must be non-empty"):
        reading.read()
