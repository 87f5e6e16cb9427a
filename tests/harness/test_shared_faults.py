"""Fault counters shared through a real Redis: a ``once`` fault fires once across every process, however
many requests race for it; a test's reset and a full reset reach every process; the keys are bounded."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from mockserver import MockServer, errors
from mockserver.server_state import ServerState
from mockserver.state import shared_counters
from mockserver.state.counters import MemoryCounters
from tests.conftest import PREVIEW_KEY
from tests.redis_server import RedisServer
from tests.state.test_shared_config import processes, run

HEADER = "header:status=503,once"


def test_a_once_fault_fires_once_across_processes_under_concurrent_requests(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        takes = [state.fault_state.take("t1", HEADER, 1) for _ in range(20) for state in states]
        fired = await asyncio.gather(*takes)
        assert fired.count(True) == 1
        three = [state.fault_state.take("t1", "rule:0", 3) for _ in range(10) for state in states]
        assert (await asyncio.gather(*three)).count(True) == 3
        # another test's counters are its own
        assert await states[1].fault_state.take("t2", HEADER, 1)
        assert await states[0].fault_state.take(None, HEADER, 1)

    run(redis_server, test)


def test_a_tests_reset_and_a_full_reset_reach_every_process(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        for scope in ("a", "b"):
            assert await one.fault_state.take(scope, HEADER, 1)
        await two.reset_scope("a")
        assert await one.fault_state.take("a", HEADER, 1)  # fires again: its test was reset
        assert not await one.fault_state.take("b", HEADER, 1)
        await two.reset()
        assert await one.fault_state.take("b", HEADER, 1)
        assert int(redis_server.command("EXISTS", "mockserver:faults:scopes")[1:3]) == 1

    run(redis_server, test)


def test_fault_counters_in_redis_expire_and_are_bounded(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared_counters, "MAX_SCOPES", 3)
    monkeypatch.setattr(shared_counters, "MAX_COUNTERS_PER_SCOPE", 2)

    async def test(states: list[ServerState]) -> None:
        one, two = states
        for n in range(5):
            assert await (one, two)[n % 2].fault_state.take(f"scope-{n}", HEADER, 1)
        assert _integer(redis_server.command("ZCARD", "mockserver:faults:scopes")) == 3
        # the oldest scopes are forgotten (their fault may fire again); the newest are kept
        assert await one.fault_state.take("scope-0", HEADER, 1)
        assert not await two.fault_state.take("scope-4", HEADER, 1)
        for n in range(4):
            await one.fault_state.take("many", f"header:status=50{n},once", 1)
        assert _integer(redis_server.command("HLEN", "mockserver:faults:scope:id:many")) == 2
        ttl = _integer(redis_server.command("TTL", "mockserver:faults:scope:id:many"))
        assert 0 < ttl <= shared_counters.SCOPE_TTL_S

    run(redis_server, test)


def test_redis_away_is_a_retryable_503_for_a_counted_fault_and_recovers(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, _ = states
        assert await one.fault_state.take(None, "always", None)  # no count, no Redis
        redis_server.stop()
        with pytest.raises(errors.ServiceUnavailableError) as caught:
            await one.fault_state.take("t", HEADER, 1)
        assert (caught.value.status_code, caught.value.code) == (503, "state_unavailable")
        redis_server.start()
        assert await one.fault_state.take("t", HEADER, 1)

    run(redis_server, test)


def test_a_process_starting_late_sees_the_faults_already_fired(redis_server: RedisServer) -> None:
    async def main() -> None:
        async with processes(redis_server, 1) as (early,):
            assert await early.fault_state.take("t", HEADER, 1)
        async with processes(redis_server, 1) as (late,):
            assert not await late.fault_state.take("t", HEADER, 1)

    asyncio.run(main())


def test_memory_counters_forget_the_oldest_scope_past_their_bound() -> None:
    async def main() -> None:
        counters = MemoryCounters(max_counters=4)
        for n in range(3):
            assert await counters.take(f"s{n}", "a", 1)
        assert await counters.take("s2", "b", 1)
        assert len(counters) == 4
        assert await counters.take("s3", "a", 1)  # s0 goes
        assert len(counters) == 4
        assert await counters.take("s0", "a", 1)
        assert not await counters.take("s3", "a", 1)
        for n in range(6):  # one scope alone: its oldest counters go
            await counters.take("big", f"c{n}", 1)
        assert len(counters) == 4 and await counters.read("big") == {f"c{n}": 1 for n in range(2, 6)}
        assert await counters.claim("big", {"c5": 1, "c4": 1})
        assert not await counters.claim("big", {"c5": 1})
        assert (await counters.read("big"))["c5"] == 2

    asyncio.run(main())


def _integer(reply: bytes) -> int:
    """A RESP integer reply (``:3``)."""
    return int(reply.split(b"\r\n")[0][1:])


def test_a_once_fault_fires_once_across_two_servers(redis_server: RedisServer) -> None:
    with (
        MockServer(time_scale=0, state=redis_server.url) as one,
        MockServer(time_scale=0, state=redis_server.url) as two,
    ):
        fault = {"x-mock-fault": "once status=503", "x-mock-test-id": "flaky"}
        urls = [server.url + "/v1/chat/completions" for server in (one, two)] * 8
        body = {"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "Hi"}]}

        def post(url: str) -> int:
            reply = httpx.post(url, json=body, headers={**fault, "authorization": f"Bearer {PREVIEW_KEY}"})
            return reply.status_code

        with ThreadPoolExecutor(len(urls)) as pool:
            statuses = list(pool.map(post, urls))
        assert sorted(statuses) == [200] * 15 + [503]
        # the SDK retries past a once fault
        client = two.client(
            PREVIEW_KEY, strict=True, test_id="retried", default_headers={"x-mock-fault": "once status=503"}
        )
        assert client.chat.completions.create(
            model="gpt-5.6-mini", messages=[{"role": "user", "content": "Hi"}]
        ).choices
        assert [call.status for call in two.calls(test_id="retried")] == [503, 200]
