"""Typing a value read from a prompt to a parameter's schema, and checking it against the schema.

A value is read as text (or as the literal a written call gave). :func:`coerce` tries the
readings the schema's types allow (an enum member spelled in any case, an integer, a number, a
boolean, ``null``, a string, a list split at commas) and returns the first that the schema
accepts, checked with :func:`~mockserver.engine.structured.match.matches`; or :data:`REFUSED`,
and the caller keeps the generated value.

A string from the prompt is only checked against ``pattern``\\s that RE2 runs (linear time):
a schema with any other pattern keeps its generated strings (see :func:`linear_patterns`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from mockserver.config import patterns as regexes
from mockserver.engine.structured.match import matches
from mockserver.engine.structured.prompt_text import Found
from mockserver.engine.structured.schema import Schemas, kind_of

REFUSED = object()
MAX_LIST_ITEMS = 32
_KIND_DEPTH = 4
_TRUE = ("true", "yes", "y", "on", "是", "对", "开启")
_FALSE = ("false", "no", "n", "off", "否", "不", "关闭")
_SEPARATORS = (",", "，", "、", ";", " and ", " or ", "和", "与", "及")


def coerce(found: Found, schema: Any, schemas: Schemas, *, strings: bool = True) -> Any:
    """The first reading of ``found`` that ``schema`` accepts, or :data:`REFUSED`.

    ``strings`` false: no string reading is tried (the schema has a pattern RE2 cannot run)."""
    for candidate in _readings(found, schema, schemas):
        if not strings and _has_string(candidate):
            continue
        if _finite(candidate) and matches(schemas, candidate, schema):
            return candidate
    return REFUSED


def accepted_kinds(schema: Any, schemas: Schemas, depth: int = 0) -> frozenset[str]:
    """The JSON types a schema may accept, looking through ``$ref``, ``allOf`` and ``anyOf``/``oneOf``."""
    if schema is True or not isinstance(schema, Mapping):
        return frozenset({"string", "number", "integer", "boolean", "null", "array", "object"} if schema else ())
    flat = schemas.flatten(schema)
    kinds: set[str] = set()
    branches = [b for key in ("anyOf", "oneOf") for b in flat.get(key) or ()]
    if branches and depth < _KIND_DEPTH:
        for branch in branches:
            kinds |= accepted_kinds(branch, schemas, depth + 1)
        return frozenset(kinds)
    listed = [flat["const"]] if "const" in flat else flat.get("enum")
    if isinstance(listed, list):
        return frozenset(_kind_of_value(v) for v in listed)
    return frozenset(kind_of(flat))


def enum_members(schema: Any, schemas: Schemas) -> list[Any]:
    """The values an ``enum`` or ``const`` lists, here or in an ``anyOf``/``oneOf`` branch."""
    if not isinstance(schema, Mapping):
        return []
    flat = schemas.flatten(schema)
    if "const" in flat:
        return [flat["const"]]
    if isinstance(flat.get("enum"), list):
        return list(flat["enum"])
    members: list[Any] = []
    for key in ("anyOf", "oneOf"):
        for branch in flat.get(key) or ():
            if isinstance(branch, Mapping) and not ("$ref" in branch or "anyOf" in branch or "oneOf" in branch):
                members += enum_members(branch, schemas)
    return members


def string_format(schema: Any, schemas: Schemas) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    flat = schemas.flatten(schema)
    fmt = flat.get("format")
    if isinstance(fmt, str):
        return fmt
    for branch in [b for key in ("anyOf", "oneOf") for b in flat.get(key) or ()]:
        if isinstance(branch, Mapping) and isinstance(branch.get("format"), str):
            return str(branch["format"])
    return None


def linear_patterns(schema: Any, budget: int = 10_000) -> bool:
    """Whether every ``pattern`` in ``schema`` runs on RE2 (a prompt's text is never checked by backtracking)."""
    stack = [schema]
    while stack and budget > 0:
        node = stack.pop()
        budget -= 1
        if isinstance(node, Mapping):
            pattern = node.get("pattern")
            if isinstance(pattern, str):
                try:
                    regexes.compile_pattern(pattern)
                except regexes.PatternError:
                    return False
            stack.extend(v for v in node.values() if isinstance(v, Mapping | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, Mapping | list))
    return budget > 0


def _readings(found: Found, schema: Any, schemas: Schemas) -> Iterator[Any]:
    text = found.text.strip()
    if found.kind == "literal" or (found.kind == "quoted" and found.value is not None):
        yield found.value
        if not isinstance(found.value, str):
            text = found.value if isinstance(found.value, str) else _text_of(found.value)
    for member in enum_members(schema, schemas):
        if (isinstance(member, str) and member.lower() == text.lower()) or (
            not isinstance(member, str | bool) and member is not None and _number(text) == member
        ):
            yield member
    kinds = accepted_kinds(schema, schemas)
    fmt = string_format(schema, schemas)
    numeric = _number(text)
    if numeric is not None and kinds & {"integer", "number"}:
        yield numeric
    if "boolean" in kinds and text.lower() in _TRUE + _FALSE:
        yield text.lower() in _TRUE
    if "null" in kinds and text.lower() in ("null", "none", "nil"):
        yield None
    if "string" in kinds:
        yield from _strings(text, fmt)
    if "array" in kinds:
        yield from _lists(found, text, schema, schemas)


def _strings(text: str, fmt: str | None) -> Iterator[str]:
    if fmt == "date-time" and len(text) == 10:
        yield f"{text}T00:00:00Z"
    if fmt == "date" and len(text) > 10 and text[4:5] == "-":
        yield text[:10]
    if fmt == "date-time" and len(text) == 16:
        yield f"{text}:00Z"
    if fmt == "date-time" and len(text) == 19:
        yield f"{text}Z"
    yield text


def _lists(found: Found, text: str, schema: Any, schemas: Schemas) -> Iterator[Any]:
    if isinstance(found.value, list):
        return
    flat = schemas.flatten(schema) if isinstance(schema, Mapping) else {}
    items_schema = flat.get("items", True)
    pieces = [text]
    for separator in _SEPARATORS:
        pieces = [part.strip() for piece in pieces for part in piece.split(separator)]
    pieces = [p for p in pieces if p][:MAX_LIST_ITEMS]
    items = [coerce(Found(p, "words", 0, 0), items_schema, schemas) for p in pieces]
    if items and all(item is not REFUSED for item in items):
        yield items


def _number(text: str) -> int | float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or len(text) > 30:
        return None
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _kind_of_value(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else ("array" if isinstance(value, list) else "object")


def _text_of(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _has_string(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return any(_has_string(v) for v in value)
    if isinstance(value, dict):
        return any(_has_string(v) for v in value.values())
    return False


def _finite(value: Any) -> bool:
    """No infinity or NaN, and no integer too large for a float (``f(1e400)``, or 400 nines written out)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) <= sys.float_info.max  # compared exactly: no conversion
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True
