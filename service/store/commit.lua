-- Commit one change to a game, all or nothing: compare the write it was made on, store the
-- snapshot, append the diff to the event stream, publish it, keep the idempotent answer and
-- refresh the expiry. A move made on a cached game takes its rate limits and finds its
-- idempotent answer here too, so it costs this one call (after take.lua, tally.lua and
-- fields.lua). The change that ends a player's game also counts it in the player's stats,
-- here on a single Redis; on a cluster, where the player's keys live in another slot, it
-- keeps the tally in the game's hash for the second step.
--
-- KEYS[1] game hash   KEYS[2] event stream   KEYS[3] idempotency key (or the game hash)
-- KEYS[4] player hash   KEYS[5] player's recent list (both the game hash when the game's
--         tally is not counted here)
-- KEYS[6...] rate-limit buckets to take first (none on a retry, or on a cluster)
-- ARGV[1] expected rev   ARGV[2] snapshot   ARGV[3] game version   ARGV[4] diff ('' = none)
-- ARGV[5] channel   ARGV[6] ttl ms   ARGV[7] idempotent answer ('' = none)
-- ARGV[8] idempotency ttl ms   ARGV[9] stream max length
-- ARGV[10] this attempt's random id: when a reply is lost and the client library sends
--          the script again, the attempt that already committed is answered 1, not 0,
--          so the caller does not apply its move a second time
-- ARGV[11] the expected write's attempt id ('' for a game never written since created)
-- ARGV[12] why a won game is held off the human leaderboards ('' = it is not)
-- ARGV[13] the tally of a player's game that this change ends ('' = none)
-- ARGV[14] how many recent games a player keeps
-- ARGV[15] from when, by this Redis's clock, the change is refused ('' = any time): a
--          match's move checked in time may reach Redis after the match's end has read
--          its games; past this the match counts the game as it was, so it stays so
-- ARGV[16...] the buckets' time and limits
-- PUBLISH, set before the script (routes.py): SPUBLISH where Redis has sharded pub/sub
-- Returns {1} when committed, {-1} when the game is gone, {2, wait ms} when a bucket is
-- empty, {3, answer} when the idempotency key already has one, and {0, the game's
-- FIELDS} when another write came first: the caller applies its change again to those,
-- and {4} when the change came too late (ARGV[15]).
local now = redis.call('HMGET', KEYS[1], 'rev', 'attempt')
if not now[1] then
  return {-1}
end
if now[2] == ARGV[10] then
  return {1}
end
if #KEYS > 5 then
  local wait = take(KEYS, 6, ARGV, 16)
  if wait > 0 then
    return {2, wait}
  end
end
if ARGV[7] ~= '' then
  local answer = redis.call('GET', KEYS[3])
  if answer then
    return {3, answer}
  end
end
if now[1] ~= ARGV[1] or (now[2] or '') ~= ARGV[11] then
  return {0, redis.call('HMGET', KEYS[1], unpack(FIELDS))}
end
if ARGV[15] ~= '' then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[15]) then
    return {4}
  end
end
local refused = ARGV[4] ~= '' and check_publish(ARGV[5])
if refused then
  return refused
end
redis.call('HSET', KEYS[1], 'rev', tonumber(now[1]) + 1, 'snap', ARGV[2], 'attempt', ARGV[10])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
if ARGV[4] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[9], ARGV[3] .. '-0', 'd', ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call(PUBLISH, ARGV[5], ARGV[4])
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
if ARGV[7] ~= '' then
  redis.call('SET', KEYS[3], ARGV[7], 'PX', ARGV[8])
end
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[1], 'held', ARGV[12])
end
if ARGV[13] ~= '' then
  if KEYS[4] ~= KEYS[1] then
    tally(KEYS[4], KEYS[5], ARGV[13], tonumber(ARGV[14]))
  else
    redis.call('HSET', KEYS[1], 'tally', ARGV[13])
  end
end
return {1}
