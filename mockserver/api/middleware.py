"""The outermost layer: every request gets an :class:`~mockserver.service.exchange.Exchange` and an
``x-request-id``, observers see every reply, and nothing leaks a traceback.

The exchange is labelled with the caller's account as soon as the key is known (so even
an error reply carries ``openai-organization`` and the key's rate-limit headers), the raw
request body is kept on it as the app reads it. When the exchange closes, any capacity
slot still held is given back before the observers run.

Pure ASGI rather than Starlette's ``BaseHTTPMiddleware``, which would buffer and
slow every streamed event.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping

import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockserver import errors
from mockserver.api import arrival, direct_routes, guard, large_bodies
from mockserver.engine.dialects import Dialect
from mockserver.server_state import ServerState
from mockserver.service import accounts
from mockserver.service.exchange import Exchange
from mockserver.service.inflight import CLIENT_CLOSED_STATUS

logger = logging.getLogger("mockserver")

REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID_HEADER_BYTES = REQUEST_ID_HEADER.encode()
# Answered from this process alone, even while a shared store is unreachable: the liveness probe, the
# readiness probe (which asks the store itself) and this worker's metrics.
LOCAL_PATHS = ("/health", "/ready", "/metrics")


def exchange_of(scope: Scope) -> Exchange:
    exchange: Exchange = scope["state"]["exchange"]
    return exchange


def request_headers(scope: Scope) -> Mapping[str, str]:
    """The request's headers by name, as the routes and the journal see them (see :func:`_first_of_each`).

    Decoded once, when the request arrives; Starlette's ``request.headers`` decodes the raw list
    again on every lookup, and a request's admission looks up a dozen headers.
    """
    return exchange_of(scope).headers


# The dialect a request speaks, from its path and headers (the app passes the families' rule).
Classifier = Callable[[str, Mapping[str, str]], Dialect]


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, state: ServerState, classify: Classifier | None = None) -> None:
        self.app = app
        self.state = state
        self.classify = classify

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = self.state
        headers = _first_of_each(scope["headers"])
        exchange = Exchange(
            request_id=state.ids.request(),
            method=scope["method"],
            path=scope["path"],
            headers=headers,
            started_at=arrival.arrival_time(scope, state.clock),  # when it arrived, not when its task ran
        )
        scope.setdefault("state", {})["exchange"] = exchange
        if self.classify is not None:
            exchange.dialect = self.classify(exchange.path, headers)
        unreachable: errors.MockAPIError | None = None
        # Only a process that shares its configuration with others has anything to catch up with.
        if state.config_log is not None and not exchange.path.startswith(LOCAL_PATHS):
            try:
                await state.follow_config()  # a PATCH another worker or replica took is in force here too
            except errors.MockAPIError as exc:
                unreachable = exc
        exchange.account = accounts.identify(state.fixture, exchange.headers)
        started = finished = False
        received = bytearray()
        limit = state.settings.max_body_bytes

        async def receive_and_keep() -> Message:
            # Keep the raw body, so the journal shows what a request refused before parsing sent.
            message = await receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if len(received) + len(chunk) > limit:
                    # A body sent without Content-Length (chunked) is counted as it arrives.
                    received.clear()
                    raise errors.body_too_large(limit)
                received.extend(chunk)
                if not message.get("more_body", False):
                    exchange.request_body = bytes(received)
            return message

        def finish() -> Awaitable[None] | None:
            # The observers' work to await, if any of them has some (a shared store's write).
            nonlocal finished
            if finished:
                return None
            finished = True
            exchange.finished_at = state.clock.now()
            exchange.route = getattr(scope.get("route"), "path", None)
            return state.hooks.complete(exchange)

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                exchange.status = message["status"]
                # One list, each header encoded once: the reply's own, the request id, the observers'.
                raw = [*message.get("headers", ()), (_REQUEST_ID_HEADER_BYTES, exchange.request_id.encode())]
                waiting = state.hooks.add_headers(exchange, raw)
                if waiting is not None:
                    await waiting
                message = {**message, "headers": raw}
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                # Record before the client can see the end of the reply, so a test that asserts
                # on the journal right after a call never misses it.
                recording = finish()
                if recording is not None:
                    await recording
            await send(message)

        if unreachable is not None:
            await _send_error(exchange, send_with_headers, unreachable)
            return
        refused = guard.refusal(exchange.path, exchange.headers, state.settings.admin_token)
        if refused is not None:
            await _send_error(exchange, send_with_headers, refused)
            return

        declared = _content_length(headers)
        if declared is not None and declared > limit:
            # Refused before a byte of the body is read.
            await _send_error(exchange, send_with_headers, errors.body_too_large(limit, declared))
            return

        try:
            await self.app(scope, receive_and_keep, send_with_headers)
        except ClientDisconnect:
            # The client left while its body was being read: an everyday event, not a server error.
            exchange.disconnected = True
            if not started:
                exchange.status = CLIENT_CLOSED_STATUS
        except Exception:
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await _send_error(exchange, send_with_headers, errors.InternalServerError())
        finally:
            try:
                exchange.let_go()
                if exchange.capacity_slot is not None:
                    await exchange.capacity_released()
                if not finished and started:
                    exchange.disconnected = True  # the reply never ended: the client left, or a fault closed it
                recording = finish()
                if recording is not None:
                    await recording
            finally:
                if large_bodies.holds_anything(exchange):
                    await large_bodies.let_body_go(exchange)


async def _send_error(exchange: Exchange, send: Send, error: errors.MockAPIError) -> None:
    """Answer ``error`` in the shape of the API the request speaks, through the middleware's ``send``."""
    status, shaped = exchange.refuse(error)
    body = orjson.dumps(shaped)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in error.headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _first_of_each(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Request headers by name; of a repeated header, the first, which is the one Starlette's
    ``request.headers[...]`` gives the routes, so the journal shows the key the route used."""
    headers: dict[str, str] = {}
    for name, value in raw:
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def _content_length(headers: Mapping[str, str]) -> int | None:
    """The request's Content-Length (its first, if repeated), or None."""
    value = headers.get("content-length")
    if value is None:
        return None
    try:
        return int(value.encode("latin-1"))  # as the raw header: ASCII digits, space or tab around them
    except ValueError:
        return None  # uvicorn refuses a malformed Content-Length before the app sees it


def expose_connection_closer(app: Starlette) -> None:
    """Put ``scope["state"]["close_connection"]`` on every request: a way to close the TCP
    connection under a reply (for the ``drop_after`` fault), or None; and
    ``scope["state"]["server_send"]``, the server's own ``send``, which streamed events
    use to skip the middleware stack (see :mod:`mockserver.engine.scheduler`); and
    ``scope["state"]["write_body"]`` (see :func:`direct_body_writer`), or None; and
    ``scope["state"]["waited_s"]``, how long the request waited before the app saw it
    (:mod:`mockserver.api.arrival`).

    ASGI has no message for "abort the connection", so this reaches uvicorn's transport
    through the ``send`` uvicorn hands the app (``send.__self__`` is uvicorn's request
    cycle). It must be taken before Starlette's own outer middleware wraps ``send``,
    hence a wrapper around the whole middleware stack. The client then sees the
    connection close mid-body: a transport error, not a clean end.
    """
    build = app.build_middleware_stack
    ready_at = time.monotonic()  # the app is built: requests that came before waited for it, not for others

    def setup(scope: Scope, send: Send) -> None:
        cycle = getattr(send, "__self__", None)
        transport = getattr(cycle, "transport", None)
        close = getattr(transport, "close", None)
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        state["close_connection"] = close if callable(close) else None
        state["server_send"] = send
        state["write_body"] = direct_body_writer(send)
        state[arrival.WAITED] = arrival.kernel_wait(transport, ready_at)

    def build_with_closer() -> ASGIApp:
        inner = build()

        async def outer(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                setup(scope, send)
            await inner(scope, receive, send)

        return outer

    app.build_middleware_stack = build_with_closer  # type: ignore[method-assign]
    if isinstance(app, direct_routes.App):  # its direct requests skip the stack: they get the same, first
        app.connection_setup = setup


# What direct_body_writer reads of uvicorn's request cycle, and the classes of cycle it can write for.
_CYCLE_FIELDS = ("transport", "flow", "chunked_encoding", "response_started", "response_complete", "disconnected")
_USABLE_CYCLES: dict[type, bool] = {}


def direct_body_writer(send: Send) -> Callable[[bytes], bool] | None:
    """For uvicorn's httptools server: ``write(body)`` puts one chunk of a chunked response body
    straight on the transport and returns True, exactly as uvicorn's ``send`` would for a
    ``http.response.body`` message with ``more_body``; or returns False, doing nothing, whenever
    ``send`` has to be used instead (headers not sent yet, not chunked, the transport paused
    because the client stopped reading, the client gone, the response complete).

    Streamed events take this path (:mod:`mockserver.engine.scheduler`): it skips building a
    message and a coroutine per write, a fifth of the CPU per event at hundreds of streams.
    None when the server is not uvicorn's httptools one (h11, a test client).
    """
    cycle = getattr(send, "__self__", None)
    if cycle is None:
        return None
    usable = _USABLE_CYCLES.get(type(cycle))
    if usable is None:  # checked on the first request of each class of cycle (uvicorn sets these in __init__)
        usable = type(cycle).__module__ == "uvicorn.protocols.http.httptools_impl" and all(
            hasattr(cycle, name) for name in _CYCLE_FIELDS
        )
        _USABLE_CYCLES[type(cycle)] = usable
    if not usable:
        return None
    transport, flow = cycle.transport, cycle.flow

    def write(body: bytes) -> bool:
        if (
            not cycle.chunked_encoding
            or flow.write_paused
            or cycle.disconnected
            or cycle.response_complete
            or not cycle.response_started
        ):
            return False
        transport.write(b"%x\r\n%b\r\n" % (len(body), body))
        return True

    return write
