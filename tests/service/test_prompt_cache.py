"""OpenAI's automatic prompt caching as the service applies it, on an in-memory store and a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from mockserver.config.caching import PromptCaching
from mockserver.engine.pacing import FakeClock
from mockserver.service import prompt_cache
from mockserver.service.prompt_cache import Lookup, Part
from mockserver.state.store import MemoryStore

ON = PromptCaching()


def parts(*sizes: int, tag: str = "") -> list[Part]:
    """Parts of these token sizes; the same sizes and tag give the same bytes."""
    return [Part(f"{tag}{i}:{size}".encode(), size) for i, size in enumerate(sizes)]


def lookup(
    store: MemoryStore,
    clock: FakeClock,
    sent: Sequence[Part],
    *,
    organization: str = "org-a",
    settings: PromptCaching = ON,
    time_scale: float = 1.0,
    retention: object = None,
    write: bool = True,
) -> Lookup:
    async def main() -> Lookup:
        found = await prompt_cache.openai_lookup(
            store,
            clock.now(),
            settings,
            organization=organization,
            model="gpt-5.6-sol",
            parts=lambda: sent,
            retention=retention,
            time_scale=time_scale,
        )
        if write:
            await found.write(store, clock.now())
        return found

    return asyncio.run(main())


def test_the_second_request_reads_the_prefix_rounded_down_to_128_tokens() -> None:
    store, clock = MemoryStore(), FakeClock()
    first = lookup(store, clock, parts(600, 500, 30))
    assert first.use.cached_tokens == 0
    assert first.use.written_tokens == 1024  # 1,130 tokens written, reported in steps of 128
    second = lookup(store, clock, parts(600, 500, 30))
    assert second.use.cached_tokens == 1024
    assert second.use.written_tokens == 0


def test_a_longer_conversation_reads_the_earlier_messages_and_writes_the_rest() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(600, 500))
    later = lookup(store, clock, parts(600, 500, 300, 20))
    assert later.use.cached_tokens == 1024  # the 1,100 tokens sent before, floored
    assert later.use.written_tokens == 1408 - 1024
    changed = lookup(store, clock, parts(600, 500, tag="x"))
    assert changed.use.cached_tokens == 0  # the first part differs: nothing after it can match


def test_prompts_under_the_minimum_are_neither_read_nor_written() -> None:
    store, clock = MemoryStore(), FakeClock()
    short = lookup(store, clock, parts(600, 400))
    assert short.use == prompt_cache.NO_CACHE and short.writes == ()
    assert store.prompt_cache.size() == 0
    assert not prompt_cache.may_cache(ON, 1023, {"messages": []})
    assert prompt_cache.may_cache(ON, 1024, {"messages": []})
    big_tool = [{"type": "function", "function": {"name": "f", "description": "word " * 1200}}]
    assert not prompt_cache.may_cache(ON, 10, {"tools": big_tool})  # the count it is given has the tools in
    assert prompt_cache.may_cache(ON, 10, {"previous_response_id": "resp_1"})  # earlier turns: not counted yet
    assert not prompt_cache.may_cache(PromptCaching(enabled=False), 100_000, {})


def test_a_prefix_shorter_than_the_minimum_is_not_a_hit() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(1000, 30))  # 1,030: its 1,000-token prefix is not cacheable
    assert lookup(store, clock, parts(1000, 40)).use.cached_tokens == 0


def test_organizations_never_share_a_cache() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(2000, 10), organization="org-a")
    assert lookup(store, clock, parts(2000, 10), organization="org-b").use.cached_tokens == 0
    assert lookup(store, clock, parts(2000, 10), organization="org-a").use.cached_tokens == 1920


def test_a_prefix_expires_after_the_ttl_scaled_and_a_hit_refreshes_it() -> None:
    store, clock = MemoryStore(), FakeClock()
    settings = PromptCaching(ttl_s=600)
    lookup(store, clock, parts(2000), settings=settings, time_scale=0.5)  # lives 300 s
    clock.advance(299)
    assert lookup(store, clock, parts(2000), settings=settings, time_scale=0.5).use.cached_tokens == 1920
    clock.advance(299)  # 598 s after the first request, 299 after the hit that refreshed it
    assert lookup(store, clock, parts(2000), settings=settings, time_scale=0.5).use.cached_tokens == 1920
    clock.advance(301)
    assert lookup(store, clock, parts(2000), settings=settings, time_scale=0.5).use.cached_tokens == 0


def test_a_written_prefix_lives_at_least_30_minutes_by_default_as_on_gpt_5_6() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(2000))
    clock.advance(29 * 60)  # prompt_cache_options.ttl "30m": the least a GPT-5.6 write is kept
    assert lookup(store, clock, parts(2000), write=False).use.cached_tokens == 1920
    clock.advance(61)
    assert lookup(store, clock, parts(2000), write=False).use.cached_tokens == 0


def test_24h_retention_keeps_a_prefix_for_a_day() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(2000), retention="24h")
    clock.advance(3600)
    assert lookup(store, clock, parts(2000), retention="24h").use.cached_tokens == 1920
    clock.advance(86_401)
    assert lookup(store, clock, parts(2000)).use.cached_tokens == 0


def test_time_scale_0_keeps_the_real_ttl() -> None:
    assert prompt_cache.ttl_seconds(600, 0) == 600
    assert prompt_cache.ttl_seconds(600, 0.01) == pytest.approx(6)


def test_nothing_is_cached_until_the_request_is_admitted() -> None:
    store, clock = MemoryStore(), FakeClock()
    lookup(store, clock, parts(2000), write=False)  # refused after the lookup: never written
    assert lookup(store, clock, parts(2000)).use.cached_tokens == 0


def test_only_the_latest_prefixes_are_looked_up_and_written() -> None:
    store, clock = MemoryStore(), FakeClock()
    many = parts(1024, *([10] * 200))
    found = lookup(store, clock, many)
    assert len(found.writes) == prompt_cache.LATEST_PREFIXES
    assert store.prompt_cache.size() == prompt_cache.LATEST_PREFIXES


# -- Anthropic: explicit breakpoints --------------------------------------------------------


def marked(*parts_: tuple[int, str | None], tag: str = "") -> list[Part]:
    return [Part(f"{tag}{i}:{size}".encode(), size, mark) for i, (size, mark) in enumerate(parts_)]


def anthropic(store: MemoryStore, clock: FakeClock, sent: Sequence[Part], *, workspace: str = "org/ws") -> Lookup:
    async def main() -> Lookup:
        found = await prompt_cache.anthropic_lookup(
            store, clock.now(), ON, workspace=workspace, model="claude-opus-4-8", parts=lambda: sent,
            min_tokens=1024, time_scale=1.0,
        )  # fmt: skip
        await found.write(store, clock.now())
        return found

    return asyncio.run(main())


def test_anthropic_writes_up_to_the_breakpoint_then_reads_it_exactly() -> None:
    store, clock = MemoryStore(), FakeClock()
    request = marked((0, None), (1500, "5m"), (40, None))
    first = anthropic(store, clock, request)
    assert (first.use.cached_tokens, first.use.written_tokens) == (0, 1500)  # no rounding to 128
    second = anthropic(store, clock, request)
    assert (second.use.cached_tokens, second.use.written_tokens) == (1500, 0)


def test_anthropic_caches_nothing_without_a_breakpoint_or_under_the_minimum() -> None:
    store, clock = MemoryStore(), FakeClock()
    assert anthropic(store, clock, marked((2000, None))).use == prompt_cache.NO_CACHE
    assert anthropic(store, clock, marked((1000, "5m"), (2000, None))).use == prompt_cache.NO_CACHE
    assert store.prompt_cache.size() == 0


def test_anthropic_reads_an_earlier_breakpoint_and_writes_the_later_one() -> None:
    store, clock = MemoryStore(), FakeClock()
    anthropic(store, clock, marked((1200, "1h"), (50, None)))
    later = anthropic(store, clock, marked((1200, "1h"), (300, None), (400, "5m")))
    assert later.use.cached_tokens == 1200
    assert later.use.written_tokens == 700
    assert later.use.written_1h == 0
    both = anthropic(store, clock, marked((1100, "1h"), (900, "5m"), tag="new"))
    assert (both.use.written_tokens, both.use.written_1h) == (2000, 1100)


def test_anthropic_5_minute_entries_expire_unless_read_and_workspaces_are_apart() -> None:
    store, clock = MemoryStore(), FakeClock()
    request = marked((2000, "5m"))
    anthropic(store, clock, request)
    assert anthropic(store, clock, request, workspace="org/other").use.cached_tokens == 0
    clock.advance(299)
    assert anthropic(store, clock, request).use.cached_tokens == 2000  # read: refreshed for 5 more minutes
    clock.advance(299)
    assert anthropic(store, clock, request).use.cached_tokens == 2000
    clock.advance(301)
    assert anthropic(store, clock, request).use.cached_tokens == 0


def test_a_long_conversation_is_cut_and_hashed_with_the_loop_s_turns_between_pieces() -> None:
    # 2,000 messages: the event loop runs other tasks between pieces of PARTS_PER_TURN parts.
    sent = parts(*([1] * 2000), 2000)

    async def main() -> tuple[int, Lookup]:
        turns = 0
        done = False

        async def other_task() -> None:
            nonlocal turns
            while not done:
                turns += 1
                await asyncio.sleep(0)

        running = asyncio.create_task(other_task())
        await asyncio.sleep(0)
        before = turns
        found = await prompt_cache.openai_lookup(
            MemoryStore(), 0.0, ON, organization="org-a", model="gpt-5.6-sol", parts=lambda: iter(sent), time_scale=1.0
        )
        done = True
        await running
        return turns - before, found

    turns, found = asyncio.run(main())
    assert turns >= len(sent) // prompt_cache.PARTS_PER_TURN
    assert found.use.written_tokens == 3968  # 4,000 tokens, in steps of 128
