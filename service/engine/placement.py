"""Where the mines go: uniform over the allowed cells, from the game's seed."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
    """``mines`` mines on the cells outside ``keep_free``: same arguments, same board.

    The board is the one this loop builds, drawing whichever side is smaller
    (mines or safe cells) so a draw is rarely wasted::

        while len(chosen) < wanted:
            i = rng.below(cells)
            if i not in keep_free:
                chosen.add(i)

    It runs on blocks of draws in NumPy instead: a million-cell board would
    otherwise take a second of Python.
    """
    cells = width * height
    rng = SplitMix64(seed)
    free = cells - len(keep_free)
    dense = mines * 2 > free
    wanted = free - mines if dense else mines
    blocked = np.zeros(cells, dtype=bool)
    blocked[list(keep_free)] = True
    chosen = np.zeros(cells, dtype=bool)
    count = 0
    while count < wanted:
        # The loop needs at least one draw per missing cell; drawing about that
        # many wastes little, and repeated cells just cost a further, smaller round.
        draws = rng.below_many(cells, wanted - count + 64).astype(np.int64)
        draws = draws[~blocked[draws]]
        fresh = draws[_first_of_each(draws, cells) & ~chosen[draws]][: wanted - count]
        chosen[fresh] = True
        count += fresh.size
    board = chosen if not dense else ~chosen & ~blocked
    return board.reshape(height, width)


def _first_of_each(draws: npt.NDArray[np.int64], cells: int) -> npt.NDArray[np.bool_]:
    """Which draws are the earliest draw of their cell (the loop keeps only those)."""
    if draws.size * 16 < cells:
        # A few draws on a big board: sorting them beats a table over every cell.
        _, first = np.unique(draws, return_index=True)
        mask = np.zeros(draws.size, dtype=bool)
        mask[first] = True
        return mask
    order = np.arange(draws.size)
    earliest = np.full(cells, draws.size, dtype=np.int64)
    np.minimum.at(earliest, draws, order)
    is_first: npt.NDArray[np.bool_] = earliest[draws] == order
    return is_first
