"""``/_mock/ui``: the dashboard, its live updates (``/_mock/events``) and its speed check.

The page and its files are static (:mod:`.pages`); what it shows comes over one SSE connection
(:mod:`.feed`); its controls send ``PATCH /_mock/config`` and ``POST /_mock/reset`` like any
client. Off loopback (an admin token configured), the page asks for the token once
(``POST /_mock/ui/sign-in``) and keeps a digest of it in an ``HttpOnly``, ``SameSite=Strict``
cookie, which :mod:`mockserver.api.guard` accepts in place of the token.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mockserver import errors
from mockserver.api import guard
from mockserver.api.control import feed, pages
from mockserver.api.handler_inputs import server_state
from mockserver.harness.journal import JournalQuery
from mockserver.harness.live import speed_check

# Not in the OpenAPI document: these serve a page and its endless feed, not an API for clients
# (docs/dashboard.md describes them).
router = APIRouter(prefix="/_mock", tags=["dashboard"], include_in_schema=False)

COOKIE_MAX_AGE_S = 7 * 24 * 3600
MAX_SIGN_IN_BYTES = 4096


@router.get("/ui", summary="The dashboard (HTML)", response_class=Response)
async def page(request: Request) -> Response:
    if not guard.signed_in(dict(request.headers), server_state(request).settings.admin_token):
        return Response(pages.sign_in(), status_code=401, media_type="text/html", headers=pages.HEADERS)
    return Response(pages.read("index.html"), media_type="text/html", headers=pages.HEADERS)


@router.post("/ui/sign-in", summary="Sign the dashboard in with the admin token (a form)", response_class=Response)
async def sign_in(request: Request) -> Response:
    token = server_state(request).settings.admin_token
    raw = await request.body()
    given = parse_qs(raw[:MAX_SIGN_IN_BYTES].decode("utf-8", "replace")).get("token", [""])[0]
    if token is not None and not guard.token_matches(given, token):
        message = "That is not this server's admin token."
        return Response(pages.sign_in(message), status_code=401, media_type="text/html", headers=pages.HEADERS)
    reply = RedirectResponse("/_mock/ui", status_code=303, headers=pages.HEADERS)
    if token is not None:
        reply.set_cookie(
            guard.ADMIN_COOKIE,
            guard.cookie_value(token),
            max_age=COOKIE_MAX_AGE_S,
            path="/_mock/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
    return reply


@router.get("/ui/{name}", summary="A file of the dashboard", response_class=Response)
async def asset(name: str) -> Response:
    if name not in pages.ASSETS:
        raise errors.NotFoundError(f"The dashboard has no file named '{name}'.", code="not_found")
    return Response(pages.read(name), media_type=pages.ASSETS[name], headers=pages.HEADERS)


@router.get("/ui/requests/{seq}", summary="One journal entry in full, keys masked")
async def journal_entry(request: Request, seq: int) -> JSONResponse:
    state = server_state(request)
    keys = [a.key for a in state.fixture.accounts]
    for shown in await state.journal.read(JournalQuery(since=max(0, seq - 1)), keys):
        if shown.data["seq"] == seq:
            return JSONResponse(shown.data, headers=pages.HEADERS)
    raise errors.NotFoundError(f"The journal holds no entry {seq} (any more).", code="not_found")


@router.get("/events", summary="The dashboard's live updates (text/event-stream)", response_class=StreamingResponse)
async def events(request: Request) -> StreamingResponse:
    state = server_state(request)
    connections = connections_of(request)
    if not connections.take():
        raise errors.RateLimitError(
            f"At most {connections.limit} dashboards may be connected at once.", code="too_many_dashboards"
        )
    headers = {**pages.HEADERS, "x-accel-buffering": "no"}
    return FeedResponse(feed.events(state, connections), connections, headers=headers)


@router.post("/speed-check", summary="Start the speed check: one request per tier, measured as a client does")
async def start_speed_check(request: Request) -> JSONResponse:
    state = server_state(request)
    if state.speed_check.running:
        raise errors.speed_check_running(speed_check.GENERATION_S)
    if not state.speed_check.start(state.fixture, _own_url(request), state.settings.time_scale):
        raise errors.nothing_to_speed_check()
    shown: dict[str, Any] | None = state.speed_check.shown()
    return JSONResponse(shown, status_code=202)


class FeedResponse(StreamingResponse):
    """The feed's reply, which gives its connection's place back however it ends (even unstarted)."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncIterator[bytes], connections: feed.Connections, headers: dict[str, str]) -> None:
        super().__init__(body, headers=headers)
        self.connections = connections

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.connections.give_back()


def connections_of(request: Request) -> feed.Connections:
    """The dashboards connected to this process (created with the first)."""
    connections: feed.Connections | None = getattr(request.app.state, "dashboards", None)
    if connections is None:
        connections = request.app.state.dashboards = feed.Connections()
    return connections


def _own_url(request: Request) -> str:
    """The address this request came in on, as a client on this machine reaches it."""
    host, port = request.scope.get("server") or ("127.0.0.1", 80)
    if host in ("0.0.0.0", "", None):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
