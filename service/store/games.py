"""Games in Redis: a hash per game (write counter, snapshot, token hash, player,
successor...), a stream of its diffs and notices (resets, hints given), and idempotency
records, all under
the game's hash tag. The scripts that change them are the ``.lua`` files beside this one.

The commit that ends a player's game counts it in the player's stats: in the same
script on a single Redis; on a cluster the tally waits in the game's hash for a second
step (``players.py``), which counts it once whoever runs it.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from .. import engine
from . import keys
from .cache import BUDGET_BYTES, GameCache
from .connection import Redis, RedisCluster
from .errors import GameNotFound, RateLimited, StoreUnavailable, TooLate, redis_errors
from .players import RECENT_KEPT, TALLY_FUNCTION, Owner
from .ratelimit import TAKE_FUNCTION, Buckets, Take, take_args
from .routes import COMMANDS, Routing, command_of, publishing
from .scripts import source

IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000
# Long enough to replay any game a person plays; a cap so a runaway game cannot
# grow without bound.
STREAM_MAXLEN = 100_000

_FIELDS_LUA = source("fields.lua")
# A change, with a cached game's rate limits and idempotent answer, and the tally of a
# player's game it ends, in one call.
COMMIT_SCRIPT = TAKE_FUNCTION + TALLY_FUNCTION + _FIELDS_LUA + source("commit.lua")
_CREATE = source("create.lua")
_NOTICE = source("notice.lua")
# A move's game, its idempotent answer and its rate limits in one call.
_LOAD = TAKE_FUNCTION + _FIELDS_LUA + source("load.lua")


def _declared_fields(script: str) -> list[str]:
    """The names in the script's ``local FIELDS = {...}``."""
    declared = re.search(r"local FIELDS = \{(.*)\}", script)
    if declared is None:
        raise RuntimeError("fields.lua no longer declares FIELDS")
    return re.findall(r"'(\w+)'", declared[1])


# The fields a load reads, in order: fields.lua names them, and a plain HMGET asks for the same.
SNAPSHOT_FIELDS = _declared_fields(_FIELDS_LUA)

_opened_encoder = msgspec.msgpack.Encoder()
_opened_decoder = msgspec.msgpack.Decoder(list[engine.ChangedCell])
_coop_encoder = msgspec.msgpack.Encoder()
_coop_decoder = msgspec.msgpack.Decoder(tuple[tuple[str, bytes], ...])


class MatchLink(msgspec.Struct, frozen=True):
    """What a match's game knows of its match."""

    match_id: str
    seat: int
    starts_at: int
    ends_at: int
    coop: tuple[tuple[str, bytes], ...] = ()


class Record(msgspec.Struct, frozen=True):
    """A game as loaded: ``rev`` counts writes and guards the next commit."""

    rev: bytes
    game: engine.Game
    token_hash: bytes
    # The name the player had when the game was made.
    player: str | None
    # The game a reset started from this one.
    next_id: str | None
    # The date of a daily board, and whether a win may enter a leaderboard.
    daily: str | None = None
    ranked: bool = False
    idempotent: bytes | None = None
    # The player the game belongs to: their id, the hash of their token, and whether
    # they are a bot.
    player_id: str | None = None
    player_token_hash: bytes | None = None
    bot: bool = False
    # Why a won game was held off the human leaderboards (JSON of ``wire.Held``).
    held: bytes | None = None
    # A match's game: the match, the seat (-1 for a co-op game, every seat's), and when
    # moves are taken (``starts_at``, ``ends_at``).
    match_id: str | None = None
    seat: int = -1
    window: tuple[int, int] | None = None
    # A co-op game's players: (id, token hash) of each seat.
    coop: tuple[tuple[str, bytes], ...] = ()

    @property
    def owner(self) -> Owner | None:
        if self.player_id is None or self.player is None or self.player_token_hash is None:
            return None
        return Owner(self.player_id, self.player, self.player_token_hash, self.bot)
    # The random id of the write that made ``rev`` (empty before the first).
    attempt: bytes = b""


class GameStore:
    def __init__(
        self,
        redis: Redis,
        *,
        ttl_seconds: int,
        buckets: Buckets,
        cache_bytes: int = BUDGET_BYTES,
        routing: Routing | None = None,
    ) -> None:
        """``routing`` tells the command the scripts publish with (classic PUBLISH without)."""
        self.redis = redis
        self._routing = routing
        self.cluster = isinstance(redis, RedisCluster)
        # On a cluster the rate limits cannot ride in the commit: moves load their game.
        self._cache = None if self.cluster or not cache_bytes else GameCache(cache_bytes)
        self.ttl_ms = ttl_seconds * 1000
        self._buckets = buckets
        self._commit = {c: redis.register_script(publishing(c, COMMIT_SCRIPT)) for c in COMMANDS}
        self._create = redis.register_script(_CREATE)
        self._load = redis.register_script(_LOAD)
        self._notice = {c: redis.register_script(publishing(c, _NOTICE)) for c in COMMANDS}

    def _publish(self) -> str:
        return command_of(self._routing)

    async def ping(self) -> bool:
        """Whether Redis answers, and has told which pub/sub to publish with. Redis is
        asked first: when it refuses the service, why it does is the news."""
        with redis_errors():
            answered = bool(await self.redis.ping())
        self._publish()
        return answered

    async def create(
        self,
        game_id: str,
        game: engine.Game,
        token_hash: bytes,
        owner: Owner | None,
        *,
        daily: str | None = None,
        ranked: bool = False,
        opened: Sequence[engine.ChangedCell] = (),
        match: MatchLink | None = None,
    ) -> None:
        """Store a new game, its player's if ``owner`` says whose; ``opened`` are the
        cells its board opened before the first move (a daily board's start), kept for
        its replay."""
        fields: dict[Any, Any] = {"rev": 0, "snap": engine.encode(game), "tok": token_hash}
        if owner:
            # The player's token hash is kept with the game, so a move made with it is
            # checked without reading the player.
            fields.update(
                player=owner.name, pid=owner.player_id, ptok=owner.token_hash,
                bot=int(owner.bot),
            )
        if daily:
            fields["daily"] = daily
        if ranked:
            fields["ranked"] = 1
        if opened:
            fields["opened"] = _opened_encoder.encode(opened)
        if match:
            fields.update(
                match=match.match_id, seat=match.seat,
                window=f"{match.starts_at} {match.ends_at}",
            )
            if match.coop:
                fields["coop"] = _coop_encoder.encode(match.coop)
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
                fields = cast(list[Any], await self.redis.hmget(key, SNAPSHOT_FIELDS))
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
        return self._record(game_id, fields, idempotent)

    def cached(self, game_id: str) -> Record | None:
        """This process's copy of the game as of the last write it saw, if it has one."""
        return self._cache.get(game_id) if self._cache is not None else None

    def _record(self, game_id: str, fields: list[Any], idempotent: bytes | None) -> Record:
        """The record of a game's FIELDS as Redis answered them; kept in the cache."""
        rev, snap, tok, player, next_id, daily, ranked, pid, ptok, bot, held, *rest = fields
        attempt, match_id, seat, window, coop = rest
        if rev is None or snap is None:
            if self._cache is not None:
                self._cache.drop(game_id)
            raise GameNotFound(game_id)
        record = Record(
            rev=rev,
            game=engine.decode(snap),
            token_hash=tok or b"",
            player=player.decode() if player else None,
            next_id=next_id.decode() if next_id else None,
            daily=daily.decode() if daily else None,
            ranked=ranked == b"1",
            player_id=pid.decode() if pid else None,
            player_token_hash=ptok or None,
            bot=bot == b"1",
            held=held or None,
            attempt=attempt or b"",
            match_id=match_id.decode() if match_id else None,
            seat=int(seat) if seat is not None else -1,
            window=cast(tuple[int, int], tuple(map(int, window.split()))) if window else None,
            coop=_coop_decoder.decode(coop) if coop else (),
        )
        if self._cache is not None:
            self._cache.put(game_id, record)
        return msgspec.structs.replace(record, idempotent=idempotent) if idempotent else record

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
                return await self.redis.hmget(keys.game(game_id), SNAPSHOT_FIELDS), None
            pipe = self.redis.pipeline(transaction=False)
            pipe.hmget(keys.game(game_id), SNAPSHOT_FIELDS)
            pipe.get(keys.idempotency(game_id, idempotency_key))
            fields, idempotent = await pipe.execute()
            return fields, idempotent

        game, *waits = await asyncio.gather(
            read(), *(self._buckets.take(group, now_ms) for group in takes)
        )
        if any(waits):
            raise RateLimited(max(cast(list[int], waits)))
        return cast(tuple[list[Any], bytes | None], game)

    async def commit(
        self,
        game_id: str,
        record: Record,
        game: engine.Game,
        diff: bytes | None,
        idempotent: tuple[str, bytes] | None = None,
        *,
        held: bytes = b"",
        tally: tuple[str, bytes] | None = None,
        takes: Sequence[Take] = (),
        now_ms: int = 0,
        closes_at: int | None = None,
    ) -> Record | None:
        """Store ``game`` if nothing was written since ``record`` was read; None when
        it was stored.

        Otherwise the record to apply the change to again: the game as the write that
        came first left it, or, when the idempotency key already has an answer, this
        record with that answer. ``takes`` are rate-limit buckets of the game's hash tag
        to take first (:class:`RateLimited` when one is empty): a move on a cached game
        takes its limits here rather than in a load. ``held`` says why a won game stays
        off the human leaderboards; ``tally`` (the player's id and the encoded tally)
        counts the game that this change ends in its player's stats, in this script
        except on a cluster (then see
        :meth:`PlayerStore.count <service.store.players.PlayerStore.count>`).
        From ``closes_at`` on, by Redis's clock, the change is refused (:class:`TooLate`).
        """
        idem_key, idem_value = idempotent if idempotent else (None, b"")
        player_id, tally_blob = tally if tally else (None, b"")
        game_key = keys.game(game_id)
        # The player's keys, or the game's hash in their place: the tally then waits in it.
        player_keys = [game_key, game_key]
        if player_id and not self.cluster:
            player_keys = [keys.player(player_id), keys.player_recent(player_id)]
        attempt = secrets.token_bytes(12)
        try:
            with redis_errors():
                reply = await self._commit[self._publish()](
                    keys=[
                        game_key,
                        keys.events(game_id),
                        keys.idempotency(game_id, idem_key) if idem_key else game_key,
                        *player_keys,
                        *(t.key for t in takes),
                    ],
                    args=[
                        record.rev,
                        engine.encode(game),
                        game.version,
                        diff or b"",
                        keys.channel(game_id),
                        self.ttl_ms,
                        idem_value,
                        IDEMPOTENCY_TTL_MS,
                        STREAM_MAXLEN,
                        attempt,
                        record.attempt,
                        held,
                        tally_blob,
                        RECENT_KEPT,
                        b"" if closes_at is None else closes_at,
                        *(take_args(list(takes), now_ms) if takes else ()),
                    ],
                )
        except StoreUnavailable:
            if self._cache is not None:  # written or not: the copy may be behind either way
                self._cache.drop(game_id)
            raise
        status = reply[0]
        if status == 1:
            if self._cache is not None:
                written = msgspec.structs.replace(
                    record, rev=b"%d" % (int(record.rev) + 1), game=game, attempt=attempt,
                    idempotent=None, held=held or record.held,
                )
                self._cache.put(game_id, written)
            return None
        if status == 0:
            return self._record(game_id, reply[1], None)
        if status == 2:
            raise RateLimited(int(reply[1]))
        if status == 3:
            return msgspec.structs.replace(record, idempotent=reply[1])
        if status == 4:
            raise TooLate(game_id)
        if self._cache is not None:
            self._cache.drop(game_id)
        raise GameNotFound(game_id)

    async def moves_before_end(self, game_id: str, count: int) -> list[bytes]:
        """The game's last ``count`` diffs, newest first: how the moves were spaced."""
        with redis_errors():
            entries = cast(
                list[Any],
                await self.redis.xrevrange(keys.events(game_id), count=count),
            )
        return [fields[b"d"] for entry_id, fields in entries if entry_id.endswith(b"-0")]

    async def reset(self, game_id: str, next_id: str, message: bytes) -> None:
        """Remember the game that a reset started from this one, and append and publish
        ``message`` (the reset event) on this game's stream and channel."""
        await self._notify(game_id, message, next_id)

    async def notify(self, game_id: str, message: bytes) -> None:
        """Append and publish ``message``, a notice that changes no version (a hint was
        given), on this game's stream and channel."""
        await self._notify(game_id, message, "")

    async def _notify(self, game_id: str, message: bytes, next_id: str) -> None:
        with redis_errors():
            result = await self._notice[self._publish()](
                keys=[keys.game(game_id), keys.events(game_id)],
                args=[next_id, message, keys.channel(game_id), self.ttl_ms, STREAM_MAXLEN],
            )
        if result == -1:
            raise GameNotFound(game_id)

    async def events_after(self, game_id: str, version: int) -> list[bytes] | None:
        """The diffs after ``version`` in order, with any reset among them, from the stream
        alone; None when it cannot tell: trimmed past ``version``, gone, or not that far."""
        with redis_errors():
            # From ``version``'s own diff: finding it there tells the stream reaches back
            # that far and that ``version`` is not from the future.
            entries = cast(
                list[Any], await self.redis.xrange(keys.events(game_id), min=f"{version}-0")
            )
        if not entries:
            return None
        first, seq = map(int, entries[0][0].split(b"-"))
        # A trimmed stream shows as a first entry past the next version's diff (or past a
        # reset right after ``version``, which sorts before it).
        if not (first == version or (first == version + 1 and seq == 0)):
            return None
        if first == version and seq == 0:
            entries = entries[1:]
        return [fields[b"d"] for _, fields in entries]

    async def history(self, game_id: str) -> tuple[list[engine.ChangedCell], list[bytes]]:
        """For a replay: the cells the board opened before the first move, and every diff
        the stream still holds, oldest first."""
        with redis_errors():
            pipe = self.redis.pipeline(transaction=False)
            pipe.hget(keys.game(game_id), "opened")
            pipe.xrange(keys.events(game_id))
            opened, entries = await pipe.execute()
        diffs = [fields[b"d"] for entry_id, fields in entries if entry_id.endswith(b"-0")]
        return (_opened_decoder.decode(opened) if opened else []), diffs
