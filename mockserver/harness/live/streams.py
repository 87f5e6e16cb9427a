"""The streams in flight, as the dashboard lists them.

:meth:`LiveStreams.add` costs one dict insert when a stream's reply starts; everything else is
worked out only when a dashboard asks (:meth:`LiveStreams.rows`, at most a few times a second).
How far a stream has got is read from the scheduler's own record of it: the deadline of the
next frame it has not written yet (:attr:`~mockserver.engine.active_stream.ActiveStream.due`).
Every token due before that deadline has gone out, so the tokens sent, the achieved rate and
the lateness (how far behind its schedule the scheduler is with the stream) are what the
server really did, not what it planned.

Bounded: a stream's entry is dropped when its reply ends (:meth:`LiveStreams.discard`); one that
never started (its client left first) is dropped by a sweep whenever the registry has doubled
since the last, so it holds at most about twice the streams in flight, dashboard or not.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

from mockserver.engine.active_stream import ActiveStream
from mockserver.engine.pacing import Schedule
from mockserver.harness.journal import TEST_ID_HEADER
from mockserver.harness.masking import Masker
from mockserver.service.accounts import request_key
from mockserver.service.exchange import Exchange

SWEEP_FLOOR = 64  # the registry is swept once it holds this many more entries than after the last sweep
MAX_ROWS = 500  # a dashboard is sent at most this many streams (the oldest first)


class LiveStream:
    """A stream being played, with the parts of its row that do not change worked out once."""

    __slots__ = ("exchange", "fixed", "schedule", "source")

    def __init__(self, exchange: Exchange, schedule: Schedule, source: object) -> None:
        self.exchange = exchange
        self.schedule = schedule
        self.source = source  # the iterator the scheduler plays: how its ActiveStream is found
        self.fixed: dict[str, Any] | None = None  # the row's fields that stay the same, once its first token is out


class LiveStreams:
    """The streams of this process whose replies have started and not finished."""

    def __init__(self) -> None:
        self._streams: dict[int, LiveStream] = {}
        self._swept_at = 0

    def __len__(self) -> int:
        return len(self._streams)

    def add(self, exchange: Exchange, schedule: Schedule, source: object) -> None:
        self._streams[id(exchange)] = LiveStream(exchange, schedule, source)
        if len(self._streams) >= 2 * self._swept_at + SWEEP_FLOOR:
            self.sweep()

    def sweep(self) -> None:
        """Drop the streams whose replies have finished."""
        self._streams = {k: s for k, s in self._streams.items() if s.exchange.finished_at is None}
        self._swept_at = len(self._streams)

    def discard(self, exchange: Exchange) -> None:
        """The reply of ``exchange`` has ended: its row goes (and the exchange with it)."""
        self._streams.pop(id(exchange), None)

    def rows(self, now: float, active: Iterable[ActiveStream], known_keys: Iterable[str]) -> list[dict[str, Any]]:
        """One row per stream being played now, oldest first, keys masked."""
        self.sweep()
        playing = {id(stream.source): stream for stream in active}
        masker = Masker(known_keys)
        rows = []
        for live in self._streams.values():
            stream = playing.get(id(live.source))
            if stream is not None:
                rows.append(_row(live, stream, now, masker))
                if len(rows) >= MAX_ROWS:
                    break
        return rows


def progress(schedule: Schedule, stream: ActiveStream, now: float) -> tuple[int, float]:
    """Tokens the scheduler has written so far, and how many seconds it is behind the stream's schedule
    as anchored at its first token (``ActiveStream.shift``: a late first token moves every deadline)."""
    planned = schedule.total_tokens
    if stream.ending or stream.over:
        return planned, 0.0
    due = _next_deadline(stream)  # on the schedule's own scale
    if due == math.inf or due <= 0.0:  # a stall until the client leaves, or nothing scheduled yet
        return (planned, 0.0) if stream.due >= schedule.end else (0, 0.0)
    late = 0.0 if stream.blocked else max(0.0, now - stream.shift - due)  # a blocked stream waits for its client
    if due >= schedule.end:  # only the closing events are left
        return planned, late
    # The next frame carries token k, due at first_token_at + k * interval plus a jitter of at most half an
    # interval: k tokens are out, and rounding finds k without reading the jitter.
    interval = schedule.interval
    sent = planned if interval <= 0 else min(planned, max(0, round((due - schedule.first_token_at) / interval)))
    return sent, late


def _next_deadline(stream: ActiveStream) -> float:
    """The deadline, on the schedule's scale, of the next frame the scheduler has not written."""
    run = stream.run
    if run is not None and stream.at < len(run.dues):
        return run.dues[stream.at]
    if stream.pending != math.inf:
        return stream.pending
    return stream.due - stream.shift if stream.due != math.inf else math.inf


def _row(live: LiveStream, stream: ActiveStream, now: float, masker: Masker) -> dict[str, Any]:
    ex, schedule = live.exchange, live.schedule
    sent, late = progress(schedule, stream, now)
    first = ex.first_token_at
    fixed = live.fixed
    if fixed is None:
        fixed = _fixed(live, first, masker)
        if first is not None:  # the TTFT is known from now on: the rest of the row is worked out per update
            live.fixed = fixed
    achieved = None
    if first is not None and sent > 1 and now > first:
        achieved = round((sent - 1) / (now - first), 2)
    return {
        **fixed,
        "achieved_rate": achieved,
        "tokens_sent": sent,
        "late_ms": round(late * 1000, 1),
        "first_token_late_ms": round(stream.shift * 1000, 1) if stream.anchored else None,
        "client_slow": stream.blocked,
        "age_s": round(now - ex.started_at, 3),
    }


def _fixed(live: LiveStream, first: float | None, masker: Masker) -> dict[str, Any]:
    ex, schedule = live.exchange, live.schedule
    key = request_key(ex.headers)
    return {
        "id": ex.request_id,
        "path": ex.path,
        "model": ex.model,
        "tier": ex.tier,
        "key": masker.secret_value(key) if key else None,
        "test_id": _test_id(ex, masker),
        "target_rate": round(1 / schedule.interval, 2) if schedule.interval > 0 else None,
        "tokens_planned": schedule.total_tokens,
        "ttft_ms": None if first is None else round((first - ex.started_at) * 1000, 1),
        "process": os.getpid(),  # with --workers, which worker plays it
    }


def _test_id(exchange: Exchange, masker: Masker) -> str | None:
    test_id = exchange.headers.get(TEST_ID_HEADER)
    return masker.text(test_id) if test_id else None
