"""Exceptions for ``application/problem+json`` answers, one class per stable ``code``.

Every error the service reports carries a :class:`~minesweeper.wire.Problem`. The SDK
raises the subclass of :class:`ApiError` that matches its ``code``, so callers
catch exactly what they can handle::

    try:
        client.reveal(game, 3, 4)
    except minesweeper.GameOver:
        ...

A code this version does not know still raises :class:`ApiError`.
"""

from __future__ import annotations

from typing import ClassVar

from .wire import Problem

__all__ = [
    "AlreadyPlaying",
    "AlreadySeated",
    "ApiError",
    "Forbidden",
    "GameInProgress",
    "GameOver",
    "InvalidRequest",
    "MatchFull",
    "MatchStarted",
    "NameTaken",
    "NotFound",
    "NotSeated",
    "NotStarted",
    "Paused",
    "RateLimited",
    "StoreUnavailable",
    "TooLarge",
    "Unauthorized",
    "VersionConflict",
    "error_for",
]


class ApiError(Exception):
    """The service answered with a problem; :attr:`problem` holds it as sent."""

    #: The problem ``code`` of the class: ``class GameOver(ApiError, code="game_over")``.
    code: ClassVar[str] = ""
    _by_code: ClassVar[dict[str, type[ApiError]]] = {}

    def __init_subclass__(cls, code: str = "", **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if code:
            cls.code = code
            ApiError._by_code[code] = cls

    def __init__(self, problem: Problem, retry_after: float | None = None) -> None:
        super().__init__(f"{problem.status} {problem.code}: {problem.detail}")
        self.problem = problem
        #: Seconds to wait before trying again, when the service said so.
        self.retry_after = retry_after

    @property
    def status(self) -> int:
        return self.problem.status

    @property
    def detail(self) -> str:
        return self.problem.detail


class InvalidRequest(ApiError, code="invalid_request"):
    """400/405/422: bad JSON, an unknown field, a cell off the board, an impossible board,
    a question mark on a game without them, an Idempotency-Key reused for another move,
    a method the path does not take."""


class Unauthorized(ApiError, code="unauthorized"):
    """401: a move without a bearer token (or, on a socket, before ``auth``), or no
    player's token where one is needed."""


class Forbidden(ApiError, code="forbidden"):
    """403: the token does not belong to this game (nor to its player)."""


class NotFound(ApiError, code="not_found"):
    """404: no such game (or it expired), or no such player."""


class NameTaken(ApiError, code="name_taken"):
    """409: another player has that name, ignoring case."""


class MatchFull(ApiError, code="match_full"):
    """409: every seat of the match is taken."""


class MatchStarted(ApiError, code="match_started"):
    """409: the match has started, so nobody joins it any more; or a match's game was
    asked for what only a game of one's own takes (a reset, a pause, a hint)."""


class AlreadySeated(ApiError, code="already_seated"):
    """409: the player already has a seat in the match."""


class AlreadyPlaying(ApiError, code="already_playing"):
    """409: the player still plays in another match (a seat not yet won, lost or resigned,
    in a match waiting, counting down or playing), or their seek paired into one:
    :attr:`match_id` names it, to go back to or leave. A player plays one match at a
    time."""

    @property
    def match_id(self) -> str | None:
        return self.problem.match_id


class NotStarted(ApiError, code="not_started"):
    """409: the match's countdown is not over (or it has too few seats to start)."""


class NotSeated(ApiError, code="not_seated"):
    """409: the player has no seat in the match."""


class GameOver(ApiError, code="game_over"):
    """409: the game is won or lost (or its match is over, or the mover resigned from
    it); no move changes it any more."""


class Paused(ApiError, code="paused"):
    """409: the game is paused; moves and hints wait until it is resumed."""


class GameInProgress(ApiError, code="game_in_progress"):
    """409: the game has not ended yet (a race seat's: its match), so there is no replay of it."""


class VersionConflict(ApiError, code="version_conflict"):
    """412: ``if_match`` named a version the game has moved past."""


class TooLarge(ApiError, code="too_large"):
    """413: the request body is over the service's limit."""


class RateLimited(ApiError, code="rate_limited"):
    """429: too many requests; see :attr:`retry_after`."""


class StoreUnavailable(ApiError, code="store_unavailable"):
    """503: the game store is unreachable or the game too busy; see :attr:`retry_after`."""


def error_for(problem: Problem, retry_after: float | None = None) -> ApiError:
    """The exception for ``problem``: the class of its code, else :class:`ApiError`."""
    kind = ApiError._by_code.get(problem.code, ApiError)
    return kind(problem, retry_after)
