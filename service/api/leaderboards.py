"""``GET /leaderboards/{preset}``: best times of registered players' won, unassisted
games, the humans' (or with ``bot=true`` the bots'), under each player's name now."""

from __future__ import annotations

import datetime
import re

from starlette.requests import Request
from starlette.responses import Response

from .. import engine, store, wire
from . import backends, daily
from .problems import ApiError
from .requests import now_ms, query_flag
from .responses import MsgspecResponse

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits: \d takes any script's


def _limit(raw: str | None) -> int:
    if raw is None:
        return 10
    # Thousands of digits are no limit, and too many for int() (a ValueError, not a 422).
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 6 or not 1 <= int(raw) <= 100:
        raise ApiError(422, "invalid_request", "limit is a whole number from 1 to 100")
    return int(raw)


def _date(raw: str | None) -> str | None:
    """A day of the calendar, as YYYY-MM-DD: a day that never was has no board to show."""
    if raw is None:
        return None
    try:
        if _DATE.fullmatch(raw):
            datetime.date.fromisoformat(raw)
            return raw
    except ValueError:
        pass
    raise ApiError(422, "invalid_request", "date is a day of the calendar, as YYYY-MM-DD")


async def leaderboard(request: Request) -> Response:
    preset = request.path_params["preset"]
    if preset not in engine.PRESETS:
        raise ApiError(404, "not_found", f"no leaderboard for {preset!r}")
    no_guess = query_flag(request, "no_guess")
    bot = query_flag(request, "bot")
    limit = _limit(request.query_params.get("limit"))
    date = _date(request.query_params.get("date"))
    board = store.board_name(preset, no_guess, date, bot=bot)
    b = backends.of(request)
    now = now_ms()
    entries = await b.leaderboards.top(board, limit)
    names = await b.players.names_of(list({e.player_id for e in entries}))
    return MsgspecResponse(
        wire.Leaderboard(
            preset=preset,
            no_guess=no_guess,
            bot=bot,
            date=date,
            entries=[
                wire.LeaderboardEntry(
                    # Equal times share a place (1, 2, 2, 4).
                    rank=1 + sum(other.elapsed_ms < e.elapsed_ms for other in entries),
                    player_id=e.player_id,
                    player=names.get(e.player_id, e.player),
                    elapsed_ms=e.elapsed_ms,
                    bbbv=e.bbbv,
                    bbbv_per_second=round(e.bbbv / max(e.elapsed_ms, 1) * 1000, 3),
                    # Its board's mines are the players' still to find until the day ends.
                    game_id=None if date and not daily.over(date, now) else e.game_id,
                    ended_at=wire.timestamp(e.ended_at),
                )
                for e in entries
            ],
        )
    )
