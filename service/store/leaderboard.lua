-- Enter a win in a leaderboard and keep only its top entries.
--
-- KEYS[1] the times (sorted set)   KEYS[2] the entries (hash)
-- ARGV[1] elapsed ms   ARGV[2] game id   ARGV[3] the encoded entry   ARGV[4] how many to keep
-- ARGV[5] when (ms) the board is dropped, or '' to keep it
-- Returns the entry's rank from 0, or nil when it did not make the top.
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local dropped = redis.call('ZRANGE', KEYS[1], ARGV[4], -1)
if #dropped > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], ARGV[4], -1)
  redis.call('HDEL', KEYS[2], unpack(dropped))
end
if ARGV[5] ~= '' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[5])
  redis.call('PEXPIREAT', KEYS[2], ARGV[5])
end
return redis.call('ZRANK', KEYS[1], ARGV[2])
