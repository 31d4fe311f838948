"""Pausing and resuming: the clock stops and the board is hidden from every view.

Shaped like the moves, ``(game, now_ms) -> (game', cells)``; ``cells`` is always
empty, because a view hides a paused board as a whole rather than cell by cell.
The version moves on exactly when the paused state changes.
"""

from __future__ import annotations

import msgspec

from .errors import GameOver
from .game import ChangedCell, Game


def pause(game: Game, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """Stop the clock and hide the board; pausing a paused game changes nothing."""
    _check_not_over(game)
    if game.paused_at is not None:
        return game, []
    return msgspec.structs.replace(game, version=game.version + 1, paused_at=now_ms), []


def resume(game: Game, now_ms: int) -> tuple[Game, list[ChangedCell]]:
    """Start the clock again; resuming a game that is not paused changes nothing."""
    _check_not_over(game)
    if game.paused_at is None:
        return game, []
    held = now_ms - game.paused_at if game.started_at is not None else 0
    changed = msgspec.structs.replace(
        game, version=game.version + 1, paused_at=None, paused_ms=game.paused_ms + held
    )
    return changed, []


def _check_not_over(game: Game) -> None:
    if game.finished:
        raise GameOver(f"the game is {game.status}")
