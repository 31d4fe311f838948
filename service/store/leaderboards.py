"""Best times of won games, in a sorted set per board kind, kept to the top N.

Humans and bots have boards of their own. A leaderboard's keys share their own hash
tag, so one script updates both the ranking and the entry details on Redis Cluster too.
"""

from __future__ import annotations

import secrets
from typing import Any, cast

import msgspec

from . import keys
from .connection import Redis
from .errors import redis_errors
from .scripts import source

KEEP = 1000


class Entry(msgspec.Struct, array_like=True, frozen=True):
    game_id: str
    player_id: str
    # The player's name when they won: shown only if the name can no longer be found.
    player: str
    elapsed_ms: int
    ended_at: int
    bbbv: int


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Entry).decode


def board_name(preset: str, no_guess: bool, date: str | None = None, *, bot: bool) -> str:
    kind = "noguess" if no_guess else "classic"
    who = "bots" if bot else "humans"
    return f"daily:{date}:{preset}:{kind}:{who}" if date else f"{who}:{preset}:{kind}"


class Leaderboards:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._record = redis.register_script(source("leaderboard.lua"))
        self._daily_secret: bytes | None = None

    async def record(self, board: str, entry: Entry, until_ms: int | None = None) -> int | None:
        """Enter a win; its rank from 0, or None when it did not make the top. A board
        with ``until_ms`` (a day's) is dropped then."""
        with redis_errors():
            rank = await self._record(
                keys=[keys.leaderboard_times(board), keys.leaderboard_entries(board)],
                args=[entry.elapsed_ms, entry.game_id, _encode(entry), KEEP, until_ms or ""],
            )
        return None if rank is None else int(rank)

    async def top(self, board: str, limit: int) -> list[Entry]:
        with redis_errors():
            times = keys.leaderboard_times(board)
            ids = cast(list[Any], await self.redis.zrange(times, 0, limit - 1))
            if not ids:
                return []
            raw = cast(list[Any], await self.redis.hmget(keys.leaderboard_entries(board), ids))
        return [_decode(r) for r in raw if r is not None]

    async def first_daily_go(self, board: str, player_id: str) -> bool:
        """Whether this is the first game the player starts of ``board`` (a daily board's
        name): only that one is ranked, the others are played on a board already seen."""
        with redis_errors():
            # Kept past the day's end, which the leaderboard's own name carries.
            return bool(await self.redis.set(keys.daily_go(board, player_id), 1, nx=True,
                                             ex=3 * 24 * 3600))

    async def daily_secret(self) -> bytes:
        """The key that turns a date into a daily seed: made once, shared by every replica."""
        if self._daily_secret is None:
            key = keys.daily_secret()
            with redis_errors():
                await self.redis.set(key, secrets.token_bytes(32), nx=True)
                self._daily_secret = cast(bytes, await self.redis.get(key))
        return self._daily_secret
