"""What a player sees: the wire view of a game, the diff of a change, its stats.

The board of a view goes through :func:`visible_board`, so a paused game shows
nothing; a diff lists only the cells a move changed, and says whether the game is
paused, so a client hides its board while it is.
"""

from __future__ import annotations

from .. import engine, wire
from ..store import Record
from ..wire import optional_timestamp, timestamp


def visible_board(game: engine.Game) -> list[str]:
    if game.paused and not game.finished:
        return ["#" * game.width] * game.height
    return game.board()


def stats(game: engine.Game, now: int) -> wire.Stats:
    c = game.clicks
    done = engine.bbbv_done(game)
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
        bbbv_per_second=round(done / seconds, 3) if ended and seconds > 0 else None,
        efficiency=round(done / c.total, 3) if ended and c.total else None,
    )


def game_view(
    game_id: str,
    game: engine.Game,
    now: int,
    *,
    player: str | None = None,
    daily: str | None = None,
    next_id: str | None = None,
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
        player=player,
        daily=daily,
        next_id=next_id,
        board=visible_board(game),
        created_at=timestamp(game.created_at),
        started_at=optional_timestamp(game.started_at),
        ended_at=optional_timestamp(game.ended_at),
        elapsed_ms=game.elapsed_ms(now),
        server_time=timestamp(now),
        stats=stats(game, now),
    )


def record_view(game_id: str, record: Record, now: int) -> wire.GameView:
    return game_view(
        game_id, record.game, now,
        player=record.player, daily=record.daily, next_id=record.next_id,
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
