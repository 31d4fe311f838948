"""Where the mines go: uniform over the allowed cells, from the game's seed."""

from __future__ import annotations

import numpy as np

from .grid import Bools
from .rng import SplitMix64
from .settings import FirstClick


def start_area(width: int, height: int, start: int, first_click: FirstClick) -> set[int]:
    """The cells kept free of mines for a first click at ``start``."""
    if first_click == "none":
        return set()
    if first_click == "safe":
        return {start}
    y, x = divmod(start, width)
    return {
        ny * width + nx
        for ny in range(max(0, y - 1), min(height, y + 2))
        for nx in range(max(0, x - 1), min(width, x + 2))
    }


def place(
    width: int,
    height: int,
    mines: int,
    seed: int,
    keep_free: frozenset[int] | set[int] = frozenset(),
) -> Bools:
    """``mines`` mines on the cells outside ``keep_free``: same arguments, same board."""
    cells = width * height
    rng = SplitMix64(seed)
    free = cells - len(keep_free)
    # Draw whichever side is smaller, mines or safe cells, so a draw is rarely rejected.
    dense = mines * 2 > free
    wanted = free - mines if dense else mines
    chosen: set[int] = set()
    while len(chosen) < wanted:
        i = rng.below(cells)
        if i not in keep_free:
            chosen.add(i)
    board = np.full(cells, dense, dtype=bool)
    board[list(keep_free)] = False
    board[list(chosen)] = not dense
    return board.reshape(height, width)
