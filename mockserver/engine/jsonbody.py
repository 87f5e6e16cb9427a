"""JSON request bodies with a bound on nesting, checked before anything recursive walks them.

orjson parses up to 1,024 levels, but it serializes only 254, Python's own recursion
stops near 1,000, and much of the server walks bodies recursively (seeding, masking,
the configuration merge, structured outputs). So every body is parsed here and its
depth checked with an explicit stack (no recursion, stopping at the first level too
deep) before any of that code sees it. The limit is ``Settings.max_json_depth``.

A request's body is parsed with :func:`loads_in_turns`, so that other requests and paced streams
do not wait for the whole of a large one: past a MiB it is parsed a list element at a time
(:mod:`mockserver.engine.json_in_pieces`), and the depth walk of a body of many thousand objects
gives the event loop a turn every :data:`CONTAINERS_PER_TURN` of them (``docs/limits.md``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import orjson

from mockserver import errors
from mockserver.engine import json_in_pieces

# Objects and arrays the depth walk looks at between two turns of the loop (about a millisecond).
CONTAINERS_PER_TURN = 1024


def loads(raw: bytes, max_depth: int) -> Any:
    """Parse ``raw``; an OpenAI-shaped 400 if it is not JSON or nests deeper than ``max_depth``."""
    value = _parsed(raw, max_depth)
    if may_be_too_deep(raw, max_depth) and too_deep(value, max_depth):
        raise errors.json_too_deep(max_depth)
    return value


async def loads_in_turns(raw: bytes, max_depth: int) -> Any:
    """:func:`loads`, with the event loop's turns through a large body: its parse
    (:mod:`mockserver.engine.json_in_pieces`, past a MiB) and its depth walk."""
    if len(raw) > json_in_pieces.PIECEWISE_BYTES:
        try:
            value = await json_in_pieces.parse(raw)
        except json_in_pieces.NotInPieces:
            value = _parsed(raw, max_depth)  # orjson's value, or its error
    else:
        value = _parsed(raw, max_depth)
    if may_be_too_deep(raw, max_depth) and await too_deep_in_turns(value, max_depth):
        raise errors.json_too_deep(max_depth)
    return value


def _parsed(raw: bytes, max_depth: int) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc).lower():
            raise errors.json_too_deep(max_depth) from None
        raise errors.invalid_json() from None


def may_be_too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether the JSON text ``raw`` could nest deeper than ``max_depth``: each level opens with a
    ``{`` or a ``[``, so a text with no more of them than that cannot (brackets inside strings only
    add to the count). Counting bytes is much cheaper than walking the parsed value."""
    return raw.count(b"{") + raw.count(b"[") > max_depth


def too_deep(value: Any, max_depth: int) -> bool:
    """Whether ``value`` has more than ``max_depth`` levels of objects and arrays (the outermost is level 1)."""
    return _deeper([(value, 1)], max_depth, sys.maxsize)


async def too_deep_in_turns(value: Any, max_depth: int) -> bool:
    """:func:`too_deep`, with a turn of the event loop after every :data:`CONTAINERS_PER_TURN` containers."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while True:
        if _deeper(stack, max_depth, CONTAINERS_PER_TURN):
            return True
        if not stack:
            return False
        await asyncio.sleep(0)


def _deeper(stack: list[tuple[Any, int]], max_depth: int, containers: int) -> bool:
    """Walk up to ``containers`` of the objects and arrays on ``stack`` (each with its level), pushing
    their children: whether one is deeper than ``max_depth``. What is left to walk stays on ``stack``."""
    for _ in range(containers):
        if not stack:
            return False
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
