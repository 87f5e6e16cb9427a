"""A schema the server cannot honour is an OpenAI-shaped 400 naming where it came from, on both APIs."""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest

MODEL = "gpt-5.6-sol"
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]
LOOP = {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}
GOOD = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _chat_tool(name: str, parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.mark.parametrize(
    ("extra", "param", "wording"),
    [
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "loop", "schema": LOOP}}},
            "response_format.json_schema.schema",
            "Invalid schema for response_format 'loop': In context=('properties', 'a'), '$ref' '#' requires itself",
        ),
        (
            {"tools": [_chat_tool("ok", GOOD), _chat_tool("bad", {"type": "array", "minItems": 10**6})]},
            "tools[1].function.parameters",
            "Invalid schema for function 'bad': In context=(), 'minItems' is 1000000",
        ),
        (
            {"tools": [_chat_tool("bad", {"anyOf": [5]})], "tool_choice": "none"},
            "tools[0].function.parameters",
            "a schema must be an object or a boolean, not an integer",
        ),
    ],
)
def test_chat_refuses_bad_schemas(client: openai.OpenAI, extra: dict[str, Any], param: str, wording: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.with_options(max_retries=0).chat.completions.create(model=MODEL, messages=ASK, extra_body=extra)
    assert caught.value.status_code == 400
    assert caught.value.param == param
    assert caught.value.type == "invalid_request_error"
    assert wording in caught.value.message


@pytest.mark.parametrize(
    ("extra", "param", "wording"),
    [
        (
            {"text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "number", "minimum": "a"}}}},
            "text.format.schema",
            "Invalid schema for response_format 'n': In context=(), 'minimum' must be a finite number",
        ),
        (
            {"tools": [{"type": "function", "name": "f", "parameters": {"$ref": "#/$defs/Nope"}}]},
            "tools[0].parameters",
            "Invalid schema for function 'f': In context=(), '$ref' '#/$defs/Nope' points at nothing",
        ),
    ],
)
def test_responses_refuses_bad_schemas(client: openai.OpenAI, extra: dict[str, Any], param: str, wording: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.with_options(max_retries=0).responses.create(model=MODEL, input="hi", extra_body=extra)
    assert caught.value.param == param
    assert wording in caught.value.message


def test_a_pattern_schema_round_trips_through_the_sdk(client: openai.OpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"}},
        "required": ["code"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "code", "schema": schema, "strict": True}}
    completion = client.chat.completions.create(model=MODEL, messages=ASK, response_format=fmt)  # type: ignore[arg-type]
    code = json.loads(completion.choices[0].message.content or "")["code"]
    assert re.fullmatch(r"[A-Z]{3}-\d{2}", code)
