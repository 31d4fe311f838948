-- Give a player a name, unique ignoring case, and release the name they had: one script
-- on the names' slot, so two replicas claiming one name at once cannot both have it.
--
-- KEYS[1] owners (lower-case name -> id)   KEYS[2] names (id -> name)
-- ARGV[1] the name in lower case   ARGV[2] the name   ARGV[3] the player's id
-- ARGV[4] an owner whose claim lapsed (a registration that never finished), or ''
-- Returns 1 when the name is the player's, else the id of the player who has it.
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner and owner ~= ARGV[3] then
  if owner ~= ARGV[4] then
    return owner
  end
  redis.call('HDEL', KEYS[2], owner)
end
local old = redis.call('HGET', KEYS[2], ARGV[3])
if old and string.lower(old) ~= ARGV[1] then
  redis.call('HDEL', KEYS[1], string.lower(old))
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
return 1
