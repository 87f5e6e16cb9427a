"""One exchange, recorded while it streams through: request in, chunks out, a cassette record at the end."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import orjson

from mockserver.cassettes import redaction
from mockserver.cassettes.format import VERSION, Record, RecordedRequest, RecordedResponse, api_for, sorted_headers
from mockserver.cassettes.sse import EventCutter

Clock = Callable[[], float]
MAX_BODY_BYTES = 64 * 1024 * 1024  # the largest non-stream reply body kept (a stream keeps its events instead)


class Capture:
    """Collects one exchange. ``clock`` times the offsets (monotonic); ``wall`` stamps ``recorded_at``."""

    def __init__(
        self,
        *,
        method: str,
        path: str,
        query: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        redactor: redaction.Redactor,
        clock: Clock = time.perf_counter,
        wall: Clock = time.time,
    ) -> None:
        headers = list(headers)
        self._redact = redactor.for_request(redaction.secrets_in(headers))
        self._clock = clock
        self._started = clock()
        self._recorded_at = (
            datetime.fromtimestamp(wall(), UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        )
        self.method, self.path, self.query = method, path, query
        self._request_headers = redaction.request_headers(headers)
        self._request_body = body
        self.status = 0
        self._response_headers: dict[str, str] = {}
        self._headers_ms = 0.0
        self.stream = False
        self._cutter = EventCutter()
        self._body = bytearray()
        self._body_dropped = False
        self._last_ms = 0.0

    def elapsed_ms(self) -> float:
        return (self._clock() - self._started) * 1000

    def response_started(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        headers = list(headers)
        self.status = status
        self._headers_ms = self._last_ms = self.elapsed_ms()
        self._response_headers = redaction.response_headers(headers)
        content_type = self._response_headers.get("content-type", "")
        self.stream = content_type.startswith("text/event-stream")

    def chunk(self, data: bytes) -> None:
        self._last_ms = self.elapsed_ms()
        if self.stream:
            self._cutter.feed(data, self._last_ms)
        elif len(self._body) + len(data) <= MAX_BODY_BYTES:
            self._body += data
        else:
            self._body_dropped = True

    def record(self) -> Record:
        """The finished exchange, credentials and the ``redact:`` patterns taken out."""
        if self.stream:
            self._cutter.close(self._last_ms)
        request_body, request_text = _body(self._request_body)
        body, text = (None, None) if self.stream or self._body_dropped else _body(bytes(self._body))
        redact = self._redact
        events = [e.model_copy(update={"data": redact(e.data)}) for e in self._cutter.events]
        return Record(
            version=VERSION,
            id=f"rec_{secrets.token_hex(8)}",
            recorded_at=self._recorded_at,
            api=api_for(self.method, self.path),
            request=RecordedRequest(
                method=self.method,
                path=self.path,
                query=redact(self.query),
                headers=sorted_headers(redact(self._request_headers)),
                body=redact(request_body),
                text=redact(request_text),
            ),
            response=RecordedResponse(
                status=self.status,
                headers=sorted_headers(redact(self._response_headers)),
                stream=self.stream,
                headers_ms=round(self._headers_ms, 3),
                duration_ms=round(max(self._last_ms, self._headers_ms), 3),
                events=events,
                body=redact(body),
                text=redact(text),
            ),
        )


def _body(data: bytes) -> tuple[Any, str | None]:
    """``(json, None)`` for a JSON body, ``(None, text)`` for any other, ``(None, None)`` for none."""
    if not data:
        return None, None
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError:
        return None, data.decode("utf-8", errors="replace")
