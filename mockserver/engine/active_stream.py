"""One open stream of the stream scheduler: its producer, where its frames go, when it is next
due, and where its schedule is anchored (see :mod:`.catch_up`). The scheduler
(:mod:`.scheduler`) owns it; :mod:`.stream_writes` writes to it and ends it. :class:`ReplyLimits` holds
every open stream to the server's wall-clock limit on one reply, on one timer."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from mockserver.engine.dialects import Dialect
from mockserver.engine.streaming import Item, Run

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
        "limit_watched",
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
        self.limit_watched = False  # held to the wall-clock limit (see ReplyLimits)
        # Where the schedule is anchored (see mockserver.engine.catch_up): every deadline
        # of the stream goes out ``shift`` later, fixed when its first deadline is met.
        self.anchored = False
        self.shift = 0.0
        # The catch-up line: deadline d goes out no sooner than line + d / CATCH_UP. -inf: not catching up.
        self.line = -math.inf
        self.steady = False  # anchored and not catching up: the tick's short way applies
        self.late_period = 0  # see Lateness.late
        self.pending = math.inf  # the deadline (of the producer's, not a run's) the stream waits for; inf: none
        self.failed_write = False


# -- The wall-clock limit on every open stream (Settings.max_reply_seconds), on one timer ---------
#
# A timer per stream (``loop.call_later`` when it opened, cancelled when it ended) cost every stream a
# timer handle, nearly always unused, before its first token. The limits are kept in one heap instead,
# earliest first, with one timer armed for the earliest (armed again only when it fires, about once per
# limit's length however many streams come and go meanwhile). A stream that ends before its limit stays in
# the heap (skipped when its time comes); once such entries make up half of it, or no stream is open
# any more, the heap is rebuilt without them, so nothing of a crowd of short streams stays behind.

# A limit that falls due within this of the timer's firing is met then (the loop's timers are kept to
# the millisecond: one may fire a little before its time).
EARLY_S = 0.001


class ReplyLimits:
    """Calls ``on_limit(stream)`` once a watched stream has been open for its limit and is not over yet."""

    def __init__(self, on_limit: Callable[[ActiveStream], None]) -> None:
        self._on_limit = on_limit
        self._heap: list[tuple[float, int, ActiveStream]] = []
        self._order = itertools.count()  # breaks ties between equal times
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the timer is armed on
        self._over = 0  # how many entries belong to streams that are over

    def __len__(self) -> int:
        return len(self._heap)

    def watch(self, stream: ActiveStream, seconds: float, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Hold ``stream`` to ``seconds`` from now, on the running loop's clock (``loop``, if the caller has it)."""
        if loop is None:
            loop = asyncio.get_running_loop()
        if loop is not self._loop:  # the first stream, or the first on another loop (the last one's is over)
            if self._timer is not None and self._loop is not None and not self._loop.is_closed():
                self._timer.cancel()
            self._let_go()
            self._timer, self._timer_at, self._loop = None, math.inf, loop
        at = loop.time() + seconds
        heapq.heappush(self._heap, (at, next(self._order), stream))
        stream.limit_watched = True
        if at < self._timer_at:
            self._arm(loop, at)

    def ended(self, stream: ActiveStream, still_open: int) -> None:
        """``stream`` is over; ``still_open`` streams are left open."""
        if not stream.limit_watched:
            return
        stream.limit_watched = False
        self._over += 1
        heap = self._heap
        if still_open == 0:  # nothing left to hold to a limit (a stream whose end is being written is done)
            self._let_go()  # the timer stays armed: it finds nothing, unless a later stream's limit is due then
        elif self._over > 64 and 2 * self._over > len(heap):
            heap[:] = [entry for entry in heap if not entry[2].over]
            heapq.heapify(heap)
            self._over = 0

    def _let_go(self) -> None:
        """Forget every stream held."""
        for _, _, stream in self._heap:
            stream.limit_watched = False
        self._heap.clear()
        self._over = 0

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = loop.call_at(at, self._due), at

    def _due(self) -> None:
        """The timer fired: every stream whose limit has come is told, then the timer is armed for the next."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # armed on a loop the streams have left since
            return
        self._timer, self._timer_at = None, math.inf
        heap, now = self._heap, loop.time() + EARLY_S
        while heap and heap[0][0] <= now:
            _, _, stream = heapq.heappop(heap)
            if stream.limit_watched and not stream.over:
                stream.limit_watched = False  # its entry is gone: not counted among those left behind
                self._on_limit(stream)
            elif not stream.limit_watched:
                self._over -= 1
        if heap:
            self._arm(loop, heap[0][0])
