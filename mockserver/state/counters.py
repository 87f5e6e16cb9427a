"""Per-test counters: how often a count-limited fault has fired, how far a scripted sequence has got.

Both are counted per *scope* (the ``x-mock-test-id`` header; ``None`` for requests without one),
each counter named by what it counts (``header:status=503,once``, ``rule:0``, a script rule).
Two operations change them, each atomic:

- :meth:`Counters.take` adds one only while the counter is below a limit (a fault that fires
  ``once`` fires once, however many requests race for it);
- :meth:`Counters.claim` adds one to each named counter only if every one still holds the value
  the caller read with :meth:`Counters.read` (a sequence step is given to one request only; the
  loser reads again and plans again).

:class:`MemoryCounters` keeps them in this process (the default);
:class:`~mockserver.state.shared_counters.RedisCounters` keeps them in Redis, so every worker and
replica counts the same firings and steps.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

MAX_COUNTERS = 10_000  # in one process, across every scope; past it, the oldest scope is forgotten


class Counters(Protocol):
    """Counters per scope. Each method is atomic."""

    async def take(self, scope: str | None, name: str, limit: int) -> bool:
        """Add one to ``name`` in ``scope`` if it is below ``limit``; whether it was."""

    async def read(self, scope: str | None) -> dict[str, int]:
        """Every counter of ``scope`` (a counter never touched is absent: zero)."""

    async def claim(self, scope: str | None, expected: Mapping[str, int]) -> bool:
        """Add one to every counter in ``expected`` if each still reads its expected value; else change nothing."""

    async def clear(self, scope: str | None = None) -> None:
        """Forget ``scope``'s counters, or every scope's."""


class MemoryCounters:
    """The counters of one process, at most :data:`MAX_COUNTERS` of them. A lock makes each method
    atomic across threads too; no method awaits, so none can interleave with another request."""

    def __init__(self, max_counters: int = MAX_COUNTERS) -> None:
        self._max = max_counters
        self._scopes: dict[str | None, dict[str, int]] = {}  # oldest scope first
        self._total = 0
        self._lock = threading.Lock()

    async def take(self, scope: str | None, name: str, limit: int) -> bool:
        with self._lock:
            counts = self._scopes.get(scope, {})
            used = counts.get(name, 0)
            if used >= limit:
                return False
            self._set(scope, name, used + 1)
            return True

    async def read(self, scope: str | None) -> dict[str, int]:
        with self._lock:
            return dict(self._scopes.get(scope, {}))

    async def claim(self, scope: str | None, expected: Mapping[str, int]) -> bool:
        with self._lock:
            counts = self._scopes.get(scope, {})
            if any(counts.get(name, 0) != value for name, value in expected.items()):
                return False
            for name, value in expected.items():
                self._set(scope, name, value + 1)
            return True

    async def clear(self, scope: str | None = None) -> None:
        with self._lock:
            if scope is None:
                self._scopes.clear()
                self._total = 0
            else:
                self._total -= len(self._scopes.pop(scope, {}))

    def _set(self, scope: str | None, name: str, value: int) -> None:
        """Set one counter, forgetting the oldest scopes (then this scope's oldest counters) past the bound."""
        counts = self._scopes.setdefault(scope, {})
        if name not in counts:
            while self._total >= self._max:
                other = next((s for s in self._scopes if s != scope), scope)
                if other != scope:
                    self._total -= len(self._scopes.pop(other))
                else:  # this scope alone fills the bound: forget its oldest counter
                    counts.pop(next(iter(counts)))
                    self._total -= 1
            self._total += 1
        counts[name] = value

    def __len__(self) -> int:
        return self._total
