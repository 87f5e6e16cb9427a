"""The Ultrafast pool's queue (``capacity.queue_ms``) on a real server and the official SDK, then across
two workers on a real Redis: with two slots and a one-second queue, a third stream started while two
run gets its first token once one of them ends, and a fourth that would wait longer gets the 429."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.service.capacity import queue as capacity_queue
from tests.processes import ServerProcess
from tests.redis_server import RedisServer
from tests.support import fixture, sdk

ULTRAFAST = "gpt-5.6-sol-ultrafast"
KEY = "sk-mock-preview"
MESSAGES = [{"role": "user", "content": "Say hi"}]
QUEUE = {"ultrafast_concurrency": 2, "when_full": "reject", "reject_status": 429, "retry_after_ms": 1000}
QUEUE_MS = 1000
SKEW_S = 0.05  # the client sees an end and a first token a little after the server sent them
CONNECT_ATTEMPTS = 200


def paced(tokens: int) -> dict[str, str]:
    """A stream of ``tokens`` tokens at 20 tokens/s that starts at once (no TTFT, no prefill)."""
    return {"x-mock-ttft-ms": "0", "x-mock-tokens-per-second": "20", "x-mock-output-tokens": str(tokens)}


@dataclass
class Run:
    """One stream as the client saw it, on ``time.monotonic()``."""

    started: float = 0.0
    first_token: float | None = None
    ended: float | None = None
    status: int | None = None
    has_first: threading.Event = field(default_factory=threading.Event)


Stream = Callable[[dict[str, str], Run], None]


def in_thread(stream: Stream, headers: dict[str, str]) -> tuple[Run, threading.Thread]:
    run = Run()
    thread = threading.Thread(target=stream, args=(headers, run))
    thread.start()
    return run, thread


def check_the_queue(streams: list[Stream]) -> None:
    """``streams[0]`` and ``streams[1]`` hold the two slots; ``streams[2]`` (and then ``streams[3]``) waits."""
    # A third stream while two 0.8 s streams run: served once one ends, within the second.
    a, ta = in_thread(streams[0], paced(16))
    b, tb = in_thread(streams[1], paced(16))
    assert a.has_first.wait(10) and b.has_first.wait(10)
    c, tc = in_thread(streams[2], paced(4))
    for thread in (ta, tb, tc):
        thread.join(30)
    assert (a.status, b.status, c.status) == (200, 200, 200)
    assert a.ended is not None and b.ended is not None and c.first_token is not None
    first_end = min(a.ended, b.ended)
    assert c.started < first_end, "the third stream did not start while the two ran"
    assert c.first_token >= first_end - SKEW_S, (c.first_token - c.started, first_end - c.started)
    assert c.first_token - c.started < QUEUE_MS / 1000

    # A fourth while two 3 s streams run: it waits the whole second, then gets the 429.
    a, ta = in_thread(streams[0], paced(60))
    b, tb = in_thread(streams[1], paced(60))
    assert a.has_first.wait(10) and b.has_first.wait(10)
    d, td = in_thread(streams[2], paced(4))
    td.join(30)
    assert d.status == 429
    assert d.ended is not None and d.ended - d.started >= QUEUE_MS / 1000
    assert a.ended is None or d.ended < a.ended, "the 429 came only after a slot was free"
    ta.join(30)
    tb.join(30)


def sdk_stream(client: openai.OpenAI) -> Stream:
    def stream(headers: dict[str, str], run: Run) -> None:
        run.started = time.monotonic()
        try:
            chunks = client.chat.completions.create(
                model=ULTRAFAST,
                messages=MESSAGES,
                stream=True,
                extra_headers=headers,  # type: ignore[arg-type]
            )
            for chunk in chunks:
                if run.first_token is None and chunk.choices and chunk.choices[0].delta.content:
                    run.first_token = time.monotonic()
                    run.has_first.set()
            run.status = 200
        except openai.RateLimitError as error:
            assert (error.code, error.param) == ("rate_limit_exceeded", "service_tier")
            run.status = 429
        run.ended = time.monotonic()

    return stream


def test_a_waiting_stream_is_served_when_a_slot_frees_and_one_waiting_too_long_gets_the_429() -> None:
    fx = fixture(capacity={**QUEUE, "queue_ms": QUEUE_MS})
    with MockServer(time_scale=1, fixture=fx) as server, sdk(server, KEY, timeout=30) as client:
        stream = sdk_stream(client)
        check_the_queue([stream, stream, stream])
        journal = httpx.get(f"{server.url}/_mock/requests").json()["data"]
        waited = {e["queue_outcome"]: e["queued_ms"] for e in journal if e["queue_outcome"]}
        assert set(waited) == {"served", "timed_out"}
        assert 0 < waited["served"] < QUEUE_MS <= waited["timed_out"]
        metrics = httpx.get(f"{server.url}/metrics").text
        assert 'mockserver_capacity_queue_total{outcome="served"} 1.0' in metrics
        assert 'mockserver_capacity_queue_total{outcome="timed_out"} 1.0' in metrics


def test_waiting_streams_get_the_slot_in_the_order_they_arrived() -> None:
    fx = fixture(capacity={**QUEUE, "ultrafast_concurrency": 1, "queue_ms": 30_000})
    with MockServer(time_scale=1, fixture=fx) as server, sdk(server, KEY, timeout=60) as client:
        stream = sdk_stream(client)
        holder, th = in_thread(stream, paced(8))
        assert holder.has_first.wait(10)
        queued: list[tuple[Run, threading.Thread]] = []
        for count in range(1, 6):  # each joins the line before the next is sent
            queued.append(in_thread(stream, paced(4)))
            deadline = time.monotonic() + 10
            while capacity_queue.waiting() < count and time.monotonic() < deadline:
                time.sleep(0.005)
            assert capacity_queue.waiting() == count
        for _, thread in [(holder, th), *queued]:
            thread.join(60)
        assert [run.status for run, _ in queued] == [200] * 5
        firsts = [run.first_token for run, _ in queued]
        assert all(first is not None for first in firsts)
        assert firsts == sorted(firsts), "served out of the order of arrival"  # type: ignore[type-var]
        journal = httpx.get(f"{server.url}/_mock/requests").json()["data"]
        assert sorted(e["queue_outcome"] for e in journal if e["queue_outcome"]) == ["served"] * 5


def test_without_a_queue_a_full_pool_refuses_at_once() -> None:
    with MockServer(time_scale=1, fixture=fixture(capacity=QUEUE)) as server, sdk(server, KEY, timeout=30) as client:
        stream = sdk_stream(client)
        a, ta = in_thread(stream, paced(40))
        b, tb = in_thread(stream, paced(40))
        assert a.has_first.wait(10) and b.has_first.wait(10)
        c, tc = in_thread(stream, paced(4))
        tc.join(30)
        assert c.status == 429 and c.ended is not None and c.ended - c.started < 0.5
        ta.join(30)
        tb.join(30)


def test_a_client_that_leaves_while_it_waits_stops_waiting() -> None:
    fx = fixture(capacity={**QUEUE, "queue_ms": 10_000})
    with MockServer(time_scale=1, fixture=fx) as server, sdk(server, KEY, timeout=30) as client:
        stream = sdk_stream(client)
        a, ta = in_thread(stream, paced(40))
        b, tb = in_thread(stream, paced(40))
        assert a.has_first.wait(10) and b.has_first.wait(10)
        body = {"model": ULTRAFAST, "messages": MESSAGES, "stream": True}
        headers = {"authorization": f"Bearer {KEY}", **paced(4)}
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=headers, timeout=0.3)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            left = [e for e in httpx.get(f"{server.url}/_mock/requests").json()["data"] if e["queue_outcome"]]
            if left:
                break
            time.sleep(0.05)
        assert [(e["queue_outcome"], e["status"], e["disconnected"]) for e in left] == [("left", 499, True)]
        assert left[0]["queued_ms"] < 2000  # it stopped waiting when the client left, not after 10 s
        ta.join(30)
        tb.join(30)


# -- Two workers on one Redis ---------------------------------------------------------------------


def connections_per_worker(url: str, workers: int = 2, each: int = 2) -> dict[int, list[httpx.Client]]:
    """``each`` keep-alive connections to each worker, by process id (the kernel hands each new
    connection on the shared port to one worker or another)."""
    connections: dict[int, list[httpx.Client]] = {}
    for _ in range(CONNECT_ATTEMPTS):
        if len(connections) == workers and all(len(kept) == each for kept in connections.values()):
            break
        client = httpx.Client(base_url=url, timeout=30, limits=httpx.Limits(max_connections=1))
        kept = connections.setdefault(client.get("/_mock/stats").json()["process"], [])
        if len(kept) < each:
            kept.append(client)
        else:
            client.close()
    assert len(connections) == workers, f"only {len(connections)} worker(s) ever answered"
    return connections


def http_stream(client: httpx.Client) -> Stream:
    def stream(headers: dict[str, str], run: Run) -> None:
        run.started = time.monotonic()
        body = {"model": ULTRAFAST, "messages": MESSAGES, "stream": True}
        with client.stream(
            "POST", "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {KEY}", **headers}
        ) as reply:
            for line in reply.iter_lines():
                if run.first_token is None and '"content":"' in line and '"content":""' not in line:
                    run.first_token = time.monotonic()
                    run.has_first.set()
            run.status = reply.status_code
        run.ended = time.monotonic()

    return stream


@pytest.fixture
def two_workers(redis_server: RedisServer) -> Iterator[dict[int, list[httpx.Client]]]:
    with ServerProcess("--workers", "2", "--state", redis_server.url, "--time-scale", "1") as server:
        connections = connections_per_worker(server.url)
        try:
            yield connections
        finally:
            for kept in connections.values():
                for client in kept:
                    client.close()


def test_the_queue_holds_across_two_workers_on_redis(two_workers: dict[int, list[httpx.Client]]) -> None:
    (one_a, one_b), (two_a, _) = two_workers.values()
    patch = {"capacity": {**QUEUE, "queue_ms": QUEUE_MS}}
    assert one_a.patch("/_mock/config", json=patch).status_code == 200
    # One slot held through each worker; the waiting stream on the first worker is served by a slot the
    # first worker's stream gives back, or the second's (seen through Redis): either way within the second.
    check_the_queue([http_stream(one_a), http_stream(two_a), http_stream(one_b)])
    check_the_queue([http_stream(one_a), http_stream(one_b), http_stream(two_a)])


def test_a_cap_raised_while_a_stream_waits_serves_it_at_once() -> None:
    fx = fixture(capacity={**QUEUE, "ultrafast_concurrency": 1, "queue_ms": 30_000})
    with MockServer(time_scale=1, fixture=fx) as server, sdk(server, KEY, timeout=60) as client:
        stream = sdk_stream(client)
        holder, th = in_thread(stream, paced(80))  # 4 s
        assert holder.has_first.wait(10)
        waiter, tw = in_thread(stream, paced(4))
        deadline = time.monotonic() + 10
        while capacity_queue.waiting() < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        server.configure(capacity={"ultrafast_concurrency": 2})
        raised = time.monotonic()
        assert waiter.has_first.wait(10)
        assert waiter.first_token is not None and waiter.first_token - raised < 1.0, "it waited for the holder's end"
        assert holder.ended is None or waiter.first_token < holder.ended
        tw.join(30)
        th.join(30)
        assert (holder.status, waiter.status) == (200, 200)
