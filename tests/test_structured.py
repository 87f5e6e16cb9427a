"""Deterministic JSON instances and the tool-choice rule."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest

from mockserver import errors
from mockserver.structured import FunctionSpec, check_tool_choice, instance_for, pick_tool

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False},
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 3, "maxLength": 10},
            "age": {"type": "integer", "minimum": 18, "maximum": 99},
            "score": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "active": {"type": "boolean"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "kind": {"const": "person"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4, "uniqueItems": True},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "nickname": {"type": ["string", "null"]},
            "step": {"type": "integer", "multipleOf": 5, "minimum": 1, "maximum": 50},
        },
        "required": ["name", "age", "score", "active", "unit", "kind", "tags", "email", "when", "id", "step"],
        "additionalProperties": False,
    },
    {
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["street", "zip"],
            },
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value", "children"],
            },
        },
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address"},
            "work": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "required": ["home", "work", "tree"],
    },
    {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]
    },
    {},
]


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("seed", range(20))
def test_instances_validate_against_their_schema(schema: dict[str, Any], seed: int) -> None:
    jsonschema.validate(instance_for(schema, random.Random(seed)), schema)


def test_instances_are_deterministic() -> None:
    schema = SCHEMAS[1]
    assert instance_for(schema, random.Random(5)) == instance_for(schema, random.Random(5))
    assert instance_for(schema, random.Random(5)) != instance_for(schema, random.Random(6))


WEATHER = FunctionSpec("get_weather", {"type": "object"})
TIME = FunctionSpec("get_time", {"type": "object"})


def test_pick_tool_rules() -> None:
    rng = random.Random(0)
    assert pick_tool([], "auto", answered=False, rng=rng) is None
    assert pick_tool([WEATHER], "none", answered=False, rng=rng) is None
    assert pick_tool([WEATHER], "required", answered=True, rng=rng) is None
    assert pick_tool([WEATHER, TIME], {"type": "function", "name": "get_time"}, answered=False, rng=rng) == TIME
    assert (
        pick_tool([WEATHER, TIME], {"type": "function", "function": {"name": "get_time"}}, answered=False, rng=rng)
        == TIME
    )
    allowed = {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]}
    assert all(pick_tool([WEATHER, TIME], allowed, answered=False, rng=random.Random(s)) == WEATHER for s in range(10))
    picks = {pick_tool([WEATHER, TIME], None, answered=False, rng=random.Random(s)).name for s in range(20)}  # type: ignore[union-attr]
    assert picks == {"get_weather", "get_time"}


@pytest.mark.parametrize(
    ("tools", "choice", "param_message"),
    [
        ([], "required", "'tool_choice' is only allowed when 'tools' are specified"),
        ([WEATHER], {"type": "function", "name": "nope"}, "Tool choice 'nope' not found in 'tools' parameter."),
        ([WEATHER], "sometimes", "Invalid value: 'sometimes'."),
    ],
)
def test_impossible_tool_choice_is_refused(tools: list[FunctionSpec], choice: Any, param_message: str) -> None:
    with pytest.raises(errors.InvalidRequestError) as caught:
        check_tool_choice(tools, choice)
    assert caught.value.param == "tool_choice"
    assert param_message in caught.value.message
