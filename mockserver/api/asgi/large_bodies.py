"""What a request with a large body holds, and how it lets go without holding the event loop.

From the body's parse until the request is refused or planned, a body of many thousand messages is
hundreds of thousands of objects. Two things would walk them all at once, with the event loop (every
paced stream, every other request) waiting:

- each full pass of the garbage collector: :func:`hold_collector` holds the passes off from the parse
  (:mod:`mockserver.api.asgi.collector` says why that is safe and how it is bounded), and
  :func:`let_collector_go` lets go once the reply is planned (before it waits for a capacity slot,
  is held or streamed);
- freeing them, when the last reference to the body goes: the parsed body's long lists are kept here
  (:func:`keep_lists`) past every other reference, and :func:`let_body_go`, once the reply is over,
  empties them a piece at a time with the loop's turns between, then lets the collector go if the
  request still holds it (a refused one does: its objects are freed before the passes come back).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mockserver.api.asgi.collector import COLLECTOR
from mockserver.engine.in_turns import ITEMS_PER_TURN
from mockserver.engine.json_in_pieces import PIECEWISE_BYTES
from mockserver.service.exchange import Exchange

# A body past this is large: parsed in pieces (json_in_pieces), and what it holds is let go of here.
LARGE_BODY_BYTES = PIECEWISE_BYTES


def hold_collector(exchange: Exchange) -> None:
    """Hold the collector's passes off for ``exchange``, whose body is large (once per exchange)."""
    if exchange.collector_hold is None:
        exchange.collector_hold = COLLECTOR.hold()


def let_collector_go(exchange: Exchange) -> None:
    """Let go of ``exchange``'s hold of the collector, if it has one."""
    release, exchange.collector_hold = exchange.collector_hold, None
    if release is not None:
        release()


def keep_lists(exchange: Exchange, *holders: Any) -> None:
    """Keep the long lists among the values of ``holders`` (a parsed body, its validated model) for
    :func:`let_body_go` to free a piece at a time."""
    if exchange.large_body_lists is None:
        exchange.large_body_lists = []
    kept = exchange.large_body_lists
    for holder in holders:
        values = holder.values() if isinstance(holder, dict) else vars(holder).values()
        kept += [value for value in values if type(value) is list and len(value) > ITEMS_PER_TURN]


def holds_anything(exchange: Exchange) -> bool:
    """Whether ``exchange`` has a large body to let go of (most have none: one look, no coroutine)."""
    return exchange.large_body_lists is not None or exchange.collector_hold is not None


async def let_body_go(exchange: Exchange) -> None:
    """Once ``exchange``'s reply is over: free its body's long lists a piece at a time, then let go of
    the collector (even if the task is cancelled on the way)."""
    try:
        lists, exchange.large_body_lists = exchange.large_body_lists or [], None
        for items in lists:
            while items:
                del items[-ITEMS_PER_TURN:]
                await asyncio.sleep(0)
    finally:
        let_collector_go(exchange)
