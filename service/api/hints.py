"""``POST /games/{id}/hint``: the next cell to play, worked out from the player's view only.

Hints are counted, and a hinted game no longer enters the leaderboards.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from .. import engine, wire
from . import backends
from .games import MAX_ATTEMPTS, busy, heavy, load_authorised, off_loop
from .responses import MsgspecResponse


def advise(game: engine.Game) -> wire.Hint:
    return wire.Hint(**msgspec.structs.asdict(engine.advise(game)))


async def hint(request: Request) -> Response:
    game_id, _, record = await load_authorised(request)
    games = backends.of(request).games
    for _attempt in range(MAX_ATTEMPTS):
        answer: wire.Hint = await off_loop(advise, record.game, heavy=heavy(record.game))
        counted, _ = engine.count_hint(record.game, 0)
        if await games.note(game_id, record.rev, counted):
            return MsgspecResponse(answer)
        record = await games.load(game_id)
    raise busy()
