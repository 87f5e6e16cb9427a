"""The Ultrafast capacity pools and slots, against the in-memory store."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mockserver import errors
from mockserver.config.fixture import Capacity, Fixture, load_fixture
from mockserver.service import capacity
from mockserver.state.store import MemoryStore


def fixture(cap: int | None = 2, org_cap: int | None = None, **policy: object) -> Fixture:
    data = load_fixture().model_dump()
    data["capacity"] = Capacity.model_validate({"ultrafast_concurrency": cap, **policy}).model_dump()
    data["organizations"] = [{"id": "org-a", "ultrafast_concurrency": org_cap}]
    return Fixture.model_validate(data)


def test_slots_up_to_the_cap_then_a_retryable_429() -> None:
    asyncio.run(_test_slots_up_to_the_cap_then_a_retryable_429())


async def _test_slots_up_to_the_cap_then_a_retryable_429() -> None:
    store, fx = MemoryStore(), fixture(cap=2, retry_after_ms=1500)
    slots = [await capacity.acquire(store, fx, "org-a", "gpt-5.6-sol") for _ in range(2)]
    assert all(slots) and await store.in_flight(capacity.SERVER_POOL) == 2
    with pytest.raises(errors.RateLimitError) as caught:
        await capacity.acquire(store, fx, "org-b", "gpt-5.6-sol")
    error = caught.value
    assert (error.status_code, error.code, error.param) == (429, "rate_limit_exceeded", "service_tier")
    assert "at capacity for model `gpt-5.6-sol`. Please try again in 1.5s" in error.message
    assert error.headers == {"retry-after-ms": "1500", "retry-after": "2", "x-should-retry": "true"}


def test_503_when_configured() -> None:
    asyncio.run(_test_503_when_configured())


async def _test_503_when_configured() -> None:
    with pytest.raises(errors.ServiceUnavailableError) as caught:
        await capacity.acquire(MemoryStore(), fixture(cap=0, reject_status=503), "org-a", "gpt-5.6-sol")
    assert (caught.value.status_code, caught.value.type, caught.value.code) == (
        503,
        "service_unavailable_error",
        "server_is_overloaded",
    )


def test_downgrade_policy_returns_no_slot() -> None:
    asyncio.run(_test_downgrade_policy_returns_no_slot())


async def _test_downgrade_policy_returns_no_slot() -> None:
    assert await capacity.acquire(MemoryStore(), fixture(cap=0, when_full="downgrade"), "org-a", "m") is None


def test_the_organization_cap_applies_beside_the_server_cap() -> None:
    asyncio.run(_test_the_organization_cap_applies_beside_the_server_cap())


async def _test_the_organization_cap_applies_beside_the_server_cap() -> None:
    store, fx = MemoryStore(), fixture(cap=5, org_cap=1, when_full="downgrade")
    first = await capacity.acquire(store, fx, "org-a", "m")
    assert first is not None
    assert await capacity.acquire(store, fx, "org-a", "m") is None  # org-a is full
    assert await capacity.acquire(store, fx, "org-b", "m") is not None  # others are not
    await first.released()
    assert await capacity.acquire(store, fx, "org-a", "m") is not None


def test_release_is_exactly_once() -> None:
    asyncio.run(_test_release_is_exactly_once())


async def _test_release_is_exactly_once() -> None:
    store, fx = MemoryStore(), fixture(cap=3)
    slot = await capacity.acquire(store, fx, "org-a", "m")
    assert slot is not None
    other = await capacity.acquire(store, fx, "org-a", "m")
    for _ in range(3):
        slot.release()
    await slot.released()
    assert await store.in_flight(capacity.SERVER_POOL) == 1
    assert other is not None
    await other.released()
    assert await store.in_flight(capacity.SERVER_POOL) == 0
    assert await store.in_flight(capacity.org_pool("org-a")) == 0


def test_the_cap_is_exact_under_threads() -> None:
    asyncio.run(_test_the_cap_is_exact_under_threads())


async def _test_the_cap_is_exact_under_threads() -> None:
    store, fx = MemoryStore(), fixture(cap=4, when_full="downgrade")
    taken: list[capacity.Slot] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    async def grab() -> None:
        for _ in range(200):
            slot = await capacity.acquire(store, fx, "org-a", "m")
            if slot is not None:
                assert await store.in_flight(capacity.SERVER_POOL) <= 4
                with lock:
                    taken.append(slot)
                await slot.released()

    def in_a_thread() -> None:
        start.wait()
        asyncio.run(grab())

    threads = [threading.Thread(target=in_a_thread) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert taken and await store.peak(capacity.SERVER_POOL) <= 4
    assert await store.in_flight(capacity.SERVER_POOL) == 0


def test_reset_keeps_slots_in_flight() -> None:
    asyncio.run(_test_reset_keeps_slots_in_flight())


async def _test_reset_keeps_slots_in_flight() -> None:
    store, fx = MemoryStore(), fixture(cap=1, when_full="downgrade")
    slot = await capacity.acquire(store, fx, "org-a", "m")
    await store.reset()
    assert await capacity.acquire(store, fx, "org-a", "m") is None  # the reply in flight still holds its slot
    assert slot is not None
    await slot.released()
    assert await store.in_flight(capacity.SERVER_POOL) == 0
