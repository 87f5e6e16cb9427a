"""Work over a long list that lets the event loop run between pieces.

A request body can hold hundreds of thousands of messages (the body limit is 32 MiB by default).
Reading every one of them in a single pass holds the event loop for as long as the pass takes:
every paced stream, every other request and ``/health`` wait for it. The passes over a body's
items (checking its nesting, validating it, reading its messages for the prompt count) therefore
go through :func:`mapped`, which gives the loop a turn after every :data:`ITEMS_PER_TURN` items.

A short list (most requests) is read at once, with no turn and no cost beyond the plain loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Items read between two turns of the loop: a few microseconds each, so about a millisecond a piece.
ITEMS_PER_TURN = 256


async def mapped(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """``[function(item) for item in items]``, with a turn of the event loop after each
    :data:`ITEMS_PER_TURN` items. An exception from ``function`` ends it, as in the plain loop."""
    if len(items) <= ITEMS_PER_TURN:
        return [function(item) for item in items]
    results: list[Result] = []
    for start in range(0, len(items), ITEMS_PER_TURN):
        if start:
            await asyncio.sleep(0)
        results += [function(item) for item in items[start : start + ITEMS_PER_TURN]]
    return results


async def joined(function: Callable[[Sequence[Item]], list[Result]], items: Sequence[Item]) -> list[Result]:
    """``function(items)`` for a ``function`` that reads a list item by item (its result for the list
    is its results for consecutive pieces of it, joined), read :data:`ITEMS_PER_TURN` items at a time
    with a turn of the event loop between two pieces. A short list is read at once."""
    if len(items) <= ITEMS_PER_TURN:
        return function(items)
    results: list[Result] = []
    for start in range(0, len(items), ITEMS_PER_TURN):
        if start:
            await asyncio.sleep(0)
        results += function(items[start : start + ITEMS_PER_TURN])
    return results


async def summed(function: Callable[[Sequence[Item]], int], items: Sequence[Item]) -> int:
    """``function(items)`` for a ``function`` that adds up over a list's items (its result for the list
    is the sum of its results for consecutive pieces of it), read as :func:`joined` reads."""
    if len(items) <= ITEMS_PER_TURN:
        return function(items)
    total = 0
    for start in range(0, len(items), ITEMS_PER_TURN):
        if start:
            await asyncio.sleep(0)
        total += function(items[start : start + ITEMS_PER_TURN])
    return total
