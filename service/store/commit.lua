
-- Commit one change to a game, all or nothing: compare the write counter, store the snapshot,
-- append the diff to the event stream, publish it, keep the idempotent answer and
-- refresh the expiry. The change that ends a player's game also counts it in the player's
-- stats (after tally.lua), here on a single Redis; on a cluster, where the player's keys
-- live in another slot, it keeps the tally in the game's hash for the second step.
--
-- KEYS[1] game hash   KEYS[2] event stream   KEYS[3] idempotency key (or the game hash)
-- KEYS[4] player hash   KEYS[5] player's recent list (only to count the game here)
-- ARGV[1] expected rev   ARGV[2] snapshot   ARGV[3] game version   ARGV[4] diff ('' = none)
-- ARGV[5] channel   ARGV[6] ttl ms   ARGV[7] idempotent answer ('' = none)
-- ARGV[8] idempotency ttl ms   ARGV[9] stream max length
-- ARGV[10] this attempt's random id: when a reply is lost and the client library sends
--          the script again, the attempt that already committed is answered 1, not 0,
--          so the caller does not apply its move a second time
-- ARGV[11] why a won game is held off the human leaderboards ('' = it is not)
-- ARGV[12] the tally of a player's game that this change ends ('' = none)
-- ARGV[13] how many recent games a player keeps
-- Returns 1 when committed, 0 when another write came first, -1 when the game is gone.
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then
  return -1
end
if rev ~= ARGV[1] then
  if redis.call('HGET', KEYS[1], 'attempt') == ARGV[10] then
    return 1
  end
  return 0
end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'snap', ARGV[2], 'attempt', ARGV[10])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
if ARGV[4] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[9], ARGV[3] .. '-0', 'd', ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call('PUBLISH', ARGV[5], ARGV[4])
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
if ARGV[7] ~= '' then
  redis.call('SET', KEYS[3], ARGV[7], 'PX', ARGV[8])
end
if ARGV[11] and ARGV[11] ~= '' then
  redis.call('HSET', KEYS[1], 'held', ARGV[11])
end
if ARGV[12] and ARGV[12] ~= '' then
  if #KEYS >= 5 then
    tally(KEYS[4], KEYS[5], ARGV[12], tonumber(ARGV[13]))
  else
    redis.call('HSET', KEYS[1], 'tally', ARGV[12])
  end
end
return 1
