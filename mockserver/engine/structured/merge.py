"""Merging two schemas into one that accepts what both accept: how ``allOf`` and ``$ref`` siblings are built.

Keywords combine by meaning: properties are united (a name in both gets the
``allOf`` of its two schemas), types and enums intersect, lower bounds take the
larger and upper bounds the smaller, ``anyOf``/``oneOf`` distribute over the other
side's, and one side's ``items`` also covers the positions the other's
``prefixItems`` names. Keywords without a rule keep the first side's value; the
builder checks, where it matters, that the result really is valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """A schema meant to accept what both ``a`` and ``b`` accept (the ``allOf`` of the two, flattened)."""
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
            continue
        mine = out[key]
        if key in ("properties", "patternProperties", "$defs", "definitions"):
            out[key] = {**mine, **{n: {"allOf": [mine[n], s]} if n in mine else s for n, s in value.items()}}
        elif key == "required":
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key == "type":
            out[key] = _common_types(mine, value)
        elif key == "enum":
            out[key] = [v for v in mine if any(_same(v, w) for w in value)]
        elif key == "const" and not _same(mine, value):
            out["enum"] = []  # contradictory consts: nothing validates
        elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
            out[key] = max(mine, value)
        elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
            out[key] = min(mine, value)
        elif key == "uniqueItems":
            out[key] = mine or value
        elif key in ("additionalProperties", "propertyNames"):
            out[key] = _both(mine, value)
        elif key in ("anyOf", "oneOf"):
            # Distribute: (a1 | a2) & (b1 | b2) is (a1 & (b1 | b2)) | (a2 & (b1 | b2)).
            theirs = {key: value}  # one object shared by every branch, so its size is worked out once
            out[key] = [{"allOf": [branch, theirs]} for branch in mine]
        elif key == "not":
            out[key] = {"anyOf": [mine, value]}
    if any(key in side for side in (a, b) for key in ("items", "prefixItems")):
        # One side's ``items`` also covers the positions the other side's ``prefixItems`` names.
        prefix_a, prefix_b = a.get("prefixItems") or [], b.get("prefixItems") or []
        items_a, items_b = a.get("items", True), b.get("items", True)
        out["prefixItems"] = [
            _both(prefix_a[i] if i < len(prefix_a) else items_a, prefix_b[i] if i < len(prefix_b) else items_b)
            for i in range(max(len(prefix_a), len(prefix_b)))
        ]
        if not out["prefixItems"]:
            del out["prefixItems"]
        if "items" in a or "items" in b:
            out["items"] = _both(items_a, items_b)
    return out


def _both(a: Any, b: Any) -> Any:
    if a is True:
        return b
    if b is True:
        return a
    return {"allOf": [a, b]}


def _common_types(a: str | list[str], b: str | list[str]) -> list[str]:
    left = [a] if isinstance(a, str) else list(a)
    right = [b] if isinstance(b, str) else list(b)
    common = [t for t in left if t in right]
    if "number" in left and "integer" in right and "integer" not in common:
        common.append("integer")
    if "integer" in left and "number" in right and "integer" not in common:
        common.append("integer")
    return common


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else bool(a == b)
