"""``GET /leaderboards/{preset}``: best times of won, unassisted games."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response

from .. import engine, store, wire
from . import backends
from .problems import ApiError
from .responses import MsgspecResponse

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits: \d takes any script's


def _flag(raw: str | None) -> bool:
    if raw in (None, "false", "0"):
        return False
    if raw in ("true", "1"):
        return True
    raise ApiError(422, "invalid_request", "no_guess is true or false")


def _limit(raw: str | None) -> int:
    if raw is None:
        return 10
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= 100:
        raise ApiError(422, "invalid_request", "limit is a whole number from 1 to 100")
    return int(raw)


async def leaderboard(request: Request) -> Response:
    preset = request.path_params["preset"]
    if preset not in engine.PRESETS:
        raise ApiError(404, "not_found", f"no leaderboard for {preset!r}")
    no_guess = _flag(request.query_params.get("no_guess"))
    limit = _limit(request.query_params.get("limit"))
    date = request.query_params.get("date")
    if date is not None and not _DATE.fullmatch(date):
        raise ApiError(422, "invalid_request", "date is YYYY-MM-DD")
    board = store.board_name(preset, no_guess, date)
    entries = await backends.of(request).leaderboards.top(board, limit)
    return MsgspecResponse(
        wire.Leaderboard(
            preset=preset,
            no_guess=no_guess,
            date=date,
            entries=[
                wire.LeaderboardEntry(
                    rank=rank,
                    player=e.player,
                    elapsed_ms=e.elapsed_ms,
                    bbbv=e.bbbv,
                    bbbv_per_second=round(e.bbbv / max(e.elapsed_ms, 1) * 1000, 3),
                    game_id=e.game_id,
                    ended_at=wire.timestamp(e.ended_at),
                )
                for rank, e in enumerate(entries, start=1)
            ],
        )
    )
