"""The Responses API through the official SDK, with strict response validation."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import openai
import pydantic
import pytest

from mockserver import MockServer
from mockserver.config.fixture import Policies
from tests.conftest import fixture_with

MODEL = "gpt-5.6-sol"
WEATHER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit", "days"],
    "additionalProperties": False,
}
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": WEATHER_PARAMS,
    "strict": True,
}
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_time",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
}


def seeded(seed: int) -> dict[str, Any]:
    return {"extra_body": {"seed": seed}}


def test_create_non_streaming(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Write a haiku about speed.", **seeded(1))
    assert response.id.startswith("resp_") and response.object == "response"
    assert response.status == "completed" and response.incomplete_details is None
    assert response.service_tier == "default"
    [message] = response.output
    assert message.type == "message" and message.id.startswith("msg_") and message.status == "completed"
    assert response.output_text
    assert response.usage is not None
    assert response.usage.output_tokens > 0 and response.usage.output_tokens_details.reasoning_tokens == 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert response._request_id and response._request_id.startswith("req_")


def test_raw_stream_rebuilds_the_same_response(client: openai.OpenAI) -> None:
    plain = client.responses.create(model=MODEL, input="Tell me a story", **seeded(2))
    events = list(client.responses.create(model=MODEL, input="Tell me a story", stream=True, **seeded(2)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == plain.output_text
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[-1].response.usage == plain.usage


def test_stream_helper_final_response_equals_non_streaming(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {"model": MODEL, "input": "Explain tiers", "instructions": "Be brief.", **seeded(3)}
    plain = client.responses.create(**kwargs)
    with client.responses.stream(**kwargs) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text == plain.output_text
    assert final.usage == plain.usage
    assert final.instructions == "Be brief."
    assert [o.type for o in final.output] == [o.type for o in plain.output]


@pytest.mark.parametrize("summary", [None, "auto", "detailed"])
def test_reasoning_comes_first_and_counts_as_output(client: openai.OpenAI, summary: str | None) -> None:
    reasoning: dict[str, Any] = {"effort": "low"} if summary is None else {"effort": "low", "summary": summary}
    kwargs: dict[str, Any] = {"model": MODEL, "input": "Think, then answer.", "reasoning": reasoning, **seeded(4)}
    plain = client.responses.create(**kwargs)
    assert [o.type for o in plain.output] == ["reasoning", "message"]
    assert plain.usage is not None and plain.usage.output_tokens_details.reasoning_tokens == 64
    assert plain.usage.output_tokens == 64 + len(plain.output_text.split()) or plain.usage.output_tokens > 64
    assert plain.reasoning is not None and plain.reasoning.effort == "low" and plain.reasoning.summary == summary
    item = plain.output[0]
    assert item.type == "reasoning" and item.id.startswith("rs_")
    with client.responses.stream(**kwargs) as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [e.type for e in events]
    assert types[2] == "response.output_item.added" and events[2].output_index == 0  # type: ignore[union-attr]
    if summary is None:
        assert item.summary == []
        assert not any(t.startswith("response.reasoning_summary") for t in types)
    else:
        assert len(item.summary) == 1 and item.summary[0].text
        deltas = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
        assert deltas == item.summary[0].text
        summary_types = [t for t in types if t.startswith("response.reasoning_summary")]
        assert summary_types[0] == "response.reasoning_summary_part.added"
        assert summary_types[-2:] == ["response.reasoning_summary_text.done", "response.reasoning_summary_part.done"]
        # The summary is part of the reasoning budget, not added to it.
        assert plain.usage.output_tokens_details.reasoning_tokens == 64
    assert final.output[0].model_dump(exclude={"id"}) == item.model_dump(exclude={"id"})
    assert final.output_text == plain.output_text


def test_higher_effort_means_more_reasoning_tokens(client: openai.OpenAI) -> None:
    counts = []
    for effort in ("minimal", "low", "medium", "high"):
        r = client.responses.create(model=MODEL, input="Hi", reasoning={"effort": effort}, max_output_tokens=2000)  # type: ignore[typeddict-item]
        assert r.usage is not None
        counts.append(r.usage.output_tokens_details.reasoning_tokens)
    assert counts == [16, 64, 256, 1024]


def test_max_output_tokens_makes_it_incomplete(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="A long essay", max_output_tokens=20, **seeded(5))
    assert response.status == "incomplete"
    assert response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"
    assert response.usage is not None and response.usage.output_tokens == 20
    assert response.output[0].type == "message" and response.output[0].status == "incomplete"
    events = list(
        client.responses.create(model=MODEL, input="A long essay", max_output_tokens=20, stream=True, **seeded(5))
    )
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details is not None
    assert not any(e.type == "response.completed" for e in events)


def test_reasoning_counts_against_max_output_tokens(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=MODEL, input="Hard problem", reasoning={"effort": "low"}, max_output_tokens=40
    )
    assert response.status == "incomplete"
    assert response.usage is not None
    assert response.usage.output_tokens == response.usage.output_tokens_details.reasoning_tokens == 40
    assert [o.type for o in response.output] == ["reasoning"]  # cut before any visible text


def test_retrieve_and_delete(client: openai.OpenAI) -> None:
    created = client.responses.create(model=MODEL, input="Remember me", metadata={"case": "store"})
    fetched = client.responses.retrieve(created.id)
    assert fetched.model_dump() == created.model_dump()
    assert fetched.metadata == {"case": "store"}
    client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.retrieve(created.id)
    assert caught.value.message.endswith(f"Response with id '{created.id}' not found.")
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(created.id)


def test_delete_body(client: openai.OpenAI) -> None:
    created = client.responses.create(model=MODEL, input="Remember me")
    raw = client.responses.with_raw_response.delete(created.id)
    assert json.loads(raw.http_response.text) == {"id": created.id, "object": "response", "deleted": True}


def test_store_false_is_not_retrievable(client: openai.OpenAI) -> None:
    created = client.responses.create(model=MODEL, input="Forget me", store=False)
    assert created.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model=MODEL, input="And then?", previous_response_id=created.id)
    assert caught.value.param == "previous_response_id" and caught.value.code == "previous_response_not_found"


def test_previous_response_id_chains_the_conversation(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="My name is Ada.", **seeded(6))
    second = client.responses.create(model=MODEL, input="What is my name?", previous_response_id=first.id, **seeded(6))
    alone = client.responses.create(model=MODEL, input="What is my name?", **seeded(6))
    assert second.previous_response_id == first.id
    assert first.usage and second.usage and alone.usage
    # The earlier turn's input and output are input of this one.
    carried = second.usage.input_tokens - alone.usage.input_tokens
    assert carried > first.usage.output_tokens
    assert carried >= first.usage.output_tokens + first.usage.input_tokens - 3  # the reply primer is not repeated


def test_unknown_previous_response_is_404(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_missing")
    assert caught.value.param == "previous_response_id"
    assert "Previous response with id 'resp_missing' not found." in caught.value.message


def test_another_project_cannot_see_a_stored_response(client: openai.OpenAI, standard_client: openai.OpenAI) -> None:
    mine = client.responses.create(model=MODEL, input="Private")
    with pytest.raises(openai.NotFoundError):
        standard_client.responses.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        standard_client.responses.delete(mine.id)
    with pytest.raises(openai.NotFoundError):
        standard_client.responses.create(model=MODEL, input="Hi", previous_response_id=mine.id)
    assert client.responses.retrieve(mine.id).id == mine.id  # still there for its owner


# -- Tools and structured output ----------------------------------------------------------------


def test_function_call_then_text_after_the_tool_result(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[WEATHER_TOOL], **seeded(7))
    [call] = first.output
    assert call.type == "function_call" and call.name == "get_weather"
    assert call.call_id.startswith("call_") and call.id and call.id.startswith("fc_")
    jsonschema.validate(json.loads(call.arguments), WEATHER_PARAMS)
    assert first.usage is not None and first.usage.output_tokens > 0
    second = client.responses.create(
        model=MODEL,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": '{"temp": 21}'}],
        tools=[WEATHER_TOOL],
    )
    assert [o.type for o in second.output] == ["message"] and second.output_text
    # The same history passed back in full, without previous_response_id, also ends the tool loop.
    stateless = client.responses.create(
        model=MODEL,
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": '{"temp": 21}'},
        ],
        tools=[WEATHER_TOOL],
    )
    assert stateless.output[0].type == "message"


def test_tool_choice(client: openai.OpenAI) -> None:
    tools = [WEATHER_TOOL, TIME_TOOL]
    named = client.responses.create(
        model=MODEL, input="Hi", tools=tools, tool_choice={"type": "function", "name": "get_time"}
    )
    assert named.output[0].type == "function_call" and named.output[0].name == "get_time"
    assert named.tool_choice.type == "function"  # type: ignore[union-attr]
    none = client.responses.create(model=MODEL, input="Hi", tools=tools, tool_choice="none")
    assert none.output[0].type == "message"
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="Hi", tools=tools, tool_choice={"type": "function", "name": "x"})
    assert caught.value.param == "tool_choice"


def test_function_call_stream(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {"model": MODEL, "input": "Weather?", "tools": [WEATHER_TOOL], **seeded(8)}
    plain = client.responses.create(**kwargs)
    with client.responses.stream(**kwargs) as stream:
        events = list(stream)
        final = stream.get_final_response()
    added = next(e for e in events if e.type == "response.output_item.added")
    assert added.item.type == "function_call" and added.item.arguments == ""
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert deltas == done.arguments == plain.output[0].arguments  # type: ignore[union-attr]
    assert final.output[0].type == "function_call"
    assert final.output[0].parsed_arguments == json.loads(deltas)  # strict tool: the helper parses it


def test_chat_style_tool_layout_is_refused(client: openai.OpenAI) -> None:
    nested = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_PARAMS}}
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="Hi", tools=[nested])  # type: ignore[list-item]
    assert caught.value.param == "tools[0].name" and caught.value.code == "missing_required_parameter"


class Forecast(pydantic.BaseModel):
    class Day(pydantic.BaseModel):
        weekday: str
        high: int
        rain: bool

    city: str
    days: list[Day]
    unit: str | None


def test_json_schema_output_validates(client: openai.OpenAI) -> None:
    schema = Forecast.model_json_schema()
    response = client.responses.create(
        model=MODEL,
        input="Forecast for Paris",
        text={"format": {"type": "json_schema", "name": "forecast", "schema": schema, "strict": True}},
    )
    jsonschema.validate(json.loads(response.output_text), schema)
    assert response.text is not None and response.text.format is not None
    assert response.text.format.type == "json_schema"
    parsed = client.responses.parse(model=MODEL, input="Forecast for Paris", text_format=Forecast)
    assert isinstance(parsed.output_parsed, Forecast)


def test_json_object_needs_the_word_json(client: openai.OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Reply in JSON", text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(response.output_text), dict)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL, input="Reply", text={"format": {"type": "json_object"}})


def test_input_items_and_history(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=MODEL,
        instructions="You are terse.",
        input=[
            {"role": "developer", "content": "Answer in English."},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello!"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "greeted"}]},
            {"role": "user", "content": "How fast are you?"},
        ],
        max_output_tokens=16,
    )
    assert response.status == "incomplete" and response.usage is not None and response.usage.input_tokens > 10


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"input": [{"content": "x"}]}, "input[0].type"),
        ({"input": [{"type": "function_call_output", "call_id": "c"}]}, "input[0].output"),
        ({"input": [{"role": "user", "content": 5}]}, "input[0].content"),
        ({"input": "x", "max_output_tokens": 5}, "max_output_tokens"),
        ({"input": "x", "reasoning": {"effort": "ultra"}}, "reasoning.effort"),
        ({"input": "x", "text": {"format": {"type": "xml"}}}, "text.format.type"),
        ({"input": "x", "text": {"format": {"type": "json_schema", "schema": {}}}}, "text.format.name"),
        ({"input": "x", "service_tier": "turbo"}, "service_tier"),
        ({}, "input"),
    ],
)
def test_bad_requests_are_400_in_openai_shape(client: openai.OpenAI, body: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, **body)
    assert caught.value.param == param
    assert isinstance(caught.value.body, dict) and caught.value.body["type"] == "invalid_request_error"


def test_unknown_argument_uses_the_live_wording(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="x", extra_body={"frobnicate": 1})
    assert "Unrecognized request argument supplied: frobnicate" in caught.value.message


def test_every_documented_field_is_accepted(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=MODEL,
        input="Hi",
        include=["reasoning.encrypted_content"],
        reasoning={"effort": "minimal", "summary": "concise"},
        parallel_tool_calls=False,
        temperature=0.5,
        top_p=0.9,
        top_logprobs=2,
        truncation="auto",
        safety_identifier="user-1",
        user="user-1",
        prompt_cache_key="k",
        prompt_cache_retention="24h",
        max_tool_calls=3,
        background=False,
        stream_options=None,
        text={"verbosity": "low"},
        store=True,
    )
    assert response.reasoning is not None and response.reasoning.effort == "minimal"
    assert response.output[0].type == "reasoning" and response.output[0].encrypted_content
    assert response.text is not None and response.text.verbosity == "low"
    assert (response.temperature, response.top_p, response.truncation) == (0.5, 0.9, "auto")


# -- Tiers and access-denied paths --------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "requested", "reported"),
    [
        (MODEL, None, "default"),
        (MODEL, "auto", "default"),
        (MODEL, "priority", "priority"),
        (MODEL, "fast", "priority"),
        (MODEL, "flex", "flex"),
        (MODEL, "ultrafast", "ultrafast"),
        ("gpt-5.6-sol-ultrafast", None, "ultrafast"),
    ],
)
def test_service_tier_shows_the_tier_used(
    client: openai.OpenAI, model: str, requested: str | None, reported: str
) -> None:
    extra = {} if requested is None else {"service_tier": requested}
    response = client.responses.create(model=model, input="Hi", max_output_tokens=16, **extra)  # type: ignore[arg-type]
    assert response.service_tier == reported


def test_ultrafast_model_id_without_preview_is_404(standard_client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        standard_client.responses.create(model="gpt-5.6-sol-ultrafast", input="Hi")
    assert caught.value.code == "model_not_found"


def test_ultrafast_tier_without_preview_is_403(standard_client: openai.OpenAI) -> None:
    with pytest.raises(openai.PermissionDeniedError) as caught:
        standard_client.responses.create(model=MODEL, input="Hi", service_tier="ultrafast")
    assert (caught.value.param, caught.value.code) == ("service_tier", "service_tier_not_available")


def test_ultrafast_on_a_model_without_it_is_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.6-mini", input="Hi", service_tier="ultrafast")
    assert caught.value.param == "service_tier"


def test_unknown_key_and_unknown_model(make_client: Any, client: openai.OpenAI) -> None:
    with pytest.raises(openai.AuthenticationError):
        make_client(api_key="sk-nope-0123456789").responses.create(model=MODEL, input="Hi")
    with pytest.raises(openai.AuthenticationError):
        make_client(api_key="sk-nope-0123456789").responses.retrieve("resp_x")
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model="gpt-nonexistent", input="Hi")
    assert caught.value.code == "model_not_found"


def test_downgrade_policy_reports_default() -> None:
    fixture = fixture_with(policies=Policies(ultrafast_without_access="downgrade").model_dump())
    with MockServer(time_scale=0, fixture=fixture) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-standard", _strict_response_validation=True)
        response = c.responses.create(model=MODEL, input="Hi", service_tier="ultrafast", max_output_tokens=16)
        assert response.service_tier == "default"


def test_reset_forgets_stored_responses() -> None:
    with MockServer(time_scale=0) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-preview", max_retries=0)
        created = c.responses.create(model=MODEL, input="Hi")
        server.reset()
        with pytest.raises(openai.NotFoundError):
            c.responses.retrieve(created.id)


def test_a_streamed_response_is_stored_with_its_record_deferred_and_reads_the_same_as_ever() -> None:
    """A stream makes its text as it goes out, so its response is stored before any of its output is
    made. Read while it streams, it is in progress, and continued by ``previous_response_id`` with what
    it says; read once it is over, it is completed with the text that was streamed."""
    headers = {"x-mock-tokens-per-second": "500", "x-mock-output-tokens": "500", "x-mock-ttft-ms": "0"}
    short = {"x-mock-tokens-per-second": "1000", "x-mock-output-tokens": "3", "x-mock-ttft-ms": "0"}
    with MockServer(time_scale=1, seed=1) as server:
        c = openai.OpenAI(base_url=server.base_url, api_key="sk-mock-preview", _strict_response_validation=True)
        c.responses.create(model=MODEL, input="Hi", extra_headers=short)  # the first request loads the tokenizer
        deltas: list[str] = []
        with c.responses.stream(model=MODEL, input="Tell me a story.", extra_headers=headers) as stream:
            for event in stream:
                if event.type == "response.created":
                    response_id = event.response.id
                elif event.type == "response.output_text.delta":
                    deltas.append(event.delta)
                    if len(deltas) == 1:  # its first token is out, and nothing of its output made for the store
                        assert server.state.responses._items[response_id].deferred is not None  # type: ignore[attr-defined]
                        during = c.responses.retrieve(response_id)
                        assert during.status == "in_progress" and during.output == []
                        followed = c.responses.create(
                            model=MODEL, input="And then?", previous_response_id=response_id, extra_headers=short
                        )
                        alone = c.responses.create(model=MODEL, input="And then?", extra_headers=short)
                        assert followed.usage and alone.usage
                        assert followed.usage.input_tokens - alone.usage.input_tokens > 500  # its whole output
            final = stream.get_final_response()
        after = c.responses.retrieve(final.id)
        assert after.status == "completed" and after.output_text == "".join(deltas) == final.output_text
        assert after.id == final.id and after.usage == final.usage
