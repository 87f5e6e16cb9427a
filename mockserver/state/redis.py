"""The store in Redis: rate windows, capacity slots and the usage ledger shared by every worker and
replica pointed at one Redis (``--state redis://host:port/db``).

It behaves exactly as :class:`~mockserver.state.store.MemoryStore` (the same replenishment
arithmetic, the same all-or-nothing admission); ``tests/state/test_store_contract.py`` runs one set of
tests against both. What differs, and why:

- **One round trip, atomic.** Each check-and-update (``admit``, ``window``, ``record``,
  ``acquire``, ``in_flight``, ``reset``) is one Lua script, which Redis runs with nothing else in
  between, so a cap of K holds exactly however many workers race for it. The scripts are in
  :mod:`mockserver.state.redis_scripts`, one per operation. ``redis``'s script helper loads a script again if Redis
  forgot it (a restart), so recovery needs nothing from us.
- **One clock.** Every process has its own monotonic clock, so the windows keep time by the Redis
  server's (``TIME`` inside the scripts) and the caller's ``now`` is ignored.
- **Once per request.** The client retries a call once on a fresh connection when the first one
  failed, and Redis may have run the first before the connection dropped. ``admit`` and ``record``
  are therefore idempotent by request id: a ``done:admit:<id>`` / ``done:record:<id>`` key, kept
  :data:`IDEMPOTENCY_TTL_MS`, makes the retry take no allowance and add no ledger entry again.
- **Leases.** A pool is a sorted set of lease names scored by their expiry (server time, in ms).
  This process renews the leases it holds every ``lease_ttl_s / 3`` (one script call for all of
  them, from a background task started by the first :meth:`RedisStore.acquire`). A worker that
  dies stops renewing and its slots come back within ``lease_ttl_s`` (:data:`LEASE_TTL_S`, 15 s by
  default): ``acquire`` and ``in_flight`` ignore and drop expired leases.
- **Redis away.** Every call raises the retryable 503 ``state_unavailable``
  (:func:`~mockserver.state.shared.reaching`) while Redis cannot be reached; the client reconnects
  by itself on a later call. A lease whose renewal failed meanwhile may have expired: it is not
  taken again behind the cap's back (renewal only extends leases that are still there).

**Keys**, all under the prefix (``mockserver:`` by default), so one Redis can hold several servers:
``window:used`` and ``window:at`` (hashes: one field per rate bucket), ``pool:<name>`` (a sorted set
per capacity pool), ``pools`` (the set of pool names) and ``peaks`` (hash), ``usage:rows`` (hash:
a ledger row's key, organization, project, model and tier) and one hash per ledger counter
(``usage:requests``, ``usage:cached_tokens``, ...), ``spend:cost_usd`` and ``spend:tokens`` (hashes per organization),
``pcache:<scope>`` (a sorted set per organization or workspace: the prompt cache, with its own
bounds, :mod:`mockserver.state.prompt_cache`) and ``pcache:scopes`` (their names).

**Bounds.** The number of keys is fixed, but for the ``done:*`` keys (two per request, each expiring
after :data:`IDEMPOTENCY_TTL_MS`, so at most twice the requests of that window); the fields grow
with the fixture's keys x models x tiers (rate buckets and ledger rows) and organizations (pools,
spend), all bounded by the fixture. A pool holds at most its cap of leases (or the requests in
flight, when unlimited), and a lease nobody renews is gone ``lease_ttl_s`` later. The scripts target
a standalone Redis (with replicas or not), not Redis Cluster: they build pool key names from the prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence

import redis.asyncio as redis
from redis.commands.core import AsyncScript

from mockserver.state import prompt_cache, shared
from mockserver.state.redis_scripts import SCRIPTS
from mockserver.state.store import (
    LEDGER_COUNTS,
    Admitted,
    Allowance,
    Shortfall,
    Spend,
    UsageEntry,
    UsageRow,
    WindowState,
)

LEASE_TTL_S = 15.0  # a slot whose process stopped renewing it comes back within this
# The ledger's counters, one hash each (field: the row), in the order the ``record`` script takes
# them. A hash an older version did not write (cached_tokens, cache_write_tokens) reads as 0.
COUNTERS = LEDGER_COUNTS
# How long a request's admission and ledger entry are remembered by its id, so that the one retry
# the client makes after a dropped connection (within its call timeout) is not counted again.
IDEMPOTENCY_TTL_MS = 10_000

logger = logging.getLogger("mockserver")


def _integer(reply: object) -> int:
    assert isinstance(reply, int), reply
    return reply


class RedisStore:
    """The :class:`~mockserver.state.store.Store` on one Redis connection (see the module docstring).

    ``connection`` comes from :func:`mockserver.state.shared.connect`; ``url`` names it in
    messages. :meth:`close` closes the connection.
    """

    def __init__(
        self,
        connection: redis.Redis,
        url: str,
        *,
        prefix: str = shared.DEFAULT_PREFIX,
        lease_ttl_s: float = LEASE_TTL_S,
        prompt_cache_entries: int = prompt_cache.ENTRIES_PER_SCOPE,
    ) -> None:
        if not lease_ttl_s > 0:
            raise ValueError(f"the lease time-to-live must be more than 0 seconds, not {lease_ttl_s}")
        self._redis = connection
        self._url = url
        self._prefix = prefix
        self._prompt_cache_entries = prompt_cache_entries
        self._lease_ttl_ms = max(1, round(lease_ttl_s * 1000))
        self._renew_every_s = lease_ttl_s / 3
        self._scripts: dict[str, AsyncScript] = {
            name: connection.register_script(source) for name, source in {**SCRIPTS, **prompt_cache.SCRIPTS}.items()
        }
        self._windows = [self._key("window:used"), self._key("window:at")]
        self._held: dict[str, tuple[str, ...]] = {}  # lease -> the pools it holds a slot in, here
        self._renewing: asyncio.Task[None] | None = None
        self.on_held_change: Callable[[], None] | None = None

    def _key(self, name: str) -> str:
        return f"{self._prefix}{name}"

    async def _run(self, script: str, keys: Sequence[str], args: Sequence[str | int | float]) -> object:
        async with shared.reaching(self._url):
            return await self._scripts[script](keys=list(keys), args=list(args))

    # -- rate windows (the caller's ``now`` is ignored: Redis's clock is the one all replicas share)

    async def window(self, now: float, bucket: str, limit: int) -> WindowState:
        used = await self._run("window", self._windows, [bucket, limit])
        assert isinstance(used, bytes)
        return WindowState(limit, float(used))

    async def admit(
        self,
        now: float,
        allowances: Sequence[Allowance],
        *,
        also: Sequence[Allowance] = (),
        report: Sequence[tuple[str, int]] = (),
        request_id: str = "",
    ) -> Admitted:
        keys = [*self._windows, self._key(f"done:admit:{request_id}")] if request_id else self._windows
        args: list[str | int] = [IDEMPOTENCY_TTL_MS, len(allowances)]
        args += [part for a in allowances for part in (a.bucket, a.limit, a.amount)]
        args.append(len(also))
        args += [part for a in also for part in (a.bucket, a.limit, a.amount)]
        args += [part for bucket, limit in report for part in (bucket, limit)]
        reply = await self._run("admit", keys, args)
        assert isinstance(reply, list) and len(reply) == 2, reply
        refused, usage = reply
        shortfall = None
        if refused is not None:
            index, used, retry_after = refused
            shortfall = Shortfall(int(index), int(used), float(retry_after))
        windows = tuple(WindowState(limit, float(used)) for (_, limit), used in zip(report, usage, strict=True))
        return Admitted(shortfall, windows)

    # -- capacity pools ---------------------------------------------------------------------

    async def acquire(self, pools: Sequence[tuple[str, int | None]], lease: str) -> int | None:
        keys = [self._key("peaks"), self._key("pools"), *(self._key(f"pool:{name}") for name, _ in pools)]
        args: list[str | int] = [lease, self._lease_ttl_ms]
        for name, cap in pools:
            args += [name, "" if cap is None else cap]
        full = await self._run("acquire", keys, args)
        if full is not None:
            return _integer(full)
        self._held[lease] = tuple(name for name, _ in pools)
        if self.on_held_change is not None:
            self.on_held_change()
        if self._renewing is None or self._renewing.done():
            self._renewing = asyncio.get_running_loop().create_task(self._keep_renewing())
        return None

    async def release(self, pools: Sequence[str], lease: str) -> None:
        if self._held.pop(lease, None) is not None and self.on_held_change is not None:
            self.on_held_change()
        async with shared.reaching(self._url), self._redis.pipeline(transaction=True) as pipe:
            for name in pools:
                pipe.zrem(self._key(f"pool:{name}"), lease)
            await pipe.execute()

    async def in_flight(self, pool: str) -> int:
        return _integer(await self._run("in_flight", [self._key(f"pool:{pool}")], []))

    async def peak(self, pool: str) -> int:
        async with shared.reaching(self._url):
            value = await self._redis.hget(self._key("peaks"), pool)
        return int(value or 0)

    def held_here(self, pool: str) -> int:
        return sum(pool in pools for pools in self._held.values())

    async def renew(self) -> None:
        """Push the expiry of every lease held here ``lease_ttl_s`` on (one script call)."""
        held = [(lease, name) for lease, pools in list(self._held.items()) for name in pools]
        if held:
            keys = [self._key(f"pool:{name}") for _, name in held]
            await self._run("renew", keys, [self._lease_ttl_ms, *(lease for lease, _ in held)])

    async def _keep_renewing(self) -> None:
        while True:
            await asyncio.sleep(self._renew_every_s)
            try:
                await self.renew()
            except Exception:  # Redis away, or anything else: keep trying, or every slot here expires
                logger.warning("could not renew this process's capacity leases in Redis; retrying", exc_info=True)

    # -- ledger -----------------------------------------------------------------------------

    async def record(self, entry: UsageEntry) -> None:
        row = json.dumps([entry.key, entry.model, entry.tier])
        who = json.dumps([entry.key, entry.organization, entry.project, entry.model, entry.tier])
        keys = [
            self._key("usage:rows"),
            *(self._key(f"usage:{counter}") for counter in COUNTERS),
            self._key("spend:cost_usd"),
            self._key("spend:tokens"),
        ]
        if entry.request_id:
            keys.append(self._key(f"done:record:{entry.request_id}"))
        amounts = (
            entry.input_tokens,
            entry.output_tokens,
            entry.reasoning_tokens,
            entry.cached_tokens,
            entry.cache_write_tokens,
            repr(entry.cost_usd),
        )
        await self._run("record", keys, [IDEMPOTENCY_TTL_MS, row, who, *amounts, entry.organization])

    async def usage(self) -> list[UsageRow]:
        async with shared.reaching(self._url), self._redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(self._key("usage:rows"))
            for counter in COUNTERS:
                pipe.hgetall(self._key(f"usage:{counter}"))
            rows, *counters = await pipe.execute()
        report = []
        for row, who in rows.items():
            key, organization, project, model, tier = json.loads(who)
            # A counter missing for this row (or a whole hash, from an older version) is 0.
            *counts, cost = (counter.get(row, b"0") for counter in counters)
            requests, input_tokens, output_tokens, reasoning, cached, written = map(int, counts)
            report.append(
                UsageRow(
                    key, organization, project, model, tier, requests, input_tokens, output_tokens, reasoning,
                    cost_usd=float(cost), cached_tokens=cached, cache_write_tokens=written,
                )
            )  # fmt: skip
        return report

    async def spend(self, organization: str) -> Spend:
        async with shared.reaching(self._url), self._redis.pipeline(transaction=True) as pipe:
            pipe.hget(self._key("spend:cost_usd"), organization)
            pipe.hget(self._key("spend:tokens"), organization)
            cost, tokens = await pipe.execute()
        return Spend(float(cost or 0), int(tokens or 0))

    # -- prompt cache (:mod:`mockserver.state.prompt_cache`; Redis's clock, the caller's ``now`` ignored)

    async def cache_hit(self, now: float, scope: str, prefixes: Sequence[str]) -> int:
        if not prefixes:
            return prompt_cache.MISS
        return _integer(await self._run("prompt_cache_hit", [self._key(f"pcache:{scope}")], prefixes))

    async def cache_put(self, now: float, scope: str, entries: Sequence[tuple[str, float]]) -> None:
        if not entries:
            return
        args: list[str | int] = [scope, self._prompt_cache_entries]
        for prefix, ttl_s in entries:
            args += [prefix, max(1, round(ttl_s * 1000))]
        await self._run("prompt_cache_put", [self._key(f"pcache:{scope}"), self._key("pcache:scopes")], args)

    # -- the whole store --------------------------------------------------------------------

    async def reset(self) -> None:
        """Forget every window, ledger row, peak and cached prompt. Slots in flight stay taken until released."""
        await self._run("prompt_cache_reset", [self._key("pcache:scopes")], [self._prefix])
        forget = [
            *self._windows,
            self._key("usage:rows"),
            *(self._key(f"usage:{counter}") for counter in COUNTERS),
            self._key("spend:cost_usd"),
            self._key("spend:tokens"),
        ]
        await self._run("reset", [self._key("peaks"), self._key("pools"), *forget], [self._prefix])

    def describe(self) -> str:
        return f"Redis at {shared.where(self._url)}, shared by every worker and replica (prefix {self._prefix})"

    async def close(self) -> None:
        """Stop renewing (the replies' own ``finally`` blocks release their slots) and disconnect."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
            self._renewing = None
        await self._redis.aclose()
