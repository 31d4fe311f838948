"""Matches, seeks and ratings in Redis.

A match is a hash under the tag ``{m:<id>}`` (write counter and state) with a stream of
its updates and a channel, committed by the same script as a game's changes
(``match_commit.lua``, the match's like ``commit.lua`` is a game's): compare the counter,
store, append, publish. The matches whose start
or end is due wait in one sorted set, leased out to one replica at a time (``due.lua``).
Every seek lives under the tag ``{seeks}``, so pairing is one script (``pair.lua``);
each pool of ratings under its own tag, so a match's changes go in at once, and only
once (``rate.lua``).
"""

from __future__ import annotations

import secrets
from typing import Any, Literal, cast

import msgspec

from ..engine import OnMine, PresetName
from . import keys
from .connection import Redis
from .errors import StoreError, redis_errors
from .games import STREAM_MAXLEN
from .routes import COMMANDS, Routing, command_of, publishing, send
from .scripts import source

MatchMode = Literal["race", "coop"]
MatchStatus = Literal["waiting", "countdown", "playing", "finished"]
SeatStatus = Literal["waiting", "playing", "won", "lost", "resigned"]


class MatchNotFound(StoreError):
    pass


class SeekNotFound(StoreError):
    pass


class SeatState(msgspec.Struct, frozen=True, array_like=True):
    player_id: str
    name: str
    bot: bool
    # The player's rating when they sat down.
    rating: float | None
    status: SeatStatus = "waiting"
    bbbv_done: int = 0
    bbbv: int = 0
    penalties: int = 0
    time_ms: int | None = None
    place: int | None = None
    rating_before: float | None = None
    rating_after: float | None = None
    game_id: str | None = None
    # The version of the seat's game its counts are from.
    counted: int = 0
    # A rated race's new deviation for the seat, kept until the pool holds it.
    deviation_after: float | None = None
    # The deviation it was worked out from (None: a match ended before this was kept).
    deviation_before: float | None = None


class MatchState(msgspec.Struct, frozen=True, array_like=True):
    id: str
    mode: MatchMode
    status: MatchStatus
    version: int
    width: int
    height: int
    mines: int
    preset: PresetName | None
    no_guess: bool
    rated: bool
    on_mine: OnMine
    time_limit_s: int
    capacity: int
    created_at: int
    seats: tuple[SeatState, ...]
    starts_at: int | None = None
    ends_at: int | None = None
    ended_at: int | None = None
    # The match its players play next (``POST /matches/{id}/rematch``), once asked for.
    rematch_id: str | None = None
    # A rematch seats only the players of the match before it; empty: anybody.
    invited: tuple[str, ...] = ()
    # The match a rematch follows.
    rematch_of: str | None = None
    # Whether its creator asked for a rated match (``rated`` is whether it counts, which
    # a match over before its start, or between a bot and a human, does not). None: a
    # match stored before this was kept, asked as ``rated`` says.
    asked_rated: bool | None = None


_state = msgspec.msgpack.Decoder(MatchState)
_encode = msgspec.msgpack.Encoder().encode


class Seek(msgspec.Struct, frozen=True):
    id: str
    player_id: str
    status: Literal["waiting", "matched", "expired", "cancelled"]
    match_id: str | None
    # A matched seek: the match's players in seat order, and when the pair was made.
    players: tuple[str, ...] = ()
    paired_at: int | None = None


class MatchStore:
    def __init__(
        self, redis: Redis, *, ttl_seconds: int, routing: Routing | None = None
    ) -> None:
        """``routing`` tells the command to publish with (classic PUBLISH without)."""
        self.redis = redis
        self._routing = routing
        self.ttl_ms = ttl_seconds * 1000
        script = source("match_commit.lua")
        self._commit = {c: redis.register_script(publishing(c, script)) for c in COMMANDS}
        self._create = redis.register_script(source("create.lua"))
        self._due = redis.register_script(source("due.lua"))
        self._pair = redis.register_script(source("pair.lua"))
        self._seek = redis.register_script(source("seek.lua"))
        self._seat = redis.register_script(source("seat.lua"))
        self._rate = redis.register_script(source("rate.lua"))

    # ---- matches ----------------------------------------------------------------------------

    async def create(self, state: MatchState, update: bytes) -> bool:
        """Store a new match, its first update on its stream; False when it was there."""
        with redis_errors():
            made = await self._create(
                keys=[keys.match(state.id)],
                args=[self.ttl_ms, "rev", 0, "snap", _encode(state)],
            )
        if made != 1:
            return False
        await self.commit(state.id, b"0", state, update)
        return True

    async def load(self, match_id: str) -> tuple[bytes, MatchState]:
        """The match's write counter and state."""
        with redis_errors():
            found = await self.redis.hmget(keys.match(match_id), ["rev", "snap"])
        rev, snap = cast(list[Any], found)
        if rev is None or snap is None:
            raise MatchNotFound(match_id)
        return rev, _state.decode(snap)

    async def commit(
        self, match_id: str, rev: bytes, state: MatchState, update: bytes
    ) -> bool:
        """Store ``state`` if nothing was written since ``rev``, with ``update`` appended to
        the stream and published; False when another write came first."""
        with redis_errors():
            result = await self._commit[command_of(self._routing)](
                keys=[keys.match(match_id), keys.match_events(match_id)],
                args=[
                    rev, _encode(state), state.version, update, keys.match_channel(match_id),
                    self.ttl_ms, STREAM_MAXLEN, secrets.token_bytes(12),
                ],
            )
        if result == -1:
            raise MatchNotFound(match_id)
        return bool(result == 1)

    async def events_after(self, match_id: str, version: int) -> list[bytes] | None:
        """The updates after ``version`` in order, or None when the stream lost some."""
        with redis_errors():
            entries = cast(
                list[Any],
                await self.redis.xrange(keys.match_events(match_id), min=f"{version + 1}-0"),
            )
        if entries and int(entries[0][0].split(b"-")[0]) != version + 1:
            return None
        return [fields[b"d"] for _, fields in entries]

    async def publish(self, match_id: str, message: bytes) -> None:
        """Something for the match's sockets that is not stored (a co-op cursor)."""
        await send(self._routing, self.redis, keys.match_channel(match_id), message)

    # ---- deadlines --------------------------------------------------------------------------

    async def schedule(self, match_id: str, due_ms: int, *, first: bool = False) -> None:
        """Put the match's next deadline at ``due_ms``; with ``first``, only when it
        has none yet (a later stage's, set at the same moment, stands)."""
        with redis_errors():
            await self.redis.zadd(keys.match_deadlines(), {match_id: due_ms}, nx=first)

    async def unschedule(self, match_id: str) -> bool:
        """Take the match off the deadlines: False when it was not on them (any more)."""
        with redis_errors():
            return bool(await self.redis.zrem(keys.match_deadlines(), match_id))

    async def due(self, now_ms: int, lease_ms: int, count: int = 50) -> list[str]:
        """The matches whose deadline came, each leased to this caller for ``lease_ms``."""
        with redis_errors():
            ids = await self._due(keys=[keys.match_deadlines()], args=[now_ms, lease_ms, count])
        return [i.decode() for i in ids]

    # ---- seeks ------------------------------------------------------------------------------

    async def add_seek(
        self, seek_id: str, player_id: str, pool: str, rating: float, now_ms: int, *,
        latest: str | None, latest_over: bool = False,
    ) -> tuple[str, str | None]:
        """Add the seek as the player's latest, if ``latest`` is still their latest seek:
        one still waiting is cancelled. ``("added", None)``; ``("moved", id)`` when
        another seek came first; ``("matched", id)`` when the latest seek has paired
        (and ``latest_over`` does not say its match is over)."""
        with redis_errors():
            status, found = await self._seek(
                keys=[keys.seek(seek_id), keys.seek_pool(pool), keys.player_seek(player_id)],
                args=[
                    seek_id, player_id, pool, rating, now_ms, 3600 * 1000, latest or "",
                    "1" if latest_over else "0", keys.seek(""), keys.seek_pool(""),
                ],
            )
        return status.decode(), found.decode() or None

    async def pair(
        self, seek_id: str, pool: str, now_ms: int, *, expiry_ms: int, window: float,
        widening: float,
    ) -> tuple[str, str, str, str]:
        """Pair the seek if a partner is in reach: (status, match id, partner's seek,
        partner's player); the match id is new when the pair was made by this call."""
        with redis_errors():
            reply = await self._pair(
                keys=[keys.seek(seek_id), keys.seek_pool(pool)],
                args=[
                    now_ms, expiry_ms, window, widening, secrets.token_hex(16),
                    keys.seek(""), seek_id, keys.player_seek(""),
                ],
            )
        status, match_id, partner, partner_player = (r.decode() for r in reply)
        if not status:
            raise SeekNotFound(seek_id)
        return status, match_id, partner, partner_player

    async def seek(self, seek_id: str) -> tuple[Seek, str]:
        """The seek and its pool."""
        with redis_errors():
            pid, pool, status, match_id, players, paired = cast(list[Any], await self.redis.hmget(
                keys.seek(seek_id), ["pid", "pool", "status", "match", "players", "paired"]
            ))
        if pid is None:
            raise SeekNotFound(seek_id)
        seek = Seek(
            seek_id, pid.decode(), status.decode(), match_id.decode() if match_id else None,
            tuple(players.decode().split()) if players else (),
            int(paired) if paired else None,
        )
        return seek, pool.decode()

    async def touch_seek(self, seek_id: str, now_ms: int) -> None:
        """The seek's player still wants it: its expiry starts again."""
        with redis_errors():
            await self.redis.hset(keys.seek(seek_id), "alive", now_ms)

    async def player_seek(self, player_id: str) -> str | None:
        """The id of the player's latest seek, if any."""
        with redis_errors():
            found = cast(Any, await self.redis.get(keys.player_seek(player_id)))
        return found.decode() if found else None

    async def cancel_seek(self, seek_id: str, pool: str) -> bool:
        """Cancel a waiting seek; False when it was no longer waiting."""
        script = (
            "if redis.call('HGET', KEYS[1], 'status') ~= 'waiting' then return 0 end "
            "redis.call('HSET', KEYS[1], 'status', 'cancelled') "
            "redis.call('ZREM', KEYS[2], ARGV[1]) return 1"
        )
        with redis_errors():
            done = await self.redis.eval(
                script, 2, keys.seek(seek_id), keys.seek_pool(pool), seek_id
            )
        return bool(done)

    # ---- the one unfinished match a player sits in -----------------------------------------

    async def claim_seat(
        self, player_id: str, match_id: str, now_ms: int, ttl_ms: int, *,
        replacing: str | None = None, force: bool = False,
    ) -> tuple[str, str | None]:
        """Claim the player for the match: ``("taken", None)``, ``("held", claim)`` when
        the claim was already this match's, ``("other", claim)`` when another match
        holds it (``replacing``: a claim found over, taken over if it is still there)."""
        with redis_errors():
            status, claim = await self._seat(
                keys=[keys.player_seat(player_id)],
                args=["force" if force else "take", match_id, now_ms, ttl_ms, replacing or ""],
            )
        return status.decode(), claim.decode() or None

    async def seat_claim(self, player_id: str) -> str | None:
        """The player's claim as stored: ``"<match id> <since ms>"``."""
        with redis_errors():
            found = cast(Any, await self.redis.get(keys.player_seat(player_id)))
        return found.decode() if found else None

    async def release_seat(self, player_id: str, match_id: str) -> None:
        """The player is free again, if the match held them."""
        with redis_errors():
            await self._seat(keys=[keys.player_seat(player_id)], args=["release", match_id, 0, 0])

    async def refresh_seat(self, player_id: str, match_id: str, ttl_ms: int) -> None:
        """The claim, if the match's, expires ``ttl_ms`` from now."""
        with redis_errors():
            await self._seat(
                keys=[keys.player_seat(player_id)], args=["refresh", match_id, 0, ttl_ms]
            )

    # ---- ratings ----------------------------------------------------------------------------

    async def ratings(
        self, pool: str, player_ids: list[str]
    ) -> dict[str, tuple[float, float, int]]:
        """The players' ``(mu, sigma, games)`` in ``pool``; a player never rated is absent."""
        if not player_ids:
            return {}
        with redis_errors():
            values = cast(list[Any], await self.redis.hmget(keys.ratings(pool), player_ids))
        out = {}
        for pid, value in zip(player_ids, values, strict=True):
            if value:
                mu, sigma, games = value.split()
                out[pid] = (float(mu), float(sigma), int(games))
        return out

    async def apply_ratings(
        self, pool: str, match_id: str, default_mu: float,
        changes: list[tuple[str, float, float | None, float]], *, established: int,
    ) -> bool:
        """Apply one match's ``(player id, change of mean, deviation before, deviation
        after)`` once, to the ratings as they are: the mean moved by the change, the
        deviation by after / before (set to after when before is None). A player with
        ``established`` rated matches or more is listed by :meth:`top`."""
        args: list[Any] = [match_id, default_mu, established]
        for pid, delta, before, after in changes:
            args += [pid, repr(delta), repr(before or 0.0), repr(after)]
        with redis_errors():
            done = await self._rate(
                keys=[keys.ratings(pool), keys.rating_top(pool), keys.ratings_applied(pool)],
                args=args,
            )
        return bool(done)

    async def top(
        self, pool: str, limit: int, *, established: int
    ) -> list[tuple[str, float, float, int]]:
        """The pool's best players with ``established`` rated matches or more:
        ``(id, mu, sigma, games)``, best first. (The list may hold a few who have
        fewer, put there before it took only established ratings: they are passed.)"""
        out: list[tuple[str, float, float, int]] = []
        start = 0
        while len(out) < limit:
            with redis_errors():
                found = cast(list[Any], await self.redis.zrevrange(
                    keys.rating_top(pool), start, start + limit - 1
                ))
            if not found:
                break
            start += len(found)
            ids = [i.decode() for i in found]
            rated = await self.ratings(pool, ids)
            out += [(pid, *rated[pid]) for pid in ids
                    if pid in rated and rated[pid][2] >= established]
        return out[:limit]
