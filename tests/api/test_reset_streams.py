"""``POST /_mock/reset`` ends the streams still open, each with the ``server_reset`` error event of its
API (as it ends held non-streaming replies with a 503 ``server_reset``), and gives back their slots."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import anthropic
import httpx
import openai
import pytest

from mockserver import MockServer
from mockserver.service import capacity
from tests.support import MESSAGES, sdk

SLOW = {"x-mock-tokens-per-second": "2"}  # a reply that would take minutes
WAIT_S = 5.0


@pytest.fixture
def real_time() -> Iterator[MockServer]:
    with MockServer(time_scale=1, seed=3) as running:
        yield running


def _wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def _reset_while(server: MockServer, consume: Callable[[], None]) -> BaseException:
    """Run ``consume`` (reading a stream) in a thread, reset once its stream is open, and return
    what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            consume()
        except BaseException as exc:
            raised.append(exc)

    reader = threading.Thread(target=run)
    reader.start()
    assert _wait_until(lambda: len(server.state.streams.active) == 1), "the stream never opened"
    started = time.monotonic()
    assert httpx.post(f"{server.url}/_mock/reset").status_code == 200
    reader.join(WAIT_S)
    assert not reader.is_alive() and time.monotonic() - started < WAIT_S, "the stream outlived the reset"
    assert not server.state.streams.active
    assert len(raised) == 1, "the stream ended without an error"
    return raised[0]


def test_reset_ends_an_open_chat_stream_with_the_reset_error(real_time: MockServer) -> None:
    def consume() -> None:
        with sdk(real_time, default_headers=SLOW) as client:
            for _ in client.chat.completions.create(
                model="gpt-5.6-sol", messages=MESSAGES, stream=True, service_tier="ultrafast"
            ):
                pass

    error = _reset_while(real_time, consume)
    assert isinstance(error, openai.APIError), repr(error)
    assert error.code == "server_reset"
    assert "reset" in error.message
    assert _wait_until(lambda: real_time.run(real_time.state.store.in_flight(capacity.SERVER_POOL)) == 0)


def test_reset_ends_an_open_responses_stream_with_the_reset_error_event(real_time: MockServer) -> None:
    events: list[str] = []

    def consume() -> None:
        with sdk(real_time, default_headers=SLOW) as client:
            for event in client.responses.create(model="gpt-5.6-sol", input="Write a haiku.", stream=True):
                events.append(event.type)
                if event.type == "error":
                    assert event.code == "server_reset"
                    raise RuntimeError("server_reset")

    error = _reset_while(real_time, consume)
    assert str(error) == "server_reset", repr(error)
    assert events[-1] == "error"


def test_reset_ends_an_open_anthropic_stream_with_an_error_event() -> None:
    with MockServer(time_scale=1, seed=3, presets=["openai", "claude-opus-4.8-fast"]) as claude_server:
        _reset_anthropic_stream(claude_server)


def _reset_anthropic_stream(real_time: MockServer) -> None:
    def consume() -> None:
        with (
            anthropic.Anthropic(
                base_url=real_time.url,
                api_key="sk-mock-preview",
                max_retries=0,
                default_headers=SLOW,
                _strict_response_validation=True,
            ) as client,
            client.messages.stream(
                model="claude-opus-4-8", max_tokens=500, messages=[{"role": "user", "content": "Hi"}]
            ) as stream,
        ):
            for _ in stream:
                pass

    error = _reset_while(real_time, consume)
    assert isinstance(error, anthropic.APIStatusError), repr(error)
    assert "reset" in str(error)
