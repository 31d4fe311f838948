"""The endgame: when few arrangements of the mines are left, try every line of play.

Each arrangement still possible is equally likely. Revealing a cell loses in the
arrangements with a mine there and splits the others by the number it would show;
the chance of winning from a set of arrangements is the best, over the cells, of the
chances of the parts it splits into, weighed by their size. One arrangement left is
a won game (every safe cell is then known). Sets of arrangements are bit masks, and
each set is worked out once. A cell that is certainly safe and splits the set is
taken at once without trying the others: what it shows can only help.

Openings are not followed (a revealed 0 opens its neighbours in the game, which can
only tell more), so the chance found is a lower bound when a 0 can show.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Sets of arrangements worked out before the search gives up.
MAX_NODES = 2000


class _OutOfBudget(Exception):
    pass


def best_cell(
    layouts: npt.NDArray[np.uint8], values: npt.NDArray[np.int16], preference: list[int]
) -> tuple[int, float] | None:
    """The column to reveal first and its chance of winning, or None past the budget.

    ``layouts[a, u]`` is 1 where arrangement ``a`` puts a mine on cell ``u``;
    ``values[a, u]`` is the number ``u`` shows in arrangement ``a``. Among equal
    chances the column first in ``preference`` wins; it also sets the order of the
    search, so put the likeliest best moves first.
    """
    n, cells = layouts.shape
    every = (1 << n) - 1
    bit = [1 << a for a in range(n)]
    safe_masks: list[int] = []
    splits: list[list[int]] = []
    for u in range(cells):
        safe_rows = np.flatnonzero(layouts[:, u] == 0).tolist()
        safe_masks.append(sum(bit[a] for a in safe_rows))
        groups: dict[int, int] = {}
        for a in safe_rows:
            v = int(values[a, u])
            groups[v] = groups.get(v, 0) | bit[a]
        splits.append(list(groups.values()))
    order = preference
    memo: dict[int, float] = {}
    nodes = 0

    def win(rows: int) -> float:
        nonlocal nodes
        size = rows.bit_count()
        if size == 1:
            return 1.0
        got = memo.get(rows)
        if got is not None:
            return got
        nodes += 1
        if nodes > MAX_NODES:
            raise _OutOfBudget
        for u in order:
            if rows & safe_masks[u] == rows:
                parts = [p for p in (rows & g for g in splits[u]) if p]
                if len(parts) > 1:
                    # A certain cell that tells something: taking it first loses
                    # nothing, as information never hurts, so no other line need be tried.
                    free = sum(p.bit_count() * win(p) for p in parts) / size
                    memo[rows] = free
                    return free
        best = 0.0
        for u in order:
            safe = rows & safe_masks[u]
            if not safe:
                continue
            bound = safe.bit_count() / size
            if bound <= best:
                continue
            parts = [p for p in (rows & g for g in splits[u]) if p]
            if len(parts) == 1 and parts[0] == rows:
                continue  # certainly safe and tells nothing: no step forward
            total = sum(p.bit_count() * win(p) for p in parts) / size
            if total > best:
                best = total
                if best >= 1.0:
                    break
        memo[rows] = best
        return best

    try:
        chosen: tuple[int, float] | None = None
        for u in order:
            safe = every & safe_masks[u]
            if not safe:
                continue
            if chosen is not None and safe.bit_count() / n <= chosen[1] + 1e-12:
                continue
            parts = [p for p in (every & g for g in splits[u]) if p]
            if len(parts) == 1 and parts[0] == every:
                continue
            total = sum(p.bit_count() * win(p) for p in parts) / n
            if chosen is None or total > chosen[1] + 1e-12:
                chosen = (u, total)
        return chosen
    except _OutOfBudget:
        return None
