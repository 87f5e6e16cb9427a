"""The shared mutable state of accounts, behind one small interface.

Three kinds of state live here, and nothing else in the request path keeps any:

- **rate windows**: how much of each request/token allowance is used (:meth:`Store.admit`);
- **capacity pools**: how many Ultrafast requests are in flight (:meth:`Store.acquire`);
- **the usage ledger**: tokens, requests and cost per key, model and tier (:meth:`Store.record`);
- **the prompt cache**: which prompt prefixes each organization sent lately (:meth:`Store.cache_hit`,
  :meth:`Store.cache_put`; the entries and their bounds are in :mod:`mockserver.state.prompt_cache`).

Every method is a coroutine, so one interface serves both stores:

- :class:`MemoryStore` keeps the state in one process (the default: nothing to install);
- :class:`~mockserver.state.redis.RedisStore` keeps it in Redis, so several workers and
  replicas behave as one server. Each method is one atomic Lua script (one round trip).

The window methods take ``now`` from the caller's clock, so :class:`MemoryStore` is tested on a
:class:`~mockserver.engine.pacing.FakeClock` without sleeping. A shared store cannot use one
process's monotonic clock (every process has its own), so the Redis store ignores ``now`` and
keeps time by the Redis server's clock, the one clock all replicas agree on.

A capacity slot is taken under a *lease*: a name unique to the request holding it. The
Redis store expires a lease that its process stops renewing, so a slot held by a worker that
dies comes back by itself; :class:`MemoryStore` lives and dies with its process and needs none.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from mockserver.state.prompt_cache import MemoryPromptCache

WINDOW_SECONDS = 60.0
MEMORY_STATE = "in memory, in this process (rate windows, capacity and the usage ledger start empty)"


# Allowance, WindowState and Admitted are named tuples rather than frozen dataclasses: every admitted
# request makes several of them, and a tuple is built in one step where a frozen dataclass sets each
# field in turn. (A refusal's Shortfall is rare, and its ``index`` would hide ``tuple.index``.)


class Allowance(NamedTuple):
    """One rate limit to check: ``amount`` more units in the window ``bucket`` holding at most ``limit``."""

    bucket: str
    limit: int
    amount: int


class WindowState(NamedTuple):
    """How much of one window is used at some moment."""

    limit: int
    used: float

    @property
    def remaining(self) -> int:
        return remaining(self.limit, self.used)

    @property
    def reset_seconds(self) -> float:
        """Time until the window is back to its initial state (everything replenished)."""
        return reset_seconds(self.limit, self.used)


def remaining(limit: int, used: float) -> int:
    """What is left of a window of ``limit`` used ``used`` (:attr:`WindowState.remaining`), in whole units."""
    left = math.floor(limit - used + 1e-9)
    return left if left > 0 else 0


def reset_seconds(limit: int, used: float) -> float:
    """Seconds until a window of ``limit`` used ``used`` is whole again (:attr:`WindowState.reset_seconds`)."""
    return used * WINDOW_SECONDS / limit


@dataclass(frozen=True)
class Shortfall:
    """Why :meth:`Store.admit` refused: which allowance, how much was used, and how long to wait."""

    index: int
    used: int
    retry_after: float


class Admitted(NamedTuple):
    """What :meth:`Store.admit` found: the allowance that was short (None: all were taken), and the
    windows asked for, as they are after the step."""

    shortfall: Shortfall | None
    windows: tuple[WindowState, ...]


# The counts a ledger row sums (the fields of :class:`UsageRow` after its key, model and tier), in
# the order the Redis store's ``record`` script takes them.
LEDGER_COUNTS = (
    "requests",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "cost_usd",
)


@dataclass
class UsageRow:
    """Totals for one (key, model, tier) in the ledger."""

    key: str
    organization: str
    project: str
    model: str
    tier: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    # Of input_tokens: read from the prompt cache, and written to it (the replies' usage counts).
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class UsageEntry:
    """One successful reply, as the ledger records it."""

    key: str
    organization: str
    project: str
    model: str
    tier: str
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    cached_tokens: int = 0  # of input_tokens, read from the prompt cache
    cache_write_tokens: int = 0  # of input_tokens, written to the prompt cache
    # The request's id: a shared store records an entry once per id, so a write retried after a
    # dropped connection (which Redis may have applied already) is not counted twice. "": no check.
    request_id: str = ""


@dataclass(frozen=True)
class Spend:
    """An organization's running total, checked against its quota."""

    cost_usd: float = 0.0
    tokens: int = 0


class Store(Protocol):
    """What the request path needs from shared state. Each method is atomic."""

    async def window(self, now: float, bucket: str, limit: int) -> WindowState: ...

    async def admit(
        self,
        now: float,
        allowances: Sequence[Allowance],
        *,
        also: Sequence[Allowance] = (),
        report: Sequence[tuple[str, int]] = (),
        request_id: str = "",
    ) -> Admitted:
        """Admission's whole rate-limit step, atomically and in one round trip: take every one of
        ``allowances``, or none of them and say which one is short; if they were taken, take each
        of ``also`` too, whatever its level (windows that are reported but not enforced); then the
        :meth:`window` of each ``(bucket, limit)`` in ``report``. A shared store takes a request's
        allowances once per ``request_id`` (a retried call after a dropped connection is answered
        as admitted without taking them again); ``""``: no check."""

    async def acquire(self, pools: Sequence[tuple[str, int | None]], lease: str) -> int | None:
        """Take a slot in every pool (name, cap) under ``lease``; ``None`` cap means unlimited.

        Returns the index of the first full pool and takes nothing, or None on success.
        """

    async def release(self, pools: Sequence[str], lease: str) -> None:
        """Give back the slots ``lease`` holds in ``pools``; releasing twice is harmless."""

    async def in_flight(self, pool: str) -> int: ...

    async def peak(self, pool: str) -> int:
        """The most slots this pool ever had taken at once since the last reset."""

    def held_here(self, pool: str) -> int:
        """The slots of ``pool`` this process holds now; read without waiting (a metrics gauge)."""

    on_held_change: Callable[[], None] | None
    """Called after this process took or gave back slots, so a metrics gauge follows :meth:`held_here`."""

    async def record(self, entry: UsageEntry) -> None: ...

    async def usage(self) -> list[UsageRow]: ...

    async def spend(self, organization: str) -> Spend: ...

    async def cache_hit(self, now: float, scope: str, prefixes: Sequence[str]) -> int:
        """The index of the last of ``prefixes`` (shortest first) that ``scope``'s prompt cache holds, or -1."""

    async def cache_put(self, now: float, scope: str, entries: Sequence[tuple[str, float]]) -> None:
        """Hold each ``(prefix, ttl_s)`` in ``scope``'s prompt cache for ``ttl_s`` from now (refreshing it)."""

    async def reset(self) -> None: ...

    def describe(self) -> str:
        """One line for the start-up summary: where the state is kept."""

    async def close(self) -> None:
        """Let go of connections and background work (the server is stopping)."""


class _Bucket:
    """One window's usage as of its last update; updated in place (every admitted request updates four)."""

    __slots__ = ("at", "used")

    def __init__(self, used: float, at: float) -> None:
        self.used = used
        self.at = at


def _level(bucket: _Bucket | None, now: float, limit: int) -> float:
    """Usage left in a window after replenishing ``limit`` units per window since its last update
    (0 for a window never used)."""
    if bucket is None:
        return 0.0
    elapsed = now - bucket.at
    used = bucket.used - elapsed * limit / WINDOW_SECONDS if elapsed > 0.0 else bucket.used
    return used if used > 0.0 else 0.0


def _shortfall(allowances: Sequence[Allowance], index: int, used: float) -> Shortfall:
    """Why the allowance at ``index`` cannot be taken from its window, used ``used`` so far."""
    _, limit, amount = allowances[index]
    return Shortfall(index, math.ceil(used - 1e-9), (used + amount - limit) * WINDOW_SECONDS / limit)


# Every admitted request makes an Admitted and two WindowStates (and two Allowances): ``as_tuple(Cls, values)``
# builds one as the tuple it is, skipping the named tuple's own ``__new__``, a Python function that about
# doubles their cost.
as_tuple = tuple.__new__


@dataclass
class MemoryStore:
    """The in-process store. A lock makes each method atomic even across threads.

    No method awaits anything, so a test in another thread may read it with ``asyncio.run``.
    A pool is the set of leases holding a slot in it, so releasing a lease twice gives back one
    slot. Leases never expire: a slot lives exactly as long as the request that holds it.
    """

    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _slots: dict[str, set[str]] = field(default_factory=dict)
    _peaks: dict[str, int] = field(default_factory=dict)
    _rows: dict[tuple[str, str, str], UsageRow] = field(default_factory=dict)
    _spend: dict[str, Spend] = field(default_factory=dict)
    prompt_cache: MemoryPromptCache = field(default_factory=MemoryPromptCache)
    on_held_change: Callable[[], None] | None = None

    # -- rate windows -----------------------------------------------------------------------

    async def admit(
        self,
        now: float,
        allowances: Sequence[Allowance],
        *,
        also: Sequence[Allowance] = (),
        report: Sequence[tuple[str, int]] = (),
        request_id: str = "",  # nothing to check in one process: no call here is ever retried
    ) -> Admitted:
        # Every admitted request passes here with four windows: each is looked up once, and updated in place.
        with self._lock:
            buckets = self._buckets
            taken: list[tuple[str, _Bucket | None, float]] = []
            for name, limit, amount in allowances:
                bucket = buckets.get(name)
                used = _level(bucket, now, limit)
                if used + amount > limit:  # none is taken
                    return Admitted(_shortfall(allowances, len(taken), used), self._windows(now, report))
                taken.append((name, bucket, used + amount))
            for name, bucket, used in taken:
                if bucket is None:
                    buckets[name] = _Bucket(used, now)
                else:
                    bucket.used, bucket.at = used, now
            for name, limit, amount in also:  # one after the other: two may name the same window
                bucket = buckets.get(name)
                if bucket is None:
                    buckets[name] = _Bucket(float(amount), now)
                else:
                    bucket.used, bucket.at = _level(bucket, now, limit) + amount, now
            return as_tuple(Admitted, (None, self._windows(now, report)))

    def _windows(self, now: float, report: Sequence[tuple[str, int]]) -> tuple[WindowState, ...]:
        """The windows of ``report`` as they are now; with the lock held."""
        get = self._buckets.get
        return tuple([as_tuple(WindowState, (limit, _level(get(name), now, limit))) for name, limit in report])

    async def window(self, now: float, bucket: str, limit: int) -> WindowState:
        with self._lock:
            return WindowState(limit, _level(self._buckets.get(bucket), now, limit))

    # -- capacity pools ---------------------------------------------------------------------

    async def acquire(self, pools: Sequence[tuple[str, int | None]], lease: str) -> int | None:
        with self._lock:
            for index, (name, cap) in enumerate(pools):
                if cap is not None and len(self._slots.get(name, ())) >= cap:
                    return index
            for name, _ in pools:
                leases = self._slots.setdefault(name, set())
                leases.add(lease)
                self._peaks[name] = max(self._peaks.get(name, 0), len(leases))
        self._held_changed()
        return None

    async def release(self, pools: Sequence[str], lease: str) -> None:
        with self._lock:
            for name in pools:
                leases = self._slots.get(name)
                if leases is not None:
                    leases.discard(lease)
                    if not leases:
                        del self._slots[name]
        self._held_changed()

    def _held_changed(self) -> None:
        if self.on_held_change is not None:
            self.on_held_change()

    async def in_flight(self, pool: str) -> int:
        with self._lock:
            return len(self._slots.get(pool, ()))

    async def peak(self, pool: str) -> int:
        with self._lock:
            return self._peaks.get(pool, 0)

    def held_here(self, pool: str) -> int:
        with self._lock:
            return len(self._slots.get(pool, ()))

    # -- ledger -----------------------------------------------------------------------------

    async def record(self, entry: UsageEntry) -> None:
        with self._lock:
            where = (entry.key, entry.model, entry.tier)
            row = self._rows.get(where)
            if row is None:
                row = self._rows[where] = UsageRow(
                    entry.key, entry.organization, entry.project, entry.model, entry.tier
                )
            row.requests += 1
            row.input_tokens += entry.input_tokens
            row.output_tokens += entry.output_tokens
            row.reasoning_tokens += entry.reasoning_tokens
            row.cost_usd += entry.cost_usd
            row.cached_tokens += entry.cached_tokens
            row.cache_write_tokens += entry.cache_write_tokens
            before = self._spend.get(entry.organization, Spend())
            self._spend[entry.organization] = Spend(
                before.cost_usd + entry.cost_usd, before.tokens + entry.input_tokens + entry.output_tokens
            )

    async def usage(self) -> list[UsageRow]:
        with self._lock:
            return [UsageRow(**vars(row)) for row in self._rows.values()]

    async def spend(self, organization: str) -> Spend:
        with self._lock:
            return self._spend.get(organization, Spend())

    # -- prompt cache -------------------------------------------------------------------------

    async def cache_hit(self, now: float, scope: str, prefixes: Sequence[str]) -> int:
        with self._lock:
            return self.prompt_cache.hit(now, scope, prefixes)

    async def cache_put(self, now: float, scope: str, entries: Sequence[tuple[str, float]]) -> None:
        with self._lock:
            self.prompt_cache.put(now, scope, entries)

    async def reset(self) -> None:
        """Forget every window, ledger row, peak and cached prompt. Slots in flight stay taken until released."""
        with self._lock:
            self.prompt_cache.clear()
            self._buckets.clear()
            self._peaks = {name: len(leases) for name, leases in self._slots.items()}
            self._rows.clear()
            self._spend.clear()

    def describe(self) -> str:
        return MEMORY_STATE

    async def close(self) -> None:
        return None
