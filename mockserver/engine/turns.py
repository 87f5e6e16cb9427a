"""Turns: a burst of new requests gives way to the streams already running.

Admitting and planning a request is the most CPU one request costs, and it runs in one go on the
event loop. When hundreds of requests arrive together, the loop would run them back to back, and
the scheduler's tick (:mod:`.scheduler`), whose timer fell due meanwhile, would wait for all of
them: every stream already running would stall for as long as the whole burst takes, then catch
up. That is the "one client can starve the others" failure, with a burst as the client.

:class:`Turns` hands the loop to new requests in turns of about :data:`TURN_BUDGET_S`. The requests
that arrive together go on while the turn's budget lasts; the others wait, first come first served,
for the next turn, and a next turn begins only after the loop has been round once, through its
timers: so a tick that fell due runs between two turns. A turn lets through as many waiting
requests as fit its budget (at least one), by what a request's work has cost lately
(:attr:`Turns.cost_s`, learnt from the requests that ran one after the other in a turn). The
streams in flight keep their pace; the requests of a burst are served in the order they came, each
a little later, as a real server interleaves a new prompt's prefill with the decoding of the
streams it is already serving.

With no burst nothing changes: a request that finds no turn open opens one and goes on at once.

Bounds: one turn's work is the budget plus the one request that ends it; a waiting request holds
one future, in a first-in first-out queue as long as the requests waiting (each an open connection,
which uvicorn bounds); a request that is cancelled while it waits leaves the queue at once.
"""

from __future__ import annotations

import asyncio
from collections import deque

from mockserver.engine.pacing import Clock

# How much of the loop new requests may take before the streams in flight get a turn. A stream at
# Ultrafast's 750 tokens/s has an event due every 1.3 ms: a turn of 1 ms keeps its gaps near that.
TURN_BUDGET_S = 0.001
LEARNING_RATE = 0.2  # how fast the learnt cost of a request follows what requests cost lately
LONGEST_SAMPLE = 10  # a sample counts for at most this many budgets (a request that waited on a lock)
MIN_COST_S = 0.00002  # never let more than budget / this through in one turn


class Turns:
    """Take a turn with :meth:`take` before a request's work; the first request of a turn opens it."""

    def __init__(self, clock: Clock, budget_s: float = TURN_BUDGET_S) -> None:
        self._clock = clock
        self._budget_s = budget_s
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._opened_at: float | None = None  # when the open turn began; None when no turn is open
        self._next_turn: asyncio.TimerHandle | None = None
        # What one request's work costs, learnt from the requests a turn let through together: a turn
        # lets through as many waiting requests as fit its budget, at least one.
        self.cost_s = budget_s / 2
        self._resumed_at: float | None = None  # when the last request of this turn began

    @property
    def waiting(self) -> int:
        """How many requests wait for a turn."""
        return len(self._waiting)

    async def take(self) -> None:
        """Return when this request may do its work: at once, or after the streams had their turn."""
        now = self._clock.now()
        if not self._waiting:
            if self._opened_at is None:
                self._open(now)
                self._learn(now)
                asyncio.get_running_loop().call_soon(self._close)
                return
            if now - self._opened_at < self._budget_s:
                self._learn(now)
                return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._schedule_next_turn()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            # Given a turn already, it leaves it open: the turn closes on its own, and the next begins.
            raise
        self._learn(self._clock.now())

    def _open(self, now: float) -> None:
        self._opened_at = now
        self._resumed_at = None

    def _learn(self, now: float) -> None:
        # The requests of one turn run one after the other: each begins when the one before it ended.
        # (Not the last one's: what runs after it, before the turn closes, may be the streams' tick.)
        if self._resumed_at is not None:
            sample = min(now - self._resumed_at, LONGEST_SAMPLE * self._budget_s)
            self.cost_s += LEARNING_RATE * (sample - self.cost_s)
        self._resumed_at = now

    def _close(self) -> None:
        # Scheduled after the requests of the turn: they have all run by now.
        self._opened_at = None
        if self._waiting:
            self._schedule_next_turn()

    def _schedule_next_turn(self) -> None:
        # While a turn is open, its close schedules the next. A timer, not call_soon: timers that fell
        # due before it (the scheduler's tick) run first.
        if self._next_turn is None and self._opened_at is None:
            self._next_turn = asyncio.get_running_loop().call_later(0, self._begin_next_turn)

    def _begin_next_turn(self) -> None:
        self._next_turn = None
        if self._opened_at is not None:
            return  # a request opened a turn meanwhile: its close schedules the next one
        self._open(self._clock.now())
        room = max(1, int(self._budget_s / max(self.cost_s, MIN_COST_S)))
        while self._waiting and room:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                room -= 1
        # After the requests just let through, whose steps were scheduled as their waits ended.
        asyncio.get_running_loop().call_soon(self._close)
