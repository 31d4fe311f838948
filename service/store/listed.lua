-- A finished match in a player's recent list, once: the replica that ends a match and
-- the deadline poller that finishes its work after a replica died may both list it.
-- The player's counted set (count.lua) remembers it by the match's id.
--
-- KEYS[1] recent list   KEYS[2] counted (sorted set)
-- ARGV[1] match id   ARGV[2] the entry (JSON)   ARGV[3] now ms
-- ARGV[4] how long to remember it, ms   ARGV[5] how many recent entries to keep
-- Returns 1 when listed now, 0 when it had been.
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
redis.call('LPUSH', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[5]) - 1)
local now = tonumber(ARGV[3])
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
return 1
