"""What clients leave behind is bounded: stored responses by count and age, the journal by entries and bytes."""

from __future__ import annotations

import asyncio

import pytest

from mockserver import MockServer, errors
from mockserver.config.settings import DEFAULT_STORED_RESPONSE_BYTES
from mockserver.engine.pacing import FakeClock
from mockserver.harness.journal import Journal
from mockserver.service.exchange import Exchange
from mockserver.state.responses import ResponseStore, StoredResponse

PROJECT = "proj_a"


def stored(response_id: str) -> StoredResponse:
    body = {"id": response_id, "object": "response", "status": "completed"}
    return StoredResponse(
        id=response_id, project=PROJECT, final_body=body, in_progress_body=body, ready_at=0.0, conversation=()
    )


def test_the_oldest_stored_responses_are_evicted_past_the_count() -> None:
    store = ResponseStore(FakeClock().now, max_items=3, ttl_s=3600, max_bytes=DEFAULT_STORED_RESPONSE_BYTES)
    for n in range(5):
        asyncio.run(store.put(stored(f"resp_{n}")))
    assert len(store) == 3
    for gone in ("resp_0", "resp_1"):
        with pytest.raises(errors.NotFoundError, match=f"Response with id '{gone}' not found"):
            asyncio.run(store.get(PROJECT, gone))
    kept = [asyncio.run(store.get(PROJECT, f"resp_{n}"))["id"] for n in (2, 3, 4)]
    assert kept == ["resp_2", "resp_3", "resp_4"]


def test_stored_responses_expire_after_their_age() -> None:
    clock = FakeClock()
    store = ResponseStore(clock.now, max_items=100, ttl_s=60, max_bytes=DEFAULT_STORED_RESPONSE_BYTES)
    asyncio.run(store.put(stored("resp_old")))
    clock.advance(30)
    asyncio.run(store.put(stored("resp_new")))
    clock.advance(31)
    with pytest.raises(errors.NotFoundError):
        asyncio.run(store.get(PROJECT, "resp_old"))
    with pytest.raises(errors.NotFoundError, match="Previous response with id 'resp_old' not found"):
        asyncio.run(store.previous(PROJECT, "resp_old"))
    assert asyncio.run(store.get(PROJECT, "resp_new"))["id"] == "resp_new"
    assert len(store) == 1


def test_an_evicted_response_is_the_real_apis_404_over_http() -> None:
    with MockServer(time_scale=0, stored_responses=2) as server:
        client = server.client(strict=True, max_retries=0)
        ids = [client.responses.create(model="gpt-5.6-mini", input=f"turn {n}").id for n in range(3)]
        import openai

        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.retrieve(ids[0])
        assert caught.value.body["message"] == f"Response with id '{ids[0]}' not found."  # type: ignore[index]
        assert client.responses.retrieve(ids[2]).id == ids[2]
        assert len(server.state.responses) == 2


def _exchange(n: int, size: int) -> Exchange:
    exchange = Exchange(request_id=f"req_{n}", method="POST", path="/v1/chat/completions", headers={}, started_at=0)
    exchange.request_body = b'{"x": "' + b"y" * size + b'"}'
    exchange.body = {"x": "y" * size}
    exchange.finished_at = 0
    return exchange


def test_the_journal_is_bounded_in_bytes_as_well_as_entries() -> None:
    journal = Journal(1000, max_bytes=10_000)
    for n in range(10):
        journal.on_complete(_exchange(n, 3000))
    kept = journal.select()
    assert [r.exchange.request_id for r in kept] == ["req_7", "req_8", "req_9"]
    assert journal.bytes <= 10_000
    assert all(r.exchange.body is None for r in kept)  # only the raw bytes are kept; read back on demand


def test_one_body_larger_than_the_journal_is_kept_without_its_body() -> None:
    journal = Journal(1000, max_bytes=1000)
    journal.on_complete(_exchange(0, 100))
    journal.on_complete(_exchange(1, 5000))
    first, kept = journal.select()
    assert first.exchange.request_body and kept.exchange.request_body == b""
    assert kept.exchange.journal_body_dropped == 5000 + len(b'{"x": ""}')
    assert journal.bytes <= 1000


def test_large_bodies_do_not_grow_the_journal_over_http() -> None:
    with MockServer(time_scale=0, journal_bytes=1_000_000) as server:
        http = server.client(max_retries=0)
        for _ in range(6):
            http.chat.completions.create(model="gpt-5.6-mini", messages=[{"role": "user", "content": "z" * 300_000}])
        calls = server.requests
        assert len(calls) == 3 and server.state.journal.bytes <= 1_000_000
        assert calls[-1].body["messages"][0]["content"] == "z" * 300_000
