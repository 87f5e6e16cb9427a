"""Tool calls and structured output on Chat Completions, through the official SDK with strict validation."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import openai
import pydantic
import pytest

MODEL = "gpt-5.6-sol"
PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": PARAMS, "strict": True}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]


def test_tool_call_validates_and_finishes_with_tool_calls(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model=MODEL, messages=ASK, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_weather"}}
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.type == "function" and call.id.startswith("call_") and call.function.name == "get_weather"
    jsonschema.validate(json.loads(call.function.arguments), PARAMS)
    assert completion.usage is not None and completion.usage.completion_tokens > 0


def test_streamed_tool_call_matches_and_helper_accumulates(client: openai.OpenAI) -> None:
    kwargs: dict[str, Any] = {"model": MODEL, "messages": ASK, "tools": TOOLS, "seed": 9}
    plain = client.chat.completions.create(**kwargs)
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    fragments = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert fragments[0].id and fragments[0].function and fragments[0].function.name
    assert all(f.index == 0 for f in fragments)
    assert all(f.id is None and f.type is None and f.function and f.function.name is None for f in fragments[1:])
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    with client.chat.completions.stream(**kwargs) as stream:
        final = stream.get_final_completion()
    [call] = final.choices[0].message.tool_calls or []
    [expected] = plain.choices[0].message.tool_calls or []
    assert call.function.name == expected.function.name  # type: ignore[union-attr]
    assert call.function.arguments == expected.function.arguments  # type: ignore[union-attr]


def test_tool_result_after_the_last_user_message_gets_text(client: openai.OpenAI) -> None:
    first = client.chat.completions.create(model=MODEL, messages=ASK, tools=TOOLS, tool_choice="required")
    call = (first.choices[0].message.tool_calls or [])[0]
    history: list[Any] = [
        *ASK,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 21}'},
    ]
    second = client.chat.completions.create(model=MODEL, messages=history, tools=TOOLS)
    assert second.choices[0].finish_reason == "stop" and second.choices[0].message.content
    again = client.chat.completions.create(
        model=MODEL, messages=[*history, {"role": "user", "content": "And Berlin?"}], tools=TOOLS
    )
    assert again.choices[0].finish_reason == "tool_calls"


def test_tool_choice_none_answers_in_text(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(model=MODEL, messages=ASK, tools=TOOLS, tool_choice="none")
    assert completion.choices[0].finish_reason == "stop" and completion.choices[0].message.tool_calls is None


class Answer(pydantic.BaseModel):
    city: str
    temperatures: list[float]
    sunny: bool


def test_json_schema_response_format(client: openai.OpenAI) -> None:
    schema = Answer.model_json_schema()
    completion = client.chat.completions.create(
        model=MODEL,
        messages=ASK,
        response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}},
    )
    jsonschema.validate(json.loads(completion.choices[0].message.content or ""), schema)
    parsed = client.chat.completions.parse(model=MODEL, messages=ASK, response_format=Answer)
    assert isinstance(parsed.choices[0].message.parsed, Answer)
    with client.chat.completions.stream(model=MODEL, messages=ASK, response_format=Answer) as stream:
        final = stream.get_final_completion()
    assert isinstance(final.choices[0].message.parsed, Answer)


def test_json_object_response_format(client: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": "Reply in json please"}]
    completion = client.chat.completions.create(model=MODEL, messages=messages, response_format={"type": "json_object"})  # type: ignore[arg-type]
    assert isinstance(json.loads(completion.choices[0].message.content or ""), dict)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=ASK, response_format={"type": "json_object"})  # type: ignore[arg-type]
    assert caught.value.param == "messages"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tools": [{"type": "function", "name": "flat"}]}, "tools[0].function"),
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
        ({"response_format": {"type": "yaml"}}, "response_format.type"),
    ],
)
def test_bad_tool_and_format_requests_are_400(client: openai.OpenAI, extra: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=ASK, extra_body=extra)
    assert caught.value.param == param
