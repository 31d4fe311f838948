-- Claim the matches whose deadline (start or end) has come: each is leased to the caller
-- for a while by moving its deadline on, so one replica at a time acts on it, and another
-- takes it over when the lease runs out (the caller died).
--
-- KEYS[1] the deadlines' sorted set   ARGV[1] now ms   ARGV[2] lease ms   ARGV[3] how many
-- Returns the ids claimed.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
end
return due
