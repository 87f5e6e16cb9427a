"""The wall-clock limit on each stream (``--max-reply-seconds``): one timer for all of them.

A stream still open ``limit`` seconds after it opened is ended with its API's time-limit error
event. Rather than a timer of the event loop per stream, made when it opens and cancelled when it
ends (two of the loop's timer operations on every request), the deadlines wait in a heap here and
one timer is armed for the earliest. A stream that ends first is not taken out: its entry is passed
over when it comes up, and the heap is rebuilt without such entries whenever they outnumber the
open streams' (see :meth:`ReplyLimits.add`), so it holds at most about twice as many entries as
there are open streams.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Callable, Collection

from mockserver.engine.active_stream import ActiveStream

SPARE_ENTRIES = 64  # entries of ended streams the heap may hold beyond the open streams' count
EARLY_S = 0.001  # the loop's timer resolution: a timer may fire this much before its deadline


class ReplyLimits:
    """Ends each stream that is still open at its limit: ``finish(stream, limit)``, on the event loop.

    ``active`` is the scheduler's set of open streams (for the heap's bound)."""

    def __init__(self, active: Collection[ActiveStream], finish: Callable[[ActiveStream, float], None]) -> None:
        self._active = active
        self._finish = finish
        self._heap: list[tuple[float, int, ActiveStream, float]] = []
        self._order = itertools.count()  # equal deadlines end in the order their streams opened
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, stream: ActiveStream, limit: float) -> None:
        """End ``stream`` ``limit`` seconds from now (on the loop's clock) unless it is over by then."""
        loop = asyncio.get_running_loop()
        heap = self._heap
        if len(heap) > 2 * len(self._active) + SPARE_ENTRIES:
            heap[:] = [entry for entry in heap if not entry[2].over]
            heapq.heapify(heap)
        deadline = loop.time() + limit
        heapq.heappush(heap, (deadline, next(self._order), stream, limit))
        if deadline < self._timer_at:
            self._arm(loop, deadline)

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = loop.call_at(at, self._fire), at

    def _fire(self) -> None:
        self._timer, self._timer_at = None, math.inf
        loop = asyncio.get_running_loop()
        heap, now = self._heap, loop.time()
        while heap and (heap[0][2].over or heap[0][0] <= now + EARLY_S):
            _, _, stream, limit = heapq.heappop(heap)
            if not stream.over:
                self._finish(stream, limit)
        if heap:
            self._arm(loop, heap[0][0])

    def cancel(self) -> None:
        """Disarm the timer (the streams themselves are ended by their scheduler)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
