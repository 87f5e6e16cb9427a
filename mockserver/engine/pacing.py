"""The absolute-deadline token scheduler.

Token ``k`` of a reply is due at ``start + ttft + k * interval`` (plus a bounded,
seeded jitter), never "one interval after the previous send". A stream that falls
behind catches up on these deadlines (:mod:`.catch_up`), so the average rate holds
however noisy the event loop is. The reply ends at ``start + ttft + n * interval``,
which makes a non-streaming reply take exactly as long as a stream.

The clock is injected: :class:`MonotonicClock` in the server, :class:`FakeClock`
in unit tests, so the schedule is checked without sleeping.

A stream's events are planned as a plain iterator of deadlines and frames
(:meth:`Pacer.chunks` gives the deadlines); :mod:`.scheduler` plays every open
stream of a server on one timer.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, overload

from mockserver.config.models import MAX_TOKENS_PER_SECOND, MIN_TOKENS_PER_SECOND

# The longest TTFT a schedule has, in seconds: far past any reply's wall-clock limit
# (--max-reply-seconds), so every deadline stays a finite number.
MAX_TTFT_S = 7 * 86_400.0


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""

    async def sleep_until(self, deadline: float) -> None:
        """Return once ``now() >= deadline`` (at once if it already is)."""

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.Handle:
        """Run ``callback`` on the running loop at ``deadline``; the handle cancels it.

        The real clock fires on the loop's millisecond timers, which uvloop may run a fraction of a
        millisecond before ``now()`` reaches ``deadline``: a callback checks the clock and sets
        itself again for what is left (as the stream scheduler and the capacity queue do).
        """


class MonotonicClock:
    """The real clock. Sleeps toward an absolute deadline, so lateness never accumulates."""

    # time.monotonic itself, not a method that calls it: a request reads the clock several times
    # before its head goes out, and a built-in function is not bound to the instance, so
    # ``clock.now()`` calls it without a Python frame in between.
    now = staticmethod(time.monotonic)

    async def sleep_until(self, deadline: float) -> None:
        delay = deadline - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.Handle:
        # A delay rather than loop.call_at: the loop's own time base need not be time.monotonic().
        # Rounded up to whole milliseconds, the loop's timer resolution: a shorter delay would
        # fire at once (uvloop rounds it to zero) and spin until the deadline.
        delay = deadline - time.monotonic()
        return asyncio.get_running_loop().call_later(math.ceil(delay * 1000) / 1000 if delay > 0 else 0.0, callback)


class FakeClock:
    """A clock for tests: sleeping jumps time forward, optionally overshooting.

    ``lateness`` returns how many seconds each wake-up overshoots its deadline,
    which simulates a busy event loop.
    """

    def __init__(self, start: float = 1000.0, lateness: Callable[[], float] | None = None) -> None:
        self._now = start
        self._lateness = lateness or (lambda: 0.0)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    async def sleep_until(self, deadline: float) -> None:
        self._jump_to(deadline)

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.Handle:
        """Run ``callback`` on the loop's next turn, with time jumped to ``deadline`` (plus lateness)."""

        def fire() -> None:
            self._jump_to(deadline)
            callback()

        return asyncio.get_running_loop().call_soon(fire)

    def _jump_to(self, deadline: float) -> None:
        if deadline > self._now:
            self._now = deadline + max(0.0, self._lateness())


@dataclass(slots=True)
class Schedule:
    """When each token of one reply is due. Times are on the clock's scale, in seconds.

    Made for every reply and never changed (:meth:`shifted` makes another): not frozen, as a frozen
    dataclass sets each field through ``object.__setattr__``, several times the cost to make."""

    start: float
    ttft: float
    interval: float
    total_tokens: int
    offsets: Sequence[float] = field(default=(), repr=False)
    first_token_at: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Read for every token; stored once rather than summed on each call.
        self.first_token_at = self.start + self.ttft

    @classmethod
    def build(
        cls,
        *,
        start: float,
        ttft: float,
        tokens_per_second: float,
        total_tokens: int,
        jitter: float = 0.0,
        time_scale: float = 1.0,
        rng: random.Random | int | None = None,
    ) -> Schedule:
        """A schedule for ``total_tokens`` at ``tokens_per_second`` after ``ttft`` seconds.

        ``jitter`` (a fraction of one interval, below 1) moves each token by up to
        half that much either way. Deadlines stay strictly increasing, the first token
        still waits the full TTFT, and the end time is unchanged, so the rate is exact.
        ``time_scale`` stretches every duration; 0 makes everything due at once. ``rng`` is where
        the jitter comes from: a random source, or the request's seed (see :class:`Jitter`).
        """
        # Clamped, so every deadline is a finite number whatever rate reaches here: the API rejects
        # a header outside the range, and a fixture's rates are checked against it when loaded.
        # Compared first: the usual values are in range, and min() and max() cost more than the
        # comparisons (a value out of range, or NaN, fails them and is clamped as before).
        rate = tokens_per_second
        if not MIN_TOKENS_PER_SECOND <= rate <= MAX_TOKENS_PER_SECOND:
            rate = min(MAX_TOKENS_PER_SECOND, max(MIN_TOKENS_PER_SECOND, rate))
        if not 0.0 < ttft <= MAX_TTFT_S:  # a prefill at a vanishing rate is a long wait, not an endless one
            ttft = min(MAX_TTFT_S, max(0.0, ttft))
        interval = time_scale / rate
        offsets: Sequence[float] = ()
        if jitter > 0 and interval > 0 and total_tokens > 1:
            offsets = Jitter(0 if rng is None else rng, jitter * interval, total_tokens)
        return cls(start, ttft * time_scale, interval, total_tokens, offsets)

    def shifted(self, seconds: float) -> Schedule:
        """The same schedule, ``seconds`` later: every deadline moves by as much, the jitter included."""
        return Schedule(self.start + seconds, self.ttft, self.interval, self.total_tokens, self.offsets)

    @property
    def end(self) -> float:
        """When the reply is complete: one full interval after the last token is due."""
        return self.first_token_at + self.total_tokens * self.interval

    def due_at(self, k: int) -> float:
        """The deadline of token ``k`` (0-based)."""
        offset = self.offsets[k] if k < len(self.offsets) else 0.0
        return self.first_token_at + k * self.interval + offset


class Jitter(Sequence[float]):
    """The jitter offsets of one schedule: 0 for the first token, then ``spread * (random() - 0.5)``.

    Drawn a block of :data:`BLOCK` at a time as they are first read, from a generator of the
    block's own, so building the schedule of a long reply costs nothing on its first token's path,
    and memory stays at one block however long the reply: a block read again after a later one
    (rarely: a stall fault reads back) is drawn again, the same. The blocks' generators are seeded
    from ``source``: a random source (one draw from it), or a request's seed itself, salted, which
    spares the request a generator made only to draw that seed.
    """

    BLOCK = 64  # offsets drawn at a time, and all that is kept
    SALT = 0x7A3C_91E5_0B6D_24F8  # keeps a request's blocks apart from its other draws on the same seed

    __slots__ = ("_block", "_count", "_seed", "_spread", "_values")  # one per reply: made faster, and smaller

    def __init__(self, source: random.Random | int, spread: float, count: int) -> None:
        self._seed = source ^ self.SALT if isinstance(source, int) else source.getrandbits(64)
        self._spread = spread
        self._count = count
        self._block = -1
        self._values: list[float] = []

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, k: int) -> float: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[float]: ...
    def __getitem__(self, k: int | slice) -> float | Sequence[float]:
        if isinstance(k, slice):
            lo, hi, step = k.indices(self._count)
            return self.span(lo, hi) if step == 1 else [self[i] for i in range(lo, hi, step)]
        if not 0 <= k < self._count:
            raise IndexError(k)
        if k == 0:  # always 0 (see _draw): the first token's deadline draws nothing
            return 0.0
        block, at = divmod(k, self.BLOCK)
        if block != self._block:
            self._draw(block)
        return self._values[at]

    def span(self, lo: int, hi: int) -> list[float]:
        """The offsets of tokens ``lo`` to ``hi`` (exclusive), as ``self[k]`` gives them one by one,
        copied a block at a time: a stream's run of deadlines reads them so (:meth:`Pacer.runs`)."""
        out: list[float] = []
        hi = min(hi, self._count)
        while lo < hi:
            block, at = divmod(lo, self.BLOCK)
            if block != self._block:
                self._draw(block)
            values = self._values
            end = min(len(values), at + hi - lo)
            out += values[at:end]
            lo += end - at
        return out

    def _draw(self, block: int) -> None:
        draw, spread = random.Random(self._seed + block).random, self._spread
        # Only the offsets the schedule has (a short reply's one block is short): the same values,
        # as a block's draws come in order from its own generator.
        values = [spread * (draw() - 0.5) for _ in range(min(self.BLOCK, self._count - block * self.BLOCK))]
        if block == 0:
            values[0] = 0.0  # the first token waits the full TTFT
        self._block, self._values = block, values


FIRST_RUN_CHUNKS = 16  # chunks in a stream's first run of deadlines: it is on the first token's path
RUN_CHUNKS = 64  # chunks in each later run (the second is shorter by the stream's stagger: see runs())


class Pacer:
    """Releases the tokens of one reply on its :class:`Schedule`."""

    def __init__(self, clock: Clock, schedule: Schedule) -> None:
        self.clock = clock
        self.schedule = schedule

    def chunks(self, first: int, stop: int, per_chunk: int = 1) -> Iterator[tuple[int, int, float]]:
        """``(lo, hi, due)``: token ranges of ``[first, stop)``, ``per_chunk`` tokens each, and when each is due.

        A range is due with its last token. Late wake-ups merge nothing here: the scheduler
        writes every range that fell due as its own event, all in one write, so a client that
        renders chunk by chunk still sees one chunk per ``per_chunk`` tokens. Only at time
        scale 0, where every token is due at once, is the whole range one chunk.
        """
        if self.schedule.interval == 0 and self.merges_when_due:
            if first < stop:
                yield first, stop, self.schedule.due_at(stop - 1)
            return
        for lo in range(first, stop, per_chunk):
            hi = min(lo + per_chunk, stop)
            # self.schedule is read each time: a stall fault pushes it back mid-stream. This is
            # due_at(hi - 1) written out: it runs once per chunk of every stream.
            schedule, k = self.schedule, hi - 1
            offsets = schedule.offsets
            offset = offsets[k] if k < len(offsets) else 0.0
            yield lo, hi, schedule.first_token_at + k * schedule.interval + offset

    # Whether tokens that are all due at once (time scale 0) go out as one chunk.
    merges_when_due = True
    # Whether the schedule stays as built, so deadlines may be computed ahead (see runs()).
    fixed = True

    def runs(self, first: int, stop: int, per_chunk: int = 1) -> Iterator[tuple[int, int, list[float]]]:
        """``(lo, hi, dues)``: :meth:`chunks` a run at a time. Tokens ``lo`` to ``hi`` make
        ``len(dues)`` chunks of ``per_chunk`` tokens (the last maybe fewer), due at ``dues``,
        the same deadlines :meth:`chunks` gives. The first run is short (it is computed on the
        first token's path), the others longer. Only for a :attr:`fixed` schedule.

        A run is made (its text drawn and encoded) in one go, in the scheduler's tick. Streams
        that start together at one rate would make their runs in the same tick, every
        :data:`RUN_CHUNKS` chunks: 250 streams' runs at once stall every stream for some 15 ms.
        So the second run is shorter by a stagger taken from the stream's own start time (its
        microseconds), which spreads the streams' run boundaries evenly over a run's length.
        The deadlines and frames are the same whatever the runs' lengths.
        """
        schedule = self.schedule
        start, interval, offsets = schedule.first_token_at, schedule.interval, schedule.offsets
        stagger = int(start * 1_000_000) % RUN_CHUNKS
        chunks, then, lo = FIRST_RUN_CHUNKS, RUN_CHUNKS - stagger, first
        while lo < stop:
            hi = min(stop, lo + chunks * per_chunk)
            # The last token of each chunk: the chunk is due with it.
            last = range(lo, hi) if per_chunk == 1 else [min(k + per_chunk, hi) - 1 for k in range(lo, hi, per_chunk)]
            if not offsets:
                yield lo, hi, [start + k * interval for k in last]  # what chunks() gives, less a + 0.0
            elif hi - 1 < len(offsets):
                spread = offsets[lo:hi]  # in one slice: a Jitter copies it a block at a time
                if per_chunk == 1:
                    yield lo, hi, [start + k * interval + offset for k, offset in zip(last, spread, strict=True)]
                else:
                    yield lo, hi, [start + k * interval + spread[k - lo] for k in last]
            else:
                yield lo, hi, [start + k * interval + (offsets[k] if k < len(offsets) else 0.0) for k in last]
            lo, chunks, then = hi, then, RUN_CHUNKS

    def token_due(self, k: int) -> float:
        return self.schedule.due_at(k)

    @property
    def end(self) -> float:
        return self.schedule.end

    async def wait_for_end(self) -> None:
        await self.clock.sleep_until(self.schedule.end)
