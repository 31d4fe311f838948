-- On a cluster, forget a game listed as pending whose end was never committed (a commit
-- that lost its race, or a replica that died before committing), unless it was listed
-- again since.
--
-- KEYS[1] the player's pending games (sorted set)
-- ARGV[1] game id   ARGV[2] listed before this time (ms) to be forgotten
-- Returns 1 when forgotten.
local listed = redis.call('ZSCORE', KEYS[1], ARGV[1])
if listed and tonumber(listed) < tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
