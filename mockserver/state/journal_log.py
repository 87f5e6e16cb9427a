"""The request journal's storage in Redis, shared by every worker and replica.

Four keys under the prefix: the last ``seq`` given out, an *index* (a list, oldest first, of one
short head per entry), the *entries* (a hash from ``seq`` to the entry) and the bytes both hold.
A head is a JSON array::

    [<seq>,<test id as a JSON string, or null>,<fields as a JSON object>]

The caller (:class:`~mockserver.harness.journal.shared.SharedJournal`) writes the test id (raw,
so one test's part can be cleared), the fields its filters read (path, models, method, tier,
status, and a digest of the key, never the key) and the entry, already shaped and masked as
readers get it. A JSON string is self-delimiting, so a script finds one test's heads by comparing
the text after the ``seq``. A reader fetches the index (parsed as one JSON document), filters the
heads, then fetches only the entries it returns: reading one test's part of a journal full of
large bodies does not move all of them.

Every change is one Lua script, so it is atomic whichever process runs it: :meth:`JournalLog.append`
takes the next ``seq`` (one order for every process), stores the entry, and drops the oldest while
the journal holds more entries or bytes than allowed (always keeping the newest);
:meth:`JournalLog.clear` drops every entry or one test's. Bytes are the stored heads' and entries'
lengths, so the byte bound is a bound on what Redis holds for the journal (plus Redis's own small
per-item overhead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson

from mockserver.state import shared

# KEYS: [1] the last seq, [2] the index, [3] the entries, [4] the bytes held.
# Drops the oldest entry; returns the bytes it held. Its seq is the head's first item.
_DROP_OLDEST = """
local function drop_oldest()
  local head = redis.call('LPOP', KEYS[2])
  local seq = string.sub(head, 2, string.find(head, ',', 1, true) - 1)
  local size = #head + redis.call('HSTRLEN', KEYS[3], seq)
  redis.call('HDEL', KEYS[3], seq)
  return size
end
"""
# ARGV: the head's last two items (with the comma between), the entry, the bounds (entries, bytes).
_APPEND = (
    _DROP_OLDEST
    + """
local seq = redis.call('INCR', KEYS[1])
local head = '[' .. seq .. ',' .. ARGV[1] .. ']'
local length = redis.call('RPUSH', KEYS[2], head)
redis.call('HSET', KEYS[3], seq, ARGV[2])
local bytes = redis.call('INCRBY', KEYS[4], #head + #ARGV[2])
local max_entries, max_bytes = tonumber(ARGV[3]), tonumber(ARGV[4])
while length > 1 and (length > max_entries or bytes > max_bytes) do
  bytes = redis.call('DECRBY', KEYS[4], drop_oldest())
  length = length - 1
end
return seq
"""
)
# ARGV[1]: the test id as JSON and a comma, compared with the text after each head's seq. The kept
# heads are pushed back in slices, as Lua's unpack takes a bounded number of values.
_CLEAR_SCOPE = """
local heads = redis.call('LRANGE', KEYS[2], 0, -1)
local kept, freed = {}, 0
for _, head in ipairs(heads) do
  local comma = string.find(head, ',', 1, true)
  if string.sub(head, comma + 1, comma + #ARGV[1]) == ARGV[1] then
    local seq = string.sub(head, 2, comma - 1)
    freed = freed + #head + redis.call('HSTRLEN', KEYS[3], seq)
    redis.call('HDEL', KEYS[3], seq)
  else
    kept[#kept + 1] = head
  end
end
local dropped = #heads - #kept
if dropped > 0 then
  redis.call('DEL', KEYS[2])
  for i = 1, #kept, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(kept, i, math.min(i + 999, #kept)))
  end
  redis.call('DECRBY', KEYS[4], freed)
end
return dropped
"""
_CLEAR_ALL = """
local dropped = redis.call('LLEN', KEYS[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SET', KEYS[4], 0)
return dropped
"""
_HELD = """
return {redis.call('LLEN', KEYS[2]), tonumber(redis.call('GET', KEYS[4]) or '0')}
"""


@dataclass(frozen=True)
class Head:
    """One entry's head: its ``seq``, test id and the fields the filters read."""

    seq: int
    test_id: str | None
    fields: dict[str, Any]


class JournalLog:
    """The shared journal's keys in Redis (see the module docstring). Each method is one round
    trip; while Redis is away each raises :func:`mockserver.errors.state_unavailable`."""

    def __init__(self, where: shared.Shared) -> None:
        self._redis = where.connection
        self._url = where.url
        names = ("journal:seq", "journal:index", "journal:entries", "journal:bytes")
        self._keys = [where.key(name) for name in names]
        self._append = self._redis.register_script(_APPEND)
        self._clear_scope = self._redis.register_script(_CLEAR_SCOPE)
        self._clear_all = self._redis.register_script(_CLEAR_ALL)
        self._held = self._redis.register_script(_HELD)

    @property
    def where(self) -> str:
        """The Redis URL without its password, for messages."""
        return shared.where(self._url)

    @staticmethod
    def head(test_id: str | None, fields: dict[str, Any]) -> bytes:
        """An entry's head after its ``seq``: what :meth:`append` takes beside the entry."""
        return orjson.dumps(test_id) + b"," + orjson.dumps(fields)

    async def append(self, head: bytes, entry: bytes, max_entries: int, max_bytes: int) -> int:
        """Store an entry (its :meth:`head` and JSON) as the newest, within the bounds; returns its ``seq``."""
        async with shared.reaching(self._url):
            return int(await self._append(keys=self._keys, args=[head, entry, max_entries, max_bytes]))

    async def heads(self) -> list[Head]:
        """Every entry's head, oldest first."""
        async with shared.reaching(self._url):
            raw = cast(list[bytes], await self._redis.lrange(self._keys[1], 0, -1))  # the client does not decode
        return [Head(seq, test_id, fields) for seq, test_id, fields in orjson.loads(b"[" + b",".join(raw) + b"]")]

    async def entries(self, seqs: Sequence[int]) -> list[bytes | None]:
        """The entries of these ``seq``\\ s, as JSON; None for one dropped since its head was read."""
        if not seqs:
            return []
        async with shared.reaching(self._url):
            return cast(list[bytes | None], await self._redis.hmget(self._keys[2], [str(s) for s in seqs]))

    async def clear(self, test_id: str | None = None) -> int:
        """Drop every entry, or those of one test id; returns how many were dropped."""
        async with shared.reaching(self._url):
            if test_id is None:
                return int(await self._clear_all(keys=self._keys))
            return int(await self._clear_scope(keys=self._keys, args=[orjson.dumps(test_id) + b","]))

    async def held(self) -> tuple[int, int]:
        """How many entries and bytes the journal holds."""
        async with shared.reaching(self._url):
            entries, size = await self._held(keys=self._keys)
        return int(entries), int(size)

    async def newest(self) -> int:
        """The last ``seq`` given out (0 before the first)."""
        async with shared.reaching(self._url):
            return int(await self._redis.get(self._keys[0]) or 0)
