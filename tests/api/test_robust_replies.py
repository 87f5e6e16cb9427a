"""A non-streaming reply that nobody waits for any more ends at once and gives back what it held.

The client leaving, ``POST /_mock/reset`` and the server stopping all end a reply still being
held; a reply never outlives ``max_reply_seconds``; ``time_scale`` has a ceiling.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from mockserver import MockServer
from mockserver.service import capacity

PREVIEW = {"authorization": "Bearer sk-mock-preview"}
ULTRAFAST_BODY = {
    "model": "gpt-5.6-sol",
    "service_tier": "ultrafast",
    "messages": [{"role": "user", "content": "hello"}],
}
NEVER_ENDING = {**PREVIEW, "x-mock-tokens-per-second": "0.01"}  # 100 s a token


@pytest.fixture
def real_time() -> Iterator[MockServer]:
    with MockServer(time_scale=1, seed=3) as running:
        yield running


def _slots(server: MockServer) -> int:
    return server.run(server.state.store.in_flight(capacity.SERVER_POOL))


def _wait_until(predicate: object, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_client_that_gives_up_releases_its_ultrafast_slot(real_time: MockServer) -> None:
    url = f"{real_time.url}/v1/chat/completions"
    for _ in range(3):
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url, json=ULTRAFAST_BODY, headers=NEVER_ENDING, timeout=0.3)
    assert _wait_until(lambda: _slots(real_time) == 0), f"{_slots(real_time)} slots still held"
    assert _wait_until(lambda: not real_time.state.replies.active)
    entries = real_time.requests
    assert [e.status for e in entries] == [499, 499, 499]
    assert all(e.disconnected for e in entries)


def test_sixteen_abandoned_requests_do_not_lock_ultrafast_out(real_time: MockServer) -> None:
    url = f"{real_time.url}/v1/chat/completions"

    def abandon() -> None:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url, json=ULTRAFAST_BODY, headers=NEVER_ENDING, timeout=0.5)

    threads = [threading.Thread(target=abandon) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _wait_until(lambda: _slots(real_time) == 0)
    reply = httpx.post(url, json=ULTRAFAST_BODY, headers=PREVIEW, timeout=30)
    assert reply.status_code == 200, reply.text
    assert real_time.requests[-1].tier == "ultrafast"


def test_reset_ends_replies_in_flight(real_time: MockServer) -> None:
    url = f"{real_time.url}/v1/chat/completions"
    result: dict[str, httpx.Response] = {}

    def wait_for_reply() -> None:
        result["reply"] = httpx.post(url, json=ULTRAFAST_BODY, headers=NEVER_ENDING, timeout=30)

    waiter = threading.Thread(target=wait_for_reply)
    waiter.start()
    assert _wait_until(lambda: _slots(real_time) == 1)
    started = time.monotonic()
    assert httpx.post(f"{real_time.url}/_mock/reset").status_code == 200
    waiter.join(timeout=5)
    assert not waiter.is_alive() and time.monotonic() - started < 3
    reply = result["reply"]
    assert reply.status_code == 503
    assert reply.json()["error"]["code"] == "server_reset"
    assert _slots(real_time) == 0


def test_stopping_the_server_ends_replies_in_flight() -> None:
    server = MockServer(time_scale=1).start()
    url = f"{server.url}/v1/chat/completions"
    result: dict[str, object] = {}

    def wait_for_reply() -> None:
        try:
            result["reply"] = httpx.post(url, json=ULTRAFAST_BODY, headers=NEVER_ENDING, timeout=30)
        except httpx.HTTPError as exc:
            result["reply"] = exc

    waiter = threading.Thread(target=wait_for_reply)
    waiter.start()
    assert _wait_until(lambda: _slots(server) == 1)
    started = time.monotonic()
    server.stop()
    waiter.join(timeout=5)
    assert time.monotonic() - started < 4, "the held reply kept the server from stopping"
    assert _slots(server) == 0


def test_no_reply_outlives_the_wall_clock_limit() -> None:
    with MockServer(time_scale=1, max_reply_seconds=0.5) as server:
        started = time.monotonic()
        reply = httpx.post(f"{server.url}/v1/chat/completions", json=ULTRAFAST_BODY, headers=NEVER_ENDING, timeout=30)
        assert time.monotonic() - started < 3
        assert reply.status_code == 504
        error = reply.json()["error"]
        assert error["code"] == "reply_time_limit" and "max_reply_seconds" in error["message"]
        assert _slots(server) == 0


def test_time_scale_has_a_ceiling(real_time: MockServer) -> None:
    reply = httpx.patch(f"{real_time.url}/_mock/config", json={"time_scale": 1e308})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "time_scale"
    assert httpx.get(f"{real_time.url}/_mock/config").json()["time_scale"] == 1


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/chat/completions", {**ULTRAFAST_BODY, "stream": True}),
    ("/v1/responses", {"model": "gpt-5.6-sol", "service_tier": "ultrafast", "input": "hello", "stream": True}),
])  # fmt: skip
def test_no_stream_outlives_the_wall_clock_limit(path: str, body: dict[str, object]) -> None:
    with MockServer(time_scale=1, max_reply_seconds=0.5) as server:
        started = time.monotonic()
        headers = {**PREVIEW, "x-mock-tokens-per-second": "2"}
        reply = httpx.post(f"{server.url}{path}", json=body, headers=headers, timeout=30)
        assert time.monotonic() - started < 3
        assert reply.status_code == 200
        last = [line for line in reply.text.splitlines() if line.startswith("data: ")][-1]
        assert "reply_time_limit" in last and "max_reply_seconds" in last
        assert _wait_until(lambda: _slots(server) == 0 and len(server.state.streams) == 0)
