-- Add a player's seek and make it their latest, in one script on the seeks' slot, so
-- that of two seeks one player sends at once (through two replicas) only the later
-- can pair: the seek it replaces is cancelled here while it waits, and a seek that has
-- already paired holds the player until the service has judged its match over.
--
-- KEYS[1] the new seek's hash   KEYS[2] its pool   KEYS[3] the player's latest seek
-- ARGV[1] the seek's id   ARGV[2] player id   ARGV[3] pool name   ARGV[4] rating
-- ARGV[5] now ms   ARGV[6] ttl ms   ARGV[7] the latest seek the caller saw ('' none)
-- ARGV[8] '1' when the caller judged that latest seek's match over
-- ARGV[9] the prefix of a seek's key   ARGV[10] the prefix of a pool's key
-- Returns {'added', ''}, {'moved', latest} (another seek came first: look again), or
-- {'matched', latest} (the latest seek paired: is its match over?).
local latest = redis.call('GET', KEYS[3]) or ''
if latest ~= ARGV[7] then
  return {'moved', latest}
end
if latest ~= '' then
  local key = ARGV[9] .. latest
  local status = redis.call('HGET', key, 'status')
  if status == 'waiting' then
    redis.call('HSET', key, 'status', 'cancelled')
    redis.call('ZREM', ARGV[10] .. redis.call('HGET', key, 'pool'), latest)
  elseif status == 'matched' and ARGV[8] ~= '1' then
    return {'matched', latest}
  end
end
redis.call('HSET', KEYS[1], 'pid', ARGV[2], 'pool', ARGV[3], 'rating', ARGV[4],
  'created', ARGV[5], 'alive', ARGV[5], 'status', 'waiting')
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[6])
return {'added', ''}
