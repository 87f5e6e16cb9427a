"""Responses API endpoints beyond create/retrieve/delete: input items, input tokens, background and cancel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.settings import (
    DEFAULT_STORED_RESPONSE_BYTES,
    DEFAULT_STORED_RESPONSE_TTL_S,
    DEFAULT_STORED_RESPONSES,
    Settings,
)
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app
from mockserver.state.responses import ResponseStore, StoredResponse
from tests.conftest import PREVIEW_KEY

MODEL = "gpt-5.6-sol"
HISTORY: list[Any] = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": '{"temp": 21}'},
    {"role": "assistant", "content": [{"type": "output_text", "text": "It is 21 degrees."}]},
    {"id": "msg_mine", "type": "message", "role": "user", "content": "Thanks!"},
]


# -- GET /v1/responses/{id}/input_items -----------------------------------------------------------


def test_input_items_newest_first_with_ids(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input=HISTORY)
    page = client.responses.input_items.list(response.id)
    assert page.has_more is False
    items = page.data
    assert [i.type for i in items] == [
        "message",
        "message",
        "function_call_output",
        "function_call",
        "message",
        "message",
    ]
    assert items[0].id == "msg_mine"
    assert all(i.id for i in items) and len({i.id for i in items}) == len(items)
    assert items[-1].type == "message" and items[-1].role == "developer"  # type: ignore[union-attr]
    assert items[-1].content[0].text == "Be brief."  # type: ignore[union-attr]
    call = items[3]
    assert call.type == "function_call" and call.call_id == "call_1" and call.name == "get_weather"
    assert items[1].type == "message" and items[1].role == "assistant"


def test_input_items_pages_with_after_limit_and_order(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input=HISTORY)
    everything = client.responses.input_items.list(response.id, order="asc").data
    first = client.responses.input_items.list(response.id, order="asc", limit=4)
    assert [i.id for i in first.data] == [i.id for i in everything[:4]] and first.has_more is True
    rest = first.get_next_page()
    assert [i.id for i in rest.data] == [i.id for i in everything[4:]] and rest.has_more is False
    walked = [i.id for i in client.responses.input_items.list(response.id, limit=1)]
    assert walked == [i.id for i in reversed(everything)]


def test_input_items_page_body(http: httpx.Client, client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Hello")
    body = http.get(f"/v1/responses/{response.id}/input_items").json()
    [item] = body["data"]
    assert body["object"] == "list" and body["has_more"] is False
    assert body["first_id"] == body["last_id"] == item["id"]
    assert item["role"] == "user" and item["content"] == [{"type": "input_text", "text": "Hello"}]


@pytest.mark.parametrize(
    ("query", "param", "code"),
    [
        ({"limit": "0"}, "limit", "integer_below_min_value"),
        ({"limit": "101"}, "limit", "integer_above_max_value"),
        ({"limit": "many"}, "limit", "invalid_type"),
        ({"order": "newest"}, "order", "invalid_value"),
        ({"after": "msg_unknown"}, "after", "invalid_value"),
    ],
)
def test_input_items_bad_query(
    http: httpx.Client, client: openai.OpenAI, query: dict[str, str], param: str, code: str
) -> None:
    response = client.responses.create(model=MODEL, input="Hello")
    reply = http.get(f"/v1/responses/{response.id}/input_items", params=query)
    assert reply.status_code == 400
    assert (reply.json()["error"]["param"], reply.json()["error"]["code"]) == (param, code)


def test_input_items_of_an_unknown_response_is_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list("resp_missing")


# -- POST /v1/responses/input_tokens --------------------------------------------------------------


def test_input_tokens_match_the_usage_of_create(client: openai.OpenAI) -> None:
    tools: list[Any] = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    kwargs: dict[str, Any] = {"model": MODEL, "input": HISTORY, "instructions": "Answer in French.", "tools": tools}
    counted = client.responses.input_tokens.count(**kwargs)
    created = client.responses.create(**kwargs)
    assert counted.object == "response.input_tokens"
    assert created.usage is not None and counted.input_tokens == created.usage.input_tokens


def test_input_tokens_count_earlier_turns(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="My name is Ada.")
    alone = client.responses.input_tokens.count(model=MODEL, input="Name?")
    chained = client.responses.input_tokens.count(model=MODEL, input="Name?", previous_response_id=first.id)
    second = client.responses.create(model=MODEL, input="Name?", previous_response_id=first.id)
    assert second.usage is not None and chained.input_tokens == second.usage.input_tokens > alone.input_tokens


def test_input_tokens_refusals(client: openai.OpenAI, http: httpx.Client) -> None:
    with pytest.raises(openai.NotFoundError) as unknown:
        client.responses.input_tokens.count(model="gpt-nonexistent", input="Hi")
    assert unknown.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as previous:
        client.responses.input_tokens.count(input="Hi", previous_response_id="resp_missing")
    assert previous.value.code == "previous_response_not_found"
    reply = http.post("/v1/responses/input_tokens", json={"input": "Hi", "stream": True})
    assert reply.status_code == 400 and reply.json()["error"]["message"].endswith("supplied: stream")


# -- background and POST /v1/responses/{id}/cancel ------------------------------------------------


@pytest.fixture
def paced() -> Iterator[tuple[openai.OpenAI, FakeClock]]:
    """A server on a clock that moves only when the test says, so polling never sleeps."""
    clock = FakeClock()
    settings = Settings(time_scale=1, seed=2, port=0)  # a free port: 8000 may be taken on this machine
    with MockServer(settings, app=create_app(settings, clock=clock)) as server:
        client = openai.OpenAI(
            base_url=server.base_url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True
        )
        yield client, clock


def test_background_response_is_queued_then_in_progress_then_completed(paced: tuple[openai.OpenAI, FakeClock]) -> None:
    client, clock = paced
    created = client.responses.create(model=MODEL, input="Hello", background=True, extra_body={"seed": 3})
    assert created.status == "queued" and created.background is True
    assert created.output == [] and created.usage is None
    assert client.responses.retrieve(created.id).status == "queued"
    clock.advance(3.5)  # past the default tier's 3 s TTFT
    assert client.responses.retrieve(created.id).status == "in_progress"
    clock.advance(600)
    done = client.responses.retrieve(created.id)
    assert done.status == "completed" and done.output_text and done.usage is not None
    assert client.responses.cancel(created.id).status == "completed"  # too late: returned as it is


def test_cancel_a_background_response(paced: tuple[openai.OpenAI, FakeClock]) -> None:
    client, clock = paced
    created = client.responses.create(model=MODEL, input="Hello", background=True)
    cancelled = client.responses.cancel(created.id)
    assert cancelled.id == created.id and cancelled.status == "cancelled" and cancelled.output == []
    clock.advance(600)
    assert client.responses.retrieve(created.id).status == "cancelled"
    assert client.responses.cancel(created.id).status == "cancelled"


def test_cancel_a_synchronous_response_is_refused(client: openai.OpenAI) -> None:
    created = client.responses.create(model=MODEL, input="Hello")
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.cancel(created.id)
    assert caught.value.message.endswith("Cannot cancel a synchronous response.")
    assert caught.value.type == "invalid_request_error"
    with pytest.raises(openai.NotFoundError):
        client.responses.cancel("resp_missing")


def test_background_needs_store(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="Hello", background=True, store=False)
    assert caught.value.param == "store"


def test_background_stream_is_an_ordinary_stream(client: openai.OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="Hello", background=True) as stream:
        final = stream.get_final_response()
    assert final.status == "completed" and final.background is True


def test_store_reads_queued_until_the_first_token() -> None:
    clock = FakeClock(start=0.0)
    store = ResponseStore(
        clock.now,
        max_items=DEFAULT_STORED_RESPONSES,
        ttl_s=DEFAULT_STORED_RESPONSE_TTL_S,
        max_bytes=DEFAULT_STORED_RESPONSE_BYTES,
    )
    body = {"id": "resp_1", "status": "in_progress"}
    asyncio.run(
        store.put(StoredResponse("resp_1", "p", {**body, "status": "completed"}, body, 10.0, (), (), True, 4.0))
    )
    assert asyncio.run(store.get("p", "resp_1"))["status"] == "queued"
    clock.advance(4.0)
    assert asyncio.run(store.get("p", "resp_1"))["status"] == "in_progress"
    clock.advance(6.0)
    assert asyncio.run(store.get("p", "resp_1"))["status"] == "completed"


def test_review_regressions_item_references_huge_bounds_and_stream_retrieve() -> None:
    with MockServer(time_scale=0) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-preview", _strict_response_validation=True)
        # An item reference is accepted and not listed back: the SDK's item types cannot hold a bare reference.
        created = client.responses.create(
            model="gpt-5.6-sol", input=[{"type": "item_reference", "id": "msg_x"}, {"role": "user", "content": "Hi"}]
        )
        items = list(client.responses.input_items.list(created.id))
        assert [item.type for item in items] == ["message"]
        # One huge bound with multipleOf still leaves room for a multiple.
        schema = {
            "type": "object",
            "properties": {"d": {"type": "number", "multipleOf": 3, "minimum": -1e20}},
            "required": ["d"],
            "additionalProperties": False,
        }
        shaped = client.responses.create(
            model="gpt-5.6-sol",
            input="numbers, please",
            text={"format": {"type": "json_schema", "name": "n", "schema": schema}},
        )
        assert json.loads(shaped.output_text)["d"] >= -1e20
        with pytest.raises(openai.BadRequestError) as caught:
            list(client.responses.retrieve(created.id, stream=True))
        assert caught.value.param == "stream"


def test_cancelling_a_background_stream_ends_it_without_completion() -> None:
    slow = {"x-mock-tokens-per-second": "20", "x-mock-ttft-ms": "0", "x-mock-output-tokens": "200"}  # ~10 s
    with MockServer(time_scale=1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=PREVIEW_KEY, _strict_response_validation=True)
        kinds: list[str] = []
        with client.responses.stream(model="gpt-5.6-sol", input="Hello", background=True, extra_headers=slow) as stream:
            for event in stream:
                kinds.append(event.type)
                if event.type == "response.created":
                    response_id = event.response.id
                if kinds.count("response.output_text.delta") == 3:
                    assert client.responses.cancel(response_id).status == "cancelled"
        assert "response.completed" not in kinds
        assert kinds.count("response.output_text.delta") < 10
        assert client.responses.retrieve(response_id).status == "cancelled"
