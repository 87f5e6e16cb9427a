"""The raw Responses event stream, below the SDK: framing, order, sequence numbers, ids and known types."""

from __future__ import annotations

import json
import typing
from typing import Any

import httpx
import pytest
from openai.types.responses import ResponseStreamEvent

KNOWN_TYPES = {
    typing.get_args(member.model_fields["type"].annotation)[0]
    for member in typing.get_args(typing.get_args(ResponseStreamEvent)[0])
}
TOOL = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


def read_events(http: httpx.Client, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    with http.stream("POST", "/v1/responses", json={"model": "gpt-5.6-sol", "stream": True, **body}) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        raw = reply.read().decode()
    assert "[DONE]" not in raw
    events = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        name_line, data_line = block.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: ")
        payload = json.loads(data_line.removeprefix("data: "))
        assert payload["type"] == name_line.removeprefix("event: ")
        events.append((payload["type"], payload))
    return events


@pytest.mark.parametrize(
    "body",
    [
        {"input": "Hello"},
        {"input": "Hello", "reasoning": {"effort": "low", "summary": "auto"}},
        {"input": "Hello", "reasoning": {"effort": "low"}, "tools": [TOOL], "tool_choice": "required"},
        {"input": "Hello", "reasoning": {"effort": "medium", "summary": "detailed"}, "max_output_tokens": 100},
        {"input": "Hello", "max_output_tokens": 16},
    ],
)
def test_event_order_and_invariants(http: httpx.Client, body: dict[str, Any]) -> None:
    events = read_events(http, body)
    types = [t for t, _ in events]
    assert set(types) <= KNOWN_TYPES, set(types) - KNOWN_TYPES
    assert [p["sequence_number"] for _, p in events] == list(range(len(events)))
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] in ("response.completed", "response.incomplete")
    lifecycle = [p["response"] for t, p in events if "response" in p]
    assert len({r["id"] for r in lifecycle}) == 1
    assert lifecycle[0]["status"] == "in_progress" and lifecycle[0]["output"] == [] and lifecycle[0]["usage"] is None

    open_items: dict[int, dict[str, Any]] = {}
    for kind, p in events:
        if kind == "response.output_item.added":
            assert p["output_index"] == len(open_items)
            item = p["item"]
            if item["type"] == "message":
                assert item["content"] == []
            if item["type"] == "function_call":
                assert item["arguments"] == ""
            if item["type"] == "reasoning":
                assert item["summary"] == []
            open_items[p["output_index"]] = item
        elif "output_index" in p:
            assert p["output_index"] in open_items
        if kind in ("response.output_text.delta", "response.output_text.done"):
            assert p["logprobs"] == []
        if "item_id" in p:
            assert p["item_id"] == open_items[p["output_index"]]["id"]
    final = lifecycle[-1]
    assert [i["id"] for i in final["output"]] == [i["id"] for i in open_items.values()]
    if body.get("reasoning"):
        assert final["output"][0]["type"] == "reasoning"


def test_canonical_text_sequence(http: httpx.Client) -> None:
    types = [t for t, _ in read_events(http, {"input": "Hello"})]
    body = [t for t in types if t != "response.output_text.delta"]
    assert body == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert types.index("response.output_text.delta") == 4


def test_bad_request_on_a_stream_is_a_plain_json_error(http: httpx.Client) -> None:
    reply = http.post("/v1/responses", json={"model": "gpt-5.6-sol", "stream": True, "input": [{"role": "x"}]})
    assert reply.status_code == 400
    assert reply.headers["content-type"] == "application/json"
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}


@pytest.mark.parametrize("payload", [b"{", b"[]", b'{"model": 5}', b'{"model": "gpt-5.6-sol", "input": {"a": 1}}'])
def test_malformed_bodies_never_500_or_422(http: httpx.Client, payload: bytes) -> None:
    reply = http.post("/v1/responses", content=payload, headers={"content-type": "application/json"})
    assert reply.status_code == 400
    assert "error" in reply.json()
