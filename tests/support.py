"""Helpers for the account, capacity and ledger tests: fixtures with extra keys, and a record of attempts."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai

from mockserver import MockServer
from mockserver.config.fixture import Fixture, load_fixture
from mockserver.service.exchange import Exchange

MESSAGES = [{"role": "user", "content": "Write a haiku about speed."}]


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
    kwargs.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.base_url, api_key=key, _strict_response_validation=True, **kwargs)


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
