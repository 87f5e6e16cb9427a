"""``create_app()``: the FastAPI application, with every error rendered in OpenAI's shape."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from mockserver import errors
from mockserver.api import base_url, health, metrics
from mockserver.api import openapi as openapi_doc
from mockserver.api.anthropic import family
from mockserver.api.anthropic import models as anthropic_models
from mockserver.api.anthropic import routes as anthropic_messages
from mockserver.api.asgi import app_patches, direct_routes
from mockserver.api.control import routes as control
from mockserver.api.control import stats, ui, usage
from mockserver.api.handler_inputs import body_schemas
from mockserver.api.middleware import RequestContextMiddleware
from mockserver.api.openai import models
from mockserver.api.openai.chat import routes as chat
from mockserver.api.openai.embeddings import routes as embeddings
from mockserver.api.openai.moderations import routes as moderations
from mockserver.api.openai.responses import routes as responses
from mockserver.config.fixture import Fixture, load_fixture
from mockserver.config.rates import apply_rates
from mockserver.config.settings import Settings
from mockserver.engine.pacing import Clock, MonotonicClock
from mockserver.errors import validation
from mockserver.harness.masking import mask_access_log
from mockserver.harness.replay import options as replay
from mockserver.server_state import ServerState
from mockserver.service import ledger
from mockserver.service.reply_headers import anthropic_headers, openai_headers
from mockserver.state import shared
from mockserver.state.store import MemoryStore, Store
from mockserver.version import __version__

DESCRIPTION = (
    "An OpenAI-compatible fake inference server for offline tests: models, Chat Completions "
    "and service tiers (standard, fast, flex, Ultrafast) paced at their real speeds."
)

# The routers of the requests that come by the hundred: matched first, and served directly.
INFERENCE_ROUTERS = (chat.router, responses.router, anthropic_messages.router, embeddings.router, moderations.router)


def create_app(
    settings: Settings | None = None,
    *,
    fixture: Fixture | None = None,
    clock: Clock | None = None,
    wall_clock: Callable[[], float] = time.time,
) -> FastAPI:
    """Build the server. ``fixture`` defaults to ``settings.config`` or the built-in fixture."""
    settings = settings or Settings()
    settings.check_control_plane()
    if fixture is None:
        fixture = load_fixture(settings.config, settings.presets)
    fixture = apply_rates(fixture, settings.rates)  # --rate / MOCKSERVER_RATES, under a model's own profiles
    fixture = replay.fixture_with(fixture, settings)  # every cassette replayed is loaded and checked here
    where = shared.Shared.from_url(settings.state) if shared.is_shared(settings.state) else None
    state = ServerState(
        settings=settings,
        fixture=fixture,
        clock=clock or MonotonicClock(),
        wall_clock=wall_clock,
        store=_store(where),
        shared=where,
    )

    mask_access_log()  # keys in query strings (GET /_mock/usage?key=...) never reach the log
    app = direct_routes.App(title="mockserver", version=__version__, description=DESCRIPTION)
    app.mock_state = state  # what requests read (mockserver.api.handler_inputs.server_state)
    app.state.mock = state  # the same, for the CLI and the test harness
    _include_routes(app)
    _add_observers(state)
    _add_error_handlers(app)
    app.add_middleware(RequestContextMiddleware, state=state, classify=family.classify)
    # The requests that come by the hundred skip FastAPI's own layers and router (see direct_routes).
    direct_routes.serve_directly(app, [route for router in INFERENCE_ROUTERS for route in router.routes])
    app_patches.expose_connection_closer(app)
    app_patches.document_bodies(app, lambda document: openapi_doc.finish(document, body_schemas()))
    return app


def _include_routes(app: FastAPI) -> None:
    """Every route, in the order they are matched: one router after another, the inference routes first,
    so the requests that come by the hundred are matched without trying the others."""
    for router in INFERENCE_ROUTERS:
        app.include_router(router)
    # Anthropic's /v1/models answers only requests with Anthropic's headers, so it goes before OpenAI's.
    for router in (anthropic_models.router, models.router, health.router, metrics.router):
        app.include_router(router)
    for router in (usage.router, control.router, stats.router, ui.router):
        app.include_router(router)


def _add_observers(state: ServerState) -> None:
    """What sees every reply: its headers (OpenAI's, Anthropic's, the journal's), then, once it is over,
    the ledger, the journal and the metrics; and the dashboard's poster, with several processes."""
    state.hooks.on_response_start.append(openai_headers(state.store, state.clock, lambda: state.fixture))
    state.hooks.on_response_start.append(
        anthropic_headers(state.store, state.clock, lambda: state.fixture, state.wall_clock)
    )
    state.hooks.on_response_start.append(state.journal.on_response_start)
    state.hooks.on_complete.append(ledger.recorder(state.store, lambda: state.fixture))
    state.hooks.on_complete.append(state.journal.on_complete)
    state.hooks.on_complete.append(state.metrics.on_complete)
    if state.live_board is not None:  # several processes: each posts its streams while a dashboard is open
        state.hooks.on_response_start.append(_board_starter(state))


def _add_error_handlers(app: FastAPI) -> None:
    """Every error rendered in the shape of the API the request speaks: the server's own, FastAPI's
    validation errors, and Starlette's HTTP errors (an unknown route, a method not allowed)."""

    @app.exception_handler(errors.MockAPIError)
    async def api_error(request: Request, exc: errors.MockAPIError) -> JSONResponse:
        return render_for(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return render_for(request, validation.to_api_error(exc.errors()))

    missing_v1 = base_url.MissingV1()

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 405:
            return render_for(request, errors.method_not_allowed(request.method, request.url.path))
        if exc.status_code == 404:
            missing_v1.warn(request.method, request.url.path, str(request.base_url))
            return render_for(request, errors.unknown_route(request.method, request.url.path))
        error = errors.MockAPIError(str(exc.detail), type="invalid_request_error")
        error.status_code = exc.status_code
        return render_for(request, error)


def _board_starter(state: ServerState) -> Callable[[object], tuple[()]]:
    """A hook that starts posting this process's streams for the dashboard on the first reply it serves."""
    board = state.live_board

    def start(_: object) -> tuple[()]:
        if board is not None:
            board.start(state.live_post, lambda: state.streams.stopping)
        return ()

    return start


def _store(where: shared.Shared | None) -> Store:
    """The in-memory store, or the Redis one that every worker and replica on ``where`` shares."""
    if where is None:
        return MemoryStore()
    from mockserver.state.redis import RedisStore  # imports the Redis client: only with --state redis://

    return RedisStore(where.connection, where.url, prefix=where.prefix)


class UvicornServer(uvicorn.Server):
    """uvicorn's server, which first ends the replies being held and the streams in flight when it stops.

    uvicorn stops by waiting for every open request to finish; a non-streaming reply
    held for a long schedule would keep the process alive that long. Ending them first
    (they answer 503 ``server_shutting_down``; a stream ends with that error event) lets
    ``MockServer.stop()`` return promptly. ``mockserver serve`` runs
    :class:`mockserver.server.process.GracefulServer`, which gives them a grace period first.
    """

    def __init__(self, config: uvicorn.Config, state: ServerState) -> None:
        super().__init__(config)
        self.mock_state = state
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop serving requests, once started

    async def startup(self, sockets: list[Any] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        self.mock_state.replies.end_all("shutdown")
        self.mock_state.streams.end_all()
        await super().shutdown(sockets)
        await self.mock_state.close()


def render_for(request: Request, error: errors.MockAPIError) -> JSONResponse:
    """An error in the shape of the API the request speaks (its exchange's dialect: OpenAI's or Anthropic's)."""
    exchange = request.scope.get("state", {}).get("exchange")
    if exchange is None:
        return render(error)
    status, body = exchange.refuse(error)
    return JSONResponse(body, status_code=status, headers=error.headers)


def render(error: errors.MockAPIError, status: int | None = None) -> JSONResponse:
    """The one path from an error to a reply."""
    return JSONResponse(errors.error_body(error), status_code=status or error.status_code, headers=error.headers)
