"""A clock for the capacity queue's tests that moves only when the test moves it.

:class:`~mockserver.engine.pacing.FakeClock` jumps to a timer's deadline on the loop's next turn,
which suits a request sleeping through its reply; a waiting request, though, must stay waiting
until the test gives a slot back. Here a timer fires only when :meth:`ManualClock.advance` passes
its deadline, and :attr:`ManualClock.timers` lists every timer asked for (to count polls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class ManualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._due: list[tuple[float, Callable[[], None], asyncio.Handle]] = []
        self.timers: list[float] = []  # the deadline of every timer asked for, in order

    def now(self) -> float:
        return self._now

    async def sleep_until(self, deadline: float) -> None:
        while self._now < deadline:
            await asyncio.sleep(0)

    def call_at(self, deadline: float, callback: Callable[[], None]) -> asyncio.Handle:
        handle = asyncio.Handle(callback, (), asyncio.get_running_loop())
        self._due.append((deadline, callback, handle))
        self.timers.append(deadline)
        return handle

    def advance(self, seconds: float) -> None:
        """Move time on and run, on the loop's next turn, every timer now due (earliest first)."""
        self._now += seconds
        due = sorted((item for item in self._due if item[0] <= self._now), key=lambda item: item[0])
        self._due = [item for item in self._due if item[0] > self._now]
        for _, callback, handle in due:
            if not handle.cancelled():
                asyncio.get_running_loop().call_soon(callback)

    def pending(self) -> int:
        """Timers asked for, not yet due and not cancelled."""
        return sum(1 for _, _, handle in self._due if not handle.cancelled())


async def settle(turns: int = 20) -> None:
    """Let every ready task and callback run (a few turns of the loop)."""
    for _ in range(turns):
        await asyncio.sleep(0)
