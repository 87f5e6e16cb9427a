"""Realistic schemas, of the kind OpenAI's structured-output and function-calling guides use:
every generated instance validates under ``jsonschema`` Draft 2020-12, formats checked."""

from __future__ import annotations

import datetime
import random
import re
from typing import Any
from urllib.parse import urlparse

import jsonschema
import pytest

from mockserver.engine.structured import instance_for

FORMATS = jsonschema.FormatChecker()  # the package's own checks (date, email, ipv4, ipv6, uuid, ...)


# jsonschema checks these only with optional packages installed; plain stdlib versions instead.
@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", value):
        return False
    datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


@FORMATS.checks("time")
def _time(value: object) -> bool:
    return not isinstance(value, str) or bool(
        re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]\d{2}:\d{2})", value)
    )


@FORMATS.checks("duration")
def _duration(value: object) -> bool:
    pattern = r"P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?"
    return not isinstance(value, str) or bool(re.fullmatch(pattern, value))


@FORMATS.checks("uri")
def _uri(value: object) -> bool:
    return not isinstance(value, str) or (bool(urlparse(value).scheme) and not re.search(r"\s", value))


@FORMATS.checks("hostname")
def _hostname(value: object) -> bool:
    label = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    return not isinstance(value, str) or bool(re.fullmatch(rf"{label}(\.{label})*", value))


def _object(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    """A strict-mode object: every property required, no others allowed (unless overridden)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
        **more,
    }


STRING = {"type": "string"}
CORPUS: dict[str, dict[str, Any]] = {
    "get_weather": _object(
        {"location": {"type": "string", "description": "City and country e.g. Bogotá, Colombia"},
         "units": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", None]}}
    ),
    "math_reasoning": _object(
        {"steps": {"type": "array", "items": _object({"explanation": STRING, "output": STRING})},
         "final_answer": STRING}
    ),
    "calendar_event": _object(
        {"name": STRING, "date": {"type": "string", "format": "date"},
         "participants": {"type": "array", "items": STRING, "minItems": 1}}
    ),
    "research_paper": _object(
        {"title": STRING, "authors": {"type": "array", "items": STRING}, "abstract": STRING,
         "keywords": {"type": "array", "items": STRING, "uniqueItems": True, "minItems": 3, "maxItems": 8}}
    ),
    "moderation": _object(
        {"is_violating": {"type": "boolean"},
         "category": {"type": ["string", "null"], "enum": ["violence", "sexual", "self_harm", None]},
         "explanation_if_violating": {"type": ["string", "null"]}}
    ),
    "ui_recursive": {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["div", "button", "header", "section", "field", "form"]},
            "label": STRING,
            "children": {"type": "array", "items": {"$ref": "#"}},
            "attributes": {"type": "array", "items": _object({"name": STRING, "value": STRING})},
        },
        "required": ["type", "label", "children", "attributes"],
        "additionalProperties": False,
    },
    "linked_list": {
        "type": "object",
        "properties": {"linked_list": {"$ref": "#/$defs/linked_list_node"}},
        "$defs": {
            "linked_list_node": _object(
                {"value": {"type": "number"},
                 "next": {"anyOf": [{"$ref": "#/$defs/linked_list_node"}, {"type": "null"}]}}
            )
        },
        "required": ["linked_list"],
        "additionalProperties": False,
    },
    "discriminated_union": _object(
        {"item": {"anyOf": [
            _object({"type": {"const": "user"}, "name": STRING, "age": {"type": "integer", "minimum": 0}}),
            _object({"type": {"const": "address"}, "number": STRING, "street": STRING, "city": STRING}),
        ]}}
    ),
    "one_of_shapes": {"oneOf": [
        _object({"kind": {"const": "circle"}, "radius": {"type": "number", "exclusiveMinimum": 0}}),
        _object({"kind": {"const": "square"}, "side": {"type": "number", "minimum": 1, "maximum": 10}}),
        _object({"kind": {"const": "polygon"}, "sides": {"type": "integer", "minimum": 3, "maximum": 12}}),
    ]},
    "one_of_overlapping": {"type": "object", "properties": {"value": {"oneOf": [
        {"type": "integer", "multipleOf": 3}, {"type": "integer", "multipleOf": 5},
    ]}}, "required": ["value"]},
    "codes": _object(
        {"airport": {"type": "string", "pattern": "^[A-Z]{3}$"},
         "phone": {"type": "string", "pattern": r"^\+?[1-9]\d{1,14}$"},
         "sku": {"type": "string", "pattern": r"^(SKU|PRD)-\d{4}-[a-z]{2}$"},
         "color": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"},
         "slug": {"type": "string", "pattern": r"^[a-z0-9]+(?:-[a-z0-9]+)*$", "minLength": 5, "maxLength": 30},
         "twice": {"type": "string", "pattern": r"^(ab|cd)-\1$"},
         "contains_digit": {"type": "string", "pattern": r"\d"}}
    ),
    "formats": _object(
        {f.replace("-", "_"): {"type": "string", "format": f}
         for f in ("date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri")}
    ),
    "numbers": _object(
        {"price": {"type": "number", "minimum": 0, "maximum": 1000, "multipleOf": 0.01},
         "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
         "step": {"type": "integer", "multipleOf": 5, "exclusiveMinimum": 0, "exclusiveMaximum": 50},
         "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
         "tenth": {"type": "number", "multipleOf": 0.1, "minimum": -3, "maximum": 3},
         "big": {"type": "integer", "minimum": 10**15},
         "negative": {"type": "number", "maximum": -100.5}}
    ),
    "unique_small_enum": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "uniqueItems": True,
                          "minItems": 3},
    "unique_booleans": {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 2},
    "unique_ints": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
                    "uniqueItems": True, "minItems": 10},
    "unique_objects": {"type": "array", "uniqueItems": True, "minItems": 6,
                       "items": _object({"id": {"type": "integer"}, "tag": {"enum": ["a", "b"]}})},
    "tuple_closed": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}, STRING],
                     "items": False, "minItems": 2},
    "tuple_open": {"type": "array", "prefixItems": [{"const": "header"}, {"type": "integer"}],
                   "items": {"type": "boolean"}, "minItems": 4, "maxItems": 6},
    "required_not_listed": {"type": "object", "properties": {"a": STRING}, "required": ["a", "b", "c"]},
    "required_additional_schema": {"type": "object", "properties": {}, "required": ["x", "y"],
                                   "additionalProperties": {"type": "integer", "minimum": 7}},
    "pattern_properties": {"type": "object", "patternProperties": {"^x-": {"type": "string"}},
                           "additionalProperties": False, "minProperties": 2},
    "min_max_properties": {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdef"},
                           "minProperties": 4, "maxProperties": 5},
    "additional_schema_min": {"type": "object", "additionalProperties": {"type": "boolean"}, "minProperties": 3},
    "const_enum": _object(
        {"version": {"const": 2}, "mode": {"enum": ["fast", "slow", 3, None, True]},
         "flags": {"const": {"a": [1, 2]}}}
    ),
    "nullable": _object(
        {"note": {"type": ["string", "null"], "maxLength": 5},
         "count": {"type": ["integer", "null"], "minimum": 1},
         "tags": {"type": ["array", "null"], "items": STRING}}
    ),
    "all_of_merge": {"allOf": [
        {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]},
        {"properties": {"created": {"type": "string", "format": "date-time"}}, "required": ["created"]},
        {"properties": {"id": {"minLength": 36}}, "minProperties": 2},
    ]},
    "not_keyword": {"type": "object", "properties": {"status": {"type": "string", "not": {"enum": ["deleted"]}},
                    "n": {"type": "integer", "minimum": 0, "maximum": 3, "not": {"const": 2}}},
                    "required": ["status", "n"]},
    "refs_and_defs": {
        "$defs": {
            "money": _object({"amount": {"type": "number", "minimum": 0, "multipleOf": 0.01},
                              "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}}),
            "line": _object(
                {"sku": STRING, "qty": {"type": "integer", "minimum": 1}, "price": {"$ref": "#/$defs/money"}}
            ),
        },
        **_object({"id": STRING, "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
                   "total": {"$ref": "#/$defs/money"},
                   "shipping": {"anyOf": [{"$ref": "#/$defs/money"}, {"type": "null"}]}}),
    },
    "tool_search": _object(
        {"query": {"type": "string", "minLength": 1, "maxLength": 200},
         "filters": _object({"since": {"type": ["string", "null"], "format": "date"},
                             "domains": {"type": "array", "items": {"type": "string", "format": "hostname"},
                                         "maxItems": 5}}),
         "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}}
    ),
    "any_of_types": {"type": "array", "minItems": 5, "items": {"anyOf": [
        {"type": "string", "format": "email"}, {"type": "integer", "minimum": 100}, {"type": "null"},
    ]}},
    "long_strings": {"type": "array", "minItems": 2, "maxItems": 2,
                     "items": {"type": "string", "minLength": 300, "maxLength": 310}},
    "pydantic_style": {
        "$defs": {"Status": {"enum": ["open", "closed"], "title": "Status", "type": "string"}},
        "properties": {"title": {"title": "Title", "type": "string"},
                       "status": {"$ref": "#/$defs/Status", "default": "open"},
                       "score": {"anyOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "null"}],
                                 "default": None}},
        "required": ["title"], "title": "Ticket", "type": "object",
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_instances_validate_for_twenty_seeds(name: str) -> None:
    schema = CORPUS[name]
    validator = jsonschema.Draft202012Validator(schema, format_checker=FORMATS)
    jsonschema.Draft202012Validator.check_schema(schema)
    for seed in range(20):
        instance = instance_for(schema, random.Random(seed))
        errors = [e.message for e in validator.iter_errors(instance)]
        assert not errors, (seed, instance, errors)


def test_the_corpus_is_varied() -> None:
    assert len(CORPUS) >= 30
    values = {repr(instance_for(CORPUS["codes"], random.Random(seed))) for seed in range(20)}
    assert len(values) == 20


def test_a_recursive_required_tree_keeps_small() -> None:
    for seed in range(20):
        instance = instance_for(CORPUS["ui_recursive"], random.Random(seed))
        assert len(repr(instance)) < 100_000
