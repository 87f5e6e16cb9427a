"""JSON bodies: read with a bound on nesting, checked before anything recursive walks them, and
written compact as the live API writes them (:func:`dumps`).

orjson parses up to 1,024 levels, but it serializes only 254, Python's own recursion
stops near 1,000, and much of the server walks bodies recursively (seeding, masking,
the configuration merge, structured outputs). So every body is parsed here and its
depth checked with an explicit stack (no recursion, stopping at the first level too
deep) before any of that code sees it. The limit is ``Settings.max_json_depth``.

A request's body is parsed with :func:`loads_in_turns`, so that other requests and paced streams
do not wait for the whole of a large one: past a MiB it is parsed a list element at a time
(:mod:`mockserver.engine.json_in_pieces`), and the depth walk of a body of many thousand objects
gives the event loop a turn every :data:`VALUES_PER_TURN` values (``docs/limits.md``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from mockserver import errors
from mockserver.engine import json_in_pieces

# Values the depth walk looks at between two turns of the loop (about a millisecond).
VALUES_PER_TURN = 8192


def dumps(value: Any) -> str:
    """JSON text as the live API writes it: compact."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # integers past 64 bits, which a schema's bounds or enum can ask for
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def loads(raw: bytes, max_depth: int) -> Any:
    """Parse ``raw``; an OpenAI-shaped 400 if it is not JSON or nests deeper than ``max_depth``."""
    value = _parsed(raw, max_depth)
    if may_be_too_deep(raw, max_depth) and too_deep(value, max_depth):
        raise errors.json_too_deep(max_depth)
    return value


async def loads_in_turns(raw: bytes, max_depth: int) -> Any:
    """:func:`loads`, with the event loop's turns through a large body: its parse
    (:mod:`mockserver.engine.json_in_pieces`, past a MiB) and its depth walk."""
    if len(raw) <= json_in_pieces.PIECEWISE_BYTES:
        value = _parsed(raw, max_depth)
        if may_be_too_deep(raw, max_depth) and await too_deep_in_turns(value, max_depth):
            raise errors.json_too_deep(max_depth)
        return value
    try:
        value = await json_in_pieces.parse(raw)
    except json_in_pieces.NotInPieces:
        value = _parsed(raw, max_depth)  # orjson's value, or its error
    # A large body is walked without counting its brackets first: two passes over its bytes, in one go.
    if await too_deep_in_turns(value, max_depth):
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
    return _deeper(_start(value), max_depth, sys.maxsize)


async def too_deep_in_turns(value: Any, max_depth: int) -> bool:
    """:func:`too_deep`, with a turn of the event loop after every :data:`VALUES_PER_TURN` values."""
    stack = _start(value)
    while True:
        if _deeper(stack, max_depth, VALUES_PER_TURN):
            return True
        if not stack:
            return False
        await asyncio.sleep(0)


# The walk's stack: an iterator over the children of each object or array being walked, and their level.
Walk = list[tuple[Iterator[Any], int]]


def _start(value: Any) -> Walk:
    children = _children(value)
    return [] if children is None else [(iter(children), 2)]


def _children(value: Any) -> Iterable[Any] | None:
    if isinstance(value, dict):
        return value.values()
    if isinstance(value, list):
        return value
    return None


def _deeper(stack: Walk, max_depth: int, values: int) -> bool:
    """Look at up to ``values`` more values of the walk on ``stack``, depth first: whether an object or an
    array among them is deeper than ``max_depth``. What is left to walk stays on ``stack``, so a list of
    many thousand items is walked a piece at a time too."""
    while stack:
        children, depth = stack[-1]
        for child in children:
            values -= 1
            grandchildren = _children(child)
            if grandchildren is not None:
                if depth > max_depth:
                    return True
                stack.append((iter(grandchildren), depth + 1))
                break
            if values <= 0:
                return False
        else:
            stack.pop()
            continue
        if values <= 0:
            return False
    return False
