"""What a reply says, whatever its mode: its text, its tool calls, its finish or stop reason; and what
the request asked for: a forced tool call, the tools' schemas, a structured output.

A whole reply and a stream of the same answer give the same text and calls: a stream's deltas are
joined, and a Responses stream is read from its final ``response.completed`` (or ``.incomplete`` /
``.failed``) event.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from mockserver.recording.conformance.shapes import CHAT, MESSAGES, RESPONSES, Event

TOOL_CALL_ITEMS = ("function_call", "custom_tool_call")
FINAL_RESPONSE_EVENTS = ("response.completed", "response.incomplete", "response.failed")
FORCED_SHOWN_CHARS = 80
VALIDATION_MESSAGE_CHARS = 160


@dataclass
class Said:
    texts: list[str] = field(default_factory=list)
    calls: list[tuple[Any, Any]] = field(default_factory=list)  # (tool name, arguments as sent: text or object)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def said(endpoint: str, stream: bool, body: Any, events: Sequence[Event]) -> Said:
    """The texts and tool calls of a reply (``body``) or of a stream (``events``)."""
    if endpoint == CHAT:
        return _chat_stream(events) if stream else _chat(body)
    if endpoint == RESPONSES:
        if stream:
            body = None
            for event in events:
                if _get(event.data, "type") in FINAL_RESPONSE_EVENTS:
                    body = event.data.get("response")
        return _responses(body)
    if endpoint == MESSAGES:
        return _blocks(_stream_blocks(events) if stream else _dicts(_get(body, "content")))
    return Said()


def _chat(body: Any) -> Said:
    out = Said()
    for choice in _dicts(_get(body, "choices")):
        message = choice.get("message") or {}
        if isinstance(message.get("content"), str):
            out.texts.append(message["content"])
        for call in _dicts(message.get("tool_calls")):
            function = call.get("function") or {}
            out.calls.append((function.get("name"), function.get("arguments")))
    return out


def _chat_stream(events: Sequence[Event]) -> Said:
    text: list[str] = []
    calls: dict[Any, dict[str, Any]] = {}
    for event in events:
        for choice in _dicts(_get(event.data, "choices")):
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for call in _dicts(delta.get("tool_calls")):
                slot = calls.setdefault(call.get("index", 0), {"name": None, "args": ""})
                function = call.get("function") or {}
                if function.get("name"):
                    slot["name"] = function["name"]
                if isinstance(function.get("arguments"), str):
                    slot["args"] += function["arguments"]
    return Said(["".join(text)], [(s["name"], s["args"]) for _, s in sorted(calls.items())])


def _responses(body: Any) -> Said:
    out = Said()
    for item in _dicts(_get(body, "output")):
        if item.get("type") == "message":
            out.texts += [p.get("text") or "" for p in _dicts(item.get("content")) if p.get("type") == "output_text"]
        elif item.get("type") in TOOL_CALL_ITEMS:
            out.calls.append((item.get("name"), item.get("arguments", item.get("input"))))
    return out


def _stream_blocks(events: Sequence[Event]) -> list[dict[str, Any]]:
    """A Messages stream's content blocks, each put together from its start, deltas and stop."""
    blocks: list[dict[str, Any]] = []
    open_blocks: dict[Any, dict[str, Any]] = {}
    for event in events:
        data = event.data
        kind = _get(data, "type")
        if kind == "content_block_start":
            open_blocks[data.get("index")] = dict(data.get("content_block") or {}, _json="")
        elif kind == "content_block_delta":
            block = open_blocks.get(data.get("index"))
            delta = data.get("delta") or {}
            if block is None:
                continue
            if delta.get("type") == "text_delta":
                block["text"] = (block.get("text") or "") + (delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                block["_json"] += delta.get("partial_json") or ""
        elif kind == "content_block_stop":
            block = open_blocks.pop(data.get("index"), None)
            if block is not None:
                if block.get("type") in ("tool_use", "server_tool_use") and block["_json"]:
                    try:
                        block["input"] = json.loads(block["_json"])
                    except json.JSONDecodeError:
                        block["input"] = block["_json"]
                blocks.append(block)
    return blocks


def _blocks(blocks: list[dict[str, Any]]) -> Said:
    out = Said()
    for block in blocks:
        if block.get("type") == "text":
            out.texts.append(block.get("text") or "")
        elif block.get("type") == "tool_use":
            out.calls.append((block.get("name"), block.get("input")))
    return out


def forced_tool_choice(request: dict[str, Any], endpoint: str) -> str | None:
    """The request's ``tool_choice``, shortened, when it forces a call of one of its tools; else None."""
    choice = request.get("tool_choice")
    if not request.get("tools") or choice is None:
        return None
    if endpoint in (CHAT, RESPONSES):
        if choice == "required":
            return "required"
        if isinstance(choice, dict):
            if choice.get("type") in ("function", "custom"):
                return json.dumps(choice, separators=(",", ":"))[:FORCED_SHOWN_CHARS]
            if (
                choice.get("type") == "allowed_tools"
                and (choice.get("allowed_tools") or choice).get("mode") == "required"
            ):
                return "allowed_tools required"
    elif endpoint == MESSAGES and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return json.dumps(choice, separators=(",", ":"))[:FORCED_SHOWN_CHARS]
    return None


def finish_reason(endpoint: str, stream: bool, body: Any, events: Sequence[Event]) -> Any:
    """Chat's ``finish_reason`` of the first choice, or Messages' ``stop_reason``; None elsewhere."""
    reason: Any = None
    if endpoint == CHAT:
        if not stream:
            return (_dicts(_get(body, "choices")) or [{}])[0].get("finish_reason")
        for event in events:
            for choice in _dicts(_get(event.data, "choices")):
                if choice.get("index", 0) == 0 and choice.get("finish_reason"):
                    reason = choice["finish_reason"]
    elif endpoint == MESSAGES:
        if not stream:
            return _get(body, "stop_reason")
        for event in events:
            if _get(event.data, "type") == "message_delta":
                reason = (event.data.get("delta") or {}).get("stop_reason") or reason
    return reason


def tool_schemas(request: dict[str, Any], endpoint: str) -> dict[Any, Any]:
    """``{tool name: its parameters' JSON schema}`` of the request's own (function) tools."""
    out: dict[Any, Any] = {}
    for tool in _dicts(request.get("tools")):
        if endpoint == CHAT and tool.get("type") == "function":
            function = tool.get("function") or {}
            out[function.get("name")] = function.get("parameters")
        elif endpoint == RESPONSES and tool.get("type") == "function":
            out[tool.get("name")] = tool.get("parameters")
        elif endpoint == MESSAGES and "input_schema" in tool:
            out[tool.get("name")] = tool.get("input_schema")
    return out


def structured_output(request: dict[str, Any], endpoint: str) -> tuple[str | None, Any]:
    """``("json_schema", schema)`` or ``("json_object", None)`` when the request asks for structured output."""
    if endpoint == CHAT:
        form = request.get("response_format") or {}
        if form.get("type") == "json_schema":
            return "json_schema", (form.get("json_schema") or {}).get("schema") or {}
    elif endpoint == RESPONSES:
        form = (request.get("text") or {}).get("format") or {}
        if form.get("type") == "json_schema":
            return "json_schema", form.get("schema") or {}
    elif endpoint == MESSAGES:
        form = (request.get("output_config") or {}).get("format") or request.get("output_format") or {}
        if form.get("type") == "json_schema":
            return "json_schema", form.get("schema") or {}
        return None, None
    else:
        return None, None
    return ("json_object", None) if form.get("type") == "json_object" else (None, None)


@cache
def _jsonschema() -> Any:
    """The ``jsonschema`` package (the ``conformance`` extra), or None where it is not installed."""
    try:
        return importlib.import_module("jsonschema")
    except ImportError:
        return None


def can_validate() -> bool:
    return _jsonschema() is not None


def schema_error(instance: Any, schema: Any) -> str | None:
    """Why ``instance`` does not fit ``schema``, or None when it does (or the schema cannot be read)."""
    jsonschema = _jsonschema()
    if jsonschema is None or schema is None:
        return None
    try:
        validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator(schema).validate(instance)
        return None
    except jsonschema.ValidationError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "(root)"
        return f"{exc.message[:VALIDATION_MESSAGE_CHARS]} at {where}"
    except Exception:  # a schema the validator cannot read or resolve says nothing of the reply
        return None
