"""Helpers for the tests: fixtures with extra keys, a record of attempts, the event loop's turns
during a piece of work, and a stream played by the server's scheduler on a fake clock."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import openai
import pytest
import tiktoken

from mockserver import MockServer
from mockserver.config.fixture import Fixture, load_fixture
from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.pacing import FakeClock
from mockserver.engine.scheduler import StreamScheduler
from mockserver.engine.streaming import Item
from mockserver.service.exchange import Exchange
from mockserver.testing.tiktoken_cache import seed_tiktoken_cache

MESSAGES = [{"role": "user", "content": "Write a haiku about speed."}]
T = TypeVar("T")


async def scheduled(items: Iterator[Item], clock: FakeClock, dialect: Dialect = CHAT) -> list[tuple[float, bytes]]:
    """Each event of a stream with the time on ``clock`` the server's scheduler writes it, played as the
    server plays it. A stream that drops its connection raises ``ConnectionAbortedError``."""
    writes: list[tuple[float, bytes]] = []

    async def send(message: dict[str, Any]) -> None:
        if message.get("more_body"):
            writes.append((clock.now(), message["body"]))

    await StreamScheduler(clock).open(items, send_body=send, send_end=send, dialect=dialect).done
    return [(at, event + b"\n\n") for at, body in writes for event in body.split(b"\n\n") if event]


def with_loop_turns(work: Callable[[], Awaitable[T]]) -> tuple[T, int]:
    """``work()`` run to its end on a new event loop, and how many turns the loop gave another task
    meanwhile: none for work that runs in one piece, one for each time it lets the loop run."""

    async def run() -> tuple[T, int]:
        turns = 0

        async def other() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        ticker = asyncio.get_running_loop().create_task(other())
        await asyncio.sleep(0)
        turns = 0
        try:
            return await work(), turns
        finally:
            ticker.cancel()

    return asyncio.run(run())


def fixture(
    *, keys: Sequence[dict[str, Any]] = (), organizations: Sequence[dict[str, Any]] = (), **changes: Any
) -> Fixture:
    """The default fixture plus extra keys and organizations, with top-level fields replaced."""
    data = load_fixture().model_dump()
    data["accounts"] += list(keys)
    data["organizations"] += list(organizations)
    data.update(changes)
    return Fixture.model_validate(data)


# Headers that make a reply instant on a server whose time scale is 1 (for tests of the waits it asks for).
INSTANT = {"x-mock-tokens-per-second": "100000", "x-mock-ttft-ms": "0"}


def sdk(server: MockServer, key: str = "sk-mock-preview", **kwargs: Any) -> openai.OpenAI:
    """A strict OpenAI client for ``server``, closed at the end of the test (:func:`close_clients`)."""
    kwargs.setdefault("max_retries", 0)
    client = openai.OpenAI(base_url=server.base_url, api_key=key, _strict_response_validation=True, **kwargs)
    _OPEN_CLIENTS.append(client)
    return client


# The clients sdk() made in the running test. A client left open is freed by a pass of the garbage
# collector (it is in a reference cycle), which may close its sockets before the client does: a
# ResourceWarning, an error in whatever test is running then.
_OPEN_CLIENTS: list[openai.OpenAI] = []


def close_clients() -> None:
    """Close every client :func:`sdk` made (closing one twice does nothing)."""
    while _OPEN_CLIENTS:
        _OPEN_CLIENTS.pop().close()


@dataclass(frozen=True)
class Attempt:
    path: str
    status: int | None
    retry_count: str | None
    started_at: float


class Attempts(list[Attempt]):
    """Every request the server completed, as the server saw it (its own count, not the client's)."""

    def __init__(self, server: MockServer) -> None:
        super().__init__()
        server.state.hooks.on_complete.append(self._record)

    def _record(self, exchange: Exchange) -> None:
        if exchange.path.startswith("/v1/"):
            self.append(
                Attempt(exchange.path, exchange.status, exchange.headers.get("x-stainless-retry-count"),
                        exchange.started_at)
            )  # fmt: skip

    def gaps(self) -> list[float]:
        return [b.started_at - a.started_at for a, b in itertools.pairwise(self)]


NODE_DIR_VARIABLE = "MOCKSERVER_TEST_NODE_DIR"


def node_dir() -> Path:
    """Where the Node SDK tests run: tests/node (``npm ci --prefix tests/node`` installs its pinned SDKs),
    or the copy of it that ``MOCKSERVER_TEST_NODE_DIR`` names (``scripts/test_latest.sh`` installs the
    newest SDKs there)."""
    return Path(os.environ.get(NODE_DIR_VARIABLE) or Path(__file__).resolve().parent / "node")


def tiktoken_reference(name: str, factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    """``tiktoken.get_encoding(name)`` as a client gets it: tiktoken's own pattern and special tokens,
    reading the file it would download from a cache seeded with mockserver's copy (its SHA-256 checked)
    and not from the network."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(factory.mktemp("tiktoken")))
        seed_tiktoken_cache()
        return tiktoken.get_encoding(name)


def run_weather_agent(server: MockServer, asked: list[str], model: str, ask: str, **agent_options: Any) -> Any:
    """Run an OpenAI Agents SDK agent with one ``get_weather`` tool against ``server`` over the Responses API.

    Each city the tool is called with is appended to ``asked``; ``agent_options`` go to ``Agent`` (an
    ``output_type``, ``model_settings``) and the run's result is returned. Tracing is off: nothing leaves
    the machine.
    """
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        asked.append(city)
        return f"It is 4 °C and cloudy in {city}."

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-mock-preview", max_retries=0)
        try:
            agent = Agent(
                name="weather",
                instructions="Answer weather questions with the get_weather tool.",
                tools=[get_weather],
                model=OpenAIResponsesModel(model=model, openai_client=client),
                **agent_options,
            )
            return await Runner.run(agent, ask, max_turns=4)
        finally:
            await client.close()

    return asyncio.run(run())
