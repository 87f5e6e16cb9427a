"""The request journal's storage in Redis, shared by every worker and replica.

The journal is one Redis list of items, oldest first, plus two counters: the last ``seq`` given
out and the bytes the list holds. An item is three lines and a tail::

    <seq>\\n<test id as JSON, or null>\\n<fields as JSON>\\n<entry as JSON>

The caller (:class:`~mockserver.harness.shared_journal.SharedJournal`) writes the last three: the
test id (raw, so one test's part can be cleared), the fields its filters read (path, models,
method, tier, status, and a digest of the key, never the key) and the entry already shaped and
masked as readers get it. JSON never holds a raw newline, so the lines split unambiguously.

Every change is one Lua script, so it is atomic whichever process runs it: :meth:`JournalLog.append`
takes the next ``seq`` (one order for every process), appends, and drops the oldest items while the
list holds more than its entries or bytes allow (always keeping the newest); :meth:`JournalLog.clear`
drops every item or one test's. Bytes are counted as the stored items' lengths, so the byte bound
is a bound on what Redis holds for the journal (plus Redis's own small per-item overhead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import orjson

from mockserver.state import shared

# KEYS[1] the last seq, KEYS[2] the list, KEYS[3] its bytes. ARGV: the item's three lines, the bounds.
_APPEND = """
local seq = redis.call('INCR', KEYS[1])
local item = seq .. '\\n' .. ARGV[1]
local length = redis.call('RPUSH', KEYS[2], item)
local bytes = redis.call('INCRBY', KEYS[3], #item)
local max_entries, max_bytes = tonumber(ARGV[2]), tonumber(ARGV[3])
while length > 1 and (length > max_entries or bytes > max_bytes) do
  bytes = redis.call('DECRBY', KEYS[3], #redis.call('LPOP', KEYS[2]))
  length = length - 1
end
return seq
"""
# ARGV[1]: the test id as JSON, compared with each item's second line. The kept items are pushed
# back in slices, as Lua's unpack takes a bounded number of values.
_CLEAR_SCOPE = """
local items = redis.call('LRANGE', KEYS[2], 0, -1)
local kept, bytes = {}, 0
for _, item in ipairs(items) do
  local first = string.find(item, '\\n', 1, true)
  local second = string.find(item, '\\n', first + 1, true)
  if string.sub(item, first + 1, second - 1) ~= ARGV[1] then
    kept[#kept + 1] = item
    bytes = bytes + #item
  end
end
local dropped = #items - #kept
if dropped > 0 then
  redis.call('DEL', KEYS[2])
  for i = 1, #kept, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(kept, i, math.min(i + 999, #kept)))
  end
  redis.call('SET', KEYS[3], bytes)
end
return dropped
"""
_CLEAR_ALL = """
local dropped = redis.call('LLEN', KEYS[2])
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[3], 0)
return dropped
"""
_HELD = """
return {redis.call('LLEN', KEYS[2]), tonumber(redis.call('GET', KEYS[3]) or '0')}
"""


@dataclass(frozen=True)
class Item:
    """One stored entry, split: its ``seq``, test id and filter fields parsed, the entry still JSON
    (a reader parses only the entries it returns)."""

    seq: int
    test_id: str | None
    fields: dict[str, Any]
    entry: bytes

    @classmethod
    def parse(cls, raw: bytes) -> Item:
        seq, test_id, fields, entry = raw.split(b"\n", 3)
        return cls(int(seq), orjson.loads(test_id), orjson.loads(fields), entry)


class JournalLog:
    """The shared journal's list in Redis (see the module docstring). Each method is one round trip;
    while Redis is away each raises :func:`mockserver.errors.state_unavailable`."""

    def __init__(self, where: shared.Shared) -> None:
        self._redis = where.connection
        self._url = where.url
        self._keys = [where.key("journal:seq"), where.key("journal:entries"), where.key("journal:bytes")]
        self._append = self._redis.register_script(_APPEND)
        self._clear_scope = self._redis.register_script(_CLEAR_SCOPE)
        self._clear_all = self._redis.register_script(_CLEAR_ALL)
        self._held = self._redis.register_script(_HELD)

    @property
    def where(self) -> str:
        """The Redis URL without its password, for messages."""
        return shared.where(self._url)

    @staticmethod
    def item(test_id: str | None, fields: dict[str, Any], entry: bytes) -> bytes:
        """What :meth:`append` stores after the ``seq``; its length is what the byte bound counts
        (plus the ``seq`` and a newline)."""
        return b"\n".join((orjson.dumps(test_id), orjson.dumps(fields), entry))

    async def append(self, item: bytes, max_entries: int, max_bytes: int) -> int:
        """Store ``item`` (from :meth:`item`) as the newest entry, within the bounds; returns its ``seq``."""
        async with shared.reaching(self._url):
            return int(await self._append(keys=self._keys, args=[item, max_entries, max_bytes]))

    async def items(self) -> list[Item]:
        """Every stored entry, oldest first."""
        async with shared.reaching(self._url):
            raw = await self._redis.lrange(self._keys[1], 0, -1)
        return [Item.parse(cast(bytes, r)) for r in raw]  # bytes: the client does not decode replies

    async def clear(self, test_id: str | None = None) -> int:
        """Drop every entry, or those of one test id; returns how many were dropped."""
        async with shared.reaching(self._url):
            if test_id is None:
                return int(await self._clear_all(keys=self._keys))
            return int(await self._clear_scope(keys=self._keys, args=[orjson.dumps(test_id)]))

    async def held(self) -> tuple[int, int]:
        """How many entries and bytes the list holds."""
        async with shared.reaching(self._url):
            entries, size = await self._held(keys=self._keys)
        return int(entries), int(size)

    async def newest(self) -> int:
        """The last ``seq`` given out (0 before the first)."""
        async with shared.reaching(self._url):
            return int(await self._redis.get(self._keys[0]) or 0)
