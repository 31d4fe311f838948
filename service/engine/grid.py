"""Whole-board computations in NumPy: neighbour counts, openings, cascades, 3BV.

A cascade on a 1000x1000 board touches a million cells; doing it cell by cell
in Python takes seconds, so regions are found by connected-component labelling.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from scipy import ndimage

from .game import HIDDEN, ZERO

Bools = npt.NDArray[np.bool_]
Bytes = npt.NDArray[np.uint8]

# 8-connectivity: a zero opens its diagonal neighbours too.
_RING = np.ones((3, 3), dtype=bool)


def unpack(layout: bytes, width: int, height: int) -> Bools:
    bits = np.unpackbits(np.frombuffer(layout, dtype=np.uint8), count=width * height)
    return bits.astype(bool).reshape(height, width)


def pack(mines: Bools) -> bytes:
    return np.packbits(mines.ravel()).tobytes()


def counts(mines: Bools) -> Bytes:
    """Neighbouring mines of every cell."""
    p = np.pad(mines, 1).astype(np.uint8)
    return (
        p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:]
        + p[1:-1, :-2] + p[1:-1, 2:]
        + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]
    )


def dilate(mask: Bools) -> Bools:
    """The mask grown by one cell in all eight directions."""
    p = np.pad(mask, 1)
    out = p[1:-1, 1:-1].copy()
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            out |= p[dy : dy + mask.shape[0], dx : dx + mask.shape[1]]
    return out


def solution(mines: Bools) -> Bytes:
    """The character each safe cell shows once revealed (mine cells are meaningless)."""
    return counts(mines) + np.uint8(ZERO)


def open_from(cells: Bytes, mines: Bools, seeds: Iterable[int]) -> Bytes:
    """Open the safe hidden ``seeds`` and cascade from every zero among them.

    Only hidden, unmarked cells (``#``) open or carry the cascade; flags and
    question marks stop it. Returns the new cells; the input is not modified.
    """
    h, w = mines.shape
    view = cells.reshape(h, w)
    sol = solution(mines)
    hidden = view == HIDDEN
    seed_mask = np.zeros(h * w, dtype=bool)
    seed_mask[list(seeds)] = True
    seed_mask = seed_mask.reshape(h, w) & hidden & ~mines
    zero = hidden & (sol == ZERO) & ~mines
    opened = seed_mask.copy()
    zero_seeds = seed_mask & zero
    if zero_seeds.any():
        labels, _ = ndimage.label(zero, structure=_RING)
        region = np.isin(labels, np.unique(labels[zero_seeds]))
        opened |= dilate(region) & hidden
    return np.where(opened, sol, view).astype(np.uint8).ravel()


def bbbv(mines: Bools) -> int:
    """3BV: the fewest clicks that clear the board (openings + lone numbers)."""
    zero = (counts(mines) == 0) & ~mines
    _, openings = ndimage.label(zero, structure=_RING)
    covered = dilate(zero)
    return int(openings) + int(np.count_nonzero(~mines & ~covered))


def bbbv_done(cells: Bytes, mines: Bools) -> int:
    """The part of the 3BV already cleared: openings touched and lone numbers revealed."""
    h, w = mines.shape
    view = cells.reshape(h, w)
    revealed = (view >= ZERO) & (view <= ZERO + 8)
    zero = (counts(mines) == 0) & ~mines
    labels, _ = ndimage.label(zero, structure=_RING)
    done_openings = np.unique(labels[zero & revealed]).size
    lone = ~mines & ~dilate(zero)
    return int(done_openings) + int(np.count_nonzero(lone & revealed))


def changed(before: bytes, after: bytes, width: int) -> list[tuple[int, int, str]]:
    """``[x, y, char]`` of every cell whose character differs."""
    a = np.frombuffer(before, dtype=np.uint8)
    b = np.frombuffer(after, dtype=np.uint8)
    idx = np.flatnonzero(a != b)
    ys, xs = np.divmod(idx, width)
    chars = b[idx].tobytes().decode("ascii")
    return list(zip(xs.tolist(), ys.tolist(), chars, strict=True))
