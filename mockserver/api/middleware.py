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
from collections.abc import Awaitable, Callable, Mapping

import orjson
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockserver import errors
from mockserver.api import guard
from mockserver.api.asgi import arrival, large_bodies, transport
from mockserver.config.settings import Settings
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
        exchange = _open_exchange(scope, state, self.classify)
        # Only a process that shares its configuration with others has anything to catch up with.
        unreachable = await _follow_config(state, exchange) if state.config_log is not None else None
        exchange.account = accounts.identify(state.fixture, exchange.headers)
        io = _RequestIO(exchange, state, scope, receive, send)

        refused = unreachable if unreachable is not None else _refusal(exchange, state.settings)
        if refused is not None:
            await _send_error(exchange, io, refused)
            return
        try:
            await self.app(scope, io.receive, io)
        except ClientDisconnect:
            # The client left while its body was being read: an everyday event, not a server error.
            exchange.disconnected = True
            if not io.started:
                exchange.status = CLIENT_CLOSED_STATUS
        except Exception:
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if io.started:
                raise
            await _send_error(exchange, io, errors.InternalServerError())
        finally:
            try:
                exchange.let_go()
                if exchange.capacity_slot is not None:
                    await exchange.capacity_released()
                if io.started and exchange.finished_at is None:
                    exchange.disconnected = True  # the reply never ended: the client left, or a fault closed it
                recording = _finish(exchange, state, scope)
                if recording is not None:
                    await recording
            finally:
                if large_bodies.holds_anything(exchange):
                    await large_bodies.let_body_go(exchange)


class _RequestIO:
    """The ``receive`` and ``send`` the middleware gives the app for one request: its :meth:`receive`,
    and the object itself, whose call is the ``send``.

    ``receive`` keeps the raw body on the exchange as the app reads it (so the journal shows what a
    request refused before parsing sent), refusing a body over the limit as it arrives. ``send``
    notes the status, adds the request id and the observers' headers to the head (written straight
    on the server's transport when this ``send`` is the server's own: see
    :func:`mockserver.api.asgi.transport.head_writer`), and closes the exchange before the end of the
    reply goes out.

    One object rather than two closures, and callable itself rather than giving a bound ``send``: a
    streamed reply keeps them for its whole life, and each closure's cells, or a bound method, is one
    more object per open stream for the garbage collector's passes to walk.
    """

    __slots__ = (
        "_direct",
        "_receive",
        "_send",
        "_writer",
        "exchange",
        "limit",
        "received",
        "scope",
        "started",
        "state",
    )

    def __init__(self, exchange: Exchange, state: ServerState, scope: Scope, receive: Receive, send: Send) -> None:
        self.exchange = exchange
        self.state = state
        self.scope = scope
        self._receive = receive
        self._send = send
        # What writes the head straight on the server's transport, when this send is the server's own.
        self._writer = transport.head_writer(scope, send)
        # The connection's direct writer, whoever's send this is: what it holds goes out before a body.
        self._direct = self._writer if self._writer is not None else transport.direct_writer(scope)
        self.received = bytearray()
        self.limit = state.settings.max_body_bytes
        self.started = False  # the head has gone out

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            received, chunk = self.received, message.get("body", b"")
            if not received and not message.get("more_body", False) and len(chunk) <= self.limit:
                # The usual body, in one message: kept as it came, without a copy through the buffer.
                self.exchange.request_body = chunk if type(chunk) is bytes else bytes(chunk)
                return message
            if len(received) + len(chunk) > self.limit:
                # A body sent without Content-Length (chunked) is counted as it arrives.
                received.clear()
                raise errors.body_too_large(self.limit)
            received.extend(chunk)
            if not message.get("more_body", False):
                self.exchange.request_body = bytes(received)
        return message

    async def __call__(self, message: Message) -> None:
        """The ``send``."""
        exchange = self.exchange
        if message["type"] == "http.response.start":
            self.started = True
            exchange.status = message["status"]
            # One list, each header encoded once: the reply's own, the request id, the observers'.
            raw = [*message.get("headers", ()), (_REQUEST_ID_HEADER_BYTES, exchange.request_id.encode())]
            waiting = self.state.hooks.add_headers(exchange, raw)
            if waiting is not None:
                await waiting
            if self._writer is not None and self._writer.write_head(exchange.status, raw):
                return
            message = {**message, "headers": raw}
        elif message["type"] == "http.response.body":
            if self._direct is not None:  # what the direct writer holds goes before this body
                self._direct.uncork()
            if not message.get("more_body", False):
                # Record before the client can see the end of the reply, so a test that asserts
                # on the journal right after a call never misses it.
                recording = _finish(exchange, self.state, self.scope)
                if recording is not None:
                    await recording
        await self._send(message)


def _open_exchange(scope: Scope, state: ServerState, classify: Classifier | None) -> Exchange:
    """The request's exchange, dated from its arrival and labelled with its dialect, on ``scope["state"]``."""
    headers = _first_of_each(scope["headers"])
    exchange = Exchange(
        request_id=state.ids.request(),
        method=scope["method"],
        path=scope["path"],
        headers=headers,
        started_at=arrival.arrival_time(scope, state.clock),  # when it arrived, not when its task ran
    )
    scope.setdefault("state", {})["exchange"] = exchange
    if classify is not None:
        exchange.dialect = classify(exchange.path, headers)
    return exchange


async def _follow_config(state: ServerState, exchange: Exchange) -> errors.MockAPIError | None:
    """Take in the configuration another worker or replica changed (a PATCH there is in force here
    too), except on the paths this process answers alone; the error to answer if the store is away."""
    if exchange.path.startswith(LOCAL_PATHS):
        return None
    try:
        await state.follow_config()
    except errors.MockAPIError as exc:
        return exc
    return None


def _refusal(exchange: Exchange, settings: Settings) -> errors.MockAPIError | None:
    """Why the request is refused before the app sees it, if it is: ``/_mock/`` without the admin
    token, or a declared body over the limit (refused before a byte of it is read)."""
    refused = guard.refusal(exchange.path, exchange.headers, settings.admin_token)
    if refused is not None:
        return refused
    declared = _content_length(exchange.headers)
    if declared is not None and declared > settings.max_body_bytes:
        return errors.body_too_large(settings.max_body_bytes, declared)
    return None


def _finish(exchange: Exchange, state: ServerState, scope: Scope) -> Awaitable[None] | None:
    """Close ``exchange`` (once: later calls do nothing) and tell the observers; their work to await,
    if any of them has some (a shared store's write)."""
    if exchange.finished_at is not None:
        return None
    exchange.finished_at = state.clock.now()
    exchange.route = getattr(scope.get("route"), "path", None)
    return state.hooks.complete(exchange)


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
