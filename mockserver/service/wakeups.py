"""Waking a request parked on a future, from its own event loop or from another thread.

A waiting request (for an Ultrafast slot, for room in the embeddings budget) parks on an
:class:`asyncio.Future` of its own event loop. Whoever frees what it waits for may run on another
loop (a test process runs several servers, each on its own thread), so the wake-up goes through the
waiter's loop: :func:`wake_soon`. A future already done (woken twice, or the waiter gone) is left as
it is.
"""

from __future__ import annotations

import asyncio


def wake(future: asyncio.Future[None]) -> None:
    """Resolve ``future`` unless it is done already (call it on the future's own loop)."""
    if not future.done():
        future.set_result(None)


def wake_soon(future: asyncio.Future[None]) -> None:
    """Resolve ``future`` on its own loop's next turn, from any thread; nothing if that loop has closed."""
    loop = future.get_loop()
    if not loop.is_closed():
        loop.call_soon_threadsafe(wake, future)
