"""The Ultrafast pool's queue when its clock's timers are imperfect or the pools change under it: a
deadline timer that fires a little early (uvloop counts whole milliseconds of a cached time) still
ends the wait at the deadline, and a cap changed while requests wait (a PATCH, a reset) holds for
them at once: raised, it lets them in without waiting for a slot to come back; lowered, it keeps
them out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mockserver import errors
from mockserver.service import capacity
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.capacity.queue import Queue
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


class Config:
    """The configuration in force, as the server holds it: a PATCH replaces it."""

    def __init__(self, cap: int) -> None:
        self.fixture = fixture(cap, queue_ms=60_000)

    def patch(self, cap: int, store: MemoryStore) -> None:
        self.fixture = fixture(cap, queue_ms=60_000)
        capacity_queue.reconfigured(store)


def waiting_under(config: Config, store: MemoryStore, clock: ManualClock) -> asyncio.Future[capacity.Slot | None]:
    queue = Queue(60.0, clock, fixture=lambda: config.fixture)
    return asyncio.ensure_future(capacity.acquire(store, config.fixture, "org-a", "m", queue=queue))


def test_a_cap_raised_while_requests_wait_lets_them_in_at_once() -> None:
    async def body() -> None:
        clock, store, config = ManualClock(), MemoryStore(), Config(cap=1)
        await held(store, config.fixture)
        first, second = waiting_under(config, store, clock), waiting_under(config, store, clock)
        await settle()
        config.patch(cap=3, store=store)
        await settle()
        assert first.done() and second.done() and first.result() and second.result()
        assert await store.in_flight(capacity.SERVER_POOL) == 3

    run(body)


def test_a_cap_lowered_while_requests_wait_holds_for_them_too() -> None:
    async def body() -> None:
        clock, store, config = ManualClock(), MemoryStore(), Config(cap=2)
        one, two = await held(store, config.fixture), await held(store, config.fixture)
        waiting = waiting_under(config, store, clock)
        await settle()
        config.patch(cap=1, store=store)
        await one.released()
        await settle()
        assert not waiting.done(), "served past the cap in force"
        await two.released()
        await settle()
        assert waiting.done() and waiting.result() is not None

    run(body)
