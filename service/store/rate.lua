-- Apply one match's rating changes to a pool, once: the match's id goes in the pool's
-- set of applied matches in the same script, so a second attempt (another replica, a
-- retry after a lost reply) changes nothing. Changes are deltas of the mean, so two
-- matches of one player ending at once both count.
--
-- KEYS[1] ratings hash (id -> "mu sigma games")   KEYS[2] the pool's players by rating
-- KEYS[3] the applied matches   ARGV[1] match id   ARGV[2] the mean of a new player
-- ARGV[3...] player id, change of the mean, new deviation, for each seat
-- Returns 1 when applied, 0 when it already was.
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return 0
end
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  local mu, games = tonumber(ARGV[2]), 0
  local current = redis.call('HGET', KEYS[1], id)
  if current then
    local a, _, c = string.match(current, '(%S+) (%S+) (%S+)')
    mu, games = tonumber(a), tonumber(c)
  end
  mu = mu + tonumber(ARGV[i + 1])
  redis.call('HSET', KEYS[1], id, string.format('%.4f %s %d', mu, ARGV[i + 2], games + 1))
  redis.call('ZADD', KEYS[2], mu, id)
end
return 1
