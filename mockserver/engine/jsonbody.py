"""JSON request bodies with a bound on nesting, checked before anything recursive walks them.

orjson parses up to 1,024 levels, but it serializes only 254, Python's own recursion
stops near 1,000, and much of the server walks bodies recursively (seeding, masking,
the configuration merge, structured outputs). So every body is parsed here and its
depth checked with an explicit stack (no recursion, stopping at the first level too
deep) before any of that code sees it. The limit is ``Settings.max_json_depth``.
"""

from __future__ import annotations

from typing import Any

import orjson

from mockserver import errors


def loads(raw: bytes, max_depth: int) -> Any:
    """Parse ``raw``; an OpenAI-shaped 400 if it is not JSON or nests deeper than ``max_depth``."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc).lower():
            raise errors.json_too_deep(max_depth) from None
        raise errors.invalid_json() from None
    if may_be_too_deep(raw, max_depth) and too_deep(value, max_depth):
        raise errors.json_too_deep(max_depth)
    return value


def may_be_too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether the JSON text ``raw`` could nest deeper than ``max_depth``: each level opens with a
    ``{`` or a ``[``, so a text with no more of them than that cannot (brackets inside strings only
    add to the count). Counting bytes is much cheaper than walking the parsed value."""
    return raw.count(b"{") + raw.count(b"[") > max_depth


def too_deep(value: Any, max_depth: int) -> bool:
    """Whether ``value`` has more than ``max_depth`` levels of objects and arrays (the outermost is level 1)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
