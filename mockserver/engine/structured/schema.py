"""Reading a JSON Schema before anything is built from it: checks, limits, ``$ref`` and ``allOf``.

:class:`Schemas` wraps one root schema. Building it checks every subschema once
(keyword types, ``$ref`` targets, the limits below), so a bad schema is refused
whatever the seed, and then answers the builder's questions: what a ``$ref`` or an
``allOf`` flattens to, and how small the smallest instance of a subschema is.
That size is infinite when no finite instance exists (a required ``$ref`` loop),
and the builder only ever descends into subschemas whose size is finite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

import orjson

from mockserver.config import patterns as regexes
from mockserver.engine.structured.merge import merge
from mockserver.errors import describe

# Past this depth of the generated value, optional content is left out and arrays keep to minItems.
MAX_DEPTH = 6
# Hard limits on what a schema may demand; beyond them the request is refused with a 400.
MAX_NESTING = 32  # levels of subschemas in the document, and of the generated value
MAX_ARRAY_ITEMS = 1000  # minItems, and the length of prefixItems
MAX_STRING_LENGTH = 10_000  # minLength, and strings a pattern forces
MAX_PROPERTIES = 1000  # minProperties
MAX_SCHEMA_NODES = 10_000  # subschemas in one document
MAX_REF_HOPS = 32  # $ref / allOf indirections at one place
MAX_INSTANCE_SIZE = 200_000  # JSON characters the smallest valid instance may need

TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_VALUES = ("additionalProperties", "items", "not", "propertyNames", "contains", "if", "then", "else")
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
COUNT_LIMITS = {
    "minLength": MAX_STRING_LENGTH,
    "minItems": MAX_ARRAY_ITEMS,
    "minProperties": MAX_PROPERTIES,
    "maxLength": None,
    "maxItems": None,
    "maxProperties": None,
}
_INFINITE = math.inf


class SchemaError(ValueError):
    """A schema that cannot be used, and where in it: ``In context=('properties', 'a'), ...``."""

    def __init__(self, detail: str, context: tuple[str | int, ...] = ()) -> None:
        self.detail = detail
        self.context = context
        super().__init__(f"In context={context!r}, {detail}")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def kind_of(schema: Mapping[str, Any]) -> list[str]:
    """The types a schema allows: its ``type``, or what its keywords imply (a string when nothing does)."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return list(dict.fromkeys(declared))
    if any(k in schema for k in ("properties", "required", "additionalProperties", "patternProperties")):
        return ["object"]
    if any(k in schema for k in ("minProperties", "maxProperties")):
        return ["object"]
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")):
        return ["array"]
    if any(k in schema for k in NUMBER_KEYWORDS):
        return ["number"]
    return ["string"]


class Schemas:
    """One checked root schema, with ``$ref`` resolution, ``allOf`` merging and smallest sizes."""

    def __init__(self, root: Any) -> None:
        if not isinstance(root, Mapping):
            raise SchemaError(f"the schema must be a JSON object, not {describe(root)}")
        self.root = root
        self._checked: set[int] = set()
        self._refs: dict[str, Any] = {}
        self._flat: dict[str, Any] = {}
        self._flattening: set[str] = set()
        self._nodes = 0
        self._solved = False  # once the $ref sizes are final, sizes of subschemas can be cached
        self._check(root, (), 0)
        self._sizes: dict[int, tuple[Any, float]] = {}
        self._ref_sizes = self._solve_ref_sizes()
        self._solved = True
        smallest = self.min_size(root)
        if smallest == _INFINITE:
            raise self._why_no_instance(root, (), {})
        if smallest > MAX_INSTANCE_SIZE:
            raise SchemaError(
                f"the smallest valid instance needs about {int(smallest)} characters of JSON; "
                f"the limit is {MAX_INSTANCE_SIZE}"
            )

    # -- Checks -----------------------------------------------------------------------------------

    def _check(self, schema: Any, context: tuple[str | int, ...], nesting: int) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, Mapping):
            raise SchemaError(f"a schema must be an object or a boolean, not {describe(schema)}", context)
        if id(schema) in self._checked:
            return
        self._checked.add(id(schema))
        self._nodes += 1
        if self._nodes > MAX_SCHEMA_NODES:
            raise SchemaError(f"the schema has more than {MAX_SCHEMA_NODES} subschemas", context)
        if nesting > MAX_NESTING:
            raise SchemaError(f"subschemas nest more than {MAX_NESTING} levels deep", context)
        self._check_keywords(schema, context)
        for key, sub, where in _children(schema):
            self._check(sub, (*context, key, *where), nesting + 1)
        ref = schema.get("$ref")
        if ref is not None:
            self._check(self.resolve(ref, context), (*context, "$ref"), nesting + 1)

    def _check_keywords(self, schema: Mapping[str, Any], context: tuple[str | int, ...]) -> None:
        def fail(detail: str) -> SchemaError:
            return SchemaError(detail, context)

        declared = schema.get("type")
        kinds = [declared] if isinstance(declared, str) else declared
        if "type" in schema and (not isinstance(kinds, list) or not kinds):
            raise fail(f"'type' must be a type name or a non-empty array of them, not {describe(declared)}")
        for kind in kinds or []:
            if kind not in TYPES:
                raise fail(f"'type' {kind!r} is not one of {', '.join(TYPES)}")
        for key in SCHEMA_MAPS:
            if key in schema and not isinstance(schema[key], Mapping):
                raise fail(f"'{key}' must be an object, not {describe(schema[key])}")
        for key in SCHEMA_LISTS:
            if key in schema and (not isinstance(schema[key], list) or not schema[key]):
                raise fail(f"'{key}' must be a non-empty array of schemas, not {describe(schema[key])}")
        if isinstance(schema.get("items"), list):
            raise fail("'items' must be a schema; use 'prefixItems' for a tuple")
        if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
            raise fail(f"'enum' must be a non-empty array, not {describe(schema['enum'])}")
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
            raise fail("'required' must be an array of property names")
        for key in NUMBER_KEYWORDS:
            if key in schema and not is_number(schema[key]):
                raise fail(f"'{key}' must be a finite number, not {describe(schema[key])}")
        if "multipleOf" in schema and schema["multipleOf"] <= 0:
            raise fail("'multipleOf' must be greater than 0")
        for key, limit in COUNT_LIMITS.items():
            if key not in schema:
                continue
            value = schema[key]
            if not is_number(value) or value < 0 or value != int(value):
                raise fail(f"'{key}' must be a non-negative integer, not {describe(value)}")
            if limit is not None and value > limit:
                raise fail(f"'{key}' is {int(value)}; this server generates at most {limit}")
        if "uniqueItems" in schema and not isinstance(schema["uniqueItems"], bool):
            raise fail("'uniqueItems' must be a boolean")
        if len(schema.get("prefixItems") or ()) > MAX_ARRAY_ITEMS:
            raise fail(f"'prefixItems' lists more than {MAX_ARRAY_ITEMS} schemas")
        for key in ("format", "$ref"):
            if key in schema and not isinstance(schema[key], str):
                raise fail(f"'{key}' must be a string, not {describe(schema[key])}")
        patterns = [schema["pattern"]] if "pattern" in schema else []
        patterns += list(schema.get("patternProperties") or ())
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise fail(f"'pattern' must be a string, not {describe(pattern)}")
            try:
                re.compile(pattern)  # the generator reads patterns with Python's parser, so it must accept it
                regexes.schema_pattern(pattern)
            except re.error as exc:
                raise fail(f"{pattern!r} is not a valid regular expression: {exc}") from None
        for name in required:
            if property_schema(schema, name) is False:
                raise fail(
                    f"required property {name!r} is not allowed: it is not in 'properties' and "
                    "'additionalProperties' is false"
                )

    # -- $ref and allOf ---------------------------------------------------------------------------

    def resolve(self, ref: str, context: tuple[str | int, ...] = ()) -> Any:
        """The schema a local ``$ref`` (``#``, ``#/$defs/Name``, any JSON pointer) points at."""
        if ref in self._refs:
            return self._refs[ref]
        if not ref.startswith("#"):
            raise SchemaError(f"only local '$ref's (starting with '#') are supported, not {ref!r}", context)
        target: Any = self.root
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            raise SchemaError(f"'$ref' {ref!r} is not a JSON pointer ('$anchor's are not supported)", context)
        for raw in pointer.split("/")[1:] if pointer else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise SchemaError(f"'$ref' {ref!r} points at nothing: there is no {part!r}", context)
        if not isinstance(target, Mapping | bool):
            raise SchemaError(f"'$ref' {ref!r} points at {describe(target)}, not a schema", context)
        self._refs[ref] = target
        return target

    def flatten(self, schema: Mapping[str, Any], hops: int = 0) -> Mapping[str, Any]:
        """``schema`` with its top-level ``$ref`` and ``allOf`` merged in (nested subschemas stay as they are)."""
        if "$ref" not in schema and "allOf" not in schema:
            return schema
        if hops > MAX_REF_HOPS:
            raise SchemaError(f"more than {MAX_REF_HOPS} '$ref'/'allOf' indirections in a row")
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
        parts: list[Any] = list(schema.get("allOf") or ())
        if "$ref" in schema:
            parts.insert(0, self._flat_ref(schema["$ref"], hops))
        flat: Mapping[str, Any] = rest
        for part in parts:
            if part is False:
                return {"not": {}}
            if isinstance(part, Mapping):
                flat = merge(flat, self.flatten(part, hops + 1))
        return flat

    def _flat_ref(self, ref: str, hops: int) -> Any:
        if ref not in self._flat:
            if ref in self._flattening:
                raise SchemaError(f"'$ref' {ref!r} refers to itself without any keyword in between")
            self._flattening.add(ref)
            try:
                target = self.resolve(ref)
                self._flat[ref] = target if isinstance(target, bool) else self.flatten(target, hops + 1)
            finally:
                self._flattening.discard(ref)
        return self._flat[ref]

    def _why_no_instance(
        self, schema: Any, context: tuple[str | int, ...], refs: dict[str, tuple[str | int, ...]]
    ) -> SchemaError:
        """Follow what is required down to where an instance becomes impossible, and say what is there.

        ``refs`` maps each ``$ref`` followed so far to where it was first met, which is where a loop is reported.
        """
        if schema is False:
            return SchemaError("a required value must match the schema false, which nothing does", context)
        ref = schema.get("$ref")
        if ref is not None and self._ref_sizes.get(ref, _INFINITE) == _INFINITE:
            if ref in refs:
                return SchemaError(
                    f"'$ref' {ref!r} requires itself: every instance would contain another, so none is finite",
                    refs[ref],
                )
            return self._why_no_instance(self.resolve(ref), (*context, "$ref"), {**refs, ref: context})
        for key in ("allOf", "anyOf", "oneOf"):
            for i, part in enumerate(schema.get(key) or ()):
                if self._size(part, self._ref_sizes) == _INFINITE:
                    return self._why_no_instance(part, (*context, key, i), refs)
        for kind in kind_of(schema):
            if kind == "object":
                for name in schema.get("required") or ():
                    sub = property_schema(schema, name)
                    if self._size(sub, self._ref_sizes) == _INFINITE:
                        return self._why_no_instance(sub, (*context, "properties", name), refs)
            if kind == "array":
                prefix, items = schema.get("prefixItems") or [], schema.get("items", True)
                for i in range(int(schema.get("minItems", 0))):
                    sub, where = (prefix[i], "prefixItems") if i < len(prefix) else (items, "items")
                    if sub is False:
                        return SchemaError(f"'minItems' {schema['minItems']} cannot be met: 'items' is false", context)
                    if self._size(sub, self._ref_sizes) == _INFINITE:
                        return self._why_no_instance(sub, (*context, where, i), refs)
        return SchemaError("the schema has no finite valid instance", context)

    # -- Smallest sizes ---------------------------------------------------------------------------

    def min_size(self, schema: Any) -> float:
        """About how many JSON characters the smallest instance takes; infinite if there is none."""
        return self._size(schema, self._ref_sizes)

    def finishes(self, schema: Any) -> bool:
        return self.min_size(schema) < _INFINITE

    def kind_size(self, schema: Mapping[str, Any], kind: str) -> float:
        """The smallest size of ``schema``'s instances of one type."""
        return self._kind_size(schema, kind, self._ref_sizes)

    def _solve_ref_sizes(self) -> dict[str, float]:
        # A least fixed point: each round can only shrink a size, and an optimal instance of a $ref
        # only uses $refs with smaller optimal sizes, so there are at most len(refs) + 1 rounds.
        sizes = dict.fromkeys(self._refs, _INFINITE)
        for _ in range(len(sizes) + 1):
            changed = False
            for ref, target in self._refs.items():
                size = self._size(target, sizes)
                if size < sizes[ref]:
                    sizes[ref], changed = size, True
            if not changed:
                break
        return sizes

    def _size(self, schema: Any, refs: Mapping[str, float]) -> float:
        if isinstance(schema, bool):
            return 1 if schema else _INFINITE
        if not self._solved:
            return self._fresh_size(schema, refs)
        cached = self._sizes.get(id(schema))
        if cached is not None and cached[0] is schema:
            return float(cached[1])
        size = self._fresh_size(schema, refs)
        self._sizes[id(schema)] = (schema, size)  # holding the schema keeps its id from being reused
        return size

    def _fresh_size(self, schema: Mapping[str, Any], refs: Mapping[str, float]) -> float:
        size = self._own_size(schema, refs)
        if "$ref" in schema:
            size = max(size, refs.get(schema["$ref"], _INFINITE))
        for part in schema.get("allOf") or ():
            size = max(size, self._size(part, refs))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                size = max(size, min(self._size(branch, refs) for branch in schema[key]))
        return min(size, MAX_INSTANCE_SIZE + 1) if size < _INFINITE else size

    def _own_size(self, schema: Mapping[str, Any], refs: Mapping[str, float]) -> float:
        if "const" in schema:
            return len(_dumps(schema["const"]))
        if "enum" in schema:
            return min((len(_dumps(v)) for v in schema["enum"]), default=_INFINITE)
        return min((self._kind_size(schema, kind, refs) for kind in kind_of(schema)), default=_INFINITE)

    def _kind_size(self, schema: Mapping[str, Any], kind: str, refs: Mapping[str, float]) -> float:
        if kind == "object":
            total = 2.0
            for name in dict.fromkeys(schema.get("required") or ()):
                total += len(name) + 4 + self._size(property_schema(schema, name), refs)
            missing = int(schema.get("minProperties", 0)) - len(schema.get("required") or ())
            return total + max(0, missing) * 8
        if kind == "array":
            prefix = schema.get("prefixItems") or []
            items = schema.get("items", True)
            total = 2.0
            for i in range(int(schema.get("minItems", 0))):
                total += 1 + self._size(prefix[i] if i < len(prefix) else items, refs)
                if total > MAX_INSTANCE_SIZE:
                    break
            return total
        if kind == "string":
            return 2 + int(schema.get("minLength", 0))
        return {"boolean": 4, "null": 4}.get(kind, 1)


def property_schema(schema: Mapping[str, Any], name: str) -> Any:
    """What a property's value must match: its ``properties`` entry and the ``patternProperties`` that
    match its name, or else ``additionalProperties`` (``True`` when absent)."""
    parts = [
        sub for pattern, sub in (schema.get("patternProperties") or {}).items() if regexes.schema_search(pattern, name)
    ]
    properties = schema.get("properties") or {}
    if name in properties:
        parts.insert(0, properties[name])
    if not parts:
        return schema.get("additionalProperties", True)
    if any(part is False for part in parts):
        return False
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _children(schema: Mapping[str, Any]) -> Iterator[tuple[str, Any, tuple[str | int, ...]]]:
    for key in SCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            yield key, sub, (name,)
    for key in SCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or ()):
            yield key, sub, (i,)
    for key in SCHEMA_VALUES:
        if key in schema:
            yield key, schema[key], ()


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return repr(value).encode()
