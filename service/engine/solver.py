"""Minesweeper logic from the player's view alone: what is certain, and the odds when nothing is.

The solver sees exactly what a player sees: a list of row strings of view characters
(``#`` hidden, ``F`` flag, ``?`` question mark, ``0``-``8`` revealed) and the total
number of mines. Flags and question marks count as hidden, because a player's marks
may be wrong.

Deduction runs in stages, cheapest first, and stops as soon as a stage finds a safe
cell, so a hint always carries the simplest reason available:

1. local rules over *facts* ("these cells hold exactly k mines"): a fact with no
   mines left or with as many mines as cells settles all its cells; two overlapping
   facts settle their differences when the counts force it, and a fact inside
   another leaves a smaller fact for the rest (the set reasoning of Simon Tatham's
   Mines solver);
2. the global mine count once every mine, or every hidden cell, is accounted for;
3. exhaustive counting of every independent component of the frontier (the hidden
   cells next to numbers), weighted against the hidden cells away from any number
   with binomial coefficients, which gives certain cells and, when there are none,
   each cell's exact probability of a mine.

Each stage feeds what it learns back into the first. The counting is exact but
capped by a search budget per component; a component over budget only takes part
through sound bounds on its mine count, and its cells' odds are then estimates
(``Analysis.exact`` says so).

When every stage is stuck, :func:`best_hint` leaves the choice of the guess to
:mod:`guess`, which weighs what each candidate can open, not only its odds.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

import msgspec
import numpy as np
import numpy.typing as npt

from . import grid

if TYPE_CHECKING:
    from . import guess

Coord = tuple[int, int]

# Per-cell knowledge: hidden and unknown, known safe (revealed or deduced), known mine.
UNKNOWN = 0
SAFE = 1
MINE = 2

# Search nodes allowed per frontier component; past it the component is "too big".
DEFAULT_BUDGET = 4000
# The exact global weighting convolves every component's counts; past this much work
# (number of components times the squared frontier span) it switches to a mean-field
# estimate that is still sound for certainty.
_EXACT_WORK = 20_000_000

_VIEW_CHARS = frozenset(b"#F?012345678")
_DIGIT0 = ord("0")


class InconsistentBoard(ValueError):
    """The view contradicts itself or the mine count: no mine layout fits it."""


class Deduction(msgspec.Struct, frozen=True):
    """A cell whose content is certain, with the reasoning in words."""

    x: int
    y: int
    mine: bool
    reason: str


class Probability(msgspec.Struct, frozen=True):
    """The chance that a hidden cell next to a number holds a mine."""

    x: int
    y: int
    mine: float


class Analysis(msgspec.Struct, frozen=True):
    """What logic can tell about a view.

    ``safe`` and ``mines`` are in the order they were deduced, so earlier cells
    need simpler reasoning; ``deductions`` gives the reason for each. When no safe
    cell is certain, ``probabilities`` lists every undecided hidden cell that
    touches a number, and ``interior`` is the chance of a mine for each of the
    ``interior_cells`` hidden cells that touch none (``None`` when there are none).
    """

    safe: list[Coord]
    mines: list[Coord]
    deductions: list[Deduction]
    probabilities: list[Probability]
    interior: float | None
    interior_cells: int
    exact: bool = True

    @property
    def stuck(self) -> bool:
        """No cell is certainly safe: the next reveal is a guess."""
        return not self.safe

    def reason(self, x: int, y: int) -> str | None:
        for d in self.deductions:
            if d.x == x and d.y == y:
                return d.reason
        return None


HintKind = Literal["safe", "mine", "guess"]


class Hint(msgspec.Struct, frozen=True):
    """One suggested move: reveal a safe cell, flag a mine, or the least risky guess."""

    x: int
    y: int
    kind: HintKind
    mine_probability: float
    reason: str


# ---------------------------------------------------------------------------
# Board geometry


def neighbours(i: int, w: int, h: int) -> list[int]:
    y, x = divmod(i, w)
    x0, x1 = max(0, x - 1), min(w, x + 2)
    out: list[int] = []
    for ny in range(max(0, y - 1), min(h, y + 2)):
        row = ny * w
        out.extend(range(row + x0, row + x1))
    out.remove(i)
    return out


class Geometry:
    """Neighbour lists of one board size, built on demand and kept."""

    __slots__ = ("_cache", "h", "w")

    def __init__(self, w: int, h: int, *, eager: bool = False) -> None:
        self.w = w
        self.h = h
        self._cache: dict[int, list[int]] = {}
        if eager:
            self._cache = {i: neighbours(i, w, h) for i in range(w * h)}

    def around(self, i: int) -> list[int]:
        got = self._cache.get(i)
        if got is None:
            got = self._cache[i] = neighbours(i, self.w, self.h)
        return got


_geometries: dict[tuple[int, int], Geometry] = {}


def geometry(w: int, h: int) -> Geometry:
    """The shared neighbour lists of one board size (every analysis of a size reuses them)."""
    geo = _geometries.get((w, h))
    if geo is None:
        if len(_geometries) >= 16:
            _geometries.clear()
        geo = _geometries[(w, h)] = Geometry(w, h, eager=w * h <= 40_000)
    return geo


# ---------------------------------------------------------------------------
# Stage 1: facts and the local rules

# Why a cell became known: (rule, numbers involved). Kept as data and only put in
# words for the caller, because the generator runs this code thousands of times.
Sources = frozenset[int]
_NOSRC: Sources = frozenset()


class Why(NamedTuple):
    rule: Literal["facts", "global", "count", "interior"]
    sources: Sources
    uses_total: bool = False
    needed: int = 0  # the mines the fact still needed, or the mines left overall


class Deducer:
    """Facts about hidden cells and the local rules run to a fixpoint.

    ``state`` holds one byte per cell (``UNKNOWN``, ``SAFE``, ``MINE``) and is
    updated in place. With ``reveal`` given, a cell learnt safe is opened at once
    and its number becomes a fact (the generator's mode); without it, safe cells
    are only recorded (a player's view, where the player still has to click).
    """

    def __init__(
        self,
        geo: Geometry,
        state: bytearray,
        *,
        reveal: Callable[[int], int] | None = None,
        track: bool = True,
    ) -> None:
        self.geo = geo
        self.state = state
        self.reveal = reveal
        self.track = track
        self.facts: dict[frozenset[int], tuple[int, Sources]] = {}
        self.by_cell: dict[int, set[frozenset[int]]] = {}
        self.todo: deque[frozenset[int]] = deque()
        self.learnt: list[int] = []
        self.why: dict[int, Why] = {}
        self.unknown = state.count(UNKNOWN)
        self.known_mines = state.count(MINE)

    def copy(self) -> Deducer:
        """An independent deducer in the same state (for reasoning that must not stick)."""
        other = Deducer.__new__(Deducer)
        other.geo = self.geo
        other.state = bytearray(self.state)
        other.reveal = self.reveal
        other.track = self.track
        other.facts = dict(self.facts)
        other.by_cell = {c: set(keys) for c, keys in self.by_cell.items()}
        other.todo = deque(self.todo)
        other.learnt = list(self.learnt)
        other.why = dict(self.why)
        other.unknown = self.unknown
        other.known_mines = self.known_mines
        return other

    def add_number(self, i: int, value: int) -> None:
        self.add(self.geo.around(i), value, frozenset((i,)) if self.track else _NOSRC)

    def add(self, cells: Iterable[int], count: int, src: Sources) -> None:
        """Add the fact "``cells`` hold ``count`` mines", less the cells already known."""
        state = self.state
        free: list[int] = []
        for c in cells:
            s = state[c]
            if s == UNKNOWN:
                free.append(c)
            elif s == MINE:
                count -= 1
        self.insert(frozenset(free), count, src)

    def insert(self, key: frozenset[int], count: int, src: Sources) -> None:
        """Add a fact whose cells are all undecided."""
        if count < 0 or count > len(key):
            raise InconsistentBoard("a number cannot be satisfied")
        if not key:
            return
        facts = self.facts
        old = facts.get(key)
        if old is not None:
            if old[0] != count:
                raise InconsistentBoard("two numbers disagree")
            return
        facts[key] = (count, src)
        by_cell = self.by_cell
        for c in key:
            got = by_cell.get(c)
            if got is None:
                by_cell[c] = {key}
            else:
                got.add(key)
        self.todo.append(key)

    def learn(self, i: int, mine: bool, why: Why | None) -> None:
        state = self.state
        s = state[i]
        if s != UNKNOWN:
            if (s == MINE) != mine:
                raise InconsistentBoard("a cell would have to be both safe and a mine")
            return
        state[i] = MINE if mine else SAFE
        self.unknown -= 1
        if mine:
            self.known_mines += 1
        self.learnt.append(i)
        if why is not None:
            self.why[i] = why
        keys = self.by_cell.pop(i, None)
        if keys:
            facts, by_cell = self.facts, self.by_cell
            drop = frozenset((i,))
            for key in keys:
                count, src = facts.pop(key)
                for c in key:
                    if c != i:
                        by_cell[c].discard(key)
                # Facts only ever hold undecided cells, so the rest of this one still are.
                self.insert(key - drop, count - mine, src)
        if not mine and self.reveal is not None:
            self.add_number(i, self.reveal(i))

    def retally(self, i: int, delta: int) -> None:
        """A mine was added (+1) or removed (-1) at unknown cell ``i``: fix every fact on it."""
        for key in self.by_cell.get(i, ()):
            count, src = self.facts[key]
            self.facts[key] = (count + delta, src)
            self.todo.append(key)

    def run(self) -> None:
        """Apply the local rules until nothing changes.

        Facts are first checked on their own and only then against each other, so
        a cell that a single number settles is credited to that number.
        """
        facts, todo, by_cell, track = self.facts, self.todo, self.by_cell, self.track
        paired: deque[frozenset[int]] = deque()
        while todo or paired:
            if todo:
                key = todo.popleft()
                got = facts.get(key)
                if got is None:
                    continue
                count, src = got
                if count == 0 or count == len(key):
                    why = Why("facts", src, False, count) if track else None
                    for c in sorted(key):
                        self.learn(c, count != 0, why)
                else:
                    paired.append(key)
                continue
            key = paired.popleft()
            got = facts.get(key)
            if got is None:
                continue
            count, src = got
            others: set[frozenset[int]] = set()
            for c in key:
                others |= by_cell[c]
            others.discard(key)
            for other in sorted(others, key=min) if track else others:
                if key not in facts:
                    break
                got2 = facts.get(other)
                if got2 is None:
                    continue
                ocount, osrc = got2
                diff = count - ocount
                mine_side = key - other
                safe_side = other - key
                if len(mine_side) == diff:
                    pass
                elif len(safe_side) == -diff:
                    mine_side, safe_side = safe_side, mine_side
                else:
                    if not mine_side:
                        self.insert(safe_side, -diff, src | osrc)
                    elif not safe_side:
                        self.insert(mine_side, diff, src | osrc)
                    continue
                why = Why("facts", src | osrc) if track else None
                for c in sorted(mine_side):
                    self.learn(c, True, why)
                for c in sorted(safe_side):
                    self.learn(c, False, why)

    def unknown_cells(self) -> list[int]:
        arr = np.frombuffer(self.state, dtype=np.uint8)
        return [int(i) for i in np.flatnonzero(arr == UNKNOWN)]


# ---------------------------------------------------------------------------
# Stage 3: counting the arrangements of a frontier component

Poly = list[int]  # Poly[k]: number of arrangements with k mines
Cons = list[tuple[frozenset[int], int]]


class TooBig(Exception):
    """A component needs more search than its budget allows."""


def _conv(a: Poly, b: Poly) -> Poly:
    if not a or not b:
        return []
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _add(a: Poly, b: Poly) -> Poly:
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, y in enumerate(b):
        out[i] += y
    return out


class ArrangementCounter:
    """Counts mine arrangements of a set of facts, splitting into independent parts.

    Assigning a cell often cuts a frontier into pieces that can be counted apart
    and multiplied, which keeps long frontiers (the usual shape) cheap.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nodes = 0
        self.memo: dict[frozenset[tuple[frozenset[int], int]], Poly] = {}

    def count(self, cons: Cons) -> Poly:
        forced_mines = 0
        forced: dict[int, int] = {}
        pending = cons
        while True:
            nxt: Cons = []
            progress = False
            for vs, k in pending:
                if forced:
                    hit = vs & forced.keys()
                    if hit:
                        k -= sum(forced[v] for v in hit)
                        vs = vs - hit
                n = len(vs)
                if k < 0 or k > n:
                    return []
                if n == 0:
                    continue
                if k == 0 or k == n:
                    val = 1 if k else 0
                    for v in vs:
                        forced[v] = val
                    forced_mines += k
                    progress = True
                    continue
                nxt.append((vs, k))
            pending = nxt
            if not progress:
                break
        result: Poly = [0] * forced_mines + [1]
        for part in _split(pending):
            result = _conv(result, self._part(part))
            if not result:
                return []
        return result

    def _part(self, part: Cons) -> Poly:
        if len(part) == 1:
            vs, k = part[0]
            return [0] * k + [math.comb(len(vs), k)]
        key = frozenset(part)
        got = self.memo.get(key)
        if got is not None:
            return got
        self.nodes += 1
        if self.nodes > self.budget:
            raise TooBig
        tally: dict[int, int] = {}
        for vs, _ in part:
            for v in vs:
                tally[v] = tally.get(v, 0) + 1
        v = max(tally, key=lambda u: (tally[u], -u))
        without = self.count(_fix(part, v, 0))
        with_mine = self.count(_fix(part, v, 1))
        got = _add(without, [0, *with_mine] if with_mine else [])
        self.memo[key] = got
        return got


def _fix(cons: Cons, v: int, val: int) -> Cons:
    out: Cons = []
    for vs, k in cons:
        if v in vs:
            out.append((vs - {v}, k - val))
        else:
            out.append((vs, k))
    return out


def _split(cons: Cons) -> list[Cons]:
    """Facts grouped into components that share no cell."""
    if len(cons) <= 1:
        return [cons] if cons else []
    parent: dict[int, int] = {}

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for vs, _ in cons:
        first = -1
        for v in vs:
            if v not in parent:
                parent[v] = v
            if first < 0:
                first = find(v)
            else:
                r = find(v)
                if r != first:
                    parent[r] = first
    groups: dict[int, Cons] = {}
    for fact in cons:
        groups.setdefault(find(next(iter(fact[0]))), []).append(fact)
    return list(groups.values())


class Component(NamedTuple):
    cells: list[int]
    facts: Cons
    total: Poly  # arrangements by mine count; empty when too big
    per_cell: dict[int, Poly]  # arrangements with that cell a mine, by mine count
    low: int  # sound bounds on the component's mine count
    high: int


def count_component(facts: Cons, budget: int) -> Component:
    # A canonical order makes the search, and so the budget's verdict, depend only
    # on the facts themselves, not on the order in which they were found.
    facts = sorted(facts, key=lambda f: (sorted(f[0]), f[1]))
    cells = sorted({c for vs, _ in facts for c in vs})
    counter = ArrangementCounter(budget)
    try:
        total = counter.count(facts)
        if not total:
            raise InconsistentBoard("no mine layout fits the numbers")
        per_cell: dict[int, Poly] = {}
        for c in cells:
            with_mine = counter.count(_fix(facts, c, 1))
            per_cell[c] = [0, *with_mine] if with_mine else []
    except TooBig:
        low = max(k for _, k in facts)
        high = len(cells) - max(len(vs) - k for vs, k in facts)
        return Component(cells, facts, [], {}, low, high)
    low = next(k for k, n in enumerate(total) if n)
    return Component(cells, facts, total, per_cell, low, len(total) - 1)


# ---------------------------------------------------------------------------
# Stage 3, continued: weighing the components against the interior


class Verdict(NamedTuple):
    safe: list[int]
    mines: list[int]
    uses_total: set[int]  # cells only settled thanks to the global count
    interior: Literal["safe", "mine"] | None
    odds: dict[int, float]
    interior_odds: float | None
    exact: bool


_STUCK_EMPTY = Verdict([], [], set(), None, {}, None, True)

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]


def _bool_conv(a: Flags, b: Flags) -> Flags:
    return np.convolve(a.astype(np.int64), b.astype(np.int64)) > 0


def _shift_of(p: Poly) -> int:
    """Right shift that brings a count polynomial into float range (only ratios matter)."""
    return max(0, max(p).bit_length() - 60)


def _floats(p: Poly, shift: int) -> Floats:
    return np.array([float(n >> shift) for n in p], dtype=np.float64)


def _log_binoms(n: int, ks: npt.NDArray[np.int64]) -> Floats:
    """log C(n, k) for each k; -inf where k is out of range."""
    out = np.full(ks.shape, -np.inf)
    for j, k in enumerate(ks.tolist()):
        if 0 <= k <= n:
            out[j] = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return out


def _norm(a: Floats) -> Floats:
    top = float(a.max()) if a.size else 0.0
    return a / top if top > 0 else a


def weigh(comps: list[Component], interior: int, left: int, want_odds: bool) -> Verdict:
    """Certain cells, and the odds if asked, from the components and the global count.

    A cell is certain when no arrangement fitting every number and the total puts
    a mine there (or leaves it empty). That depends only on which mine totals are
    possible, so certainty is decided on supports (booleans), never on floats.
    """
    supports: list[Flags] = []
    for c in comps:
        if c.total:
            supports.append(np.array([n > 0 for n in c.total], dtype=bool))
        else:
            s = np.zeros(c.high + 1, dtype=bool)
            s[c.low :] = True
            supports.append(s)
    smin = sum(c.low for c in comps)
    smax = sum(c.high for c in comps)
    span = smax + 1
    totals = np.arange(span, dtype=np.int64)
    fits = (left - totals >= 0) & (left - totals <= interior)
    if not fits[smin:].any():
        raise InconsistentBoard("the mine count does not fit the numbers")
    # When every frontier total leaves the interior a possible number of mines,
    # the global count adds nothing and each component stands alone.
    free = bool(fits[smin:].all())
    big = len(comps) * span * span > _EXACT_WORK
    allowed: list[Flags] = supports
    reach = np.zeros(span, dtype=bool)
    reach[smin:] = True  # a sound superset when the exact one is too costly
    if not big:
        prefix = [np.ones(1, dtype=bool)]
        for s in supports:
            prefix.append(_bool_conv(prefix[-1], s))
        reach = prefix[-1]
        if not free:
            suffix = [np.ones(1, dtype=bool)]
            for s in reversed(supports):
                suffix.append(_bool_conv(suffix[-1], s))
            suffix.reverse()
            fit_n = fits.astype(np.int64)
            allowed = []
            for i, s in enumerate(supports):
                rest = _bool_conv(prefix[i], suffix[i + 1])
                # room[k]: the other components and the interior can take the rest.
                room = np.correlate(fit_n, rest.astype(np.int64), mode="valid") > 0
                allowed.append(s & room[: len(s)])
    possible = np.flatnonzero(reach & fits)
    if not possible.size:
        raise InconsistentBoard("the mine count does not fit the numbers")
    safe: list[int] = []
    mines: list[int] = []
    uses_total: set[int] = set()
    for c, ok, sup in zip(comps, allowed, supports, strict=True):
        if not c.total:
            continue
        for cell in c.cells:
            pc = c.per_cell[cell]
            mine_ks = [k for k, n in enumerate(pc) if n]
            safe_ks = [k for k, n in enumerate(c.total) if n > (pc[k] if k < len(pc) else 0)]
            can_mine = any(ok[k] for k in mine_ks)
            can_safe = any(ok[k] for k in safe_ks)
            if can_mine and can_safe:
                continue
            if not (can_mine or can_safe):
                raise InconsistentBoard("the mine count does not fit the numbers")
            (mines if can_mine else safe).append(cell)
            if any(sup[k] for k in mine_ks) and any(sup[k] for k in safe_ks):
                uses_total.add(cell)
    verdict_in: Literal["safe", "mine"] | None = None
    if interior and not big:
        if bool(np.all(possible == left)):
            verdict_in = "safe"
        elif bool(np.all(left - possible == interior)):
            verdict_in = "mine"
    odds: dict[int, float] = {}
    interior_odds: float | None = None
    exact = not big and all(c.total for c in comps)
    if want_odds:
        odds, interior_odds = _odds(comps, interior, left, big)
    return Verdict(safe, mines, uses_total, verdict_in, odds, interior_odds, exact)


def _odds(
    comps: list[Component], interior: int, left: int, big: bool
) -> tuple[dict[int, float], float | None]:
    """Each frontier cell's chance of a mine, and that of an interior cell.

    Every arrangement of the whole board is equally likely, so a component
    holding k mines weighs its count of arrangements times the ways the interior
    can take the remaining mines, C(interior, left - total).
    """
    weights: list[Floats] = []
    shifts: list[int] = []
    for c in comps:
        if c.total:
            shifts.append(_shift_of(c.total))
            weights.append(_floats(c.total, shifts[-1]))
        else:
            # Too big to count: weigh each total as if the cells were unconstrained.
            ks = np.arange(c.high + 1, dtype=np.int64)
            lb = _log_binoms(len(c.cells), ks)
            lb[: c.low] = -np.inf
            shifts.append(0)
            weights.append(np.exp(lb - lb.max()))
    gs: list[Floats] = []
    interior_odds: float | None = None
    if big:
        # Mean field: the interior's density sets a price per mine in each component.
        expected = sum(float((w * np.arange(len(w))).sum() / w.sum()) for w in weights)
        density = min(max((left - expected) / interior, 1e-9), 1 - 1e-9) if interior else 0.5
        step = math.log(density / (1 - density))
        for w in weights:
            ks_f = np.arange(len(w), dtype=np.float64) * step
            gs.append(np.exp(ks_f - ks_f.max()))
        interior_odds = density if interior else None
    else:
        span = sum(len(w) - 1 for w in weights) + 1
        totals = np.arange(span, dtype=np.int64)
        log_in = _log_binoms(interior, left - totals)
        in_w = np.exp(log_in - log_in.max())
        prefix = [np.ones(1)]
        for w in weights:
            prefix.append(_norm(np.convolve(prefix[-1], w)))
        suffix = [np.ones(1)]
        for w in reversed(weights):
            suffix.append(_norm(np.convolve(suffix[-1], w)))
        suffix.reverse()
        for i, w in enumerate(weights):
            rest = np.convolve(prefix[i], suffix[i + 1])
            # g[k]: the weight of everything else when this component holds k mines.
            gs.append(_norm(np.correlate(in_w, rest, mode="valid")[: len(w)]))
        whole = prefix[-1] * in_w
        if interior and whole.sum() > 0:
            share = (left - totals) / interior
            interior_odds = float((whole * share).sum() / whole.sum())
    odds: dict[int, float] = {}
    for c, w, g, shift in zip(comps, weights, gs, shifts, strict=True):
        denom = float((w * g).sum())
        if c.total:
            for cell in c.cells:
                pc = c.per_cell[cell]
                num = float((_floats(pc, shift) * g[: len(pc)]).sum()) if pc else 0.0
                odds[cell] = num / denom if denom > 0 else 0.0
        else:
            mean = float((w * g * np.arange(len(w))).sum()) / denom if denom > 0 else 0.0
            for cell in c.cells:
                odds[cell] = mean / len(c.cells)
    return odds, interior_odds


ComponentCache = dict[frozenset[tuple[frozenset[int], int]], Component]


def escalate(
    d: Deducer,
    total_mines: int,
    budget: int,
    *,
    want_odds: bool = False,
    cache: ComponentCache | None = None,
) -> Verdict | None:
    """Stages 2 and 3, for when the local rules are stuck.

    Learns every cell they settle and returns None if there was any; otherwise
    returns the verdict, with the odds when asked for.
    """
    left = total_mines - d.known_mines
    if left < 0 or left > d.unknown:
        raise InconsistentBoard("the mine count does not fit the board")
    if d.unknown == 0:
        return _STUCK_EMPTY
    if left == 0 or left == d.unknown:
        why = Why("global", _NOSRC, True, left) if d.track else None
        for c in d.unknown_cells():
            d.learn(c, left != 0, why)
        return None
    comps: list[Component] = []
    for part in _split([(key, f[0]) for key, f in d.facts.items()]):
        ck = frozenset(part)
        comp = cache.get(ck) if cache is not None else None
        if comp is None:
            comp = count_component(part, budget)
            if cache is not None:
                cache[ck] = comp
        comps.append(comp)
    frontier = sum(len(c.cells) for c in comps)
    interior = d.unknown - frontier
    verdict = weigh(comps, interior, left, want_odds)
    progressed = False
    if verdict.safe or verdict.mines:
        settled = {c: False for c in verdict.safe} | {c: True for c in verdict.mines}
        for comp in comps:
            src = _component_sources(d, comp) if d.track else _NOSRC
            for cell in comp.cells:
                mine = settled.get(cell)
                if mine is not None:
                    why = Why("count", src, cell in verdict.uses_total, left) if d.track else None
                    d.learn(cell, mine, why)
                    progressed = True
    if verdict.interior is not None:
        frontier_cells = {cell for comp in comps for cell in comp.cells}
        why = Why("interior", _NOSRC, True, left) if d.track else None
        for cell in d.unknown_cells():
            if cell not in frontier_cells:
                d.learn(cell, verdict.interior == "mine", why)
                progressed = True
    return None if progressed else verdict


def _component_sources(d: Deducer, c: Component) -> Sources:
    out: set[int] = set()
    for vs, _ in c.facts:
        got = d.facts.get(vs)
        if got is not None:
            out |= got[1]
    return frozenset(out)


# ---------------------------------------------------------------------------
# The public entry points


def parse(board: Sequence[str]) -> npt.NDArray[np.uint8]:
    """A view as an (height, width) array of view characters, checked."""
    if not board or not board[0]:
        raise ValueError("a board has at least one row and one column")
    w = len(board[0])
    if any(len(row) != w for row in board):
        raise ValueError("board rows differ in length")
    try:
        raw = "".join(board).encode("ascii")
    except UnicodeEncodeError:
        raise ValueError("a board holds only view characters") from None
    if not set(raw) <= _VIEW_CHARS:
        bad = sorted(set(raw) - _VIEW_CHARS)
        raise ValueError(f"not a board in play: unexpected {bytes(bad).decode()!r}")
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(board), w)


def analyze(board: Sequence[str], mines: int, *, budget: int = DEFAULT_BUDGET) -> Analysis:
    """What logic alone can tell about a player's view with ``mines`` mines in all.

    Raises ``ValueError`` for a malformed board, and ``InconsistentBoard`` when it
    finds that no mine layout fits the view (a view from a real game always fits).
    """
    return analyze_view(parse(board), mines, budget=budget)


def analyze_view(
    view: npt.NDArray[np.uint8], mines: int, *, budget: int = DEFAULT_BUDGET
) -> Analysis:
    """:func:`analyze` for a view already held as an array of view characters."""
    d, verdict = deduce(view, mines, budget)
    return _report(d, view, mines, verdict)


def deduce(
    view: npt.NDArray[np.uint8], mines: int, budget: int = DEFAULT_BUDGET
) -> tuple[Deducer, Verdict | None]:
    """Run the stages on a view until one finds a safe cell, or all are stuck.

    Returns the deducer as the stages left it and, when stuck, the last verdict.
    """
    h, w = view.shape
    revealed = (view >= _DIGIT0) & (view <= _DIGIT0 + 8)
    hidden = ~revealed
    state = bytearray(np.where(hidden, UNKNOWN, SAFE).astype(np.uint8).tobytes())
    d = Deducer(geometry(w, h), state)
    flat = view.ravel()
    for i in np.flatnonzero(revealed & grid.dilate(hidden)).tolist():
        d.add_number(i, int(flat[i]) - _DIGIT0)
    verdict: Verdict | None = None
    while True:
        d.run()
        if d.known_mines > mines:
            raise InconsistentBoard("the numbers need more mines than the board has")
        if any(state[c] == SAFE for c in d.learnt):
            break
        verdict = escalate(d, mines, budget, want_odds=True)
        if verdict is not None:
            break
    return d, verdict


def _report(
    d: Deducer, view: npt.NDArray[np.uint8], mines: int, verdict: Verdict | None
) -> Analysis:
    w = d.geo.w
    safe: list[Coord] = []
    found: list[Coord] = []
    deductions: list[Deduction] = []
    for c in d.learnt:
        y, x = divmod(c, w)
        mine = d.state[c] == MINE
        (found if mine else safe).append((x, y))
        deductions.append(Deduction(x, y, mine, _words(d.why[c], mine, view, mines)))
    if safe or verdict is None:
        return Analysis(safe, found, deductions, [], None, 0)
    odds = [
        Probability(c % w, c // w, round(p, 6)) for c, p in sorted(verdict.odds.items())
    ]
    interior_cells = d.unknown - len(odds)
    interior = round(verdict.interior_odds, 6) if verdict.interior_odds is not None else None
    return Analysis(
        safe, found, deductions, odds, interior if interior_cells else None, interior_cells,
        verdict.exact,
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _numbers(sources: Sources, view: npt.NDArray[np.uint8]) -> str:
    w = view.shape[1]
    flat = view.ravel()
    parts = [f"the {chr(flat[i])} at ({i % w}, {i // w})" for i in sorted(sources)]
    if len(parts) > 4:
        parts = [*parts[:3], f"{len(parts) - 3} more numbers"]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _words(why: Why, mine: bool, view: npt.NDArray[np.uint8], total: int) -> str:
    if why.rule == "facts" and len(why.sources) == 1:
        (i,) = why.sources
        w = view.shape[1]
        n = int(view.ravel()[i]) - _DIGIT0
        at = f"the {n} at ({i % w}, {i // w})"
        if not mine:
            if n == 0:
                return f"{at} has no mine around it"
            # Flags count as hidden (a player's marks may be wrong): say where the mines
            # are known from, so a board without flags does not read as a contradiction.
            return f"{at} already touches {_plural(n, 'mine')} that the numbers prove"
        if why.needed == n:
            return f"{at} has only {n} undecided {'neighbour' if n == 1 else 'neighbours'} left"
        return (
            f"{at} needs {_plural(why.needed, 'more mine')} and has only "
            f"{why.needed} undecided {'neighbour' if why.needed == 1 else 'neighbours'} left"
        )
    if why.rule == "facts":
        effect = "force a mine here" if mine else "leave no room for a mine here"
        return f"{_numbers(why.sources, view)} together {effect}"
    if why.rule == "global":
        if mine:
            return f"the hidden cells left must hold all {_plural(why.needed, 'remaining mine')}"
        return f"all {_plural(total, 'mine')} are already located"
    if why.rule == "interior":
        if mine:
            return (
                f"the {_plural(why.needed, 'remaining mine')} do not fit next to the numbers, "
                "so every cell away from them holds one"
            )
        return (
            f"the numbers need all {_plural(why.needed, 'remaining mine')}, "
            "so cells away from them are safe"
        )
    fits = _numbers(why.sources, view)
    if why.uses_total:
        fits += f" and the total of {_plural(total, 'mine')}"
    effect = "puts a mine here" if mine else "leaves this cell safe"
    return f"every arrangement of mines that fits {fits} {effect}"


def safe_cell_existed(board_before: Sequence[str], mines: int) -> bool:
    """Whether logic could find a safe cell on this view: False means any click was a guess."""
    return bool(analyze(board_before, mines).safe)


def best_hint(board: Sequence[str], mines: int) -> Hint | None:
    """A certain safe cell, else a certain mine not yet flagged, else the best guess.

    None when no hidden cell is left to suggest.
    """
    view = parse(board)
    d, verdict = deduce(view, mines)
    flat = view.ravel()
    w = view.shape[1]
    # Only the hinted cell's reason is put in words: a view may settle dozens of cells.
    for c in d.learnt:
        if d.state[c] == SAFE:
            return Hint(c % w, c // w, "safe", 0.0, _words(d.why[c], False, view, mines))
    for c in d.learnt:
        if flat[c] != ord("F"):
            return Hint(c % w, c // w, "mine", 1.0, _words(d.why[c], True, view, mines))
    return stuck_hint(view, d.state, verdict, mines)


def stuck_hint(
    view: npt.NDArray[np.uint8], state: bytearray, verdict: Verdict | None, mines: int
) -> Hint | None:
    """The guess on a view where the stages found nothing certain.

    ``state`` and ``verdict`` are what :func:`deduce` left. The choice is
    :func:`guess.choose`'s; when a component is too big to list its arrangements,
    the safest cell by the counting's odds.
    """
    got = stuck_guess(view, state, verdict, mines)
    return got[0] if got is not None else None


def stuck_guess(
    view: npt.NDArray[np.uint8], state: bytearray, verdict: Verdict | None, mines: int
) -> tuple[Hint, guess.Guess | None] | None:
    """:func:`stuck_hint`, with the choice behind it: ``guess.choose``'s, or None
    when the hint fell back to the safest cell by the counting's odds."""
    from . import guess

    w = view.shape[1]
    if verdict is None or not (verdict.odds or verdict.interior_odds is not None):
        return None
    g = guess.choose(view, state, mines)
    if g is not None:
        return Hint(g.cell % w, g.cell // w, "guess", round(g.mine, 6), _guess_words(g)), g
    best: tuple[float, int, int] | None = None
    for c, p in verdict.odds.items():
        if best is None or (p, c // w, c % w) < best:
            best = (p, c // w, c % w)
    interior = verdict.interior_odds
    if interior is not None and (best is None or interior < best[0]):
        cell = _roomiest_interior(view, state)
        if cell is not None:
            best = (interior, cell[1], cell[0])
    if best is None:
        return None
    p, y, x = best
    return Hint(
        x, y, "guess", round(p, 6),
        f"no cell is certain; this one has the lowest chance of a mine ({_pct(p)}%)",
    ), None


def _pct(p: float) -> str:
    return f"{p * 100:.1f}".rstrip("0").rstrip(".")


def _guess_words(g: guess.Guess) -> str:
    risk = f"a {_pct(g.mine)}% chance of a mine"
    if g.kind == "forced":
        return (
            f"no cell is certain, and no other cell can ever tell these {g.size} cells "
            f"apart: the guess cannot be avoided, so it is best taken now ({risk})"
        )
    if g.kind == "fifty":
        apart = (
            "tell it from the one beside it" if g.size == 2
            else "tell which diagonal of its 2x2 block holds the mines"
        )
        return (
            f"no cell is certain; if this cell holds a mine, no other cell can ever "
            f"{apart}, so the guess would come some day: it is best taken now ({risk})"
        )
    if g.kind == "endgame":
        return (
            f"no cell is certain and few arrangements of the mines are left; playing out "
            f"every one shows that starting here wins {_pct(g.win)}% of the time ({risk})"
        )
    if g.mine <= g.safest + 1e-9:
        words = f"no cell is certain; this one has the lowest chance of a mine ({_pct(g.mine)}%)"
        link = "and"
    else:
        words = (
            f"no cell is certain; this one has {risk}, a little more than the lowest "
            f"({_pct(g.safest)}%)"
        )
        link = "but"
    if g.progress > 0:
        return words + (
            f", {link} if it is safe, a {_pct(g.progress)}% chance that its number makes "
            "the next move certain"
        )
    return words + f", {link} what it shows leaves the best odds for the next guess"


def _roomiest_interior(view: npt.NDArray[np.uint8], state: bytearray) -> Coord | None:
    """An undecided interior cell with the fewest neighbours: the likeliest to open an area."""
    revealed = (view >= _DIGIT0) & (view <= _DIGIT0 + 8)
    undecided = np.frombuffer(bytes(state), dtype=np.uint8).reshape(view.shape) == UNKNOWN
    interior = undecided & ~revealed & ~grid.dilate(revealed)
    if not interior.any():
        return None
    degree = grid.counts(np.ones_like(interior)).astype(np.int64)
    degree[~interior] = 99
    i = int(np.argmin(degree))
    w = view.shape[1]
    return i % w, i // w
