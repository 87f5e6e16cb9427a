"""The Ultrafast pool's queue on a clock the test moves: a waiter takes the slot given back, times
out at its deadline, stops when its client leaves, and the number waiting is bounded. Waiters are
served first come, first served, a slot given back wakes exactly one of them, the in-memory store is
never polled, and a shared store is polled once per ``POLL_S`` for the whole line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from mockserver import errors
from mockserver.config.fixture import Capacity, Fixture, load_fixture
from mockserver.engine.pacing import FakeClock
from mockserver.service import capacity
from mockserver.service.capacity import queue as capacity_queue
from mockserver.service.capacity.queue import Outcome, Queue
from mockserver.state.store import MemoryStore
from tests.service.manual_clock import ManualClock, settle

WAIT_S = 60.0


def fixture(cap: int = 1, orgs: dict[str, int] | None = None, **policy: object) -> Fixture:
    data = load_fixture().model_dump()
    data["capacity"] = Capacity.model_validate({"ultrafast_concurrency": cap, **policy}).model_dump()
    for org in data["organizations"]:
        if orgs and org["id"] in orgs:
            org["ultrafast_concurrency"] = orgs[org["id"]]
    return Fixture.model_validate(data)


def org_ids() -> list[str]:
    return [org.id for org in load_fixture().organizations]


class Counted:
    """A store whose ``acquire`` calls are counted. ``shared``: it is not the in-memory store (so its
    line polls), and :meth:`free_elsewhere` gives a slot back as another process would, unheard of here."""

    def __init__(self, shared: bool = False) -> None:
        self.inner = MemoryStore()
        self.store: Any = self if shared else self.inner
        self.attempts = 0
        if not shared:
            original = self.inner.acquire

            async def counted(pools: Sequence[tuple[str, int | None]], lease: str) -> int | None:
                self.attempts += 1
                return await original(pools, lease)

            self.inner.acquire = counted  # type: ignore[method-assign]

    async def acquire(self, pools: Sequence[tuple[str, int | None]], lease: str) -> int | None:
        self.attempts += 1
        return await self.inner.acquire(pools, lease)

    async def release(self, pools: Sequence[str], lease: str) -> None:
        await self.inner.release(pools, lease)

    async def in_flight(self, pool: str) -> int:
        return await self.inner.in_flight(pool)

    async def free_elsewhere(self, slot: capacity.Slot) -> None:
        await self.inner.release(slot.pools, slot.lease)


class Waiting:
    """Requests started one after another, each waiting before the next arrives."""

    def __init__(self, store: Any, fx: Fixture, clock: ManualClock) -> None:
        self.store, self.fx, self.clock = store, fx, clock
        self.tasks: list[asyncio.Task[capacity.Slot | None]] = []
        self.leaving: list[asyncio.Event] = []

    async def arrive(self, org: str = "org-a", count: int = 1) -> None:
        for _ in range(count):
            left = asyncio.Event()
            queue = Queue(WAIT_S, self.clock, client_left=left.wait)
            self.tasks.append(asyncio.ensure_future(capacity.acquire(self.store, self.fx, org, "m", queue=queue)))
            self.leaving.append(left)
            await settle()

    def served(self) -> list[int]:
        ended = [(i, task) for i, task in enumerate(self.tasks) if task.done() and not task.cancelled()]
        return [i for i, task in ended if task.exception() is None]


async def held(store: Any, fx: Fixture, org: str = "org-a") -> capacity.Slot:
    slot = await capacity.acquire(store, fx, org, "m")
    assert slot is not None
    return slot


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(body())  # type: ignore[arg-type]
    assert capacity_queue.waiting() == 0
    assert len(capacity_queue._LINES) == 0  # no line is kept once nobody waits in it


def test_a_waiter_gets_the_slot_given_back_and_says_how_long_it_waited() -> None:
    async def body() -> None:
        clock, store, fx = ManualClock(), MemoryStore(), fixture(queue_ms=1000)
        slot = await held(store, fx)
        notes: list[tuple[Outcome, float]] = []
        waiting = asyncio.ensure_future(
            capacity.acquire(store, fx, "org-a", "m", queue=Queue(1.0, clock), noted=lambda *n: notes.append(n))
        )
        await settle()
        clock.advance(0.25)
        await slot.released()
        assert await waiting is not None and await store.in_flight(capacity.SERVER_POOL) == 1
        assert notes == [("served", 0.25)]

    run(body)


def test_a_waiter_past_its_deadline_gets_the_429_after_exactly_the_wait() -> None:
    async def body() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=1000)
        await held(store, fx)
        notes: list[tuple[Outcome, float]] = []
        with pytest.raises(errors.RateLimitError):
            await capacity.acquire(store, fx, "org-a", "m", queue=Queue(1.0, clock), noted=lambda *n: notes.append(n))
        assert notes == [("timed_out", pytest.approx(1.0))]

    run(body)


def test_a_waiter_past_its_deadline_is_downgraded_by_policy() -> None:
    async def body() -> None:
        clock, store, fx = FakeClock(), MemoryStore(), fixture(queue_ms=500, when_full="downgrade")
        await held(store, fx)
        assert await capacity.acquire(store, fx, "org-a", "m", queue=Queue(0.5, clock)) is None

    run(body)


def test_a_waiter_whose_client_leaves_stops_waiting_at_once() -> None:
    async def body() -> None:
        clock, store, fx = ManualClock(), MemoryStore(), fixture(queue_ms=60_000)
        await held(store, fx)
        left = asyncio.Event()
        notes: list[tuple[Outcome, float]] = []
        queue = Queue(WAIT_S, clock, client_left=left.wait)
        waiting = asyncio.ensure_future(
            capacity.acquire(store, fx, "org-a", "m", queue=queue, noted=lambda *n: notes.append(n))
        )
        await settle()
        clock.advance(2.0)
        left.set()
        with pytest.raises(capacity_queue.ClientLeft):
            await waiting
        assert notes == [("left", 2.0)]
        assert capacity_queue.waiting() == 0 and await store.in_flight(capacity.SERVER_POOL) == 1
        assert clock.pending() == 0  # its deadline's timer is gone with it

    run(body)


def test_the_number_waiting_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity_queue, "MAX_WAITERS", 1)
    store = MemoryStore()

    async def body() -> None:
        clock = ManualClock()
        never = asyncio.Event()
        first = asyncio.ensure_future(
            capacity_queue.wait_for_slot(_false, Queue(WAIT_S, clock, client_left=never.wait), store)
        )
        await settle()
        assert capacity_queue.waiting() == 1
        assert await capacity_queue.wait_for_slot(_false, Queue(WAIT_S, clock), store) == ("full", 0.0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first

    run(body)


def test_the_documented_bound_on_waiters_is_the_one_enforced() -> None:
    assert capacity_queue.MAX_WAITERS == 1_024 and capacity_queue.POLL_S == 0.02


async def _false() -> bool:
    return False


def test_waiters_are_served_in_order_of_arrival_one_woken_per_slot_given_back() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(queue_ms=60_000)
        store = counted.store
        holder = await held(store, fx)
        line = Waiting(store, fx, clock)
        await line.arrive(count=5)
        for served in range(5):
            counted.attempts = 0
            await holder.released()
            await settle()
            assert line.served() == list(range(served + 1))
            assert counted.attempts == 1  # exactly one waiter tried: the first in line
            holder = line.tasks[served].result()  # type: ignore[assignment]
        await holder.released()

    run(body)


def test_slots_given_back_together_wake_as_many_waiters_in_order() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(cap=2, queue_ms=60_000)
        store = counted.store
        holders = [await held(store, fx), await held(store, fx)]
        line = Waiting(store, fx, clock)
        await line.arrive(count=4)
        counted.attempts = 0
        for slot in holders:  # both given back before any waiter runs
            await store.release(slot.pools, slot.lease)
            capacity_queue.notify(store)
        await settle()
        assert line.served() == [0, 1] and counted.attempts == 2
        for i in (0, 1):
            await line.tasks[i].result().released()  # type: ignore[union-attr]
        await settle()
        assert line.served() == [0, 1, 2, 3]
        for i in (2, 3):
            await line.tasks[i].result().released()  # type: ignore[union-attr]

    run(body)


def test_a_woken_waiter_that_leaves_hands_its_turn_to_the_next() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(queue_ms=60_000)
        store = counted.store
        holder = await held(store, fx)
        line = Waiting(store, fx, clock)
        await line.arrive(count=3)
        await store.release(holder.pools, holder.lease)
        capacity_queue.notify(store)  # the first is woken; its client leaves before it runs
        line.leaving[0].set()
        await settle()
        with pytest.raises(capacity_queue.ClientLeft):
            line.tasks[0].result()
        assert line.served() == [1]  # the second took the slot; the third still waits
        assert not line.tasks[2].done()
        line.tasks[1].result().release()  # type: ignore[union-attr]
        await settle()
        assert line.served() == [1, 2]
        line.tasks[2].result().release()  # type: ignore[union-attr]
        await settle()

    run(body)


def test_a_waiter_that_leaves_unwoken_is_out_of_the_line_at_once() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(queue_ms=60_000)
        store = counted.store
        holder = await held(store, fx)
        line = Waiting(store, fx, clock)
        await line.arrive(count=3)
        line.leaving[0].set()
        await settle()
        assert capacity_queue.waiting() == 2
        counted.attempts = 0
        await holder.released()
        await settle()
        assert line.served() == [1] and counted.attempts == 1
        for task in line.tasks[1:]:
            if task.done():
                task.result().release()  # type: ignore[union-attr]
                await settle()

    run(body)


def test_a_refused_waiter_keeps_its_place_and_the_slot_goes_to_another_organization() -> None:
    first, second = org_ids()[:2]

    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(cap=2, orgs={first: 1}, queue_ms=60_000)
        store = counted.store
        first_holds = await held(store, fx, first)  # the first organization's one slot
        second_holds = await held(store, fx, second)  # the server's second slot
        line = Waiting(store, fx, clock)
        await line.arrive(first, count=10)  # ten of the first organization wait, ahead
        await line.arrive(second, count=1)
        counted.attempts = 0
        await second_holds.released()  # a server slot: the first organization's own pool is still full
        await settle()
        assert line.served() == [10]
        assert counted.attempts == 2  # one refusal for the whole first organization, then the second's
        counted.attempts = 0
        await first_holds.released()
        await settle()
        assert line.served() == [0, 10] and counted.attempts == 1  # the first in line, still first
        for i in (0, 10):
            line.tasks[i].result().release()  # type: ignore[union-attr]
            await settle()
        for event in line.leaving:
            event.set()
        await settle()

    run(body)


def test_the_in_memory_store_is_never_polled() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(), fixture(queue_ms=60_000)
        store = counted.store
        holder = await held(store, fx)
        line = Waiting(store, fx, clock)
        await line.arrive(count=100)
        counted.attempts = 0
        for _ in range(100):  # two seconds, in steps of POLL_S
            clock.advance(capacity_queue.POLL_S)
            await settle(2)
        assert counted.attempts == 0 and line.served() == []
        assert len(clock.timers) == 100  # each waiter's deadline, and no poll
        await holder.released()
        await settle()
        assert line.served() == [0]
        line.tasks[0].result().release()  # type: ignore[union-attr]
        for event in line.leaving:
            event.set()
        await settle()

    run(body)


def test_a_shared_store_is_polled_once_per_poll_period_for_the_whole_line() -> None:
    async def body() -> None:
        clock, counted, fx = ManualClock(), Counted(shared=True), fixture(cap=3, queue_ms=60_000)
        store = counted.store
        holders = [await held(store, fx) for _ in range(3)]
        line = Waiting(store, fx, clock)
        await line.arrive(count=100)
        counted.attempts = 0
        await settle()
        assert counted.attempts == 0  # nothing before the first poll
        for _ in range(50):  # one second: fifty polls, one refused attempt each (one organization)
            clock.advance(capacity_queue.POLL_S)
            await settle(4)
        assert counted.attempts == 50 and line.served() == []
        for slot in holders:  # three slots given back by another process: seen at the next poll
            await counted.free_elsewhere(slot)
        await settle()
        assert line.served() == []
        counted.attempts = 0
        clock.advance(capacity_queue.POLL_S)
        await settle()
        assert line.served() == [0, 1, 2]  # one poll serves all three, in order
        assert counted.attempts == 4  # three served, one refused: the poll ends there
        for event in line.leaving:
            event.set()
        await settle()
        for i in (0, 1, 2):
            await line.tasks[i].result().released()  # type: ignore[union-attr]
        assert clock.pending() == 0  # the poll stopped with the last waiter

    run(body)


def test_queue_ms_is_bounded_in_the_fixture() -> None:
    with pytest.raises(ValueError, match="queue_ms"):
        Capacity.model_validate({"queue_ms": 3_600_000})


def test_the_wait_follows_the_time_scale_but_never_passes_the_reply_time_limit() -> None:
    assert capacity_queue.wait_seconds(1_000, 1.0, 600) == 1.0
    assert capacity_queue.wait_seconds(1_000, 0.0, 600) == 0.0
    assert capacity_queue.wait_seconds(60_000, 100.0, 600) == 600  # not 6,000 s
