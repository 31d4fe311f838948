-- Pair a waiting seek with the closest-rated waiting seek of its pool, all in one script
-- on the seeks' slot: two replicas pairing at once can never both take the same seek.
-- A seek whose player stopped polling it (and has no socket open) expires here; one
-- that is no longer its player's latest (two seeks sent at once, through two replicas,
-- both waiting) is cancelled here, so a player is never paired twice.
--
-- KEYS[1] the seek's hash   KEYS[2] its pool (waiting seeks by rating)
-- ARGV[1] now ms   ARGV[2] expiry ms   ARGV[3] the window at first (rating points)
-- ARGV[4] how much the window widens per second of waiting   ARGV[5] the match id to use
-- ARGV[6] the prefix of a seek's key (the pool holds ids)   ARGV[7] the seek's id
-- ARGV[8] the prefix of a player's latest seek's key
-- Returns {status, match id, partner's seek id, partner's player id} ('' when none).
local now = tonumber(ARGV[1])
local function alive(key)
  return tonumber(redis.call('HGET', key, 'alive') or '0') + tonumber(ARGV[2]) >= now
end
local function replaced(key, id)
  return redis.call('GET', ARGV[8] .. redis.call('HGET', key, 'pid')) ~= id
end
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return {'', '', '', ''}
end
if status ~= 'waiting' then
  return {status, redis.call('HGET', KEYS[1], 'match') or '', '', ''}
end
if replaced(KEYS[1], ARGV[7]) then
  redis.call('HSET', KEYS[1], 'status', 'cancelled')
  redis.call('ZREM', KEYS[2], ARGV[7])
  return {'cancelled', '', '', ''}
end
if not alive(KEYS[1]) then
  redis.call('HSET', KEYS[1], 'status', 'expired')
  redis.call('ZREM', KEYS[2], ARGV[7])
  return {'expired', '', '', ''}
end
local rating = tonumber(redis.call('HGET', KEYS[1], 'rating'))
local waited = (now - tonumber(redis.call('HGET', KEYS[1], 'created'))) / 1000
local window = tonumber(ARGV[3]) + tonumber(ARGV[4]) * waited
local player = redis.call('HGET', KEYS[1], 'pid')
local best, best_key, best_gap = nil, nil, nil
local near = redis.call('ZRANGEBYSCORE', KEYS[2], rating - window, rating + window, 'WITHSCORES')
for i = 1, #near, 2 do
  local id = near[i]
  local key = ARGV[6] .. id
  if id ~= ARGV[7] and redis.call('HGET', key, 'pid') ~= player then
    if redis.call('HGET', key, 'status') ~= 'waiting' then
      redis.call('ZREM', KEYS[2], id)
    elseif replaced(key, id) then
      redis.call('HSET', key, 'status', 'cancelled')
      redis.call('ZREM', KEYS[2], id)
    elseif not alive(key) then
      redis.call('HSET', key, 'status', 'expired')
      redis.call('ZREM', KEYS[2], id)
    else
      local gap = math.abs(tonumber(near[i + 1]) - rating)
      if best_gap == nil or gap < best_gap then
        best, best_key, best_gap = id, key, gap
      end
    end
  end
end
if best == nil then
  return {'waiting', '', '', ''}
end
-- Each seek keeps who was paired (the one who waited longer first, seat 0) and when, so
-- that a poll may make the match should the replica that paired them die first.
local partner = redis.call('HGET', best_key, 'pid')
local pair = {'status', 'matched', 'match', ARGV[5], 'players', partner .. ' ' .. player,
  'paired', now}
redis.call('HSET', KEYS[1], unpack(pair))
redis.call('HSET', best_key, unpack(pair))
redis.call('ZREM', KEYS[2], ARGV[7], best)
return {'matched', ARGV[5], best, partner}
