"""``ServerState.close``: everything is closed even when one part fails, and each failure is logged."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server_state import ServerState
from mockserver.state.store import MemoryStore


class Resource:
    def __init__(self, fails: bool) -> None:
        self.fails, self.closed = fails, False

    async def aclose(self) -> None:
        self.closed = True
        if self.fails:
            raise RuntimeError("the upstream connection broke")


class Store(MemoryStore):
    closed = False

    async def close(self) -> None:
        self.closed = True
        raise OSError("the store went away")


def test_a_failing_resource_does_not_stop_the_rest_from_closing(caplog: pytest.LogCaptureFixture) -> None:
    store = Store()
    state = ServerState(settings=Settings(seed=3), fixture=load_fixture(), clock=FakeClock(start=0.0), store=store)
    first, broken, last = Resource(False), Resource(True), Resource(False)
    state.resources.update({"first": first, "broken": broken, "last": last})
    responses_closed = []

    async def close_responses() -> None:
        responses_closed.append(True)

    state.responses.close = close_responses  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="mockserver"):
        asyncio.run(state.close())  # raises nothing
    assert first.closed and broken.closed and last.closed
    assert responses_closed == [True]
    assert store.closed
    assert state.resources == {}
    failures = [r for r in caplog.records if r.name == "mockserver"]
    assert [r.getMessage() for r in failures] == [
        "closing resource 'broken' failed; the rest is closed all the same",
        "closing the store failed; the rest is closed all the same",
    ]
    assert [type(r.exc_info[1]) for r in failures if r.exc_info] == [RuntimeError, OSError]
