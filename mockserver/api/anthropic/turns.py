"""Reading a Messages request's conversation: ``system`` and the ``messages`` content blocks.

Each block is checked where the live API checks it, and refused with a message naming its
place (``messages.1.content.0.text: Field required``). The conversation becomes the
``(kind, text)`` items the shared layers read: a user's text, an assistant's text and tool
calls, and ``tool`` for each ``tool_result``, which tells the reply planner that the model has
its answer and should reply in text. A ``tool_result`` must answer a ``tool_use`` of the
message just before it, and every ``tool_use`` of an earlier turn must be answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockserver.api.anthropic.errors import invalid_request
from mockserver.api.anthropic.schemas import MessageParam
from mockserver.engine import structured
from mockserver.engine.conversation import ConversationItem, text_of

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
    if not messages:
        raise invalid_request("messages: at least one message is required")
    conversation = Conversation()
    if system:
        conversation.texts.append(system if isinstance(system, str) else _system_text(system))
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
    return conversation


def _system_text(blocks: list[dict[str, Any]]) -> str:
    texts = []
    for j, block in enumerate(blocks):
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise invalid_request(f"system.{j}: system prompt blocks must be text blocks with a 'text' string")
        texts.append(block["text"])
    return "\n".join(texts)


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
    """What a block contributes to the prompt, after checking its required fields."""
    if kind == "text":
        text = _required(block, "text", str, where)
        if not text:
            raise invalid_request(f"{where}.text: text content blocks must be non-empty")
        return str(text)
    if kind == "tool_use":
        _required(block, "id", str, where)
        name = _required(block, "name", str, where)
        return f"{name}{structured.dumps(_required(block, 'input', Mapping, where))}"
    if kind == "tool_result":
        _required(block, "tool_use_id", str, where)
        return text_of(block.get("content"))
    if kind == "thinking":
        return str(_required(block, "thinking", str, where))
    return ""  # images, documents and server tool blocks add no text here


def _required(block: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    if name not in block:
        raise invalid_request(f"{where}.{name}: Field required")
    value = block[name]
    if not isinstance(value, kind):
        expected = "a valid string" if kind is str else "a valid dictionary"
        raise invalid_request(f"{where}.{name}: Input should be {expected}")
    return value
