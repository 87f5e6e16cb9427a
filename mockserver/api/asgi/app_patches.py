"""The FastAPI app's methods replaced at run time, besides the one :func:`.direct_routes.serve_directly` replaces.

- ``build_middleware_stack`` (:func:`expose_connection_closer`): uvicorn's own ``send`` must be
  read before Starlette's outermost middleware wraps it, and Starlette offers no hook outside
  that middleware.
- ``openapi`` (:func:`document_bodies`): the routes parse their bodies themselves, so FastAPI
  cannot see them; the document is finished once, the first time it is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from mockserver.api.asgi import direct_routes
from mockserver.api.asgi.transport import connection_setup, release


def expose_connection_closer(app: FastAPI) -> None:
    """Run :func:`mockserver.api.asgi.transport.connection_setup` on every request first: a way to
    close the TCP connection under a reply (for the ``drop_after`` fault), the server's own
    ``send``, a direct body writer and the request's wait in the kernel, on ``scope["state"]``.

    They must be taken before Starlette's own outer middleware wraps ``send``, hence a wrapper
    around the whole middleware stack. The requests an :class:`~mockserver.api.asgi.direct_routes.App`
    serves directly skip that stack: they get the same, first.
    """
    build = app.build_middleware_stack
    setup = connection_setup(time.monotonic())  # the app is built: requests that came before waited for it

    def build_with_closer() -> ASGIApp:
        inner = build()

        async def outer(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            setup(scope, receive, send)
            try:
                await inner(scope, receive, send)
            finally:
                release(scope)

        return outer

    app.build_middleware_stack = build_with_closer  # type: ignore[method-assign]
    if isinstance(app, direct_routes.App):
        app.connection_setup = setup


def document_bodies(app: FastAPI, finish: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Make ``app``'s OpenAPI document ``finish(document)``, FastAPI's document corrected (with the
    bodies routes parse themselves, say), built once, the first time it is asked for."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = finish(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
