"""What a player sees: the wire view of a game, the diff of a change, its stats; and
the public view of a player.

The board of a view goes through :func:`visible_board`, so a paused game shows
nothing; a diff lists only the cells a move changed, and says whether the game is
paused, so a client hides its board while it is.
"""

from __future__ import annotations

import msgspec

from .. import engine, wire
from ..store import MatchState, PlayerRecord, Recent, Record
from ..wire import optional_timestamp, timestamp
from . import daily

_held = msgspec.json.Decoder(wire.Held)


def visible_board(game: engine.Game) -> list[str]:
    if game.paused and not game.finished:
        return ["#" * game.width] * game.height
    return game.board()


def stats(game: engine.Game, now: int) -> wire.Stats:
    c = game.clicks
    done = engine.bbbv_done(game)
    played = max(0, done - game.bbbv_given)  # a shared board's opened start is not the player's
    seconds = game.elapsed_ms(now) / 1000
    ended = game.finished
    return wire.Stats(
        clicks=wire.Clicks(
            reveal=c.reveal, flag=c.flag, chord=c.chord, total=c.total, useful=c.useful
        ),
        hints=c.hints,
        assisted=c.hints > 0,
        bbbv=game.bbbv if game.placed else None,
        bbbv_done=done,
        bbbv_per_second=round(played / seconds, 3) if ended and seconds > 0 else None,
        efficiency=round(played / c.total, 3) if ended and c.total else None,
        bbbv_given=game.bbbv_given,
    )


def game_view(
    game_id: str,
    game: engine.Game,
    now: int,
    *,
    player_id: str | None = None,
    player: str | None = None,
    daily: str | None = None,
    next_id: str | None = None,
    held: wire.Held | None = None,
    ranked: bool = False,
) -> wire.GameView:
    return wire.GameView(
        id=game_id,
        version=game.version,
        status=game.status,
        width=game.width,
        height=game.height,
        mines=game.mines,
        mines_left=game.mines_left,
        preset=game.preset,
        first_click=game.first_click,
        no_guess=game.no_guess,
        question_marks=game.question_marks,
        paused=game.paused,
        player_id=player_id,
        player=player,
        daily=daily,
        next_id=next_id,
        held=held,
        board=visible_board(game),
        created_at=timestamp(game.created_at),
        started_at=optional_timestamp(game.started_at),
        ended_at=optional_timestamp(game.ended_at),
        ended_by=game.ended_by,
        elapsed_ms=game.elapsed_ms(now),
        server_time=timestamp(now),
        stats=stats(game, now),
        ranked=ranked,
    )


def ranked(record: Record, game: engine.Game) -> bool:
    """A player's win that may enter a leaderboard: a preset, no hint, no chosen seed, not
    a second go at a daily board, and no pause once the clock ran (a paused clock is time
    to study a board its player has already seen)."""
    return (
        record.player_id is not None
        and game.preset is not None
        and not game.clicks.hints
        and game.paused_ms == 0
        and (game.paused_at is None or game.started_at is None)
        and record.ranked
    )


def record_game(record: Record, now: int) -> engine.Game:
    """The game as anybody may see it now: a daily board's loss shows only the mine hit
    until the day is over, every mine after."""
    if record.daily is not None and daily.over(record.daily, now):
        return engine.show_layout(record.game)
    return record.game


def record_view(game_id: str, record: Record, now: int) -> wire.GameView:
    return game_view(
        game_id, record_game(record, now), now,
        player_id=record.player_id, player=record.player, daily=record.daily,
        next_id=record.next_id, held=_held.decode(record.held) if record.held else None,
        ranked=ranked(record, record.game),
    )


def diff(
    game: engine.Game, move: wire.PlayedMove, cells: list[engine.ChangedCell], now: int
) -> wire.Diff:
    return wire.Diff(
        version=game.version,
        status=game.status,
        paused=game.paused,
        move=move,
        cells=cells,
        mines_left=game.mines_left,
        started_at=optional_timestamp(game.started_at),
        ended_at=optional_timestamp(game.ended_at),
        elapsed_ms=game.elapsed_ms(now),
        stats=stats(game, now) if game.finished else None,
    )


def played(
    action: wire.MoveAction,
    x: int | None,
    y: int | None,
    now: int,
    mark: engine.Mark | None = None,
) -> wire.PlayedMove:
    return wire.PlayedMove(action=action, x=x, y=y, at=timestamp(now), mark=mark)


def board_text(game_id: str, game: engine.Game, now: int) -> str:
    """The board for a terminal: the rows, then one line of state."""
    seconds = game.elapsed_ms(now) / 1000
    status = "paused" if game.paused and not game.finished else game.status
    state = (
        f"{status}  mines left {game.mines_left}  time {seconds:.1f}s  "
        f"version {game.version}  {game.width}x{game.height}  game {game_id}"
    )
    return "\n".join([*visible_board(game), "", state]) + "\n"


# ---- players -------------------------------------------------------------------------------


def player_view(
    player: PlayerRecord,
    ratings: dict[wire.RatingMode, wire.Rating] | None = None,
    *,
    today: str | None = None,
) -> wire.PlayerView:
    """The player as they see themselves, or, given ``today``, as anybody does: without
    their games of a daily board whose day is not over, as those games show its mines."""
    def board(preset: str, kind: str) -> wire.BoardStats:
        def count(name: str) -> int | None:
            return player.counters.get(f"{preset}:{kind}:{name}")

        rate = count("best_bps")
        return wire.BoardStats(
            played=count("played") or 0,
            won=count("won") or 0,
            best_ms=count("best_ms"),
            best_bbbv_per_s=rate / 1000 if rate else None,
            streak=count("streak") or 0,
            best_streak=count("best_streak") or 0,
        )

    def preset(name: str) -> wire.PresetStats:
        return wire.PresetStats(classic=board(name, "classic"), no_guess=board(name, "noguess"))

    return wire.PlayerView(
        id=player.id,
        name=player.name,
        bot=player.bot,
        created_at=timestamp(player.created_at),
        stats=wire.PlayerStats(
            beginner=preset("beginner"),
            intermediate=preset("intermediate"),
            expert=preset("expert"),
        ),
        ratings=ratings or {},
        recent=[
            recent_game(r) for r in player.recent
            if today is None or r.daily is None or r.daily < today
        ],
    )


def recent_game(r: Recent) -> wire.RecentGame:
    return wire.RecentGame(
        id=r.id,
        kind=r.kind,
        preset=r.preset,
        no_guess=r.no_guess,
        daily=r.daily,
        result="won" if r.won else "lost",
        elapsed_ms=r.elapsed_ms,
        bbbv_per_second=r.bbbv_per_s_milli / 1000 if r.bbbv_per_s_milli else None,
        assisted=r.assisted,
        ended_at=timestamp(r.ended_at),
    )


# ---- matches -------------------------------------------------------------------------------


def _rating(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def match_view(state: MatchState, now: int, viewer: str | None = None) -> wire.MatchView:
    """The match as ``viewer`` (a player's id, or None: anybody) may see it: a race's
    game ids only to each seat's own player until the end; co-op's to everyone."""
    public = state.mode == "coop" or state.status == "finished"
    status = state.status
    if status == "countdown" and state.starts_at is not None and now >= state.starts_at:
        status = "playing"
    seats = [
        wire.Seat(
            player=wire.SeatPlayer(id=s.player_id, name=s.name, rating=_rating(s.rating)),
            status=s.status,
            progress=wire.Progress(bbbv_done=s.bbbv_done, bbbv=s.bbbv),
            penalties=s.penalties,
            time_ms=s.time_ms,
            place=s.place,
            rating_before=_rating(s.rating_before),
            rating_after=_rating(s.rating_after),
            game_id=s.game_id if public or s.player_id == viewer else None,
        )
        for s in state.seats
    ]
    return wire.MatchView(
        id=state.id,
        mode=state.mode,
        status=status,
        version=state.version,
        width=state.width,
        height=state.height,
        mines=state.mines,
        preset=state.preset,
        no_guess=state.no_guess,
        rated=state.rated,
        on_mine=state.on_mine,
        time_limit_s=state.time_limit_s,
        created_at=timestamp(state.created_at),
        starts_at=optional_timestamp(state.starts_at),
        ends_at=optional_timestamp(state.ends_at),
        ended_at=optional_timestamp(state.ended_at),
        server_time=timestamp(now),
        seats=seats,
        capacity=state.capacity,
        rematch_id=state.rematch_id,
        rematch_of=state.rematch_of,
    )
