"""Every mine arrangement of one frontier component, as a 0/1 matrix (one row each).

The solver's counting (``solver.count_component``) only needs how many arrangements
there are; choosing between guesses needs the arrangements themselves, to ask what a
revealed number would rule out. They are built fact by fact in NumPy: each step adds
the fact's new cells in every combination to every partial row and keeps the rows
that can still satisfy the facts touching those cells. Facts are taken in an order
that follows the frontier, so most facts are closed (all their cells placed) soon
after they are opened and the partial rows stay few.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.uint8]
Fact = tuple[frozenset[int], int]

# Partial rows allowed while building; a component past this is left to the counting.
MAX_ROWS = 30_000
_CACHE_LIMIT = 4096

_cache: dict[frozenset[Fact], tuple[tuple[int, ...], Matrix] | None] = {}


def _combos(m: int) -> Matrix:
    """Every 0/1 pattern of ``m`` cells, one per row."""
    idx = np.arange(1 << m, dtype=np.uint32)
    bits = (idx[:, None] >> np.arange(m, dtype=np.uint32)) & 1
    return bits.astype(np.uint8)


_COMBOS = [_combos(m) for m in range(9)]


def _order(facts: Sequence[Fact]) -> list[Fact]:
    """Facts in frontier order: next the one sharing most cells with what is placed."""
    rest = sorted(facts, key=lambda f: (min(f[0]), len(f[0]), f[1]))
    placed: set[int] = set()
    out: list[Fact] = []
    while rest:
        best = 0
        best_key: tuple[int, int] | None = None
        for n, (vs, _) in enumerate(rest):
            new = len(vs - placed)
            key = (new - len(vs) if placed else 0, new)
            if best_key is None or key < best_key:
                best, best_key = n, key
        fact = rest.pop(best)
        placed |= fact[0]
        out.append(fact)
    return out


def enumerate_facts(facts: Sequence[Fact]) -> tuple[tuple[int, ...], Matrix] | None:
    """The component's cells and its arrangements over them, or None past ``MAX_ROWS``.

    Cached by the set of facts: between two guesses most components do not change.
    """
    key = frozenset(facts)
    if key in _cache:
        return _cache[key]
    got = _build(list(key))
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[key] = got
    return got


def _build(facts: list[Fact]) -> tuple[tuple[int, ...], Matrix] | None:
    ordered = _order(facts)
    col: dict[int, int] = {}
    rows: Matrix = np.zeros((1, 0), dtype=np.uint8)
    by_cell: dict[int, list[int]] = {}
    for n, (vs, _) in enumerate(ordered):
        for c in vs:
            by_cell.setdefault(c, []).append(n)
    for vs, _ in ordered:
        new = sorted(c for c in vs if c not in col)
        if not new:
            continue
        m = len(new)
        if m > 8:
            return None  # not a neighbourhood: cannot happen on a board
        if rows.shape[0] << m > MAX_ROWS * 4:
            return None
        combos = _COMBOS[m]
        rows = np.hstack(
            (np.repeat(rows, combos.shape[0], axis=0), np.tile(combos, (rows.shape[0], 1)))
        )
        for c in new:
            col[c] = len(col)
        touched = sorted({n for c in new for n in by_cell[c]})
        keep = np.ones(rows.shape[0], dtype=bool)
        for n in touched:
            fvs, k = ordered[n]
            cols = [col[c] for c in fvs if c in col]
            got = rows[:, cols].sum(axis=1, dtype=np.int16)
            open_cells = len(fvs) - len(cols)
            if open_cells:
                keep &= (got <= k) & (got + open_cells >= k)
            else:
                keep &= got == k
        rows = rows[keep]
        if rows.shape[0] > MAX_ROWS:
            return None
    cells = tuple(sorted(col))
    order = [col[c] for c in cells]
    return cells, np.ascontiguousarray(rows[:, order])
