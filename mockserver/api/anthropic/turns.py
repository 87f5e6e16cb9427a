"""Reading a Messages request's conversation: ``system`` and the ``messages`` content blocks.

Each block is checked where the live API checks it, and refused with a message naming its
place (``messages.1.content.0.text: Field required``). The conversation becomes the
``(kind, text)`` items the shared layers read: a user's text, an assistant's text and tool
calls, and ``tool`` for each ``tool_result``, which tells the reply planner that the model has
its answer and should reply in text. A ``tool_result`` must answer a ``tool_use`` of the
message just before it, and every ``tool_use`` of an earlier turn must be answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.schemas import MessageParam
from mockserver.engine.conversation import ConversationItem, block_text, system_text
from mockserver.errors import MockAPIError

MESSAGES_PER_TURN = 256  # messages read between two turns of the event loop (well under a millisecond)
USER_BLOCKS = {"text", "image", "document", "tool_result", "search_result", "container_upload"}
ASSISTANT_BLOCKS = {
    "text",
    "tool_use",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
}


@dataclass
class Conversation:
    items: list[ConversationItem] = field(default_factory=list)  # (user | assistant | tool, text)
    texts: list[str] = field(default_factory=list)  # one per message (the system prompt first): input tokens
    user_texts: list[str] = field(default_factory=list)  # what the user wrote: the reply's language and length


def read(system: str | list[dict[str, Any]] | None, messages: Sequence[MessageParam]) -> Conversation:
    """The whole conversation, checked; the first fault found is raised as the live API's 400."""
    conversation = Conversation()
    for _ in reading(conversation, system, messages):
        pass
    return conversation


@dataclass(frozen=True)
class Reading:
    """A Messages request's conversation, read before it is planned with the event loop's turn between
    messages (:func:`read_ahead`), or the fault found in it, which its planning then raises: the
    request's other checks (its model, its context window) keep their order."""

    result: Conversation | MockAPIError

    def read(self) -> Conversation:
        """The conversation, or the live API's 400 for the first fault in it."""
        if isinstance(self.result, MockAPIError):
            raise self.result
        return self.result


async def read_ahead(system: str | list[dict[str, Any]] | None, messages: Sequence[MessageParam]) -> Reading:
    """The conversation, read a few hundred messages at a time, for the planner and the prompt cache."""
    try:
        return Reading(await read_in_turns(system, messages))
    except MockAPIError as fault:
        return Reading(fault)


async def read_in_turns(system: str | list[dict[str, Any]] | None, messages: Sequence[MessageParam]) -> Conversation:
    """:func:`read`, with the event loop's turn every :data:`MESSAGES_PER_TURN` messages, so that a
    conversation of many thousand messages holds the loop a few milliseconds at a time."""
    conversation = Conversation()
    for index, _ in enumerate(reading(conversation, system, messages), 1):
        if index % MESSAGES_PER_TURN == 0:
            await asyncio.sleep(0)
    return conversation


def reading(
    conversation: Conversation, system: str | list[dict[str, Any]] | None, messages: Sequence[MessageParam]
) -> Iterator[str]:
    """Read the conversation into ``conversation`` one message at a time, giving each one's text (the system
    prompt's first) once it is checked, so that a caller can let the event loop run between messages."""
    if not messages:
        raise invalid_request("messages: at least one message is required")
    if system:
        conversation.texts.append(system if isinstance(system, str) else _system_text(system))
        yield conversation.texts[-1]
    unanswered: tuple[int, set[str]] | None = None  # the previous turn's tool_use ids, by message index
    for i, message in enumerate(messages):
        blocks = [{"type": "text", "text": message.content}] if isinstance(message.content, str) else message.content
        if isinstance(message.content, str) and not message.content and i < len(messages) - 1:
            raise invalid_request(f"messages.{i}: all messages must have non-empty content")
        allowed = USER_BLOCKS if message.role == "user" else ASSISTANT_BLOCKS
        parts: list[str] = []
        answered: set[str] = set()
        calls: set[str] = set()
        for j, block in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            kind = _block_type(block, where, allowed)
            text = _block_text(block, kind, where)
            parts.append(text)
            if kind == "tool_result":
                answered.add(block["tool_use_id"])
                conversation.items.append(("tool", text))
            elif kind == "tool_use":
                calls.add(block["id"])
                conversation.items.append(("assistant", text))
            elif kind == "text":
                conversation.items.append((message.role, text))
                if message.role == "user":
                    conversation.user_texts.append(text)
        if unanswered is not None:
            previous, ids = unanswered
            if answered - ids:
                raise invalid_request(
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(sorted(answered - ids))}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            if ids - answered:
                raise invalid_request(
                    f"messages.{previous}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(sorted(ids - answered))}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        elif answered:
            raise invalid_request(
                f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{', '.join(sorted(answered))}. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message."
            )
        unanswered = (i, calls) if calls else None
        conversation.texts.append("".join(parts))
        yield conversation.texts[-1]


def _system_text(blocks: list[dict[str, Any]]) -> str:
    for j, block in enumerate(blocks):
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise invalid_request(f"system.{j}: system prompt blocks must be text blocks with a 'text' string")
    return system_text(blocks)


def _block_type(block: Any, where: str, allowed: set[str]) -> str:
    if not isinstance(block, Mapping):
        raise invalid_request(f"{where}: Input should be a valid dictionary or object")
    kind = block.get("type")
    if kind is None:
        raise invalid_request(f"{where}.type: Field required")
    if kind not in allowed:
        raise invalid_request(
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            + ", ".join(f"'{t}'" for t in sorted(allowed))
        )
    return str(kind)


def _block_text(block: Mapping[str, Any], kind: str, where: str) -> str:
    """What a block contributes to the prompt (:func:`mockserver.engine.conversation.block_text`, as the
    estimate made before planning counts it), after checking its required fields."""
    if kind == "text":
        text = _required(block, "text", str, where)
        if not text:
            raise invalid_request(f"{where}.text: text content blocks must be non-empty")
    elif kind == "tool_use":
        _required(block, "id", str, where)
        _required(block, "name", str, where)
        _required(block, "input", Mapping, where)
    elif kind == "tool_result":
        _required(block, "tool_use_id", str, where)
    elif kind == "thinking":
        _required(block, "thinking", str, where)
    return block_text(block)


def _required(block: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    if name not in block:
        raise invalid_request(f"{where}.{name}: Field required")
    value = block[name]
    if not isinstance(value, kind):
        expected = "a valid string" if kind is str else "a valid dictionary"
        raise invalid_request(f"{where}.{name}: Input should be {expected}")
    return value
