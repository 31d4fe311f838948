-- A new game's (or match's) hash and its expiry together (a cluster pipeline cannot be a
-- transaction). Never over one that exists: a paired match may be made by two replicas.
--
-- KEYS[1] the hash   ARGV[1] ttl ms   ARGV[2...] field, value, field, value...
-- Returns 1 when made now, 0 when it was there.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
