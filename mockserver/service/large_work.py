"""A bound on how many large requests one process works on at once.

The largest embeddings request (2,048 inputs at 3,072 dimensions) holds a few hundred MiB from
the moment its vectors are made until its reply has gone out: the vectors, a float64 scratch
copy, and a reply of 32 MiB (``base64``) to 128 MiB (``float``). Without a bound, ten such
requests at once would need gigabytes. So a request whose reply carries more than
:data:`LARGE_VALUES` numbers is *large*, and at most :data:`MAX_LARGE` large requests are worked
on at once in one process (small requests never wait).

A large request that finds every place taken waits for one, up to :data:`WAIT_S` seconds of the
real clock (not scaled by ``time_scale``: it waits for the server's own memory, not for a
simulated model), at most :data:`MAX_WAITING` of them; past that it is refused with the 503 the
live API sends when it is overloaded, ``The engine is currently overloaded, please try again
later`` (type ``server_error``), with ``retry-after: 1`` and ``x-should-retry: true``. The
official SDKs retry it by themselves (they retry every 5xx), as they would a live overload.

The places are the process's (memory is per process), shared by every server a test process
runs; a waiter on one event loop is woken from another through ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading

from mockserver import errors

LARGE_VALUES = 1 << 20  # numbers in a reply past which it is large: 342 inputs at 3,072 dimensions, 683 at 1,536
MAX_LARGE = 2  # large requests worked on at once in one process
WAIT_S = 10.0  # the longest a large request waits for a place (real seconds): about two of the largest made
MAX_WAITING = 16  # large requests waiting at once in one process; more are refused at once


def overloaded() -> errors.ServiceUnavailableError:
    """The live API's answer when it has no room for the request now: retryable."""
    return errors.ServiceUnavailableError(headers={"retry-after": "1", "x-should-retry": "true"})


class LargeWork:
    """At most ``limit`` holders at once; :meth:`take` waits up to ``wait_s`` for a place."""

    def __init__(self, limit: int = MAX_LARGE, wait_s: float = WAIT_S, max_waiting: int = MAX_WAITING) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self.max_waiting = max_waiting
        self._lock = threading.Lock()
        self.held = 0
        self._waiters: set[asyncio.Future[None]] = set()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_take(self) -> bool:
        """Take a place if one is free, at once."""
        with self._lock:
            if self.held >= self.limit:
                return False
            self.held += 1
            return True

    def release(self) -> None:
        """Give a place back, and let every waiter try again."""
        with self._lock:
            self.held = max(0, self.held - 1)
            waiters = list(self._waiters)
        for future in waiters:
            loop = future.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, future)

    async def take(self) -> bool:
        """Take a place, waiting up to :attr:`wait_s` for one; False if none came free in time (or too many wait)."""
        if self.try_take():
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        while True:
            with self._lock:
                if self.held < self.limit:
                    self.held += 1
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


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


LARGE = LargeWork()  # the process's places
