"""The dashboard's feed is bounded and never holds the server back: at most ten updates a second,
at most :data:`~mockserver.api.control.feed.MAX_CONNECTIONS` pages at once, a page that stops
reading delays only itself, and a server stops promptly with pages open."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from mockserver import MockServer
from mockserver.api.control import feed
from tests.conftest import PREVIEW_KEY
from tests.e2e.dashboard_feed import updates_until

STALLED_PAGES = 2
STREAMS = 40
TOKENS, RATE = 600, 200.0  # 3 s a stream


@pytest.fixture
def real_time() -> Iterator[MockServer]:
    with MockServer(time_scale=1, seed=1) as running:
        yield running


def test_updates_come_at_most_ten_a_second(real_time: MockServer) -> None:
    started = time.monotonic()
    updates = updates_until(real_time.url, lambda _: time.monotonic() - started >= 2, timeout=5)
    seconds = time.monotonic() - started
    assert len(updates) <= feed.UPDATES_PER_S * seconds + 1
    assert len(updates) >= 5  # and they do come
    assert "config" in updates[0] and "accounts" in updates[0] and "usage" in updates[0]
    assert all("config" not in u for u in updates[1:])  # only what changed


def test_at_most_so_many_pages_at_once(real_time: MockServer) -> None:
    with httpx.Client(base_url=real_time.url, timeout=5) as client:
        opened = [client.stream("GET", "/_mock/events") for _ in range(feed.MAX_CONNECTIONS)]
        replies = [o.__enter__() for o in opened]
        assert all(r.status_code == 200 for r in replies)
        lines = replies[0].iter_lines()  # kept: an iterator let go of closes its reply
        while not next(lines).startswith("data: "):  # until the first update has come
            pass
        stats = client.get("/_mock/stats").json()
        assert stats["dashboards"] == feed.MAX_CONNECTIONS
        assert stats["dashboard_cpu_seconds"] > 0
        refused = client.get("/_mock/events")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "too_many_dashboards"
        for o in opened:
            o.__exit__(None, None, None)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # the server notices the pages left within an update
        with httpx.stream("GET", f"{real_time.url}/_mock/events", timeout=5) as again:
            if again.status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError("the places of closed pages were not given back")


def stalled_page(url: str) -> socket.socket:
    """A page that opens the feed and never reads a byte (its receive buffer kept small)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET /_mock/events HTTP/1.1\r\nhost: {host}:{port}\r\n\r\n".encode())
    return sock


async def paced_streams(url: str) -> list[float]:
    """STREAMS streams at RATE tokens/s, read at full speed; each one's rate from first byte to last."""
    headers = {
        "authorization": f"Bearer {PREVIEW_KEY}",
        "x-mock-output-tokens": str(TOKENS),
        "x-mock-tokens-per-second": str(RATE),
        "x-mock-ttft-ms": "0",
    }
    body = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "Write a long story"}], "stream": True}

    async def one(client: httpx.AsyncClient) -> float:
        first = last = 0.0
        async with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as reply:
            async for _ in reply.aiter_bytes():
                last = time.monotonic()
                first = first or last
        return TOKENS / (last - first)

    limits = httpx.Limits(max_connections=STREAMS)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        return await asyncio.gather(*(one(client) for _ in range(STREAMS)))


def test_a_stalled_page_holds_back_no_stream(real_time: MockServer) -> None:
    pages = [stalled_page(real_time.url) for _ in range(STALLED_PAGES)]
    try:
        rates = asyncio.run(paced_streams(real_time.url))
        # Every stream ran at its rate (generous bounds: the machine is shared and the client is Python).
        assert min(rates) > RATE * 0.8, rates
        # The stalled pages were sent updates they never read, and the server went on regardless.
        assert real_time.state.streams.active == set()
        stats = httpx.get(f"{real_time.url}/_mock/stats").json()
        assert stats["streams_open"] == 0
    finally:
        for sock in pages:
            sock.close()


def test_the_server_stops_promptly_with_a_page_open() -> None:
    server = MockServer(time_scale=1, seed=1).start()
    with httpx.stream("GET", f"{server.url}/_mock/events", timeout=5) as reply:
        assert reply.status_code == 200
        next(reply.iter_lines())
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 3.0
