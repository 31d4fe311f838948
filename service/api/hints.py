"""``POST /games/{id}/hint``: the next cell to play, worked out from the player's view only.

Hints are counted, and a hinted game no longer enters the leaderboards.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from .. import engine, wire
from ..engine import solver
from . import backends
from .games import MAX_ATTEMPTS, busy, heavy, load_authorised, off_loop
from .responses import MsgspecResponse


def advise(game: engine.Game) -> wire.Hint:
    if game.finished:
        raise engine.GameOver(f"the game is {game.status}")
    if game.paused:
        raise engine.GamePaused("the game is paused; resume it first")
    if not game.placed:
        # Mines are placed around the first click, so any cell is safe; the middle
        # opens the most.
        return wire.Hint(
            x=game.width // 2, y=game.height // 2, kind="safe", mine_probability=0.0,
            reason="the first click never hits a mine",
        )
    hint = solver.best_hint(game.board(), game.mines)
    if hint is None:
        raise engine.GameOver("no hidden cell is left to hint at")
    return wire.Hint(
        x=hint.x, y=hint.y, kind=hint.kind, mine_probability=hint.mine_probability,
        reason=hint.reason,
    )


async def hint(request: Request) -> Response:
    game_id, _, record = await load_authorised(request)
    games = backends.of(request).games
    for _attempt in range(MAX_ATTEMPTS):
        answer: wire.Hint = await off_loop(advise, record.game, heavy=heavy(record.game))
        clicks = record.game.clicks
        counted = msgspec.structs.replace(
            record.game, clicks=msgspec.structs.replace(clicks, hints=clicks.hints + 1)
        )
        if await games.note(game_id, record.rev, counted):
            return MsgspecResponse(answer)
        record = await games.load(game_id)
    raise busy()
