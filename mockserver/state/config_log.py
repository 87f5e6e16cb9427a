"""The runtime configuration, shared by every worker and replica through Redis.

Every process starts from the same options and fixture. What changes at run time is a sequence
of merge patches (``PATCH /_mock/config``) and resets (``POST /_mock/reset``), so that sequence
is what is shared: a Redis list of the patches applied since the last reset, and an epoch that
a reset increments. A process remembers the epoch and how many patches it has applied; before
each request it asks Redis for both (one round trip) and, when they moved, applies the new
patches in list order, or starts again from its initial configuration after a reset. A PATCH
answered by one worker is therefore in force on every worker for the next request it serves.

A patch is checked against the configuration at the log's head, and appended only if the head has
not moved since (one script: compare and append). If another process appended first, the patch is
checked again on the new head: still valid, it is appended there; made invalid by the other
change, it is refused with a 409 (``config_conflict``) and changes nothing anywhere. So every
patch in the log applies, in order, in every process that follows it.

The list is bounded (:data:`MAX_PATCHES`): past it, the process that appends folds the log
into one patch (the difference between the initial configuration and the one in force) in a new
epoch, so every process, and a replica starting late, still reaches the same configuration.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import orjson

from mockserver.state import shared

MAX_PATCHES = 256  # patches kept before the log is folded into one
EPOCH_BITS = 48


@dataclass(frozen=True)
class Changes:
    """What moved in the log since a position: the patches to apply, in order, and where that leaves
    the reader. With ``restart``, start again from the initial configuration first (a reset or a fold)."""

    position: Position
    patches: list[object]
    restart: bool


@dataclass(frozen=True)
class Position:
    """How far a process has followed the log: the reset epoch and the patches applied in it."""

    epoch: int = 0
    applied: int = 0


# KEYS[1] the epoch, KEYS[2] the list of patches. Each script is one atomic step. An epoch that
# does not exist yet (a new Redis, or one that restarted empty) starts from a random number the
# caller offers (the last ARGV), not from 0, so a process that followed the log before a restart
# cannot mistake the new log for the old one.
_EPOCH = """
local function epoch(offered)
  local now = redis.call('GET', KEYS[1])
  if not now then
    redis.call('SET', KEYS[1], offered)
    now = offered
  end
  return tonumber(now)
end
"""
_READ = (
    _EPOCH
    + """
local current = epoch(ARGV[2])
if ARGV[1] == 'all' then
  return {current, redis.call('LRANGE', KEYS[2], 0, -1)}
end
return {current, redis.call('LLEN', KEYS[2])}
"""
)
# Fold only if nothing was appended and nothing was reset since the folder read the log; otherwise
# leave it (the next append folds instead), so no patch is ever lost.
_FOLD = (
    _EPOCH
    + """
if epoch(ARGV[4]) ~= tonumber(ARGV[3]) or redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('INCR', KEYS[1])
return 1
"""
)
# Append only onto the log the patch was checked against: same epoch, same length. Returns the
# length after it, or 0 if the log moved meanwhile (the caller checks the patch again on the new head).
_APPEND = (
    _EPOCH
    + """
if epoch(ARGV[4]) ~= tonumber(ARGV[2]) or redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[3]) then return 0 end
return redis.call('RPUSH', KEYS[2], ARGV[1])
"""
)
_RESET = (
    _EPOCH
    + """
epoch(ARGV[1])
redis.call('DEL', KEYS[2])
return redis.call('INCR', KEYS[1])
"""
)


class ConfigLog:
    """The shared sequence of configuration patches (see the module docstring)."""

    def __init__(self, where: shared.Shared) -> None:
        self._redis = where.connection
        self._url = where.url
        self._keys = [where.key("config:epoch"), where.key("config:patches")]
        self._read = self._redis.register_script(_READ)
        self._fold = self._redis.register_script(_FOLD)
        self._append = self._redis.register_script(_APPEND)
        self._reset = self._redis.register_script(_RESET)

    async def position(self) -> Position:
        """Where the log stands now (one round trip, made before every request)."""
        async with shared.reaching(self._url):
            epoch, length = await self._read(keys=self._keys, args=["length", _offered_epoch()])
        return Position(int(epoch), int(length))

    async def since(self, seen: Position) -> Changes:
        """The patches after ``seen`` (all of them after a reset or a fold), and the position after them."""
        async with shared.reaching(self._url):
            epoch, patches = await self._read(keys=self._keys, args=["all", _offered_epoch()])
        now = Position(int(epoch), len(patches))
        decoded = [orjson.loads(p) for p in patches]
        if now.epoch != seen.epoch or now.applied < seen.applied:
            return Changes(now, decoded, restart=True)
        return Changes(now, decoded[seen.applied :], restart=False)

    async def append(self, patch: object, onto: Position) -> int | None:
        """Add a patch at the end, if the log is still at ``onto`` (the head it was checked against):
        the log's length after it, or None if another process changed the log first. Atomic: a patch
        is appended only onto the configuration it was checked on, so it applies in every process."""
        async with shared.reaching(self._url):
            args: list[int | bytes] = [orjson.dumps(patch), onto.epoch, onto.applied, _offered_epoch()]
            length = int(await self._append(keys=self._keys, args=args))
        return length or None

    async def fold(self, position: Position, whole: object) -> bool:
        """Replace the log, if it is still at ``position``, by ``whole``: one patch leading from the
        initial configuration to the one in force, in a new epoch. False if the log moved meanwhile."""
        async with shared.reaching(self._url):
            args: list[int | bytes] = [position.applied, orjson.dumps(whole), position.epoch, _offered_epoch()]
            return bool(await self._fold(keys=self._keys, args=args))

    async def reset(self) -> Position:
        """Back to the initial configuration everywhere: an empty log in a new epoch."""
        async with shared.reaching(self._url):
            epoch = await self._reset(keys=self._keys, args=[_offered_epoch()])
        return Position(int(epoch), 0)


def _offered_epoch() -> int:
    """A random start for an epoch that does not exist yet (exact in Lua's doubles: below 2**53)."""
    return secrets.randbits(EPOCH_BITS)
