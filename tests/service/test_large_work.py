"""The bound on large requests worked on at once: a place each, a short wait, then the live 503."""

from __future__ import annotations

import asyncio

from mockserver import errors
from mockserver.service import large_work
from mockserver.service.large_work import LargeWork


def test_at_most_limit_places_are_held_and_a_released_one_is_taken_again() -> None:
    places = LargeWork(limit=2, wait_s=0)
    assert places.try_take() and places.try_take()
    assert not places.try_take()
    places.release()
    assert places.try_take() and places.held == 2


def test_a_waiter_gets_the_place_given_back_while_it_waits() -> None:
    async def scenario() -> tuple[bool, int]:
        places = LargeWork(limit=1, wait_s=60)
        assert places.try_take()
        waiter = asyncio.ensure_future(places.take())
        await asyncio.sleep(0)
        assert places.waiting == 1 and not waiter.done()
        places.release()  # no clock involved: the release wakes it
        return await waiter, places.held

    assert asyncio.run(scenario()) == (True, 1)


def test_past_the_wait_or_with_too_many_waiting_a_request_is_refused() -> None:
    async def scenario() -> tuple[bool, bool]:
        full = LargeWork(limit=1, wait_s=0)
        assert full.try_take()
        timed_out = await full.take()
        crowded = LargeWork(limit=1, wait_s=60, max_waiting=1)
        assert crowded.try_take()
        first = asyncio.ensure_future(crowded.take())
        await asyncio.sleep(0)
        refused_at_once = await crowded.take()
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert crowded.waiting == 0  # a waiter that went away leaves nothing behind
        return timed_out, refused_at_once

    assert asyncio.run(scenario()) == (False, False)


def test_the_refusal_is_the_live_overload_and_retryable() -> None:
    error = large_work.overloaded()
    assert isinstance(error, errors.ServiceUnavailableError) and error.status_code == 503
    assert errors.error_body(error)["error"] == {
        "message": "The engine is currently overloaded, please try again later",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert error.headers == {"retry-after": "1", "x-should-retry": "true"}
