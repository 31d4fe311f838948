"""``GET /games/{id}/replay``: settings, mines and every change of a finished game, with
the cells each changed, as stored (the cells opened at the start too): no move is
played again to find them."""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from .. import engine, wire
from ..engine import grid, solver
from ..store import Record
from . import backends, daily, views
from .backends import Backends
from .problems import ApiError
from .requests import game_id_of, now_ms
from .responses import MsgspecResponse


class _Recorded(msgspec.Struct):
    """What a replay reads of a stored diff (diffs stored by older versions included)."""

    version: int
    status: wire.Status
    move: wire.PlayedMove
    cells: list[engine.ChangedCell]


_diffs = msgspec.json.Decoder(_Recorded)
# What a cell showed before the losing move, judged from what the loss made of it.
_BEFORE_LOSS = str.maketrans({"!": "F", "*": "#", "X": "#", **{str(n): "#" for n in range(9)}})


def board_before_loss(board: list[str], last: _Recorded) -> list[str]:
    rows = [list(row) for row in board]
    for x, y, chars in last.cells:
        rows[y][x : x + len(chars)] = chars.translate(_BEFORE_LOSS)
    return ["".join(row) for row in rows]


def _losing_move(diffs: list[_Recorded]) -> int | None:
    """Where the move that lost the game is: the last reveal or chord, or the one
    before the ``end`` that showed a race seat's mines; None when the match's end, not
    a move, lost it."""
    i = len(diffs) - 1
    if i > 0 and diffs[i].move.action == "end":
        i -= 1
    if i >= 0 and diffs[i].move.action in ("reveal", "chord") and diffs[i].status == "lost":
        return i
    return None


async def _public(b: Backends, record: Record) -> bool:
    """A game's replay is public once the game ended; a match's, once its match ended,
    even if its seat never finished. A race seat's ended game waits for the match, and a
    daily board's for its day's end: their mines are other players' still."""
    if record.daily is not None and not daily.over(record.daily, now_ms()):
        return False
    if record.match_id is None:
        return record.game.finished
    if record.game.finished and record.seat < 0:  # the co-op game ends its match
        return True
    _, state = await b.matches.load(record.match_id)
    return state.status == "finished"


async def replay(request: Request) -> Response:
    game_id = game_id_of(request)
    b = backends.of(request)
    record = await b.games.load(game_id)
    game = record.game
    if not await _public(b, record):
        what = "game" if record.match_id is None else "match"
        if record.daily is not None:
            what = f"daily board's day ({record.daily}, UTC)"
        raise ApiError(409, "game_in_progress", f"a replay is available once the {what} has ended")
    opened, stored = await b.games.history(game_id)
    diffs = [_diffs.decode(d) for d in stored]
    mines = grid.unpack(game.layout, game.width, game.height)
    layout = ["".join("*" if m else "." for m in row) for row in mines.tolist()]
    fatal = None
    losing = _losing_move(diffs) if game.status == "lost" else None
    if losing is not None:
        before = game.board()
        for later in reversed(diffs[losing:]):  # the mines a match's end showed, then the loss
            before = board_before_loss(before, later)
        last = diffs[losing]
        x, y = last.move.x or 0, last.move.y or 0
        fatal = wire.Fatal(x=x, y=y, forced_guess=not solver.safe_cell_existed(before, game.mines))
    return MsgspecResponse(
        wire.Replay(
            id=game_id,
            width=game.width,
            height=game.height,
            mines=game.mines,
            preset=game.preset,
            first_click=game.first_click,
            no_guess=game.no_guess,
            question_marks=game.question_marks,
            daily=record.daily,
            player_id=record.player_id,
            player=record.player,
            seed=game.seed,
            status="won" if game.status == "won" else "lost",
            layout=layout,
            opened=opened,
            moves=[
                wire.ReplayMove(
                    version=d.version, action=d.move.action, x=d.move.x, y=d.move.y,
                    at=d.move.at, cells=d.cells, mark=d.move.mark,
                )
                for d in diffs
            ],
            complete=not diffs or diffs[0].version == 1,
            created_at=wire.timestamp(game.created_at),
            started_at=wire.optional_timestamp(game.started_at),
            ended_at=wire.optional_timestamp(game.ended_at),
            elapsed_ms=game.elapsed_ms(game.ended_at or 0),
            stats=views.stats(game, game.ended_at or 0),
            fatal=fatal,
        )
    )
