"""The request journal: every API exchange, for tests to assert on (``GET /_mock/requests``).

Recording is one ``deque.append`` of the finished :class:`~mockserver.service.exchange.Exchange`
(an ``ExchangeHooks.on_complete`` observer), so the hot path pays nearly nothing.
Masking and shaping happen when someone reads the journal. The journal is
bounded twice: past ``Settings.journal_size`` entries or ``Settings.journal_bytes``
bytes of request bodies, the oldest entries are dropped. Only the raw body is kept
(the parsed copy, several times larger in memory, is dropped and parsed again when
read), so the byte count is what the journal holds. A single body larger than the
whole budget is dropped from its entry, which says so (``body_dropped_bytes``).

Entries are scoped by the ``x-mock-test-id`` request header, so tests sharing
one server see only their own requests. The journal also tracks exchanges still
in flight per scope, so an in-process reader can wait until the reply it just
read has been recorded (a client can see the last byte before the server has
finished its bookkeeping).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mockserver import errors
from mockserver.config.settings import DEFAULT_JOURNAL_BYTES, MAX_JSON_DEPTH
from mockserver.engine import jsonbody
from mockserver.harness.masking import Masker
from mockserver.service.accounts import request_key
from mockserver.service.exchange import Exchange

TEST_ID_HEADER = "x-mock-test-id"
UNRECORDED_PREFIXES = ("/_mock/", "/health", "/metrics", "/docs", "/redoc", "/openapi.json")
SETTLE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class _Record:
    seq: int
    exchange: Exchange
    key: str | None
    test_id: str | None
    finished_wall: float


class Journal:
    """A bounded, thread-safe log of finished exchanges."""

    def __init__(
        self,
        max_entries: int,
        wall_clock: Callable[[], float] = time.time,
        *,
        max_bytes: int = DEFAULT_JOURNAL_BYTES,
    ) -> None:
        self._records: deque[_Record] = deque()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self.bytes = 0  # request-body bytes held
        self._seq = itertools.count(1)
        self._wall_clock = wall_clock
        self._cond = threading.Condition()
        self._in_flight: dict[str | None, int] = {}
        self.last_seq = 0

    @staticmethod
    def recorded(path: str) -> bool:
        return not path.startswith(UNRECORDED_PREFIXES)

    # -- hooks (run on the server's event loop) --------------------------------------------

    def on_response_start(self, exchange: Exchange) -> dict[str, str]:
        if self.recorded(exchange.path):
            scope = exchange.headers.get(TEST_ID_HEADER)
            with self._cond:
                self._in_flight[scope] = self._in_flight.get(scope, 0) + 1
            exchange.extra["journal_in_flight"] = True
        return {}

    def on_complete(self, exchange: Exchange) -> None:
        if not self.recorded(exchange.path):
            return
        scope = exchange.headers.get(TEST_ID_HEADER)
        key, finished = request_key(exchange.headers), self._wall_clock()
        size = self._slim(exchange)
        with self._cond:
            seq = next(self._seq)
            self._records.append(_Record(seq, exchange, key, scope, finished))
            self.bytes += size
            while len(self._records) > 1 and (len(self._records) > self._max_entries or self.bytes > self._max_bytes):
                self.bytes -= len(self._records.popleft().exchange.request_body)
            self.last_seq = seq
            if exchange.extra.pop("journal_in_flight", False):
                left = self._in_flight.get(scope, 1) - 1
                if left > 0:
                    self._in_flight[scope] = left
                else:
                    self._in_flight.pop(scope, None)
            self._cond.notify_all()

    def _slim(self, exchange: Exchange) -> int:
        """Keep only the raw body (what the byte budget counts); drop one larger than the whole budget."""
        if exchange.request_body:
            exchange.body = None  # the same content as the raw bytes, parsed again when read
        size = len(exchange.request_body)
        if size > self._max_bytes:
            exchange.extra["journal_body_dropped"] = size
            exchange.request_body = b""
            size = 0
        return size

    # -- reading ---------------------------------------------------------------------------

    def settle(self, test_id: str | None, timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Wait (from another thread) until no exchange of this scope is in flight, or ``timeout``."""
        with self._cond:
            self._cond.wait_for(lambda: not self._in_flight.get(test_id), timeout=timeout)

    def select(
        self,
        *,
        test_id: str | None = None,
        path: str | None = None,
        model: str | None = None,
        key: str | None = None,
        method: str | None = None,
        tier: str | None = None,
        status: int | None = None,
        since: int = 0,
        include_unscoped: bool = False,
    ) -> list[_Record]:
        """Records oldest first. ``test_id`` None means every scope."""
        with self._cond:
            records = list(self._records)
        chosen = []
        for r in records:
            if r.seq <= since:
                continue
            if test_id is not None and r.test_id != test_id and not (include_unscoped and r.test_id is None):
                continue
            if path is not None and r.exchange.path != path:
                continue
            if model is not None and r.exchange.model != model and _requested_model(r.exchange) != model:
                continue
            if key is not None and r.key != key:
                continue
            if method is not None and r.exchange.method != method.upper():
                continue
            if tier is not None and r.exchange.tier != tier:
                continue
            if status is not None and r.exchange.status != status:
                continue
            chosen.append(r)
        return chosen

    def clear(self, test_id: str | None = None) -> int:
        """Forget every record, or one scope's. Returns how many were dropped."""
        with self._cond:
            before = len(self._records)
            if test_id is None:
                self._records.clear()
            else:
                kept = [r for r in self._records if r.test_id != test_id]
                self._records.clear()
                self._records.extend(kept)
            self.bytes = sum(len(r.exchange.request_body) for r in self._records)
            return before - len(self._records)


def request_body(exchange: Exchange) -> Any:
    """The parsed body when a route parsed it; else the raw bytes the middleware kept, decoded."""
    if exchange.body is not None:
        return exchange.body
    raw = exchange.request_body or None
    if not raw:
        return None
    try:
        # Bounded, so a refused body nested too deep is shown as text rather than walked by the masker.
        return jsonbody.loads(raw, MAX_JSON_DEPTH)
    except errors.MockAPIError:
        return bytes(raw).decode("utf-8", "replace")


def _requested_model(exchange: Exchange) -> str | None:
    body = request_body(exchange)
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return None


def _masked(masker: Masker, value: str | None) -> str | None:
    return None if value is None else masker.text(value)


def entry(record: _Record, known_keys: Iterable[str]) -> dict[str, Any]:
    """One journal entry as shown to users: JSON-ready, every key masked."""
    ex = record.exchange
    masker = Masker([record.key, *known_keys])
    duration = None if ex.finished_at is None else round((ex.finished_at - ex.started_at) * 1000, 3)
    usage = None
    if ex.usage is not None:
        usage = {
            "input_tokens": ex.usage.input_tokens,
            "output_tokens": ex.usage.output_tokens,
            "reasoning_tokens": ex.usage.reasoning_tokens,
            "total_tokens": ex.usage.total_tokens,
        }
    fault = ex.extra.get("fault")
    return {
        "seq": record.seq,
        "request_id": ex.request_id,
        "test_id": masker.text(record.test_id) if record.test_id else None,
        "method": ex.method,
        "path": masker.text(ex.path),
        "headers": masker.headers(ex.headers),
        "key": masker.secret_value(record.key) if record.key else None,
        "organization": ex.account.organization if ex.account else None,
        "project": ex.account.project if ex.account else None,
        "body": masker.body(request_body(ex)),
        "model": _masked(masker, ex.model or _requested_model(ex)),
        "stream": ex.stream,
        "requested_tier": ex.requested_tier,
        "tier": ex.tier,
        "downgraded": ex.downgraded,
        "status": ex.status,
        "usage": usage,
        "fault": fault,
        "script": ex.extra.get("script"),
        "disconnected": ex.disconnected,
        "body_dropped_bytes": ex.extra.get("journal_body_dropped"),
        "started_at": round(record.finished_wall - (duration or 0) / 1000, 6),
        "duration_ms": duration,
    }
