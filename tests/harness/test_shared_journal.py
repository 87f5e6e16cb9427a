"""The request journal shared through a real Redis: exchanges recorded by two processes make one
journal in one order, filtered exactly as the in-memory journal filters, cleared everywhere,
bounded in entries and bytes, and still serving its replies while Redis is away."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import orjson
import pytest

from mockserver import MockServer, errors
from mockserver.config.fixture import Account, load_fixture
from mockserver.config.settings import Settings
from mockserver.harness.journal import Journal, JournalQuery, RequestJournal, key_digest
from mockserver.harness.journal.shared import SharedJournal
from mockserver.server_state import ServerState
from mockserver.service.exchange import Exchange, Usage
from mockserver.state.shared import Shared
from mockserver.testing.server import DEFAULT_KEY
from tests.redis_server import RedisServer

PREVIEW = "sk-mock-preview"
OTHER = "sk-mock-other-key-0001"
WALL = 1_700_000_000.0


@asynccontextmanager
async def processes(redis: RedisServer, count: int = 2, **settings: Any) -> AsyncIterator[list[ServerState]]:
    """``count`` servers' states on one Redis, as separate processes would have them."""
    handles = [Shared.from_url(redis.url) for _ in range(count)]
    try:
        yield [
            ServerState(settings=Settings(**settings), fixture=load_fixture(), shared=h, wall_clock=lambda: WALL)
            for h in handles
        ]
    finally:
        for handle in handles:
            await handle.connection.aclose()


def run(redis: RedisServer, test: Callable[[list[ServerState]], Awaitable[None]], **settings: Any) -> None:
    async def main() -> None:
        async with processes(redis, **settings) as states:
            await test(states)

    asyncio.run(main())


def exchange(
    n: int,
    *,
    path: str = "/v1/chat/completions",
    method: str = "POST",
    model: str | None = "gpt-5.6-mini",
    requested: str = "gpt-5.6-mini",
    key: str | None = PREVIEW,
    test_id: str | None = None,
    tier: str | None = "default",
    status: int = 200,
    size: int = 10,
) -> Exchange:
    """A finished exchange as the middleware hands it to the journal."""
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    if test_id is not None:
        headers["x-mock-test-id"] = test_id
    body = {"model": requested, "messages": [{"role": "user", "content": "x" * size}], "api_key": key}
    done = Exchange(request_id=f"req_{n}", method=method, path=path, headers=headers, started_at=10.0)
    done.request_body, done.body = orjson.dumps(body), body
    done.model, done.tier, done.requested_tier, done.status = model, tier, tier, status
    done.usage, done.finished_at = Usage(input_tokens=5, output_tokens=n, reasoning_tokens=0), 10.25
    return done


async def record(journal: RequestJournal, done: Exchange) -> None:
    """What the middleware does: the hook at the reply's start, then the one at its end."""
    journal.on_response_start(done)
    finished = journal.on_complete(done)
    if finished is not None:
        await finished


def request_ids(shown: list[Any]) -> list[str]:
    return [s.data["request_id"] for s in shown]


def test_two_processes_record_one_journal_in_one_order(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        for n in range(6):
            await record((one, two)[n % 2].journal, exchange(n))
        seen_by_one = await one.journal.read(JournalQuery(), [])
        seen_by_two = await two.journal.read(JournalQuery(), [])
        assert [s.data for s in seen_by_one] == [s.data for s in seen_by_two]
        assert request_ids(seen_by_one) == [f"req_{n}" for n in range(6)]
        assert [s.data["seq"] for s in seen_by_one] == [1, 2, 3, 4, 5, 6]
        # Concurrent recording from both: one global order, no seq given twice, none skipped.
        await asyncio.gather(*(record((one, two)[n % 2].journal, exchange(n)) for n in range(6, 66)))
        everything = await two.journal.read(JournalQuery(), [])
        assert [s.data["seq"] for s in everything] == list(range(1, 67))
        assert sorted(request_ids(everything)) == sorted(f"req_{n}" for n in range(66))
        assert await one.journal.newest() == await two.journal.newest() == 66
        assert (await one.journal.held()).entries == 66

    run(redis_server, test)


EXCHANGES: list[dict[str, Any]] = [
    {},
    {"test_id": "t1"},
    {"test_id": "t2", "key": OTHER},
    {"path": "/v1/responses", "test_id": "t1"},
    {"method": "GET", "path": "/v1/models", "model": None, "tier": None},
    {"model": "gpt-5.6-sol-ultrafast", "requested": "gpt-5.6-sol", "tier": "ultrafast", "test_id": "t1"},
    {"status": 429, "tier": "priority", "key": None},
    {"status": 503, "test_id": "t2", "model": None},
    {"tier": "flex", "requested": "gpt-5.6-mini", "model": "gpt-5.6-mini-2026"},
    {"status": 499, "test_id": "t1", "key": OTHER},
]
QUERIES: list[JournalQuery] = [
    JournalQuery(),
    JournalQuery(test_id="t1"),
    JournalQuery(test_id="t1", include_unscoped=True),
    JournalQuery(test_id="nobody"),
    JournalQuery(path="/v1/responses"),
    JournalQuery(path="/v1/chat/completions", status=200),
    JournalQuery(model="gpt-5.6-sol"),  # as requested
    JournalQuery(model="gpt-5.6-sol-ultrafast"),  # as resolved
    JournalQuery(model="gpt-5.6-mini"),
    JournalQuery(key=OTHER),
    JournalQuery(key=PREVIEW, test_id="t1"),
    JournalQuery(key="sk-unknown"),
    JournalQuery(method="get"),
    JournalQuery(tier="ultrafast"),
    JournalQuery(tier="priority", status=429),
    JournalQuery(status=503),
    JournalQuery(since=4),
    JournalQuery(limit=3),
    JournalQuery(test_id="t1", limit=2, since=2),
    JournalQuery(path="/v1/chat/completions", test_id="t2", include_unscoped=True, limit=2),
]


def test_the_filters_select_what_the_memory_journal_selects(redis_server: RedisServer) -> None:
    memory = Journal(1000, wall_clock=lambda: WALL)
    known = [OTHER]

    async def test(states: list[ServerState]) -> None:
        shared = states[0].journal
        for n, fields in enumerate(EXCHANGES):
            await record(memory, exchange(n, **fields))
            await record((states[0], states[1])[n % 2].journal, exchange(n, **fields))
        for query in QUERIES:
            expected, got = await memory.read(query, known), await shared.read(query, known)
            assert [s.data for s in got] == [s.data for s in expected], query
            assert [s.key_digest for s in got] == [s.key_digest for s in expected], query
        everything = await shared.read(JournalQuery(), known)
        assert len(everything) == len(EXCHANGES)
        assert everything[2].key_digest == key_digest(OTHER)
        shown = orjson.dumps([s.data for s in everything])
        assert PREVIEW.encode() not in shown and OTHER.encode() not in shown  # masked when recorded
        assert b"sk-moc*****view" in shown

    run(redis_server, test)


def test_clearing_one_test_or_everything_applies_to_every_process(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        a, b = 'a, "quoted", b', "a"  # one test id starts with the other's text
        for n, test_id in enumerate([a, b, None, a, b, a]):
            await record((one, two)[n % 2].journal, exchange(n, test_id=test_id))
        assert await two.journal.forget(b) == 2
        assert await one.journal.forget(b) == 0
        kept = await one.journal.read(JournalQuery(), [])
        assert [(s.data["seq"], s.data["test_id"]) for s in kept] == [(1, a), (3, None), (4, a), (6, a)]
        assert (await one.journal.held()).bytes == await stored_bytes(one)
        await one.reset_scope(a)
        assert [s.data["seq"] for s in await two.journal.read(JournalQuery(), [])] == [3]
        assert (await one.journal.held()).bytes == await stored_bytes(one)
        await two.reset()  # everything, everywhere
        assert await one.journal.read(JournalQuery(), []) == []
        assert await one.journal.held() == await two.journal.held()
        assert (await one.journal.held()).bytes == 0
        await record(one.journal, exchange(9))
        assert [s.data["seq"] for s in await two.journal.read(JournalQuery(), [])] == [7]  # seq keeps rising

    run(redis_server, test)


def test_the_journal_is_bounded_in_entries_across_processes(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        await asyncio.gather(*(record((one, two)[n % 2].journal, exchange(n)) for n in range(12)))
        kept = await two.journal.read(JournalQuery(), [])
        assert [s.data["seq"] for s in kept] == [8, 9, 10, 11, 12]
        assert (await one.journal.held()).entries == 5

    run(redis_server, test, journal_size=5)


def test_the_journal_is_bounded_in_bytes_across_processes(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        for n in range(10):
            await record((one, two)[n % 2].journal, exchange(n, size=3000))
        held = await one.journal.held()
        assert held.bytes == await stored_bytes(one) <= 10_000
        kept = await two.journal.read(JournalQuery(), [])
        assert len(kept) == held.entries >= 2 and kept[-1].data["request_id"] == "req_9"
        assert [s.data["seq"] for s in kept] == list(range(11 - len(kept), 11))  # the oldest went first
        assert kept[-1].data["body"]["messages"][0]["content"] == "x" * 3000
        # One entry larger than the whole journal is kept, without its body.
        await record(one.journal, exchange(10, size=20_000))
        (last,) = (await two.journal.read(JournalQuery(), []))[-1:]
        assert last.data["body"] is None and last.data["body_dropped_bytes"] > 20_000
        assert last.data["model"] == "gpt-5.6-mini" and (await one.journal.held()).bytes <= 10_000

    run(redis_server, test, journal_bytes=10_000)


def test_redis_away_while_recording_logs_once_and_the_reply_goes_on(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async def test(states: list[ServerState]) -> None:
        one, two = states
        await record(one.journal, exchange(0, test_id="t"))
        redis_server.stop()
        with caplog.at_level(logging.WARNING, logger="mockserver"):
            for n in range(1, 4):
                await record((one, two)[n % 2].journal, exchange(n, test_id="t"))  # no exception
        lost = [r for r in caplog.records if "journal did not record" in r.getMessage()]
        assert len(lost) == 2 and all(r.exc_info is None for r in lost)  # one per process, no traceback
        one.journal.settle("t", timeout=0.5)  # nothing left in flight: a reader does not wait
        with pytest.raises(errors.ServiceUnavailableError) as caught:
            await two.journal.read(JournalQuery(), [])
        assert (caught.value.status_code, caught.value.code) == (503, "state_unavailable")
        for away in (two.journal.forget(), two.journal.held(), two.journal.newest()):
            with pytest.raises(errors.ServiceUnavailableError):
                await away
        redis_server.start()  # an empty Redis, as after a restart without persistence
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mockserver"):
            await record(two.journal, exchange(4, test_id="t"))
        assert "2 exchanges were not recorded" in caplog.text  # the two this process served meanwhile
        assert request_ids(await one.journal.read(JournalQuery(test_id="t"), [])) == ["req_4"]

    run(redis_server, test)


def test_the_memory_journal_is_the_default_and_a_shared_state_gets_the_shared_one() -> None:
    assert isinstance(ServerState(settings=Settings(), fixture=load_fixture()).journal, Journal)
    shared = Shared.from_url("redis://127.0.0.1:1/0")  # never connected: the journal is built lazily
    state = ServerState(settings=Settings(), fixture=load_fixture(), shared=shared)
    assert isinstance(state.journal, SharedJournal)


def test_keys_added_to_the_fixture_are_masked_in_what_is_recorded_after(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, _ = states
        secret = "custom-secret-without-prefix"
        one.fixture = one.fixture.model_copy(
            update={"accounts": [*one.fixture.accounts, Account(key=secret, organization="org-x")]}
        )
        done = exchange(0, key=None)
        done.body = {"model": "gpt-5.6-mini", "note": f"uses {secret}"}
        await record(one.journal, done)
        (shown,) = await one.journal.read(JournalQuery(), [])
        assert secret not in orjson.dumps(shown.data).decode()

    run(redis_server, test)


async def stored_bytes(state: ServerState) -> int:
    """What the journal's index and entries hold in Redis, byte for byte."""
    assert state.shared is not None
    redis, key = state.shared.connection, state.shared.key
    heads = await redis.lrange(key("journal:index"), 0, -1)
    return sum(map(len, heads)) + sum(map(len, await redis.hvals(key("journal:entries"))))


@contextmanager
def two_servers(redis: RedisServer) -> Iterator[tuple[MockServer, MockServer]]:
    """Two real servers on one Redis, as two replicas would run."""
    settings = Settings(port=0, state=redis.url, time_scale=0)
    with MockServer(settings) as one, MockServer(settings) as two:
        yield one, two


def ask(server: MockServer, text: str) -> None:
    client = server.client(strict=True, test_id="http", max_retries=0)
    client.chat.completions.create(model="gpt-5.6-mini", messages=[{"role": "user", "content": text}])


def test_two_servers_on_one_redis_show_one_journal_over_http(redis_server: RedisServer) -> None:
    with two_servers(redis_server) as (one, two):
        for n in range(4):
            ask((one, two)[n % 2], f"turn {n}")
        pages = [httpx.get(f"{s.url}/_mock/requests", params={"test_id": "http"}).json()["data"] for s in (one, two)]
        assert pages[0] == pages[1]
        assert [e["body"]["messages"][0]["content"] for e in pages[0]] == [f"turn {n}" for n in range(4)]
        assert [e["seq"] for e in pages[0]] == [1, 2, 3, 4]
        assert {e["key"] for e in pages[0]} == {"sk-moc*****view"} and {e["status"] for e in pages[0]} == {200}
        assert two.calls(test_id="http").filter(key=DEFAULT_KEY).call_count == 4  # MockServer reads it too
        newest = httpx.get(f"{one.url}/_mock/requests", params={"limit": 1, "model": "gpt-5.6-mini"}).json()["data"]
        assert [e["seq"] for e in newest] == [4]
        assert httpx.get(f"{one.url}/_mock/stats").json()["journal_entries"] == 4
        cleared = httpx.delete(f"{two.url}/_mock/requests", params={"test_id": "http"}).json()
        assert cleared == {"object": "journal.cleared", "deleted": 4}
        assert httpx.get(f"{one.url}/_mock/requests").json()["data"] == []


def test_redis_away_the_replies_go_on_reading_is_a_503_and_both_recover(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    with two_servers(redis_server) as (one, two), caplog.at_level(logging.WARNING):
        ask(one, "before")
        redis_server.stop()
        refused = httpx.post(
            f"{one.url}/v1/chat/completions",
            json={"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "while away"}]},
            headers={"authorization": f"Bearer {DEFAULT_KEY}"},
        )
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "state_unavailable"
        reading = httpx.get(f"{two.url}/_mock/requests")
        assert reading.status_code == 503 and reading.json()["error"]["code"] == "state_unavailable"
        assert reading.headers["retry-after"] == "1"
        assert "journal did not record POST /v1/chat/completions" in caplog.text
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
        redis_server.start()  # empty, as after a restart without persistence
        ask(two, "after")
        (entry,) = httpx.get(f"{one.url}/_mock/requests").json()["data"]
        assert entry["body"]["messages"][0]["content"] == "after"


def test_a_stream_read_to_its_end_is_in_the_journal_of_the_other_server_at_once(redis_server: RedisServer) -> None:
    settings = Settings(port=0, state=redis_server.url, time_scale=0.02)  # paced: the scheduler ends it
    with MockServer(settings) as one, MockServer(settings) as two:
        client = one.client(strict=True, test_id="stream", max_retries=0)
        for n in range(3):
            stream = client.chat.completions.create(
                model="gpt-5.6-mini", messages=[{"role": "user", "content": f"stream {n}"}], stream=True, max_tokens=20
            )
            assert [chunk for chunk in stream]
            seen = httpx.get(f"{two.url}/_mock/requests", params={"test_id": "stream"}).json()["data"]
            assert len(seen) == n + 1 and seen[-1]["stream"] is True and seen[-1]["status"] == 200
            assert seen[-1]["usage"]["output_tokens"] > 0 and seen[-1]["disconnected"] is False


def test_a_body_too_deep_for_json_is_recorded_as_masked_text(redis_server: RedisServer) -> None:
    async def test(states: list[ServerState]) -> None:
        one, _ = states
        done = exchange(0)
        deep: Any = PREVIEW
        for _ in range(300):  # deeper than orjson writes (a route never parses one this deep)
            deep = [deep]
        done.body, done.request_body = deep, b"[" * 300 + orjson.dumps(PREVIEW) + b"]" * 300
        assert isinstance(one.journal, SharedJournal)
        _, stored = one.journal.stored(done, None)
        body = orjson.loads(stored)["body"]
        assert body == "[" * 300 + '"sk-moc*****view"' + "]" * 300  # as text, the key masked

    run(redis_server, test)
