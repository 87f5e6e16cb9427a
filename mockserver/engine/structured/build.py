"""Building one JSON value from a checked schema, choosing with the request's ``random.Random``.

Every choice keeps to subschemas that have a finite instance (see
:class:`~mockserver.engine.structured.schema.Schemas`). Past :data:`MAX_DEPTH`, or once
the value has grown past :data:`SOFT_INSTANCE_SIZE`, only what the schema requires
is built: no optional properties, arrays at ``minItems``, the smallest branch of a
choice; that always ends, because a required part is always smaller than its whole.
Where construction alone cannot promise validity (``oneOf``, ``not``, ``enum`` under
other keywords, ``uniqueItems``) the value is checked with
:func:`~mockserver.engine.structured.match.matches` and, failing that, the schema refused.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from mockserver.config import patterns as regexes
from mockserver.engine.structured.match import canonical, count_matches, matches, number_matches
from mockserver.engine.structured.schema import (
    MAX_ARRAY_ITEMS,
    MAX_DEPTH,
    MAX_NESTING,
    SchemaError,
    Schemas,
    kind_of,
    property_schema,
)
from mockserver.engine.structured.strings import WORDS, string_for

DEFAULT_ARRAY_ITEMS = (1, 3)
DEFAULT_NUMBER_SPAN = 100  # a bound on one side only: the other is this far away
SOFT_INSTANCE_SIZE = 20_000  # JSON characters; past this only required content is added
MAX_BUILD_STEPS = 50_000  # subschemas visited while building, whatever the schema's shape
MAX_CHOICES_PER_LEVEL = 8  # anyOf/oneOf nested (through $refs) inside one another for one value
MAX_BUILD_NESTING = 96  # build() calls in progress at once; keeps well inside Python's recursion limit
CHOICE_ATTEMPTS = 3  # tries per oneOf branch, or at avoiding a 'not'
UNIQUE_ATTEMPTS = 20  # tries at an item that differs from the ones before it
ENUMERABLE_INTEGERS = 1000  # integer ranges this small are listed for uniqueItems
_NO_VALUE = object()


def _span(bound: float) -> float:
    return max(DEFAULT_NUMBER_SPAN, abs(bound) * 1e-6)


Context = tuple[str | int, ...]


class Builder:
    def __init__(self, schemas: Schemas, rng: random.Random) -> None:
        self.schemas = schemas
        self.rng = rng
        self.spent = 0
        self.steps = 0
        self.nested = 0  # build() calls in progress: levels of the value, plus oneOf/anyOf/not at each
        self.choices: dict[int, int] = {}  # anyOf/oneOf choices in progress, by depth

    def build(self, schema: Any, depth: int, context: Context) -> Any:
        self.steps += 1
        if self.steps > MAX_BUILD_STEPS:
            raise SchemaError("the schema is too complex to build an instance of", context)
        if depth > MAX_NESTING:
            raise SchemaError(f"an instance would nest more than {MAX_NESTING} levels deep", context)
        if self.nested >= MAX_BUILD_NESTING:
            raise SchemaError("the schema refers to itself too often without adding a level", context)
        if schema is True:
            return self._spend(string_for({}, self.rng))
        if not isinstance(schema, Mapping):
            raise SchemaError("no value is valid against the schema false", context)
        self.nested += 1
        try:
            return self._build(self.schemas.flatten(schema), depth, context)
        except SchemaError as exc:
            if exc.context or not context:
                raise
            raise SchemaError(exc.detail, context) from None
        finally:
            self.nested -= 1

    def _build(self, schema: Mapping[str, Any], depth: int, context: Context) -> Any:
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._choice(schema, key, depth, context)
        if "not" in schema:
            return self._avoiding(schema, depth, context)
        if "const" in schema or "enum" in schema:
            return self._listed(schema)
        kind = self._kind(schema, depth)
        if kind == "object":
            return self._object(schema, depth, context)
        if kind == "array":
            return self._array(schema, depth, context)
        if kind == "string":
            return self._spend(string_for(schema, self.rng))
        if kind in ("integer", "number"):
            return self._spend(self._number(schema, integer=kind == "integer"))
        return self._spend(self.rng.random() < 0.5 if kind == "boolean" else None)

    def _minimal(self, depth: int) -> bool:
        return depth >= MAX_DEPTH or self.spent > SOFT_INSTANCE_SIZE

    def _spend(self, value: Any) -> Any:
        self.spent += len(value) + 2 if isinstance(value, str) else 4
        return value

    # -- Choices ----------------------------------------------------------------------------------

    def _choice(self, schema: Mapping[str, Any], key: str, depth: int, context: Context) -> Any:
        branches = schema[key]
        rest = {k: v for k, v in schema.items() if k != key}
        order = [i for i, branch in enumerate(branches) if self.schemas.finishes(branch)]
        if self._minimal(depth):
            order.sort(key=lambda i: self.schemas.min_size(branches[i]))
        else:
            self.rng.shuffle(order)
        self.choices[depth] = self.choices.get(depth, 0) + 1
        if self.choices[depth] > MAX_CHOICES_PER_LEVEL:
            raise SchemaError(
                f"more than {MAX_CHOICES_PER_LEVEL} nested anyOf/oneOf choices for one value; "
                "the schema is too complex to build an instance of",
                context,
            )
        try:
            return self._first_branch(branches, order, rest, key, depth, context)
        finally:
            self.choices[depth] -= 1

    def _first_branch(
        self, branches: list[Any], order: list[int], rest: Mapping[str, Any], key: str, depth: int, context: Context
    ) -> Any:
        first_error: SchemaError | None = None
        for i in order:
            candidate = self.schemas.flatten({"allOf": [rest, branches[i]]})
            try:
                for _ in range(CHOICE_ATTEMPTS if key == "oneOf" else 1):
                    value = self.build(candidate, depth, (*context, key, i))
                    if key == "anyOf" or count_matches(self.schemas, value, branches) == 1:
                        return value
            except SchemaError as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error
        raise SchemaError(f"no value could be built that matches exactly one branch of '{key}'", context)

    def _avoiding(self, schema: Mapping[str, Any], depth: int, context: Context) -> Any:
        rest = {k: v for k, v in schema.items() if k != "not"}
        for _ in range(CHOICE_ATTEMPTS):
            value = self.build(rest, depth, context)
            if not matches(self.schemas, value, schema["not"]):
                return value
        raise SchemaError("no value could be built that the 'not' schema rejects", context)

    def _listed(self, schema: Mapping[str, Any]) -> Any:
        key = "const" if "const" in schema else "enum"
        listed = [schema["const"]] if key == "const" else list(schema["enum"])
        rest = {k: v for k, v in schema.items() if k != key}
        valid = [value for value in listed if matches(self.schemas, value, rest)]
        if not valid:
            raise SchemaError(f"no '{key}' value is valid against the rest of the schema")
        return self._spend(self.rng.choice(valid))

    def _kind(self, schema: Mapping[str, Any], depth: int) -> str:
        kinds = [k for k in kind_of(schema) if self.schemas.kind_size(schema, k) < math.inf]
        if not kinds:
            raise SchemaError("the types this schema allows contradict each other, or none can be built")
        if self._minimal(depth):
            return min(kinds, key=lambda k: self.schemas.kind_size(schema, k))
        concrete = [k for k in kinds if k != "null"]
        if not concrete or ("null" in kinds and self.rng.random() < 0.25):
            return "null"
        return self.rng.choice(concrete)

    # -- Objects and arrays -----------------------------------------------------------------------

    def _object(self, schema: Mapping[str, Any], depth: int, context: Context) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = list(dict.fromkeys(schema.get("required") or ()))
        fewest = int(schema.get("minProperties", 0))
        most = int(schema.get("maxProperties", math.inf)) if "maxProperties" in schema else None
        if most is not None and len(required) > most:
            raise SchemaError(f"{len(required)} properties are required but 'maxProperties' is {most}")
        if most is not None and fewest > most:
            raise SchemaError(f"'minProperties' {fewest} is greater than 'maxProperties' {most}")
        out: dict[str, Any] = {}
        for name in required:
            out[name] = self._property(schema, name, depth, context)
        minimal = self._minimal(depth)
        for name in properties:
            if name in out or (most is not None and len(out) >= most):
                continue
            wanted = len(out) < fewest or (not minimal and self.rng.random() < 0.5)
            if wanted and self.schemas.finishes(property_schema(schema, name)):
                out[name] = self._property(schema, name, depth, context)
        self._fill_properties(schema, out, fewest, depth, context)
        return out

    def _property(self, schema: Mapping[str, Any], name: str, depth: int, context: Context) -> Any:
        self.spent += len(name) + 4
        return self.build(property_schema(schema, name), depth + 1, (*context, "properties", name))

    def _fill_properties(
        self, schema: Mapping[str, Any], out: dict[str, Any], fewest: int, depth: int, context: Context
    ) -> None:
        """Add made-up properties until ``minProperties`` is met, as ``additionalProperties`` allows."""
        patterns = list(schema.get("patternProperties") or ())
        closed = schema.get("additionalProperties", True) is False
        for attempt in range(2 * (fewest - len(out)) + 20 if len(out) < fewest else 0):
            if len(out) >= fewest:
                return
            if isinstance(schema.get("propertyNames"), Mapping):
                name = self.build(schema["propertyNames"], depth + 1, (*context, "propertyNames"))
            elif closed and patterns:
                pattern = self.rng.choice(patterns)
                name = string_for({"pattern": pattern, "maxLength": 40}, self.rng)
                longer = f"{name}{self.rng.choice(WORDS).lower()}{attempt}"  # when the pattern leaves the end open
                name = longer if name in out and regexes.schema_search(pattern, longer) else name
            else:
                name = f"{self.rng.choice(WORDS).lower()}_{attempt}"
            if isinstance(name, str) and name not in out and self.schemas.finishes(property_schema(schema, name)):
                out[name] = self._property(schema, name, depth, context)
        if len(out) < fewest:
            raise SchemaError(f"'minProperties' {fewest} cannot be met: no more properties are allowed", context)

    def _array(self, schema: Mapping[str, Any], depth: int, context: Context) -> list[Any]:
        prefix: list[Any] = schema.get("prefixItems") or []
        items = schema.get("items", True)
        room = MAX_ARRAY_ITEMS if self.schemas.finishes(items) else len(prefix)
        room = min([room] + [i for i, sub in enumerate(prefix) if not self.schemas.finishes(sub)])
        fewest = int(schema.get("minItems", 0))
        most = min(int(schema.get("maxItems", max(fewest, DEFAULT_ARRAY_ITEMS[1]))), room)
        if fewest > most:
            raise SchemaError(f"'minItems' {fewest} cannot be met: at most {most} items are allowed here")
        if self._minimal(depth):
            count = fewest
        else:
            count = self.rng.randint(max(fewest, min(DEFAULT_ARRAY_ITEMS[0], most)), most)
        values: list[Any] = []
        seen: set[str] = set()
        for i in range(count):
            sub, where = (prefix[i], "prefixItems") if i < len(prefix) else (items, "items")
            if not schema.get("uniqueItems"):
                values.append(self.build(sub, depth + 1, (*context, where, i)))
                continue
            value = self._distinct(sub, seen, depth, (*context, where, i))
            if value is _NO_VALUE:
                if i >= fewest:
                    break
                raise SchemaError(f"'uniqueItems' with 'minItems' {fewest}: the items allow only {i} distinct values")
            seen.add(canonical(value))
            values.append(value)
        return values

    def _distinct(self, schema: Any, seen: set[str], depth: int, context: Context) -> Any:
        domain = self._domain(schema)
        if domain is not None:
            fresh = [v for v in domain if canonical(v) not in seen]
            return self._spend(self.rng.choice(fresh)) if fresh else _NO_VALUE
        for _ in range(UNIQUE_ATTEMPTS):
            value = self.build(schema, depth + 1, context)
            if canonical(value) not in seen:
                return value
        return _NO_VALUE

    def _domain(self, schema: Any) -> list[Any] | None:
        """Every value ``schema`` allows, when that is a short list (enums, booleans, small integer ranges)."""
        if isinstance(schema, bool):
            return None if schema else []
        flat = self.schemas.flatten(schema)
        if any(k in flat for k in ("anyOf", "oneOf", "not")):
            return None
        if "const" in flat or "enum" in flat:
            listed = [flat["const"]] if "const" in flat else flat["enum"]
            return [v for v in listed if matches(self.schemas, v, flat)]
        values: list[Any] = []
        for kind in kind_of(flat):
            if kind == "boolean":
                values += [False, True]
            elif kind == "null":
                values.append(None)
            elif kind == "integer" and all(k in flat for k in ("minimum", "maximum")):
                low, high = math.ceil(flat["minimum"]), math.floor(flat["maximum"])
                if high - low > ENUMERABLE_INTEGERS:
                    return None
                values += [n for n in range(low, high + 1) if number_matches(n, flat)]
            else:
                return None
        return values

    # -- Numbers ----------------------------------------------------------------------------------

    def _number(self, schema: Mapping[str, Any], *, integer: bool) -> float:
        lows = [schema[k] for k in ("minimum", "exclusiveMinimum") if k in schema]
        highs = [schema[k] for k in ("maximum", "exclusiveMaximum") if k in schema]
        # With one bound, the other is DEFAULT_NUMBER_SPAN away, or further where floats that large
        # are too coarse for such a step to register.
        low = max(lows) if lows else (min(highs) - _span(min(highs)) if highs else 0)
        high = min(highs) if highs else low + _span(low)
        if low > high:
            raise SchemaError(f"the lower bound {low} is greater than the upper bound {high}")
        if "multipleOf" in schema:
            return self._multiple(schema, low, high, integer=integer)
        if integer:
            first, last = math.ceil(low), math.floor(high)
            first += not number_matches(first, schema)
            last -= not number_matches(last, schema)
            if first > last:
                raise SchemaError(f"no integer lies between the bounds {low} and {high}")
            return self.rng.randint(first, last)
        span = high - low
        if not math.isfinite(span):  # both bounds huge and of opposite signs
            low, high, span = -1e6, 1e6, 2e6
        for _ in range(8):
            raw = low + span * self.rng.random()
            for value in (round(raw, 2), raw):
                if number_matches(value, schema):
                    return value
        for value in (low / 2 + high / 2, low, high):
            if number_matches(value, schema):
                return value
        raise SchemaError(f"no number lies between the bounds {low} and {high}")

    def _multiple(self, schema: Mapping[str, Any], low: float, high: float, *, integer: bool) -> float:
        step = schema["multipleOf"]
        first = math.ceil(Fraction(low) / Fraction(step))
        last = math.floor(Fraction(high) / Fraction(step))
        if first <= last:
            tries = [self.rng.randint(first, last) for _ in range(16)]
            tries += [*range(first, min(last, first + 64) + 1), *range(last, max(first, last - 64) - 1, -1)]
            for k in tries:
                for value in _renderings(k, step, integer=integer):
                    if number_matches(value, schema):
                        return value
        kind = "integer" if integer else "number"
        raise SchemaError(f"no {kind} multiple of {step} lies between the bounds {low} and {high}")


def _renderings(k: int, step: float, *, integer: bool) -> list[float]:
    """``k * step`` written the ways that might pass a float ``multipleOf`` test."""
    exact = Fraction(k) * Fraction(step)
    if integer:
        whole = [int(exact)] if exact.denominator == 1 else []
        return [*whole, round(float(exact))]
    exponent = Decimal(repr(float(step))).as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    whole = [int(exact)] if exact.denominator == 1 else []
    return [*whole, float(exact), round(float(exact), places)]
