"""The Ultrafast pool's queue when its clock's timers are imperfect or the pools change under it: a
deadline timer that fires a little early (uvloop counts whole milliseconds of a cached time) still
ends the wait at the deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mockserver import errors
from mockserver.service import capacity
from mockserver.service.capacity_queue import Queue
from mockserver.state.store import MemoryStore
from tests.service.manual_clock import ManualClock, settle
from tests.service.test_capacity_queue import fixture, held, run


class EarlyClock(ManualClock):
    """Every timer fires 1 ms before its deadline, as uvloop's may."""

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.Handle:
        return super().call_at(deadline - 0.001, callback)


def test_a_deadline_timer_that_fires_early_still_ends_the_wait_at_the_deadline() -> None:
    async def body() -> None:
        clock, store, fx = EarlyClock(), MemoryStore(), fixture(queue_ms=1000)
        await held(store, fx)
        waiting = asyncio.ensure_future(capacity.acquire(store, fx, "org-a", "m", queue=Queue(1.0, clock)))
        await settle()
        clock.advance(0.9995)  # the timer fires, half a millisecond before the deadline
        await settle()
        assert not waiting.done()
        clock.advance(0.001)  # past the deadline
        await settle()
        assert waiting.done(), "the waiter outlived its deadline"
        assert isinstance(waiting.exception(), errors.RateLimitError)

    run(body)
