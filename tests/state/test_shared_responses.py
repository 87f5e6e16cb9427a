"""Stored responses shared through a real Redis, checked with the official SDK: a response stored through
one server is retrieved, listed, continued, cancelled and deleted through another; the bounds and the
live API's 404 hold across both; a background response's status and its cancel cross servers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
import pytest

from mockserver import MockServer
from tests.conftest import PREVIEW_KEY, STANDARD_KEY
from tests.redis_server import RedisServer

MODEL = "gpt-5.6-sol"
SLOW = {"x-mock-tokens-per-second": "20", "x-mock-ttft-ms": "0", "x-mock-output-tokens": "200"}  # ~10 s


@contextmanager
def two_servers(redis: RedisServer, **settings: Any) -> Iterator[tuple[openai.OpenAI, openai.OpenAI]]:
    """SDK clients of two servers on one Redis."""
    settings.setdefault("time_scale", 0)
    with (
        MockServer(state=redis.url, **settings) as one,
        MockServer(state=redis.url, **settings) as two,
        one.client(PREVIEW_KEY, strict=True) as first,
        two.client(PREVIEW_KEY, strict=True) as second,
    ):
        yield first, second


def test_a_response_stored_through_one_server_is_used_through_the_other(redis_server: RedisServer) -> None:
    with two_servers(redis_server) as (one, two):
        first = one.responses.create(model=MODEL, input=[{"role": "user", "content": "What is the capital of France?"}])
        again = two.responses.retrieve(first.id)
        assert again.model_dump() == first.model_dump()
        items = two.responses.input_items.list(first.id)
        assert [item.type for item in items.data] == ["message"]
        follow = two.responses.create(model=MODEL, input="And of Spain?", previous_response_id=first.id)
        assert follow.usage is not None and first.usage is not None
        assert follow.usage.input_tokens > first.usage.input_tokens  # the earlier turn is read
        count = one.responses.input_tokens.count(model=MODEL, input="And of Spain?", previous_response_id=first.id)
        assert count.input_tokens == follow.usage.input_tokens
        assert one.responses.retrieve(follow.id).previous_response_id == first.id
        two.responses.delete(first.id)
        for client in (one, two):
            with pytest.raises(openai.NotFoundError):
                client.responses.retrieve(first.id)
        with pytest.raises(openai.NotFoundError) as caught:
            one.responses.create(model=MODEL, input="Hi", previous_response_id=first.id)
        assert caught.value.param == "previous_response_id"


def test_another_projects_key_sees_a_404_on_either_server(redis_server: RedisServer) -> None:
    with two_servers(redis_server) as (one, two):
        mine = one.responses.create(model=MODEL, input="Hi")
        other = openai.OpenAI(base_url=str(two.base_url), api_key=STANDARD_KEY, max_retries=0)
        with other:
            with pytest.raises(openai.NotFoundError):
                other.responses.retrieve(mine.id)
            with pytest.raises(openai.NotFoundError):
                other.responses.delete(mine.id)
        assert two.responses.retrieve(mine.id).id == mine.id


def test_the_count_bound_holds_across_servers_and_an_evicted_id_is_a_404(redis_server: RedisServer) -> None:
    with two_servers(redis_server, stored_responses=2, stored_response_ttl=120) as (one, two):
        ids = [(one, two)[n % 2].responses.create(model=MODEL, input=f"turn {n}").id for n in range(3)]
        for client in (one, two):
            with pytest.raises(openai.NotFoundError) as caught:
                client.responses.retrieve(ids[0])
            assert caught.value.body["message"] == f"Response with id '{ids[0]}' not found."  # type: ignore[index]
            assert [client.responses.retrieve(i).id for i in ids[1:]] == ids[1:]
        assert _integer(redis_server.command("ZCARD", "mockserver:responses:index")) == 2
        ttl_ms = _integer(redis_server.command("PTTL", f"mockserver:responses:id:{ids[2]}"))
        assert 110_000 < ttl_ms <= 120_000  # the age bound is the key's expiry


def test_a_background_responses_status_and_cancel_cross_servers(redis_server: RedisServer) -> None:
    with two_servers(redis_server, time_scale=1) as (one, two):
        queued = {**SLOW, "x-mock-ttft-ms": "3000"}
        created = one.responses.create(model=MODEL, input="Hello", background=True, extra_headers=queued)
        assert created.status == "queued"
        assert two.responses.retrieve(created.id).status == "queued"
        cancelled = two.responses.cancel(created.id)
        assert cancelled.status == "cancelled"
        assert one.responses.retrieve(created.id).status == "cancelled"
        assert one.responses.cancel(created.id).status == "cancelled"  # cancelling again: as it is
        running = one.responses.create(model=MODEL, input="Hello", background=True, extra_headers=SLOW)
        assert two.responses.retrieve(running.id).status == "in_progress"
        synchronous = two.responses.create(model=MODEL, input="Hello", extra_headers={"x-mock-output-tokens": "2"})
        with pytest.raises(openai.BadRequestError):
            one.responses.cancel(synchronous.id)
    with two_servers(redis_server) as (one, two):
        done = one.responses.create(model=MODEL, input="Hello", background=True)
        assert two.responses.retrieve(done.id).status == "completed"  # time scale 0: done at once
        assert two.responses.cancel(done.id).status == "completed"  # too late: returned as it is


def test_a_background_stream_stops_when_another_server_cancels_it(redis_server: RedisServer) -> None:
    with two_servers(redis_server, time_scale=1) as (one, two):
        kinds: list[str] = []
        with one.responses.stream(model=MODEL, input="Hello", background=True, extra_headers=SLOW) as stream:
            for event in stream:
                kinds.append(event.type)
                if event.type == "response.created":
                    response_id = event.response.id
                if kinds.count("response.output_text.delta") == 3:
                    assert two.responses.cancel(response_id).status == "cancelled"
        assert "response.completed" not in kinds
        # stopped within a poll interval (0.2 s, 4 tokens) plus the cancel's own round trip: well before its 200 tokens
        assert kinds.count("response.output_text.delta") < 100
        assert one.responses.retrieve(response_id).status == "cancelled"


def test_redis_away_is_a_retryable_503_for_stored_responses_and_recovers(redis_server: RedisServer) -> None:
    with two_servers(redis_server) as (one, two):
        created = one.responses.create(model=MODEL, input="Hi")
        redis_server.stop()
        try:
            with pytest.raises(openai.InternalServerError) as caught:
                two.with_options(max_retries=0).responses.retrieve(created.id)
            assert caught.value.status_code == 503 and caught.value.code == "state_unavailable"
        finally:
            redis_server.start()
        # an empty Redis (a restart without persistence): what was stored is gone, the rest works again
        with pytest.raises(openai.NotFoundError):
            two.responses.retrieve(created.id)
        again = two.responses.create(model=MODEL, input="Hi")
        assert one.responses.retrieve(again.id).status == "completed"


def _integer(reply: bytes) -> int:
    """A RESP integer reply (``:3``)."""
    return int(reply.split(b"\r\n")[0][1:])
