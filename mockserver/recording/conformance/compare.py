"""One pair's comparison: the recorded reply's shape against the generator's reply to the same request.

Coverage is the share of the recorded reply's paths (per event type for a stream) that the
generator's reply also has. A path of both with types that share nothing but ``null`` is a type
mismatch; one side ``null`` only is a note, not a mismatch. Beside the paths: the stream's event
types and their order (runs collapsed), whether a tool was called where the recording called one or
where ``tool_choice`` forced one, whether the arguments fit the tool's schema, and whether a
structured output parses and fits its schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mockserver.recording.conformance import replies
from mockserver.recording.conformance.pairs import OK, Pair
from mockserver.recording.conformance.shapes import (
    CHAT,
    MESSAGES,
    Event,
    Shape,
    collapsed_sequence,
    event_types,
    flatten,
    stream_shape,
)

SHOWN_CHARS = 100  # of a structured output that is not JSON
ARGUMENTS_SHOWN_CHARS = 80  # of tool-call arguments that are not JSON


@dataclass(frozen=True)
class Reply:
    """The generator's answer to a pair's request."""

    status: int | str | None  # the HTTP status; None when no answer came, "not-json" for an unreadable body
    error: str | None = None
    body: Any = None
    events: tuple[Event, ...] = ()
    done: bool = False
    not_json: int = 0  # stream data lines that are not JSON
    content_type: str = ""

    @property
    def answered(self) -> bool:
        return self.status == OK


Mismatch = tuple[str, str, str]  # (path, recorded types, generated types), types joined with |


@dataclass
class Comparison:
    real_paths: int
    covered: int
    missing: list[str]
    mismatch: list[Mismatch]
    nullnote: list[Mismatch]
    real_path_set: set[str]
    mock_paths: set[str]
    stream: bool = False
    same_sequence: bool = False
    real_sequence: list[str] = field(default_factory=list)
    mock_sequence: list[str] = field(default_factory=list)
    real_events: set[str] = field(default_factory=set)
    mock_events: set[str] = field(default_factory=set)
    not_json: int = 0
    content_type: str | None = None  # a stream answered with another content type
    real_tool_call: bool | None = None  # None: the request had no tools
    mock_tool_call: bool | None = None
    tool_args_invalid: list[str] = field(default_factory=list)
    forced: str | None = None  # the tool_choice that forced a call
    parallel_violation: str | None = None
    reason_mismatch: str | None = None
    schema_kind: str | None = None
    schema_check: str | None = None  # "ok", or why not

    @property
    def coverage(self) -> float:
        return 100.0 * self.covered / max(1, self.real_paths)

    @property
    def missing_events(self) -> list[str]:
        return sorted(self.real_events - self.mock_events)

    @property
    def extra_events(self) -> list[str]:
        return sorted(self.mock_events - self.real_events)


def shape_of(endpoint: str, stream: bool, body: Any, events: tuple[Event, ...], done: bool) -> Shape:
    return stream_shape(events, endpoint, done) if stream else flatten(body or {})


def compare_shapes(real: Shape, mock: Shape) -> tuple[list[str], list[Mismatch], list[Mismatch]]:
    """The recorded paths the generated shape lacks, the type mismatches, and the null-only differences."""
    missing = sorted(p for p in real if p not in mock)
    mismatch: list[Mismatch] = []
    nullnote: list[Mismatch] = []
    for path, real_types in real.items():
        if path not in mock:
            continue
        mock_types = mock[path]
        typed_real, typed_mock = real_types - {"null"}, mock_types - {"null"}
        row = (path, "|".join(sorted(real_types)), "|".join(sorted(mock_types)))
        if typed_real and typed_mock and not (typed_real & typed_mock):
            mismatch.append(row)
        elif bool(typed_real) != bool(typed_mock):
            nullnote.append(row)
    return missing, mismatch, nullnote


def compare(pair: Pair, reply: Reply) -> Comparison:
    endpoint, stream, request = pair.endpoint, pair.stream, pair.request
    real = shape_of(endpoint, stream, pair.response, pair.events, pair.done)
    mock = shape_of(endpoint, stream, reply.body, reply.events, reply.done)
    missing, mismatch, nullnote = compare_shapes(real, mock)
    out = Comparison(len(real), len(real) - len(missing), missing, mismatch, nullnote, set(real), set(mock))
    if stream:
        out.stream = True
        out.real_sequence = collapsed_sequence(pair.events, endpoint)
        out.mock_sequence = collapsed_sequence(reply.events, endpoint)
        out.same_sequence = out.real_sequence == out.mock_sequence
        out.real_events, out.mock_events = event_types(pair.events, endpoint), event_types(reply.events, endpoint)
        out.not_json = reply.not_json
        if "event-stream" not in reply.content_type:
            out.content_type = reply.content_type
    said = replies.said(endpoint, stream, reply.body, reply.events)
    if request.get("tools"):
        out.real_tool_call = bool(replies.said(endpoint, stream, pair.response, pair.events).calls)
        out.mock_tool_call = bool(said.calls)
        out.tool_args_invalid = _invalid_arguments(said.calls, replies.tool_schemas(request, endpoint))
    out.forced = replies.forced_tool_choice(request, endpoint)
    if out.forced:
        out.mock_tool_call = bool(said.calls)
    out.parallel_violation = _parallel_violation(request, endpoint, len(said.calls))
    out.reason_mismatch = _reason_mismatch(endpoint, replies.finish_reason(endpoint, stream, reply.body, reply.events),
                                           len(said.calls))  # fmt: skip
    kind, schema = replies.structured_output(request, endpoint)
    if kind and not said.calls:
        text = "".join(said.texts)
        out.schema_kind = kind
        try:
            instance = json.loads(text)
        except json.JSONDecodeError:
            out.schema_check = f"not JSON: {text[:SHOWN_CHARS]!r}"
        else:
            error = replies.schema_error(instance, schema) if kind == "json_schema" else None
            out.schema_check = error or "ok"
    return out


def _invalid_arguments(calls: list[tuple[Any, Any]], schemas: dict[Any, Any]) -> list[str]:
    bad = []
    for name, arguments in calls:
        if name not in schemas:
            if schemas:
                bad.append(f"{name}: not a tool of the request")
            continue
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                bad.append(f"{name}: arguments are not JSON: {arguments[:ARGUMENTS_SHOWN_CHARS]!r}")
                continue
        error = replies.schema_error(arguments, schemas[name])
        if error:
            bad.append(f"{name}: {error}")
    return bad


def _parallel_violation(request: dict[str, Any], endpoint: str, calls: int) -> str | None:
    choice = request.get("tool_choice")
    one_only = request.get("parallel_tool_calls") is False or (
        endpoint == MESSAGES and isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True
    )
    return f"{calls} tool calls" if one_only and calls > 1 else None


def _reason_mismatch(endpoint: str, reason: Any, calls: int) -> str | None:
    if reason is None:
        return None
    if endpoint == CHAT:
        if calls and reason not in ("tool_calls", "stop"):
            return f"finish_reason {reason!r} with {calls} tool calls"
        if not calls and reason == "tool_calls":
            return "finish_reason 'tool_calls' without a tool call"
    elif endpoint == MESSAGES:
        if calls and reason != "tool_use":
            return f"stop_reason {reason!r} with {calls} tool_use blocks"
        if not calls and reason == "tool_use":
            return "stop_reason 'tool_use' without a tool_use block"
    return None
