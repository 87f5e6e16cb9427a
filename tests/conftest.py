"""Shared test fixtures: a real server in a thread, and official SDK clients with strict validation."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import Fixture, load_fixture
from tests.redis_server import RedisServer

PREVIEW_KEY = "sk-mock-preview"
STANDARD_KEY = "sk-mock-standard"


@pytest.fixture(scope="session")
def server() -> Iterator[MockServer]:
    """The default fixture, answering instantly (time scale 0)."""
    with MockServer(time_scale=0, seed=1) as running:
        yield running


@pytest.fixture
def make_client(server: MockServer) -> Callable[..., openai.OpenAI]:
    def make(api_key: str = PREVIEW_KEY, **kwargs: object) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=server.base_url, api_key=api_key, max_retries=0, _strict_response_validation=True, **kwargs
        )

    return make


@pytest.fixture
def client(make_client: Callable[..., openai.OpenAI]) -> openai.OpenAI:
    return make_client(PREVIEW_KEY)


@pytest.fixture
def standard_client(make_client: Callable[..., openai.OpenAI]) -> openai.OpenAI:
    return make_client(STANDARD_KEY)


@pytest.fixture
def http(server: MockServer) -> Iterator[httpx.Client]:
    """A plain HTTP client for checks below the SDK, with the preview key."""
    with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {PREVIEW_KEY}"}) as c:
        yield c


def fixture_with(**changes: object) -> Fixture:
    """The default fixture with top-level fields replaced, e.g. ``policies=...``."""
    data = load_fixture().model_dump()
    data.update(changes)
    return Fixture.model_validate(data)


@pytest.fixture(scope="session")
def redis_session() -> Iterator[RedisServer]:
    """One real ``redis-server`` for the session (see :mod:`tests.redis_server`)."""
    with RedisServer() as running:
        yield running


@pytest.fixture
def redis_server(redis_session: RedisServer) -> RedisServer:
    """The session's ``redis-server``, emptied for this test."""
    if not redis_session.answers():  # a test took it away and did not bring it back
        redis_session.start()
    redis_session.flush()
    return redis_session
