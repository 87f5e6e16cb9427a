"""Either shape of a recorded reply: a recorded stream as its API's whole body, a recorded body as a stream.

- Chat Completions: the chunks are folded into a ``chat.completion`` (content, refusal and tool calls
  joined per choice, the finish reason, the usage chunk); a completion becomes, per choice, a role
  delta, its content, refusal and tool-call arguments a token at a time, a finish chunk, and the
  usage chunk.
- Responses and Messages: a recorded body becomes the stream its API family frames
  (``mockserver.api.openai.responses.replayed``, ``mockserver.api.anthropic.replayed``), which the
  route hands over as ``family``; their text is cut into token :func:`pieces`.
- Responses: the body is the ``response`` of the stream's last ``response.completed`` (or
  ``.incomplete`` / ``.failed``) event, which holds the whole response.
- Messages: ``message_start``'s message, its content blocks rebuilt from their deltas, and
  ``message_delta``'s stop reason and usage.

Each event is ``(name, data)``: the ``event:`` line (or None) and the ``data:`` text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from mockserver import errors
from mockserver.engine import tokens

Event = tuple[str | None, str]
BodyStream = Callable[[dict[str, Any]], list[Event]]  # an API family's stream of a recorded body
_RESPONSE_ENDS = ("response.completed", "response.incomplete", "response.failed")


def body_of_stream(api: str, events: Sequence[Event]) -> dict[str, Any]:
    payloads = [orjson.loads(data) for _, data in events if data and data != "[DONE]"]
    if api == "chat.completions":
        return _chat_body(payloads)
    if api == "responses":
        for payload in reversed(payloads):
            if payload.get("type") in _RESPONSE_ENDS:
                response: dict[str, Any] = payload["response"]
                return response
        raise _unshaped("the recorded Responses stream has no response.completed event")
    if api == "messages":
        return _message_body(payloads)
    raise _unshaped(f"a recorded {api} stream cannot answer a request that is not streamed")


def stream_of_body(api: str, body: Any, include_usage: bool = True, family: BodyStream | None = None) -> list[Event]:
    if not isinstance(body, dict) or (api != "chat.completions" and family is None):
        raise _unshaped(
            f"the recording of this {api} request is not streamed, and its reply cannot be streamed; "
            "record the exchange streamed"
        )
    if api != "chat.completions":
        assert family is not None
        return family(body)
    base = {k: body[k] for k in ("id", "created", "model", "service_tier", "system_fingerprint") if k in body}
    base["object"] = "chat.completion.chunk"
    chunks: list[dict[str, Any]] = []
    for choice in body.get("choices", []):
        index = choice.get("index", 0)
        for delta in _chat_deltas(dict(choice.get("message") or {})):
            chunks.append({**base, "choices": [{"index": index, "delta": delta, "finish_reason": None}]})
        chunks.append(
            {**base, "choices": [{"index": index, "delta": {}, "finish_reason": choice.get("finish_reason")}]}
        )
    if include_usage and body.get("usage") is not None:
        chunks.append({**base, "choices": [], "usage": body["usage"]})
    events: list[Event] = [(None, orjson.dumps(c).decode()) for c in chunks]
    return [*events, (None, "[DONE]")]


def _chat_deltas(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A recorded message as the deltas of a Chat stream: the role (with the fields not streamed, such
    as ``annotations``), then its content, refusal and each tool call's arguments a token at a time (a
    call's first delta has its id and name)."""
    streamed = ("role", "content", "refusal", "tool_calls")
    rest = {k: v for k, v in message.items() if k not in streamed and v is not None}  # annotations, audio
    content = "" if message.get("content") else message.get("content")
    deltas: list[dict[str, Any]] = [{"role": message.get("role", "assistant"), "content": content, **rest}]
    for key in ("content", "refusal"):
        deltas += [{key: piece} for piece in pieces(message.get(key) or "")]
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        opening = {**call, "index": i, "function": {**function, "arguments": ""}}
        deltas.append({"tool_calls": [opening]})
        arguments = pieces(function.get("arguments") or "")
        deltas += [{"tool_calls": [{"index": i, "function": {"arguments": piece}}]} for piece in arguments]
    return deltas


def pieces(text: str) -> list[str]:
    """``text`` as the pieces of a stream's deltas, one token each (their concatenation is ``text``)."""
    return [piece for piece in tokens.split(text) if piece]


def payload_event(payload: dict[str, Any]) -> Event:
    """A typed event (its ``event:`` line is its ``type``) as a recording holds it."""
    return payload["type"], orjson.dumps(payload).decode()


def _chat_body(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    if not chunks:
        raise _unshaped("the recorded Chat Completions stream has no chunks")
    first = chunks[0]
    body: dict[str, Any] = {k: first[k] for k in ("id", "created", "model") if k in first}
    body["object"] = "chat.completion"
    choices: dict[int, dict[str, Any]] = {}
    usage = None
    for chunk in chunks:
        for key in ("service_tier", "system_fingerprint"):
            if chunk.get(key) is not None:
                body[key] = chunk[key]
        usage = chunk.get("usage") or usage
        for part in chunk.get("choices") or []:
            choice = choices.setdefault(
                part.get("index", 0),
                {"index": part.get("index", 0), "message": {"role": "assistant", "content": None, "refusal": None},
                 "finish_reason": None, "logprobs": None},
            )  # fmt: skip
            _fold_delta(choice["message"], part.get("delta") or {})
            if part.get("finish_reason") is not None:
                choice["finish_reason"] = part["finish_reason"]
    body["choices"] = [choices[i] for i in sorted(choices)]
    body["usage"] = usage
    return body


def _fold_delta(message: dict[str, Any], delta: dict[str, Any]) -> None:
    for key in ("content", "refusal"):
        if delta.get(key):
            message[key] = (message.get(key) or "") + delta[key]
    for call in delta.get("tool_calls") or []:
        calls = message.setdefault("tool_calls", [])
        index = call.get("index", len(calls))
        while len(calls) <= index:
            calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
        target = calls[index]
        if call.get("id"):
            target["id"] = call["id"]
        function = call.get("function") or {}
        target["function"]["name"] += function.get("name") or ""
        target["function"]["arguments"] += function.get("arguments") or ""


def _message_body(events: list[dict[str, Any]]) -> dict[str, Any]:
    start = next((e for e in events if e.get("type") == "message_start"), None)
    if start is None:
        raise _unshaped("the recorded Messages stream has no message_start event")
    message: dict[str, Any] = dict(start["message"])
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
            elif dtype == "signature_delta":
                block["signature"] = delta["signature"]
            elif dtype == "input_json_delta":
                partial_json[event["index"]] = partial_json.get(event["index"], "") + delta["partial_json"]
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            message["usage"] = {**(message.get("usage") or {}), **(event.get("usage") or {})}
    for index, text in partial_json.items():
        blocks[index]["input"] = orjson.loads(text) if text else {}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _unshaped(why: str) -> errors.InvalidRequestError:
    return errors.InvalidRequestError(f"This request matches a recording, but {why}.", code="no_recording")
