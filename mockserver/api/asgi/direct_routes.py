"""The inference routes, served without FastAPI's route machinery.

Why this exists: a burst of streaming requests waits, request after request, for the server's
CPU before each stream opens, and about a third of that CPU went to layers that do nothing for
these routes: Starlette's and FastAPI's own middleware (the outermost error handler, telemetry,
a body limit we do not set, the exception middleware, an exit stack), the router trying one
route after another, and FastAPI's dependency solver, which for an endpoint that takes only the
``Request`` has nothing to solve.

What it does: a request whose method and path are exactly those of one of the routes it serves
(``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages``, ...) goes from the app
straight to the middleware the app added itself (:class:`~mockserver.api.middleware.RequestContextMiddleware`:
exchange, ``x-request-id``, reply headers, journal, metrics, body limit, guard) and then to its
endpoint. Everything else (another method, which answers 405; ``HEAD``; a trailing slash; a
path without ``/v1``; an unknown path; a server mounted under a root path) takes the full
FastAPI stack, as before.

Nothing a client sees changes. The routes stay registered with FastAPI, so the OpenAPI
document is the same. An exception from the endpoint meets the same handlers, found the same
way, as FastAPI's exception middleware would find them (a ``MockAPIError`` is rendered in the
API's shape by the app's handler); one no handler takes goes up to the middleware, which logs it
and answers a 500 in the API's shape, as it always did.

A route is served here only when its method and path alone choose it, its endpoint is a
coroutine taking the ``Request`` and nothing else (no parameters, no dependencies, nothing for
FastAPI to solve), and it returns a ``Response`` (nothing to serialize). The Anthropic Messages
routes match only requests labelled Anthropic; every request to ``/v1/messages`` is
(:func:`mockserver.api.anthropic.family.classify` labels it by its path).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from mockserver.api.asgi import transport
from mockserver.api.asgi.large_bodies import let_collector_go
from mockserver.server_state import ServerState

ExceptionHandler = Callable[[Request, Exception], Any]


class App(FastAPI):
    """FastAPI, whose own ``__call__`` the requests of the routes served directly skip as well: it asks
    OpenTelemetry, on every request, whether a tracer, a meter or a logger is configured (about 3 µs).
    Once the app's stack is built (at the first request), they go straight to the app's own middleware
    over :class:`DirectRoutes`, after :attr:`connection_setup`; every other request takes Starlette's
    ``__call__``, which builds the stack the first time.

    It also holds the running server's state as a typed attribute, :attr:`mock_state`, which every
    request reads (:func:`mockserver.api.handler_inputs.server_state`): ``app.state.mock`` holds the same
    object, but reaches it through Starlette's ``State.__getattr__`` after the ordinary lookup fails.
    """

    mock_state: ServerState  # the running server's state, also at ``app.state.mock``: set by create_app
    served_directly: frozenset[tuple[str, str]] = frozenset()  # (method, path): set by serve_directly
    direct_app: ASGIApp | None = None  # the app's own middleware over DirectRoutes: set when the stack is built
    # What the outermost layer puts in the scope of every request (see app_patches.expose_connection_closer).
    connection_setup: Callable[[Scope, Receive, Send], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        direct = self.direct_app
        if (
            direct is not None
            and scope["type"] == "http"
            and (scope["method"], scope["path"]) in self.served_directly
            and not self.root_path
            and not scope.get("root_path")
        ):
            scope["app"] = self
            if self.connection_setup is None:
                await direct(scope, receive, send)
                return
            self.connection_setup(scope, receive, send)
            try:
                await direct(scope, receive, send)
            finally:
                transport.release(scope)
        else:
            await super().__call__(scope, receive, send)


def serve_directly(app: App, routes: Iterable[BaseRoute]) -> None:
    """Serve the routes of ``routes`` that qualify (see :func:`qualifies`) directly, inside the app's
    own middleware; every other request goes through the app's full stack.

    Call it after the app's middleware and exception handlers are added; the dispatch is built
    with the app's middleware stack, when the first request comes.
    """
    served = [route for route in routes if isinstance(route, APIRoute) and qualifies(route)]
    build = app.build_middleware_stack

    def build_with_direct_routes() -> ASGIApp:
        stack = build()
        direct = DirectRoutes(served, app.exception_handlers, app.router)
        inner: ASGIApp = direct
        for cls, args, kwargs in reversed(app.user_middleware):
            inner = cls(inner, *args, **kwargs)
        table = direct.routes
        app.direct_app = inner

        async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and (scope["method"], scope["path"]) in table and not scope.get("root_path"):
                await inner(scope, receive, send)
            else:
                await stack(scope, receive, send)

        return dispatch

    app.build_middleware_stack = build_with_direct_routes  # type: ignore[method-assign]
    app.served_directly = frozenset((method, route.path) for route in served for method in route.methods or ())


def qualifies(route: APIRoute) -> bool:
    """Whether ``route`` can be served without FastAPI's machinery: its method and path alone choose
    it, and its endpoint is a coroutine that takes the ``Request`` alone and returns a ``Response``."""
    dependant = route.dependant
    parameters = inspect.signature(route.endpoint).parameters
    returns = typing.get_type_hints(route.endpoint).get("return")
    methods = route.methods or set()
    return (
        "{" not in route.path
        and bool(methods)
        and "GET" not in methods  # a GET route answers HEAD as well: left to the router
        and inspect.iscoroutinefunction(route.endpoint)
        and list(parameters) == [dependant.request_param_name]
        and not dependant.dependencies
        and route.response_model is None
        and isinstance(returns, type)
        and issubclass(returns, Response)
    )


class DirectRoutes:
    """The ASGI app that runs the endpoint of the route a request's method and path name exactly,
    as FastAPI would: the same scope keys, the same exception handlers, found by Starlette's own
    lookup, as ``wrap_app_handling_exceptions`` (which FastAPI's routes use) finds them."""

    def __init__(self, routes: Iterable[APIRoute], handlers: Mapping[Any, ExceptionHandler], router: Any) -> None:
        self.routes: dict[tuple[str, str], APIRoute] = {
            (method, route.path): route for route in routes for method in route.methods or ()
        }
        self.router = router
        # As Starlette's exception middleware holds them: the handler of every exception class, and of
        # HTTP statuses (500 and ``Exception`` belong to the outermost error middleware, which never sees
        # these routes' errors: the request middleware answers them).
        self.exception_handlers = (
            {key: h for key, h in handlers.items() if isinstance(key, type) and key is not Exception},
            {key: h for key, h in handlers.items() if isinstance(key, int) and key != 500},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self.routes[(scope["method"], scope["path"])]
        # What the router and the exception middleware would have put in the scope; the journal reads
        # the route's path.
        scope["route"] = route
        scope["endpoint"] = route.endpoint
        scope["path_params"] = {}
        scope.setdefault("router", self.router)
        scope["starlette.exception_handlers"] = self.exception_handlers
        request = Request(scope, receive, send)
        try:
            response: Response = await route.endpoint(request)
        except Exception as exc:
            await self._handle(exc, request, scope, receive, send)
            return  # refused: a large body's objects are freed a piece at a time once the reply is over
        let_collector_go(scope["state"]["exchange"])  # planned: the collector's passes a large body held off come back
        # The request and the response are let go of while the reply goes out (the response keeps what it
        # needs): a stream's reply lasts as long as the stream, and each is an object per open stream for
        # the garbage collector's passes to walk. A failing reply's handler gets a request of its own.
        replying = response(scope, receive, send)
        del request, response
        try:
            await replying
        except Exception as exc:
            await self._handle(exc, Request(scope, receive, send), scope, receive, send)

    async def _handle(self, exc: Exception, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        """What Starlette's ``wrap_app_handling_exceptions`` does with an exception, without wrapping ``send``
        on every request to learn whether the reply started: the middleware outside has the exchange's
        status from then on (these routes always run inside it)."""
        statuses, classes = self.exception_handlers[1], self.exception_handlers[0]
        handler = statuses.get(exc.status_code) if isinstance(exc, HTTPException) else None
        if handler is None:  # the handler of the exception's class, or of the nearest base class that has one
            handler = next((classes[cls] for cls in type(exc).__mro__ if cls in classes), None)
        if handler is None:
            raise exc
        exchange = scope.get("state", {}).get("exchange")
        if exchange is None or exchange.status is not None:
            raise RuntimeError("Caught handled exception, but response already started.") from exc
        if inspect.iscoroutinefunction(handler):
            response = await handler(request, exc)
        else:
            response = await run_in_threadpool(handler, request, exc)
        if response is not None:
            await response(scope, receive, send)
        exc.__traceback__ = None  # as Starlette does: reused exception instances would pile up tracebacks
