-- A new game's hash and its expiry together (a cluster pipeline cannot be a transaction).
--
-- KEYS[1] game hash   ARGV[1] ttl ms   ARGV[2...] field, value, field, value...
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
