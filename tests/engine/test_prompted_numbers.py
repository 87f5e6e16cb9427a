"""Numbers a prompt writes out of any size: one too large for a float is passed over, never a crash."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest

from mockserver.engine.structured import FunctionSpec, Prompt, call_arguments
from mockserver.engine.structured.match import is_type


def arguments(prompt: str, schema: dict[str, Any]) -> Any:
    parameters = {"type": "object", "properties": {"input": schema}, "required": ["input"]}
    return call_arguments(FunctionSpec("magic_function", parameters), random.Random(1), Prompt.of(prompt, []))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer"},
        {"type": "number"},
        {"type": "number", "multipleOf": 0.5},
        {},
        {"type": "array", "items": {"type": "integer"}},
    ],
)
@pytest.mark.parametrize("written", ["9" * 400, "-" + "9" * 400, "[" + "9" * 400 + "]"])
def test_an_integer_past_the_float_range_keeps_the_generated_value(schema: dict[str, Any], written: str) -> None:
    parameters = {"type": "object", "properties": {"input": schema}, "required": ["input"]}
    got = arguments(f"what is magic_function({written})?", schema)
    jsonschema.validate(got, parameters)
    assert got["input"] != int(written.strip("[]")) and got["input"] != [int(written.strip("[]"))]


def test_an_integer_within_the_range_is_still_taken_exactly() -> None:
    assert arguments("what is magic_function(12345678901234567890)?", {"type": "integer"}) == {
        "input": 12345678901234567890
    }


def test_is_type_needs_no_float_for_an_integer() -> None:
    assert is_type(10**400, "integer") and is_type(2.0, "integer") and not is_type(True, "integer")
    assert not is_type(2.5, "integer")
