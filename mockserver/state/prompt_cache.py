"""The prompt cache's entries: which prompt prefixes each scope (an organization, a workspace) has
recently sent, and until when each is kept.

A prefix is named by its hash (what it is, and what it covers, is the service's business:
:mod:`mockserver.service.prompt_cache`); this module only remembers names and expiries. Two calls:

- :meth:`MemoryPromptCache.hit`: the longest of a request's prefixes the scope still holds;
- :meth:`MemoryPromptCache.put`: hold these prefixes for their time to live from now (a prefix held
  already is refreshed: it lives on from now, never shorter than it had left).

Both stores keep the same entries: :class:`~mockserver.state.store.MemoryStore` through
:class:`MemoryPromptCache` (time is the caller's ``now``, the server's injected clock), and
:class:`~mockserver.state.redis.RedisStore` through the scripts in :data:`SCRIPTS` (time is the
Redis server's, as for its rate windows: one sorted set per scope, its members the prefix names,
scored by their expiry in milliseconds).

**Bounds.** A scope holds at most :data:`ENTRIES_PER_SCOPE` prefixes: past it, the least recently
used go first (in Redis, the ones expiring soonest, which is the same order when the time to
live is the same). The memory store holds at most :data:`ENTRIES_IN_TOTAL` across scopes: past
it, the least recently used scope gives up its oldest entry. In Redis a scope's set expires with
its last entry, and scopes are the fixture's organizations (or workspaces), so the total is at
most that many times :data:`ENTRIES_PER_SCOPE`. An entry costs about 150 bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

ENTRIES_PER_SCOPE = 10_000
ENTRIES_IN_TOTAL = 100_000
MISS = -1


@dataclass
class MemoryPromptCache:
    """The prompt cache of one process. Not locked: :class:`~mockserver.state.store.MemoryStore` holds
    its lock around each call."""

    per_scope: int = ENTRIES_PER_SCOPE
    in_total: int = ENTRIES_IN_TOTAL
    # scope -> prefix -> expiry, least recently used first; the scopes too, least recently written first
    _scopes: dict[str, OrderedDict[str, float]] = field(default_factory=dict)
    _size: int = 0

    def hit(self, now: float, scope: str, prefixes: Sequence[str]) -> int:
        """The index of the last of ``prefixes`` the scope holds unexpired, or :data:`MISS`."""
        held = self._scopes.get(scope)
        if not held:
            return MISS
        for index in range(len(prefixes) - 1, -1, -1):
            expiry = held.get(prefixes[index])
            if expiry is not None and expiry > now:
                return index
        return MISS

    def put(self, now: float, scope: str, entries: Sequence[tuple[str, float]]) -> None:
        """Hold each ``(prefix, ttl_s)`` until ``now + ttl_s`` (or longer, if it had longer left)."""
        held = self._scopes.pop(scope, None)
        if held is None:
            held = OrderedDict()
        self._scopes[scope] = held  # the most recently written scope goes last
        for prefix, ttl_s in entries:
            before = held.pop(prefix, None)
            if before is None:
                self._size += 1
            held[prefix] = max(now + ttl_s, before or 0.0)
        # Expired entries at the front (the least recently used) go first; then the oldest past the bound.
        while held and (len(held) > self.per_scope or next(iter(held.values())) <= now):
            held.popitem(last=False)
            self._size -= 1
        while self._size > self.in_total:
            oldest_scope = next(iter(self._scopes))
            oldest = self._scopes[oldest_scope]
            oldest.popitem(last=False)
            self._size -= 1
            if not oldest:
                del self._scopes[oldest_scope]
        if not held:
            self._scopes.pop(scope, None)

    def size(self) -> int:
        """Entries held, in every scope (expired ones not yet dropped included)."""
        return self._size

    def clear(self) -> None:
        self._scopes.clear()
        self._size = 0


# The Redis store's side: one sorted set per scope (``pcache:<scope>``), its members the prefix names
# scored by expiry in ms on the Redis server's clock, and a set of the scopes (``pcache:scopes``, for reset).
_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

SCRIPTS = {
    # KEYS: pcache:<scope>. ARGV: the prefix names, shortest first. Returns the 0-based index of the
    # last one held unexpired, or -1.
    "prompt_cache_hit": _NOW_MS
    + """
for i = #ARGV, 1, -1 do
  local expiry = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if expiry and tonumber(expiry) > now then
    return i - 1
  end
end
return -1
""",
    # KEYS: pcache:<scope>, pcache:scopes. ARGV: the scope, the most entries a scope holds, then
    # (prefix, ttl in ms) pairs. Holds each until now + ttl (or longer, if it had longer left), drops
    # the expired, then the soonest to expire past the bound; the set expires with its last entry.
    "prompt_cache_put": _NOW_MS
    + """
for i = 3, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], 'GT', now + tonumber(ARGV[i + 1]), ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[2])
if over > 0 then
  redis.call('ZPOPMIN', KEYS[1], over)
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIREAT', KEYS[1], math.ceil(tonumber(last[2])))
  redis.call('SADD', KEYS[2], ARGV[1])
end
return false
""",
    # KEYS: pcache:scopes. ARGV: the key prefix. Forgets every scope's entries.
    "prompt_cache_reset": """
for _, scope in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', ARGV[1] .. 'pcache:' .. scope)
end
redis.call('DEL', KEYS[1])
return false
""",
}
