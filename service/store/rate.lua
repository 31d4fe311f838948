-- Apply one match's rating changes to a pool, once: the match's id goes in the pool's
-- set of applied matches in the same script, so a second attempt (another replica, a
-- retry after a lost reply) changes nothing. The changes are worked out from the
-- ratings as they were when the match ended, and go on the ratings as they are now, so
-- that two matches of one player ending at once both count: the mean moves by the
-- match's change of it, and the deviation by the match's ratio of it (after / before).
-- A deviation before of 0 (a match ended by an older replica) sets the one after.
--
-- A player enters the list by rating only once their rating is established (ARGV[3]
-- rated matches): one lucky race ranks nobody.
--
-- KEYS[1] ratings hash (id -> "mu sigma games")   KEYS[2] the pool's established
-- players by rating   KEYS[3] the applied matches   ARGV[1] match id
-- ARGV[2] the mean of a new player   ARGV[3] the matches that establish a rating
-- ARGV[4...] player id, change of the mean, deviation before, deviation after, each seat
-- Returns 1 when applied, 0 when it already was.
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return 0
end
for i = 4, #ARGV, 4 do
  local id = ARGV[i]
  local before, after = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  local mu, sigma, games = tonumber(ARGV[2]), after, 0
  local current = redis.call('HGET', KEYS[1], id)
  if current then
    local a, b, c = string.match(current, '(%S+) (%S+) (%S+)')
    mu, games = tonumber(a), tonumber(c)
    if before > 0 then
      sigma = tonumber(b) * after / before
    end
  end
  mu = mu + tonumber(ARGV[i + 1])
  redis.call('HSET', KEYS[1], id, string.format('%.4f %.4f %d', mu, sigma, games + 1))
  if games + 1 >= tonumber(ARGV[3]) then
    redis.call('ZADD', KEYS[2], mu, id)
  end
end
return 1
