"""The paced event stream of one Message, as Anthropic's API sends it and the SDKs' stream
accumulators rebuild it (``anthropic.lib.streaming``, ``MessageStream`` in Node)::

    message_start         the Message with empty content, null stop_reason, the input usage
    content_block_start   each block, empty (a thinking block with an empty signature); a server
                          tool's result block and redacted thinking come whole
    ping                  once, after the first block starts
    content_block_delta   citations_delta, opening a text block that cites web results
    content_block_delta   text_delta / thinking_delta / input_json_delta, paced on the schedule
    content_block_delta   input_json_delta with a server tool's whole input; compaction_delta with
                          a compaction block's summary
    content_block_delta   signature_delta, closing a thinking block
    content_block_stop
    message_delta         stop_reason, stop_sequence, the container, and the final usage
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
from mockserver.engine import structured
from mockserver.engine.pacing import Pacer
from mockserver.engine.streaming import Item, typed_event

PING = typed_event({"type": "ping"})
_DELTA_ONLY = ("container", "context_management")  # Message fields a stream sends with message_delta
_USAGE_AT_START = ("service_tier", "speed", "cache_creation", "inference_geo")
_USAGE_AT_END = ("output_tokens_details", "server_tool_use", "iterations")
MESSAGE_STOP = typed_event({"type": "message_stop"})
DELTA_FIELD = {  # the delta type, and its field, that grows each kind of block
    "text": ("text_delta", "text"),
    "thinking": ("thinking_delta", "thinking"),
    "tool_use": ("input_json_delta", "partial_json"),
}


def stream_events(plan: MessagePlan, pacer: Pacer, *, per_chunk: int) -> Iterator[Item]:
    """The events of a paced stream, from ``message_start`` to ``message_stop``, each after its deadline.

    Each frame is encoded before its deadline is yielded, so it is ready when it falls due; except the
    first deadline, which comes before anything is encoded (as Chat Completions' ``stream_chunks`` does).
    The scheduler pulls a stream as it opens, while the other requests of a burst wait for their heads:
    ``message_start`` and the first block's opening are made when the first token falls due, and go out
    in that tick, at its deadline as ever."""
    if any(len(block.text) for block in plan.blocks):
        yield pacer.token_due(0)
    opened = message_body(plan, content=False)
    yield typed_event(message_start(opened, plan.usage(output_tokens=min(1, plan.output_tokens))))
    offset = 0
    for index, block in enumerate(plan.blocks):
        if block.kind == "redacted_thinking":  # sent whole, once the thinking it stands for is done
            offset += len(block.text)
            if offset:
                yield pacer.token_due(offset - 1)
        yield typed_event({"type": "content_block_start", "index": index, "content_block": block.opening()})
        if index == 0:
            yield PING
        for delta in _whole_deltas(block):
            yield typed_event({"type": "content_block_delta", "index": index, "delta": delta})
        paced = 0 if block.kind == "redacted_thinking" or block.omitted else len(block.text)
        for lo, hi, due in pacer.chunks(offset, offset + paced, per_chunk):
            frame = _delta(index, block, block.text.piece(lo - offset, hi - offset))
            yield due
            yield frame
        if block.omitted:  # the thinking is not shown: its signature comes once it is done
            offset += len(block.text)
            paced = 0
            yield pacer.token_due(offset - 1)
        if block.kind == "thinking":
            yield typed_event(signature_delta(index, block.signature))
        yield typed_event({"type": "content_block_stop", "index": index})
        offset += paced
    closing = typed_event(message_delta(plan.stop_reason, plan.stop_sequence, plan.usage(), plan))
    yield pacer.end
    yield closing
    yield MESSAGE_STOP


def message_start(message: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    """``message_start``: the Message with no content and no stop reason yet; its usage has the input's
    counts (what the output is made of comes with ``message_delta``)."""
    opened = {k: v for k, v in message.items() if k not in _DELTA_ONLY}
    opened.update(content=[], stop_reason=None, stop_sequence=None, stop_details=None)
    started = {k: v for k, v in usage.items() if k not in _USAGE_AT_END}
    return {"type": "message_start", "message": {**opened, "usage": started}}


def block_delta(index: int, kind: str, piece: str) -> dict[str, Any]:
    """The ``content_block_delta`` that adds ``piece`` to a ``text``, ``thinking`` or ``tool_use`` block."""
    delta_type, field = DELTA_FIELD[kind]
    return {"type": "content_block_delta", "index": index, "delta": {"type": delta_type, field: piece}}


def signature_delta(index: int, signature: str) -> dict[str, Any]:
    """The ``content_block_delta`` that closes a thinking block with its signature."""
    return {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}


def message_delta(
    stop_reason: str | None, stop_sequence: str | None, usage: dict[str, Any], plan: MessagePlan | None = None
) -> dict[str, Any]:
    """``message_delta``: the stop reason, the container code execution used, and the final usage (its
    counts: the rest stays from ``message_start``); ``context_management`` when the Message compacted."""
    counts = {k: v for k, v in usage.items() if k not in _USAGE_AT_START}
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": stop_sequence, "stop_details": None}
    event: dict[str, Any] = {"type": "message_delta", "delta": delta, "usage": counts}
    if plan is not None and plan.container is not None:
        delta["container"] = dict(plan.container)
    if plan is not None and (plan.compacted is not None or plan.managed):
        event["context_management"] = {"applied_edits": []}
    return event


def _whole_deltas(block: Block) -> list[dict[str, Any]]:
    """The deltas a block gets at once, outside the schedule: the citations of a cited text block, a
    server tool's input, a compaction's summary."""
    if block.citations:
        return [{"type": "citations_delta", "citation": dict(c)} for c in block.citations]
    if block.kind == "server_tool_use":
        return [{"type": "input_json_delta", "partial_json": structured.dumps(block.payload) if block.payload else ""}]
    if block.kind == "compaction":
        return [{"type": "compaction_delta", "content": (block.payload or {}).get("content")}]
    return []


def _delta(index: int, block: Block, piece: str) -> bytes:
    return typed_event(block_delta(index, block.kind, piece))
