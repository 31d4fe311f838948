"""Hints: the next cell to play, worked out from the player's view only, and the
count of hints a game was given (a hinted game is no longer ranked)."""

from __future__ import annotations

import msgspec

from . import solver
from .errors import GameOver
from .game import ChangedCell, Game
from .moves import check_playable
from .solver import Hint


def advise(game: Game) -> Hint:
    """The cell to play next; the game must be playable and have a hidden cell left."""
    check_playable(game)
    if not game.placed:
        # Mines are placed around the first click, so any cell is safe; the middle
        # opens the most.
        return Hint(
            x=game.width // 2, y=game.height // 2, kind="safe", mine_probability=0.0,
            reason="the first click never hits a mine",
        )
    hint = solver.best_hint(game.board(), game.mines)
    if hint is None:
        raise GameOver("no hidden cell is left to hint at")
    return hint


def count_hint(game: Game, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """A hint was given: count it. The board does not change, nor does the version."""
    check_playable(game)
    clicks = msgspec.structs.replace(game.clicks, hints=game.clicks.hints + 1)
    return msgspec.structs.replace(game, clicks=clicks), []
