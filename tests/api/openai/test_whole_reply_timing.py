"""An embeddings or moderations reply is held for the model's TTFT plus its input read at the model's
prefill rate, on a fake clock (the real clock's figures are the benchmarks')."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app


@pytest.fixture
def paced() -> Iterator[MockServer]:
    clock = FakeClock()
    settings = Settings(time_scale=1, seed=2, port=0)
    with MockServer(settings, app=create_app(settings, clock=clock)) as server:
        yield server


@pytest.mark.parametrize(
    ("model", "tokens", "held_ms"),
    [
        ("text-embedding-3-small", 1, 100 + 1 / 100_000 * 1000),
        ("text-embedding-3-small", 5000, 100 + 5000 / 100_000 * 1000),
        ("text-embedding-3-large", 6000, 150 + 6000 / 60_000 * 1000),
    ],
)
def test_an_embedding_is_held_for_ttft_plus_its_input(
    paced: MockServer, model: str, tokens: int, held_ms: float
) -> None:
    reply = httpx.post(
        f"{paced.url}/v1/embeddings",
        headers={"authorization": "Bearer sk-mock-preview"},
        json={"model": model, "input": [[42] * tokens]},
    )
    assert reply.status_code == 200
    (call,) = paced.requests
    assert call.duration_ms == pytest.approx(held_ms, abs=0.2)


def test_the_ttft_header_sets_the_wait(paced: MockServer) -> None:
    httpx.post(
        f"{paced.url}/v1/moderations",
        headers={"authorization": "Bearer sk-mock-preview", "x-mock-ttft-ms": "700"},
        json={"input": "hello"},
    )
    (call,) = paced.requests
    assert call.duration_ms == pytest.approx(700, abs=0.2)  # exactly the header's, input or not
