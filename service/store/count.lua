
-- On a cluster, the second step of a game's ending (after tally.lua): count the game in
-- its player's stats, once. The commit kept the tally in the game's hash and the game is
-- listed as pending here, so a replica that dies between the two steps loses nothing:
-- whoever reads the player next counts it (players.py). Counting twice is refused by
-- the game's id.
--
-- KEYS[1] player hash   KEYS[2] recent list   KEYS[3] counted (sorted set)
-- KEYS[4] pending (sorted set)
-- ARGV[1] game id   ARGV[2] tally   ARGV[3] now ms   ARGV[4] how long to remember it, ms
-- ARGV[5] how many recent games to keep
-- Returns 1 when counted now, 0 when it had been.
local counted = redis.call('ZSCORE', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
if counted then
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
tally(KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[5]))
local now = tonumber(ARGV[3])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[4]))
return 1
