"""One set of behavioural tests for every :class:`~mockserver.state.store.Store`: the in-memory store
and the Redis store (against a real ``redis-server``) must answer the same calls the same way.

The Redis store keeps time by the Redis server's clock and ignores the ``now`` it is given, so the
tests pass real monotonic time to both and let real time pass only in short steps.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from mockserver.state import shared
from mockserver.state.redis import RedisStore
from mockserver.state.store import (
    LEDGER_COUNTS,
    Allowance,
    MemoryStore,
    Shortfall,
    Spend,
    Store,
    UsageEntry,
    UsageRow,
)

OpenStore = Callable[[], AbstractAsyncContextManager[Store]]


@pytest.fixture(params=["memory", "redis"])
def open_store(request: pytest.FixtureRequest) -> OpenStore:
    """Opens a fresh store of each kind (Redis: emptied, on a connection of its own)."""
    if request.param == "memory":

        @asynccontextmanager
        async def memory() -> AsyncIterator[Store]:
            yield MemoryStore()

        return memory
    url = request.getfixturevalue("redis_server").url

    @asynccontextmanager
    async def in_redis() -> AsyncIterator[Store]:
        store = RedisStore(await shared.connect(url), url)
        try:
            yield store
        finally:
            await store.close()

    return in_redis


def run(open_store: OpenStore, body: Callable[[Store], Awaitable[None]]) -> None:
    async def main() -> None:
        async with open_store() as store:
            await body(store)

    asyncio.run(main())


def now() -> float:
    return time.monotonic()


# -- rate windows ---------------------------------------------------------------------------


async def take(store: Store, *allowances: Allowance) -> Shortfall | None:
    """Admit a request that needs ``allowances`` (no charges, nothing reported): what is short, if any."""
    return (await store.admit(now(), allowances)).shortfall


def test_admit_takes_every_allowance_or_none(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await take(store, Allowance("r", 10, 1), Allowance("t", 100, 60)) is None
        refused = await take(store, Allowance("r", 10, 1), Allowance("t", 100, 50))
        assert refused is not None
        assert (refused.index, refused.used) == (1, 60)
        assert refused.retry_after == pytest.approx(6.0, abs=0.05)  # 10 tokens over, at 100 per 60 s
        assert (await store.window(now(), "r", 10)).remaining == 9  # the request window was not taken
        assert (await store.window(now(), "t", 100)).remaining == 40

    run(open_store, body)


def test_admit_takes_the_allowances_then_the_charges_and_reports_in_one_step(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        charges = [Allowance("overall-r", 100, 1), Allowance("overall-t", 10_000, 60)]
        report = [("r", 3), ("t", 100)]
        admitted = await store.admit(
            now(), [Allowance("r", 3, 1), Allowance("t", 100, 60)], also=charges, report=report
        )
        assert admitted.shortfall is None
        assert [(w.limit, w.remaining) for w in admitted.windows] == [(3, 2), (100, 40)]
        assert (await store.window(now(), "overall-t", 10_000)).remaining == 9_940
        # Short on tokens: nothing is taken, not even the charges, and the windows are reported as they are.
        refused = await store.admit(now(), [Allowance("r", 3, 1), Allowance("t", 100, 50)], also=charges, report=report)
        assert refused.shortfall is not None and (refused.shortfall.index, refused.shortfall.used) == (1, 60)
        assert [w.remaining for w in refused.windows] == [2, 40]
        assert (await store.window(now(), "overall-r", 100)).remaining == 99
        assert (await store.admit(now(), [], report=[("nothing", 5)])).windows[0].remaining == 5

    run(open_store, body)


def test_the_first_short_allowance_is_named(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        for _ in range(3):
            assert await take(store, Allowance("r", 3, 1), Allowance("t", 1000, 1)) is None
        refused = await take(store, Allowance("r", 3, 1), Allowance("t", 1000, 5000))
        assert refused is not None
        assert (refused.index, refused.used) == (0, 3)  # both are short: the first one is named
        assert refused.retry_after == pytest.approx(20.0, abs=0.05)  # "Limit 3, Used 3": 60 s / 3

    run(open_store, body)


def test_a_charge_is_taken_even_past_its_limit(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        for _ in range(2):
            admitted = await store.admit(now(), [Allowance("r", 10, 1)], also=[Allowance("t", 100, 70)])
            assert admitted.shortfall is None
        window = await store.window(now(), "t", 100)
        assert window.used == pytest.approx(140, abs=0.1)
        assert window.remaining == 0
        assert window.reset_seconds == pytest.approx(84, abs=0.1)  # 140 units at 100 per minute
        refused = await take(store, Allowance("t", 100, 1))
        assert refused is not None and refused.used == 140

    run(open_store, body)


def test_an_unused_window_is_full(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        window = await store.window(now(), "never", 50)
        assert (window.limit, window.used, window.remaining, window.reset_seconds) == (50, 0.0, 50, 0.0)

    run(open_store, body)


def test_windows_replenish_continuously(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        limit = 60_000  # 1,000 units a second
        assert await take(store, Allowance("t", limit, limit)) is None
        assert await take(store, Allowance("t", limit, 500)) is not None
        await asyncio.sleep(0.6)
        assert await take(store, Allowance("t", limit, 500)) is None  # 600 came back
        used = (await store.window(now(), "t", limit)).used
        assert limit - 1500 < used <= limit - 100  # 0.6 s to 1.5 s worth came back, 500 were taken

    run(open_store, body)


def test_buckets_are_independent(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await take(store, Allowance("a", 1, 1)) is None
        assert await take(store, Allowance("a", 1, 1)) is not None
        assert await take(store, Allowance("b", 1, 1)) is None

    run(open_store, body)


def test_admit_is_atomic_under_concurrent_requests(open_store: OpenStore) -> None:
    """Many admissions at once against one window of 7 requests: exactly 7 are admitted, and each
    admitted one took its charge (the check, the take and the charge are one step)."""

    async def body(store: Store) -> None:
        admissions = await asyncio.gather(
            *(store.admit(now(), [Allowance("r", 7, 1)], also=[Allowance("overall", 1, 1)]) for _ in range(60))
        )
        assert sum(a.shortfall is None for a in admissions) == 7
        assert 6.9 < (await store.window(now(), "overall", 1)).used <= 7  # 1 a minute comes back meanwhile

    run(open_store, body)


def test_the_memory_store_admits_atomically_across_threads() -> None:
    store, limit, threads = MemoryStore(), 5, 16
    start = threading.Barrier(threads)
    admitted: list[bool] = []

    def in_a_thread() -> None:
        start.wait()
        for _ in range(4):
            admission = asyncio.run(store.admit(now(), [Allowance("r", limit, 1)], also=[Allowance("all", 1, 1)]))
            admitted.append(admission.shortfall is None)  # list.append is atomic

    workers = [threading.Thread(target=in_a_thread) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert admitted.count(True) == limit and len(admitted) == threads * 4
    assert limit - 0.1 < asyncio.run(store.window(now(), "all", 1)).used <= limit  # 1 a minute comes back


# -- capacity pools -------------------------------------------------------------------------


def test_acquire_is_capped_per_pool_and_takes_all_or_nothing(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await store.acquire([("all", 2), ("org-a", 1)], "one") is None
        assert await store.acquire([("all", 2), ("org-a", 1)], "two") == 1  # org-a is full
        assert await store.in_flight("all") == 1  # ... and "two" took nothing in "all"
        assert await store.acquire([("all", 2), ("org-b", None)], "three") is None
        assert await store.acquire([("all", 2), ("org-b", None)], "four") == 0  # the server is full
        assert [await store.in_flight(pool) for pool in ("all", "org-a", "org-b")] == [2, 1, 1]
        assert [store.held_here(pool) for pool in ("all", "org-a", "org-b")] == [2, 1, 1]

    run(open_store, body)


def test_a_zero_cap_refuses_and_no_cap_is_unlimited(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await store.acquire([("closed", 0)], "one") == 0
        for lease in range(50):
            assert await store.acquire([("open", None)], f"lease-{lease}") is None
        assert (await store.in_flight("closed"), await store.in_flight("open")) == (0, 50)

    run(open_store, body)


def test_release_gives_back_and_twice_is_harmless(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        pools = [("all", 2), ("org-a", None)]
        assert await store.acquire(pools, "one") is None
        assert await store.acquire(pools, "two") is None
        assert await store.acquire(pools, "three") == 0
        await store.release(["all", "org-a"], "one")
        await store.release(["all", "org-a"], "one")  # again: "two" keeps its slot
        await store.release(["all", "org-a"], "never-taken")
        assert (await store.in_flight("all"), await store.in_flight("org-a"), store.held_here("all")) == (1, 1, 1)
        assert await store.acquire(pools, "three") is None
        assert await store.acquire(pools, "four") == 0

    run(open_store, body)


def test_peak_is_the_most_slots_taken_at_once(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await store.peak("all") == 0
        for lease in ("one", "two", "three"):
            assert await store.acquire([("all", None)], lease) is None
        for lease in ("one", "two"):
            await store.release(["all"], lease)
        assert await store.acquire([("all", None)], "four") is None
        assert (await store.peak("all"), await store.in_flight("all")) == (3, 2)

    run(open_store, body)


def test_reset_forgets_windows_ledger_and_peaks_but_keeps_slots_in_flight(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await take(store, Allowance("r", 1, 1)) is None
        await store.record(entry())
        for lease in ("one", "two", "three"):
            assert await store.acquire([("all", 3)], lease) is None
        await store.release(["all"], "one")
        await store.reset()
        assert (await store.window(now(), "r", 1)).used == 0
        assert await take(store, Allowance("r", 1, 1)) is None
        assert await store.usage() == []
        assert await store.spend("org-a") == Spend()
        assert (await store.in_flight("all"), await store.peak("all"), store.held_here("all")) == (2, 2, 2)
        assert await store.acquire([("all", 3)], "four") is None
        assert await store.acquire([("all", 3)], "five") == 0  # the two in flight still count
        await store.release(["all"], "two")  # ... and are given back as before
        assert await store.in_flight("all") == 2

    run(open_store, body)


# -- ledger ---------------------------------------------------------------------------------


def entry(key: str = "sk-a", model: str = "gpt-5", tier: str = "default", **counts: float) -> UsageEntry:
    values = {"input_tokens": 10, "output_tokens": 20, "reasoning_tokens": 5, "cost_usd": 0.25, **counts}
    return UsageEntry(key, "org-a", "proj-a", model, tier, **values)  # type: ignore[arg-type]


def test_record_adds_up_per_key_model_and_tier(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        await store.record(entry())
        await store.record(entry(input_tokens=1, output_tokens=2, reasoning_tokens=0, cost_usd=0.1))
        await store.record(entry(tier="priority"))
        await store.record(entry(key="sk-b", model="gpt-5-mini", cost_usd=0.0))
        rows = sorted(await store.usage(), key=lambda row: (row.key, row.model, row.tier))
        assert [(row.key, row.model, row.tier, row.requests) for row in rows] == [
            ("sk-a", "gpt-5", "default", 2),
            ("sk-a", "gpt-5", "priority", 1),
            ("sk-b", "gpt-5-mini", "default", 1),
        ]
        first = rows[0]
        assert (first.organization, first.project) == ("org-a", "proj-a")
        assert (first.input_tokens, first.output_tokens, first.reasoning_tokens) == (11, 22, 5)
        assert first.cost_usd == pytest.approx(0.35)
        assert rows[2].cost_usd == 0.0

    run(open_store, body)


def test_record_adds_up_the_prompt_tokens_read_from_and_written_to_the_cache(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        await store.record(entry(input_tokens=1300, cache_write_tokens=1280))  # the write
        await store.record(entry(input_tokens=1300, cached_tokens=1280))  # then the read
        await store.record(entry(input_tokens=1300, cached_tokens=1280, cache_write_tokens=128))
        await store.record(entry(tier="priority"))  # no cache: both 0
        rows = sorted(await store.usage(), key=lambda row: row.tier)
        assert [(row.tier, row.input_tokens, row.cached_tokens, row.cache_write_tokens) for row in rows] == [
            ("default", 3900, 2560, 1408),
            ("priority", 10, 0, 0),
        ]
        assert (await store.spend("org-a")).tokens == 3910 + 4 * 20  # still input + output, cached ones included

    run(open_store, body)


def test_spend_totals_cost_and_tokens_per_organization(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await store.spend("org-a") == Spend()
        await store.record(entry())
        await store.record(entry(key="sk-b", cost_usd=1.5))
        spent = await store.spend("org-a")
        assert spent.cost_usd == pytest.approx(1.75)
        assert spent.tokens == 60  # input and output tokens (reasoning is part of output)
        assert await store.spend("org-b") == Spend()

    run(open_store, body)


def test_usage_rows_are_copies(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        await store.record(entry())
        (row,) = await store.usage()
        row.requests = 99
        assert (await store.usage()) == [
            UsageRow("sk-a", "org-a", "proj-a", "gpt-5", "default", 1, 10, 20, 5, pytest.approx(0.25))  # type: ignore[arg-type]
        ]

    run(open_store, body)


def test_describe_says_where_the_state_is(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        line = store.describe()
        assert "\n" not in line
        assert ("Redis at redis://127.0.0.1:" in line and "prefix mockserver:" in line) or "in memory" in line

    run(open_store, body)


# -- prompt cache ---------------------------------------------------------------------------


def test_the_prompt_cache_answers_the_longest_prefix_held_per_scope_until_reset(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        assert await store.cache_hit(now(), "org-a", ["p1", "p2"]) == -1
        await store.cache_put(now(), "org-a", [("p1", 60.0), ("p2", 60.0)])
        assert await store.cache_hit(now(), "org-a", ["p1", "p2", "p3"]) == 1
        assert await store.cache_hit(now(), "org-a", ["p1", "x"]) == 0
        assert await store.cache_hit(now(), "org-b", ["p1", "p2"]) == -1
        await store.reset()
        assert await store.cache_hit(now(), "org-a", ["p1", "p2"]) == -1

    run(open_store, body)


def test_a_prompt_cache_entry_expires_after_its_ttl(open_store: OpenStore) -> None:
    async def body(store: Store) -> None:
        await store.cache_put(now(), "org", [("short", 0.2), ("long", 60.0)])
        await asyncio.sleep(0.3)
        assert await store.cache_hit(now(), "org", ["long", "short"]) == 0  # "short" is gone

    run(open_store, body)


def test_the_ledger_counts_are_a_rows_every_count() -> None:
    """What the Redis store keeps a hash for and the dashboard sums: every field of a row but its key."""
    identity = {"key", "organization", "project", "model", "tier"}
    assert set(LEDGER_COUNTS) == {f.name for f in dataclasses.fields(UsageRow)} - identity
    assert len(set(LEDGER_COUNTS)) == len(LEDGER_COUNTS)
