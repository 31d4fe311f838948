"""What a game's end counts for: its player's stats and recent games, the leaderboards,
and, for a human's win no person could play, why it is held off the human boards.

The move service (``moves.py``) asks :func:`prepare` before committing a change that
ends a player's game, so the commit counts it (on a cluster, see ``store/players.py``
for the second step), and calls :func:`settle` once it is committed. A move that
does not end a game costs nothing here.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import msgspec

from .. import engine, store, wire
from ..store import Record
from ..store.players import encode_recent, encode_tally
from . import daily, held, ratings, views
from .backends import Backends

log = logging.getLogger(__name__)

# How many of the last moves the cadence is judged on.
CADENCE_MOVES = 200
_CELL_MOVES = frozenset({"reveal", "flag", "chord"})
_encode = wire.json_encoder.encode


class _Moved(msgspec.Struct):
    move: wire.PlayedMove


_moved = msgspec.json.Decoder(_Moved)


class Ending(NamedTuple):
    """What the commit that ends a player's game writes besides the game."""

    held: wire.Held | None
    tally: bytes


def ends(record: Record, game: engine.Game) -> bool:
    """Whether ``game`` (the change's result) ends the game ``record`` holds."""
    return game.finished and not record.game.finished


rankable = views.ranked


async def prepare(
    b: Backends, game_id: str, record: Record, game: engine.Game, now: int
) -> Ending | None:
    """For a change that ends a player's game: the tally for its stats and, for a
    human's rankable win, whether it is held. On a cluster the game is listed as
    pending with its player first, so a replica that dies after the commit loses nothing."""
    player_id = record.player_id
    if player_id is None:
        return None
    won = game.status == "won"
    verdict = None
    # A race seat's win too: a human account that plays like a program is held off
    # the human ratings as it is off the leaderboards (``matches.held_seats``).
    race_seat = record.match_id is not None and record.seat >= 0
    if won and not record.bot and (rankable(record, game) or race_seat):
        verdict = held.verdict(
            game.preset or "", game.bbbv, game.elapsed_ms(now),
            await _move_times(b, game_id, now),
        )
    stats = views.stats(game, now)
    rate = stats.bbbv_per_second
    board = f"{game.preset}:{'noguess' if game.no_guess else 'classic'}" if game.preset else ""
    recent = store.Recent(
        id=game_id, kind="game", preset=game.preset, no_guess=game.no_guess,
        daily=record.daily, won=won, elapsed_ms=game.elapsed_ms(now),
        bbbv_per_s_milli=round(rate * 1000) if rate else 0, assisted=stats.assisted,
        ended_at=game.ended_at or now,
    )
    tally = store.Tally(
        board=board,
        won=won,
        elapsed_ms=recent.elapsed_ms,
        bbbv_per_s_milli=recent.bbbv_per_s_milli if won else 0,
        best=won and verdict is None and rankable(record, game),
        # A public list naming a race seat's game would hand its board, and so every
        # seat's, to anybody while the others still play.
        recent=encode_recent(recent) if record.match_id is None else "",
    )
    if b.players.cluster:
        await b.players.mark_pending(player_id, game_id, now)
    return Ending(verdict, encode_tally(tally))


async def _move_times(b: Backends, game_id: str, now: int) -> list[int]:
    """The server times of the game's last moves on cells, the ending one (``now``,
    not stored yet) included."""
    diffs = await b.games.moves_before_end(game_id, CADENCE_MOVES)
    times = [
        wire.milliseconds(m.move.at) for m in map(_moved.decode, reversed(diffs))
        if m.move.action in _CELL_MOVES
    ]
    return [*times, now]


def commit_options(record: Record, ending: Ending) -> dict[str, Any]:
    """What :meth:`GameStore.commit <service.store.GameStore.commit>` takes to write ``ending``."""
    assert record.player_id is not None
    return {
        "held": _encode(ending.held) if ending.held else b"",
        "tally": (record.player_id, ending.tally),
    }


async def settle(
    b: Backends, game_id: str, record: Record, game: engine.Game, ending: Ending, now: int,
    *, tell: bool = True,
) -> None:
    """After the commit: count the game on a cluster, rank a win, and tell the player's
    socket (not ``tell``: a match's end, which tells them once it is all settled).
    Failures here leave the committed game as it is; a count left undone is made when
    the player is next read."""
    player_id = record.player_id
    if player_id is None:
        return
    try:
        if b.players.cluster:
            await b.players.count(player_id, game_id, ending.tally, now)
        if game.status == "won" and ending.held is None and rankable(record, game):
            await enter_leaderboard(b, game_id, record, game)
        if tell:
            await publish_player(b, player_id, now)
    except store.StoreUnavailable:
        log.warning("could not settle the end of game %s", game_id)


async def settle_again(b: Backends, game_id: str, record: Record) -> None:
    """For a retried move on a player's finished game: rank the win again, in case the
    first attempt's :func:`settle` did not get to it (entering a win twice changes
    nothing). Its stats were counted by the commit itself, or are on a cluster when the
    player is next read."""
    game = record.game
    if game.status == "won" and record.held is None and rankable(record, game):
        await enter_leaderboard(b, game_id, record, game)


async def enter_leaderboard(b: Backends, game_id: str, record: Record, game: engine.Game) -> None:
    """Rank a player's win on the humans' or the bots' board."""
    assert record.player_id is not None and game.preset is not None
    entry = store.Entry(
        game_id=game_id,
        player_id=record.player_id,
        player=record.player or "",
        elapsed_ms=game.elapsed_ms(game.ended_at or 0),
        ended_at=game.ended_at or 0,
        bbbv=game.bbbv,
    )
    board = store.board_name(game.preset, game.no_guess, record.daily, bot=record.bot)
    until = daily.kept_until(record.daily) if record.daily else None
    await b.leaderboards.record(board, entry, until)


async def publish_player(b: Backends, player_id: str, now: int) -> None:
    """Send the player's sockets, on every replica, the player as they are now."""
    player = await b.players.load(player_id, now)
    if player is not None:
        message = wire.PlayerSnapshot(await ratings.player_view(b, player))
        await b.players.publish(player_id, _encode(message))
