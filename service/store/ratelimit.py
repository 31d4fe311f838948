"""Token buckets in Redis, shared by every replica.

One script call checks and takes from several buckets at once (all or none). A
move's buckets are taken by the script that loads its game, in the same round trip.
"""

from __future__ import annotations

import math

import msgspec

from .connection import Redis
from .errors import redis_errors

# The buckets' arithmetic as a Lua function, so that loading a game can take them in
# the same script call (see games.py). ``take`` reads bucket i's key from keys[k0 + i - 1]
# and its rate, burst, need and cost from args[a0 + 1 + (i - 1) * 4 ...]; args[a0] is
# the time in ms. It answers the wait in ms, or 0 when every bucket was taken.
TAKE_FUNCTION = """
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
"""
_TAKE = TAKE_FUNCTION + "return take(KEYS, 1, ARGV, 1)\n"


class Limit(msgspec.Struct, frozen=True):
    """``rate`` tokens a second, up to ``burst`` saved."""

    rate: float
    burst: float

    @classmethod
    def per_second(cls, n: float) -> Limit:
        return cls(rate=n, burst=max(10.0, 2 * n))

    @classmethod
    def per_minute(cls, n: float) -> Limit:
        return cls(rate=n / 60, burst=n)


class Take(msgspec.Struct, frozen=True):
    """Take ``cost`` from the bucket at ``key`` if it holds at least ``need``."""

    key: str
    limit: Limit
    need: float = 1
    cost: float = 1


def take_args(takes: list[Take], now_ms: int) -> list[float | int]:
    args: list[float | int] = [now_ms]
    for t in takes:
        args += [t.limit.rate, t.limit.burst, t.need, t.cost]
    return args


class RateLimiter:
    def __init__(self, redis: Redis) -> None:
        self._take = redis.register_script(_TAKE)

    async def take(self, takes: list[Take], now_ms: int) -> int:
        """The wait in ms before ``takes`` (keys of one hash tag) can be had; 0: taken."""
        if not takes:
            return 0
        with redis_errors():
            return int(await self._take(keys=[t.key for t in takes], args=take_args(takes, now_ms)))


def retry_after(wait_ms: int) -> str:
    return str(max(1, math.ceil(wait_ms / 1000)))


def client_keys(address: str) -> tuple[str, str]:
    """The request and failure buckets of a client address (one hash tag)."""
    return f"ms:{{rl:{address}}}:requests", f"ms:{{rl:{address}}}:failures"


def token_key(token_hash: bytes) -> str:
    return f"ms:{{rl:{token_hash[:12].hex()}}}:moves"
