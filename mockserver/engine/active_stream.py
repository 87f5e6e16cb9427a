"""One open stream of the stream scheduler: its producer, where its frames go, when it is next
due, and where its schedule is anchored (see :mod:`.catch_up`). The scheduler
(:mod:`.scheduler`) owns it; :mod:`.stream_writes` writes to it and ends it."""

from __future__ import annotations

import asyncio
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
