"""Watching for the client going away without a task: told once on ``http.disconnect`` (or when
``receive`` fails), other messages skipped, and nothing left waiting once it is stopped."""

from __future__ import annotations

import asyncio
from typing import Any

from mockserver.api.asgi.disconnect_watch import DisconnectWatch


def test_it_is_told_once_when_the_client_leaves_and_skips_other_messages() -> None:
    async def scenario() -> tuple[list[str], bool]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        gone: list[str] = []
        watch = DisconnectWatch(queue.get, lambda: gone.append("gone"))
        await queue.put({"type": "http.request", "body": b"", "more_body": False})
        await asyncio.sleep(0)
        before = list(gone)
        await queue.put({"type": "http.disconnect"})
        await asyncio.wait_for(watch.left(), 1.0)
        return before + gone, watch.gone

    assert asyncio.run(scenario()) == (["gone"], True)


def test_a_client_already_gone_is_seen_at_once() -> None:
    async def scenario() -> list[str]:
        async def receive() -> dict[str, Any]:
            return {"type": "http.disconnect"}

        gone: list[str] = []
        DisconnectWatch(receive, lambda: gone.append("gone"))
        return gone  # before anything else runs

    assert asyncio.run(scenario()) == ["gone"]


def test_a_failing_receive_counts_as_gone() -> None:
    async def scenario() -> list[str]:
        async def receive() -> dict[str, Any]:
            await asyncio.sleep(0)
            raise OSError("the connection broke")

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        await asyncio.wait_for(watch.left(), 1.0)
        return gone

    assert asyncio.run(scenario()) == ["gone"]


def test_stopping_closes_the_receive_under_way() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        event = asyncio.Event()
        closed: list[str] = []

        async def receive() -> dict[str, Any]:
            try:
                await event.wait()
                return {"type": "http.disconnect"}
            finally:
                closed.append("closed")

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        watch.stop()
        event.set()
        await asyncio.sleep(0.01)
        return closed, gone

    assert asyncio.run(scenario()) == (["closed"], [])


def test_a_message_that_came_just_before_stopping_starts_no_other_receive() -> None:
    # The reply ends (uvicorn then wakes its receive) and the watch is stopped before the loop has
    # stepped the watch on: the step already scheduled must not start a receive() that nobody closes.
    async def scenario() -> tuple[int, list[str], bool]:
        event = asyncio.Event()
        calls: list[int] = []

        async def receive() -> dict[str, Any]:
            calls.append(1)
            await event.wait()
            event.clear()  # as uvicorn's receive does
            return {"type": "http.request", "body": b"", "more_body": False}

        gone: list[str] = []
        watch = DisconnectWatch(receive, lambda: gone.append("gone"))
        event.set()  # the waiting future is done: the watch's next step is scheduled
        watch.stop()
        for _ in range(5):
            await asyncio.sleep(0)
        return len(calls), gone, watch.gone

    assert asyncio.run(scenario()) == (1, [], False)
