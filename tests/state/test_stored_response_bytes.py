"""Stored responses are bounded in bytes (``--stored-response-bytes``) as well as by count and age:
past the bound the oldest are evicted (their ids are the live API's 404), in memory and in Redis
across two servers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import openai
import pytest
import redis as redis_client

from mockserver import MockServer
from mockserver.state.responses import ResponseStore
from tests.conftest import PREVIEW_KEY
from tests.redis_server import RedisServer

MODEL = "gpt-5.6-sol"
LONG = {"x-mock-output-tokens": "400"}  # a record of about 7 KB
LIMIT = 30_000  # bytes: four of those


@contextmanager
def clients(redis: RedisServer | None, **settings: Any) -> Iterator[list[openai.OpenAI]]:
    with ExitStack() as stack:
        count = 1 if redis is None else 2
        shared = {} if redis is None else {"state": redis.url}
        servers = [stack.enter_context(MockServer(time_scale=0, **shared, **settings)) for _ in range(count)]
        yield [stack.enter_context(server.client(PREVIEW_KEY, strict=True)) for server in servers]


def fill(sdk: list[openai.OpenAI], count: int) -> list[str]:
    ids = []
    for n in range(count):
        response = sdk[n % len(sdk)].responses.create(model=MODEL, input=f"Tell story number {n}.", extra_headers=LONG)
        ids.append(response.id)
    return ids


def retrievable(sdk: openai.OpenAI, response_id: str) -> bool:
    try:
        sdk.responses.retrieve(response_id)
    except openai.NotFoundError:
        return False
    return True


@pytest.mark.parametrize("shared", [False, True], ids=["memory", "redis, two servers"])
def test_the_oldest_responses_go_once_the_stored_bytes_pass_the_bound(
    shared: bool, request: pytest.FixtureRequest
) -> None:
    redis = request.getfixturevalue("redis_server") if shared else None
    with clients(redis, stored_response_bytes=LIMIT) as sdk:
        ids = fill(sdk, 12)
        kept = [retrievable(sdk[-1], response_id) for response_id in ids]
    if redis is not None:
        with redis_client.Redis.from_url(redis.url) as connection:
            assert 0 < int(connection.get("mockserver:responses:bytes") or 0) <= LIMIT
    assert kept[-1], "the newest response was evicted"
    assert not kept[0], "nothing was evicted past the byte bound"
    assert kept == sorted(kept), f"not the oldest first: {kept}"  # evicted ones, then kept ones
    assert 2 <= sum(kept) <= 4


@pytest.mark.parametrize("shared", [False, True], ids=["memory", "redis, two servers"])
def test_a_response_larger_than_the_bound_stays_until_the_next_one(
    shared: bool, request: pytest.FixtureRequest
) -> None:
    """Before, a response alone over the bound was answered ``store: true`` and was a 404 at once
    (for ``GET`` and ``previous_response_id``): it was evicted by its own put."""
    redis = request.getfixturevalue("redis_server") if shared else None
    with clients(redis, stored_response_bytes=1_000) as sdk:  # each record is about 7 KB
        first = fill(sdk, 1)[0]
        assert retrievable(sdk[-1], first)
        chained = sdk[-1].responses.create(model=MODEL, input="And then?", previous_response_id=first)
        assert retrievable(sdk[0], chained.id)
        assert not retrievable(sdk[0], first)  # the next one took its place: the bound holds again


def test_the_memory_store_holds_at_most_the_bound_and_forgets_it_on_reset() -> None:
    with MockServer(time_scale=0, stored_response_bytes=LIMIT) as server:
        responses = server.state.responses
        assert isinstance(responses, ResponseStore)
        with server.client(PREVIEW_KEY, strict=True) as sdk:
            fill([sdk], 12)
        assert 0 < responses.bytes <= LIMIT
        server.reset()
        assert responses.bytes == 0
