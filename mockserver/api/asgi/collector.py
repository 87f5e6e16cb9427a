"""The garbage collector's pauses: while a large request body is read, during start-up's imports,
once the server is up (:func:`settle_heap`), and around ``ast.parse`` where the interpreter needs it
(:class:`Pause`, for :mod:`mockserver.testing.ast_guard`). Nothing here imports more than the standard
library: the pytest plugin and the command line import it before anything else.

While a large request body is read:

CPython frees almost every object by reference counting. Its garbage collector only looks for
reference cycles, in passes; a full pass walks every tracked object alive, in one go, and the event
loop (every paced stream, every other request) waits for it. A body of 150,000 short messages is
some 450,000 such objects from its parse until the request is refused or planned, and the passes
its parse and validation set off walked them for 65 to 120 ms each (a body at the 32 MiB limit,
four times as many). Those objects are almost all gone once the request is refused, or planned
(the plan keeps what it needs), so walking them looks for cycles where there are none.

So a request whose body is large holds the automatic passes off (:meth:`Collector.hold`) from its
parse until it is planned or refused, and lets go then. Bounds:

- the passes are off for at most :data:`MAX_HOLD_S` at a stretch, however many large bodies come and
  whatever happens to them: a timer turns the passes back on then, and no hold is granted for as
  long again;
- the first release after the last hold turns them back on; a release is idempotent;
- nothing is held if the passes were already off (someone else's choice, left alone).

The process has one collector, so there is one :data:`COLLECTOR` (servers in threads of one
process share it: a lock guards it).
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol

MAX_HOLD_S = 2.0
# Objects allocated (less those freed) before a pass over the youngest generation, once serving.
YOUNG_THRESHOLD = 10_000


class Timer(Protocol):
    """What :class:`threading.Timer` is to a :class:`Collector` (a test gives one it fires itself)."""

    daemon: bool

    def start(self) -> None: ...

    def cancel(self) -> None: ...


def _nothing() -> None:
    """The release of a hold that was not granted."""


class Collector:
    """Holds of the garbage collector's automatic passes (see the module's docstring)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        max_hold_s: float = MAX_HOLD_S,
        timer: Callable[[float, Callable[[], None]], Timer] = threading.Timer,
    ) -> None:
        self._now = clock
        self._max_hold_s = max_hold_s
        self._timer = timer  # starts the countdown that ends a stretch at the bound
        self._countdown: Timer | None = None
        self._lock = threading.Lock()
        self._holders = 0
        self._off_since: float | None = None  # when a hold turned the passes off; None: not off by a hold
        self._no_hold_until = 0.0  # after a hold that ran too long, none is granted until then
        self._stretch = 0  # counts the stretches with the passes off: a release counts in its own only

    @property
    def holding(self) -> bool:
        """Whether a hold has the automatic passes off now."""
        return self._off_since is not None

    def hold(self) -> Callable[[], None]:
        """Turn the automatic passes off (if they are on and no bound forbids it) until the returned
        release is called; calling it again does nothing."""
        with self._lock:
            now = self._now()
            if self._off_since is not None and now - self._off_since > self._max_hold_s:
                self._too_long(now)
                return _nothing
            if self._off_since is None:
                if now < self._no_hold_until or not gc.isenabled():
                    return _nothing
                gc.disable()
                self._off_since = now
                self._stretch += 1
                self._countdown = self._timer(self._max_hold_s, partial(self._expire, self._stretch))
                self._countdown.daemon = True
                self._countdown.start()
            self._holders += 1
            stretch = self._stretch
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released or stretch != self._stretch or self._off_since is None:
                    released = True  # released already, or its stretch was ended for running too long
                    return
                released = True
                self._holders -= 1
                if self._holders == 0:
                    self._turn_on()

        return release

    def _expire(self, stretch: int) -> None:
        """The countdown of ``stretch`` ran out: end it, if it is still on."""
        with self._lock:
            if stretch == self._stretch and self._off_since is not None:
                self._too_long(self._now())

    def _too_long(self, now: float) -> None:
        self._turn_on()
        self._no_hold_until = now + self._max_hold_s

    def _turn_on(self) -> None:
        gc.enable()
        self._off_since = None
        self._holders = 0  # the holds still out in this stretch release nothing now
        if self._countdown is not None:
            self._countdown.cancel()
            self._countdown = None


COLLECTOR = Collector()


@contextlib.contextmanager
def paused_for_start_up() -> Iterator[None]:
    """No automatic passes inside the block, then as before: for start-up's imports. They build tens of
    thousands of objects (modules, classes, pydantic schemas) that live as long as the process, so the
    passes they set off find no garbage and only add to the start-up's time (about a tenth of it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def kept_for_good(*, free_first: bool = False) -> Iterator[None]:
    """:func:`paused_for_start_up`, then what the block built frozen out of the collector's sight for good
    (``gc.freeze``) before its passes come back: for imports that live as long as the process (or the test
    session). The collector never walks them again; without it, its first pass once back on, the full
    collection before serving (:func:`settle_heap`) and the interpreter's passes at exit walked them all.
    What the imports left behind is then kept too (a few thousand objects, under 1 MiB).

    ``free_first`` collects what is garbage already before the block, so that it is freed, not frozen
    (a test session's objects of the moment)."""
    if free_first:
        gc.collect()
    with paused_for_start_up():
        yield
        gc.freeze()


def settle_heap() -> None:
    """Take what start-up built out of the garbage collector's sight, once the server is up.

    The app, its routes and schemas, Faker's word lists and the fixture are some 84,000
    objects that live as long as the process. Left in the collector's oldest generation, every
    full collection walks them all, some ten times as long as it takes once they are frozen, and
    no stream is written meanwhile (``python -m benchmarks gc_pauses``; the figures are in
    docs/performance.md): often enough under load to set the p99 of the gap between events and of
    the time to the first token.
    ``gc.freeze`` moves them to a generation that is never collected (they are freed as usual
    if their last reference goes), so a full collection walks only what requests left behind.
    """
    global _heap_settled
    if _heap_settled:  # once per process: what a later start-up built is not frozen again
        return
    _heap_settled = True
    gc.collect()
    gc.freeze()
    young_passes_for_serving()


def young_passes_for_serving() -> None:
    """Let the youngest generation grow to :data:`YOUNG_THRESHOLD` objects before a pass, not 700.

    A request in flight is a few hundred tracked objects (its body, model, plan, stream), nearly all
    of them gone by reference counting once its head or its last event is out, few in a cycle.
    With the interpreter's 700, a burst of 150 streams admitted together set off some 25 young passes
    and 2 or 3 middle ones, and each walked every request still in flight, found it alive and moved it
    up a generation, for the next pass to walk again: about 25 ms of the collector per burst, in passes
    of up to 12 ms landing between the heads, and the first tokens waited for them.
    At :data:`YOUNG_THRESHOLD` such a burst sets off one or two young passes, and most of what they
    would have walked is freed before one comes (``docs/performance.md``, "The young generation").

    Bounds: a young pass walks about that many objects plus what survived the last (a few ms); garbage
    in cycles lives at most that many allocations longer; the older generations' thresholds are left
    as they are, so a full pass stays as rare as before relative to what survives.
    """
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)


_heap_settled = False


class Pause:
    """The automatic passes off while anyone (in any thread) is inside :meth:`enter` ... :meth:`leave`,
    then as they were before the first came in: a pass left on stays on, one left off stays off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._was_on = False

    def enter(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._was_on = gc.isenabled()
                gc.disable()
            self._inside += 1

    def leave(self) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._was_on:
                gc.enable()
