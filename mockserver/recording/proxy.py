"""``mockserver record``: a proxy that forwards every request to the upstream and records each exchange.

The reply streams back chunk by chunk as it arrives (nothing is buffered), so the client sees the
upstream's own timing; a copy of each chunk goes to the :class:`~.capture.Capture`, and when the
reply has ended the whole exchange is appended to the cassette. A failed exchange (status 400 and
up) is recorded only with ``record_errors``. An upstream that cannot be reached gets the client a
502 in its API's error shape. A client that leaves mid-stream closes the upstream reply, and
nothing is recorded for it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mockserver import errors
from mockserver.cassettes.files import CassetteError, CassetteWriter
from mockserver.cassettes.format import MESSAGES_PATH, Record
from mockserver.cassettes.redaction import Redactor
from mockserver.errors import anthropic as anthropic_errors
from mockserver.harness.replay.library import Library
from mockserver.recording.capture import Capture
from mockserver.recording.upstream import Upstream, UpstreamUnavailable, headers_back

logger = logging.getLogger("mockserver.record")

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the API's own limits are far lower
ERROR_STATUS = 400
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@dataclass
class Recorder:
    upstream: Upstream
    writer: CassetteWriter
    redactor: Redactor
    record_errors: bool = False
    known: Library | None = None  # recordings answered from the cassette instead of forwarded (record mode "new")
    recorded: int = 0
    in_flight: int = 0  # exchanges forwarded and not yet written (or dropped): see :meth:`settled`
    replayed: dict[bytes, int] = field(default_factory=dict)  # how many of each key's recordings were used
    retired: bool = False  # no new exchange comes: the upstream client closes once the last one ends

    def recorded_reply(self, request: Request, body: bytes) -> Response | None:
        """The next unused recording of this request, when the cassette already holds one; else None."""
        if self.known is None:
            return None
        try:
            data = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            data = None
        key, entries = self.known.matches(request.method, request.url.path, data)
        used = self.replayed.get(key, 0)
        if used >= len(entries):
            return None
        self.replayed[key] = used + 1
        return as_recorded(entries[used].record)

    def settled(self) -> bool:
        """Every exchange that has started has been written or dropped."""
        return self.in_flight == 0

    async def retire(self) -> None:
        """No new exchange will start: close the upstream client now, or when the last one in flight ends."""
        self.retired = True
        if self.settled():
            await self.upstream.aclose()

    async def exchange_ended(self) -> None:
        """One exchange counted in :attr:`in_flight` has been written or dropped."""
        self.in_flight -= 1
        if self.retired and self.settled():
            await self.upstream.aclose()

    def capture(self, request: Request, body: bytes) -> Capture:
        return Capture(
            method=request.method,
            path=request.url.path,
            query=request.url.query,
            headers=request.headers.items(),
            body=body,
            redactor=self.redactor,
        )

    async def keep(self, capture: Capture) -> None:
        if capture.status >= ERROR_STATUS and not self.record_errors:
            return
        try:
            await anyio.to_thread.run_sync(self.writer.append, capture.record())
            self.recorded += 1
        except CassetteError as exc:
            logger.warning("mockserver record: %s", exc)


def create_proxy_app(recorder: Recorder, on_shutdown: Callable[[], None] | None = None) -> Starlette:
    """The proxy's ASGI app; ``on_shutdown`` runs once it stops (``record`` prints its summary there:
    uvicorn ends the process with the stop signal itself, so nothing after ``run()`` would)."""

    async def proxy(request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return _error(request, errors.body_too_large(MAX_REQUEST_BYTES))
        return await forward(recorder, request, body)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await recorder.upstream.aclose()
        if on_shutdown is not None:
            on_shutdown()

    routes = [Route("/{path:path}", proxy, methods=METHODS)]
    return Starlette(routes=routes, lifespan=lifespan)


async def forward(recorder: Recorder, request: Request, body: bytes) -> Response:
    """Send the request upstream and stream its reply back, recording the exchange once it has ended."""
    known = recorder.recorded_reply(request, body)
    if known is not None:
        return known
    capture = recorder.capture(request, body)
    recorder.in_flight += 1
    try:
        reply = await recorder.upstream.send(
            request.method, request.url.path, request.url.query, request.headers.items(), body
        )
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            await recorder.exchange_ended()
        if isinstance(exc, UpstreamUnavailable):
            return _error(request, exc)
        raise
    try:
        capture.response_started(reply.status_code, reply.headers.multi_items())
        return _Relay(reply, capture, recorder)
    except BaseException:  # a reply that cannot be relayed: its exchange ends here
        with anyio.CancelScope(shield=True):
            try:
                await reply.aclose()
            finally:
                await recorder.exchange_ended()
        raise


def as_recorded(record: Record) -> Response:
    """A recording sent back as it was recorded, at once: its status, the headers kept, its events or body."""
    response = record.response
    if response.stream:
        typed = record.api in ("responses", "messages")
        frames = []
        for event in response.events:
            head = f"event: {event.event}\n" if typed and event.event is not None else ""
            frames.append(head + "".join(f"data: {line}\n" for line in event.data.split("\n")) + "\n")
        content = "".join(frames).encode()
    elif response.body is not None:
        content = orjson.dumps(response.body)
    else:
        content = (response.text or "").encode()
    replayed = Response(content, status_code=response.status)
    # Set as raw lines: Starlette encodes header values as Latin-1 and would fail on any other character.
    kept = [(name.lower().encode("latin-1"), _header_value(value)) for name, value in response.headers.items()]
    names = {name for name, _ in kept}
    replayed.raw_headers = kept + [(n, v) for n, v in replayed.raw_headers if n not in names]
    return replayed


def _header_value(value: str) -> bytes:
    """A header value as bytes: Latin-1, as HTTP has it, or its UTF-8 bytes when it has other characters."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


class _Relay(StreamingResponse):
    """The upstream's reply streamed to the client as it comes. Its exchange ends exactly once, whether
    the reply ran to its end (recorded), broke off, or the client left before or while it was sent."""

    def __init__(self, reply: httpx.Response, capture: Capture, recorder: Recorder) -> None:
        self._reply, self._capture, self._recorder = reply, capture, recorder
        self._ended = False
        super().__init__(self._chunks(), status_code=reply.status_code)
        self.raw_headers = headers_back(reply)  # every line as sent: repeated ones too, values as raw bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # a client gone before the first chunk never starts the stream, so its own end never runs
            with anyio.CancelScope(shield=True):
                await self._end(complete=False)

    async def _chunks(self) -> AsyncIterator[bytes]:
        complete = False
        try:
            async for chunk in self._reply.aiter_bytes():
                self._capture.chunk(chunk)
                yield chunk
            complete = True
        except httpx.TransportError as exc:
            capture = self._capture
            logger.warning("mockserver record: the upstream broke off %s %s: %s", capture.method, capture.path, exc)
        finally:
            with anyio.CancelScope(shield=True):
                await self._end(complete)

    async def _end(self, complete: bool) -> None:
        if self._ended:
            return
        self._ended = True
        try:
            await self._reply.aclose()
            if complete:
                await self._recorder.keep(self._capture)
        finally:
            await self._recorder.exchange_ended()


async def _body(request: Request) -> bytes | None:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            return None
    return bytes(data)


def _error(request: Request, error: errors.MockAPIError) -> JSONResponse:
    """The error in the shape of the API the request speaks: Anthropic's for Messages, else OpenAI's."""
    if request.url.path.startswith(MESSAGES_PATH) or "anthropic-version" in request.headers:
        # Anthropic's status, type and wording for the proxy's own refusal (413: request_too_large).
        status, message = anthropic_errors.translate(error)
        body = {"type": "error", "error": {"type": anthropic_errors.error_type(status), "message": message}}
        return JSONResponse(body, status_code=status)
    return JSONResponse(errors.error_body(error), status_code=error.status_code)
