"""Which cell to guess when no cell is certain, and why.

Every arrangement of the mines that fits the view is equally likely. The frontier
(hidden cells next to numbers) splits into independent components whose
arrangements are listed exactly (:mod:`arrangements`); the hidden cells away from
every number, the interior, take the remaining mines in C(interior, left) ways, which
weighs each component's arrangements by its mine count. That gives each cell's exact
chance of a mine.

The safest cell is not always the best guess. In order:

1. *A forced guess first*: a component that no other cell can ever shed light on
   (its cells touch no other hidden cell, every cell in it would show the same
   number whatever the arrangement, and every arrangement has the same number of
   mines, like two cells sharing one mine behind a wall of numbers) has to be
   guessed some day; guessing it now costs nothing and may spare a later guess.
2. *The endgame*: with few arrangements left, every line of play is tried
   (:mod:`endgame`) and the cell with the best chance of winning is taken.
3. *A 50/50 or safe*: a cell that, whenever it holds a mine, forms with a
   neighbour a pair (or a 2x2 block) no other cell can ever tell apart. Its guess
   would come some day in those arrangements, so it costs nothing more now.
4. *Otherwise*, among the cells nearly as safe as the safest, each is weighed by
   its chance to be safe times, over the numbers it could show, the chance that the
   move after it is safe too: 1 when the number makes some cell certain (the next
   move is free), else the safest cell's chance afterwards. A *dead* cell, whose
   number is already known and so would tell nothing, is only played when every
   candidate is dead; a cell is passed over for a safer one that is safe whenever
   it is.

The look-ahead reasons about the guessed cell's own component(s) and its interior
neighbours exactly, and takes the rest of the board (other components, the interior
density) as it stands: the one approximation, used only to rank candidates that are
nearly as safe.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from . import arrangements, endgame
from .grid import counts, dilate
from .solver import MINE, UNKNOWN, geometry

GuessKind = Literal["forced", "fifty", "endgame", "ahead"]

# Candidates must be at least this share as safe as the safest cell; interior cells,
# which tell little about the frontier, a larger share.
BAND = 0.9
INTERIOR_BAND = 0.95
# Weight of the chance of a certain next move over the two-step survival.
PROGRESS = 0.2
# Candidates looked ahead from, at most.
MAX_CANDIDATES = 14
# Arrangements of the whole board below which the endgame is searched exhaustively.
ENDGAME_LAYOUTS = 120
ENDGAME_CELLS = 60
# Past this many frontier components (a big board), weighing each against all the
# others costs more than a hint may take: the caller's safest-cell choice is used.
MAX_COMPONENTS = 80

Floats = npt.NDArray[np.float64]


class Guess(NamedTuple):
    cell: int
    mine: float  # the chance of a mine on the cell
    kind: GuessKind
    safest: float  # the lowest chance of a mine on the board
    progress: float  # when safe, the chance that its number makes a cell certain
    win: float  # the endgame's chance of winning from here (0 outside the endgame)
    size: int  # the cells of the forced component, or of the 50/50 pattern


class _Comp(NamedTuple):
    cells: tuple[int, ...]
    rows: npt.NDArray[np.uint8]  # arrangements x cells
    ks: npt.NDArray[np.int64]  # mines in each arrangement
    counts: Floats  # arrangements by mine count


def _log_comb(n: int, ks: npt.NDArray[np.int64]) -> Floats:
    """log C(n, k) for each k; -inf where k is out of range."""
    top = math.lgamma(n + 1)
    return np.array(
        [top - math.lgamma(k + 1) - math.lgamma(n - k + 1) if 0 <= k <= n else -math.inf
         for k in ks.tolist()],
        dtype=np.float64,
    )


class _Board:
    """The view's components with their arrangements, weighed against the interior."""

    def __init__(
        self, view: npt.NDArray[np.uint8], state: bytes | bytearray, mines: int
    ) -> None:
        h, w = view.shape
        self.w = w
        self.geo = geo = geometry(w, h)
        flat = view.ravel()
        st = np.frombuffer(bytes(state), dtype=np.uint8)
        self.state = st
        unknown = st == UNKNOWN
        known_mines = int(np.count_nonzero(st == MINE))
        self.left = mines - known_mines
        revealed = (flat >= ord("0")) & (flat <= ord("8"))
        near_unknown = counts(unknown.reshape(h, w)).ravel() > 0
        mine_near = counts((st == MINE).reshape(h, w)).ravel()
        facts: dict[frozenset[int], int] = {}
        for i in np.flatnonzero(revealed & near_unknown).tolist():
            cells = frozenset(j for j in geo.around(i) if st[j] == UNKNOWN)
            facts[cells] = int(flat[i]) - ord("0") - int(mine_near[i])
        from .solver import _split

        self.h = h
        self.log_total: float | None = None
        self.comps: list[_Comp] = []
        self.comp_of: dict[int, int] = {}
        self.ok = True
        parts = _split(list(facts.items()))
        if len(parts) > MAX_COMPONENTS:
            self.ok = False
            return
        for part in parts:
            got = arrangements.enumerate_facts(part)
            if got is None:
                self.ok = False
                return
            comp_cells, rows = got
            ks = rows.sum(axis=1, dtype=np.int64)
            for c in comp_cells:
                self.comp_of[c] = len(self.comps)
            self.comps.append(_Comp(comp_cells, rows, ks, np.bincount(ks).astype(np.float64)))
        self.unknown = np.flatnonzero(unknown).tolist()
        self.interior = [c for c in self.unknown if c not in self.comp_of]
        self.n_interior = len(self.interior)
        span = sum(len(c.counts) - 1 for c in self.comps) + 1
        log_in = _log_comb(self.n_interior, self.left - np.arange(span, dtype=np.int64))
        top = float(log_in.max())
        in_w = np.exp(log_in - top) if np.isfinite(top) else np.zeros(span)
        self.in_w: Floats = np.where(in_w > 1e-150, in_w, 0.0)

    def rest(self, excluded: set[int]) -> tuple[Floats, Floats]:
        """For the excluded components holding k mines between them: the weight of
        everything else, and the interior's expected density."""
        others: Floats = np.ones(1)
        kmax = 0
        for n, c in enumerate(self.comps):
            if n in excluded:
                kmax += len(c.counts) - 1
            else:
                others = np.convolve(others, c.counts)
                others /= others.max()
        in_w = self.in_w
        g = np.correlate(in_w[: kmax + len(others)], others, mode="valid")[: kmax + 1]
        if self.n_interior:
            share = (self.left - np.arange(len(in_w))) / self.n_interior
            dens = np.correlate((in_w * share)[: kmax + len(others)], others, mode="valid")
            rho = np.divide(dens[: kmax + 1], g, out=np.zeros(kmax + 1), where=g > 0)
        else:
            rho = np.zeros(kmax + 1)
        # Weights below this share of the largest change no choice, and left in they
        # would sink into subnormal floats, which make the arithmetic 100 times slower.
        top = float(g.max()) if g.size else 0.0
        g = np.where(g > top * 1e-150, g / top if top > 0 else g, 0.0)
        return g, np.clip(rho, 0.0, 1.0)

    def _log_weight(self, counts: list[Floats], n_interior: int, left: int) -> float:
        """log of the number of arrangements with these components' counts by mines."""
        poly: Floats = np.ones(1)
        scale = 0.0
        for cnt in counts:
            poly = np.convolve(poly, cnt)
            top = float(poly.max())
            if top <= 0:
                return -math.inf
            poly /= top
            scale += math.log(top)
        log_in = _log_comb(n_interior, left - np.arange(len(poly), dtype=np.int64))
        top = float(log_in.max())
        if not math.isfinite(top):
            return -math.inf
        total = float(poly @ np.exp(log_in - top))
        return scale + top + math.log(total) if total > 0 else -math.inf

    def share(self, mines: list[int], safes: list[int]) -> float:
        """The share of the arrangements with a mine on each of ``mines`` and none
        on any of ``safes`` (all of them undecided cells)."""
        if self.log_total is None:
            self.log_total = self._log_weight(
                [c.counts for c in self.comps], self.n_interior, self.left
            )
        keep: dict[int, npt.NDArray[np.bool_]] = {}
        in_mines = in_safes = 0
        for cells, value in ((mines, 1), (safes, 0)):
            for x in cells:
                n = self.comp_of.get(x)
                if n is None:
                    in_mines += value
                    in_safes += 1 - value
                    continue
                comp = self.comps[n]
                col = comp.cells.index(x)
                ok = comp.rows[:, col] == value
                keep[n] = keep[n] & ok if n in keep else ok
        counts = [
            np.bincount(c.ks[keep[n]], minlength=len(c.counts)).astype(np.float64)
            if n in keep else c.counts
            for n, c in enumerate(self.comps)
        ]
        got = self._log_weight(
            counts, self.n_interior - in_mines - in_safes, self.left - in_mines
        )
        return math.exp(got - self.log_total) if math.isfinite(got) else 0.0

    def layout_count(self) -> int:
        """How many arrangements of the whole board fit the view (exactly)."""
        poly = [1]
        for c in self.comps:
            cp = [round(x) for x in c.counts]
            out = [0] * (len(poly) + len(cp) - 1)
            for i, a in enumerate(poly):
                if a:
                    for j, b in enumerate(cp):
                        out[i + j] += a * b
            poly = out
        return sum(
            n * math.comb(self.n_interior, self.left - k)
            for k, n in enumerate(poly)
            if 0 <= self.left - k <= self.n_interior
        )


def choose(view: npt.NDArray[np.uint8], state: bytes | bytearray, mines: int) -> Guess | None:
    """The guess for a view on which nothing is certain.

    ``state`` marks the cells already known (``solver.SAFE``, ``solver.MINE``) as a
    stuck analysis left them. None when a component has too many arrangements to
    list: the caller then takes the safest cell by the counting's odds.
    """
    b = _Board(view, state, mines)
    if not b.ok or not b.unknown:
        return None
    weights: list[Floats] = []
    odds: dict[int, float] = {}
    for n, c in enumerate(b.comps):
        g, _ = b.rest({n})
        w = g[c.ks]
        weights.append(w)
        total = float(w.sum())
        p = (w @ c.rows) / total if total > 0 else np.zeros(len(c.cells))
        for cell, pc in zip(c.cells, p.tolist(), strict=True):
            odds[cell] = pc
    p_in = 0.0
    if b.n_interior:
        _, rho = b.rest(set())
        p_in = float(rho[0])
        for cell in b.interior:
            odds[cell] = p_in
    safest = min(odds.values())
    forced = _forced(b, odds)
    if forced is not None:
        cell, size = forced
        return Guess(cell, odds[cell], "forced", safest, 0.0, 0.0, size)
    if len(b.unknown) <= ENDGAME_CELLS and b.layout_count() <= ENDGAME_LAYOUTS:
        got = _endgame(b, odds)
        if got is not None:
            cell, win = got
            return Guess(cell, odds[cell], "endgame", safest, 0.0, win, 0)
    fifty = _fifty_fifty(b, odds)
    if fifty is not None:
        cell, size = fifty
        return Guess(cell, odds[cell], "fifty", safest, 0.0, 0.0, size)
    return _ahead(b, odds, safest, weights)


def _forced(b: _Board, odds: dict[int, float]) -> tuple[int, int] | None:
    around = b.geo.around
    for c in b.comps:
        if len(c.rows) < 2 or c.ks.min() != c.ks.max():
            continue
        inside = set(c.cells)
        col = {cell: n for n, cell in enumerate(c.cells)}
        sealed = True
        for cell in c.cells:
            nbrs = [j for j in around(cell) if b.state[j] == UNKNOWN]
            if any(j not in inside for j in nbrs):
                sealed = False
                break
            safe_rows = c.rows[c.rows[:, col[cell]] == 0]
            shown = safe_rows[:, [col[j] for j in nbrs]].sum(axis=1)
            if shown.size and shown.min() != shown.max():
                sealed = False
                break
        if sealed:
            cell = min(c.cells, key=lambda x: (odds[x], x))
            return cell, len(c.cells)
    return None


def _fifty_fifty(b: _Board, odds: dict[int, float]) -> tuple[int, int] | None:
    """A cell that is a 50/50 or safe, and its pattern's size (2 or 4); None if none is.

    Two hidden cells side by side whose flanking cells (those next to one of them
    only) are all mines or off the board hold a 50/50 when one of them holds a mine:
    nothing else on the board can tell which. So does a 2x2 block whose four diagonal
    corners are mines or off the board, with its mines on a diagonal. When every
    arrangement with a mine on a cell closes such a pattern around it (at most one
    flank still undecided, then a mine), the guess on it will come some day if it
    holds a mine: taken now it costs nothing more, and when safe, what it shows
    may spare another guess. Every such pattern lies within two cells of a known
    mine, so only there is it looked for.
    """
    st, w, h = b.state, b.w, b.h
    best: tuple[float, int, int] | None = None

    def status(x: int, y: int) -> int | None:
        return int(st[y * w + x]) if 0 <= x < w and 0 <= y < h else None

    def closes(cell: int, mines: list[int], safes: list[int], size: int) -> None:
        nonlocal best
        p = odds.get(cell, 0.0)
        if 0.0 < p < 1.0 and (best is None or (p, cell) < best[:2]) and (
            b.share(mines, safes) >= p * (1.0 - 1e-9)
        ):
            best = (p, cell, size)

    near_mine = dilate(dilate((st == MINE).reshape(h, w))).ravel()
    for c in np.flatnonzero(near_mine & (st == UNKNOWN)).tolist():
        x, y = c % w, c // w
        for dx, dy in ((1, 0), (0, 1)):
            if status(x + dx, y + dy) != UNKNOWN:
                continue
            if dx:
                flanks = [(x - 1, y + d) for d in (-1, 0, 1)] + [(x + 2, y + d) for d in (-1, 0, 1)]
            else:
                flanks = [(x + d, y - 1) for d in (-1, 0, 1)] + [(x + d, y + 2) for d in (-1, 0, 1)]
            missing: list[int] = []
            for fx, fy in flanks:
                f = status(fx, fy)
                if f == UNKNOWN:
                    missing.append(fy * w + fx)
                elif f is not None and f != MINE:
                    break
            else:
                if len(missing) <= 1 and len(missing) + 1 <= b.left:
                    other = (y + dy) * w + x + dx
                    closes(c, [*missing, c], [other], 2)
                    closes(other, [*missing, other], [c], 2)
        block = [c, c + 1, c + w, c + w + 1]
        if x + 1 >= w or y + 1 >= h or b.left < 2 or any(st[j] != UNKNOWN for j in block):
            continue
        corners = [(x - 1, y - 1), (x + 2, y - 1), (x - 1, y + 2), (x + 2, y + 2)]
        if any(status(cx, cy) not in (None, MINE) for cx, cy in corners):
            continue
        tl, tr, bl, br = block
        for cell in block:
            mines = [tl, br] if cell in (tl, br) else [tr, bl]
            closes(cell, mines, [j for j in block if j not in mines], 4)
    return (best[1], best[2]) if best is not None else None


def _endgame(b: _Board, odds: dict[int, float]) -> tuple[int, float] | None:
    """Every arrangement of the whole board, then the exhaustive search."""
    cols = b.unknown
    pos = {c: n for n, c in enumerate(cols)}
    if math.prod(len(c.rows) for c in b.comps) > ENDGAME_LAYOUTS * 50:
        return None
    layouts = np.zeros((1, len(cols)), dtype=np.uint8)
    for c in b.comps:
        block = np.zeros((len(c.rows), len(cols)), dtype=np.uint8)
        block[:, [pos[x] for x in c.cells]] = c.rows
        layouts = (layouts[:, None, :] + block[None, :, :]).reshape(-1, len(cols))
    need = b.left - layouts.sum(axis=1, dtype=np.int64)
    inner = np.array([pos[x] for x in b.interior], dtype=np.int64)
    full: list[npt.NDArray[np.uint8]] = []
    for k in sorted(set(need.tolist())):
        if not 0 <= k <= len(inner):
            continue
        rows = layouts[need == k]
        picks = np.array(list(combinations(range(len(inner)), k)), dtype=np.int64)
        block = np.repeat(rows, len(picks), axis=0)
        if k:
            which = np.tile(inner[picks.reshape(len(picks), k)], (len(rows), 1))
            block[np.arange(len(block))[:, None], which] = 1
        full.append(block)
    if not full:
        return None
    table = np.vstack(full)
    adj = np.zeros((len(cols), len(cols)), dtype=np.int16)
    for cell, n in pos.items():
        for j in b.geo.around(cell):
            m = pos.get(j)
            if m is not None:
                adj[m, n] = 1
    values = (table.astype(np.int16) @ adj).astype(np.int16)
    # Safest first, then the cell with fewest hidden neighbours: likeliest to open.
    hidden_nbrs = adj.sum(axis=0).tolist()
    order = sorted(range(len(cols)), key=lambda n: (odds[cols[n]], hidden_nbrs[n], cols[n]))
    got = endgame.best_cell(table, values, order)
    if got is None:
        return None
    return cols[got[0]], got[1]


def _ahead(b: _Board, odds: dict[int, float], safest: float, weights: list[Floats]) -> Guess:
    around = b.geo.around
    best_safety = 1.0 - safest
    cands: list[int] = [
        c for c, p in odds.items() if c in b.comp_of and 1.0 - p >= best_safety * BAND
    ]
    cands.sort(key=lambda c: (odds[c], c))
    cands = cands[:MAX_CANDIDATES]
    if b.n_interior and 1.0 - odds[b.interior[0]] >= best_safety * INTERIOR_BAND:
        # Interior cells differ only in what they touch: one per kind of neighbourhood.
        seen: set[tuple[int, tuple[int, ...]]] = set()
        inner: list[tuple[int, int, int]] = []
        for c in b.interior:
            nbrs = [j for j in around(c) if b.state[j] == UNKNOWN]
            front = tuple(sorted(b.comp_of[j] for j in nbrs if j in b.comp_of))
            touching = tuple(j for j in nbrs if j in b.comp_of)
            kind = (len(nbrs), touching if front else ())
            if kind in seen:
                continue
            seen.add(kind)
            inner.append((len(nbrs) - len(touching), c, len(touching)))
        inner.sort()
        cands += [c for _, c, _ in inner[: MAX_CANDIDATES // 2]]
    # The best chance elsewhere, per component left out.
    best_in_comp = [1.0 - float(min(odds[x] for x in c.cells)) for c in b.comps]
    scored: list[tuple[float, float, int, float, bool]] = []
    for c in cands:
        score, progress, dead = _look(b, c, odds, best_in_comp)
        scored.append((score, 1.0 - odds[c], c, progress, dead))
    live = [s for s in scored if not s[4]] or scored
    _, _, cell, progress, _ = max(live, key=lambda s: (s[0], s[1], -s[2]))
    safer = [s for s in live if _implied(b, cell, s[2]) and odds[s[2]] < odds[cell] - 1e-3]
    if safer:
        # It risks less, and this cell can still be played after it if what it shows
        # leaves this one needed. (Its being certain once this cell is safe counted
        # as the progress this cell makes.)
        _, _, cell, progress, _ = max(safer, key=lambda s: (s[1], s[0], -s[2]))
    return Guess(cell, odds[cell], "ahead", safest, progress, 0.0, 0)


def _implied(b: _Board, c: int, other: int) -> bool:
    """Whether ``other`` is safe in every arrangement where ``c`` is: only ever so
    within one component."""
    n = b.comp_of.get(c)
    if n is None or b.comp_of.get(other) != n or other == c:
        return False
    comp = b.comps[n]
    col = comp.cells.index
    return not comp.rows[comp.rows[:, col(c)] == 0, col(other)].any()


def _look(
    b: _Board, c: int, odds: dict[int, float], best_in_comp: list[float]
) -> tuple[float, float, bool]:
    """(chance to be safe and then safe again, chance of a certain next move, dead)."""
    nbrs = [j for j in b.geo.around(c) if b.state[j] == UNKNOWN]
    touched = sorted({b.comp_of[j] for j in nbrs if j in b.comp_of} | (
        {b.comp_of[c]} if c in b.comp_of else set()
    ))
    inner_nbrs = [j for j in nbrs if j not in b.comp_of]
    r = len(inner_nbrs)
    # The merged arrangements of the components the cell touches.
    rows: npt.NDArray[np.uint8] = np.zeros((1, 0), dtype=np.uint8)
    ks = np.zeros(1, dtype=np.int64)
    cells: list[int] = []
    for n in touched:
        comp = b.comps[n]
        if len(rows) * len(comp.rows) > arrangements.MAX_ROWS:
            return (1.0 - odds[c]) * max(best_in_comp, default=0.0), 0.0, False
        rows = np.hstack((
            np.repeat(rows, len(comp.rows), axis=0), np.tile(comp.rows, (len(rows), 1))
        ))
        ks = (ks[:, None] + comp.ks[None, :]).ravel()
        cells.extend(comp.cells)
    g, rho = b.rest(set(touched))
    w = g[ks]
    rho_s = rho[ks] if b.n_interior else np.zeros(len(ks))
    pos = {x: n for n, x in enumerate(cells)}
    f = rows[:, [pos[j] for j in nbrs if j in pos]].sum(axis=1, dtype=np.int64)
    # The cell is safe: in its own component, where it holds no mine; in the
    # interior, as often as the interior's density leaves it free.
    safe_w = w * (rows[:, pos[c]] == 0) if c in pos else w * (1.0 - rho_s)
    total = float(w.sum())
    if total <= 0:
        return 0.0, 0.0, False
    width = int(f.max()) + r + 1
    table = np.zeros((len(w), width))
    idx = np.arange(len(w))
    for j in range(r + 1):
        table[idx, f + j] += safe_w * math.comb(r, j) * rho_s**j * (1.0 - rho_s) ** (r - j)
    # The best chance outside what the look-ahead recomputes.
    outside = max((best_in_comp[n] for n in range(len(b.comps)) if n not in touched), default=0.0)
    if b.n_interior - r - (c not in b.comp_of) > 0:
        outside = max(outside, 1.0 - odds[b.interior[0]])
    # Every number the cell can show at once: its chance, whether it makes some cell
    # certainly safe, and else the best chance of the next guess.
    others = np.array([n for n, x in enumerate(cells) if x != c], dtype=np.int64)
    sub = rows[:, others].astype(np.float64)
    masses = table.sum(axis=0)
    shown = masses > 0
    table, masses = table[:, shown], masses[shown]
    values = np.flatnonzero(shown)
    support = (table > 0).astype(np.float64)
    certain = np.zeros(len(values), dtype=bool)
    nxt = np.full(len(values), outside)
    if len(others):
        certain |= ((support.T @ sub) == 0).any(axis=1)
        after = (table.T @ sub) / masses[:, None]
        nxt = np.maximum(nxt, 1.0 - after.min(axis=1))
    if r:
        gap = values[None, :] - f[:, None]
        certain |= ~((support > 0) & (gap != 0)).any(axis=0)
        nxt = np.maximum(nxt, 1.0 - (table * gap).sum(axis=0) / masses / r)
    pv = masses / total
    progress = float(pv[certain].sum())
    score = progress + float((pv * nxt)[~certain].sum())
    shows = len(values)
    safe = float(safe_w.sum()) / total
    dead = shows == 1 and progress == 0.0
    progress = progress / safe if safe > 0 else 0.0
    return score * (1.0 + PROGRESS * progress), progress, dead
