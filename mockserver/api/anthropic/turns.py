"""Reading a Messages request's conversation: ``system`` and the ``messages`` content blocks.

Each block is checked where the live API checks it, and refused with a message naming its
place (``messages.1.content.0.text: Field required``). The conversation becomes the
``(kind, text)`` items the shared layers read: a user's text, an assistant's text and tool
calls, and ``tool`` for each ``tool_result``, which tells the reply planner that the model has
its answer and should reply in text. A ``tool_result`` must answer a ``tool_use`` of the
turn just before it, and every ``tool_use`` of an earlier turn must be answered. Consecutive
messages of one role are one turn (the live API merges them); a ``system`` message may come
in the middle of the conversation, with text or a ``tool_addition`` block that makes a deferred
tool available. The blocks of server tools (``server_tool_use`` and its result) are read back for
the turn they belong to: a turn that paused (``pause_turn``) continues where it stopped.
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

CITED_CHARS = 150  # the cited text an answer quotes from a document
MESSAGES_PER_TURN = 256  # messages read between two turns of the event loop (well under a millisecond)
USER_BLOCKS = {"text", "image", "document", "tool_result", "search_result", "container_upload"}
SERVER_RESULTS = {
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "advisor_tool_result",
}
ASSISTANT_BLOCKS = {
    "text",
    "tool_use",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "compaction",
    *SERVER_RESULTS,
}
SYSTEM_BLOCKS = {"text", "tool_addition"}  # a system message in the middle of the conversation
ROLE_BLOCKS = {"user": USER_BLOCKS, "assistant": ASSISTANT_BLOCKS, "system": SYSTEM_BLOCKS}


@dataclass
class Turn:
    """What the current turn (since the latest user text) holds: the server tools it ran (a turn that
    paused is sent back to continue), whether a tool result answers it, and the tools added to it."""

    server: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # server_tool_use (id, name, input)
    results: set[str] = field(default_factory=set)  # the server_tool_use ids a result block answers
    answered: bool = False
    added: list[str] = field(default_factory=list)  # tools a tool_addition or a tool result's tool_reference loaded
    called: set[str] = field(default_factory=set)  # the custom tools the turn called
    last_role: str = "user"


@dataclass
class Conversation:
    items: list[ConversationItem] = field(default_factory=list)  # (user | assistant | tool | system, text)
    texts: list[str] = field(default_factory=list)  # one per message (the system prompt first): input tokens
    user_texts: list[str] = field(default_factory=list)  # what the user wrote: the reply's language and length
    referenced: set[str] = field(default_factory=set)  # deferred tools a tool search or tool_addition loaded
    turn: Turn = field(default_factory=Turn)
    documents: int = 0  # the document blocks read: a citation names its document by this index
    citable: list[dict[str, Any]] = field(default_factory=list)  # a citation of each document that enables them


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
    prompt's first) once it is checked, so that a caller can let the event loop run between messages.

    Consecutive messages of one role are one turn, as the live API merges them; a ``system`` message in
    the middle of the conversation (instructions, or a ``tool_addition`` that makes a deferred tool
    available) belongs to no turn."""
    if not messages:
        raise invalid_request("messages: at least one message is required")
    if system:
        conversation.texts.append(system if isinstance(system, str) else _system_text(system))
        yield conversation.texts[-1]
    check = _Pairing()
    for i, message in enumerate(messages):
        blocks = [{"type": "text", "text": message.content}] if isinstance(message.content, str) else message.content
        if isinstance(message.content, str) and not message.content and i < len(messages) - 1:
            raise invalid_request(f"messages.{i}: all messages must have non-empty content")
        allowed = ROLE_BLOCKS[message.role]
        parts: list[str] = []
        if message.role != "system":
            check.turn(i, message.role)
            if message.role == "user" and not any(_is_result(block) for block in blocks):
                conversation.turn = Turn()  # a new turn: what the user asks, not a tool's result
            conversation.turn.last_role = message.role
        for j, block in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            kind = _block_type(block, where, allowed)
            text = _block_text(block, kind, where)
            parts.append(text)
            _note(conversation, check, message.role, block, kind, text, i)
        conversation.texts.append("".join(parts))
        yield conversation.texts[-1]
    check.turn(len(messages), "end")


def _note(
    conversation: Conversation, check: _Pairing, role: str, block: Mapping[str, Any], kind: str, text: str, i: int
) -> None:
    """Add one checked block to what the planner reads."""
    turn = conversation.turn
    if kind == "tool_result":
        check.answered.setdefault(block["tool_use_id"], i)
        conversation.items.append(("tool", text))
        turn.answered = True
        turn.added.extend(_loaded(conversation, block.get("content")))  # a client-side tool search's result
    elif kind == "tool_use":
        check.calls[block["id"]] = i
        conversation.items.append(("assistant", text))
        turn.called.add(block["name"])
    elif kind == "text":
        conversation.items.append((role, text))
        if role == "user":
            conversation.user_texts.append(text)
            conversation.turn = Turn()  # what the user asks next starts a turn, after any tool result
    elif kind == "server_tool_use":
        given = block.get("input")
        turn.server.append(
            (str(block.get("id")), str(block.get("name")), dict(given) if isinstance(given, Mapping) else {})
        )
    elif kind.endswith("_tool_result"):
        turn.results.add(str(block.get("tool_use_id")))
        content = block.get("content")
        _loaded(conversation, content.get("tool_references") if isinstance(content, Mapping) else None)
    elif kind == "document":
        citation = _document_citation(block, conversation.documents, text)
        conversation.documents += 1
        if citation is not None:
            conversation.citable.append(citation)
    elif kind == "tool_addition":
        tool = block.get("tool")
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str):
            conversation.referenced.add(name)
            turn.added.append(name)


def _loaded(conversation: Conversation, references: Any) -> list[str]:
    """The deferred tools that ``tool_reference`` blocks load, noted as loaded."""
    names = []
    for reference in references if isinstance(references, list) else []:
        if isinstance(reference, Mapping) and reference.get("type") == "tool_reference":
            name = reference.get("tool_name")
            if isinstance(name, str):
                conversation.referenced.add(name)
                names.append(name)
    return names


def _document_citation(block: Mapping[str, Any], index: int, text: str) -> dict[str, Any] | None:
    """How an answer cites a document sent with ``citations: {"enabled": true}``: by characters for a
    plain-text one, by pages for a PDF, by blocks for custom content; None when citations are off."""
    enabled = block.get("citations")
    if not isinstance(enabled, Mapping) or enabled.get("enabled") is not True:
        return None
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    title = block.get("title")
    cited = {
        "cited_text": text[:CITED_CHARS],
        "document_index": index,
        "document_title": title if isinstance(title, str) else None,
    }
    if kind == "text":
        return {"type": "char_location", **cited, "start_char_index": 0, "end_char_index": len(text[:CITED_CHARS])}
    if kind == "content":
        return {"type": "content_block_location", **cited, "start_block_index": 0, "end_block_index": 1}
    return {"type": "page_location", **cited, "start_page_number": 1, "end_page_number": 2}


def _is_result(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


class _Pairing:
    """The live API's check that each ``tool_use`` is answered by a ``tool_result`` in the next turn,
    and each ``tool_result`` answers one of the turn before; a turn is a run of messages of one role."""

    def __init__(self) -> None:
        self.role: str | None = None
        self.calls: dict[str, int] = {}  # tool_use id: the message it is in, for the current assistant turn
        self.answered: dict[str, int] = {}  # tool_use_id: the message it is in, for the current user turn
        self.pending: dict[str, int] = {}  # the previous assistant turn's calls

    def turn(self, index: int, role: str) -> None:
        """The message ``index`` has ``role``: close the turn it ends, if it starts a new one."""
        if role == self.role:
            return
        if self.role == "user":
            self._close_user()
        elif self.role == "assistant":
            self.pending, self.calls = self.calls, {}
            if role == "end":
                self.pending = {}
        self.role = role

    def _close_user(self) -> None:
        answered, pending = self.answered, self.pending
        unexpected = sorted(set(answered) - set(pending))
        if unexpected:
            raise invalid_request(
                f"messages.{answered[unexpected[0]]}.content: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {', '.join(unexpected)}. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message."
            )
        missing = sorted(set(pending) - set(answered))
        if missing:
            raise invalid_request(
                f"messages.{max(pending.values())}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
        self.answered, self.pending = {}, {}


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
    elif kind == "tool_addition":
        _required(block, "tool", Mapping, where)
    return block_text(block)


def _required(block: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    if name not in block:
        raise invalid_request(f"{where}.{name}: Field required")
    value = block[name]
    if not isinstance(value, kind):
        expected = "a valid string" if kind is str else "a valid dictionary"
        raise invalid_request(f"{where}.{name}: Input should be {expected}")
    return value
