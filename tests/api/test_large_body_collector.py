"""A request with a body past a MiB holds the garbage collector's passes off only until it is planned
(before its reply starts) or refused (once the error is sent), whatever the API."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mockserver import MockServer
from mockserver.api import serving
from mockserver.api.asgi.collector import COLLECTOR, Collector
from mockserver.api.asgi.large_bodies import LARGE_BODY_BYTES

KEY = "sk-mock-preview"
HEADERS = {"authorization": f"Bearer {KEY}", "x-api-key": KEY, "anthropic-version": "2023-06-01"}


def conversation(messages: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"Line {n} of the log."} for n in range(messages)
    ] + [{"role": "user", "content": "Sum it up."}]


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(time_scale=0, presets=["openai", "claude-opus-4.8-fast"]) as running:
        yield running


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/chat/completions", {"model": "gpt-5.6-sol", "messages": conversation(30_000)}, 200),
        ("/v1/chat/completions", {"model": "gpt-5.6-sol", "messages": conversation(60_000)}, 400),  # past the window
        ("/v1/chat/completions", {"model": "gpt-5.6-sol", "messages": conversation(30_000), "stream": "yes"}, 400),
        ("/v1/responses", {"model": "gpt-5.6-sol", "input": conversation(30_000)}, 200),
        ("/v1/messages", {"model": "claude-opus-4-8", "max_tokens": 8, "messages": conversation(12_000)}, 200),
    ],
)
def test_the_passes_are_on_again_once_the_reply_starts(
    server: MockServer, monkeypatch: pytest.MonkeyPatch, path: str, body: dict[str, Any], status: int
) -> None:
    holds: list[bool] = []  # whether the passes were on when each hold was asked for

    def hold() -> Callable[[], None]:
        holds.append(gc.isenabled())
        return Collector.hold(COLLECTOR)

    monkeypatch.setattr(COLLECTOR, "hold", hold)
    content = json.dumps(body, indent=8).encode()  # past a MiB, with a prompt that fits every window
    assert len(content) > LARGE_BODY_BYTES
    headers = {"content-type": "application/json"}
    with (
        httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as client,
        client.stream("POST", path, content=content, headers=headers) as reply,
    ):
        assert reply.status_code == status
        if status == 200:
            assert gc.isenabled()  # let go once planned, before the reply started
        reply.read()
    assert holds == [True]  # the body was held for, once
    # A refusal lets go once its error is sent and its traceback dropped, just after the reply went out.
    deadline = time.monotonic() + 5
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.isenabled()


def test_a_reply_held_or_queued_after_planning_holds_nothing(
    server: MockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A non-streaming reply is held until its schedule ends (a capacity queue may hold it before that):
    the passes come back once it is planned, not when it is answered."""
    on_at_respond: list[bool] = []
    respond = serving.respond

    async def watched(*args: Any, **kwargs: Any) -> Any:
        on_at_respond.append(gc.isenabled())
        return await respond(*args, **kwargs)

    monkeypatch.setattr(serving, "respond", watched)
    body = {"model": "gpt-5.6-sol", "messages": conversation(30_000), "max_completion_tokens": 4}
    content = json.dumps(body, indent=8).encode()
    with httpx.Client(base_url=server.url, headers=HEADERS, timeout=60) as client:
        reply = client.post("/v1/chat/completions", content=content, headers={"content-type": "application/json"})
    assert reply.status_code == 200
    assert on_at_respond == [True]
