"""Whether a value is valid against a schema, for the keywords the builder generates.

The builder asks this where construction alone cannot promise validity: which
``enum`` members fit the rest of the schema, whether a ``oneOf`` value matches
exactly one branch, whether a value avoids a ``not``, whether array items are
distinct. It follows the semantics of the ``jsonschema`` package (Draft 2020-12),
including its float ``multipleOf`` test and its ``1 != True`` equality.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from mockserver.config import patterns as regexes
from mockserver.engine.structured.schema import SchemaError, Schemas, property_schema
from mockserver.engine.structured.strings import is_format

# Checks nest at most this deep: a value's levels plus the $refs and combinators at each, and a
# $ref that points back at the same value (``{"anyOf": [{"$ref": "#"}]}``) stops here.
MAX_MATCH_STEPS = 100


def matches(schemas: Schemas, value: Any, schema: Any, steps: int = 0) -> bool:
    if steps > MAX_MATCH_STEPS:
        raise SchemaError("the schema refers to itself too often to check a value against it")
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        return True
    step = steps + 1
    if "$ref" in schema and not matches(schemas, value, schemas.resolve(schema["$ref"]), step):
        return False
    for part in schema.get("allOf") or ():
        if not matches(schemas, value, part, step):
            return False
    if "anyOf" in schema and _count(schemas, value, schema["anyOf"], step, stop_at=1) == 0:
        return False
    if "oneOf" in schema and _count(schemas, value, schema["oneOf"], step, stop_at=2) != 1:
        return False
    if "not" in schema and matches(schemas, value, schema["not"], step):
        return False
    if "const" in schema and not equal(value, schema["const"]):
        return False
    if "enum" in schema and not any(equal(value, member) for member in schema["enum"]):
        return False
    if "type" in schema:
        kinds = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not any(is_type(value, kind) for kind in kinds):
            return False
    if isinstance(value, dict):
        return _object_matches(schemas, value, schema, step)
    if isinstance(value, list):
        return _array_matches(schemas, value, schema, step)
    if isinstance(value, str):
        return _string_matches(value, schema)
    if is_type(value, "number"):
        return number_matches(value, schema)
    return True


def count_matches(schemas: Schemas, value: Any, branches: list[Any]) -> int:
    return _count(schemas, value, branches, 0, stop_at=len(branches))


def _count(schemas: Schemas, value: Any, branches: list[Any], step: int, *, stop_at: int) -> int:
    found = 0
    for branch in branches:
        if matches(schemas, value, branch, step):
            found += 1
            if found >= stop_at:
                break
    return found


def is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    return isinstance(value, expected.get(kind, ()))


def equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``1 != True``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False
    return bool(a == b)


def is_multiple(value: float, step: float) -> bool:
    """``jsonschema``'s own test, float quirks included, so what passes here passes there."""
    if isinstance(step, float):
        quotient = value / step
        try:
            return int(quotient) == quotient
        except (OverflowError, ValueError):
            return (Fraction(value) / Fraction(step)).denominator == 1
    return value % step == 0


def number_matches(value: float, schema: Mapping[str, Any]) -> bool:
    if "minimum" in schema and value < schema["minimum"]:
        return False
    if "maximum" in schema and value > schema["maximum"]:
        return False
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return False
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        return False
    return "multipleOf" not in schema or is_multiple(value, schema["multipleOf"])


def _string_matches(value: str, schema: Mapping[str, Any]) -> bool:
    if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", math.inf):
        return False
    if "pattern" in schema and not regexes.schema_search(schema["pattern"], value):
        return False
    return is_format(value, schema.get("format"))


def _object_matches(schemas: Schemas, value: dict[str, Any], schema: Mapping[str, Any], step: int) -> bool:
    if not all(name in value for name in schema.get("required") or ()):
        return False
    if not schema.get("minProperties", 0) <= len(value) <= schema.get("maxProperties", math.inf):
        return False
    for name, item in value.items():
        if "propertyNames" in schema and not matches(schemas, name, schema["propertyNames"], step):
            return False
        if not matches(schemas, item, property_schema(schema, name), step):
            return False
    return True


def _array_matches(schemas: Schemas, value: list[Any], schema: Mapping[str, Any], step: int) -> bool:
    if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", math.inf):
        return False
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", True)
    for i, item in enumerate(value):
        if not matches(schemas, item, prefix[i] if i < len(prefix) else items, step):
            return False
    return not schema.get("uniqueItems") or len({canonical(v) for v in value}) == len(value)


def canonical(value: Any) -> str:
    """A key equal for exactly the values :func:`equal` calls equal."""
    return json.dumps(_normal(value), sort_keys=True)


def _normal(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value
