"""A large embeddings request waiting for room in the process's budget: its client leaving stops it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from mockserver import MockServer
from mockserver.service import embeddings_budget

WEIGHT = 700 * 1_536
BODY: dict[str, Any] = {"model": "text-embedding-3-small", "input": ["word"] * 700, "encoding_format": "float"}


@pytest.fixture(scope="module")
def running() -> Iterator[MockServer]:
    with MockServer(time_scale=0, seed=1) as server:  # in this process: it shares embeddings_budget.LARGE
        yield server


@pytest.fixture
def full(monkeypatch: pytest.MonkeyPatch) -> Iterator[embeddings_budget.LargeWork]:
    """A budget with room for one such request, taken (by this test) for now; waits of up to 30 s."""
    budget = embeddings_budget.LargeWork(budget=WEIGHT, wait_s=30)
    monkeypatch.setattr(embeddings_budget, "LARGE", budget)
    assert budget.try_take(WEIGHT)
    yield budget


def _client(server: MockServer, timeout: float) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url,
        api_key="sk-mock-preview",
        max_retries=0,
        timeout=timeout,
        _strict_response_validation=True,
    )


def _within(seconds: float, condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_client_that_leaves_while_waiting_for_room_stops_its_request(
    running: MockServer, full: embeddings_budget.LargeWork
) -> None:
    since = running.newest_call()
    with _client(running, timeout=0.5) as client, pytest.raises(openai.APITimeoutError):
        client.embeddings.create(**BODY)
    assert _within(5, lambda: full.waiting == 0)  # long before the 30 s the wait could last
    assert _within(5, lambda: [c.status for c in running.calls(since=since, include_unscoped=True)] == [499])
    full.release(WEIGHT)
    time.sleep(0.2)
    assert full.held == 0  # the request that left took nothing once room was made


def test_a_client_that_stays_gets_its_vectors_once_there_is_room(
    running: MockServer, full: embeddings_budget.LargeWork
) -> None:
    threading.Timer(0.3, full.release, args=(WEIGHT,)).start()
    with _client(running, timeout=20) as client:
        reply = client.embeddings.create(**BODY)
    assert len(reply.data) == 700 and len(reply.data[0].embedding) == 1_536
    assert _within(5, lambda: full.held == 0)  # given back once the reply went out
