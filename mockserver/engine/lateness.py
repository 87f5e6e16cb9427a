"""How late the server's streams are: what an overloaded server owes its users to say.

The stream scheduler (:mod:`.scheduler`) tells a :class:`Lateness` how late each stream's first
token went out (against its deadline, the request's arrival plus its TTFT) and how late each write
of later events was (against the stream's schedule, once anchored at its first token). It keeps:

- two histograms, as counts per bucket of :data:`BUCKETS` (seconds) and a sum, which
  ``GET /metrics`` publishes (``mockserver_first_token_lateness_seconds`` and
  ``mockserver_event_lateness_seconds``, see :mod:`mockserver.operations.metrics`);
- the worst lateness of the last second or so, which ``GET /_mock/stats`` shows;
- a warning in the log, at most once every :data:`WARN_EVERY_S`, when streams were later than
  :data:`LATE_S`: how many, by how much, and what to do about it.

Recording costs a bisect and two additions: it is on the path of every write.
"""

from __future__ import annotations

import logging
import math
from bisect import bisect_left
from collections.abc import Callable

logger = logging.getLogger("mockserver")

# Upper bounds of the histograms' buckets, in seconds: a timer tick is 1 ms; a UI notices 50 ms.
BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
LATE_S = 0.025  # a stream later than this, at its first token or mid-stream, counts as late
WARN_EVERY_S = 10.0  # at most one warning this often
WORST_WINDOW_S = 1.0  # the worst lateness shown is of the last one to two of these

ADVICE = (
    "the server cannot keep the promised pace: give it more processes (--workers), "
    "run fewer streams at once, or ask for a lower rate"
)


class Histogram:
    """Counts per bucket of :data:`BUCKETS` (the last is above them all) and the sum of what was recorded."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0

    def record(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        return sum(self.counts)


class Lateness:
    """The lateness of one server's streams (one scheduler, one event loop)."""

    def __init__(self) -> None:
        self.first_token = Histogram()
        self.events = Histogram()
        self._worst = 0.0  # of the window now running
        self._worst_before = 0.0  # of the window before it
        self._window_ends = -math.inf
        self._late = 0  # streams late by more than LATE_S since the last warning
        self._late_worst = 0.0
        self._period = 0  # counts warning periods, so a stream is counted late once per period
        self._warn_at = -math.inf  # no warning before this
        self.warnings = 0  # warnings logged so far
        self.on_window: Callable[[], None] | None = None  # told when a window ends (the metrics publish then)

    def first(self, seconds: float) -> None:
        """A stream's first token went out ``seconds`` after its deadline (0 if on time)."""
        self.first_token.record(seconds)
        if seconds > self._worst:
            self._worst = seconds

    def event(self, seconds: float) -> None:
        """A write went out ``seconds`` after the deadline of its first event."""
        self.events.record(seconds)
        if seconds > self._worst:
            self._worst = seconds

    def saw(self, seconds: float) -> None:
        """Writes went out up to ``seconds`` late (what :meth:`event` recorded one by one, kept short)."""
        if seconds > self._worst:
            self._worst = seconds

    def late(self, seconds: float, period: int) -> int:
        """A stream was ``seconds`` late (more than :data:`LATE_S`); ``period`` is the value this
        returned for the same stream last time (0 at first). Returns the value to pass next time,
        so each stream counts once per warning period."""
        if period != self._period + 1:
            self._late += 1
        if seconds > self._late_worst:
            self._late_worst = seconds
        return self._period + 1

    def tick(self, now: float) -> None:
        """Called once per scheduler tick: rolls the worst-lateness window and warns if it is time."""
        if now >= self._window_ends:
            self._worst_before, self._worst = self._worst, 0.0
            self._window_ends = now + WORST_WINDOW_S
            if self.on_window is not None:
                self.on_window()
        if self._late and now >= self._warn_at:
            logger.warning(
                "%d stream(s) ran late by up to %.0f ms (first tokens or events): %s",
                self._late,
                self._late_worst * 1000,
                ADVICE,
            )
            self.warnings += 1
            self._late, self._late_worst = 0, 0.0
            self._period += 1
            self._warn_at = now + WARN_EVERY_S

    def worst(self) -> float:
        """The worst lateness recorded over the last one to two :data:`WORST_WINDOW_S`, in seconds."""
        return max(self._worst, self._worst_before)
