"""Parallel tool calls on both APIs: several calls in one reply, streamed with the right indexes and ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from mockserver import MockServer
from mockserver.engine import tokens
from tests.conftest import fixture_with
from tests.support import sdk

MODEL = "gpt-5.6-sol"
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TIME = {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}
NEWS = {"type": "object", "properties": {"topic": {"type": "string"}, "count": {"type": "integer"}}}
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME, "get_news": NEWS}
CHAT_TOOLS: list[Any] = [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in SCHEMAS.items()]
RESPONSES_TOOLS: list[Any] = [{"type": "function", "name": n, "parameters": p} for n, p in SCHEMAS.items()]
ASK = [{"role": "user", "content": "Weather and time in Paris?"}]
SCRIPT = {
    "scripts": [
        {
            "match": {"message": "(?i)paris"},
            "reply": {
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
                    {"name": "get_time", "arguments": {"zone": "Europe/Paris"}},
                ]
            },
        }
    ]
}


@pytest.fixture(scope="module")
def always() -> Iterator[MockServer]:
    """Every generated tool reply calls several tools."""
    with MockServer(fixture=fixture_with(parallel_tool_calls={"probability": 1.0, "max_calls": 3}), time_scale=0) as s:
        yield s


def test_generated_parallel_calls_on_chat(always: MockServer) -> None:
    client = sdk(always)
    for seed in range(6):
        completion = client.chat.completions.create(model=MODEL, messages=ASK, tools=CHAT_TOOLS, seed=seed)  # type: ignore[arg-type]
        calls = completion.choices[0].message.tool_calls or []
        assert completion.choices[0].finish_reason == "tool_calls"
        assert 2 <= len(calls) <= 3
        assert len({c.function.name for c in calls}) == len(calls)  # type: ignore[union-attr]
        assert len({c.id for c in calls}) == len(calls)
        for call in calls:
            jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])  # type: ignore[union-attr]


def test_chat_streams_each_call_at_its_index_with_its_id_first(always: MockServer) -> None:
    client = sdk(always)
    kwargs: dict[str, Any] = {"model": MODEL, "messages": ASK, "tools": CHAT_TOOLS, "seed": 4}
    plain = client.chat.completions.create(**kwargs).choices[0].message.tool_calls or []
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    fragments = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    indexes = [f.index for f in fragments]
    assert indexes == sorted(indexes) and set(indexes) == set(range(len(plain)))
    for index, expected in enumerate(plain):
        mine = [f for f in fragments if f.index == index]
        first = mine[0]
        assert first.id and first.id.startswith("call_") and first.type == "function"
        assert first.function and first.function.name == expected.function.name  # type: ignore[union-attr]
        assert all(f.id is None and f.function and f.function.name is None for f in mine[1:])
        assert "".join(f.function.arguments or "" for f in mine if f.function) == expected.function.arguments  # type: ignore[union-attr]
    with client.chat.completions.stream(**kwargs) as stream:
        final = stream.get_final_completion()
    assert [c.function.arguments for c in final.choices[0].message.tool_calls or []] == [
        c.function.arguments  # type: ignore[union-attr]
        for c in plain
    ]


def test_parallel_tool_calls_false_and_a_named_tool_make_one_call(always: MockServer) -> None:
    client = sdk(always)
    single = client.chat.completions.create(model=MODEL, messages=ASK, tools=CHAT_TOOLS, parallel_tool_calls=False)  # type: ignore[arg-type]
    assert len(single.choices[0].message.tool_calls or []) == 1
    named = client.chat.completions.create(
        model=MODEL,
        messages=ASK,  # type: ignore[arg-type]
        tools=CHAT_TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    assert [c.function.name for c in named.choices[0].message.tool_calls or []] == ["get_time"]  # type: ignore[union-attr]
    response = client.responses.create(model=MODEL, input="Paris?", tools=RESPONSES_TOOLS, parallel_tool_calls=False)
    assert [item.type for item in response.output if item.type == "function_call"] == ["function_call"]


def test_generated_parallel_calls_on_responses_streamed_and_not(always: MockServer) -> None:
    client = sdk(always)
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "input": "Paris?",
        "tools": RESPONSES_TOOLS,
        "reasoning": {"effort": "none"},
    }
    response = client.responses.create(**kwargs)
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) >= 2 and len({c.call_id for c in calls}) == len(calls)
    for call in calls:
        jsonschema.validate(json.loads(call.arguments), SCHEMAS[call.name])
    assert response.usage is not None
    assert response.usage.output_tokens == sum(tokens.count(c.arguments) for c in calls)
    events = list(client.responses.create(stream=True, **kwargs))
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [e.output_index for e in added] == list(range(len(calls)))
    for index, call in enumerate(calls):
        deltas = [
            e.delta for e in events if e.type == "response.function_call_arguments.delta" and e.output_index == index
        ]
        assert "".join(deltas) == call.arguments
    with client.responses.stream(**kwargs) as stream:
        final = stream.get_final_response()
    assert [(c.name, c.arguments) for c in final.output if c.type == "function_call"] == [
        (c.name, c.arguments) for c in calls
    ]


def test_scripted_parallel_calls_on_both_apis(server: MockServer) -> None:
    server.configure(SCRIPT)
    try:
        client = sdk(server)
        completion = client.chat.completions.create(model=MODEL, messages=ASK, tools=CHAT_TOOLS)  # type: ignore[arg-type]
        calls = completion.choices[0].message.tool_calls or []
        assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
            ("get_weather", {"city": "Paris", "unit": "celsius"}),
            ("get_time", {"zone": "Europe/Paris"}),
        ]
        response = client.responses.create(model=MODEL, input="Paris?", tools=RESPONSES_TOOLS)
        assert [i.name for i in response.output if i.type == "function_call"] == ["get_weather", "get_time"]
        single = client.responses.create(model=MODEL, input="Paris?", tools=RESPONSES_TOOLS, parallel_tool_calls=False)
        assert [i.name for i in single.output if i.type == "function_call"] == ["get_weather"]
    finally:
        server.reset()


def test_an_output_limit_cuts_the_later_calls(server: MockServer) -> None:
    server.configure(SCRIPT)
    try:
        client = sdk(server)
        # The calls' arguments are 10 and 7 tokens: a limit of 16 ends inside the second call.
        cut = client.responses.create(
            model=MODEL, input="Paris?", tools=RESPONSES_TOOLS, reasoning={"effort": "none"}, max_output_tokens=16
        )
        assert cut.status == "incomplete" and cut.usage is not None and cut.usage.output_tokens == 16
        items = [i for i in cut.output if i.type == "function_call"]
        assert [(i.name, i.status) for i in items] == [("get_weather", "completed"), ("get_time", "incomplete")]
        completion = client.chat.completions.create(
            model=MODEL,
            messages=ASK,  # type: ignore[arg-type]
            tools=CHAT_TOOLS,
            max_completion_tokens=5,
        )
        assert completion.choices[0].finish_reason == "length"
        assert [c.function.name for c in completion.choices[0].message.tool_calls or []] == ["get_weather"]  # type: ignore[union-attr]
    finally:
        server.reset()
