"""The Lua scripts of :class:`mockserver.state.redis.RedisStore`: one per operation, each run by Redis
as one atomic step (see that module for why, and for the keys they read and write)."""

from __future__ import annotations

from mockserver.state.store import WINDOW_SECONDS

# Shared by the window scripts: the server's clock in seconds, and a bucket's usage after
# replenishing ``limit`` units per window since it was last updated (as ``store._level``).
# Numbers go back and forth as "%.17g" strings: Lua's own tostring keeps only 14 digits.
_WINDOW_LIB = f"""
local WINDOW = {WINDOW_SECONDS!r}
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function level(bucket, limit, now)
  local used = tonumber(redis.call('HGET', KEYS[1], bucket) or '0')
  local at = tonumber(redis.call('HGET', KEYS[2], bucket) or '0')
  local elapsed = math.max(0, now - at)
  return math.max(0, used - elapsed * limit / WINDOW)
end
local function put(bucket, used, now)
  redis.call('HSET', KEYS[1], bucket, string.format('%.17g', used))
  redis.call('HSET', KEYS[2], bucket, string.format('%.17g', now))
end
"""

SCRIPTS = {
    # KEYS: window:used, window:at, and (optional) the request's done:admit:<id>. ARGV: the idempotency
    # ttl in ms, the number of allowances, their (bucket, limit, amount) triples; the number of
    # charges, their triples; then (bucket, limit) pairs to report. Admission in one step: the
    # allowances all or none (when one is short: {index, used (rounded up), retry after}); if taken,
    # every charge, whatever the level; then the usage of each reported window. Returns
    # {shortfall or false, {usage...}}. A request already admitted (the same call retried after its
    # reply was lost) takes nothing again and is answered as admitted.
    "admit": _WINDOW_LIB
    + """
local now, i = clock(), 3
local n, levels, shortfall = tonumber(ARGV[2]), {}, false
local again = KEYS[3] ~= nil and redis.call('EXISTS', KEYS[3]) == 1
if again then
  i = i + 3 * n
  i = i + 1 + 3 * tonumber(ARGV[i])
  local report = {}
  while i <= #ARGV do
    report[#report + 1] = string.format('%.17g', level(ARGV[i], tonumber(ARGV[i + 1]), now))
    i = i + 2
  end
  return {false, report}
end
for k = 1, n do
  local bucket, limit, amount = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local used = level(bucket, limit, now)
  local excess = used + amount - limit
  if excess > 0 and not shortfall then
    shortfall = {k - 1, math.ceil(used - 1e-9), string.format('%.17g', excess * WINDOW / limit)}
  end
  levels[k] = used
  i = i + 3
end
local m = tonumber(ARGV[i])
i = i + 1
if not shortfall then
  if KEYS[3] then redis.call('SET', KEYS[3], '1', 'PX', ARGV[1]) end
  for k = 1, n do
    local at = 3 + 3 * (k - 1)
    put(ARGV[at], levels[k] + tonumber(ARGV[at + 2]), now)
  end
  for k = 1, m do
    local bucket, limit = ARGV[i], tonumber(ARGV[i + 1])
    put(bucket, level(bucket, limit, now) + tonumber(ARGV[i + 2]), now)
    i = i + 3
  end
else
  i = i + 3 * m
end
local report = {}
while i <= #ARGV do
  report[#report + 1] = string.format('%.17g', level(ARGV[i], tonumber(ARGV[i + 1]), now))
  i = i + 2
end
return {shortfall, report}
""",
    # KEYS: usage:rows, usage:requests, usage:input_tokens, usage:output_tokens,
    # usage:reasoning_tokens, usage:cached_tokens, usage:cache_write_tokens, usage:cost_usd,
    # spend:cost_usd, spend:tokens, and (optional) the request's done:record:<id>. ARGV: the
    # idempotency ttl in ms, row, who, input, output, reasoning, cached, cache write, cost,
    # organization. One ledger entry; 0 if this request's entry was recorded already (a retry).
    "record": """
if KEYS[11] and not redis.call('SET', KEYS[11], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local row = ARGV[2]
redis.call('HSETNX', KEYS[1], row, ARGV[3])
redis.call('HINCRBY', KEYS[2], row, 1)
for i = 3, 7 do redis.call('HINCRBY', KEYS[i], row, ARGV[i + 1]) end
redis.call('HINCRBYFLOAT', KEYS[8], row, ARGV[9])
redis.call('HINCRBYFLOAT', KEYS[9], ARGV[10], ARGV[9])
redis.call('HINCRBY', KEYS[10], ARGV[10], tonumber(ARGV[4]) + tonumber(ARGV[5]))
return 1
""",
    # KEYS: window:used, window:at. ARGV: bucket, limit. The usage now.
    "window": _WINDOW_LIB
    + """
return string.format('%.17g', level(ARGV[1], tonumber(ARGV[2]), clock()))
""",
    # KEYS: peaks, pools, then one pool:<name> per pool. ARGV: lease, ttl in ms, then each pool's
    # name and cap ('' for unlimited). Drops expired leases, then adds the lease to every pool (and
    # raises its peak) or, if one is full, to none and returns that pool's index.
    "acquire": """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease, expiry = ARGV[1], now + tonumber(ARGV[2])
for k = 3, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', now)
  local cap = ARGV[2 * (k - 2) + 2]
  if cap ~= '' and redis.call('ZCARD', KEYS[k]) >= tonumber(cap) then
    return k - 3
  end
end
for k = 3, #KEYS do
  local name = ARGV[2 * (k - 2) + 1]
  redis.call('ZADD', KEYS[k], expiry, lease)
  redis.call('SADD', KEYS[2], name)
  local taken = redis.call('ZCARD', KEYS[k])
  if taken > tonumber(redis.call('HGET', KEYS[1], name) or '0') then
    redis.call('HSET', KEYS[1], name, taken)
  end
end
return false
""",
    # KEYS: pool:<name> of each (pool, lease) held here. ARGV: ttl in ms, then the leases, in the
    # same order. Pushes each lease's expiry on; XX: a lease released or expired meanwhile stays gone.
    "renew": """
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for k = 1, #KEYS do
  redis.call('ZADD', KEYS[k], 'XX', expiry, ARGV[k + 1])
end
return false
""",
    # KEYS: pool:<name>. The leases that have not expired.
    "in_flight": """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
""",
    # KEYS: peaks, pools, then every key to forget. ARGV: the prefix. Forgets windows, ledger and
    # spend; each pool's peak becomes the leases in flight now, which stay.
    "reset": """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('DEL', KEYS[1], unpack(KEYS, 3))
for _, name in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local pool = ARGV[1] .. 'pool:' .. name
  redis.call('ZREMRANGEBYSCORE', pool, '-inf', now)
  local taken = redis.call('ZCARD', pool)
  if taken > 0 then
    redis.call('HSET', KEYS[1], name, taken)
  end
end
return false
""",
}
