"""Checks on a Chat Completions request that its schema alone cannot make, with the live wording.

- ``stream_options`` is only allowed with ``stream: true``.
- The history must pair tool calls and tool results: every ``tool`` message carries a
  ``tool_call_id`` naming a call of the assistant message right before the run of tool
  messages it belongs to, and every such call gets its result. (The shape of
  ``tool_calls`` itself, an array of objects, is checked by the schema.)
"""

from __future__ import annotations

from collections.abc import Sequence

from mockserver import errors
from mockserver.api.openai.schemas import ChatCompletionRequest, ChatMessage


def check_request(body: ChatCompletionRequest) -> None:
    if body.stream_options is not None and not body.stream:
        raise errors.stream_options_without_stream()
    check_history(body.messages)


def check_history(messages: Sequence[ChatMessage]) -> None:
    pending: list[str] = []  # calls of the last assistant message that have no result yet
    caller: int | None = None  # index of that assistant message, while its results may follow
    for index, message in enumerate(messages):
        role = message.role
        if role == "tool":
            if caller is None:
                raise errors.tool_message_without_tool_calls(index)
            if message.tool_call_id is None:
                raise errors.tool_call_id_missing(index)
            if not any(call.id == message.tool_call_id for call in messages[caller].tool_calls or []):
                raise errors.tool_call_id_not_found(index, message.tool_call_id)
            if message.tool_call_id in pending:
                pending.remove(message.tool_call_id)
            continue
        if pending and caller is not None:
            raise errors.tool_calls_unanswered(caller, pending)
        if role == "assistant" and message.tool_calls:
            caller, pending = index, [call.id for call in message.tool_calls]
        elif caller is not None:  # a message of no calls: no list made for it (most messages)
            caller, pending = None, []
    if pending and caller is not None:
        raise errors.tool_calls_unanswered(caller, pending)
