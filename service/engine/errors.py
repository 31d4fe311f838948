"""Precise exceptions for everything a move or a setting can get wrong.

Each carries the stable problem ``code`` the API answers with, so the API maps
exceptions to responses without knowing any rule.
"""


class EngineError(Exception):
    code = "invalid_request"


class InvalidSettings(EngineError, ValueError):
    """The requested board cannot be built (size, mine count, options)."""


class InvalidMove(EngineError, ValueError):
    """The move names a cell off the board or a mark the game does not allow."""


class GameOver(EngineError):
    """The game has ended; no move changes it any more."""

    code = "game_over"


class GamePaused(EngineError):
    """The game is paused; moves wait until it is resumed."""

    code = "paused"
