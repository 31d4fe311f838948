"""Best times of won games, in a sorted set per board kind, kept to the top N.

A leaderboard's keys share their own hash tag, so one script updates both the
ranking and the entry details on Redis Cluster too.
"""

from __future__ import annotations

import secrets
from typing import Any, cast

import msgspec

from .connection import Redis
from .errors import redis_errors

KEEP = 1000

_RECORD = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local dropped = redis.call('ZRANGE', KEYS[1], ARGV[4], -1)
if #dropped > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], ARGV[4], -1)
  redis.call('HDEL', KEYS[2], unpack(dropped))
end
return redis.call('ZRANK', KEYS[1], ARGV[2])
"""


class Entry(msgspec.Struct, array_like=True, frozen=True):
    game_id: str
    player: str
    elapsed_ms: int
    ended_at: int
    bbbv: int


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Entry).decode


def board_name(preset: str, no_guess: bool, date: str | None = None) -> str:
    kind = "noguess" if no_guess else "classic"
    return f"daily:{date}:{preset}:{kind}" if date else f"{preset}:{kind}"


class Leaderboards:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._record = redis.register_script(_RECORD)
        self._daily_secret: bytes | None = None

    async def record(self, board: str, entry: Entry) -> int | None:
        """Enter a win; its rank from 0, or None when it did not make the top."""
        with redis_errors():
            rank = await self._record(
                keys=[f"ms:{{lb:{board}}}:times", f"ms:{{lb:{board}}}:entries"],
                args=[entry.elapsed_ms, entry.game_id, _encode(entry), KEEP],
            )
        return None if rank is None else int(rank)

    async def top(self, board: str, limit: int) -> list[Entry]:
        with redis_errors():
            ids = cast(list[Any], await self.redis.zrange(f"ms:{{lb:{board}}}:times", 0, limit - 1))
            if not ids:
                return []
            raw = cast(list[Any], await self.redis.hmget(f"ms:{{lb:{board}}}:entries", ids))
        return [_decode(r) for r in raw if r is not None]

    async def daily_secret(self) -> bytes:
        """The key that turns a date into a daily seed: made once, shared by every replica."""
        if self._daily_secret is None:
            key = "ms:secret:daily"
            with redis_errors():
                await self.redis.set(key, secrets.token_bytes(32), nx=True)
                self._daily_secret = cast(bytes, await self.redis.get(key))
        return self._daily_secret
