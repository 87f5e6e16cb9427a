"""New requests take turns with the streams in flight (mockserver.engine.turns).

The clock that measures a turn's budget is a fake one the "requests" below advance as they work;
the loop is a real one (asyncio's and uvloop's, which order timers and callbacks differently), so
these check the order of events, never how long anything took.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from mockserver.engine.pacing import FakeClock
from mockserver.engine.turns import Turns

RUNNERS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {"asyncio": asyncio.run, "uvloop": uvloop.run}


@pytest.fixture(params=sorted(RUNNERS))
def run(request: pytest.FixtureRequest) -> Callable[[Coroutine[Any, Any, Any]], Any]:
    return RUNNERS[request.param]


async def burst(turns: Turns, clock: FakeClock, names: list[str], work_s: float) -> list[str]:
    """Requests that arrive together and each work ``work_s``, beside a stream whose tick is always due."""
    order: list[str] = []
    loop = asyncio.get_running_loop()
    done = False

    def tick() -> None:
        if not done:
            order.append("tick")
            loop.call_later(0, tick)

    async def request(name: str) -> None:
        await turns.take()
        order.append(name)
        clock.advance(work_s)

    loop.call_later(0, tick)
    await asyncio.sleep(0)
    await asyncio.gather(*(request(name) for name in names))
    done = True
    return order


def requests_only(order: list[str]) -> list[str]:
    return [name for name in order if name != "tick"]


def turns_of(order: list[str]) -> list[list[str]]:
    """The requests that ran together, between two ticks."""
    groups: list[list[str]] = [[]]
    for name in order:
        if name == "tick":
            groups.append([])
        else:
            groups[-1].append(name)
    return [group for group in groups if group]


def test_a_burst_gives_way_to_the_tick_between_turns(run: Callable[..., Any]) -> None:
    clock = FakeClock()
    names = [f"r{i}" for i in range(8)]
    order = run(burst(Turns(clock, budget_s=0.001), clock, names, work_s=0.002))
    assert requests_only(order) == names  # first come, first served
    groups = turns_of(order)
    # Each costs twice the budget: once that is learnt, a turn lets one through. Until then (the first
    # turn of waiting requests lets two through, on the first guess of half a budget), one turn may hold two.
    assert all(len(group) == 1 for group in groups[2:]), groups
    assert len(groups) >= len(names) - 1


def test_requests_within_the_budget_share_one_turn(run: Callable[..., Any]) -> None:
    clock = FakeClock()
    order = run(burst(Turns(clock, budget_s=0.001), clock, ["a", "b", "c", "d", "e"], work_s=0.0003))
    # a, b, c and d came within 1 ms of the turn's start; e, after the budget, waited for the tick.
    assert turns_of(order)[:2] == [["a", "b", "c", "d"], ["e"]]


def test_a_turn_lets_through_as_many_waiting_requests_as_fit_its_budget(run: Callable[..., Any]) -> None:
    clock = FakeClock()
    turns = Turns(clock, budget_s=0.001)
    names = [f"r{i}" for i in range(30)]
    order = run(burst(turns, clock, names, work_s=0.0003))
    assert requests_only(order) == names
    groups = turns_of(order)
    assert turns.cost_s == pytest.approx(0.0003, rel=0.05)  # learnt from the requests that ran together
    assert max(len(group) for group in groups) <= 4  # the budget and one request more: 1 ms / 0.3 ms + 1
    assert len(groups[-2]) == 3  # once the cost is learnt, three fit a turn: none waits a turn more than it must


def test_a_lone_request_goes_on_at_once(run: Callable[..., Any]) -> None:
    async def scenario() -> list[str]:
        turns, order = Turns(FakeClock()), list[str]()
        asyncio.get_running_loop().call_soon(order.append, "other")
        await turns.take()
        order.append("request")
        return list(order)  # as it was then: the loop runs "other" once this returns

    assert run(scenario()) == ["request"]  # it never gave the loop away


def test_a_request_that_arrives_while_others_wait_queues_behind_them(run: Callable[..., Any]) -> None:
    async def scenario() -> list[str]:
        clock, order = FakeClock(), []
        turns = Turns(clock, budget_s=0.001)
        late: list[asyncio.Future[None]] = []

        async def request(name: str) -> None:
            await turns.take()
            order.append(name)
            clock.advance(0.002)
            if name == "first":  # one more comes in a later turn of the loop, while "waiting" waits
                late.append(asyncio.ensure_future(request("late")))

        await asyncio.gather(request("first"), request("waiting"))
        await late[0]
        return order

    assert run(scenario()) == ["first", "waiting", "late"]


def test_a_request_cancelled_while_it_waits_leaves_the_queue(run: Callable[..., Any]) -> None:
    async def scenario() -> tuple[list[str], int]:
        clock, order = FakeClock(), []
        turns = Turns(clock, budget_s=0.001)

        async def request(name: str) -> None:
            await turns.take()
            order.append(name)
            clock.advance(0.002)

        tasks = {name: asyncio.ensure_future(request(name)) for name in ("first", "leaving", "staying")}
        await asyncio.sleep(0)  # all three ran up to take(): the first works, two wait
        assert turns.waiting == 2
        tasks["leaving"].cancel()
        await tasks["staying"]
        with pytest.raises(asyncio.CancelledError):
            await tasks["leaving"]
        return order, turns.waiting

    assert run(scenario()) == (["first", "staying"], 0)


def test_a_request_cancelled_after_its_turn_came_passes_it_on(run: Callable[..., Any]) -> None:
    async def scenario() -> list[str]:
        clock, order = FakeClock(), []
        turns = Turns(clock, budget_s=0.001)

        async def request(name: str) -> None:
            await turns.take()
            order.append(name)
            clock.advance(0.002)

        tasks = {name: asyncio.ensure_future(request(name)) for name in ("first", "given", "after")}
        await asyncio.sleep(0)
        assert turns.waiting == 2
        while turns.waiting == 2:  # until "given" has been given its turn, before it has run
            await asyncio.sleep(0)
        if not tasks["given"].done():
            tasks["given"].cancel()
        await asyncio.wait_for(tasks["after"], timeout=5)
        return order

    assert run(scenario()) == ["first", "after"]  # "after" still got its turn
