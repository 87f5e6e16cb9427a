"""The prompt the Messages API counts before planning (the context window, the token rate window, the
prompt cache's minimum) is the one its usage and ``count_tokens`` report, block type by block type; and
the prompt cache's parts read the conversation one message at a time."""

from __future__ import annotations

from typing import Any

import pytest

from mockserver.api.anthropic import cache_parts, messages
from mockserver.api.anthropic.schemas import MessagesRequest
from mockserver.engine import tokens
from mockserver.engine.conversation import tool_definition_tokens
from mockserver.service import ratelimits

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


def test_the_cache_parts_read_one_message_at_a_time() -> None:
    lines = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Line {i}."} for i in range(10)]
    broken = {"role": "user", "content": [{"type": "text", "text": "", "cache_control": {"type": "ephemeral"}}]}
    body = MessagesRequest.model_validate({"model": "claude-opus-4-8", "max_tokens": 8, "messages": [*lines, broken]})
    parts = cache_parts.message_parts(body)
    first = [next(parts) for _ in range(3)]  # the tools' part, then the first messages, before the fault is read
    assert [part.tokens for part in first[1:]] == [tokens.count_messages(["Line 0."]) - tokens.TOKENS_PER_REPLY] * 2
    # The planner refuses the empty text block; the parts just stop where it is found (each part is
    # given once the next is read, so the tools' part and every message's before the last good one).
    assert len(first) + len(list(parts)) == len(lines)
