"""Games in Redis: a hash per game (write counter, snapshot, token hash, player),
a stream of its diffs and idempotency records, all under the game's hash tag."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from importlib.resources import files
from typing import Any, cast

import msgspec

from .. import engine
from . import keys
from .connection import Redis, RedisCluster
from .errors import GameNotFound, RateLimited, redis_errors
from .ratelimit import TAKE_FUNCTION, RateLimiter, Take, take_args

IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
# Long enough to replay any game a person plays; a cap so a runaway game cannot
# grow without bound.
STREAM_MAXLEN = 100_000

_COMMIT = files(__package__).joinpath("commit.lua").read_text()
# A new game's hash and its expiry together (a cluster pipeline cannot be a transaction).
_CREATE = """
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
"""


_FIELDS = ["rev", "snap", "tok", "player", "next", "daily", "ranked"]

# A move's game, its idempotent answer and its rate limits in one call. Not on a
# cluster, where the buckets live in other slots than the game.
_LOAD = TAKE_FUNCTION + f"""
-- KEYS[1] game hash   KEYS[2] idempotency key (or the game hash)   KEYS[3...] buckets
-- ARGV[1] '1' when KEYS[2] is an idempotency key   ARGV[2...] the buckets' time and limits
-- Returns {{wait}} while a bucket is empty, else {{0, the game's fields, idempotent answer}}.
if #KEYS > 2 then
  local wait = take(KEYS, 3, ARGV, 2)
  if wait > 0 then
    return {{wait}}
  end
end
local idempotent = false
if ARGV[1] == '1' then
  idempotent = redis.call('GET', KEYS[2])
end
return {{0, redis.call('HMGET', KEYS[1], '{"', '".join(_FIELDS)}'), idempotent}}
"""


class Record(msgspec.Struct, frozen=True):
    """A game as loaded: ``rev`` counts writes and guards the next commit."""

    rev: bytes
    game: engine.Game
    token_hash: bytes
    player: str | None
    next_id: str | None
    # The date of a daily board, and whether a win may enter a leaderboard.
    daily: str | None = None
    ranked: bool = False
    idempotent: bytes | None = None


class GameStore:
    def __init__(self, redis: Redis, *, ttl_seconds: int) -> None:
        self.redis = redis
        self.cluster = isinstance(redis, RedisCluster)
        self.ttl_ms = ttl_seconds * 1000
        self._commit = redis.register_script(_COMMIT)
        self._create = redis.register_script(_CREATE)
        self._load = redis.register_script(_LOAD)
        self._limiter = RateLimiter(redis)

    async def ping(self) -> bool:
        with redis_errors():
            return bool(await self.redis.ping())

    async def create(
        self,
        game_id: str,
        game: engine.Game,
        token_hash: bytes,
        player: str | None,
        *,
        daily: str | None = None,
        ranked: bool = False,
    ) -> None:
        fields: dict[Any, Any] = {"rev": 0, "snap": engine.encode(game), "tok": token_hash}
        if player:
            fields["player"] = player
        if daily:
            fields["daily"] = daily
        if ranked:
            fields["ranked"] = 1
        args: list[Any] = [self.ttl_ms]
        for name, value in fields.items():
            args += [name, value]
        with redis_errors():
            await self._create(keys=[keys.game(game_id)], args=args)

    async def load(
        self,
        game_id: str,
        idempotency_key: str | None = None,
        *,
        takes: Sequence[list[Take]] = (),
        now_ms: int = 0,
    ) -> Record:
        """The game and, when asked, the answer stored for an idempotency key.

        ``takes`` are rate-limit buckets, in groups of one hash tag each, to take first;
        :class:`RateLimited` says one is empty. It is all one round trip, except on a
        cluster, where the game and each group are asked for at the same time.
        """
        key = keys.game(game_id)
        fields: list[Any]
        idempotent: bytes | None = None
        with redis_errors():
            if idempotency_key is None and not takes:
                fields = cast(list[Any], await self.redis.hmget(key, _FIELDS))
            elif self.cluster:
                fields, idempotent = await self._load_on_cluster(
                    game_id, idempotency_key, takes, now_ms
                )
            else:
                every = [t for group in takes for t in group]
                idem_key = keys.idempotency(game_id, idempotency_key) if idempotency_key else key
                reply = await self._load(
                    keys=[key, idem_key, *(t.key for t in every)],
                    args=[b"1" if idempotency_key else b"", *take_args(every, now_ms)],
                )
                if reply[0]:
                    raise RateLimited(int(reply[0]))
                _, fields, idempotent = reply
        rev, snap, tok, player, next_id, daily, ranked = fields
        if rev is None or snap is None:
            raise GameNotFound(game_id)
        return Record(
            rev=rev,
            game=engine.decode(snap),
            token_hash=tok or b"",
            player=player.decode() if player else None,
            next_id=next_id.decode() if next_id else None,
            daily=daily.decode() if daily else None,
            ranked=ranked == b"1",
            idempotent=idempotent,
        )

    async def _load_on_cluster(
        self,
        game_id: str,
        idempotency_key: str | None,
        takes: Sequence[list[Take]],
        now_ms: int,
    ) -> tuple[list[Any], bytes | None]:
        """A cluster pipeline cannot carry scripts, and the buckets live on other nodes:
        the game and each group of buckets are asked for at the same time instead."""

        async def read() -> tuple[list[Any], bytes | None]:
            if idempotency_key is None:
                return await self.redis.hmget(keys.game(game_id), _FIELDS), None
            pipe = self.redis.pipeline(transaction=False)
            pipe.hmget(keys.game(game_id), _FIELDS)
            pipe.get(keys.idempotency(game_id, idempotency_key))
            fields, idempotent = await pipe.execute()
            return fields, idempotent

        game, *waits = await asyncio.gather(
            read(), *(self._limiter.take(group, now_ms) for group in takes)
        )
        if any(waits):
            raise RateLimited(max(cast(list[int], waits)))
        return cast(tuple[list[Any], bytes | None], game)

    async def commit(
        self,
        game_id: str,
        rev: bytes,
        game: engine.Game,
        diff: bytes | None,
        idempotent: tuple[str, bytes] | None = None,
    ) -> bool:
        """Store ``game`` if nothing was written since ``rev``; False when beaten to it."""
        idem_key, idem_value = idempotent if idempotent else (None, b"")
        with redis_errors():
            result = await self._commit(
                keys=[
                    keys.game(game_id),
                    keys.events(game_id),
                    keys.idempotency(game_id, idem_key) if idem_key else keys.game(game_id),
                ],
                args=[
                    rev,
                    engine.encode(game),
                    game.version,
                    diff or b"",
                    keys.channel(game_id),
                    self.ttl_ms,
                    idem_value,
                    IDEMPOTENCY_TTL_MS,
                    STREAM_MAXLEN,
                    secrets.token_bytes(12),
                ],
            )
        if result == -1:
            raise GameNotFound(game_id)
        return bool(result == 1)

    async def note(self, game_id: str, rev: bytes, game: engine.Game) -> bool:
        """Store a change that is no move (a hint's count): no diff, nothing published."""
        return await self.commit(game_id, rev, game, None)

    async def set_next(self, game_id: str, next_id: str) -> None:
        """Remember and announce the game that a reset started from this one."""
        with redis_errors():
            await self.redis.hset(keys.game(game_id), "next", next_id)

    async def events_after(self, game_id: str, version: int) -> list[bytes] | None:
        """The diffs after ``version`` in order, or None when the stream no longer holds them."""
        with redis_errors():
            entries = cast(
                list[Any], await self.redis.xrange(keys.events(game_id), min=f"{version + 1}-0")
            )
        # Stream ids are the versions, so a trimmed stream shows as a first id past version + 1.
        if entries and int(entries[0][0].split(b"-")[0]) != version + 1:
            return None
        return [fields[b"d"] for _, fields in entries]

    async def history(self, game_id: str) -> list[bytes]:
        """Every diff the stream still holds, oldest first."""
        with redis_errors():
            entries = cast(list[Any], await self.redis.xrange(keys.events(game_id)))
        return [fields[b"d"] for _, fields in entries]
