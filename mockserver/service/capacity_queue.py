"""The Ultrafast pool's queue: while every slot is held, a request waits a little for one.

A real preview pool does not refuse a request the moment it is full: the request waits for a
slot first, and the client sees a longer time to first token. ``capacity.queue_ms`` is that
wait (scaled by ``time_scale``, like every wait; 0, the default, refuses at once). A request
that gets a slot within it is served, its TTFT counted from its arrival, so the wait is part of
it; past it, ``capacity.when_full`` applies as before (429/503 or a downgrade).

How a waiting request learns of a free slot:

- a slot given back in this process wakes every waiter here at once (:func:`notify`);
- a slot given back by another worker or replica (the slots are the store's, so shared through
  Redis) is seen at the next poll, every :data:`POLL_S`, and so is a lease that expired.

Each wake-up is one attempt at the store's atomic ``acquire``: whoever takes the slot first has it,
so the cap holds exactly; waiters are not served in order of arrival.

Bounds: at most :data:`MAX_WAITERS` requests wait in one process (more are refused at once, as
without a queue), each for at most ``queue_ms`` (at most a minute, times ``time_scale``, and never
past ``--max-reply-seconds``: :func:`wait_seconds`), and a waiter whose client
leaves stops waiting at once (:class:`ClientLeft`). What happened is noted on the exchange
(:data:`QUEUED_MS`, :data:`QUEUE_OUTCOME`) for the journal and ``/metrics``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from mockserver.engine.pacing import Clock

POLL_S = 0.02  # how soon a slot given back elsewhere (another worker, a replica) is seen
MAX_WAITERS = 1_024  # requests waiting at once in one process; more are refused as if there were no queue
QUEUED_MS = "queued_ms"  # exchange.extra: milliseconds the request waited for a slot
QUEUE_OUTCOME = "queue_outcome"  # exchange.extra: how the wait ended (:data:`Outcome`)

Outcome = Literal["served", "timed_out", "left", "full"]


class ClientLeft(Exception):
    """The client closed the connection while its request waited for a slot, ``waited`` seconds in."""

    def __init__(self, waited: float) -> None:
        super().__init__(f"the client left after waiting {waited:.3f} s for a slot")
        self.waited = waited


@dataclass(frozen=True)
class Queue:
    """How one request may wait: at most ``wait_s`` on ``clock``; ``client_left`` returns once the client has gone."""

    wait_s: float
    clock: Clock
    client_left: Callable[[], Awaitable[None]] | None = None


class _Waiters:
    """The futures of the requests waiting in this process, each on its own loop (tests run several servers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: set[asyncio.Future[None]] = set()
        self.waiting = 0

    def enter(self) -> bool:
        with self._lock:
            if self.waiting >= MAX_WAITERS:
                return False
            self.waiting += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self.waiting -= 1

    def add(self, future: asyncio.Future[None]) -> None:
        with self._lock:
            self._futures.add(future)

    def discard(self, future: asyncio.Future[None]) -> None:
        with self._lock:
            self._futures.discard(future)

    def wake_all(self) -> None:
        with self._lock:
            futures, self._futures = self._futures, set()
        for future in futures:
            loop = future.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, future)


_WAITERS = _Waiters()


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def wait_seconds(queue_ms: float, time_scale: float, max_reply_s: float) -> float:
    """How long a request may wait for a slot: ``queue_ms`` times the time scale, but never past
    ``--max-reply-seconds``, the bound on one request's wall-clock time (at time scale 100, a
    minute's queue would otherwise hold a request for 100 minutes)."""
    return min(queue_ms / 1000 * time_scale, max_reply_s)


def notify() -> None:
    """A slot was given back in this process: every request waiting here tries again now."""
    if _WAITERS.waiting:
        _WAITERS.wake_all()


def waiting() -> int:
    """Requests waiting for a slot in this process now."""
    return _WAITERS.waiting


async def wait_for_slot(take: Callable[[], Awaitable[bool]], queue: Queue) -> tuple[Outcome, float]:
    """Call ``take`` (one attempt at a slot) at each wake-up until it succeeds or ``queue.wait_s`` passes.

    Returns how the wait ended (``served``, ``timed_out``, or ``full`` when too many wait already)
    and the seconds waited, on ``queue.clock``. Raises :class:`ClientLeft` if the client leaves.
    """
    clock = queue.clock
    start = clock.now()
    deadline = start + queue.wait_s
    if queue.wait_s <= 0:
        return "timed_out", 0.0
    if not _WAITERS.enter():
        return "full", 0.0
    loop = asyncio.get_running_loop()
    gone = asyncio.ensure_future(queue.client_left()) if queue.client_left is not None else None
    try:
        while True:
            now = clock.now()
            if now >= deadline:
                return "timed_out", now - start
            wake: asyncio.Future[None] = loop.create_future()
            _WAITERS.add(wake)
            timer = clock.call_at(min(deadline, now + POLL_S), lambda wake=wake: _wake(wake))  # type: ignore[misc]
            try:
                await asyncio.wait({wake} if gone is None else {wake, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                timer.cancel()
                _WAITERS.discard(wake)
            if gone is not None and gone.done():
                raise ClientLeft(clock.now() - start)
            if await take():
                return "served", clock.now() - start
    finally:
        _WAITERS.leave()
        if gone is not None:
            gone.cancel()
            await asyncio.gather(gone, return_exceptions=True)
