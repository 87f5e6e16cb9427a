"""Replies in flight, and how a held reply ends early: the client left, a reset, a shutdown, a time limit.

A non-streaming reply is held until its schedule ends (a reply takes as long as a stream
would). While it is held, four things may end it sooner, and each must release what the
reply holds (an Ultrafast slot above all) at once rather than when the schedule ends:

- the client closes the connection (its SDK timed out, the test was cancelled);
- ``POST /_mock/reset``, which puts the server back to its start;
- the server stopping (``Ctrl-C``, ``SIGTERM``, ``MockServer.stop()``), which otherwise waits for
  every open request to finish;
- the wall-clock limit on any one reply (``Settings.max_reply_seconds``).

:class:`InFlight` is the registry of replies being held; :meth:`InFlight.end_all` may be
called from any thread (``MockServer.reset()`` runs in the test's thread). :func:`hold`
waits for whichever comes first.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

Outcome = Literal["done", "left", "reset", "shutdown", "time_limit"]
EndReason = Literal["reset", "shutdown"]
CLIENT_CLOSED_STATUS = 499  # nginx's "client closed request": shown in the journal, never sent


class InFlight:
    """The replies being held right now, each with a future that :meth:`end_all` resolves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[EndReason]]] = {}
        self._next = 0

    @property
    def active(self) -> int:
        with self._lock:
            return len(self._held)

    @contextmanager
    def track(self) -> Iterator[asyncio.Future[EndReason]]:
        """Register the reply being served (on the running loop); the future resolves if it is ended."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[EndReason] = loop.create_future()
        with self._lock:
            self._next += 1
            token = self._next
            self._held[token] = (loop, ended)
        try:
            yield ended
        finally:
            with self._lock:
                self._held.pop(token, None)

    def end_all(self, reason: EndReason) -> int:
        """End every reply being held, from any thread. Returns how many were told."""
        with self._lock:
            held = list(self._held.values())
        for loop, ended in held:
            if loop.is_closed():
                continue
            loop.call_soon_threadsafe(_resolve, ended, reason)
        return len(held)


def _resolve(ended: asyncio.Future[EndReason], reason: EndReason) -> None:
    if not ended.done():
        ended.set_result(reason)


async def client_left(receive: Callable[[], Awaitable[Mapping[str, Any]]]) -> None:
    """Return once the client has closed the connection.

    ``receive`` is the request's ASGI ``receive``; the body was read already, so only the
    ``http.disconnect`` message can come.
    """
    while (await receive())["type"] != "http.disconnect":
        pass


async def hold(
    waiting: Awaitable[None],
    *,
    client_left: Callable[[], Awaitable[None]],
    ended: asyncio.Future[EndReason],
    limit_s: float | None,
) -> Outcome:
    """Wait for ``waiting`` (the reply's schedule) unless the client leaves, the reply is ended, or time runs out.

    Whatever does not finish first is cancelled, so nothing is left running behind the reply.
    """
    schedule = asyncio.ensure_future(waiting)
    gone = asyncio.ensure_future(client_left())
    pending: set[asyncio.Future[object]] = {schedule, gone, ended}  # type: ignore[arg-type]
    try:
        done, _ = await asyncio.wait(pending, timeout=limit_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (schedule, gone):
            task.cancel()
        await asyncio.gather(schedule, gone, return_exceptions=True)
    if schedule in done:
        return "done"
    if gone in done:
        return "left"
    if ended in done:
        return ended.result()
    return "time_limit"
