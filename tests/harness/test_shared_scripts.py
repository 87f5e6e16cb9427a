"""Scripted sequences shared through a real Redis: two servers on one Redis give each step of a sequence
to one request, in order, whichever server takes it and however many requests race for it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.testing.patches import config_patch
from tests.conftest import PREVIEW_KEY
from tests.redis_server import RedisServer

MODEL = "gpt-5.6-mini"
STEPS = [f"step {n}" for n in range(1, 7)]


@contextmanager
def two_servers(redis: RedisServer, **patch: Any) -> Iterator[tuple[MockServer, MockServer]]:
    """Two servers on one Redis, with ``patch`` applied through the shared configuration."""
    with MockServer(time_scale=0, state=redis.url) as one, MockServer(time_scale=0, state=redis.url) as two:
        one.run(one.state.configure_everywhere(config_patch(**patch)))
        yield one, two


def texts(server: MockServer, count: int, test_id: str = "seq") -> list[str | None]:
    with server.client(PREVIEW_KEY, strict=True, test_id=test_id, max_retries=0) as sdk:
        ask: list[Any] = [{"role": "user", "content": "x"}]
        replies = [sdk.chat.completions.create(model=MODEL, messages=ask) for _ in range(count)]
    return [reply.choices[0].message.content for reply in replies]


def test_a_sequence_advances_once_across_two_servers(redis_server: RedisServer) -> None:
    with two_servers(redis_server, scripts=[{"reply": {"sequence": [{"text": t} for t in STEPS[:3]]}}]) as (one, two):
        assert texts(one, 1) + texts(two, 1) + texts(one, 1) + texts(two, 2) == [*STEPS[:3], STEPS[2], STEPS[2]]
        assert texts(two, 1, test_id="other") == [STEPS[0]]  # counted per test id
        one.run(one.state.reset_scope("seq"))  # a test's reset reaches the other server
        assert texts(two, 1) == [STEPS[0]]
        two.reset()  # a full reset: the configuration too, and every test's counters
        one.run(one.state.configure_everywhere(config_patch(scripts=[{"reply": {"sequence": [{"text": "again"}]}}])))
        assert texts(two, 1, test_id="other") == ["again"]


def test_concurrent_requests_on_two_servers_each_get_their_own_step(redis_server: RedisServer) -> None:
    rules = [{"reply": {"sequence": [{"text": t} for t in STEPS], "then": "generate"}}]
    with two_servers(redis_server, scripts=rules) as (one, two):
        body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}]}
        headers = {"authorization": f"Bearer {PREVIEW_KEY}", "x-mock-test-id": "race"}
        urls = [server.url + "/v1/chat/completions" for server in (one, two)] * 3

        def post(url: str) -> str:
            reply = httpx.post(url, json=body, headers=headers, timeout=30)
            assert reply.status_code == 200, reply.text
            content: str = reply.json()["choices"][0]["message"]["content"]
            return content

        with ThreadPoolExecutor(len(urls)) as pool:
            got = list(pool.map(post, urls))
        assert sorted(got) == STEPS  # every step once: none given twice, none skipped
        assert texts(one, 1, test_id="race")[0] not in STEPS  # used up: generated text


def test_a_scripted_error_step_is_used_up_on_the_server_that_gave_it(redis_server: RedisServer) -> None:
    rules = [{"reply": {"sequence": [{"error": {"status": 503}}, {"text": "Back."}]}}]
    with two_servers(redis_server, scripts=rules) as (one, two):
        with pytest.raises(openai.InternalServerError):
            texts(one, 1)
        assert texts(two, 1) == ["Back."]
        # the SDK's retry of a 503 lands on a later step, whichever server answers it
        with two.client(PREVIEW_KEY, strict=True, test_id="retry", max_retries=1) as sdk:
            reply = sdk.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x"}])
        assert reply.choices[0].message.content == "Back."


def test_redis_away_is_a_retryable_503_for_a_sequence_and_recovers(redis_server: RedisServer) -> None:
    with two_servers(redis_server, scripts=[{"reply": {"sequence": [{"text": "a"}, {"text": "b"}]}}]) as (one, _):
        assert texts(one, 1) == ["a"]
        redis_server.stop()
        try:
            with pytest.raises(openai.InternalServerError) as caught:
                texts(one, 1)
            assert caught.value.status_code == 503 and caught.value.code == "state_unavailable"
        finally:
            redis_server.start()
        # an empty Redis (a restart without persistence): the shared configuration and counters start again
        one.run(one.state.configure_everywhere(config_patch(scripts=[{"reply": {"sequence": [{"text": "c"}]}}])))
        assert texts(one, 1) == ["c"]
