"""The Minesweeper rules as pure functions over frozen snapshots.

Nothing here does I/O, reads a clock or touches global random state: the
caller passes the time (``now_ms``) and the seed.
"""

from . import grid
from .codec import decode, encode
from .errors import EngineError, GameOver, GamePaused, InvalidMove, InvalidSettings
from .game import FINISHED, Action, Clicks, Game, Mark, Status
from .moves import Cell, Move, apply, chord, flag, new_game, pause, resume, reveal
from .settings import DEFAULT_MAX_CELLS, PRESETS, FirstClick, PresetName, Settings, custom, preset


def preload() -> None:
    """Load everything a move may need, so that no request waits for an import."""
    from . import noguess  # noqa: F401

    grid.preload()


def bbbv_done(game: Game) -> int:
    """How much of the board's 3BV the player has cleared."""
    if not game.placed:
        return 0
    if game.status == "won":
        return game.bbbv
    return grid.bbbv_done(game.cells, grid.unpack(game.layout, game.width, game.height))


__all__ = [
    "DEFAULT_MAX_CELLS",
    "FINISHED",
    "PRESETS",
    "Action",
    "Cell",
    "Clicks",
    "EngineError",
    "FirstClick",
    "Game",
    "GameOver",
    "GamePaused",
    "InvalidMove",
    "InvalidSettings",
    "Mark",
    "Move",
    "PresetName",
    "Settings",
    "Status",
    "apply",
    "bbbv_done",
    "chord",
    "custom",
    "decode",
    "encode",
    "flag",
    "new_game",
    "pause",
    "preload",
    "preset",
    "resume",
    "reveal",
]
