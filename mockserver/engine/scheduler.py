"""The stream scheduler: one timer per server paces every open SSE stream.

A stream is a plain iterator of :data:`~mockserver.engine.streaming.Item`: a ``float``
says "what follows is due at this time" (on the server's clock), ``bytes`` is an
encoded event, :data:`~mockserver.engine.streaming.DROP` closes the connection under
the reply. The producers (``stream_chunks`` in Chat Completions, ``event_items`` in the
Responses API) encode each frame before they yield its deadline, so when a deadline
comes the frame is already bytes.

:class:`StreamScheduler` keeps every open stream in a deadline heap and arms one timer,
for the earliest deadline. When it fires it takes every stream that is due, pulls its
frames that may go out (see :mod:`.catch_up`: anchored at the first token, caught up no faster
than ``CATCH_UP`` times the rate), and hands them to the stream's ``send`` in one ASGI message: one
``transport.write`` however many events fell due, each its own event (the client sees no merged
chunks). Deadlines are absolute (``start + ttft + k / rate``), so nothing drifts.

Compared with one sleeping task per stream, this saves a timer, a future and a task
switch per token per stream: the event loop wakes once per tick, not once per token.

A tick never takes the loop for good: after a tick that took *d*, the next one waits at least
*d* (at most :data:`MAX_YIELD_S`), so new requests, reads and disconnects get their turn
however many streams are due. With a few streams a tick takes microseconds and nothing
changes: each event goes out at its deadline. With hundreds, the events that fall due
meanwhile go out in the next tick, each as its own event, one write per stream: fewer
writes and heap operations per event, which is what lets one core carry them.

First tokens before later ones: while streams are opening (one opened within the last
:data:`OPENING_S`: a burst, or a steady flow of new requests), the next tick waits
:data:`OPENING_YIELD` times as long as the last one took, at most :data:`MAX_OPENING_YIELD_S`, and
never so long that an event due as a tick began would wait past
:data:`~mockserver.engine.catch_up.LATE_TOLERANCE_S` (that tick, the wait, and its turn in the next:
see :func:`loop_turn`). New requests then reach their first tokens sooner, and the streams already
running send what fell due meanwhile in fewer writes; their events stay within the late tolerance,
so none is held to the catch-up line by it, and their pace is kept.

Events before ends: ending a reply (the journal, the ledger, the metrics, then the handler
and the connection) costs some hundred times an event. Streams that run out in a tick are
ended after every due event of the tick is out, for at most :data:`ENDS_PER_TICK_S` per tick,
the rest at the next. Their last events (the final chunk, ``[DONE]``) went out on time; only
the end of the body waits. So many streams ending together do not hold up the last tokens of
the others.

Bounds, per stream:

- one write carries at most :data:`MAX_WRITE_BYTES` and :data:`MAX_WRITE_EVENTS`; a stream
  with more due goes on at the next tick, after every other due stream;
- a write that the server holds back (the client stopped reading and uvicorn's
  transport is paused) parks that stream alone until the write completes; no further
  frame is pulled for it meanwhile, so a slow client costs at most the transport's
  buffer plus one write, and every other stream goes on;
- a stream whose client leaves is dropped from the scheduler at once (see
  :meth:`StreamScheduler.cancel`), its iterator is closed (its ``finally`` blocks run:
  that is where capacity is released), and nothing of it stays behind
  (:mod:`.stream_writes`).

How late the streams run is counted in :attr:`StreamScheduler.lateness` (:mod:`.lateness`).

Ending every stream at once: :attr:`StreamScheduler.active` holds the open streams.
:meth:`StreamScheduler.end_all` (what a stopping server calls after its grace period)
writes each one the ``server_shutting_down`` error event of its API
(:meth:`mockserver.engine.dialects.Dialect.shutdown_event`), ends the response, and from then
on ends every new stream the same way at once. :meth:`StreamScheduler.finish_all` is
the general form: a final event of the caller's choosing per stream (from
:attr:`ActiveStream.dialect`, :attr:`ActiveStream.path`, :attr:`ActiveStream.events_sent`).
Either way each stream's producer is closed (capacity released), its handler returns,
and the journal shows the reply as not completed.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterator

from mockserver.engine import catch_up
from mockserver.engine.active_stream import ActiveStream, ReplyLimits, Send
from mockserver.engine.catch_up import LATE_TOLERANCE_S
from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.lateness import BUCKETS as LATENESS_BUCKETS
from mockserver.engine.lateness import Lateness
from mockserver.engine.pacing import Clock
from mockserver.engine.stream_writes import StreamWrites
from mockserver.engine.streaming import (
    COMPLETED,
    DROP,
    FAILED,
    Item,
    Run,
)

logger = logging.getLogger("mockserver")

__all__ = [
    "ENDS_PER_TICK_S",
    "MAX_OPENING_YIELD_S",
    "MAX_WRITE_BYTES",
    "MAX_WRITE_EVENTS",
    "MAX_YIELD_S",
    "OPENING_S",
    "OPENING_YIELD",
    "StreamScheduler",
    "loop_turn",
]

MAX_WRITE_BYTES = 64 * 1024  # at most this much per stream per write; the rest goes at the next tick
MAX_WRITE_EVENTS = 256  # at most this many events per stream per write; the rest goes at the next tick
MAX_YIELD_S = 0.001  # a tick leaves the loop to other work for as long as it took, up to this
OPENING_S = 0.02  # streams count as opening for this long after one opened
OPENING_YIELD = 4  # while streams are opening, a tick leaves the loop this many times as long as it took,
MAX_OPENING_YIELD_S = 0.008  # up to this (and within LATE_TOLERANCE_S: see loop_turn)
ENDS_PER_TICK_S = 0.001  # a tick ends replies for at most this long, after every due event is out


class StreamScheduler(StreamWrites):
    """Plays every open stream of one server on one timer. Lives on one event loop."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.active: set[ActiveStream] = set()
        self._heap: list[tuple[float, int, ActiveStream]] = []
        self._order = itertools.count()  # breaks ties between equal deadlines, first come first served
        self._timer: asyncio.Handle | None = None
        self._timer_at = math.inf
        self._not_before = -math.inf  # the next tick waits for this: see _tick
        self._ending: deque[ActiveStream] = deque()  # streams whose every event is out, to end after them
        self._ticking = False
        self.stopping = False  # set by end_all(): new streams end at once with the shutdown event
        # Set when the end of a reply may wait on a shared store (--state redis://): see _end.
        self.ends_in_task = False
        # The wall-clock limit on one stream (Settings.max_reply_seconds): past it, it ends with an error event.
        self.max_reply_s: float | None = None
        self.limits = ReplyLimits(self._time_limit)  # every open stream held to max_reply_s, on one timer
        self.on_change: Callable[[], None] | None = None  # told when a stream opens or ends (a metrics gauge)
        # What a stream's watch calls when its client leaves: one bound method for every stream, as each
        # ``self.cancel`` makes a new one, kept by its watch for as long as the stream plays (one more object
        # per open stream for the garbage collector's passes).
        self.client_left: Callable[[ActiveStream], None] = self.cancel
        self.lateness = Lateness()
        self._tick_now = -math.inf  # the tick's time while it runs: a stream due again by then waits for the next
        self._opened_at = -math.inf  # when the last stream opened: see loop_turn
        self._dead = 0  # about how many heap entries belong to streams that are over (see _close)

    def __len__(self) -> int:
        return len(self.active)

    def worst_lateness(self) -> float:
        """Seconds: the worst lateness of the last second or so (see :class:`Lateness`), or how long
        the most overdue stream has been waiting for its turn now, whichever is more."""
        heap, now = self._heap, self.clock.now()
        while heap and heap[0][2].over:
            heapq.heappop(heap)
        waiting = now - heap[0][0] if heap and not heap[0][2].blocked else 0.0
        return max(self.lateness.worst(), waiting)

    def open(
        self,
        source: Iterator[Item],
        *,
        send_body: Send,
        send_end: Send,
        on_drop: Callable[[], None] | None = None,
        path: str = "",
        dialect: Dialect = CHAT,
        write_body: Callable[[bytes], bool] | None = None,
    ) -> ActiveStream:
        """Start playing ``source``. Whatever is due already goes out now, before this returns.

        ``write_body(body)``, if given, writes a body chunk without a message or a coroutine and
        says whether it did (see :func:`mockserver.api.asgi.transport.direct_body_writer`).
        """
        loop = asyncio.get_running_loop()
        stream = ActiveStream(source, send_body, send_end, on_drop, path, dialect, write_body, loop.create_future())
        self.active.add(stream)
        if self.on_change is not None:
            self.on_change()
        if self.stopping:
            self._finish(stream, _shutdown_event)
            return stream
        if self.max_reply_s is not None:
            self.limits.watch(stream, self.max_reply_s, loop)
        self._opened_at = now = self.clock.now()
        self._advance(stream, now)
        return stream

    def _time_limit(self, stream: ActiveStream) -> None:
        limit = self.max_reply_s or 0.0  # its API's time-limit event: open for as long as the server allows
        self._finish(stream, lambda s: s.dialect.time_limit_event(s.events_sent, limit))

    def end_all(self) -> int:
        """End every open stream now with the ``server_shutting_down`` error event of its API, and
        every stream opened from now on too. Returns how many were ended."""
        self.stopping = True
        return self.finish_all(_shutdown_event)

    def finish_all(self, final: Callable[[ActiveStream], bytes | None] | None = None) -> int:
        """End every open stream now: write ``final(stream)`` if it gives bytes, then end the response.

        Returns how many streams were ended. Each stream's handler returns once its end is written.
        """
        streams = list(self.active)
        for stream in streams:
            self._finish(stream, final)
        return len(streams)

    # -- the tick ------------------------------------------------------------------------------

    def _tick(self) -> None:
        self._timer, self._timer_at = None, -math.inf  # -inf: no arming while the tick runs
        now = started = self.clock.now()
        heap, order = self._heap, self._order
        heappop, heappush = heapq.heappop, heapq.heappush
        lateness = self.lateness
        counts, buckets = lateness.events.counts, LATENESS_BUCKETS
        worst = 0.0
        clock_now = self.clock.now
        self._ticking = True
        self._tick_now = started
        try:
            # The streams due when the tick began; each is served at the time it is reached, so a
            # long tick neither sends a later stream's events early nor counts them as on time.
            while heap and heap[0][0] <= started:
                _, _, stream = heappop(heap)
                if stream.over or stream.blocked:
                    continue
                now = clock_now()
                try:
                    run = stream.run
                    if run is not None and stream.steady:
                        # The usual case, written out: one event of a run is due, on time, and the next is not yet.
                        at = stream.at
                        dues = run.dues
                        shift = stream.shift
                        late = now - shift - dues[at]
                        if at + 1 < len(dues) and 0.0 <= late <= LATE_TOLERANCE_S and now < dues[at + 1] + shift:
                            write = stream.write_body
                            if write is not None and write(run.frames[at]):
                                stream.at = at + 1
                                stream.events_sent += 1
                                stream.due = due = dues[at + 1] + shift
                                heappush(heap, (due, next(order), stream))
                                counts[bisect_left(buckets, late)] += 1
                                lateness.events.total += late
                                if late > worst:
                                    worst = late
                                continue
                    self._advance(stream, now)
                except Exception as exc:  # a write that failed in a way no client causes: this stream alone ends
                    self._write_failed(stream, exc)
            self._ticking = False
            lateness.saw(worst)
            lateness.tick(started)
            if self._ending:
                self._end_some(self.clock.now() + ENDS_PER_TICK_S)
        finally:
            self._ticking = False
            self._tick_now = -math.inf
            self._timer_at = math.inf
            ended = self.clock.now()
            self._not_before = ended + loop_turn(ended - started, opening=ended - self._opened_at < OPENING_S)
            self._arm()  # once, for the earliest deadline left

    def _end_some(self, until: float) -> None:
        """End the replies whose every event is out, oldest first, until the clock reaches ``until``;
        the rest wait for the next tick."""
        ending, clock = self._ending, self.clock
        while ending:
            stream = ending.popleft()
            if stream.ending and not stream.over:
                self._end_waiting(stream)
                if clock.now() >= until:
                    break

    def _arm(self) -> None:
        heap = self._heap
        while heap and heap[0][2].over:
            heapq.heappop(heap)
        at = heap[0][0] if heap else math.inf
        if self._ending:  # ends left over: the next tick as soon as the loop has had its turn
            at = min(at, self._not_before)
        if at == math.inf:
            return
        at = max(at, self._not_before)
        if at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._timer_at = self.clock.call_at(at, self._tick), at

    def _schedule(self, stream: ActiveStream, due: float) -> None:
        if due <= self._tick_now:  # more was due than one write holds: the rest after the others' turn
            due = math.nextafter(self._tick_now, math.inf)
        stream.due = due
        heapq.heappush(self._heap, (due, next(self._order), stream))
        if due < self._timer_at:
            self._arm()

    def _advance(self, stream: ActiveStream, now: float) -> None:
        """Write every frame of ``stream`` that may go out by ``now``, in one write; then wait for its next deadline.

        What may go out: see :meth:`_horizon`. Deadlines are on the schedule's scale; the stream's
        own (anchored, caught-up) time of a deadline is :meth:`_wall`."""
        parts: list[bytes] = []
        size = 0
        due = math.inf
        horizon: float | None = None  # set at the first deadline met
        ended = dropped = False
        run = stream.run
        if run is not None:  # part way through a run of events: the usual case of a long stream
            horizon = catch_up.horizon(stream, now, run.dues[stream.at], self.lateness)
            size, due = self._take(stream, run, stream.at, horizon, parts, 0)
            if due != math.inf:  # more of the run to come, or the write is full
                self._write_due(stream, parts, catch_up.wall_time(stream, due, now))
                return
        elif stream.pending != math.inf:  # the deadline the producer gave last, already taken from it
            pending = stream.pending
            horizon = catch_up.horizon(stream, now, pending, self.lateness)
            if pending > horizon:  # not yet (a held-back write that has just gone out)
                self._schedule(stream, catch_up.wall_time(stream, pending, now))
                return
            stream.pending = math.inf
        source = stream.source
        try:
            for item in source:
                cls = item.__class__
                if cls is float:
                    if horizon is None:
                        horizon = catch_up.horizon(stream, now, item, self.lateness)  # type: ignore[arg-type]
                    if item > horizon:  # type: ignore[operator]
                        stream.pending = due = item  # type: ignore[assignment]
                        break
                elif cls is Run:
                    if horizon is None and item.dues:  # type: ignore[union-attr]
                        horizon = catch_up.horizon(stream, now, item.dues[0], self.lateness)  # type: ignore[union-attr]
                    limit = now if horizon is None else horizon
                    size, due = self._take(stream, item, 0, limit, parts, size)  # type: ignore[arg-type]
                    if due != math.inf:
                        break
                elif item is DROP:
                    dropped = True
                    break
                else:
                    parts.append(item)  # type: ignore[arg-type]
                    size += len(item)  # type: ignore[arg-type]
                    if size >= MAX_WRITE_BYTES or len(parts) >= MAX_WRITE_EVENTS:
                        due = -math.inf  # the rest at the next tick
                        break
            else:
                ended = True
        except Exception as exc:  # a bug in a producer: fail this stream, not the server
            logger.exception("stream producer failed on %s", stream.path)
            self._close(stream, FAILED, exc)
            return
        if parts:
            stream.events_sent += len(parts)
            self._write(stream, parts[0] if len(parts) == 1 else b"".join(parts))
            if stream.over:
                return  # the write found the client gone
        if dropped:
            self._drop(stream)
        elif stream.blocked:
            pass  # goes on (or ends: the iterator stays exhausted) once the held-back write is done
        elif ended and self._ticking:
            # Ended after every other stream's due events in this tick: ending a reply (the journal,
            # the ledger, the metrics, the connection) costs far more than an event, and a burst
            # of streams ending together would otherwise hold up the last tokens of the others.
            stream.ending = True
            self._ending.append(stream)
        elif ended:
            self._end(stream, COMPLETED)
        elif due != math.inf:
            self._schedule(stream, catch_up.wall_time(stream, due, now))
        # A due of inf (a stall until the client leaves) waits for cancel().

    @staticmethod
    def _take(
        stream: ActiveStream, run: Run, at: int, horizon: float, parts: list[bytes], size: int
    ) -> tuple[int, float]:
        """Add the frames of ``run`` from ``at`` whose deadlines are by ``horizon`` to ``parts`` (within
        :data:`MAX_WRITE_BYTES` and :data:`MAX_WRITE_EVENTS`). Returns the new size and the next
        deadline: ``inf`` when the run is used up (the producer comes next), ``-inf`` when the write is full."""
        dues = run.dues
        end = bisect_right(dues, horizon, at)
        if end > at:
            frames = run.frames
            if end == at + 1:  # one event per tick: the usual case
                frame = frames[at]
                parts.append(frame)
                size += len(frame)
            else:
                room = MAX_WRITE_EVENTS - len(parts)
                if end - at > room:
                    end = at + max(room, 0)
                for index in range(at, end):
                    frame = frames[index]
                    parts.append(frame)
                    size += len(frame)
                    if size >= MAX_WRITE_BYTES and index + 1 < end:
                        end = index + 1
                        break
                if end < len(dues) and dues[end] <= horizon:
                    stream.run, stream.at = run, end
                    return size, -math.inf  # the rest at the next tick
        if end < len(dues):
            stream.run, stream.at = run, end
            return size, dues[end]
        stream.run = None
        return size, math.inf

    def _write_due(self, stream: ActiveStream, parts: list[bytes], due: float) -> None:
        """Write ``parts`` (if any) and wait for ``due``: the short way through :meth:`_advance`."""
        if parts:
            stream.events_sent += len(parts)
            self._write(stream, parts[0] if len(parts) == 1 else b"".join(parts))
            if stream.over or stream.blocked:
                return  # the write found the client gone, or is held back (it reschedules when done)
        self._schedule(stream, due)


def loop_turn(took: float, *, opening: bool) -> float:
    """How long the loop has for its other work after a tick that took ``took``, however much is due:
    as long as the tick took, at most :data:`MAX_YIELD_S`. While streams are ``opening``,
    :data:`OPENING_YIELD` times as long, at most :data:`MAX_OPENING_YIELD_S`, and at most what keeps an
    event due as the tick began within :data:`LATE_TOLERANCE_S`: it waits for the rest of that tick,
    this turn, and its place in the next tick (about as long again), so the turn is held to
    ``LATE_TOLERANCE_S - 2 * took``, and never below the usual one."""
    usual = min(took, MAX_YIELD_S)
    if not opening:
        return usual
    return max(usual, min(OPENING_YIELD * took, MAX_OPENING_YIELD_S, LATE_TOLERANCE_S - 2 * took))


def _shutdown_event(stream: ActiveStream) -> bytes:
    return stream.dialect.shutdown_event(stream.events_sent)
