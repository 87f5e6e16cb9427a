"""With several processes on one Redis, the dashboard shows the whole server: a page served by one
process lists the streams another is playing, and the journal and ledger of both."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import PREVIEW_KEY
from tests.e2e.dashboard_feed import updates_until
from tests.processes import ServerProcess
from tests.redis_server import RedisServer

STREAMS = 3


@pytest.fixture
def pair(redis_server: RedisServer) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    shared = ["--state", redis_server.url, "--time-scale", "1", "--seed", "1"]
    with ServerProcess(*shared) as one, ServerProcess(*shared) as two:
        yield one, two


def stream(url: str, test_id: str) -> None:
    body = {
        "model": "gpt-5.6-sol",
        "messages": [{"role": "user", "content": "Write a long story"}],
        "stream": True,
        "service_tier": "priority",
    }
    headers = {
        "authorization": f"Bearer {PREVIEW_KEY}",
        "x-mock-test-id": test_id,
        "x-mock-output-tokens": "400",
        "x-mock-tokens-per-second": "100",
        "x-mock-ttft-ms": "0",
    }
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers, timeout=30) as reply:
        for _ in reply.iter_bytes():
            pass


def test_a_page_on_one_process_shows_the_streams_of_another(pair: tuple[ServerProcess, ServerProcess]) -> None:
    one, two = pair
    pid_one = httpx.get(f"{one.url}/_mock/stats").json()["process"]
    pid_two = httpx.get(f"{two.url}/_mock/stats").json()["process"]
    # The process playing the streams has served a reply, so it posts its streams while a page is open.
    threads = [threading.Thread(target=stream, args=(one.url, f"workers-{n}")) for n in range(STREAMS)]
    for thread in threads:
        thread.start()

    def all_streams(update: dict[str, object]) -> bool:
        rows = update.get("streams")
        return isinstance(rows, list) and len(rows) == STREAMS

    updates = updates_until(two.url, all_streams, timeout=8)
    assert updates[0]["server"] == {"process": pid_two, "shared": True}
    rows = updates[-1]["streams"]
    assert {row["process"] for row in rows} == {pid_one}
    assert sorted(row["test_id"] for row in rows) == [f"workers-{n}" for n in range(STREAMS)]
    assert all(row["target_rate"] == 100.0 and row["tier"] == "priority" for row in rows)
    for thread in threads:
        thread.join(timeout=30)

    def journalled(update: dict[str, object]) -> bool:
        entries = update.get("journal")
        return isinstance(entries, list) and len([e for e in entries if e["path"] == "/v1/chat/completions"]) == STREAMS

    last = updates_until(two.url, journalled, timeout=5)[-1]  # the shared journal, read through the other process
    assert last["usage"]["by_tier"]["priority"]["requests"] == STREAMS
