"""A clean stop: SIGTERM/SIGINT stop accepting, replies get a grace period, the rest end with an error event.

The servers here are real processes, signalled as ``docker stop`` or Ctrl-C would.
Timings are checked with a wide margin (the bound the product promises is grace + 1 s).
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from mockserver import MockServer
from tests.processes import ServerProcess

KEY = "sk-mock-preview"
LONG = 4000  # output tokens: ~75 s on the standard tier, far longer than any grace period here
CHAT = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": True}


class Reader:
    """Reads one SSE stream in a thread, keeping each line with the time it arrived."""

    def __init__(self, url: str, path: str, body: dict[str, Any], output_tokens: int = LONG) -> None:
        self.headers = {"authorization": f"Bearer {KEY}", "x-mock-output-tokens": str(output_tokens)}
        self.lines: list[tuple[float, str]] = []
        self.ended_at: float | None = None
        self.error: BaseException | None = None
        self.first = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url + path, body), daemon=True)
        self._thread.start()

    def _run(self, url: str, body: dict[str, Any]) -> None:
        try:
            with httpx.stream("POST", url, json=body, headers=self.headers, timeout=60) as response:
                for line in response.iter_lines():
                    if line:
                        self.lines.append((time.monotonic(), line))
                        self.first.set()
        except BaseException as exc:  # the test reports it
            self.error = exc
        finally:
            self.ended_at = time.monotonic()
            self.first.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the stream did not end"

    def data(self) -> list[Any]:
        return [json.loads(line[6:]) for _, line in self.lines if line.startswith("data: {")]


@pytest.fixture
def graceful() -> Iterator[ServerProcess]:
    with ServerProcess("--shutdown-grace", "1.5", "--log-level", "info") as server:
        yield server


def test_streams_left_after_the_grace_period_end_with_an_error_event(graceful: ServerProcess) -> None:
    chat = Reader(graceful.url, "/v1/chat/completions", CHAT)
    responses = Reader(graceful.url, "/v1/responses", {"model": "gpt-5.6-sol", "input": "hi", "stream": True})
    assert chat.first.wait(10) and responses.first.wait(10)
    time.sleep(0.3)
    signalled = time.monotonic()
    graceful.signal(signal.SIGTERM)
    assert graceful.wait(timeout=1.5 + 3) == 0
    exited = time.monotonic() - signalled
    chat.join(5)
    responses.join(5)

    assert chat.error is None and responses.error is None
    last_chat = chat.data()[-1]
    assert last_chat["error"]["code"] == "server_shutting_down"
    assert last_chat["error"]["type"] == "server_error"
    events = responses.data()
    assert events[-1]["type"] == "error" and events[-1]["code"] == "server_shutting_down"
    assert events[-1]["sequence_number"] == events[-2]["sequence_number"] + 1
    for reader in (chat, responses):
        assert reader.ended_at is not None
        assert 1.5 - 0.2 <= reader.ended_at - signalled <= 1.5 + 1  # streamed through the grace period
        assert any(at > signalled + 1.0 for at, _ in reader.lines[:-1])
    assert exited <= 1.5 + 1
    output = graceful.output()
    assert "Traceback" not in output
    assert "ending 2 reply(ies) still in flight" in output


def test_a_reply_that_ends_within_the_grace_period_completes() -> None:
    with ServerProcess("--shutdown-grace", "20") as server:
        reader = Reader(server.url, "/v1/chat/completions", CHAT, output_tokens=60)
        assert reader.first.wait(10)
        signalled = time.monotonic()
        server.signal(signal.SIGTERM)
        assert server.wait(timeout=10) == 0
        reader.join(5)
        assert reader.lines[-1][1] == "data: [DONE]"
        assert time.monotonic() - signalled < 5  # it stopped when the reply ended, not after 20 s
        assert "Traceback" not in server.output()


def test_new_connections_are_refused_while_stopping() -> None:
    with ServerProcess("--shutdown-grace", "20") as server:
        reader = Reader(server.url, "/v1/chat/completions", CHAT)
        assert reader.first.wait(10)
        server.signal(signal.SIGTERM)
        time.sleep(0.5)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.url}/health", timeout=2)
        server.signal(signal.SIGTERM)
        assert server.wait(timeout=5) == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_second_signal_stops_at_once(sig: signal.Signals) -> None:
    with ServerProcess("--shutdown-grace", "60") as server:
        reader = Reader(server.url, "/v1/chat/completions", CHAT)
        assert reader.first.wait(10)
        server.signal(sig)
        time.sleep(0.3)
        second = time.monotonic()
        server.signal(sig)
        assert server.wait(timeout=5) == 0
        assert time.monotonic() - second < 1.5
        reader.join(5)
        assert reader.data()[-1]["error"]["code"] == "server_shutting_down"
        assert "Traceback" not in server.output()


def test_the_sdk_sees_a_retryable_error_when_the_stream_is_ended() -> None:
    with ServerProcess("--shutdown-grace", "0.5") as server:
        client = openai.OpenAI(
            base_url=f"{server.url}/v1", api_key=KEY, max_retries=0, _strict_response_validation=True
        )
        stream = client.chat.completions.create(
            model="gpt-5.6-sol",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_headers={"x-mock-output-tokens": str(LONG)},
        )
        chunks = 0
        with pytest.raises(openai.APIError, match="shutting down"):
            for _ in stream:
                chunks += 1
                if chunks == 3:
                    server.signal(signal.SIGTERM)
        assert chunks > 3
        assert server.wait(timeout=5) == 0


# -- In process: ending replies gives their capacity slots back --------------------------------


def test_ending_replies_releases_their_ultrafast_slots_and_refuses_held_bodies_with_503() -> None:
    loops: list[asyncio.AbstractEventLoop] = []
    with MockServer(time_scale=1) as server:
        server.state.hooks.on_response_start.append(lambda _: loops.append(asyncio.get_running_loop()) or {})
        body = {"model": "gpt-5.6-sol", "service_tier": "ultrafast", "messages": [{"role": "user", "content": "hi"}]}
        stream = Reader(server.url, "/v1/chat/completions", {**body, "stream": True}, output_tokens=100_000)
        held: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: held.append(
                httpx.post(
                    f"{server.url}/v1/chat/completions",
                    json=body,
                    headers={"authorization": f"Bearer {KEY}", "x-mock-output-tokens": "100000"},
                    timeout=30,
                )
            )
        )
        thread.start()
        assert stream.first.wait(10)
        deadline = time.monotonic() + 5
        while server.run(server.state.store.in_flight("ultrafast")) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.run(server.state.store.in_flight("ultrafast")) == 2
        assert len(server.state.streams) == 1 and server.state.replies.active == 1

        loops[0].call_soon_threadsafe(server.state.streams.end_all)
        server.state.replies.end_all("shutdown")
        stream.join(5)
        thread.join(5)
        assert stream.data()[-1]["error"]["code"] == "server_shutting_down"
        assert held[0].status_code == 503
        assert held[0].json()["error"]["code"] == "server_shutting_down"
        assert server.run(server.state.store.in_flight("ultrafast")) == 0
        assert len(server.state.streams) == 0 and server.state.replies.active == 0
        # not complete, so nothing was billed
        assert server.run(server.state.store.usage()) == []
