"""Whole-board computations in NumPy: neighbour counts, openings, cascades, 3BV.

A cascade on a 1000x1000 board touches a million cells; doing it cell by cell
in Python takes seconds, so regions are found by connected-component labelling.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .game import HIDDEN, ZERO

Bools = npt.NDArray[np.bool_]
Bytes = npt.NDArray[np.uint8]

# 8-connectivity: a zero opens its diagonal neighbours too.
_RING = np.ones((3, 3), dtype=bool)


def _label(mask: Bools) -> tuple[npt.NDArray[np.signedinteger[Any]], int]:
    """Connected regions of ``mask``, 8-connected. SciPy is imported on first use: it is
    most of the import time, and clients that only use the wire types never need it."""
    from scipy import ndimage

    labels, count = ndimage.label(mask, structure=_RING)
    return labels, int(count)


def preload() -> None:
    """Import SciPy now rather than in the middle of the first cascade: it takes a
    quarter of a second, which a server would otherwise spend inside a request."""
    from scipy import ndimage  # noqa: F401


def unpack(layout: bytes, width: int, height: int) -> Bools:
    bits = np.unpackbits(np.frombuffer(layout, dtype=np.uint8), count=width * height)
    return bits.astype(bool).reshape(height, width)


def pack(mines: Bools) -> bytes:
    return np.packbits(mines.ravel()).tobytes()


def counts(mines: Bools) -> Bytes:
    """Neighbouring mines of every cell."""
    # The 3x3 box sum is separable: sum each column's three rows, then three
    # columns of those, and take the cell itself away. Shifted slices avoid the
    # padded copies of the board that np.pad would make.
    m = mines.view(np.uint8)
    rows = m.copy()
    rows[1:] += m[:-1]
    rows[:-1] += m[1:]
    box = rows.copy()
    box[:, 1:] += rows[:, :-1]
    box[:, :-1] += rows[:, 1:]
    box -= m
    return box


def dilate(mask: Bools) -> Bools:
    """The mask grown by one cell in all eight directions."""
    rows = mask.copy()
    rows[1:] |= mask[:-1]
    rows[:-1] |= mask[1:]
    out = rows.copy()
    out[:, 1:] |= rows[:, :-1]
    out[:, :-1] |= rows[:, 1:]
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
        labels, count = _label(zero)
        # A lookup table over the labels is one pass; np.isin sorts the whole board.
        reached = np.zeros(count + 1, dtype=bool)
        reached[labels[zero_seeds]] = True
        reached[0] = False
        region = reached[labels]
        opened |= dilate(region) & hidden
    return np.where(opened, sol, view).astype(np.uint8).ravel()


def bbbv(mines: Bools) -> int:
    """3BV: the fewest clicks that clear the board (openings + lone numbers)."""
    zero = (counts(mines) == 0) & ~mines
    _, openings = _label(zero)
    covered = dilate(zero)
    return int(openings) + int(np.count_nonzero(~mines & ~covered))


def bbbv_done(cells: bytes, mines: Bools) -> int:
    """The part of the 3BV already cleared: openings touched and lone numbers revealed."""
    h, w = mines.shape
    view = np.frombuffer(cells, dtype=np.uint8).reshape(h, w)
    revealed = (view >= ZERO) & (view <= ZERO + 8)
    zero = (counts(mines) == 0) & ~mines
    labels, _ = _label(zero)
    done_openings = np.unique(labels[zero & revealed]).size
    lone = ~mines & ~dilate(zero)
    return int(done_openings) + int(np.count_nonzero(lone & revealed))


# A change of more cells than this is listed in runs (see :func:`changed`).
RUNS_FROM = 1024
# Unchanged cells a run carries rather than end: a new entry, ``[999,999,""],``, costs
# about as many bytes, so scattered changes (a lost game's mines) stay compact too.
BRIDGE = 12


def changed(before: bytes, after: bytes, width: int) -> list[tuple[int, int, str]]:
    """``[x, y, chars]`` of the cells whose character differs, in board order.

    ``chars`` is one cell's new character; past ``RUNS_FROM`` changed cells, it is a
    run: the characters of that cell and of the cells right after it in its row, up to
    the last changed one before a gap of more than ``BRIDGE`` unchanged cells (written
    as they are). Any change to a 1000x1000 board then stays near a megabyte of JSON:
    a whole-board cascade is one entry a row, rather than thirteen megabytes.
    """
    a = np.frombuffer(before, dtype=np.uint8)
    b = np.frombuffer(after, dtype=np.uint8)
    idx = np.flatnonzero(a != b)
    if idx.size == 0:
        return []
    if idx.size > RUNS_FROM:
        return _runs(idx, b, width)
    ys, xs = np.divmod(idx, width)
    chars = b[idx].tobytes().decode("ascii")
    return list(zip(xs.tolist(), ys.tolist(), chars, strict=True))


def _runs(idx: npt.NDArray[np.intp], after: Bytes, width: int) -> list[tuple[int, int, str]]:
    """The changed cells ``idx`` (ascending) as runs within a row, bridging short gaps."""
    # A run ends before a long gap, or where the next changed cell is on another row.
    rows = idx // width
    breaks = np.flatnonzero((np.diff(idx) > BRIDGE + 1) | (rows[1:] != rows[:-1])) + 1
    starts = idx[np.concatenate(([0], breaks))]
    ends = idx[np.concatenate((breaks - 1, [idx.size - 1]))] + 1
    text = after.tobytes()
    ys, xs = np.divmod(starts, width)
    return [
        (x, y, text[s:e].decode("ascii"))
        for x, y, s, e in zip(xs.tolist(), ys.tolist(), starts.tolist(), ends.tolist(),
                              strict=True)
    ]
