"""Players in Redis: a hash per player (token hash, bot, creation time, the counters of
their stats) and the list of their last games, under the tag ``{p:<id>}``; every name
in one pair of hashes under ``{names}``, so claiming one is a single script.

A finished game is counted in its player's stats by the commit that ends it
(``commit.lua``), except on a cluster, where the player's keys live in another slot
than the game's. There it takes three steps: the game is listed as pending in the
player's slot, the commit keeps the tally in the game's hash, and :meth:`count` adds
it to the stats once, refusing a game it has counted. A replica that dies between
the steps leaves the game pending; :meth:`load` counts it from the game's hash, so
nothing is lost and nothing is counted twice.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, cast

import msgspec

from ..engine import PresetName
from . import keys
from .connection import Redis, RedisCluster
from .errors import redis_errors
from .routes import Routing, send
from .scripts import source

# The ``tally`` function, which commit.lua calls too.
TALLY_FUNCTION = source("tally.lua")
RECENT_KEPT = 20
# A registration not finished within this long has lapsed, and so has its claim on a name.
REGISTRATION_MS = 24 * 3600 * 1000
# A pending game older than this whose end was never committed is forgotten: a commit
# follows its listing within the store's timeouts.
PENDING_MS = 30_000


class Owner(msgspec.Struct, frozen=True):
    """Whose a game is: kept with the game when it is made."""

    player_id: str
    name: str
    token_hash: bytes
    bot: bool


class Recent(msgspec.Struct, array_like=True, frozen=True):
    """An entry of a player's recent list, as stored."""

    id: str
    kind: Literal["game", "match"]
    preset: PresetName | None
    no_guess: bool
    daily: str | None
    won: bool
    elapsed_ms: int
    bbbv_per_s_milli: int
    assisted: bool
    ended_at: int


class Tally(msgspec.Struct, array_like=True, frozen=True):
    """What a finished game adds to its player's record; read by tally.lua."""

    # ``<preset>:classic`` or ``<preset>:noguess``; empty for a custom board.
    board: str
    won: bool
    elapsed_ms: int
    bbbv_per_s_milli: int
    # Whether a win may set a best time or rate.
    best: bool
    # The recent list's entry, as JSON: the Lua msgpack library reads no binary strings.
    # Empty for a match's game: the match has an entry of its own, written when it ends.
    recent: str


class PlayerRecord(msgspec.Struct, frozen=True):
    """A player as loaded."""

    id: str
    name: str
    bot: bool
    created_at: int
    token_hash: bytes
    # The stats' counters: ``<board>:<counter>`` -> value.
    counters: dict[str, int]
    recent: list[Recent]


_encode = msgspec.msgpack.Encoder().encode
_recent = msgspec.json.Decoder(Recent).decode


def encode_tally(tally: Tally) -> bytes:
    return _encode(tally)


def encode_recent(recent: Recent) -> str:
    return msgspec.json.encode(recent).decode()


class PlayerStore:
    def __init__(
        self, redis: Redis, *, game_ttl_seconds: int, routing: Routing | None = None
    ) -> None:
        """``routing`` tells the command to publish with (classic PUBLISH without)."""
        self.redis = redis
        self._routing = routing
        self.cluster = isinstance(redis, RedisCluster)
        # A counted game is remembered as long as its hash may still hold its tally.
        self._remember_ms = game_ttl_seconds * 1000 + 24 * 3600 * 1000
        self._create = redis.register_script(source("create.lua"))
        self._claim = redis.register_script(source("claim.lua"))
        self._count = redis.register_script(TALLY_FUNCTION + source("count.lua"))
        self._forget = redis.register_script(source("forget.lua"))
        self._listed = redis.register_script(source("listed.lua"))

    # ---- names ---------------------------------------------------------------------------

    async def register(
        self, player_id: str, token_hash: bytes, name: str, *, bot: bool, now_ms: int
    ) -> bool:
        """A new player named ``name``; False when somebody has that name.

        The player's hash comes first, set to expire, then the name is claimed, then the
        hash is kept: a registration cut short anywhere leaves nothing that lasts, and a
        name claimed by one that lapsed is free again.
        """
        fields = {"tok": token_hash, "bot": int(bot), "created": now_ms}
        args: list[Any] = [REGISTRATION_MS]
        for field, value in fields.items():
            args += [field, value]
        with redis_errors():
            await self._create(keys=[keys.player(player_id)], args=args)
        if not await self.claim(player_id, name):
            with redis_errors():
                await self.redis.delete(keys.player(player_id))
            return False
        with redis_errors():
            await self.redis.persist(keys.player(player_id))
        return True

    async def claim(self, player_id: str, name: str) -> bool:
        """Give ``name`` to the player (releasing the one they had); False when another
        player has it, ignoring case."""
        lapsed = ""
        for _ in range(2):
            with redis_errors():
                result = await self._claim(
                    keys=[keys.name_owners(), keys.player_names()],
                    args=[name.lower(), name, player_id, lapsed],
                )
            if result == 1:
                return True
            owner = result.decode() if isinstance(result, bytes) else str(result)
            with redis_errors():
                if await self.redis.exists(keys.player(owner)):
                    return False
            lapsed = owner
        return False

    async def names_of(self, player_ids: list[str]) -> dict[str, str]:
        """The names the players have now."""
        if not player_ids:
            return {}
        with redis_errors():
            names = cast(list[Any], await self.redis.hmget(keys.player_names(), player_ids))
        return {pid: n.decode() for pid, n in zip(player_ids, names, strict=True) if n}

    # ---- reading -------------------------------------------------------------------------

    async def load(self, player_id: str, now_ms: int) -> PlayerRecord | None:
        """The player, with every game they finished counted; None when there is none."""
        record, pending = await self._read(player_id)
        if pending:
            await self.recover(player_id, pending, now_ms)
            record, _ = await self._read(player_id)
        return record

    async def _read(self, player_id: str) -> tuple[PlayerRecord | None, list[str]]:
        """The player, and on a cluster the games of theirs that may be left to count."""
        with redis_errors():
            pipe = self.redis.pipeline(transaction=False)
            pipe.hgetall(keys.player(player_id))
            pipe.lrange(keys.player_recent(player_id), 0, RECENT_KEPT - 1)
            pipe.hget(keys.player_names(), player_id)
            if self.cluster:
                pipe.zrange(keys.player_pending(player_id), 0, 99)
            fields, recent, name, *pending = await pipe.execute()
        if not fields or b"tok" not in fields or name is None:
            return None, []
        counters = {
            k.decode(): int(v) for k, v in fields.items() if k not in (b"tok", b"bot", b"created")
        }
        record = PlayerRecord(
            id=player_id,
            name=name.decode(),
            bot=fields.get(b"bot") == b"1",
            created_at=int(fields.get(b"created", 0)),
            token_hash=fields[b"tok"],
            counters=counters,
            recent=[_recent(r) for r in recent],
        )
        return record, [p.decode() for p in (pending[0] if pending else [])]

    async def credentials(self, player_id: str) -> tuple[bytes, bool, str] | None:
        """What a request made with the player's token needs: the token's hash, whether
        the player is a bot, and their name; None when there is no such player."""
        with redis_errors():
            pipe = self.redis.pipeline(transaction=False)
            pipe.hmget(keys.player(player_id), ["tok", "bot"])
            pipe.hget(keys.player_names(), player_id)
            (tok, bot), name = await pipe.execute()
        if tok is None or name is None:
            return None
        return tok, bot == b"1", name.decode()

    # ---- counting finished games (the cluster's second step) -----------------------------

    async def mark_pending(self, player_id: str, game_id: str, now_ms: int) -> None:
        """Before a commit that ends the player's game: list the game as pending."""
        with redis_errors():
            await self.redis.zadd(keys.player_pending(player_id), {game_id: now_ms})

    async def count(self, player_id: str, game_id: str, tally: bytes, now_ms: int) -> bool:
        """Count the game in the player's stats; False when it had been."""
        with redis_errors():
            result = await self._count(
                keys=[
                    keys.player(player_id),
                    keys.player_recent(player_id),
                    keys.player_counted(player_id),
                    keys.player_pending(player_id),
                ],
                args=[game_id, tally, now_ms, self._remember_ms, RECENT_KEPT],
            )
        return bool(result == 1)

    async def recover(self, player_id: str, pending: list[str], now_ms: int) -> None:
        """Count the pending games whose end was committed, from the tallies their
        commits kept; forget those that never ended and have waited long enough."""
        async def one(game_id: str) -> None:
            with redis_errors():
                tally, score = await asyncio.gather(
                    self.redis.hget(keys.game(game_id), "tally"),
                    self.redis.zscore(keys.player_pending(player_id), game_id),
                )
            if isinstance(tally, bytes) and tally:
                await self.count(player_id, game_id, tally, now_ms)
            elif score is not None and score < now_ms - PENDING_MS:
                with redis_errors():
                    await self._forget(
                        keys=[keys.player_pending(player_id)],
                        args=[game_id, now_ms - PENDING_MS],
                    )

        await asyncio.gather(*(one(g) for g in pending))

    async def add_recent(self, player_id: str, recent: Recent, now_ms: int) -> bool:
        """Put a finished match at the head of the player's recent list, once (a game gets
        there with the commit that ends it); False when it was there already."""
        with redis_errors():
            listed = await self._listed(
                keys=[keys.player_recent(player_id), keys.player_counted(player_id)],
                args=[recent.id, encode_recent(recent), now_ms, self._remember_ms, RECENT_KEPT],
            )
        return bool(listed == 1)

    # ---- the player's socket -------------------------------------------------------------

    async def publish(self, player_id: str, message: bytes) -> None:
        await send(self._routing, self.redis, keys.player_channel(player_id), message)
