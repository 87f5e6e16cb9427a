"""When a stream's events may go out: anchored at its first token, caught up no faster than
:data:`CATCH_UP` times its rate.

The producers give absolute deadlines (``start + ttft + k / rate``). The stream scheduler
(:mod:`.scheduler`) asks :func:`horizon` which of them may go out now and :func:`wall_time` when
the next one may:

- The first deadline a stream meets (its first token's: the events before it go out at once)
  anchors its schedule where it really goes out: if late, every later deadline moves by as much
  (``ActiveStream.shift``). A late first token never compresses the stream.
- Later, a deadline goes out at its anchored time or after. A stream more than
  :data:`LATE_TOLERANCE_S` behind (a busy loop, a reader that paused) catches up along a line of
  slope ``1 / CATCH_UP`` (``ActiveStream.line``) that starts the tolerance back from now: never
  faster than :data:`CATCH_UP` times its rate, and back on its anchored deadlines once caught up,
  so pacing stays absolute and nothing drifts.

So any run of events whose deadlines span at least :data:`RATE_WINDOW_S` goes out at most 1.25x
as fast as they ask (``tests/engine/test_delivery.py``).
"""

from __future__ import annotations

import math

from mockserver.engine.active_stream import ActiveStream
from mockserver.engine.lateness import LATE_S, Lateness

# A stream more than this behind its schedule catches up at CATCH_UP times its rate, no faster;
# within it, what is due goes out at once (a late tick's worth: a busy loop's ticks come late).
LATE_TOLERANCE_S = 0.015
# 1.2, not 1.25: with one tolerance's burst on top, any run of events whose deadlines span at least
# RATE_WINDOW_S still goes out at most 1.25x as fast as its deadlines ask (see docs/limits.md).
CATCH_UP = 1.2
RATE_WINDOW_S = 0.45  # LATE_TOLERANCE_S / (1 / CATCH_UP - 1 / 1.25)


def horizon(stream: ActiveStream, now: float, first: float, lateness: Lateness) -> float:
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
        lateness.first(late)
        if late > LATE_S:
            stream.late_period = lateness.late(late, stream.late_period)
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
        lateness.event(late)
        if late > LATE_S:
            stream.late_period = lateness.late(late, stream.late_period)
    return min(now - shift, (now - line) * CATCH_UP)


def wall_time(stream: ActiveStream, due: float, now: float) -> float:
    """When deadline ``due`` of ``stream`` may go out, on the server's clock (``-inf``: at the next tick)."""
    if due == -math.inf:
        return now
    at = due + stream.shift
    line = stream.line
    if line != -math.inf:
        at = max(at, line + due / CATCH_UP)
    return at
