"""The prompt cache's entries, on a fake clock (the memory store) and on a real ``redis-server``."""

from __future__ import annotations

import asyncio
import time

import pytest

from mockserver.state import shared
from mockserver.state.prompt_cache import MISS, MemoryPromptCache
from mockserver.state.redis import RedisStore
from mockserver.state.store import MemoryStore
from tests.redis_server import RedisServer


def test_a_hit_is_the_longest_prefix_held() -> None:
    cache = MemoryPromptCache()
    assert cache.hit(0.0, "org-a", ["p1", "p2", "p3"]) == MISS
    cache.put(0.0, "org-a", [("p1", 60.0), ("p2", 60.0)])
    assert cache.hit(1.0, "org-a", ["p1", "p2", "p3"]) == 1
    assert cache.hit(1.0, "org-a", ["p1", "other"]) == 0
    assert cache.hit(1.0, "org-a", ["other"]) == MISS


def test_scopes_are_kept_apart() -> None:
    cache = MemoryPromptCache()
    cache.put(0.0, "org-a", [("p1", 60.0)])
    assert cache.hit(1.0, "org-b", ["p1"]) == MISS
    assert cache.hit(1.0, "org-a", ["p1"]) == 0


def test_an_entry_expires_after_its_ttl_and_a_put_refreshes_it() -> None:
    cache = MemoryPromptCache()
    cache.put(0.0, "org", [("p", 10.0)])
    assert cache.hit(9.9, "org", ["p"]) == 0
    cache.put(9.9, "org", [("p", 10.0)])  # a hit is written again: it lives on from now
    assert cache.hit(19.8, "org", ["p"]) == 0
    assert cache.hit(19.9, "org", ["p"]) == MISS
    cache.put(0.0, "long", [("q", 3600.0)])
    cache.put(1.0, "long", [("q", 300.0)])  # a shorter time to live never cuts a longer one short
    assert cache.hit(3000.0, "long", ["q"]) == 0


def test_a_scope_keeps_at_most_its_bound_dropping_the_least_recently_used() -> None:
    cache = MemoryPromptCache(per_scope=3, in_total=100)
    cache.put(0.0, "org", [("a", 60.0), ("b", 60.0), ("c", 60.0)])
    cache.put(1.0, "org", [("a", 60.0)])  # used again: now the most recent
    cache.put(2.0, "org", [("d", 60.0)])
    assert [cache.hit(3.0, "org", [name]) for name in "abcd"] == [0, MISS, 0, 0]
    assert cache.size() == 3


def test_the_total_bound_takes_from_the_least_recently_written_scope() -> None:
    cache = MemoryPromptCache(per_scope=10, in_total=4)
    cache.put(0.0, "old", [("a", 60.0), ("b", 60.0)])
    cache.put(1.0, "new", [("c", 60.0), ("d", 60.0), ("e", 60.0)])
    assert cache.size() == 4
    assert cache.hit(2.0, "old", ["a"]) == MISS
    assert cache.hit(2.0, "old", ["b"]) == 0
    assert all(cache.hit(2.0, "new", [name]) == 0 for name in "cde")


def test_expired_entries_are_dropped_when_the_scope_is_written() -> None:
    cache = MemoryPromptCache()
    cache.put(0.0, "org", [(f"p{i}", 1.0) for i in range(100)])
    cache.put(5.0, "org", [("fresh", 1.0)])
    assert cache.size() == 1


def test_the_memory_store_forgets_the_cache_on_reset() -> None:
    async def main() -> None:
        store = MemoryStore()
        await store.cache_put(0.0, "org", [("p", 60.0)])
        assert await store.cache_hit(1.0, "org", ["p"]) == 0
        await store.reset()
        assert await store.cache_hit(1.0, "org", ["p"]) == MISS

    asyncio.run(main())


def test_the_redis_store_keeps_the_same_entries_by_its_own_clock(redis_server: RedisServer) -> None:
    async def main() -> None:
        store = RedisStore(await shared.connect(redis_server.url), redis_server.url, prompt_cache_entries=3)
        other = RedisStore(await shared.connect(redis_server.url), redis_server.url)
        try:
            assert await store.cache_hit(0.0, "org", ["p1", "p2"]) == MISS
            await store.cache_put(0.0, "org", [("p1", 60.0), ("p2", 0.3)])
            assert await other.cache_hit(0.0, "org", ["p1", "p2", "p3"]) == 1  # another worker agrees
            assert await other.cache_hit(0.0, "org-b", ["p1"]) == MISS
            time.sleep(0.35)
            assert await other.cache_hit(0.0, "org", ["p1", "p2"]) == 0  # p2 expired, by Redis's clock
            await store.cache_put(0.0, "org", [("a", 60.0), ("b", 61.0), ("c", 62.0)])  # past the bound of 3
            assert await other.cache_hit(0.0, "org", ["p1"]) == MISS  # the soonest to expire went first
            assert [await other.cache_hit(0.0, "org", [name]) for name in "abc"] == [0, 0, 0]
            ttl_ms = await other._redis.pttl(f"{shared.DEFAULT_PREFIX}pcache:org")
            assert 61_000 < ttl_ms <= 62_000  # the set goes when its last entry does
            await other.reset()
            assert await store.cache_hit(0.0, "org", ["a", "b", "c"]) == MISS
            assert not await other._redis.exists(f"{shared.DEFAULT_PREFIX}pcache:org")
        finally:
            await store.close()
            await other.close()

    asyncio.run(main())


@pytest.mark.parametrize("entries", [[], [("p", 60.0)]])
def test_an_empty_lookup_or_write_is_harmless(entries: list[tuple[str, float]]) -> None:
    cache = MemoryPromptCache()
    cache.put(0.0, "org", entries)
    assert cache.hit(0.0, "org", []) == MISS
