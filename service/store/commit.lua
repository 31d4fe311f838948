-- Commit one change to a game, all or nothing: compare the write counter, store the snapshot,
-- append the diff to the event stream, publish it, keep the idempotent answer and
-- refresh the expiry.
--
-- KEYS[1] game hash   KEYS[2] event stream   KEYS[3] idempotency key (or the game hash)
-- ARGV[1] expected rev   ARGV[2] snapshot   ARGV[3] game version   ARGV[4] diff ('' = none)
-- ARGV[5] channel   ARGV[6] ttl ms   ARGV[7] idempotent answer ('' = none)
-- ARGV[8] idempotency ttl ms   ARGV[9] stream max length
-- ARGV[10] this attempt's random id: when a reply is lost and the client library sends
--          the script again, the attempt that already committed is answered 1, not 0,
--          so the caller does not apply its move a second time
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
return 1
