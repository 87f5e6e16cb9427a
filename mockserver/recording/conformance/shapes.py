"""The shape of a reply: its JSON paths with their types, and for a stream, per event type.

A value flattens into ``{path: {JSON types}}`` for every node below the root. List indices collapse
to ``[]``; an object with a string ``type`` in a list, or under a stream event's ``item``,
``content_block``, ``delta`` or ``part``, is tagged with it: ``output[]<function_call>.arguments``,
so that fields of different item types are not mixed up. Value-shaped subtrees (a tool's
parameters, a schema, metadata, a ``tool_use`` block's input) are one opaque leaf: their keys are
the caller's, not the API's.

A stream is keyed by event type: the ``type`` of the event's data, else its SSE ``event:`` name; every
Chat chunk is ``chunk``. Each event type adds the pseudo path ``"TYPE ."``, and where the event has an
``event:`` line, ``"TYPE @event-line"`` (typed ``match`` when the line names the same type).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
EMBEDDINGS = "/v1/embeddings"
MESSAGES = "/v1/messages"
ENDPOINTS = (CHAT, RESPONSES, EMBEDDINGS, MESSAGES)

OPAQUE = frozenset(
    {"parameters", "input_schema", "output_schema", "schema", "metadata", "properties", "input", "json_schema",
     "logit_bias", "defs", "$defs", "definitions"}
)  # fmt: skip
DISCRIMINATED = frozenset({"item", "content_block", "delta", "part"})
CHAT_CHUNK = "chunk"
DONE_PATH = "[DONE] ."

Shape = dict[str, set[str]]


@dataclass(frozen=True)
class Event:
    """One server-sent event: its ``event:`` name (if any) and its data, parsed as JSON where it is."""

    name: str | None
    data: Any


JSON_TYPES: tuple[tuple[type | UnionType, str], ...] = (
    (bool, "boolean"), (int | float, "number"), (str, "string"), (list, "array"), (dict, "object")
)  # fmt: skip


def json_type(value: Any) -> str:
    """The JSON type of a parsed value (a boolean is not a number)."""
    if value is None:
        return "null"
    return next((name for kind, name in JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def flatten(value: Any) -> Shape:
    """``{path: {types}}`` of every node below the root of ``value``."""
    out: Shape = defaultdict(set)
    _flatten(value, "", out, None)
    return out


def _flatten(value: Any, prefix: str, out: Shape, key: str | None) -> None:
    if prefix:
        out[prefix].add(json_type(value))
    if isinstance(value, dict):
        if key in OPAQUE and prefix:
            return
        for k, child in value.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if k in DISCRIMINATED and isinstance(child, dict) and isinstance(child.get("type"), str):
                path += f"<{child['type']}>"
            _flatten(child, path, out, k)
    elif isinstance(value, list):
        for child in value:
            path = prefix + "[]"
            if isinstance(child, dict) and isinstance(child.get("type"), str):
                path += f"<{child['type']}>"
            _flatten(child, path, out, key)


def event_type(event: Event, endpoint: str) -> str:
    if endpoint == CHAT:
        return CHAT_CHUNK
    if isinstance(event.data, dict) and isinstance(event.data.get("type"), str):
        return str(event.data["type"])
    return event.name or "?"


def stream_shape(events: Iterable[Event], endpoint: str, done: bool = False) -> Shape:
    """``{"TYPE path": {types}}`` of a stream, with the pseudo paths of each event type."""
    out: Shape = defaultdict(set)
    for event in events:
        kind = event_type(event, endpoint)
        out[f"{kind} ."].add("event")
        if endpoint != CHAT and event.name:
            out[f"{kind} @event-line"].add("match" if event.name == kind else "other:" + event.name)
        if isinstance(event.data, dict | list):
            for path, types in flatten(event.data).items():
                out[f"{kind} {path}"] |= types
    if done:
        out[DONE_PATH].add("event")
    return out


def event_types(events: Iterable[Event], endpoint: str) -> set[str]:
    return {event_type(e, endpoint) for e in events}


def collapsed_sequence(events: Iterable[Event], endpoint: str) -> list[str]:
    """The event types in order, a run of the same type written once."""
    sequence: list[str] = []
    for event in events:
        kind = event_type(event, endpoint)
        if not sequence or sequence[-1] != kind:
            sequence.append(kind)
    return sequence


@dataclass(frozen=True)
class ParsedStream:
    events: list[Event]
    done: bool  # a ``data: [DONE]`` line came
    not_json: int  # data lines that are not JSON


def parse_sse(text: str) -> ParsedStream:
    """The events of a ``text/event-stream`` body, comments dropped, ``[DONE]`` noted."""
    events: list[Event] = []
    done, bad = False, 0
    for block in re.split(r"\r?\n\r?\n", text):
        name: str | None = None
        data: list[str] = []
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
        if not data and name is None:
            continue
        raw = "\n".join(data)
        if raw.strip() == "[DONE]":
            done = True
            continue
        parsed, ok = parse_data(raw)
        bad += 0 if ok else 1
        events.append(Event(name, parsed))
    return ParsedStream(events, done, bad)


def parse_data(raw: str) -> tuple[Any, bool]:
    """An event's data parsed as JSON, or the raw text and False."""
    try:
        return (json.loads(raw) if raw else None), True
    except json.JSONDecodeError:
        return raw, False


def events_from_pairs(recorded: Sequence[tuple[str | None, str]]) -> tuple[list[Event], bool]:
    """Recorded ``(event name, data)`` pairs as events, and whether a ``[DONE]`` line ended them."""
    events: list[Event] = []
    done = False
    for name, raw in recorded:
        if raw.strip() == "[DONE]":
            done = True
            continue
        events.append(Event(name, parse_data(raw)[0]))
    return events, done
