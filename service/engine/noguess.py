"""No-guess boards: mine layouts that logic alone clears from the first click.

The method is the one of Simon Tatham's Mines. Place the mines at random around a
mine-free 3x3 start, then let the solver play. Where it gets stuck, pick one of
the facts it is stuck on ("these cells hold k mines") and perturb the layout so
that the fact settles: move its mines out to cells elsewhere, or fill it with
mines taken from elsewhere, preferring undecided cells next to what is known,
then undecided cells further away, and only as a last resort cells already
solved. (When no number touches the undecided area at all, a known mine walling
it off is moved instead.) The solver adjusts its facts to the change and plays
on. A perturbation may spoil what was already deduced, so the whole board is
then solved again from the start; each such pass must need fewer perturbations
than the one before, or the attempt is dropped and a fresh layout drawn from a
derived seed.

The solver here plays exactly as a player who asks :func:`solver.analyze_view`
about each view and reveals every safe cell it names (see :class:`_Play`), so a
pass that needs no perturbation is a proof that such a player wins: the board
is never handed out otherwise.

Everything is a function of the arguments: randomness comes from the game's
seed through SplitMix64 and :func:`rng.derive_seed`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from . import grid
from .errors import InvalidSettings
from .game import HIDDEN
from .placement import place, start_area
from .rng import SplitMix64, derive_seed
from .solver import (
    DEFAULT_BUDGET,
    MINE,
    SAFE,
    UNKNOWN,
    ComponentCache,
    Deducer,
    Geometry,
    analyze_view,
    escalate,
)

# The largest board, and the densest layouts by board size, for which a no-guess
# board is promised: the denser the layout, the more the generator must perturb, so
# the dense tiers stop at sizes whose worst case stays within a few seconds
# (``python -m tests.bench.generate`` measures them).
MAX_CELLS = 250_000
DENSITY_TIERS: tuple[tuple[int, float], ...] = ((4_096, 0.35), (40_000, 0.25), (MAX_CELLS, 0.20))
MIN_SIDE = 4
# The generator's player must search exactly as far as a player's analysis does.
BUDGET = DEFAULT_BUDGET
# Attempts after which a perturbation may fill or empty the whole unreached area.
_BIG_PERTURBS_AFTER = 4
_MAX_ATTEMPTS = 500
_PERTURB_SALT = 0x5E7


def check_settings(width: int, height: int, mines: int) -> None:
    """Raise ``InvalidSettings`` unless a no-guess board can be promised for these settings."""
    cells = width * height
    if width < MIN_SIDE or height < MIN_SIDE:
        raise InvalidSettings(
            f"no-guess boards are at least {MIN_SIDE}x{MIN_SIDE}, not {width}x{height}"
        )
    if cells > MAX_CELLS:
        raise InvalidSettings(
            f"no-guess boards have at most {MAX_CELLS} cells; {width}x{height} has {cells}"
        )
    limit = max_mines(width, height)
    if not 1 <= mines <= limit:
        raise InvalidSettings(
            f"a {width}x{height} no-guess board takes 1 to {limit} mines, not {mines}"
        )


def max_density(cells: int) -> float:
    """The densest no-guess layout promised on a board of ``cells`` cells."""
    for limit, density in DENSITY_TIERS:
        if cells <= limit:
            return density
    return 0.0


def max_mines(width: int, height: int) -> int:
    """The most mines a no-guess board of this size may hold."""
    cells = width * height
    return max(0, min(int(cells * max_density(cells)), cells - 9))


def generate(width: int, height: int, mines: int, x: int, y: int, seed: int) -> grid.Bools:
    """A no-guess layout for a first click at (x, y): same arguments, same board.

    The clicked cell and its neighbours hold no mine, and the solver clears the
    board from that click without a guess.
    """
    check_settings(width, height, mines)
    if not (0 <= x < width and 0 <= y < height):
        raise InvalidSettings(f"cell ({x}, {y}) is off the {width}x{height} board")
    start = y * width + x
    keep = start_area(width, height, start, "zero")
    geo = Geometry(width, height, eager=True)
    cache: ComponentCache = {}
    for attempt in range(_MAX_ATTEMPTS):
        sub = seed if attempt == 0 else derive_seed(seed, attempt)
        layout = place(width, height, mines, sub, keep)
        board = bytearray(layout.ravel().astype(np.uint8).tobytes())
        rng = SplitMix64(derive_seed(sub, _PERTURB_SALT))
        big = attempt >= _BIG_PERTURBS_AFTER
        previous: int | None = None
        while True:
            if len(cache) > 50_000:
                cache.clear()
            used = _solve(geo, board, mines, start, keep, rng, big, cache)
            if used == 0:
                result = np.frombuffer(bytes(board), dtype=np.uint8).astype(bool)
                return result.reshape(height, width)
            if used < 0 or (previous is not None and used >= previous):
                break
            previous = used
    raise InvalidSettings(
        f"could not build a no-guess {width}x{height} board with {mines} mines"
    )


class _Play:
    """A player who calls the analysis after every round and reveals each safe cell it names.

    This is the game :func:`plays_through` plays, computed incrementally: the local
    rules give the same result whichever order facts arrive in, so one deducer
    carries them from round to round, while anything the later stages learn is
    worked out on a copy and dropped after the round, because a fresh analysis of
    the next view would not know it either. Openings cascade as in the game.
    """

    def __init__(self, geo: Geometry, board: bytearray, mines: int, cache: ComponentCache) -> None:
        n = geo.w * geo.h
        self.geo = geo
        self.board = board
        self.mines = mines
        self.cache = cache
        self.d = Deducer(geo, bytearray(n), track=False)
        self.opened = bytearray(n)
        self.left = n - mines  # safe cells not yet revealed

    def number(self, i: int) -> int:
        board = self.board
        return sum(board[j] for j in self.geo.around(i))

    def open(self, cells: list[int]) -> None:
        """Reveal ``cells`` with the game's cascade, then hand the new numbers to the deducer.

        Numbers join only once the whole cascade is open, so each fact enters with
        its final cells; a revealed 0 never has a hidden neighbour left, so it
        brings no fact, exactly as in the view.
        """
        d, opened, around, state = self.d, self.opened, self.geo.around, self.d.state
        queue = list(cells)
        numbers: list[tuple[int, int]] = []
        while queue:
            c = queue.pop()
            if opened[c]:
                continue
            opened[c] = 1
            self.left -= 1
            if state[c] == UNKNOWN:
                d.learn(c, False, None)
            value = self.number(c)
            if value:
                numbers.append((c, value))
            else:
                queue.extend(j for j in around(c) if not opened[j])
        for c, value in numbers:
            d.add_number(c, value)

    def round(self) -> list[int]:
        """The safe cells one analysis of the current view finds (empty when stuck)."""
        d = self.d
        mark = len(d.learnt)
        d.run()
        found = [c for c in d.learnt[mark:] if d.state[c] == SAFE and not self.opened[c]]
        if found:
            return found
        e = d.copy()
        mark = len(e.learnt)
        while escalate(e, self.mines, BUDGET, cache=self.cache) is None:
            e.run()
            found = [c for c in e.learnt[mark:] if e.state[c] == SAFE]
            if found:
                return found
        return []


def _solve(
    geo: Geometry,
    board: bytearray,
    mines: int,
    start: int,
    keep: set[int],
    rng: SplitMix64,
    big: bool,
    cache: ComponentCache,
) -> int:
    """Play from the start, perturbing ``board`` in place where stuck.

    Returns the number of perturbations, or -1 when stuck beyond repair; 0 means
    the player won without any.
    """
    play = _Play(geo, board, mines, cache)
    play.open([start])
    perturbs = 0
    while play.left:
        found = play.round()
        if found:
            play.open(found)
            continue
        if not _perturb(play, keep, rng, big):
            return -1
        perturbs += 1
    return perturbs


def _perturb(play: _Play, keep: set[int], rng: SplitMix64, big: bool) -> bool:
    """Settle one stuck fact by moving mines between it and cells outside it."""
    d, board = play.d, play.board
    facts = list(d.facts)
    if facts:
        target = sorted(facts[rng.below(len(facts))])
    else:
        # No number touches the undecided area: known mines wall it off. Moving
        # one wall mine away opens a number facing the area, which is local.
        walls = _walls(play, keep)
        if walls:
            target = [walls[rng.below(len(walls))]]
        elif big:
            target = d.unknown_cells()
        else:
            return False
    inside = set(target)
    full = [c for c in target if board[c]]
    empty = [c for c in target if not board[c]]
    # Cells outside the fact, by preference: undecided cells next to known ones,
    # other undecided cells, then (a last resort) cells already solved.
    state = d.state
    near = sorted(c for c in d.by_cell if c not in inside and c not in keep)
    arr = np.frombuffer(state, dtype=np.uint8)
    near_set = set(near)
    to_fill: list[int] = []  # empty cells outside that can take the fact's mines
    to_empty: list[int] = []  # mines outside that can fill the fact
    for tier in range(3):
        if tier == 0:
            cells = near
        elif tier == 1:
            unknown = np.flatnonzero(arr == UNKNOWN).tolist()
            cells = [c for c in unknown if c not in near_set and c not in inside and c not in keep]
        else:
            known = np.flatnonzero(arr != UNKNOWN).tolist()
            cells = [c for c in known if c not in keep and c not in inside]
        for c in _shuffled(cells, rng):
            (to_empty if board[c] else to_fill).append(c)
            if len(to_fill) == len(full) or len(to_empty) == len(empty):
                break
        else:
            continue
        break
    if len(to_fill) == len(full):
        changes = [(c, 1) for c in to_fill] + [(c, -1) for c in full]
    elif to_empty:
        # Not enough room either way (a dense board): fill part of the fact.
        picked = list(_shuffled(empty, rng))[: len(to_empty)]
        changes = [(c, -1) for c in to_empty] + [(c, 1) for c in picked]
    else:
        return False
    for c, delta in changes:
        board[c] = 1 if delta > 0 else 0
    # Every fact must match the new layout before a new number joins them.
    for c, delta in changes:
        if state[c] == UNKNOWN:
            d.retally(c, delta)
    cleared: list[int] = []
    for c, delta in changes:
        s = state[c]
        if s == SAFE and delta > 0:
            # A solved cell turned into a mine: the player "knows" it; the next
            # pass from the start finds out whether it can be deduced.
            state[c] = MINE
            d.known_mines += 1
            play.opened[c] = 0
        elif s == MINE and delta < 0:
            state[c] = SAFE
            d.known_mines -= 1
            cleared.append(c)
    play.left = len(board) - play.mines - play.opened.count(1)
    play.open(cleared)
    return True


def _walls(play: _Play, keep: set[int]) -> list[int]:
    """Known mines next to an undecided cell."""
    state, around = play.d.state, play.geo.around
    arr = np.frombuffer(state, dtype=np.uint8)
    return [
        c
        for c in np.flatnonzero(arr == MINE).tolist()
        if c not in keep and any(state[j] == UNKNOWN for j in around(c))
    ]


def _shuffled(cells: list[int], rng: SplitMix64) -> Iterator[int]:
    """``cells`` in a random order, drawn lazily: callers rarely need them all."""
    pool = list(cells)
    n = len(pool)
    for i in range(n):
        j = i + rng.below(n - i)
        pool[i], pool[j] = pool[j], pool[i]
        yield pool[i]


def plays_through(layout: grid.Bools, mines: int, start: int) -> bool:
    """Whether a player relying on :func:`solver.analyze_view` alone clears the board.

    Each round reveals every cell the analysis calls safe. This is the plain,
    slow form of the game :class:`_Play` plays incrementally, kept as the
    reference the two are checked against.
    """
    h, w = layout.shape
    flat = layout.ravel()
    view = grid.open_from(np.full(h * w, HIDDEN, dtype=np.uint8), layout, [start])
    while (view[~flat] == HIDDEN).any():
        analysis = analyze_view(view.reshape(h, w), mines, budget=BUDGET)
        if not analysis.safe:
            return False
        cells = [cy * w + cx for cx, cy in analysis.safe]
        if flat[cells].any():
            return False
        view = grid.open_from(view, layout, cells)
    return True
