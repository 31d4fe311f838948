-- A notice about a game that is not a change of its version (a reset, a hint given):
-- append it to the game's event stream and publish it, all or nothing, so a subscriber
-- who connects or resumes later still gets it. A reset also remembers its successor.
--
-- The stream's diffs have the entry id <version>-0, and its last entry is always the
-- latest version's diff (or a notice after it). A notice takes the id after the last
-- entry's, <version>-1, -2...: it sorts after the diff it followed and before the
-- next one, and a game with no diff yet starts its stream at 0-1.
--
-- KEYS[1] game hash   KEYS[2] event stream
-- ARGV[1] the new game's id for a reset ('' = not a reset)   ARGV[2] the notice
-- ARGV[3] channel   ARGV[4] ttl ms   ARGV[5] stream max length
-- PUBLISH, set before the script (routes.py): SPUBLISH where Redis has sharded pub/sub
-- Returns 1, or -1 when the game is gone.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local id = '0-1'
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
if last then
  local version, seq = string.match(last[1], '(%d+)-(%d+)')
  id = version .. '-' .. (tonumber(seq) + 1)
end
local refused = check_publish(ARGV[3])
if refused then
  return refused
end
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[1], 'next', ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], id, 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call(PUBLISH, ARGV[3], ARGV[2])
return 1
