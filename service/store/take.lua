-- Token buckets, as a Lua function so that loading a game (load.lua) can take them in
-- the same script call. ``take`` reads bucket i's key from keys[k0 + i - 1] and its
-- rate, burst, need and cost from args[a0 + 1 + (i - 1) * 4 ...]; args[a0] is the time
-- in ms. It takes from every bucket or from none, and answers the wait in ms, or 0
-- when every bucket was taken.
local function take(keys, k0, args, a0)
  local now = tonumber(args[a0])
  local wait = 0
  local state = {}
  local n = #keys - k0 + 1
  for i = 1, n do
    local o = a0 + (i - 1) * 4
    local rate, burst, need = tonumber(args[o + 1]), tonumber(args[o + 2]), tonumber(args[o + 3])
    local b = redis.call('HMGET', keys[k0 + i - 1], 't', 'at')
    local tokens = tonumber(b[1]) or burst
    local at = tonumber(b[2]) or now
    if now > at then
      tokens = math.min(burst, tokens + (now - at) * rate / 1000)
      at = now
    end
    state[i] = {tokens, at}
    if tokens < need then
      wait = math.max(wait, math.ceil((need - tokens) * 1000 / rate))
    end
  end
  if wait > 0 then
    return wait
  end
  for i = 1, n do
    local o = a0 + (i - 1) * 4
    local rate, burst, cost = tonumber(args[o + 1]), tonumber(args[o + 2]), tonumber(args[o + 4])
    if cost > 0 then
      local key = keys[k0 + i - 1]
      redis.call('HSET', key, 't', math.max(0, state[i][1] - cost), 'at', state[i][2])
      redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
    end
  end
  return 0
end
