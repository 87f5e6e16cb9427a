"""The wall-clock limit on every open stream (``Settings.max_reply_seconds``), on one timer.

Why one timer: a timer per stream (armed when it opens, cancelled when it ends) is a timer handle,
a push on the event loop's heap and a cancellation for every request, and almost every stream ends
long before its limit. The limit is the same for every stream of a server, so the streams reach it
in the order they opened: :class:`TimeLimits` keeps them in that order and arms one timer, for the
oldest stream's limit. When it fires, the streams past their limit are ended, the ones already over
are dropped, and the timer is armed for the next.

Bound: a stream that is over stays in the queue until it reaches the front or the queue is
compacted, which happens whenever it has doubled since the last compaction (so it holds at most
about twice the open streams, plus :data:`COMPACT_MIN`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from mockserver.engine.active_stream import ActiveStream

logger = logging.getLogger("mockserver")

COMPACT_MIN = 64  # below this many entries, the queue is never compacted
EARLY_S = 0.001  # a limit this close is treated as reached: the loop's timers may fire that early


class TimeLimits:
    """Ends each watched stream when its time limit passes, unless it is over by then. Lives on one event loop."""

    def __init__(self) -> None:
        self._queue: deque[tuple[float, ActiveStream]] = deque()  # (loop time of the limit, stream), oldest first
        self._timer: asyncio.TimerHandle | None = None
        self._on_limit: Callable[[ActiveStream], None] | None = None
        self._compact_at = COMPACT_MIN

    def __len__(self) -> int:
        return len(self._queue)

    def watch(self, stream: ActiveStream, limit_s: float, on_limit: Callable[[ActiveStream], None]) -> None:
        """Call ``on_limit(stream)`` in ``limit_s`` seconds, unless ``stream`` is over by then.

        ``limit_s`` must be the same for every stream watched (a server's one limit)."""
        loop = asyncio.get_running_loop()
        at = loop.time() + limit_s
        queue = self._queue
        queue.append((at, stream))
        self._on_limit = on_limit
        if self._timer is None:
            self._timer = loop.call_at(at, self._expire)
        elif len(queue) >= self._compact_at:
            live = [entry for entry in queue if not entry[1].over]
            queue.clear()
            queue.extend(live)
            self._compact_at = max(COMPACT_MIN, 2 * len(queue))

    def _expire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        queue = self._queue
        while queue:
            at, stream = queue[0]
            if not stream.over and at - now > EARLY_S:
                self._timer = loop.call_at(at, self._expire)
                return
            queue.popleft()
            if not stream.over and self._on_limit is not None:
                try:
                    self._on_limit(stream)
                except Exception:  # one stream's failure must not keep the others past their limit
                    logger.exception("ending a stream at its time limit failed on %s", stream.path)
