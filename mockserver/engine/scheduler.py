"""The stream scheduler: one timer per server paces every open SSE stream.

A stream is a plain iterator of :data:`~mockserver.engine.streaming.Item`: a ``float``
says "what follows is due at this time" (on the server's clock), ``bytes`` is an
encoded event, :data:`~mockserver.engine.streaming.DROP` closes the connection under
the reply. The producers (``stream_chunks`` in Chat Completions, ``event_items`` in the
Responses API) encode each frame before they yield its deadline, so when a deadline
comes the frame is already bytes.

:class:`StreamScheduler` keeps every open stream in a deadline heap and arms one timer,
for the earliest deadline. When it fires it takes every stream that is due, pulls its
frames up to its next deadline, and hands them to the stream's ``send`` in one ASGI
message: one ``transport.write`` however many events fell due. A loop that wakes late
therefore still sends one event per chunk (the client sees no merged chunks), and the
rate stays exact, because deadlines are absolute (``start + ttft + k / rate``).

Compared with one sleeping task per stream, this saves a timer, a future and a task
switch per token per stream: the event loop wakes once per tick, not once per token.

A tick never takes the loop for good: after a tick that took *d*, the next one waits at least
*d* (at most :data:`MAX_YIELD_S`), so new requests, reads and disconnects get their turn
however many streams are due. With a few streams a tick takes microseconds and nothing
changes: each event goes out at its deadline. With hundreds, the events that fall due
meanwhile go out in the next tick, each as its own event, one write per stream: fewer
writes and heap operations per event, which is what lets one core carry them.

Events before ends: ending a reply (the journal, the ledger, the metrics, then the handler
and the connection) costs some hundred times an event. Streams that run out in a tick are
ended after every due event of the tick is out, for at most :data:`ENDS_PER_TICK_S` per tick,
the rest at the next. Their last events (the final chunk, ``[DONE]``) went out on time; only
the end of the body waits. So many streams ending together do not hold up the last tokens of
the others.

Bounds, per stream:

- one write carries at most :data:`MAX_WRITE_BYTES`; a stream with more due goes on
  at the next tick;
- a write that the server holds back (the client stopped reading and uvicorn's
  transport is paused) parks that stream alone until the write completes; no further
  frame is pulled for it meanwhile, so a slow client costs at most the transport's
  buffer plus one write, and every other stream goes on;
- a stream whose client leaves is dropped from the scheduler at once (see
  :meth:`StreamScheduler.cancel`), its iterator is closed (its ``finally`` blocks run:
  that is where capacity is released), and nothing of it stays behind.

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
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from mockserver.engine.dialects import CHAT, Dialect
from mockserver.engine.lateness import BUCKETS as LATENESS_BUCKETS
from mockserver.engine.lateness import LATE_S, Lateness
from mockserver.engine.pacing import Clock
from mockserver.engine.streaming import (
    CLIENT_LEFT,
    COMPLETED,
    DROP,
    DROPPED,
    FAILED,
    FINISHED,
    Item,
    Run,
)

logger = logging.getLogger("mockserver")

MAX_WRITE_BYTES = 64 * 1024  # at most this much per stream per write; the rest goes at the next tick
MAX_WRITE_EVENTS = 256  # at most this many events per stream per write; the rest goes at the next tick
# A stream more than this behind its schedule catches up at CATCH_UP times its rate, no faster;
# within it, what is due goes out at once (a late tick's worth: a busy loop's ticks come late).
LATE_TOLERANCE_S = 0.005
# 1.2, not 1.25: with one tolerance's burst on top, any run of events whose deadlines span at least
# RATE_WINDOW_S still goes out at most 1.25x as fast as its deadlines ask (see docs/limits.md).
CATCH_UP = 1.2
RATE_WINDOW_S = 0.15  # LATE_TOLERANCE_S / (1 / CATCH_UP - 1 / 1.25)
MAX_YIELD_S = 0.001  # a tick leaves the loop to other work for as long as it took, up to this
ENDS_PER_TICK_S = 0.001  # a tick ends replies for at most this long, after every due event is out

Send = Callable[[dict[str, Any]], Awaitable[None]]


class ActiveStream:
    """One open stream: its producer, where its frames go, and when it is next due."""

    __slots__ = (
        "anchored",
        "at",
        "blocked",
        "dialect",
        "done",
        "due",
        "ending",
        "events_sent",
        "failed_write",
        "late_period",
        "limit_timer",
        "line",
        "on_drop",
        "over",
        "path",
        "pending",
        "run",
        "send_body",
        "send_end",
        "shift",
        "source",
        "steady",
        "write_body",
    )

    def __init__(
        self,
        source: Iterator[Item],
        send_body: Send,
        send_end: Send,
        on_drop: Callable[[], None] | None,
        path: str,
        dialect: Dialect,
        write_body: Callable[[bytes], bool] | None,
        done: asyncio.Future[str],
    ) -> None:
        self.source = source
        self.send_body = send_body  # the server's own send: events skip the middleware stack
        self.send_end = send_end  # through the middleware, so observers see the end of the reply
        # The server's direct write, when it has one: True if it wrote, False to use send_body.
        self.write_body = write_body
        self.on_drop = on_drop
        self.path = path  # the request path
        self.dialect = dialect  # its API's framing, for a final event the server sends
        self.due = 0.0
        self.done = done  # resolved with the outcome (COMPLETED, CLIENT_LEFT, ...) when the stream is over
        self.blocked = False  # a write is held back by the server (a paused transport)
        self.ending = False  # every event is out; the end of the reply waits for the tick's ends (see _tick)
        self.over = False
        self.events_sent = 0
        self.run: Run | None = None  # a run of events part way through, from its frame ``at`` on
        self.at = 0
        self.limit_timer: asyncio.TimerHandle | None = None  # ends the stream at the wall-clock limit
        # Where the schedule is anchored (see "Never faster than the rate" above): every deadline
        # of the stream goes out ``shift`` later, fixed when its first deadline is met.
        self.anchored = False
        self.shift = 0.0
        # The catch-up line: deadline d goes out no sooner than line + d / CATCH_UP. -inf: not catching up.
        self.line = -math.inf
        self.steady = False  # anchored and not catching up: the tick's short way applies
        self.late_period = 0  # see Lateness.late
        self.pending = math.inf  # the deadline (of the producer's, not a run's) the stream waits for; inf: none
        self.failed_write = False


class StreamScheduler:
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
        self.on_change: Callable[[], None] | None = None  # told when a stream opens or ends (a metrics gauge)
        self.lateness = Lateness()
        self._tick_now = -math.inf  # the tick's time while it runs: a stream due again by then waits for the next
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
        says whether it did (see :func:`mockserver.api.middleware.direct_body_writer`).
        """
        done = asyncio.get_running_loop().create_future()
        stream = ActiveStream(source, send_body, send_end, on_drop, path, dialect, write_body, done)
        self.active.add(stream)
        if self.on_change is not None:
            self.on_change()
        if self.stopping:
            self._finish(stream, _shutdown_event)
            return stream
        if self.max_reply_s is not None:
            limit = self.max_reply_s
            stream.limit_timer = asyncio.get_running_loop().call_later(
                limit, self._finish, stream, lambda s: s.dialect.time_limit_event(s.events_sent, limit)
            )
        self._advance(stream, self.clock.now())
        return stream

    def cancel(self, stream: ActiveStream, outcome: str = CLIENT_LEFT) -> None:
        """Stop a stream now (its client left): nothing more is written and its producer is closed.

        A stream whose every event is out, waiting for its end (see :meth:`_tick`), ends as it
        would have, COMPLETED: its reply was whole, and the journal and the ledger say so."""
        if stream.ending:
            self._end_waiting(stream)
        elif not stream.over:
            self._close(stream, outcome)

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

    def _finish(self, stream: ActiveStream, final: Callable[[ActiveStream], bytes | None] | None) -> None:
        if stream.ending:  # every event is out already: it ends as it would have
            self._end_waiting(stream)
            return
        if stream.blocked:  # the client is not reading: nothing more can reach it
            self._close(stream, FINISHED)
            return
        body = final(stream) if final is not None else None
        if body:
            stream.events_sent += 1
            self._write(stream, body)
        if stream.blocked:
            self._close(stream, FINISHED)
        elif not stream.over:
            self._end(stream, FINISHED)

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
            # The loop gets at least as long as this tick took before the next one, however much is due:
            ended = self.clock.now()
            self._not_before = ended + min(ended - started, MAX_YIELD_S)
            self._arm()  # once, for the earliest deadline left

    def _end_waiting(self, stream: ActiveStream) -> None:
        """End a stream whose every event is out and whose end was waiting (see :meth:`_tick`): COMPLETED."""
        stream.ending = False
        self._end(stream, COMPLETED)

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
            horizon = self._horizon(stream, now, run.dues[stream.at])
            size, due = self._take(stream, run, stream.at, horizon, parts, 0)
            if due != math.inf:  # more of the run to come, or the write is full
                self._write_due(stream, parts, self._wall(stream, due, now))
                return
        elif stream.pending != math.inf:  # the deadline the producer gave last, already taken from it
            pending = stream.pending
            horizon = self._horizon(stream, now, pending)
            if pending > horizon:  # not yet (a held-back write that has just gone out)
                self._schedule(stream, self._wall(stream, pending, now))
                return
            stream.pending = math.inf
        source = stream.source
        try:
            for item in source:
                cls = item.__class__
                if cls is float:
                    if horizon is None:
                        horizon = self._horizon(stream, now, item)  # type: ignore[arg-type]
                    if item > horizon:  # type: ignore[operator]
                        stream.pending = due = item  # type: ignore[assignment]
                        break
                elif cls is Run:
                    if horizon is None and item.dues:  # type: ignore[union-attr]
                        horizon = self._horizon(stream, now, item.dues[0])  # type: ignore[union-attr]
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
            self._schedule(stream, self._wall(stream, due, now))
        # A due of inf (a stall until the client leaves) waits for cancel().

    def _horizon(self, stream: ActiveStream, now: float, first: float) -> float:
        """The latest deadline of ``stream`` that may go out at ``now``; ``first`` is its next deadline.

        - The first deadline a stream meets (its first token's: the events before it go out at
          once) anchors its schedule where it really goes out: if late, every later deadline
          moves by as much (``shift``). A late first token never compresses the stream.
        - Later, a deadline goes out at its anchored time (``deadline + shift``) or after. A stream
          that is more than :data:`LATE_TOLERANCE_S` behind (a busy loop, a reader that paused)
          catches up along a line of slope ``1 / CATCH_UP`` that starts here: never faster than
          :data:`CATCH_UP` times its rate, and pacing stays absolute once it has caught up.
        """
        if not stream.anchored:
            if first > now:
                return now  # not due yet: anchored when it is
            late = now - first
            stream.anchored, stream.shift, stream.steady = True, late, True
            self.lateness.first(late)
            if late > LATE_S:
                stream.late_period = self.lateness.late(late, stream.late_period)
            return first
        shift, line = stream.shift, stream.line
        at = first + shift
        if line != -math.inf:
            caught_up = line + first / CATCH_UP
            if caught_up <= at:  # the line no longer binds, from this deadline on
                stream.line = line = -math.inf
                stream.steady = True
            else:
                at = caught_up
        behind = now - at
        if behind > LATE_TOLERANCE_S:
            stream.line = line = now - LATE_TOLERANCE_S - first / CATCH_UP
            stream.steady = False
        if behind >= 0.0:
            late = now - first - shift  # against the schedule itself
            self.lateness.event(late)
            if late > LATE_S:
                stream.late_period = self.lateness.late(late, stream.late_period)
        return min(now - shift, (now - line) * CATCH_UP)

    @staticmethod
    def _wall(stream: ActiveStream, due: float, now: float) -> float:
        """When deadline ``due`` of ``stream`` may go out, on the server's clock (``-inf``: at the next tick)."""
        if due == -math.inf:
            return now
        at = due + stream.shift
        line = stream.line
        if line != -math.inf:
            at = max(at, line + due / CATCH_UP)
        return at

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

    # -- writing without awaiting --------------------------------------------------------------

    def _write(self, stream: ActiveStream, body: bytes) -> None:
        try:
            if stream.write_body is not None and stream.write_body(body):
                return
            send = stream.send_body({"type": "http.response.body", "body": body, "more_body": True})
        except Exception as exc:
            self._write_failed(stream, exc)
            return
        self._step(stream, send, None)

    def _write_failed(self, stream: ActiveStream, exc: Exception) -> None:
        """A write raised something no client causes (a bug): end this stream alone, cleanly.

        It gets the server error event of its API, then its end (so its capacity is given back
        and the journal records it, not completed); if writing that fails too, it is closed."""
        if stream.over:
            return
        logger.error("writing to a stream failed on %s; that stream ends", stream.path, exc_info=exc)
        if stream.failed_write:
            self._close(stream, FAILED)
            return
        stream.failed_write = True
        stream.blocked = False
        stream.write_body = None  # the error event goes through the server's own send
        self._finish(stream, _write_failed_event)

    def _end(self, stream: ActiveStream, outcome: str) -> None:
        """End the response; the stream is over (and its handler may return) once the end is written.

        With a shared store (``ends_in_task``), the end goes through the middleware, whose observers
        await the store (the ledger and the journal on Redis), and that needs a task. Inside one (a
        stream whose events were all due at once, in its handler's ``open``) the end is written at
        once; from the tick, a plain timer callback, or while the server stops, a task of its own
        writes it. In memory, the end is written at once from anywhere, as nothing in it waits."""
        message = {"type": "http.response.body", "body": b"", "more_body": False}
        if not self.ends_in_task or (asyncio.current_task() is not None and not self.stopping):
            self._step(stream, stream.send_end(message), outcome)
            return
        self.active.discard(stream)
        stream.blocked = True
        task = asyncio.ensure_future(self._write_end(stream, message, outcome))
        task.add_done_callback(_log_failure)

    async def _write_end(self, stream: ActiveStream, message: dict[str, Any], outcome: str) -> None:
        try:
            await stream.send_end(message)
        except OSError:  # the client went away just now
            outcome = CLIENT_LEFT
        finally:  # whatever happened, the stream is over and its handler returns
            self.cancel(stream, outcome)

    def _step(self, stream: ActiveStream, coro: Awaitable[None], ending: str | None) -> None:
        """Run ``send`` without a task: it returns at once unless the server applies back-pressure.

        uvicorn's ``send`` only suspends while the transport is paused (the client's buffer is
        full). Then the stream is parked and the rest of the write runs in a task of its own.
        ``ending`` is the outcome to close the stream with once this (last) write is done.
        """
        try:
            waiting = coro.send(None)  # type: ignore[attr-defined]
        except StopIteration:
            if ending is not None:
                self._close(stream, ending)
            return
        except OSError:  # the client went away mid-write
            self.cancel(stream)
            return
        except Exception as exc:
            self._write_failed(stream, exc)
            return
        stream.blocked = True
        task = asyncio.ensure_future(self._finish_write(stream, coro, waiting, ending))
        task.add_done_callback(_log_failure)

    async def _finish_write(self, stream: ActiveStream, coro: Any, waiting: Any, ending: str | None) -> None:
        try:
            while True:
                # A future the send yielded (the transport resuming). It is still marked as being
                # awaited by whoever stepped the coroutine (us): clear that, as a Task would.
                waiting._asyncio_future_blocking = False
                await waiting
                try:
                    waiting = coro.send(None)
                except StopIteration:
                    break
        except OSError:
            self.cancel(stream)
            return
        except Exception as exc:
            stream.blocked = False
            self._write_failed(stream, exc)
            return
        finally:
            if stream.over:
                coro.close()
        stream.blocked = False
        if ending is not None:
            self.cancel(stream, ending)
        elif not stream.over:
            self._schedule(stream, self.clock.now())

    # -- ending ----------------------------------------------------------------------------------

    def _forget(self, stream: ActiveStream) -> None:
        """A stream is over: its heap entry, if it has one, is skipped when popped, at no cost.
        Once such entries make up half the heap, the heap is rebuilt without them, so a crowd of
        streams cancelled while they wait for a distant deadline (a 600 s TTFT) holds nothing."""
        if stream.due > self.clock.now():
            self._dead += 1
            heap = self._heap
            if self._dead > 64 and 2 * self._dead > len(heap):
                heap[:] = [entry for entry in heap if not entry[2].over]
                heapq.heapify(heap)
                self._dead = 0

    def _drop(self, stream: ActiveStream) -> None:
        try:
            if stream.on_drop is None:
                raise ConnectionAbortedError("mockserver fault: connection dropped")
            stream.on_drop()
        except Exception as exc:
            self._close(stream, FAILED, exc)
            return
        self._close(stream, DROPPED)

    def _close(self, stream: ActiveStream, outcome: str, error: BaseException | None = None) -> None:
        stream.over = True
        if stream.limit_timer is not None:
            stream.limit_timer.cancel()
            stream.limit_timer = None
        self.active.discard(stream)
        if self.on_change is not None:
            self.on_change()
        source = stream.source
        # What the stream held goes now, though its heap entry waits (see _forget): the producer
        # (its plan and text), its run, the connection's functions.
        stream.source, stream.run = _NOTHING, None
        stream.write_body = stream.on_drop = None
        stream.send_body = stream.send_end = _nowhere
        self._forget(stream)
        close = getattr(source, "close", None)
        if close is not None:
            try:
                close()  # runs the producer's finally blocks: capacity is released there
            except Exception:
                logger.exception("closing a stream producer failed on %s", stream.path)
        if not stream.done.done():
            if error is not None:
                stream.done.set_exception(error)
            else:
                stream.done.set_result(outcome)


_NOTHING: Iterator[Item] = iter(())
WRITE_FAILED_CODE = "server_error"
WRITE_FAILED_MESSAGE = "The server failed while writing this reply and ended it. Please retry the request."


async def _nowhere(message: dict[str, Any]) -> None:
    """Where a stream that is over sends: nowhere."""


def _write_failed_event(stream: ActiveStream) -> bytes:
    return stream.dialect.server_error_event(WRITE_FAILED_CODE, WRITE_FAILED_MESSAGE, stream.events_sent)


def _shutdown_event(stream: ActiveStream) -> bytes:
    return stream.dialect.shutdown_event(stream.events_sent)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("a held-back stream write failed", exc_info=task.exception())
