"""The Ultrafast pool's queue: while every slot is held, a request waits a little for one.

A real preview pool does not refuse a request the moment it is full: the request waits for a
slot first, and the client sees a longer time to first token. ``capacity.queue_ms`` is that
wait (scaled by ``time_scale``, like every wait; 0, the default, refuses at once). A request
that gets a slot within it is served, its TTFT counted from its arrival, so the wait is part of
it; past it, ``capacity.when_full`` applies as before (429/503 or a downgrade).

Who gets a slot when one comes back: the first to arrive (:mod:`mockserver.service.capacity.line`,
one line per store in each process):

- a slot given back in this process (:func:`notify`) wakes exactly one waiter, the first in line; if
  it cannot take the slot (its organization's pool is full), the first of another organization
  tries, and so on: at most one failed attempt per organization waiting, never one per waiter;
- a cap changed while requests wait (:func:`reconfigured`: a PATCH, a reset) sends a chance down
  the line as a poll does, each attempt asking under the caps in force then;
- with a shared store (Redis: several workers or replicas), a slot given back by another process,
  or a lease that expired, is seen at the next poll: one per :data:`POLL_S` for the whole line, not
  per waiter. The in-memory store never polls: its slots come back only through :func:`notify`.

Each attempt is one call to the store's atomic ``acquire``, so the cap holds exactly. A request
that arrives just as a slot comes back may take it before the first in line does (it asks the
store before it joins the line), as on any shared pool; among the waiting, first come, first served.

Bounds: at most :data:`MAX_WAITERS` requests wait in one process (more are refused at once, as
without a queue), each for at most ``queue_ms`` (at most a minute, times ``time_scale``, and never
past ``--max-reply-seconds``: :func:`wait_seconds`), and a waiter whose client
leaves stops waiting at once (:class:`ClientLeft`), out of the line. A waiting request costs one
future and one timer (its deadline), and nothing on the event loop until it is woken; a shared
store's line adds one timer, and every :data:`POLL_S` at most one refused attempt per organization
waiting (plus one per request it serves). What happened is noted on the exchange
(``Exchange.queued_ms``, ``Exchange.queue_outcome``) for the journal and ``/metrics``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Literal

from mockserver.config.fixture import Fixture
from mockserver.engine.pacing import Clock
from mockserver.service.capacity.line import Lines
from mockserver.service.wakeups import wake
from mockserver.state.store import MemoryStore, Store

POLL_S = 0.02  # with a shared store: how soon a slot given back elsewhere (another worker, a replica) is seen
MAX_WAITERS = 1_024  # requests waiting at once in one process; more are refused as if there were no queue

Outcome = Literal["served", "timed_out", "left", "full"]


class ClientLeft(Exception):
    """The client closed the connection while its request waited for a slot, ``waited`` seconds in."""

    def __init__(self, waited: float) -> None:
        super().__init__(f"the client left after waiting {waited:.3f} s for a slot")
        self.waited = waited


@dataclass(frozen=True)
class Queue:
    """How one request may wait: at most ``wait_s`` on ``clock``; ``client_left`` returns once the client has gone.

    ``fixture`` returns the configuration in force: each attempt asks for a slot under the caps in
    force then (a PATCH or a reset while the request waits holds for it too), not those it arrived under.
    """

    wait_s: float
    clock: Clock
    client_left: Callable[[], Awaitable[None]] | None = None
    fixture: Callable[[], Fixture] | None = None


class _Count:
    """How many requests wait in this process, against :data:`MAX_WAITERS`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
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


_COUNT = _Count()
_LINES = Lines()


class _Deadline:
    """Calls ``expire`` once ``clock.now() >= at``, on the running loop; :meth:`cancel` stops it.

    A timer may fire a little early (uvloop's count whole milliseconds of a time cached when the loop
    last woke): then it is set again for the rest, so a waiter woken early is woken again at its
    deadline rather than left waiting with no timer at all."""

    def __init__(self, clock: Clock, at: float, expire: Callable[[], None]) -> None:
        self._clock, self._at, self._expire = clock, at, expire
        self._handle = clock.call_at(at, self._fire)

    def _fire(self) -> None:
        if self._clock.now() < self._at:
            self._handle = self._clock.call_at(self._at, self._fire)
        else:
            self._expire()

    def cancel(self) -> None:
        self._handle.cancel()


def wait_seconds(queue_ms: float, time_scale: float, max_reply_s: float) -> float:
    """How long a request may wait for a slot: ``queue_ms`` times the time scale, but never past
    ``--max-reply-seconds``, the bound on one request's wall-clock time (at time scale 100, a
    minute's queue would otherwise hold a request for 100 minutes)."""
    return min(queue_ms / 1000 * time_scale, max_reply_s)


def polls(store: Store) -> bool:
    """Whether waiters on ``store`` poll: only a shared store frees slots this process is not told of."""
    return not isinstance(store, MemoryStore)


def notify(store: Store) -> None:
    """A slot of ``store`` was given back in this process: the first request waiting for one tries now."""
    line = _LINES.of(store)
    if line is not None:
        line.give_back()


def reconfigured(store: Store) -> None:
    """The caps may have changed (a PATCH, a reset): the first waiter of each organization tries
    again now, and as many as the caps let in are served, without waiting for a slot to come back."""
    line = _LINES.of(store)
    if line is not None:
        line.recheck()


def waiting() -> int:
    """Requests waiting for a slot in this process now."""
    return _COUNT.waiting


async def wait_for_slot(
    take: Callable[[], Awaitable[bool]], queue: Queue, store: Store, group: Hashable = ()
) -> tuple[Outcome, float]:
    """Wait in ``store``'s line, calling ``take`` (one attempt at a slot) when it is this request's
    turn, until it succeeds or ``queue.wait_s`` passes. ``group``: the pools ``take`` asks for (see
    :mod:`~mockserver.service.capacity.line`).

    Returns how the wait ended (``served``, ``timed_out``, or ``full`` when too many wait already)
    and the seconds waited, on ``queue.clock``. Raises :class:`ClientLeft` if the client leaves.
    """
    clock = queue.clock
    start = clock.now()
    deadline = start + queue.wait_s
    if queue.wait_s <= 0:
        return "timed_out", 0.0
    if not _COUNT.enter():
        return "full", 0.0
    line, me = _LINES.join(store, clock, group, polls=polls(store), poll_s=POLL_S)
    timer = _Deadline(clock, deadline, lambda: wake(me.future))
    gone = asyncio.ensure_future(queue.client_left()) if queue.client_left is not None else None
    try:
        # Without a poll, one more attempt now: a slot given back before this request joined the line
        # woke nobody for it (in memory the attempt is a lookup, not a round trip).
        if not line.polls and await take():
            return "served", clock.now() - start
        while True:
            await asyncio.wait({me.future} if gone is None else {me.future, gone}, return_when=asyncio.FIRST_COMPLETED)
            if gone is not None and gone.done():
                raise ClientLeft(clock.now() - start)
            if line.woken(me):
                took = await take()
                line.tried(me, took)
                if took:
                    return "served", clock.now() - start
            now = clock.now()
            if now >= deadline:
                return "timed_out", now - start
    finally:
        timer.cancel()
        _LINES.leave(store, line, me)
        _COUNT.leave()
        if gone is not None:
            gone.cancel()
            await asyncio.gather(gone, return_exceptions=True)
