"""The runtime configuration shared through a real Redis: a PATCH taken by one process is in force in
the others before their next request, a reset puts every process back, and the log stays bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from mockserver import errors, server_state
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.server_state import ServerState
from mockserver.state.shared import Shared
from tests.redis_server import RedisServer


@asynccontextmanager
async def processes(redis: RedisServer, count: int = 2) -> AsyncIterator[list[ServerState]]:
    """``count`` servers' states on one Redis, as separate processes would have them."""
    handles = [Shared.from_url(redis.url) for _ in range(count)]
    try:
        yield [ServerState(settings=Settings(), fixture=load_fixture(), shared=h) for h in handles]
    finally:
        for handle in handles:
            await handle.connection.aclose()


def run(redis: RedisServer, test: Callable[[list[ServerState]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with processes(redis) as states:
            await test(states)

    asyncio.run(main())


def test_a_patch_taken_by_one_process_is_in_force_in_the_other(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        await one.configure_everywhere({"time_scale": 0, "capacity": {"ultrafast_concurrency": 3}})
        assert (one.settings.time_scale, one.fixture.capacity.ultrafast_concurrency) == (0, 3)
        assert two.settings.time_scale == 1  # not yet: it follows before its next request
        await two.follow_config()
        assert (two.settings.time_scale, two.fixture.capacity.ultrafast_concurrency) == (0, 3)
        await two.configure_everywhere({"capacity": {"ultrafast_concurrency": 5}})
        await one.follow_config()
        assert (one.settings.time_scale, one.fixture.capacity.ultrafast_concurrency) == (0, 5)

    run(redis_server, test)


def test_a_refused_patch_changes_nothing_anywhere(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        with pytest.raises(errors.InvalidRequestError):
            await one.configure_everywhere({"time_scale": -1})
        with pytest.raises(errors.InvalidRequestError):
            await one.configure_everywhere({"no_such_field": 1})
        await two.follow_config()
        assert (one.snapshot(), two.snapshot()) == ((one.settings, one.fixture), (two.settings, two.fixture))
        assert one.settings.time_scale == two.settings.time_scale == 1

    run(redis_server, test)


def test_a_reset_in_one_process_puts_every_process_back(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        await one.configure_everywhere({"time_scale": 0.5})
        await two.follow_config()
        assert two.settings.time_scale == 0.5
        await two.reset()
        assert two.settings.time_scale == 1
        await one.follow_config()
        assert one.settings.time_scale == 1
        await one.configure_everywhere({"time_scale": 2})  # and the log goes on from there
        await two.follow_config()
        assert two.settings.time_scale == 2

    run(redis_server, test)


def test_a_process_starting_late_reaches_the_same_configuration(redis_server: RedisServer) -> None:
    async def main() -> None:
        async with processes(redis_server, 1) as (one,):
            await one.configure_everywhere({"time_scale": 0})
            await one.configure_everywhere({"capacity": {"ultrafast_concurrency": 7}})
            async with processes(redis_server, 1) as (late,):
                await late.follow_config()
                assert (late.settings.time_scale, late.fixture.capacity.ultrafast_concurrency) == (0, 7)

    asyncio.run(main())


def test_the_log_is_folded_into_one_patch_past_its_bound(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_state, "MAX_PATCHES", 4)

    async def test(states: list[ServerState]) -> None:
        one, two = states
        for cap in range(1, 11):
            await one.configure_everywhere({"capacity": {"ultrafast_concurrency": cap}, "time_scale": cap / 10})
        assert int(redis_server.command("LLEN", "mockserver:config:patches").split(b"\r\n")[0][1:]) <= 4
        await two.follow_config()
        assert (two.settings.time_scale, two.fixture.capacity.ultrafast_concurrency) == (1.0, 10)
        assert two.fixture == one.fixture

    run(redis_server, test)


def test_redis_away_is_a_retryable_503_and_the_process_recovers(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        await one.configure_everywhere({"time_scale": 0})
        redis_server.stop()
        with pytest.raises(errors.ServiceUnavailableError) as caught:
            await two.follow_config()
        assert (caught.value.status_code, caught.value.code) == (503, "state_unavailable")
        assert caught.value.headers["retry-after"] == "1"
        redis_server.start()  # an empty Redis: as after a restart without persistence
        await two.follow_config()
        await one.configure_everywhere({"time_scale": 3})
        await two.follow_config()
        assert two.settings.time_scale == 3

    run(redis_server, test)


def test_a_redis_that_restarted_empty_is_not_mistaken_for_the_log_it_lost(redis_server: RedisServer) -> None:
    """Every process starts again from its initial configuration, whichever of them follows first."""

    async def test(states: list[ServerState]) -> None:
        one, two = states
        await one.configure_everywhere({"time_scale": 0.5})
        await two.follow_config()
        redis_server.stop()
        redis_server.start()  # empty: the log and its epoch are gone
        await one.configure_everywhere({"time_scale": 2})
        await two.follow_config()  # at the same count of patches as before the restart
        assert (one.settings.time_scale, two.settings.time_scale) == (2, 2)

    run(redis_server, test)
