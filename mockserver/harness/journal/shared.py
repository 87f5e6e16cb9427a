"""The request journal shared by every worker and replica, through Redis (``--state redis://...``).

Each finished exchange is shaped and masked once, when it is recorded (:func:`~.journal.entry`),
and stored in Redis with the fields the filters read (:mod:`mockserver.state.journal_log`), by
one atomic script that gives it the next ``seq``: every process reads one journal, oldest first,
in one order. A reader filters the fields here and fetches only the entries it returns.
Recording is awaited before the end of the reply goes out, so a client that has read a reply
finds it in the journal from any worker.

The bounds are the in-memory journal's options, counted across all processes: at most
``journal_size`` entries and ``journal_bytes`` bytes, where a byte is one of a stored entry (its
masked body, headers and fields as JSON), not of the raw request body alone; an entry larger than
the whole budget is kept without its body (``body_dropped_bytes``). Keys are masked when recorded:
the caller's key and the fixture's keys at that moment; the key itself is never stored, only a
digest that ``key=`` filters compare with.

Redis away: the reply is already on its way, so a lost record is logged (one warning while Redis
stays away, one line when recording works again) and the reply goes on. Reading while Redis is
away is the retryable 503 ``state_unavailable``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from mockserver import errors
from mockserver.config.settings import DEFAULT_JOURNAL_BYTES
from mockserver.harness.journal import (
    TEST_ID_HEADER,
    Held,
    JournalQuery,
    Record,
    Settling,
    Shown,
    entry,
    key_digest,
    requested_model,
)
from mockserver.harness.masking import Masker
from mockserver.service.accounts import request_key
from mockserver.service.exchange import Exchange
from mockserver.state.journal_log import Head, JournalLog

logger = logging.getLogger("mockserver")


class SharedJournal(Settling):
    """The journal every process shares (see the module docstring); it implements
    :class:`~mockserver.harness.journal.RequestJournal`."""

    def __init__(
        self,
        log: JournalLog,
        max_entries: int,
        known_keys: Callable[[], Iterable[str]],
        wall_clock: Callable[[], float] = time.time,
        *,
        max_bytes: int = DEFAULT_JOURNAL_BYTES,
    ) -> None:
        super().__init__()
        self._log = log
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._known_keys = known_keys
        self._wall_clock = wall_clock
        self._lost = 0  # exchanges not recorded since Redis went away

    async def on_complete(self, exchange: Exchange) -> None:
        if not self.recorded(exchange.path):
            return
        scope = exchange.headers.get(TEST_ID_HEADER)
        try:
            await self._log.append(*self.stored(exchange, scope), self._max_entries, self._max_bytes)
        except errors.ServiceUnavailableError:  # Redis is away (state_unavailable)
            if not self._lost:
                logger.warning(
                    "the journal did not record %s %s: Redis at %s is unreachable; "
                    "exchanges are not recorded until it answers again",
                    exchange.method,
                    exchange.path,
                    self._log.where,
                )
            self._lost += 1
        else:
            if self._lost:
                logger.warning("the journal records again; %d exchanges were not recorded meanwhile", self._lost)
                self._lost = 0
        finally:
            with self._lock:
                self._settled(exchange, scope)

    def stored(self, exchange: Exchange, scope: str | None) -> tuple[bytes, bytes]:
        """What Redis keeps of an exchange: its head (test id and the fields the filters read) and
        its entry, shaped and masked as readers get it."""
        key, known = request_key(exchange.headers), list(self._known_keys())
        shaped = entry(Record(0, exchange, scope, self._wall_clock()), known)
        del shaped["seq"]  # given by Redis when stored
        fields = {
            "key": key_digest(key),
            "path": exchange.path,
            "model": exchange.model,
            "requested_model": requested_model(exchange),
            "method": exchange.method,
            "tier": exchange.tier,
            "status": exchange.status,
            "code": shaped["code"],
            "param": shaped["param"],
            "error_type": shaped["error_type"],
        }
        head, stored = JournalLog.head(scope, fields), _dumps(shaped, exchange, [key, *known])
        size = len(exchange.request_body)
        if len(head) + len(stored) > self._max_bytes and size:
            # Larger than the whole journal: kept without its body, as the in-memory journal does.
            shaped.update(body=None, body_dropped_bytes=size)
            stored = orjson.dumps(shaped)
        return head, stored

    async def read(self, query: JournalQuery, known_keys: Iterable[str]) -> list[Shown]:
        """Filters every entry's head here, then fetches only the entries chosen (two round trips).
        ``known_keys`` were masked when each entry was recorded."""
        wanted_key = key_digest(query.key)
        chosen = [h for h in await self._log.heads() if _admits(query, wanted_key, h)]
        if query.limit is not None:
            chosen = chosen[-query.limit :]
        stored = await self._log.entries([h.seq for h in chosen])
        return [
            Shown({"seq": h.seq, **orjson.loads(e)}, h.fields["key"])
            for h, e in zip(chosen, stored, strict=True)
            if e is not None  # dropped (a newer entry, or a clear) between the two round trips
        ]

    async def forget(self, test_id: str | None = None) -> int:
        return await self._log.clear(test_id)

    async def held(self) -> Held:
        entries, size = await self._log.held()
        return Held(entries, size)

    async def newest(self) -> int:
        return await self._log.newest()


def _admits(query: JournalQuery, wanted_key: str | None, item: Head) -> bool:
    """The in-memory journal's filters (:meth:`~.journal.Journal.select`), on a stored head's fields."""
    fields = item.fields
    if item.seq <= query.since:
        return False
    unscoped = query.include_unscoped and item.test_id is None
    if query.test_id is not None and item.test_id != query.test_id and not unscoped:
        return False
    checks: tuple[tuple[Any, Any], ...] = (
        (query.path, fields["path"]),
        (wanted_key, fields["key"]),
        (None if query.method is None else query.method.upper(), fields["method"]),
        (query.tier, fields["tier"]),
        (query.status, fields["status"]),
    )
    if any(wanted is not None and wanted != actual for wanted, actual in checks):
        return False
    if not query.refusal_matches(fields.get("code"), fields.get("param"), fields.get("error_type")):
        return False
    return query.model is None or query.model in (fields["model"], fields["requested_model"])


def _dumps(shaped: dict[str, Any], exchange: Exchange, secrets: list[str | None]) -> bytes:
    """The entry as JSON. A body orjson cannot write (nested past its 254 levels) is kept as text."""
    try:
        return orjson.dumps(shaped)
    except (orjson.JSONEncodeError, TypeError):
        raw = bytes(exchange.request_body).decode("utf-8", "replace")
        shaped["body"] = Masker(secrets).text(raw)
        return orjson.dumps(shaped)
