"""Messages are paced by the shared engine: fast mode at 150 tok/s, standard at 60, thinking before the text.

Checked on the injected fake clock, which jumps to each deadline, so no test sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockserver import MockServer
from mockserver.config.fixture import load_fixture
from mockserver.config.settings import Settings
from mockserver.engine.pacing import FakeClock
from mockserver.server.app import create_app
from tests.conftest import PREVIEW_KEY

HEADERS = {"x-api-key": PREVIEW_KEY, "anthropic-version": "2023-06-01", "x-mock-output-tokens": "300"}
BODY = {"model": "claude-opus-4-8", "max_tokens": 4000, "messages": [{"role": "user", "content": "Hello"}]}


@pytest.fixture(scope="module")
def paced() -> Iterator[tuple[MockServer, FakeClock]]:
    clock = FakeClock()
    fixture = load_fixture(presets=["claude-opus-4.8-fast", "claude-fable-5", "claude-fast-mode"])
    with MockServer(app=create_app(Settings(), fixture=fixture, clock=clock)) as server:
        yield server, clock


def elapsed(paced: tuple[MockServer, FakeClock], **changes: Any) -> float:
    server, clock = paced
    started = clock.now()
    stream = bool(changes.get("stream"))
    reply = httpx.post(f"{server.url}/v1/messages", json={**BODY, **changes}, headers=HEADERS)
    assert reply.status_code == 200, reply.text
    if not stream:
        assert reply.json()["usage"]["output_tokens"] >= 300
    return clock.now() - started


@pytest.mark.parametrize(
    ("changes", "seconds"),
    [
        ({"speed": "fast"}, 0.6 + 300 / 150),  # TTFT 600 ms, then 150 tok/s
        ({"speed": "standard"}, 1.5 + 300 / 60),
        ({}, 1.5 + 300 / 60),
        ({"model": "claude-fable-5"}, 1.2 + 300 / 68),
        ({"model": "claude-fast-mode"}, 1.0 + 300 / 45),
        ({"speed": "fast", "stream": True}, 0.6 + 300 / 150),
        # Thinking runs first at the same rate: 1024 thinking tokens, then 300 of text.
        ({"speed": "fast", "thinking": {"type": "enabled", "budget_tokens": 1024}}, 0.6 + 1324 / 150),
    ],
)
def test_reply_takes_ttft_plus_tokens_over_rate(
    paced: tuple[MockServer, FakeClock], changes: dict[str, Any], seconds: float
) -> None:
    assert elapsed(paced, **changes) == pytest.approx(seconds, abs=0.02)


def test_a_stream_the_server_ends_gets_an_anthropic_error_event_the_sdk_raises() -> None:
    import asyncio
    import threading

    import anthropic

    loops: list[asyncio.AbstractEventLoop] = []
    with MockServer(time_scale=1, presets=["claude-opus-4.8-fast"]) as server:
        server.state.hooks.on_response_start.append(lambda _: loops.append(asyncio.get_running_loop()) or {})
        client = anthropic.Anthropic(
            base_url=server.url, api_key=PREVIEW_KEY, max_retries=0, _strict_response_validation=True
        )
        started = threading.Event()
        with (
            pytest.raises(anthropic.APIStatusError) as caught,
            client.messages.stream(
                **BODY, speed="fast", extra_headers={"x-mock-ttft-ms": "0", "x-mock-output-tokens": "100000"}
            ) as stream,
        ):
            for event in stream:
                if event.type == "content_block_delta" and not started.is_set():
                    started.set()
                    loops[0].call_soon_threadsafe(server.state.streams.end_all)
        client.close()
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
