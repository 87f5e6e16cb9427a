"""A recorded Message that was not streamed, as the stream Anthropic sends for it.

A replayed request that asks for a stream, matching a recording made without one, gets the events
:mod:`mockserver.api.anthropic.event_stream` frames for a generated Message, built from the recorded
Message: ``message_start`` (its id, model and input usage), each content block's
``content_block_start`` (emptied of what its deltas will add), ``ping`` after the first, its deltas
(``text_delta``, ``thinking_delta`` then ``signature_delta``, ``input_json_delta`` for ``tool_use``
and ``server_tool_use``), ``content_block_stop``, then ``message_delta`` (the stop reason and
usage) and ``message_stop``. A block of another kind (``redacted_thinking``, a tool result) starts
whole and has no delta, as on the live API. The text is split into token pieces
(:func:`mockserver.replies.recorded_shapes.pieces`); the replay paces them.
"""

from __future__ import annotations

from typing import Any

import orjson

from mockserver.api.anthropic.event_stream import (
    block_delta,
    message_delta,
    message_start,
    signature_delta,
)
from mockserver.replies.recorded_shapes import Event, payload_event, pieces

_GROWN_FIELD = {"text": "text", "thinking": "thinking", "tool_use": "input", "server_tool_use": "input"}


def stream_of_message(message: dict[str, Any]) -> list[Event]:
    """The events of a stream that rebuilds ``message``, block by block."""
    usage = dict(message.get("usage") or {})
    head = {k: v for k, v in message.items() if k not in ("content", "usage", "stop_reason", "stop_sequence")}
    payloads = [message_start(head, {**usage, "output_tokens": min(1, usage.get("output_tokens") or 0)})]
    for index, block in enumerate(message.get("content") or []):
        started, *rest = _block(index, block)
        payloads += [started, {"type": "ping"}, *rest] if index == 0 else [started, *rest]
    payloads.append(message_delta(message.get("stop_reason"), message.get("stop_sequence"), usage))
    payloads.append({"type": "message_stop"})
    return [payload_event(p) for p in payloads]


def _block(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block.get("type", "")
    field = _GROWN_FIELD.get(kind)
    if field is None:
        return [{"type": "content_block_start", "index": index, "content_block": block}, _stop(index)]
    grown = block.get(field)
    opening = {**block, field: {} if field == "input" else ""}
    if kind == "thinking":
        opening["signature"] = ""
    text = orjson.dumps(grown).decode() if field == "input" else str(grown or "")
    delta_kind = "tool_use" if field == "input" else kind
    events = [{"type": "content_block_start", "index": index, "content_block": opening}]
    events += [block_delta(index, delta_kind, piece) for piece in pieces(text)]
    if kind == "thinking":
        events.append(signature_delta(index, block.get("signature", "")))
    return [*events, _stop(index)]


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}
