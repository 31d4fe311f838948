-- A finished game counted in its player's stats, as a Lua function, so that the commit
-- that ends the game (commit.lua, on a single Redis) and the second step on a cluster
-- (count.lua) count it the same way. ``blob`` is a msgpack array (players.py, Tally):
--   1 board ('beginner:classic', ...; '' for a custom board: recent list only)
--   2 won   3 elapsed ms   4 3BV/s in thousandths (0: unknown)
--   5 whether the win may set a best
--   6 the entry for the recent list (JSON; '' for a match's game: its match gets one)
local function tally(player_key, recent_key, blob, keep)
  local t = cmsgpack.unpack(blob)
  local b = t[1]
  if b ~= '' then
    redis.call('HINCRBY', player_key, b .. ':played', 1)
    if t[2] then
      redis.call('HINCRBY', player_key, b .. ':won', 1)
      local streak = redis.call('HINCRBY', player_key, b .. ':streak', 1)
      if streak > tonumber(redis.call('HGET', player_key, b .. ':best_streak') or '0') then
        redis.call('HSET', player_key, b .. ':best_streak', streak)
      end
      if t[5] then
        local best = tonumber(redis.call('HGET', player_key, b .. ':best_ms'))
        if not best or t[3] < best then
          redis.call('HSET', player_key, b .. ':best_ms', t[3])
        end
        local rate = tonumber(redis.call('HGET', player_key, b .. ':best_bps'))
        if t[4] > 0 and (not rate or t[4] > rate) then
          redis.call('HSET', player_key, b .. ':best_bps', t[4])
        end
      end
    else
      redis.call('HSET', player_key, b .. ':streak', 0)
    end
  end
  if t[6] ~= '' then
    redis.call('LPUSH', recent_key, t[6])
    redis.call('LTRIM', recent_key, 0, keep - 1)
  end
end
