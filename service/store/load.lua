-- A move's game, its idempotent answer and its rate limits in one call (after take.lua
-- and fields.lua). Not on a cluster, where the buckets live in other slots than the game.
--
-- KEYS[1] game hash   KEYS[2] idempotency key (or the game hash)   KEYS[3...] buckets
-- ARGV[1] '1' when KEYS[2] is an idempotency key   ARGV[2...] the buckets' time and limits
-- Returns {wait} while a bucket is empty, else {0, the game's FIELDS, idempotent answer}.

if #KEYS > 2 then
  local wait = take(KEYS, 3, ARGV, 2)
  if wait > 0 then
    return {wait}
  end
end
local idempotent = false
if ARGV[1] == '1' then
  idempotent = redis.call('GET', KEYS[2])
end
return {0, redis.call('HMGET', KEYS[1], unpack(FIELDS)), idempotent}
