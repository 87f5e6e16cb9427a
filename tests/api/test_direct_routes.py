"""The inference routes served straight to their endpoints answer exactly as through FastAPI's stack.

Each case is sent to two apps built alike: the server as it is, and one with the direct dispatch
left out (every request through FastAPI's middleware and router). Status, body, headers and what
the observers recorded of the exchange must be the same; a spy shows which requests took the
direct path.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from mockserver import Settings, create_app
from mockserver.api import admitting
from mockserver.api.asgi import direct_routes
from mockserver.api.asgi.direct_routes import DirectRoutes
from mockserver.engine.pacing import FakeClock
from mockserver.service.exchange import Exchange

KEY = {"authorization": "Bearer sk-mock-preview"}
ANTHROPIC_KEY = {"x-api-key": "sk-mock-preview", "anthropic-version": "2023-06-01"}
CHAT = "/v1/chat/completions"
GOOD = {"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}]}
MESSAGE = {"model": "claude-opus-4-8", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
SERVED_DIRECTLY = {
    ("POST", "/v1/chat/completions"),
    ("POST", "/v1/responses"),
    ("POST", "/v1/responses/input_tokens"),
    ("POST", "/v1/messages"),
    ("POST", "/v1/embeddings"),
    ("POST", "/v1/moderations"),
}
# Headers that differ between two runs of the same request: the clock's.
VARYING = {"date", "openai-processing-ms", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"}


class Served:
    """One app under test, with the exchanges its observers saw and the requests the direct path took."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []
        app.state.mock.hooks.on_complete.append(self.exchanges.append)
        self.client = TestClient(app, raise_server_exceptions=False)

    def send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        reply = self.client.request(method, path, follow_redirects=False, **kwargs)
        exchange = self.exchanges[-1] if self.exchanges else None
        return {
            "status": reply.status_code,
            "body": reply.content,
            "headers": sorted((k, v) for k, v in reply.headers.items() if k not in VARYING),
            "exchange": None if exchange is None else _recorded(exchange),
        }


def _recorded(exchange: Exchange) -> dict[str, Any]:
    return {
        "request_id": exchange.request_id,
        "status": exchange.status,
        "route": exchange.route,
        "dialect": exchange.dialect.api,
        "refusal": exchange.refusal,
        "disconnected": exchange.disconnected,
        "model": exchange.model,
        "stream": exchange.stream,
    }


@pytest.fixture
def direct_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []
    run = DirectRoutes.__call__

    async def spy(self: DirectRoutes, scope: Scope, receive: Receive, send: Send) -> None:
        calls.append((scope["method"], scope["path"]))
        await run(self, scope, receive, send)

    monkeypatch.setattr(DirectRoutes, "__call__", spy)
    return calls


# Both apps read the same stopped clocks, so a second or a rate window turning over between the two
# requests of a pair can't make their replies differ (``created``, the rate-limit headers).
WALL_CLOCK_AT = 1_800_000_000.0


def _build(settings: Callable[[], Settings], monkeypatch: pytest.MonkeyPatch, *, direct: bool) -> FastAPI:
    clocks: dict[str, Any] = {"clock": FakeClock(), "wall_clock": lambda: WALL_CLOCK_AT}
    if direct:
        return create_app(settings(), **clocks)
    with monkeypatch.context() as patched:
        patched.setattr(direct_routes, "serve_directly", lambda app, routes: None)
        return create_app(settings(), **clocks)


@pytest.fixture
def pair(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, Served]]:
    def settings() -> Settings:
        return Settings(time_scale=0, seed=1, max_body_bytes=4096, log_level="warning")

    direct = Served(_build(settings, monkeypatch, direct=True))
    routed = Served(_build(settings, monkeypatch, direct=False))
    with direct.client, routed.client:
        yield direct, routed


def _same(pair: tuple[Served, Served], method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    direct, routed = pair
    ours, theirs = direct.send(method, path, **kwargs), routed.send(method, path, **kwargs)
    assert ours == theirs
    return ours


def test_the_inference_routes_are_served_directly(
    pair: tuple[Served, Served], direct_calls: list[tuple[str, str]]
) -> None:
    direct, _ = pair
    direct.send("POST", CHAT, json=GOOD, headers=KEY)
    direct.send("POST", "/v1/messages", json=MESSAGE, headers=ANTHROPIC_KEY)
    direct.send("POST", "/v1/messages/count_tokens", json=MESSAGE, headers=ANTHROPIC_KEY)  # returns a dict: routed
    direct.send("GET", "/v1/models", headers=KEY)
    assert direct_calls == [("POST", CHAT), ("POST", "/v1/messages")]
    # The route the journal and metrics name is the same either way.
    assert [e.route for e in direct.exchanges] == [CHAT, "/v1/messages", "/v1/messages/count_tokens", "/v1/models"]


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("POST", CHAT, {"json": GOOD, "headers": KEY}),
        ("POST", CHAT, {"json": {**GOOD, "stream": True}, "headers": KEY}),
        ("POST", CHAT, {"content": b"{not json", "headers": KEY}),
        ("POST", CHAT, {"json": {"messages": GOOD["messages"]}, "headers": KEY}),
        ("POST", CHAT, {"json": {**GOOD, "n": "two"}, "headers": KEY}),
        ("POST", CHAT, {"json": {**GOOD, "model": "no-such-model"}, "headers": KEY}),
        ("POST", CHAT, {"json": GOOD}),
        ("POST", CHAT, {"content": b"x" * 5000, "headers": KEY}),  # over max_body_bytes, declared
        ("GET", CHAT, {"headers": KEY}),
        ("HEAD", CHAT, {"headers": KEY}),
        ("OPTIONS", CHAT, {"headers": KEY}),
        ("DELETE", CHAT, {"headers": KEY}),
        ("POST", CHAT + "/", {"json": GOOD, "headers": KEY}),
        ("POST", "/chat/completions", {"json": GOOD, "headers": KEY}),
        ("POST", "/v1/nothing-here", {"json": GOOD, "headers": KEY}),
        ("POST", "/v1/responses", {"json": {"model": "gpt-5.6-sol", "input": "hi"}, "headers": KEY}),
        ("POST", "/v1/responses", {"json": {"model": "gpt-5.6-sol", "input": 3}, "headers": KEY}),
        ("POST", "/v1/responses/input_tokens", {"json": {"model": "gpt-5.6-sol", "input": "hi"}, "headers": KEY}),
        ("POST", "/v1/messages", {"json": MESSAGE, "headers": ANTHROPIC_KEY}),
        ("POST", "/v1/messages", {"json": {"model": "claude-opus-4-8"}, "headers": ANTHROPIC_KEY}),
        ("POST", "/v1/messages", {"json": MESSAGE}),
        ("GET", "/v1/messages", {"headers": ANTHROPIC_KEY}),
        ("POST", "/v1/embeddings", {"json": {"model": "text-embedding-3-small", "input": "hi"}, "headers": KEY}),
        ("POST", "/v1/embeddings", {"json": {"model": "text-embedding-3-small"}, "headers": KEY}),
        ("POST", "/v1/moderations", {"json": {"input": "hi"}, "headers": KEY}),
        ("POST", "/v1/moderations", {"json": {"input": 3}, "headers": KEY}),
    ],
)
def test_every_reply_is_the_same_as_through_fastapi(
    pair: tuple[Served, Served],
    direct_calls: list[tuple[str, str]],
    method: str,
    path: str,
    kwargs: dict[str, Any],
) -> None:
    _same(pair, method, path, **kwargs)
    # Only an exact method and path of an inference route takes the direct path (in the first app).
    expected = [(method, path)] if (method, path) in SERVED_DIRECTLY else []
    if len(kwargs.get("content", b"")) > 4096:
        expected = []  # refused by the request middleware before any route
    assert direct_calls == expected


def test_an_unexpected_error_in_an_endpoint_is_an_api_shaped_500_and_logged(
    pair: tuple[Served, Served], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in planning")

    monkeypatch.setattr(admitting, "admit", broken)
    with caplog.at_level(logging.ERROR, logger="mockserver"):
        reply = _same(pair, "POST", CHAT, json=GOOD, headers=KEY)
    assert reply["status"] == 500
    assert set(json.loads(reply["body"])["error"]) == {"message", "type", "param", "code"}
    logged = [r for r in caplog.records if r.getMessage() == f"unhandled error on POST {CHAT}"]
    assert len(logged) == 2 and all(r.exc_info and r.exc_info[0] is RuntimeError for r in logged)


def test_an_http_exception_in_an_endpoint_meets_the_apps_handler(
    pair: tuple[Served, Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuses(*args: object, **kwargs: object) -> object:
        raise HTTPException(status_code=418, detail="no tea here")

    monkeypatch.setattr(admitting, "admit", refuses)
    reply = _same(pair, "POST", CHAT, json=GOOD, headers=KEY)
    assert reply["status"] == 418
    assert json.loads(reply["body"])["error"]["message"] == "no tea here"


def test_a_client_leaving_while_its_body_is_read_is_a_499_in_the_journal(pair: tuple[Served, Served]) -> None:
    outcomes = [_leave_mid_body(served) for served in pair]
    assert outcomes[0] == outcomes[1]
    assert outcomes[0]["status"] == 499 and outcomes[0]["disconnected"] and outcomes[0]["route"] == CHAT


def _leave_mid_body(served: Served) -> dict[str, Any]:
    messages: list[Message] = [
        {"type": "http.request", "body": b'{"model": "gpt-5.6', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": CHAT,
        "raw_path": CHAT.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"mock"), (b"authorization", b"Bearer sk-mock-preview"), (b"content-length", b"999")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    served.client.portal.call(served.app, scope, receive, send)  # type: ignore[union-attr]
    assert sent == []  # nothing is sent to a client that left
    return _recorded(served.exchanges[-1])
