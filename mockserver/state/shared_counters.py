"""Per-test counters in Redis (:class:`~mockserver.state.counters.Counters`), one set for every
worker and replica: a fault that fires ``once`` fires once across them all, and a scripted sequence
gives each step to one request.

Keys, under the server's prefix and a namespace (``faults`` or ``scripts``):

- ``{namespace}:scope:{scope}``: a hash of one scope's counters (name -> count);
- ``{namespace}:scopes``: a sorted set of those hashes, by when each was last written.

Bounds: a scope's hash expires :data:`SCOPE_TTL_S` after it was last written; at most
:data:`MAX_SCOPES` scopes are kept (past it, the one written longest ago is dropped) and at most
:data:`MAX_COUNTERS_PER_SCOPE` counters per scope (past it, one of the others is dropped). Each
change is one Lua script, so one round trip and atomic; :meth:`RedisCounters.read` is one ``HGETALL``.
"""

from __future__ import annotations

from collections.abc import Mapping

from mockserver.state import shared

SCOPE_TTL_S = 3600  # a test's counters outlive the test by far; an hour bounds what idle scopes keep
MAX_SCOPES = 10_000
MAX_COUNTERS_PER_SCOPE = 64

# KEYS[1] the index of scopes, KEYS[2] the scope's hash. ARGV[1..3]: ttl, max scopes, max counters.
_BOUNDS = """
local function make_room(field)
  if redis.call('HEXISTS', KEYS[2], field) == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[2], redis.call('HRANDFIELD', KEYS[2]))
  end
end
local function touch()
  redis.call('EXPIRE', KEYS[2], ARGV[1])
  local now = redis.call('TIME')
  redis.call('ZADD', KEYS[1], tonumber(now[1]) * 1000000 + tonumber(now[2]), KEYS[2])
  if redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[2]) then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
    if oldest ~= KEYS[2] then
      redis.call('ZREM', KEYS[1], oldest)
      redis.call('DEL', oldest)
    end
  end
end
"""
# ARGV[4] the counter, ARGV[5] the limit.
_TAKE = (
    _BOUNDS
    + """
if tonumber(redis.call('HGET', KEYS[2], ARGV[4]) or '0') >= tonumber(ARGV[5]) then return 0 end
make_room(ARGV[4])
redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
touch()
return 1
"""
)
# ARGV[4..]: pairs of counter and the value it must still hold.
_CLAIM = (
    _BOUNDS
    + """
for i = 4, #ARGV, 2 do
  if tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0') ~= tonumber(ARGV[i + 1]) then return 0 end
end
for i = 4, #ARGV, 2 do
  make_room(ARGV[i])
  redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
end
touch()
return 1
"""
)
_CLEAR_ONE = """
redis.call('ZREM', KEYS[1], KEYS[2])
return redis.call('DEL', KEYS[2])
"""
# Every scope's hash is in the index (the index is bounded, so this loop is too).
_CLEAR_ALL = """
for _, hash in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('DEL', hash) end
return redis.call('DEL', KEYS[1])
"""


class RedisCounters:
    """Counters shared through Redis under ``namespace`` (see the module docstring)."""

    def __init__(self, where: shared.Shared, namespace: str) -> None:
        self._where = where
        self._redis = where.connection
        self._namespace = namespace
        self._index = where.key(f"{namespace}:scopes")
        self._take = self._redis.register_script(_TAKE)
        self._claim = self._redis.register_script(_CLAIM)
        self._clear_one = self._redis.register_script(_CLEAR_ONE)
        self._clear_all = self._redis.register_script(_CLEAR_ALL)
        self._bounds = [SCOPE_TTL_S, MAX_SCOPES, MAX_COUNTERS_PER_SCOPE]

    def _hash(self, scope: str | None) -> str:
        # ``none`` and ``id:...`` keep a request without a test id apart from one with an empty id.
        return self._where.key(f"{self._namespace}:scope:" + ("none" if scope is None else f"id:{scope}"))

    async def take(self, scope: str | None, name: str, limit: int) -> bool:
        async with self._where.reaching():
            taken = await self._take(keys=[self._index, self._hash(scope)], args=[*self._bounds, name, limit])
        return bool(taken)

    async def read(self, scope: str | None) -> dict[str, int]:
        async with self._where.reaching():
            raw = await self._redis.hgetall(self._hash(scope))
        return {_text(name): int(value) for name, value in raw.items()}

    async def claim(self, scope: str | None, expected: Mapping[str, int]) -> bool:
        pairs = [part for name, value in expected.items() for part in (name, value)]
        async with self._where.reaching():
            claimed = await self._claim(keys=[self._index, self._hash(scope)], args=[*self._bounds, *pairs])
        return bool(claimed)

    async def clear(self, scope: str | None = None) -> None:
        async with self._where.reaching():
            if scope is None:
                await self._clear_all(keys=[self._index])
            else:
                await self._clear_one(keys=[self._index, self._hash(scope)])


def _text(name: bytes | str) -> str:
    return name.decode() if isinstance(name, bytes) else name
