"""The board a request asks for: a preset, a daily board's preset, or a custom size."""

from __future__ import annotations

import secrets

from .. import engine, wire
from .problems import ApiError

# A seed the service draws is below 2**53: a replay's seed then survives any JSON reader
# (JavaScript's numbers are exact only that far) and goes back into ``POST /games``.
SEED_LIMIT = 2**53


def random_seed() -> int:
    """A new board's seed, when nobody chose one: 0 to 2**53 - 1."""
    return secrets.randbelow(SEED_LIMIT)


def settings_of(body: wire.NewGame, max_cells: int) -> engine.Settings:
    sizes = (body.width, body.height, body.mines)
    named = body.daily_preset or body.preset
    if body.daily_preset and body.preset:
        raise ApiError(422, "invalid_request", "give a preset or a daily board, not both")
    if body.daily_preset and (body.seed is not None or body.first_click != "zero"):
        raise ApiError(422, "invalid_request", "a daily board sets its own seed and start")
    if named is not None:
        if any(v is not None for v in sizes):
            raise ApiError(
                422, "invalid_request", "give a preset or width/height/mines, not both"
            )
        return engine.preset(named)
    if all(v is None for v in sizes):
        return engine.preset("beginner")
    if body.width is None or body.height is None or body.mines is None:
        raise ApiError(422, "invalid_request", "a custom board needs width, height and mines")
    return engine.custom(body.width, body.height, body.mines, max_cells=max_cells)
