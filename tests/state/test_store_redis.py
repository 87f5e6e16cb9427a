"""The Redis store as several workers see it: two stores on two connections (two workers, or two
replicas) against one real ``redis-server`` share windows, slots and the ledger; a cap holds under
concurrent load from both; a dead worker's slots come back; Redis going away is a retryable 503.

The behaviour both stores share is tested in ``tests/state/test_store_contract.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from mockserver import errors
from mockserver.state import shared
from mockserver.state.redis import RedisStore
from mockserver.state.store import Allowance, UsageEntry
from tests.redis_server import RedisServer


@asynccontextmanager
async def opened(url: str, **options: object) -> AsyncIterator[RedisStore]:
    store = RedisStore(await shared.connect(url), url, **options)  # type: ignore[arg-type]
    try:
        yield store
    finally:
        await store.close()


def two_workers(redis_server: RedisServer, body: Callable[[RedisStore, RedisStore], Awaitable[None]]) -> None:
    async def main() -> None:
        async with opened(redis_server.url) as one, opened(redis_server.url) as two:
            await body(one, two)

    asyncio.run(main())


def entry(key: str, cost: float) -> UsageEntry:
    return UsageEntry(key, "org-a", "proj-a", "gpt-5", "default", 10, 20, 0, cost)


def test_two_workers_share_windows_slots_and_the_ledger(redis_server: RedisServer) -> None:
    async def body(one: RedisStore, two: RedisStore) -> None:
        three_rpm = [Allowance("sk-a|gpt-5|shared|requests", 3, 1)]
        admitted = [(await store.admit(0.0, three_rpm)).shortfall is None for store in (one, two, one, two)]
        assert admitted == [True, True, True, False]  # 3 RPM across both
        assert (await one.window(0.0, "sk-a|gpt-5|shared|requests", 3)).remaining == 0

        assert await one.acquire([("ultrafast", 2)], "worker-1-a") is None
        assert await two.acquire([("ultrafast", 2)], "worker-2-a") is None
        assert await one.acquire([("ultrafast", 2)], "worker-1-b") == 0
        assert (await two.in_flight("ultrafast"), one.held_here("ultrafast"), two.held_here("ultrafast")) == (2, 1, 1)
        await two.release(["ultrafast"], "worker-2-a")
        assert await one.acquire([("ultrafast", 2)], "worker-1-b") is None
        assert (one.held_here("ultrafast"), two.held_here("ultrafast"), await two.peak("ultrafast")) == (2, 0, 2)

        await one.record(entry("sk-a", 0.5))
        await two.record(entry("sk-a", 0.25))
        (row,) = await two.usage()
        assert (row.requests, row.input_tokens, row.output_tokens, row.cost_usd) == (2, 20, 40, 0.75)
        assert (await one.spend("org-a")).tokens == 60

        await two.reset()  # one reset is everyone's
        assert await one.usage() == []
        assert (await one.admit(0.0, three_rpm)).shortfall is None

    two_workers(redis_server, body)


# The ``record`` script of the version before the ledger counted cached and written prompt tokens:
# it writes no usage:cached_tokens or usage:cache_write_tokens hash.
OLDER_RECORD = """
if KEYS[9] and not redis.call('SET', KEYS[9], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local row = ARGV[2]
redis.call('HSETNX', KEYS[1], row, ARGV[3])
redis.call('HINCRBY', KEYS[2], row, 1)
redis.call('HINCRBY', KEYS[3], row, ARGV[4])
redis.call('HINCRBY', KEYS[4], row, ARGV[5])
redis.call('HINCRBY', KEYS[5], row, ARGV[6])
redis.call('HINCRBYFLOAT', KEYS[6], row, ARGV[7])
redis.call('HINCRBYFLOAT', KEYS[7], ARGV[8], ARGV[7])
redis.call('HINCRBY', KEYS[8], ARGV[8], tonumber(ARGV[4]) + tonumber(ARGV[5]))
return 1
"""


def test_a_ledger_written_by_the_older_version_reads_with_no_cached_tokens(redis_server: RedisServer) -> None:
    async def main() -> None:
        older = await shared.connect(redis_server.url)
        names = ["rows", "requests", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd"]
        keys = [f"mockserver:usage:{name}" for name in names] + ["mockserver:spend:cost_usd", "mockserver:spend:tokens"]
        row, who = '["sk-a", "gpt-5", "default"]', '["sk-a", "org-a", "proj-a", "gpt-5", "default"]'
        try:
            await older.eval(OLDER_RECORD, len(keys), *keys, 10_000, row, who, 1300, 20, 0, "0.5", "org-a")
        finally:
            await older.aclose()
        async with opened(redis_server.url) as store:
            (before,) = await store.usage()
            assert (before.requests, before.input_tokens, before.cost_usd) == (1, 1300, 0.5)
            assert (before.cached_tokens, before.cache_write_tokens) == (0, 0)
            cached = UsageEntry("sk-a", "org-a", "proj-a", "gpt-5", "default", 1300, 20, 0, 0.25, cached_tokens=1280)
            await store.record(cached)  # the same row, now counted by this version
            (after,) = await store.usage()
            counts = (after.requests, after.input_tokens, after.cached_tokens, after.cache_write_tokens)
            assert counts == (2, 2600, 1280, 0)
            assert (await store.spend("org-a")).tokens == 2640
            await store.reset()  # the new counters' hashes are forgotten with the rest
            assert await store.usage() == []

    asyncio.run(main())


def test_a_cap_holds_exactly_under_concurrent_acquires_from_two_workers(redis_server: RedisServer) -> None:
    cap, attempts = 7, 150

    async def body(one: RedisStore, two: RedisStore) -> None:
        pools = [("ultrafast", cap), ("ultrafast|org-a", None)]
        results = await asyncio.gather(
            *(store.acquire(pools, f"{name}-{n}") for n in range(attempts) for name, store in (("1", one), ("2", two)))
        )
        assert sum(result is None for result in results) == cap
        assert set(results) == {None, 0}
        assert await one.in_flight("ultrafast") == await two.in_flight("ultrafast|org-a") == cap
        assert await one.peak("ultrafast") == cap
        assert one.held_here("ultrafast") + two.held_here("ultrafast") == cap

    two_workers(redis_server, body)


def test_a_window_holds_exactly_under_concurrent_admissions_from_two_workers(redis_server: RedisServer) -> None:
    limit, attempts = 7, 150

    async def body(one: RedisStore, two: RedisStore) -> None:
        allowances, charges = [Allowance("sk-a|gpt-5|shared|requests", limit, 1)], [Allowance("sk-a|*", 1, 1)]
        admissions = await asyncio.gather(
            *(store.admit(0.0, allowances, also=charges) for _ in range(attempts) for store in (one, two))
        )
        assert sum(admission.shortfall is None for admission in admissions) == limit
        assert limit - 0.1 < (await two.window(0.0, "sk-a|*", 1)).used <= limit  # 1 a minute comes back

    two_workers(redis_server, body)


def test_a_dead_workers_slots_come_back_after_the_lease_ttl(redis_server: RedisServer) -> None:
    ttl = 1.0

    async def main() -> None:
        async with opened(redis_server.url, lease_ttl_s=ttl) as alive:
            dead = RedisStore(await shared.connect(redis_server.url), redis_server.url, lease_ttl_s=ttl)
            assert await dead.acquire([("ultrafast", 2)], "dead") is None
            assert await alive.acquire([("ultrafast", 2)], "alive") is None
            await dead.close()  # stops renewing without releasing: as if the worker died
            assert await alive.acquire([("ultrafast", 2)], "waiting") == 0
            started = time.monotonic()
            while await alive.acquire([("ultrafast", 2)], "waiting") == 0:
                assert time.monotonic() - started < ttl + 0.5, "the dead worker's slot did not come back"
                await asyncio.sleep(0.05)
            await asyncio.sleep(ttl * 0.5)  # past the first lease's TTL: only renewal kept it
            assert await alive.in_flight("ultrafast") == 2
            assert await alive.acquire([("ultrafast", 2)], "one-more") == 0
            assert alive.held_here("ultrafast") == 2

    asyncio.run(main())


def test_redis_away_is_a_retryable_503_and_the_store_recovers_by_itself(redis_server: RedisServer) -> None:
    async def main() -> None:
        async with opened(redis_server.url) as store:
            assert (await store.admit(0.0, [Allowance("r", 10, 1)])).shortfall is None
            redis_server.stop()
            try:
                for call in (
                    store.admit(0.0, [Allowance("r", 10, 1)]),
                    store.acquire([("ultrafast", 1)], "lease"),
                    store.record(entry("sk-a", 0.1)),
                    store.usage(),
                ):
                    started = time.monotonic()
                    with pytest.raises(errors.MockAPIError) as caught:
                        await call
                    assert time.monotonic() - started < 1.0  # refused at once, not after a hang
                    error = caught.value
                    assert (error.status_code, error.code) == (503, "state_unavailable")
                    assert error.headers["retry-after"] == "1" and error.headers["x-should-retry"] == "true"
                    assert "Redis at redis://127.0.0.1:" in error.message
            finally:
                redis_server.start()
            # The same store, with no restart: it reconnects and loads its scripts again.
            assert (await store.admit(0.0, [Allowance("r", 10, 1)])).shortfall is None
            assert await store.acquire([("ultrafast", 1)], "lease") is None
            assert await store.in_flight("ultrafast") == 1

    asyncio.run(main())


def test_reset_touches_only_its_own_prefix(redis_server: RedisServer) -> None:
    async def main() -> None:
        async with opened(redis_server.url) as mine, opened(redis_server.url, prefix="other:") as other:
            for store in (mine, other):
                assert (await store.admit(0.0, [Allowance("r", 1, 1)])).shortfall is None
                await store.record(entry("sk-a", 1.0))
                assert await store.acquire([("ultrafast", 1)], "lease") is None
            await mine.reset()
            assert await mine.usage() == [] and (await mine.admit(0.0, [Allowance("r", 1, 1)])).shortfall is None
            assert len(await other.usage()) == 1
            assert (await other.admit(0.0, [Allowance("r", 1, 1)])).shortfall is not None
            assert (await other.spend("org-a")).cost_usd == 1.0
            assert await other.acquire([("ultrafast", 1)], "another") == 0
        keys = redis_server.command("KEYS", "*").decode()
        assert "other:usage:rows" in keys and "mockserver:usage:rows" not in keys

    asyncio.run(main())


def test_describe_names_redis_without_its_password(redis_server: RedisServer) -> None:
    async def main() -> None:
        url = f"redis://:secret@127.0.0.1:{redis_server.port}/0"
        store = RedisStore(shared.client(url), url, prefix="ci:")
        try:
            line = store.describe()
        finally:
            await store.close()
        where = f"redis://127.0.0.1:{redis_server.port}/0"
        assert line == f"Redis at {where}, shared by every worker and replica (prefix ci:)"

    asyncio.run(main())


def test_a_lease_must_live_some_time(redis_server: RedisServer) -> None:
    async def main() -> None:
        connection = shared.client(redis_server.url)
        try:
            with pytest.raises(ValueError, match="more than 0 seconds"):
                RedisStore(connection, redis_server.url, lease_ttl_s=0)
        finally:
            await connection.aclose()

    asyncio.run(main())
