"""The outermost layer: every reply gets an ``x-request-id``, and nothing leaks a traceback.

Pure ASGI rather than Starlette's ``BaseHTTPMiddleware``, which would buffer and
slow every streamed event.
"""

from __future__ import annotations

import logging

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockserver import errors
from mockserver.state import ServerState

logger = logging.getLogger("mockserver")

REQUEST_ID_HEADER = "x-request-id"


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, state: ServerState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.state.ids.request()
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            error = errors.InternalServerError()
            body = orjson.dumps(errors.error_body(error))
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": error.status_code,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": body})
