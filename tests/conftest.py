"""Shared test fixtures: a real server in a thread, and official SDK clients with strict validation."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, cast

import httpx
import httpx2
import openai
import pytest

from mockserver import MockServer
from mockserver.config.fixture import Fixture, load_fixture
from tests.processes import ServerProcess
from tests.redis_server import RedisServer
from tests.support import close_clients

PREVIEW_KEY = "sk-mock-preview"
STANDARD_KEY = "sk-mock-standard"


# Set to a Redis URL, the session's server is two worker processes sharing that Redis instead of a
# server in a thread: how tests/test_workers.py runs the SDK suites against ``serve --workers 2``.
WORKERS_STATE_VARIABLE = "MOCKSERVER_TEST_WORKERS_STATE"


@pytest.fixture(autouse=True)
def _sdk_clients_closed() -> Iterator[None]:
    """Every client ``tests.support.sdk`` made in a test is closed when the test ends."""
    yield
    close_clients()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "server(**options): the MockServer options a test module's ``server`` needs beyond the default ones",
    )


class Servers:
    """The session's servers, one for each set of options asked for, started on first use and stopped
    at the end: modules that ask for the same options share one server."""

    def __init__(self) -> None:
        self._running: dict[tuple[tuple[str, object], ...], MockServer] = {}
        self._stack = contextlib.ExitStack()

    def get(self, **options: object) -> MockServer:
        key = tuple(sorted(options.items()))
        if key not in self._running:
            self._running[key] = self._stack.enter_context(self._started(**options))
        return self._running[key]

    @staticmethod
    def _started(**options: object) -> contextlib.AbstractContextManager[MockServer]:
        state = os.environ.get(WORKERS_STATE_VARIABLE)
        if state and not options:
            args = ("--workers", "2", "--state", state, "--time-scale", "0", "--seed", "1")
            return cast(contextlib.AbstractContextManager[MockServer], ServerProcess(*args))
        return MockServer(**{"time_scale": 0, "seed": 1, **options})  # type: ignore[arg-type]

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    running = Servers()
    yield running
    running.close()


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, servers: Servers) -> MockServer:
    """A server answering instantly (time scale 0, seed 1), shared by every module that asks for the
    same options: ``pytestmark = pytest.mark.server(max_body_bytes=...)`` adds to the default ones.

    With ``MOCKSERVER_TEST_WORKERS_STATE`` set, the default server is ``serve --workers 2`` on that
    state instead, as the SDK suites use it (only through its URL)."""
    marker = request.node.get_closest_marker("server")
    return servers.get(**(marker.kwargs if marker else {}))


def fresh_connections() -> dict[str, object]:
    """Against several workers, a new connection for every request, so that consecutive requests of one
    test land on any worker (a kept-alive connection stays with the worker that accepted it)."""
    if not os.environ.get(WORKERS_STATE_VARIABLE):
        return {}
    # The SDK's own client class, on the HTTP library the SDK is built on (httpx2), as its users pass one.
    return {"http_client": openai.DefaultHttpxClient(limits=httpx2.Limits(max_keepalive_connections=0))}


@pytest.fixture
def make_client(server: MockServer) -> Iterator[Callable[..., openai.OpenAI]]:
    made: list[openai.OpenAI] = []

    def make(api_key: str = PREVIEW_KEY, **kwargs: object) -> openai.OpenAI:
        client = openai.OpenAI(
            base_url=server.base_url,
            api_key=api_key,
            max_retries=0,
            _strict_response_validation=True,
            **{**fresh_connections(), **kwargs},
        )
        made.append(client)
        return client

    yield make
    for client in made:  # their connections too, so none is left to the garbage collector
        client.close()


@pytest.fixture
def client(make_client: Callable[..., openai.OpenAI]) -> openai.OpenAI:
    return make_client(PREVIEW_KEY)


@pytest.fixture
def standard_client(make_client: Callable[..., openai.OpenAI]) -> openai.OpenAI:
    return make_client(STANDARD_KEY)


@pytest.fixture
def http(server: MockServer) -> Iterator[httpx.Client]:
    """A plain HTTP client for checks below the SDK, with the preview key."""
    options: dict[str, Any] = {"base_url": server.url, "headers": {"authorization": f"Bearer {PREVIEW_KEY}"}}
    if os.environ.get(WORKERS_STATE_VARIABLE):
        options["limits"] = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(**options) as c:
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
