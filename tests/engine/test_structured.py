"""Deterministic JSON instances and the tool-choice rule."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockserver import errors
from mockserver.engine.structured import (
    FunctionSpec,
    SchemaSource,
    check_schema,
    check_tool_choice,
    dumps,
    instance_for,
    pick_tool,
)
from mockserver.engine.structured.build import SOFT_INSTANCE_SIZE
from mockserver.engine.structured.schema import (
    MAX_ARRAY_ITEMS,
    MAX_INSTANCE_SIZE,
    MAX_NESTING,
    MAX_PROPERTIES,
    MAX_STRING_LENGTH,
)

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
    assert pick_tool([WEATHER], "auto", answered=True, rng=rng) is None
    assert pick_tool([WEATHER], "required", answered=True, rng=rng) == WEATHER  # forced means forced
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


# -- Schemas that cannot be honoured are a 400, never a 500 ------------------------------------

FORMAT = SchemaSource.response_format("answer", "response_format.json_schema.schema")


@pytest.mark.parametrize(
    ("schema", "wording"),
    [
        (
            {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]},
            "In context=('properties', 'a'), '$ref' '#' requires itself",
        ),
        ({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}, "'$ref' '#/$defs/A' requires itself"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": False, "minItems": 1}},
                "required": ["a"],
            },
            "In context=('properties', 'a'), 'minItems' 1 cannot be met: 'items' is false",
        ),
        ({"anyOf": [5]}, "a schema must be an object or a boolean, not an integer"),
        ({"allOf": [5]}, "a schema must be an object or a boolean, not an integer"),
        ({"anyOf": []}, "'anyOf' must be a non-empty array"),
        ({"type": "object", "properties": [1]}, "'properties' must be an object, not an array"),
        ({"type": "number", "minimum": "a"}, "'minimum' must be a finite number, not a string"),
        ({"type": "array", "minItems": "a"}, "'minItems' must be a non-negative integer, not a string"),
        ({"type": "array", "minItems": -1}, "'minItems' must be a non-negative integer"),
        ({"type": "string", "maxLength": 1.5}, "'maxLength' must be a non-negative integer"),
        ({"type": "integer", "multipleOf": 0}, "'multipleOf' must be greater than 0"),
        ({"type": "strnig"}, "'type' 'strnig' is not one of object, array, string"),
        ({"type": []}, "'type' must be a type name or a non-empty array"),
        ({"$ref": "#/$defs/Missing"}, "'$ref' '#/$defs/Missing' points at nothing"),
        ({"$ref": "https://example.com/schema.json"}, "only local '$ref's"),
        ({"$ref": "#/required", "required": ["a"]}, "points at an array, not a schema"),
        ({"type": "string", "pattern": "("}, "is not a valid regular expression"),
        ({"enum": []}, "'enum' must be a non-empty array"),
        ({"type": "array", "items": [{"type": "string"}]}, "use 'prefixItems' for a tuple"),
        ({"type": "object", "required": "a"}, "'required' must be an array of property names"),
        (
            {"type": "object", "properties": {}, "required": ["a"], "additionalProperties": False},
            "required property 'a' is not allowed",
        ),
        ({"type": "integer", "minimum": 5, "maximum": 1}, "the lower bound 5 is greater than the upper bound 1"),
        ({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, "no integer lies between"),
        ({"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5}, "no integer multiple of 5"),
        ({"type": "string", "minLength": 5, "maxLength": 2}, "'minLength' 5 is greater than 'maxLength' 2"),
        ({"type": "array", "maxItems": 1, "minItems": 2}, "'minItems' 2 cannot be met"),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": False, "minItems": 2},
            "'minItems' 2 cannot be met",
        ),
        (
            {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 5, "uniqueItems": True},
            "the items allow only 3 distinct values",
        ),
        ({"type": "object", "required": ["a", "b"], "maxProperties": 1}, "2 properties are required"),
        (
            {"type": "object", "properties": {"a": {}}, "minProperties": 2, "additionalProperties": False},
            "'minProperties' 2 cannot be met",
        ),
        ({"type": "string", "enum": [1, 2]}, "no 'enum' value is valid against the rest of the schema"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "the types this schema allows contradict"),
        ({"anyOf": [{"type": "string", "minLength": 3, "maxLength": 1}, {"enum": [1], "type": "string"}]}, ""),
        ({"oneOf": [{"type": "string"}, {"type": "string"}]}, "exactly one branch of 'oneOf'"),
        ({"not": {}}, "the 'not' schema rejects"),
        ({"type": "string", "pattern": "^(?=x)y$"}, "could not generate a string matching the pattern"),
    ],
)
def test_bad_schemas_are_an_openai_shaped_400(schema: Any, wording: str) -> None:
    with pytest.raises(errors.InvalidRequestError) as caught:
        instance_for(schema, random.Random(0), FORMAT)
    error = caught.value
    assert error.status_code == 400 and error.type == "invalid_request_error" and error.code == "invalid_value"
    assert error.param == "response_format.json_schema.schema"
    assert error.message.startswith("Invalid schema for response_format 'answer': In context=(")
    assert wording in error.message


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    for schema in (None, [], "object", 5, True):
        with pytest.raises(errors.InvalidRequestError, match="the schema must be a JSON object"):
            instance_for(schema, random.Random(0))


def test_the_context_names_where_in_the_schema_the_problem_is() -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"minimum": "x"}}}}
    with pytest.raises(errors.InvalidRequestError) as caught:
        instance_for(schema, random.Random(0))
    assert "In context=('properties', 'items', 'items'), 'minimum'" in caught.value.message


def test_function_parameters_are_refused_in_the_live_wording() -> None:
    tool = FunctionSpec("get_weather", {"type": "object", "properties": {"a": {"type": "nope"}}}, "tools[1].parameters")
    with pytest.raises(errors.InvalidRequestError) as caught:
        check_schema(tool.parameters, tool.source)
    assert caught.value.param == "tools[1].parameters"
    assert caught.value.code == "invalid_function_parameters"
    assert caught.value.message.startswith("Invalid schema for function 'get_weather': In context=('properties', 'a')")


def test_optional_recursion_stops_past_the_depth_limit() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "child": {"$ref": "#"},
            "kids": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
    }
    for seed in range(20):
        jsonschema.validate(instance_for(schema, random.Random(seed)), schema)
    linked = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
                "required": ["next"],
            }
        },
        "$ref": "#/$defs/Node",
    }
    for seed in range(20):
        jsonschema.validate(instance_for(linked, random.Random(seed)), linked)


# -- Limits ----------------------------------------------------------------------------------


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


@pytest.mark.parametrize(
    ("schema", "wording"),
    [
        (
            {"type": "array", "minItems": 1_000_000},
            f"'minItems' is 1000000; this server generates at most {MAX_ARRAY_ITEMS}",
        ),
        ({"type": "string", "minLength": 100_000_000}, f"at most {MAX_STRING_LENGTH}"),
        ({"type": "object", "minProperties": 10**12}, f"at most {MAX_PROPERTIES}"),
        (_nested(MAX_NESTING + 5), f"nest more than {MAX_NESTING} levels"),
        (_nested(5000), f"nest more than {MAX_NESTING} levels"),
        (
            {
                "type": "array",
                "minItems": 1000,
                "items": {"type": "array", "minItems": 1000, "items": {"type": "integer"}},
            },
            f"the limit is {MAX_INSTANCE_SIZE}",
        ),
        ({"type": "string", "pattern": "^a{20000}$"}, f"of at most {MAX_STRING_LENGTH} characters"),
        ({"type": "string", "pattern": "^(?:a{1000}){1000}$"}, f"of at most {MAX_STRING_LENGTH} characters"),
    ],
)
def test_schemas_demanding_too_much_are_refused(schema: dict[str, Any], wording: str) -> None:
    with pytest.raises(errors.InvalidRequestError) as caught:
        instance_for(schema, random.Random(0), FORMAT)
    assert caught.value.param == "response_format.json_schema.schema"
    assert wording in caught.value.message


def test_a_billion_laughs_of_refs_is_refused_quickly() -> None:
    defs = {
        f"L{i}": {
            "type": "object",
            "properties": {c: {"$ref": f"#/$defs/L{i + 1}"} for c in "abcdefghij"},
            "required": list("abcdefghij"),
        }
        for i in range(12)
    }
    defs["L12"] = {"type": "string"}
    schema = {"$defs": defs, "$ref": "#/$defs/L0"}
    with pytest.raises(errors.InvalidRequestError, match="the limit is"):
        instance_for(schema, random.Random(0))


def test_optional_fan_out_stays_small() -> None:
    defs = {
        f"L{i}": {"type": "object", "properties": {c: {"$ref": f"#/$defs/L{i + 1}"} for c in "abcdefghij"}}
        for i in range(12)
    }
    defs["L12"] = {"type": "string"}
    schema = {"$defs": defs, "$ref": "#/$defs/L0"}
    for seed in range(3):
        value = instance_for(schema, random.Random(seed))
        jsonschema.validate(value, schema)
        assert len(dumps(value)) < 4 * SOFT_INSTANCE_SIZE


def test_limits_themselves_are_accepted() -> None:
    value = instance_for({"type": "array", "minItems": MAX_ARRAY_ITEMS, "items": {"type": "integer"}}, random.Random(0))
    assert len(value) == MAX_ARRAY_ITEMS
    text = instance_for({"type": "string", "minLength": MAX_STRING_LENGTH}, random.Random(0))
    assert len(text) >= MAX_STRING_LENGTH


# -- Any JSON-ish value as a schema: a value or a 400, nothing else -----------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
_KEYWORDS = [
    "type", "properties", "required", "items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "$ref", "$defs",
    "enum", "const", "minimum", "maximum", "exclusiveMinimum", "multipleOf", "minItems", "maxItems", "uniqueItems",
    "minLength", "maxLength", "pattern", "format", "additionalProperties", "minProperties", "maxProperties",
    "patternProperties", "propertyNames",
]  # fmt: skip
_TYPE_NAMES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])
_REFS = st.sampled_from(["#", "#/$defs/a", "#/properties/a", "#/$defs/b", "#/items"])
_schemaish = st.recursive(
    st.booleans() | st.fixed_dictionaries({}, optional={"type": _TYPE_NAMES | st.lists(_TYPE_NAMES, max_size=3)}),
    lambda children: st.dictionaries(
        st.sampled_from(_KEYWORDS),
        children
        | _json
        | _TYPE_NAMES
        | _REFS
        | st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        max_size=5,
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_json | _schemaish, seed=st.integers(0, 2**32))
def test_any_value_as_a_schema_gives_a_value_or_a_400(schema: Any, seed: int) -> None:
    try:
        instance_for(schema, random.Random(seed), FORMAT)
    except errors.MockAPIError as exc:
        assert exc.status_code == 400 and exc.param == FORMAT.param
