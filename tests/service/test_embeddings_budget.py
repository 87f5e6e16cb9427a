"""The process's budget for embeddings requests: weights that fit run, others wait briefly, then
get the live 503."""

from __future__ import annotations

import asyncio

from mockserver import errors
from mockserver.service import embeddings_budget
from mockserver.service.embeddings_budget import LargeWork


def test_weights_add_up_to_the_budget_and_a_released_weight_is_taken_again() -> None:
    budget = LargeWork(budget=100, wait_s=0)
    assert budget.try_take(60) and budget.try_take(40)
    assert not budget.try_take(1)
    budget.release(40)
    assert not budget.try_take(41) and budget.try_take(40) and budget.held == 100


def test_small_requests_weigh_nothing_and_the_largest_counts_as_the_whole_budget() -> None:
    budget = LargeWork(budget=embeddings_budget.BUDGET_VALUES)
    assert budget.weight(embeddings_budget.SMALL_VALUES) == 0
    assert budget.weight(embeddings_budget.SMALL_VALUES + 1) == embeddings_budget.SMALL_VALUES + 1
    assert budget.weight(10**12) == embeddings_budget.BUDGET_VALUES  # still runs, alone
    assert (
        budget.weight(embeddings_budget.LARGEST_VALUES) * 2 == embeddings_budget.BUDGET_VALUES
    )  # two of the largest at once


def test_a_waiter_gets_its_weight_once_enough_is_given_back() -> None:
    async def scenario() -> tuple[bool, int]:
        budget = LargeWork(budget=100, wait_s=60)
        assert budget.try_take(70) and budget.try_take(30)
        waiter = asyncio.ensure_future(budget.take(50))
        await asyncio.sleep(0)
        budget.release(30)  # not enough: it waits on
        await asyncio.sleep(0)
        assert budget.waiting == 1 and not waiter.done()
        budget.release(70)  # no clock involved: the release wakes it
        return await waiter, budget.held

    assert asyncio.run(scenario()) == (True, 50)


def test_past_the_wait_or_with_too_many_waiting_a_request_is_refused() -> None:
    async def scenario() -> tuple[bool, bool]:
        full = LargeWork(budget=10, wait_s=0)
        assert full.try_take(10)
        timed_out = await full.take(1)
        crowded = LargeWork(budget=10, wait_s=60, max_waiting=1)
        assert crowded.try_take(10)
        first = asyncio.ensure_future(crowded.take(5))
        await asyncio.sleep(0)
        refused_at_once = await crowded.take(5)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert crowded.waiting == 0 and crowded.held == 10  # a waiter that went away leaves nothing behind
        return timed_out, refused_at_once

    assert asyncio.run(scenario()) == (False, False)


def test_the_refusal_is_the_live_overload_and_retryable() -> None:
    error = embeddings_budget.overloaded()
    assert isinstance(error, errors.ServiceUnavailableError) and error.status_code == 503
    assert errors.error_body(error)["error"] == {
        "message": "The engine is currently overloaded, please try again later",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert error.headers == {"retry-after": "1", "x-should-retry": "true"}
