-- A player's claim on the one unfinished match they may sit in: "<match id> <since ms>",
-- on the player's slot, with an expiry bounded by the match's life.
--
-- KEYS[1] the claim   ARGV[1] what to do   ARGV[2] the match id   ARGV[3] now ms
-- ARGV[4] ttl ms   ARGV[5] (take) the claim it may replace, found over ('' none)
-- take: the claim when free, or found over, or already this match's:
--   {'taken', ''} | {'held', claim} (already this match's) | {'other', claim}
-- force: the claim whatever held it (a pair of seeks, which nothing else may hold)
-- release: dropped if it is this match's   refresh: its expiry, if it is this match's
local claim = redis.call('GET', KEYS[1])
local held = claim and string.match(claim, '^(%S+)')
local op = ARGV[1]
if op == 'release' then
  if held == ARGV[2] then
    redis.call('DEL', KEYS[1])
  end
  return {'', ''}
end
if op == 'refresh' then
  if held == ARGV[2] then
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
  end
  return {'', ''}
end
if op == 'take' and claim and held == ARGV[2] then
  return {'held', claim}
end
if op == 'take' and claim and claim ~= ARGV[5] then
  return {'other', claim}
end
redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. ARGV[3], 'PX', ARGV[4])
return {'taken', ''}
