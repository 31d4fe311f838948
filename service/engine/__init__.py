"""The Minesweeper rules as pure functions over frozen snapshots: every change to a game
(the moves, pause and resume, a hint's count, a shared board's start, a match's end) is
one of them, shaped ``(game, ..., now_ms) -> (game', cells)``.

Nothing here does I/O, reads a clock or touches global random state: the
caller passes the time (``now_ms``) and the seed.
"""

from . import grid
from .codec import decode, encode
from .errors import EngineError, GameOver, GamePaused, InvalidMove, InvalidSettings
from .game import FINISHED, PENALTY_MS, Action, ChangedCell, Clicks, Game, Mark, OnMine, Status
from .hints import advise, count_hint
from .moves import (
    Move,
    apply,
    check_playable,
    chord,
    end,
    flag,
    new_game,
    open_start,
    reveal,
    show_layout,
)
from .pause import pause, resume
from .settings import DEFAULT_MAX_CELLS, PRESETS, FirstClick, PresetName, Settings, custom, preset


def preload() -> None:
    """Load everything a move may need, so that no request waits for an import."""
    from . import noguess  # noqa: F401

    grid.preload()


def bbbv_done(game: Game) -> int:
    """How much of the board's 3BV the player has cleared."""
    if game.bbbv_done is not None:
        return game.bbbv_done
    if not game.placed:
        return 0
    if game.status == "won":
        return game.bbbv
    return grid.bbbv_done(game.cells, grid.unpack(game.layout, game.width, game.height))


__all__ = [
    "DEFAULT_MAX_CELLS",
    "FINISHED",
    "PENALTY_MS",
    "PRESETS",
    "Action",
    "ChangedCell",
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
    "OnMine",
    "PresetName",
    "Settings",
    "Status",
    "advise",
    "apply",
    "bbbv_done",
    "check_playable",
    "chord",
    "count_hint",
    "custom",
    "decode",
    "encode",
    "end",
    "flag",
    "new_game",
    "open_start",
    "pause",
    "preload",
    "preset",
    "resume",
    "reveal",
    "show_layout",
]
