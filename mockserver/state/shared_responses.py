"""Stored responses in Redis, one store for every worker and replica: a response created through one
process can be retrieved, listed, deleted, cancelled and continued (``previous_response_id``) through
any other.

Keys, under the server's prefix:

- ``responses:id:{id}``: a hash per response: ``project``, ``background``, ``cancelled``, the
  wall-clock times (ms) its first token and its end are due (``started``, ``ready``), and ``record``,
  the bodies, conversation and input items (JSON). It expires ``--stored-response-ttl`` after it
  was stored;
- ``responses:index``: a sorted set of the stored responses by when they were stored, which keeps
  the count to ``--stored-responses`` (past it, the oldest are deleted as a new one is stored);
- ``responses:sizes``: a hash of each stored response's size (its ``record``, in bytes), and
  ``responses:bytes`` their total, which ``--stored-response-bytes`` bounds the same way.

Each change is one Lua script (one round trip, atomic); a read is one ``HGETALL``. A response's
status moves with time (``queued``, ``in_progress``, then its final status), so the times are
stored on the wall clock, which every process agrees on (replicas on other hosts: as far as
their clocks are synchronised), and read back onto each process's own monotonic clock.

Cancelling: ``POST /v1/responses/{id}/cancel`` sets ``cancelled`` in Redis, whichever process
answers it; every status read from then on is ``cancelled``. A background response being streamed
by another process notices within :data:`CANCEL_POLL_S`: that process polls the flag while the
stream runs (one ``HGET`` per interval per background stream, and none once the stream's schedule
is over), then stops the stream as it does in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from mockserver import errors
from mockserver.state import shared
from mockserver.state.responses import (
    BaseResponseStore,
    DeferredRecord,
    StoredResponse,
    from_record,
    stored_record,
)

logger = logging.getLogger("mockserver")

CANCEL_POLL_S = 0.2  # how soon a background stream in another process stops after a cancel

# KEYS[1] the index, KEYS[2] the response, KEYS[3] the sizes, KEYS[4] the total bytes. ARGV: now
# (ms), ttl (ms), max count, then the fields, then max bytes.
_PUT = """
local function forget(key)
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[1], key)
  local size = redis.call('HGET', KEYS[3], key)
  if size then
    redis.call('HDEL', KEYS[3], key)
    redis.call('DECRBY', KEYS[4], size)
  end
end
redis.call('HSET', KEYS[2], 'project', ARGV[4], 'background', ARGV[5], 'started', ARGV[6],
           'ready', ARGV[7], 'record', ARGV[8], 'cancelled', '0')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], KEYS[2])
local size = string.len(ARGV[8])
redis.call('INCRBY', KEYS[4], size - tonumber(redis.call('HGET', KEYS[3], KEYS[2]) or '0'))
redis.call('HSET', KEYS[3], KEYS[2], size)
local expired_before = tonumber(ARGV[1]) - tonumber(ARGV[2])
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', expired_before)) do forget(key) end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do forget(key) end
end
while tonumber(redis.call('GET', KEYS[4]) or '0') > tonumber(ARGV[9]) do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest or oldest == KEYS[2] then break end  -- the one just stored stays, even alone over the bound
  forget(oldest)
end
return redis.call('ZCARD', KEYS[1])
"""
# KEYS[1] the response. ARGV: project, now (ms). Returns {outcome, fields...}: 0 not found,
# 1 not a background response, 2 cancelled now or before, or left as it was (finished).
_CANCEL = """
local f = redis.call('HMGET', KEYS[1], 'project', 'background', 'ready', 'cancelled')
if not f[1] or f[1] ~= ARGV[1] then return {0} end
if f[2] ~= '1' then return {1} end
if f[4] ~= '1' and tonumber(ARGV[2]) < tonumber(f[3]) then redis.call('HSET', KEYS[1], 'cancelled', '1') end
local reply = {2}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do reply[#reply + 1] = v end
return reply
"""
# KEYS[1] the index, KEYS[2] the response, KEYS[3] the sizes, KEYS[4] the total bytes. ARGV: project.
_DELETE = """
if redis.call('HGET', KEYS[2], 'project') ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[1], KEYS[2])
local size = redis.call('HGET', KEYS[3], KEYS[2])
if size then
  redis.call('HDEL', KEYS[3], KEYS[2])
  redis.call('DECRBY', KEYS[4], size)
end
return redis.call('DEL', KEYS[2])
"""
# KEYS: the index, the sizes, the total bytes.
_RESET = """
for _, key in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('DEL', key) end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
"""


class _Flag:
    """A cancel flag a stream reads on every event (a plain attribute: no await on the stream's path)."""

    def __init__(self) -> None:
        self.set = False

    def __call__(self) -> bool:
        return self.set


class RedisResponseStore(BaseResponseStore):
    """Stored responses in Redis (see the module docstring)."""

    def __init__(
        self,
        where: shared.Shared,
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        *,
        max_items: int,
        ttl_s: float,
        max_bytes: int,
    ) -> None:
        super().__init__(clock)
        self._max_bytes = max_bytes
        self._where = where
        self._redis = where.connection
        self._wall = wall_clock
        self._max_items = max_items
        self._ttl_ms = max(1, round(ttl_s * 1000))
        self._index = where.key("responses:index")
        self._sizes = where.key("responses:sizes")
        self._bytes = where.key("responses:bytes")
        self._put = self._redis.register_script(_PUT)
        self._cancel = self._redis.register_script(_CANCEL)
        self._delete = self._redis.register_script(_DELETE)
        self._reset = self._redis.register_script(_RESET)
        self._watching: dict[str, _Flag] = {}  # background streams of this process, by response id
        self._pollers: set[asyncio.Task[None]] = set()

    def _key(self, response_id: str) -> str:
        return self._where.key(f"responses:id:{response_id}")

    def _wall_ms(self, monotonic: float) -> float:
        """A time on this process's clock, as wall-clock milliseconds."""
        return (self._wall() + (monotonic - self._now())) * 1000

    def _local(self, wall_ms: float) -> float:
        return self._now() + (wall_ms / 1000 - self._wall())

    async def put(self, response: StoredResponse | DeferredRecord) -> None:
        # A deferred record is made now: any process may read it next.
        fields = [
            response.project,
            "1" if response.background else "0",
            repr(self._wall_ms(response.started_at)),
            repr(self._wall_ms(response.ready_at)),
            stored_record(response),
        ]
        now_ms = round(self._wall() * 1000)
        keys = [self._index, self._key(response.id), self._sizes, self._bytes]
        async with self._where.reaching():
            await self._put(keys=keys, args=[now_ms, self._ttl_ms, self._max_items, *fields, self._max_bytes])

    async def find(self, project: str, response_id: str) -> StoredResponse | None:
        async with self._where.reaching():
            raw = await self._redis.hgetall(self._key(response_id))
        return self._decode(response_id, raw, project)

    def _decode(self, response_id: str, raw: dict[Any, Any], project: str) -> StoredResponse | None:
        fields = {_text(k): v for k, v in raw.items()}
        if not fields or _text(fields["project"]) != project:
            return None
        return from_record(
            response_id,
            project,
            fields["record"],
            ready_at=self._local(float(fields["ready"])),
            started_at=self._local(float(fields["started"])),
            background=fields["background"] == b"1",
            cancelled=fields["cancelled"] == b"1",
        )

    async def cancel(self, project: str, response_id: str) -> dict[str, Any]:
        async with self._where.reaching():
            reply = await self._cancel(keys=[self._key(response_id)], args=[project, round(self._wall() * 1000)])
        outcome = int(reply[0])
        if outcome == 0:
            raise errors.response_not_found(response_id)
        if outcome == 1:
            raise errors.cannot_cancel_synchronous()
        fields = reply[1:]
        found = self._decode(response_id, dict(zip(fields[::2], fields[1::2], strict=True)), project)
        assert found is not None  # the script read it a moment ago
        if found.cancelled and (flag := self._watching.get(response_id)) is not None:
            flag.set = True
        return found.body_at(self._now())

    async def delete(self, project: str, response_id: str) -> dict[str, Any]:
        async with self._where.reaching():
            deleted = await self._delete(
                keys=[self._index, self._key(response_id), self._sizes, self._bytes], args=[project]
            )
        if not deleted:
            raise errors.response_not_found(response_id)
        return {"id": response_id, "object": "response", "deleted": True}

    async def reset(self) -> None:
        async with self._where.reaching():
            await self._reset(keys=[self._index, self._sizes, self._bytes])

    def cancel_flag(self, response_id: str, until: float) -> Callable[[], bool]:
        """Whether the background response being streamed here was cancelled, by any process. Polls
        Redis every :data:`CANCEL_POLL_S` until ``until`` (its schedule's end, on this process's clock)."""
        flag = self._watching[response_id] = _Flag()
        poller = asyncio.get_running_loop().create_task(self._poll(response_id, until, flag))
        self._pollers.add(poller)
        poller.add_done_callback(self._pollers.discard)
        return flag

    async def _poll(self, response_id: str, until: float, flag: _Flag) -> None:
        try:
            while not flag.set and self._now() < until:
                await asyncio.sleep(min(CANCEL_POLL_S, max(0.0, until - self._now())))
                try:
                    cancelled = await self._redis.hget(self._key(response_id), "cancelled")
                except shared.unreachable():
                    continue  # Redis away: the stream goes on; the flag is read again next time
                if cancelled is None:
                    return  # deleted or evicted: there is nothing left to cancel
                flag.set = cancelled == b"1"
        finally:
            if self._watching.get(response_id) is flag:
                del self._watching[response_id]

    async def close(self) -> None:
        """Stop polling (the server is stopping, and its streams with it)."""
        for poller in list(self._pollers):
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller

    async def count(self) -> int:
        expired_before = round(self._wall() * 1000) - self._ttl_ms
        async with self._where.reaching():
            return int(await self._redis.zcount(self._index, f"({expired_before}", "+inf"))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
