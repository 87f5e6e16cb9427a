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

Readers go through :class:`RequestJournal`, a small async interface (:meth:`~RequestJournal.read`,
:meth:`~RequestJournal.forget`, :meth:`~RequestJournal.held`, :meth:`~RequestJournal.newest`)
that this in-memory :class:`Journal` and the journal shared through Redis
(:class:`~mockserver.harness.journal.shared.SharedJournal`) both implement, so the control
plane and ``MockServer`` read either one the same way.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from mockserver import errors
from mockserver.config.settings import DEFAULT_JOURNAL_BYTES, MAX_JSON_DEPTH
from mockserver.engine import jsonbody
from mockserver.harness.masking import Masker
from mockserver.service.accounts import request_key
from mockserver.service.exchange import Exchange

TEST_ID_HEADER = "x-mock-test-id"
UNRECORDED_PREFIXES = ("/_mock/", "/health", "/ready", "/metrics", "/docs", "/redoc", "/openapi.json")
SETTLE_TIMEOUT_S = 2.0


class Record(NamedTuple):
    """One finished exchange as the in-memory journal holds it (shaped for readers by :func:`entry`).

    A named tuple rather than a frozen dataclass: one is made for every request, and a frozen
    dataclass sets each field through ``object.__setattr__``."""

    seq: int
    exchange: Exchange
    test_id: str | None
    finished_wall: float

    @property
    def key(self) -> str | None:
        """The API key the request carried: found when the journal is read, not on every request."""
        return request_key(self.exchange.headers)


def key_digest(key: str | None) -> str | None:
    """A digest of an API key: what a reader compares a ``key=`` filter with, never showing the key."""
    return None if key is None else hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class JournalQuery:
    """Which entries a reader wants. Each filter left None matches everything; ``test_id`` None
    means every scope, and ``include_unscoped`` adds the entries sent without a test id.
    ``since`` skips entries up to that ``seq``; ``limit`` keeps only the newest N that match."""

    test_id: str | None = None
    path: str | None = None
    model: str | None = None
    key: str | None = None
    method: str | None = None
    tier: str | None = None
    status: int | None = None
    code: str | None = None
    param: str | None = None
    error_type: str | None = None
    since: int = 0
    include_unscoped: bool = False
    limit: int | None = None

    def refusal_matches(self, code: str | None, param: str | None, error_type: str | None) -> bool:
        """Whether an entry's error ``code``, ``param`` and ``type`` pass the refusal filters."""
        wanted = ((self.code, code), (self.param, param), (self.error_type, error_type))
        return all(want is None or want == actual for want, actual in wanted)


@dataclass(frozen=True)
class Shown:
    """One entry as readers get it: JSON-ready and masked (:func:`entry`), with a digest of its key
    so that ``Calls.filter(key=...)`` can match the real key without it being kept."""

    data: dict[str, Any]
    key_digest: str | None


@dataclass(frozen=True)
class Held:
    """What a journal holds now (``GET /_mock/stats``)."""

    entries: int
    bytes: int


class RequestJournal(Protocol):
    """What the server and its readers need from a journal, in memory or shared through Redis.

    The hooks run on the server's event loop for every exchange. :meth:`settle` blocks, so it is
    called from another thread only (``MockServer``); the rest is read from the event loop.
    """

    def on_response_start(self, exchange: Exchange) -> tuple[()]: ...

    def on_complete(self, exchange: Exchange) -> Awaitable[None] | None: ...

    def settle(self, test_id: str | None, timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Wait until no exchange of this scope that this process serves is still being recorded."""

    async def read(self, query: JournalQuery, known_keys: Iterable[str]) -> list[Shown]:
        """The entries ``query`` selects, oldest first, masked (``known_keys`` are masked too)."""

    async def forget(self, test_id: str | None = None) -> int:
        """Drop every entry, or one test's; returns how many were dropped."""

    async def held(self) -> Held: ...

    async def newest(self) -> int:
        """The ``seq`` of the newest entry recorded so far (0 if none): a reader's ``since`` for "from now on"."""


class Settling:
    """The part both journals share: which exchanges of each scope (test id) are still being
    recorded, so a reader in another thread can wait for the reply it has just read (:meth:`settle`).
    Only exchanges this process serves are tracked; a subclass calls :meth:`_settled` with
    ``self._lock`` held once it has recorded one."""

    def __init__(self) -> None:
        # The condition's lock, taken directly where no one waits: Condition's own ``with`` is Python code.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._in_flight: dict[str | None, int] = {}
        self._waiting = 0  # readers waiting in settle(): only then is a recorded exchange announced

    @staticmethod
    def recorded(path: str) -> bool:
        return not path.startswith(UNRECORDED_PREFIXES)

    def on_response_start(self, exchange: Exchange) -> tuple[()]:
        """An ``on_response_start`` hook: counts the exchange as in flight; adds no header.

        It runs at every head, so without the lock: only the event loop's thread changes the counts
        (here, and in :meth:`_settled`), and a reader in another thread (:meth:`settle`, which reads them
        under the lock) that reads a count as it changes here gets the old or the new, either right for
        it: the reply whose head is going out now is not one it has read."""
        if not exchange.path.startswith(UNRECORDED_PREFIXES):  # self.recorded(), on every reply
            scope = exchange.headers.get(TEST_ID_HEADER)
            in_flight = self._in_flight
            in_flight[scope] = in_flight.get(scope, 0) + 1
            exchange.journal_in_flight = True
        return ()

    def _settled(self, exchange: Exchange, scope: str | None) -> None:
        if exchange.journal_in_flight:
            exchange.journal_in_flight = False
            left = self._in_flight.get(scope, 1) - 1
            if left > 0:
                self._in_flight[scope] = left
            else:
                self._in_flight.pop(scope, None)
        if self._waiting:
            self._cond.notify_all()

    def settle(self, test_id: str | None, timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Wait (from another thread) until no exchange of this scope is in flight, or ``timeout``."""
        with self._cond:
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: not self._in_flight.get(test_id), timeout=timeout)
            finally:
                self._waiting -= 1


class Journal(Settling):
    """A bounded, thread-safe log of finished exchanges, in this process's memory."""

    def __init__(
        self,
        max_entries: int,
        wall_clock: Callable[[], float] = time.time,
        *,
        max_bytes: int = DEFAULT_JOURNAL_BYTES,
    ) -> None:
        super().__init__()
        self._records: deque[Record] = deque()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self.bytes = 0  # request-body bytes held
        self._seq = itertools.count(1)
        self._wall_clock = wall_clock
        self.last_seq = 0

    # -- hooks (run on the server's event loop) --------------------------------------------

    def on_response_start(self, exchange: Exchange) -> tuple[()]:
        """:meth:`Settling.on_response_start`, and the parsed body goes now rather than when the exchange
        is recorded (:meth:`_slim`): nothing reads it once the reply has started, and a stream would keep
        it (its dicts and lists, more with every message) for the garbage collector's passes to walk
        as long as it plays."""
        if exchange.request_body:
            exchange.body = None  # the same content as the raw bytes, parsed again when read
        return super().on_response_start(exchange)

    def on_complete(self, exchange: Exchange) -> None:
        if exchange.path.startswith(UNRECORDED_PREFIXES):  # not self.recorded(), on every reply
            return
        scope = exchange.headers.get(TEST_ID_HEADER)
        finished = self._wall_clock()
        size = self._slim(exchange)
        records = self._records
        with self._lock:
            seq = next(self._seq)
            records.append(Record(seq, exchange, scope, finished))
            self.bytes += size
            while len(records) > 1 and (len(records) > self._max_entries or self.bytes > self._max_bytes):
                self.bytes -= len(records.popleft().exchange.request_body)
            self.last_seq = seq
            self._settled(exchange, scope)

    def _slim(self, exchange: Exchange) -> int:
        """Keep only the raw body (what the byte budget counts); drop one larger than the whole budget."""
        if exchange.request_body:
            exchange.body = None  # the same content as the raw bytes, parsed again when read
        size = len(exchange.request_body)
        if size > self._max_bytes:
            exchange.journal_body_dropped = size
            exchange.request_body = b""
            size = 0
        return size

    # -- reading ---------------------------------------------------------------------------

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
        code: str | None = None,
        param: str | None = None,
        error_type: str | None = None,
    ) -> list[Record]:
        """Records oldest first. ``test_id`` None means every scope."""
        refusal = JournalQuery(code=code, param=param, error_type=error_type)
        any_refusal = (code, param, error_type) != (None, None, None)
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
            if model is not None and r.exchange.model != model and requested_model(r.exchange) != model:
                continue
            if key is not None and r.key != key:
                continue
            if method is not None and r.exchange.method != method.upper():
                continue
            if tier is not None and r.exchange.tier != tier:
                continue
            if status is not None and r.exchange.status != status:
                continue
            if any_refusal and not refusal.refusal_matches(*_refusal_fields(r.exchange)):
                continue
            chosen.append(r)
        return chosen

    async def read(self, query: JournalQuery, known_keys: Iterable[str]) -> list[Shown]:
        return self.shown(query, known_keys)

    def shown(self, query: JournalQuery, known_keys: Iterable[str]) -> list[Shown]:
        """:meth:`read`, callable from any thread: it never waits for anything."""
        records = self.select(
            test_id=query.test_id,
            path=query.path,
            model=query.model,
            key=query.key,
            method=query.method,
            tier=query.tier,
            status=query.status,
            since=query.since,
            include_unscoped=query.include_unscoped,
            code=query.code,
            param=query.param,
            error_type=query.error_type,
        )
        if query.limit is not None:
            records = records[-query.limit :]
        known = list(known_keys)
        return [Shown(entry(r, known), key_digest(r.key)) for r in records]

    async def forget(self, test_id: str | None = None) -> int:
        return self.clear(test_id)

    async def held(self) -> Held:
        with self._cond:
            return Held(len(self._records), self.bytes)

    async def newest(self) -> int:
        return self.last_seq

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


def requested_model(exchange: Exchange) -> str | None:
    body = request_body(exchange)
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return str(body["model"])
    return None


def _refusal_fields(exchange: Exchange) -> tuple[str | None, str | None, str | None]:
    """The error ``code``, ``param`` and ``type`` of an exchange's reply; all None when it was no error."""
    refusal = exchange.refusal
    return (None, None, None) if refusal is None else (refusal.code, refusal.param, refusal.type)


def _masked(masker: Masker, value: str | None) -> str | None:
    return None if value is None else masker.text(value)


def entry(record: Record, known_keys: Iterable[str]) -> dict[str, Any]:
    """One journal entry as shown to users: JSON-ready, every key masked."""
    ex = record.exchange
    key = record.key
    masker = Masker([key, *known_keys])
    duration = None if ex.finished_at is None else round((ex.finished_at - ex.started_at) * 1000, 3)
    usage = None
    if ex.usage is not None:
        usage = {
            "input_tokens": ex.usage.input_tokens,
            "output_tokens": ex.usage.output_tokens,
            "reasoning_tokens": ex.usage.reasoning_tokens,
            "cached_tokens": ex.usage.cached_tokens,  # of input_tokens, read from the prompt cache
            "cache_write_tokens": ex.usage.cache_write_tokens,  # of input_tokens, written to it
            "total_tokens": ex.usage.total_tokens,
        }
    fault = ex.fault
    code, param, error_type = _refusal_fields(ex)
    return {
        "seq": record.seq,
        "request_id": ex.request_id,
        "test_id": masker.text(record.test_id) if record.test_id else None,
        "method": ex.method,
        "path": masker.text(ex.path),
        "headers": masker.headers(ex.headers),
        "key": masker.secret_value(key) if key else None,
        "organization": ex.account.organization if ex.account else None,
        "project": ex.account.project if ex.account else None,
        "body": masker.body(request_body(ex)),
        "model": _masked(masker, ex.model or requested_model(ex)),
        "stream": ex.stream,
        "requested_tier": ex.requested_tier,
        "tier": ex.tier,
        "downgraded": ex.downgraded,
        "status": ex.status,
        "error_type": error_type,
        "code": code,
        "param": param,
        "error_message": _masked(masker, ex.refusal.message) if ex.refusal is not None else None,
        "usage": usage,
        "fault": fault,
        "script": ex.script,
        "disconnected": ex.disconnected,
        "body_dropped_bytes": ex.journal_body_dropped,
        "prefill_ms": ex.prefill_ms,
        "queued_ms": ex.queued_ms,
        "queue_outcome": ex.queue_outcome,
        "started_at": round(record.finished_wall - (duration or 0) / 1000, 6),
        "duration_ms": duration,
    }
