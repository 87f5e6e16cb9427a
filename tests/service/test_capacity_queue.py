"""The Ultrafast pool's queue on the in-memory store and a fake clock: a waiter takes the slot given
back, times out at its deadline, stops when its client leaves, and the number waiting is bounded."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import errors
from mockserver.config.fixture import Capacity, Fixture, load_fixture
from mockserver.engine.pacing import FakeClock
from mockserver.service import capacity, capacity_queue
from mockserver.service.capacity_queue import Outcome, Queue
from mockserver.state.store import MemoryStore


def fixture(cap: int = 1, **policy: object) -> Fixture:
    data = load_fixture().model_dump()
    data["capacity"] = Capacity.model_validate({"ultrafast_concurrency": cap, **policy}).model_dump()
    return Fixture.model_validate(data)


def test_a_waiter_gets_the_slot_given_back_and_says_how_long_it_waited() -> None:
    async def run() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=1000)
        held = await capacity.acquire(store, fx, "org-a", "m")
        assert held is not None
        notes: list[tuple[Outcome, float]] = []

        async def give_back_later() -> None:
            for _ in range(10):  # ten polls of the fake clock: 0.2 s
                await asyncio.sleep(0)
            clock.advance(0.25)
            await held.released()

        waiting = asyncio.ensure_future(
            capacity.acquire(store, fx, "org-a", "m", queue=Queue(1.0, clock), noted=lambda *n: notes.append(n))
        )
        await give_back_later()
        slot = await waiting
        assert slot is not None and await store.in_flight(capacity.SERVER_POOL) == 1
        [(outcome, waited)] = notes
        assert outcome == "served" and 0.25 <= waited < 1.0

    asyncio.run(run())


def test_a_waiter_past_its_deadline_gets_the_429_after_exactly_the_wait() -> None:
    async def run() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=1000)
        assert await capacity.acquire(store, fx, "org-a", "m") is not None
        notes: list[tuple[Outcome, float]] = []
        with pytest.raises(errors.RateLimitError):
            await capacity.acquire(store, fx, "org-a", "m", queue=Queue(1.0, clock), noted=lambda *n: notes.append(n))
        assert notes == [("timed_out", pytest.approx(1.0))]
        assert capacity_queue.waiting() == 0

    asyncio.run(run())


def test_a_waiter_past_its_deadline_is_downgraded_by_policy() -> None:
    async def run() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=500, when_full="downgrade")
        assert await capacity.acquire(store, fx, "org-a", "m") is not None
        assert await capacity.acquire(store, fx, "org-a", "m", queue=Queue(0.5, clock)) is None

    asyncio.run(run())


def test_a_waiter_whose_client_leaves_stops_waiting_at_once() -> None:
    async def run() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=60_000)
        assert await capacity.acquire(store, fx, "org-a", "m") is not None
        left = asyncio.Event()
        notes: list[tuple[Outcome, float]] = []
        queue = Queue(60.0, clock, client_left=left.wait)
        waiting = asyncio.ensure_future(
            capacity.acquire(store, fx, "org-a", "m", queue=queue, noted=lambda *n: notes.append(n))
        )
        for _ in range(5):
            await asyncio.sleep(0)
        left.set()
        with pytest.raises(capacity_queue.ClientLeft):
            await waiting
        assert [outcome for outcome, _ in notes] == ["left"] and notes[0][1] < 60
        assert capacity_queue.waiting() == 0 and await store.in_flight(capacity.SERVER_POOL) == 1

    asyncio.run(run())


def test_the_number_waiting_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity_queue, "MAX_WAITERS", 1)

    async def run() -> None:
        clock = FakeClock()
        never = asyncio.Event()
        first = asyncio.ensure_future(
            capacity_queue.wait_for_slot(lambda: _false(), Queue(60.0, clock, client_left=never.wait))
        )
        await asyncio.sleep(0)
        assert capacity_queue.waiting() == 1
        assert await capacity_queue.wait_for_slot(lambda: _false(), Queue(60.0, clock)) == ("full", 0.0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert capacity_queue.waiting() == 0

    asyncio.run(run())


async def _false() -> bool:
    return False


def test_queue_ms_is_bounded_in_the_fixture() -> None:
    with pytest.raises(ValueError, match="queue_ms"):
        Capacity.model_validate({"queue_ms": 3_600_000})


def test_the_wait_follows_the_time_scale_but_never_passes_the_reply_time_limit() -> None:
    assert capacity_queue.wait_seconds(1_000, 1.0, 600) == 1.0
    assert capacity_queue.wait_seconds(1_000, 0.0, 600) == 0.0
    assert capacity_queue.wait_seconds(60_000, 100.0, 600) == 600  # not 6,000 s
