"""A bound on the memory the embeddings requests of one process hold at once.

The largest embeddings request (2,048 inputs at 3,072 dimensions, 6.3 million numbers) holds a
few hundred MiB from the moment its vectors are made until its reply has gone out: the vectors, a
float64 scratch copy, and a reply of 32 MiB (``base64``) to 128 MiB (``float``). What a request
holds grows with the numbers its reply carries (inputs times dimensions), so that is its weight,
and the requests being worked on in one process weigh at most :data:`BUDGET_VALUES` together:
two of the largest, or any mix of smaller ones. A request of at most :data:`SMALL_VALUES` numbers
(a few hundred KiB) weighs nothing and never waits.

A request that does not fit waits for others to finish, up to :data:`WAIT_S` seconds of the real
clock (not scaled by ``time_scale``: it waits for the server's own memory, not for a simulated
model), at most :data:`MAX_WAITING` of them at once; past that it is refused with the 503 the live
API sends when it is overloaded, ``The engine is currently overloaded, please try again later``
(type ``server_error``), with ``retry-after: 1`` and ``x-should-retry: true``. The official SDKs
retry it by themselves (they retry every 5xx), as they would a live overload.

The budget is the process's (memory is per process), shared by every server a test process runs;
a waiter on one event loop is woken from another (:func:`~mockserver.service.wakeups.wake_soon`).
"""

from __future__ import annotations

import asyncio
import threading

from mockserver import errors
from mockserver.service.wakeups import wake_soon

LARGEST_VALUES = 2_048 * 3_072  # the largest request: 2,048 inputs at text-embedding-3-large's dimensions
BUDGET_VALUES = 2 * LARGEST_VALUES  # numbers the requests being worked on in one process may carry together
SMALL_VALUES = 1 << 16  # a request of at most this many numbers (42 inputs at 1,536) is not counted
WAIT_S = 10.0  # the longest a request waits to fit (real seconds): about two of the largest made
MAX_WAITING = 16  # requests waiting at once in one process; more are refused at once


def overloaded() -> errors.ServiceUnavailableError:
    """The live API's answer when it has no room for the request now: retryable."""
    return errors.ServiceUnavailableError(headers={"retry-after": "1", "x-should-retry": "true"})


class LargeWork:
    """Holders whose weights add up to at most ``budget``; :meth:`take` waits up to ``wait_s`` to fit.

    A weight above the budget counts as the whole budget, so the largest request still runs, alone."""

    def __init__(self, budget: int = BUDGET_VALUES, wait_s: float = WAIT_S, max_waiting: int = MAX_WAITING) -> None:
        self.budget = budget
        self.wait_s = wait_s
        self.max_waiting = max_waiting
        self._lock = threading.Lock()
        self.held = 0
        self._waiters: set[asyncio.Future[None]] = set()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def weight(self, values: int) -> int:
        """What a request carrying ``values`` numbers takes from the budget (0: it never waits)."""
        return 0 if values <= SMALL_VALUES else min(values, self.budget)

    def _fits(self, weight: int) -> bool:
        """Take ``weight`` if it fits now (the lock held)."""
        if self.held + weight > self.budget:
            return False
        self.held += weight
        return True

    def try_take(self, weight: int) -> bool:
        """Take ``weight`` of the budget if it fits, at once."""
        with self._lock:
            return self._fits(weight)

    def release(self, weight: int) -> None:
        """Give ``weight`` back, and let every waiter try again."""
        with self._lock:
            self.held = max(0, self.held - weight)
            waiters = list(self._waiters)
        for future in waiters:
            wake_soon(future)

    async def take(self, weight: int) -> bool:
        """Take ``weight``, waiting up to :attr:`wait_s` for it to fit; False if it did not (or too many wait)."""
        if self.try_take(weight):
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        while True:
            with self._lock:
                if self._fits(weight):
                    return True
                remaining = deadline - loop.time()
                if remaining <= 0 or len(self._waiters) >= self.max_waiting:
                    return False
                wake: asyncio.Future[None] = loop.create_future()
                self._waiters.add(wake)
            try:
                await asyncio.wait({wake}, timeout=remaining)
            finally:
                with self._lock:
                    self._waiters.discard(wake)
                wake.cancel()


LARGE = LargeWork()  # the process's budget
