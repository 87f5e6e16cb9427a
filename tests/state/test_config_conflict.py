"""A PATCH answered 200 is in force in every process: a patch that another process's patch, landed
first, made invalid is refused with a 409 ``config_conflict`` and changes nothing anywhere.

Two servers' states on one real Redis, each with its own connection, as two processes have them.
The race is made to happen: process two's patch is checked, then process one's lands, then two
appends."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockserver import errors
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.server_state import ServerState
from mockserver.state.config_log import ConfigLog
from mockserver.state.shared import Shared
from tests.redis_server import RedisServer

# Valid on the built-in fixture; after SPREAD, FAST is not (100 tokens/s lies outside 10 to 20).
SPREAD = {"profiles": {"default": {"tokens_per_second": 15, "tokens_per_second_min": 10, "tokens_per_second_max": 20}}}
FAST = {"profiles": {"default": {"tokens_per_second": 100, "ttft_ms": 7}}}
SLOWER_START = {"profiles": {"default": {"ttft_ms": 9}}}  # applies on top of either


async def _two_processes(redis: RedisServer) -> tuple[list[Shared], list[ServerState]]:
    handles = [Shared.from_url(redis.url) for _ in range(2)]
    return handles, [ServerState(settings=Settings(), fixture=load_fixture(), shared=h) for h in handles]


def _landing_first(state: ServerState, other: ServerState, patch: Any) -> None:
    """Make ``state``'s next append wait until ``other`` has applied ``patch`` everywhere."""
    log = state.config_log
    assert log is not None
    append = log.append
    raced = False

    async def append_after_the_other(*args: Any, **kwargs: Any) -> int | None:
        nonlocal raced
        if not raced:
            raced = True
            await other.configure_everywhere(patch)
        return await append(*args, **kwargs)

    log.append = append_after_the_other  # type: ignore[method-assign]


def test_a_patch_made_invalid_by_one_that_landed_first_is_refused_with_409(redis_server: RedisServer) -> None:
    async def main() -> None:
        handles, (one, two) = await _two_processes(redis_server)
        try:
            _landing_first(two, one, SPREAD)
            with pytest.raises(errors.ConflictError) as refused:
                await two.configure_everywhere(FAST)
            assert refused.value.status_code == 409 and refused.value.code == "config_conflict"
            assert "tokens_per_second" in refused.value.message
            for state in (one, two):
                await state.follow_config()
                default = state.fixture.profiles["default"]
                assert (default.tokens_per_second, default.tokens_per_second_min) == (15, 10)
                assert default.ttft_ms != 7  # nothing of the refused patch anywhere
        finally:
            for handle in handles:
                await handle.connection.aclose()

    asyncio.run(main())


def test_a_patch_still_valid_after_one_that_landed_first_is_applied_on_top(redis_server: RedisServer) -> None:
    async def main() -> None:
        handles, (one, two) = await _two_processes(redis_server)
        try:
            _landing_first(two, one, SPREAD)
            await two.configure_everywhere(SLOWER_START)  # answered 200: in force everywhere
            for state in (one, two):
                await state.follow_config()
                default = state.fixture.profiles["default"]
                assert (default.tokens_per_second, default.ttft_ms) == (15, 9)
        finally:
            for handle in handles:
                await handle.connection.aclose()

    asyncio.run(main())


def test_the_log_appends_only_onto_the_head_a_patch_was_checked_against(redis_server: RedisServer) -> None:
    async def main() -> None:
        handle = Shared.from_url(redis_server.url)
        try:
            log = ConfigLog(handle)
            head = await log.position()
            assert await log.append({"time_scale": 0}, onto=head) == 1
            assert await log.append({"time_scale": 2}, onto=head) is None  # the head moved
            assert await log.append({"time_scale": 2}, onto=await log.position()) == 2
        finally:
            await handle.connection.aclose()

    asyncio.run(main())
