"""The requests of one process waiting for an Ultrafast slot on one store: a line, first come first served.

:mod:`mockserver.service.capacity.queue` decides how long a request may wait; this module decides who
tries for a slot when one may be free. Nothing here polls or sleeps per waiter: a waiter parks on a
future and is woken only when it is its turn.

- **A slot given back in this process** (:meth:`Line.give_back`) wakes exactly one waiter: the first
  in line. It tries for the slot (one atomic ``acquire`` of the store). Served, it leaves the line.
- **Turned away**, it keeps its place, and the wake-up goes on to the first waiter of another
  *group*. A group is the waiters that ask for the same pools (the server's and one organization's),
  so a waiter behind one that was refused would be refused too: a slot given back costs at most one
  failed attempt per group (per organization waiting), never one per waiter.
- **A waiter that leaves** (its client gone, its wait over) is out of the line at once; if it held
  a wake-up, the wake-up goes on to the next in line as if it had been refused nowhere.
- **A shared store** (Redis: several workers or replicas) also frees slots this process never hears
  of: given back elsewhere, or a lease that expired. Such a line polls, once every ``poll_s`` for the
  whole line (not per waiter): a poll is a wake-up that goes down the line like the others but does
  not stop at the first served (several slots may have come back), only once every group has been
  turned away. A new poll starts only when the last has ended. The in-memory store never polls:
  its slots come back only through :meth:`Line.give_back`.

Each line belongs to one store and lives on its event loop (the poll's timer runs there); wake-ups
may come from any thread (:func:`~mockserver.service.wakeups.wake_soon`). :class:`Lines` keeps the
process's lines, one per store, each only while someone waits in it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field

from mockserver.engine.pacing import Clock
from mockserver.service.wakeups import wake_soon


@dataclass(eq=False)
class _WakeUp:
    """One chance at a slot, handed down the line until it is used up.

    ``poll``: a poll's wake-up goes on after a waiter is served; a slot given back here ends there.
    ``refused``: the groups already turned away on this chance (none of theirs is woken for it again).
    """

    poll: bool
    refused: set[Hashable] = field(default_factory=set)


@dataclass(eq=False)
class Waiter:
    """One request in a line: ``order`` its arrival, ``group`` the pools it asks for, ``future`` what it
    parks on; ``wake_up`` is the chance it holds (until it has tried for the slot or left)."""

    order: int
    group: Hashable
    future: asyncio.Future[None]
    wake_up: _WakeUp | None = None


class Line:
    """The waiters of one store in this process (see the module docstring). ``polls``: the store is shared."""

    def __init__(self, clock: Clock, *, polls: bool, poll_s: float) -> None:
        self.polls = polls
        self._clock = clock
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._groups: dict[Hashable, OrderedDict[Waiter, None]] = {}  # each group in order of arrival
        self._arrivals = itertools.count()
        self._poll_timer: asyncio.Handle | None = None
        self._polling = False  # a poll's wake-up is going down the line
        self.size = 0

    def join(self, group: Hashable) -> Waiter:
        """A request joins the back of the line; call on its event loop."""
        waiter = Waiter(next(self._arrivals), group, asyncio.get_running_loop().create_future())
        with self._lock:
            self._groups.setdefault(group, OrderedDict())[waiter] = None
            self.size += 1
            if self.polls and self._poll_timer is None:
                self._poll_timer = self._clock.call_at(self._clock.now() + self._poll_s, self._poll)
        return waiter

    def leave(self, waiter: Waiter) -> None:
        """The waiter is out of the line (served, or gone); a wake-up it held goes on. Idempotent."""
        with self._lock:
            self._remove(waiter)
            held, waiter.wake_up = waiter.wake_up, None
            if held is not None:
                self._hand(held)
            if self.size == 0 and self._poll_timer is not None:
                self._poll_timer.cancel()
                self._poll_timer = None

    def give_back(self) -> None:
        """A slot was given back in this process: the first waiter tries for it."""
        with self._lock:
            if self.size:
                self._hand(_WakeUp(poll=False))

    def recheck(self) -> None:
        """The caps may have changed: a chance goes down the line as a poll's does (it goes on after a
        waiter is served, and ends once every group has been turned away)."""
        with self._lock:
            if self.size:
                self._polling = True
                self._hand(_WakeUp(poll=True))

    def woken(self, waiter: Waiter) -> bool:
        """Whether ``waiter`` (just woken) holds a chance at a slot; it is ready to be woken again."""
        with self._lock:
            if waiter.future.done():
                waiter.future = waiter.future.get_loop().create_future()
            return waiter.wake_up is not None

    def tried(self, waiter: Waiter, took: bool) -> None:
        """``waiter`` tried for a slot with the chance it held: served, it leaves the line (a poll's
        chance goes on); refused, it keeps its place and the chance goes to another group."""
        with self._lock:
            held, waiter.wake_up = waiter.wake_up, None
            if took:
                self._remove(waiter)
            if held is None:
                return
            if not took:
                held.refused.add(waiter.group)
                self._hand(held)
            elif held.poll:
                self._hand(held)

    def _remove(self, waiter: Waiter) -> None:
        members = self._groups.get(waiter.group)
        if members is not None and waiter in members:
            del members[waiter]
            if not members:
                del self._groups[waiter.group]
            self.size -= 1

    def _hand(self, wake_up: _WakeUp) -> None:
        """Give ``wake_up`` to the first waiter not holding one, of a group not refused on it (lock held).

        Costs one step per group waiting, plus one per waiter ahead that holds a chance already."""
        first: Waiter | None = None
        for group, members in self._groups.items():
            if group in wake_up.refused:
                continue
            for waiter in members:
                if waiter.wake_up is None:
                    if first is None or waiter.order < first.order:
                        first = waiter
                    break
        if first is None:
            if wake_up.poll:
                self._polling = False
            return
        first.wake_up = wake_up
        wake_soon(first.future)

    def _poll(self) -> None:
        """Every ``poll_s`` while anyone waits (a shared store): a chance goes down the line."""
        with self._lock:
            self._poll_timer = None
            if not self.size:
                return
            if not self._polling:
                self._polling = True
                self._hand(_WakeUp(poll=True))
            self._poll_timer = self._clock.call_at(self._clock.now() + self._poll_s, self._poll)


class Lines:
    """The process's lines, one per store, each kept only while someone waits in it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: dict[int, tuple[object, Line]] = {}  # id(store) -> (store, its line); the store kept alive

    def join(self, store: object, clock: Clock, group: Hashable, *, polls: bool, poll_s: float) -> tuple[Line, Waiter]:
        """Join the store's line (made if nobody waits on that store yet)."""
        with self._lock:
            entry = self._lines.get(id(store))
            if entry is None:
                entry = self._lines[id(store)] = (store, Line(clock, polls=polls, poll_s=poll_s))
            line = entry[1]
            return line, line.join(group)

    def leave(self, store: object, line: Line, waiter: Waiter) -> None:
        with self._lock:
            line.leave(waiter)
            if line.size == 0 and self._lines.get(id(store), (None, None))[1] is line:
                del self._lines[id(store)]

    def __len__(self) -> int:
        """Stores someone waits on in this process."""
        with self._lock:
            return len(self._lines)

    def of(self, store: object) -> Line | None:
        """The store's line, if anyone waits in it."""
        with self._lock:
            entry = self._lines.get(id(store))
            return None if entry is None else entry[1]
