"""A recorded response that was not streamed, as the typed event stream the Responses API sends for it.

A replayed request that asks for a stream, matching a recording made without one, gets the events
a streamed response has (WIRE.md §5.3), numbered by :func:`~mockserver.api.openai.responses.event_stream.numbered`
as a generated stream is, built from the recorded response:

- ``response.created`` and ``response.in_progress``: the response with no output and no usage yet;
- per output item, ``response.output_item.added`` (the item emptied of what its deltas add), then:
  a ``message``: per content part ``response.content_part.added``, its ``output_text.delta`` (or
  ``refusal.delta``) events, ``output_text.done`` (``refusal.done``), ``content_part.done``;
  a ``function_call``: ``function_call_arguments.delta`` events and ``.done``;
  a ``reasoning`` item: per summary part ``reasoning_summary_part.added``, its
  ``reasoning_summary_text.delta`` events, ``.done`` and ``reasoning_summary_part.done``;
  any other item (a web search, a file search): no delta;
  and ``response.output_item.done`` with the whole item;
- ``response.completed`` (``.incomplete``, ``.failed``: the recorded status) with the whole response.

The text is split into token pieces (:func:`mockserver.replies.recorded_shapes.pieces`); the replay paces them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockserver.api.openai.responses.event_stream import numbered
from mockserver.replies.recorded_shapes import Event, payload_event, pieces

Payload = Callable[..., dict[str, Any]]
_ENDS = ("completed", "incomplete", "failed")


def stream_of_response(response: dict[str, Any]) -> list[Event]:
    """The events of a stream that ends with ``response``, item by item."""
    payload = numbered()
    opened = {**response, "status": "in_progress", "output": [], "usage": None}
    opened.update({k: None for k in ("completed_at", "incomplete_details", "error") if k in response})
    payloads = [payload("response.created", response=opened), payload("response.in_progress", response=opened)]
    for index, item in enumerate(response.get("output") or []):
        payloads += _item(payload, index, item)
    status = response.get("status")
    payloads.append(payload(f"response.{status if status in _ENDS else 'completed'}", response=response))
    return [payload_event(p) for p in payloads]


def _item(payload: Payload, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    kind = item.get("type")
    where = {"item_id": item.get("id"), "output_index": index}
    opening = _OPENINGS[kind](item) if kind in _OPENINGS else item
    added = payload("response.output_item.added", output_index=index, item=opening)
    if kind == "message":
        middle = _message_parts(payload, where, item)
    elif kind == "function_call":
        arguments = str(item.get("arguments") or "")
        middle = [payload("response.function_call_arguments.delta", **where, delta=p) for p in pieces(arguments)]
        middle.append(payload("response.function_call_arguments.done", **where, arguments=arguments))
    elif kind == "reasoning":
        middle = _summary_parts(payload, where, item)
    else:
        middle = []
    return [added, *middle, payload("response.output_item.done", output_index=index, item=item)]


# Each kind of item as ``response.output_item.added`` shows it: without what its deltas will add.
_OPENINGS: dict[Any, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "message": lambda item: {**item, "status": "in_progress", "content": []},
    "function_call": lambda item: {**item, "status": "in_progress", "arguments": ""},
    "reasoning": lambda item: {**item, "summary": []},
}


def _message_parts(payload: Payload, where: dict[str, Any], item: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    for content_index, part in enumerate(item.get("content") or []):
        at = {**where, "content_index": content_index}
        field = "refusal" if part.get("type") == "refusal" else "text"
        name = "refusal" if field == "refusal" else "output_text"
        text = str(part.get(field) or "")
        extra: dict[str, Any] = {} if field == "refusal" else {"logprobs": []}
        events.append(payload("response.content_part.added", **at, part={**part, field: ""}))
        events += [payload(f"response.{name}.delta", **at, delta=piece, **extra) for piece in pieces(text)]
        events.append(payload(f"response.{name}.done", **at, **{field: text}, **extra))
        events.append(payload("response.content_part.done", **at, part=part))
    return events


def _summary_parts(payload: Payload, where: dict[str, Any], item: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    for summary_index, part in enumerate(item.get("summary") or []):
        at = {**where, "summary_index": summary_index}
        text = str(part.get("text") or "")
        events.append(payload("response.reasoning_summary_part.added", **at, part={**part, "text": ""}))
        events += [payload("response.reasoning_summary_text.delta", **at, delta=piece) for piece in pieces(text)]
        events.append(payload("response.reasoning_summary_text.done", **at, text=text))
        events.append(payload("response.reasoning_summary_part.done", **at, part=part))
    return events
