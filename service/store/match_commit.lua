-- Commit one change to a match, all or nothing: compare the write counter, store the state,
-- append the update to the match's stream, publish it, refresh the expiry.
--
-- KEYS[1] match hash   KEYS[2] its stream of updates
-- ARGV[1] expected rev   ARGV[2] state   ARGV[3] the match's version   ARGV[4] the update
-- ARGV[5] channel   ARGV[6] ttl ms   ARGV[7] stream max length
-- ARGV[8] this attempt's random id: a script sent again after a lost reply is answered 1
-- PUBLISH, set before the script (routes.py): SPUBLISH where Redis has sharded pub/sub
-- Returns 1 when committed, 0 when another write came first, -1 when the match is gone.
local now = redis.call('HMGET', KEYS[1], 'rev', 'attempt')
if not now[1] then
  return -1
end
if now[2] == ARGV[8] then
  return 1
end
if now[1] ~= ARGV[1] then
  return 0
end
local refused = check_publish(ARGV[5])
if refused then
  return refused
end
redis.call('HSET', KEYS[1], 'rev', tonumber(now[1]) + 1, 'snap', ARGV[2], 'attempt', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], ARGV[3] .. '-0', 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call(PUBLISH, ARGV[5], ARGV[4])
return 1
