"""The paced event stream of one Message, as Anthropic's API sends it and the SDKs' stream
accumulators rebuild it (``anthropic.lib.streaming``, ``MessageStream`` in Node)::

    message_start         the Message with empty content, null stop_reason, the input usage
    content_block_start   each block, empty (a thinking block with an empty signature)
    ping                  once, after the first block starts
    content_block_delta   text_delta / thinking_delta / input_json_delta, paced on the schedule
    content_block_delta   signature_delta, closing a thinking block
    content_block_stop
    message_delta         stop_reason, stop_sequence and the final usage
    message_stop

Every event carries its ``event:`` line (the SDKs skip events without one). Thinking tokens
come first on the schedule, then the answer's, so extended thinking delays the text exactly
as reasoning does on the OpenAI side. Like the OpenAI streams, the events are planned as
:data:`~mockserver.engine.streaming.Item` s: each frame is encoded, then its deadline is
yielded, then the frame, and the server's stream scheduler plays them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockserver.api.anthropic.messages import Block, MessagePlan, message_body
from mockserver.engine.pacing import Pacer
from mockserver.engine.streaming import Item, typed_event

PING = typed_event({"type": "ping"})
MESSAGE_STOP = typed_event({"type": "message_stop"})
DELTA_FIELD = {  # the delta type, and its field, that grows each kind of block
    "text": ("text_delta", "text"),
    "thinking": ("thinking_delta", "thinking"),
    "tool_use": ("input_json_delta", "partial_json"),
}


def stream_events(plan: MessagePlan, pacer: Pacer, *, per_chunk: int) -> Iterator[Item]:
    """The events of a paced stream, from ``message_start`` to ``message_stop``, each after its deadline."""
    opening = typed_event(message_start(message_body(plan), plan.usage(output_tokens=min(1, plan.output_tokens))))
    if plan.output_tokens:
        yield pacer.token_due(0)
    yield opening
    offset = 0
    for index, block in enumerate(plan.blocks):
        yield typed_event({"type": "content_block_start", "index": index, "content_block": block.opening()})
        if index == 0:
            yield PING
        for lo, hi, due in pacer.chunks(offset, offset + len(block.text), per_chunk):
            frame = _delta(index, block, block.text.piece(lo - offset, hi - offset))
            yield due
            yield frame
        if block.kind == "thinking":
            yield typed_event(signature_delta(index, block.signature))
        yield typed_event({"type": "content_block_stop", "index": index})
        offset += len(block.text)
    closing = typed_event(message_delta(plan.stop_reason, plan.stop_sequence, plan.usage()))
    yield pacer.end
    yield closing
    yield MESSAGE_STOP


def message_start(message: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    """``message_start``: the Message with no content and no stop reason yet."""
    opened = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "stop_details": None}
    return {"type": "message_start", "message": {**opened, "usage": usage}}


def block_delta(index: int, kind: str, piece: str) -> dict[str, Any]:
    """The ``content_block_delta`` that adds ``piece`` to a ``text``, ``thinking`` or ``tool_use`` block."""
    delta_type, field = DELTA_FIELD[kind]
    return {"type": "content_block_delta", "index": index, "delta": {"type": delta_type, field: piece}}


def signature_delta(index: int, signature: str) -> dict[str, Any]:
    """The ``content_block_delta`` that closes a thinking block with its signature."""
    return {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}


def message_delta(stop_reason: str | None, stop_sequence: str | None, usage: dict[str, Any]) -> dict[str, Any]:
    """``message_delta``: the stop reason and the final usage (its counts: the rest stays from ``message_start``)."""
    counts = {k: v for k, v in usage.items() if k not in ("service_tier", "speed", "cache_creation")}
    delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence, "stop_details": None}
    return {"type": "message_delta", "delta": delta, "usage": counts}


def _delta(index: int, block: Block, piece: str) -> bytes:
    return typed_event(block_delta(index, block.kind, piece))
