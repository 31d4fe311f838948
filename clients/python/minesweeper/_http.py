"""What the sync and async clients share: request bodies, headers and answers."""

from __future__ import annotations

from datetime import date as Date
from http import HTTPStatus
from typing import TypeVar

import httpx
import msgspec

from .errors import ApiError, error_for
from .game import Game
from .wire import Action, Cell, FlagCell, Mark, NewGame, NewPlayer, Problem, code_of_status

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "minesweeper-python"

_encoder = msgspec.json.Encoder()
_problem = msgspec.json.Decoder(Problem)


def new_game_body(**options: object) -> bytes:
    """A :class:`~minesweeper.wire.NewGame` body with only the options that differ from the
    defaults, so a client stays compatible with services that know fewer options."""
    defaults = msgspec.structs.asdict(NewGame())
    return _encoder.encode({k: v for k, v in options.items() if v != defaults.get(k)})


def new_player_body(name: str | None, bot: bool) -> bytes:
    """A :class:`~minesweeper.wire.NewPlayer` body: a guest's has no name."""
    return _encoder.encode(NewPlayer(name=name, bot=bot))


def encode(value: object) -> bytes:
    return _encoder.encode(value)


def leaderboard_params(
    no_guess: bool, date: Date | str | None, limit: int, bot: bool = False
) -> dict[str, str]:
    """The query of ``GET /leaderboards/{preset}``; a date picks that day's daily board."""
    params = {"limit": str(limit)}
    if no_guess:
        params["no_guess"] = "true"
    if bot:
        params["bot"] = "true"
    if date is not None:
        params["date"] = date.isoformat() if isinstance(date, Date) else date
    return params


def move_body(action: Action, x: int, y: int, mark: Mark | None) -> bytes:
    if action == "flag":
        return _encoder.encode(FlagCell(x, y, mark))
    return _encoder.encode(Cell(x, y))


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def move_headers(
    token: str | None, if_match: int | None, idempotency_key: str | None
) -> dict[str, str]:
    headers = {"Content-Type": "application/json", **auth(token)}
    if if_match is not None:
        headers["If-Match"] = f'"{if_match}"'
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return headers


def game_id(game: Game | str) -> str:
    return game if isinstance(game, str) else game.id


def token_of(game: Game | str, token: str | None) -> str | None:
    if token is not None or isinstance(game, str):
        return token
    return game.token


def problem_of(response: httpx.Response) -> ApiError:
    retry_after = _seconds(response.headers.get("retry-after"))
    content_type = response.headers.get("content-type", "")
    if "json" in content_type:
        try:
            return error_for(_problem.decode(response.content), retry_after)
        except msgspec.DecodeError:
            pass
    status = response.status_code
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    code = code_of_status(status) or "http_error"
    detail = response.text[:200].strip() or phrase
    return error_for(Problem(title=phrase, status=status, code=code, detail=detail), retry_after)


def check(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        raise problem_of(response)
    return response


def decode(response: httpx.Response, kind: type[T]) -> T:
    check(response)
    decoded: T = msgspec.json.decode(response.content, type=kind)
    return decoded


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None

