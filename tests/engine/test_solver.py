"""The logic solver: small positions with known answers, and brute force as the referee."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import msgspec
import numpy as np
import pytest

from service.engine import grid
from service.engine.rng import SplitMix64
from service.engine.solver import (
    Analysis,
    InconsistentBoard,
    analyze,
    best_hint,
    safe_cell_existed,
)

Coord = tuple[int, int]


@dataclass(frozen=True)
class Case:
    name: str
    board: list[str]
    mines: int
    safe: set[Coord] = field(default_factory=set)
    found: set[Coord] = field(default_factory=set)  # certain mines


CASES = [
    Case("a 1 with one hidden neighbour", ["1#", "11", "00"], 1, found={(1, 0)}),
    Case(
        "1-2-1: the wings are mines and the middle is safe",
        ["###", "121", "000"], 2, safe={(1, 0)}, found={(0, 0), (2, 0)},
    ),
    Case(
        "1-2-3-2-1 along a wall",
        ["#####", "12321", "00000"], 3, safe={(0, 0), (4, 0)}, found={(1, 0), (2, 0), (3, 0)},
    ),
    Case(
        "subset: the 1 inside the other 1 clears the rest",
        ["###", "11#", "0##"], 1, safe={(1, 2), (2, 0), (2, 1), (2, 2)},
    ),
    Case(
        "a wrong flag is not trusted",
        ["#1", "F1", "00"], 1, safe={(0, 1)}, found={(0, 0)},
    ),
    Case(
        "a question mark is just hidden",
        ["#1", "?1", "00"], 1, safe={(0, 1)}, found={(0, 0)},
    ),
    Case(
        "global count: the number needs every mine, the rest is safe",
        ["####", "#1##", "####"], 1, safe={(3, 0), (3, 1), (3, 2)},
    ),
    Case(
        "global count: all mines located",
        ["#3", "##", "##"], 3, safe={(0, 2), (1, 2)}, found={(0, 0), (0, 1), (1, 1)},
    ),
    Case(
        "global count: the hidden cells left are all mines",
        ["##", "##", "22", "00"], 4, found={(0, 0), (1, 0), (0, 1), (1, 1)},
    ),
    Case(
        "global count: too many mines for the cells next to numbers",
        ["1##", "1##"], 3, found={(2, 0), (2, 1)},
    ),
    Case(
        "only counting every arrangement settles it",
        ["#3#", "3##", "##2"], 4, found={(0, 0), (1, 1)},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_known_positions(case: Case) -> None:
    a = analyze(case.board, case.mines)
    assert set(a.safe) == case.safe
    assert set(a.mines) == case.found
    assert {(d.x, d.y) for d in a.deductions} == case.safe | case.found
    assert all(d.reason for d in a.deductions)
    _check_against_brute_force(case.board, case.mines, a)


def test_reasons_in_words() -> None:
    a = analyze(["###", "121", "000"], 2)
    assert a.reason(1, 0) == "the 1 at (2, 1) already touches 1 mine that the numbers prove"
    assert a.reason(0, 0) == "the 1 at (0, 1) has only 1 undecided neighbour left"
    assert a.reason(2, 0) == "the 1 at (0, 1) and the 2 at (1, 1) together force a mine here"
    a = analyze(["###", "22#"], 2)
    assert a.reason(2, 0) == "the 2 at (1, 1) already touches 2 mines that the numbers prove"
    assert a.reason(0, 0) == "the 2 at (0, 1) has only 2 undecided neighbours left"
    a = analyze(["#3#", "3##", "##2"], 4)
    assert a.reason(1, 1) == (
        "every arrangement of mines that fits the 3 at (1, 0), the 3 at (0, 1) and "
        "the 2 at (2, 2) and the total of 4 mines puts a mine here"
    )
    assert a.reason(0, 0) is not None and "total" not in a.reason(0, 0)
    assert analyze(["#3", "##", "##"], 3).reason(0, 2) == "all 3 mines are already located"
    assert analyze(["####", "#1##", "####"], 1).reason(3, 1) == (
        "the numbers need all 1 remaining mine, so cells away from them are safe"
    )


def test_simple_reasons_come_first() -> None:
    # The 0 clears (1, 2) on its own; the subset rule is only needed for the rest.
    a = analyze(["###", "11#", "0##"], 1)
    assert a.safe[0] == (1, 2)
    assert a.deductions[0].reason == "the 0 at (0, 2) has no mine around it"


def test_stops_at_the_first_stage_that_finds_a_safe_cell() -> None:
    a = analyze(["###", "121", "000"], 2)
    assert not a.stuck
    assert a.probabilities == [] and a.interior is None


def test_probabilities_on_tiny_exhaustive_cases() -> None:
    a = analyze(["1#", "##"], 1)
    assert a.stuck and a.exact
    assert sorted((p.x, p.y, p.mine) for p in a.probabilities) == [
        (0, 1, pytest.approx(1 / 3)), (1, 0, pytest.approx(1 / 3)), (1, 1, pytest.approx(1 / 3)),
    ]
    assert a.interior is None and a.interior_cells == 0
    # Eight cells around the 1 share one mine; the other goes among the 3 interior cells.
    a = analyze(["####", "#1##", "####"], 2)
    assert [p.mine for p in a.probabilities] == [pytest.approx(1 / 8)] * 8
    assert a.interior == pytest.approx(1 / 3) and a.interior_cells == 3
    assert _expected_mines(a) == pytest.approx(2)


def test_probabilities_weigh_the_interior_by_combinatorics() -> None:
    # The 1s share one mine at (1,0) or (1,1), leaving C(3,1) = 3 ways for the last
    # mine in the bottom row; or take one each at (0,1) and (2,1), leaving 1 way.
    board = ["1#1", "###", "###"]
    a = analyze(board, 2)
    odds = {(p.x, p.y): p.mine for p in a.probabilities}
    assert odds == {
        (1, 0): pytest.approx(3 / 7), (1, 1): pytest.approx(3 / 7),
        (0, 1): pytest.approx(1 / 7), (2, 1): pytest.approx(1 / 7),
    }
    assert a.interior == pytest.approx(2 / 7) and a.interior_cells == 3
    assert _expected_mines(a) == pytest.approx(2)
    _check_against_brute_force(board, 2, a)


def test_best_hint_prefers_safe_then_mine_then_the_safest_guess() -> None:
    hint = best_hint(["###", "121", "000"], 2)
    assert hint is not None
    assert (hint.x, hint.y, hint.kind, hint.mine_probability) == (1, 0, "safe", 0.0)
    assert hint.reason == "the 1 at (2, 1) already touches 1 mine that the numbers prove"
    hint = best_hint(["1#", "11", "00"], 1)
    assert hint is not None and (hint.x, hint.y, hint.kind) == (1, 0, "mine")
    assert hint.mine_probability == 1.0
    # The only mine is already flagged: nothing is left to suggest.
    assert best_hint(["1F", "11", "00"], 1) is None
    hint = best_hint(["####", "#1##", "####"], 2)
    assert hint is not None and hint.kind == "guess"
    assert hint.mine_probability == pytest.approx(1 / 8)
    assert (hint.x, hint.y) == (0, 0)
    assert "12.5%" in hint.reason


def test_best_hint_guesses_away_from_numbers_when_that_is_safer() -> None:
    board = ["1#####", *["######"] * 5]
    hint = best_hint(board, 2)
    assert hint is not None and hint.kind == "guess"
    # One mine is among the 1's three neighbours; the other among the 32 other cells.
    assert hint.mine_probability == pytest.approx(1 / 32)
    # A corner has the fewest neighbours, so the best chance of an opening.
    assert (hint.x, hint.y) == (5, 0)


def test_best_hint_on_an_untouched_board() -> None:
    hint = best_hint(["####"] * 4, 3)
    assert hint is not None and hint.kind == "guess"
    assert hint.mine_probability == pytest.approx(3 / 16)
    assert (hint.x, hint.y) == (0, 0)


def test_safe_cell_existed() -> None:
    assert safe_cell_existed(["###", "121", "000"], 2)
    assert not safe_cell_existed(["1#", "1#"], 1)
    assert not safe_cell_existed(["##", "11", "00"], 1)


def test_malformed_and_impossible_views() -> None:
    with pytest.raises(ValueError):
        analyze(["##", "#"], 1)
    with pytest.raises(ValueError):
        analyze([], 1)
    with pytest.raises(ValueError):
        analyze(["#*", "##"], 1)
    with pytest.raises(ValueError):
        analyze(["#9", "##"], 1)
    with pytest.raises(InconsistentBoard):
        analyze(["#3", "##", "##"], 2)
    with pytest.raises(InconsistentBoard):
        analyze(["1#", "##"], 4)
    with pytest.raises(InconsistentBoard):
        analyze(["#2#", "000"], 1)


def test_a_component_over_budget_stays_sound() -> None:
    board = ["#3#", "3##", "##2"]
    a = analyze(board, 4, budget=0)
    assert not a.exact
    assert a.safe == [] and a.mines == []
    assert len(a.probabilities) == 6
    assert all(0.0 <= p.mine <= 1.0 for p in a.probabilities)


def test_analysis_is_deterministic() -> None:
    board = ["#3#", "3##", "##2"]
    assert analyze(board, 4) == analyze(board, 4)


def test_against_brute_force_on_random_positions() -> None:
    """Every claim is true in every layout, a stuck analysis misses no certain safe
    cell, and its odds are the exact share of layouts."""
    rng = SplitMix64(2024)
    kinds = {"progress": 0, "stuck": 0}
    for _ in range(400):
        w, h = 2 + rng.below(4), 2 + rng.below(3)
        n = w * h
        m = 1 + rng.below(max(1, n // 3))
        mines = np.zeros(n, dtype=bool)
        mines[rng.sample(list(range(n)), m)] = True
        counts = grid.counts(mines.reshape(h, w)).ravel()
        chars = [
            str(counts[i]) if not mines[i] and rng.below(2) else "#F?"[rng.below(3)]
            for i in range(n)
        ]
        board = ["".join(chars[r * w : (r + 1) * w]) for r in range(h)]
        a = analyze(board, m)
        _check_against_brute_force(board, m, a)
        kinds["stuck" if a.stuck else "progress"] += 1
    assert min(kinds.values()) > 50


# ---------------------------------------------------------------------------


def _layouts(board: list[str], mines: int) -> tuple[list[int], list[set[int]]]:
    h, w = len(board), len(board[0])
    flat = "".join(board)
    hidden = [i for i, ch in enumerate(flat) if ch in "#F?"]
    numbers = [(i, int(ch)) for i, ch in enumerate(flat) if ch.isdigit()]
    layouts = []
    for combo in itertools.combinations(hidden, mines):
        layout = np.zeros(w * h, dtype=bool)
        layout[list(combo)] = True
        counts = grid.counts(layout.reshape(h, w)).ravel()
        if all(counts[i] == n for i, n in numbers):
            layouts.append(set(combo))
    return hidden, layouts


def _check_against_brute_force(board: list[str], mines: int, a: Analysis) -> None:
    w = len(board[0])
    hidden, layouts = _layouts(board, mines)
    assert layouts, "the position is impossible"
    for x, y in a.safe:
        assert all(y * w + x not in lay for lay in layouts), (board, (x, y))
    for x, y in a.mines:
        assert all(y * w + x in lay for lay in layouts), (board, (x, y))
    if not a.stuck:
        return
    assert not [i for i in hidden if all(i not in lay for lay in layouts)], board
    odds = {p.y * w + p.x: p.mine for p in a.probabilities}
    for i in hidden:
        if (i % w, i // w) in a.mines:
            continue
        share = sum(i in lay for lay in layouts) / len(layouts)
        p = odds.get(i, a.interior)
        assert p is not None and p == pytest.approx(share, abs=1e-6), (board, i)
    assert _expected_mines(a) == pytest.approx(mines, abs=1e-4)


def _expected_mines(a: Analysis) -> float:
    interior = (a.interior or 0.0) * a.interior_cells
    return len(a.mines) + sum(p.mine for p in a.probabilities) + interior


# ---------------------------------------------------------------------------
# Guessing: forced guesses, the endgame, and the player that measures the hints


def _view_of(mines: set[Coord], w: int, h: int, revealed: set[Coord]) -> list[str]:
    layout = np.zeros((h, w), dtype=bool)
    for x, y in mines:
        layout[y, x] = True
    counts = grid.counts(layout)
    return [
        "".join(str(counts[y, x]) if (x, y) in revealed else "#" for x in range(w))
        for y in range(h)
    ]


def test_a_forced_guess_is_taken_first() -> None:
    # (0, 0) and (1, 0) share one mine, seen only by the 1 and the 3 below them:
    # no other cell can ever tell them apart. The open ground right of the wall
    # of mines is far safer, but its guesses may yet be avoided; this one never can.
    w, h = 9, 7
    wall = {(2, 0), (2, 1), *((4, y) for y in range(h))}
    revealed = {(x, y) for x in range(4) for y in range(h)} - wall - {(0, 0), (1, 0)}
    rows = [list(row) for row in _view_of({(0, 0), (6, 3), (7, 5)} | wall, w, h, revealed)]
    for x, y in wall:
        rows[y][x] = "F"
    board = ["".join(row) for row in rows]
    assert board[:2] == ["##F4F####", "13F5F####"]
    hint = best_hint(board, 12)
    assert hint is not None and hint.kind == "guess"
    assert (hint.x, hint.y) == (0, 0)
    assert hint.mine_probability == pytest.approx(0.5)
    assert "cannot be avoided" in hint.reason and "50%" in hint.reason
    # Once the pair is settled, the guess is in the open ground.
    rows[0][0], rows[0][1] = "F", "3"
    board = ["".join(row) for row in rows]
    hint = best_hint(board, 12)
    assert hint is not None and hint.kind == "guess" and hint.x >= 5


def test_a_cell_that_is_a_fifty_fifty_or_safe_is_taken_now() -> None:
    # Intermediate, met in play. The 4 at (1, 1) has three flags and one mine among
    # (0, 0), (1, 0) and (0, 2). When (0, 0) holds it, (1, 0) beside it is safe, and
    # the cells that could tell the two apart are flags or off the board: that 50/50
    # would have to be guessed some day. So (0, 0) is taken now, though it is not the
    # safest cell: the risk is one the game holds anyway, and if it is safe its number
    # says where the mine is.
    board = [
        "##F3110000001F10", "F4F3F10000001110", "#312222110000000", "#3101F2F21011100",
        "FF101122F101F100", "2210122211011100", "00002FF100001110", "01112F3111102F20",
        "01F111112F102F20", "24431001F2101110", "FFFF310111012221", "###FF1000002FF2F",
        "####32111234F432", "####22F11FFF22F1", "###1##2112321111", "######1000000000",
    ]
    hint = best_hint(board, 40)
    assert hint is not None and hint.kind == "guess"
    assert (hint.x, hint.y) == (0, 0)
    assert "can ever tell it from the one beside it" in hint.reason
    analysis = analyze(board, 40)
    safest = min([p.mine for p in analysis.probabilities] + [analysis.interior or 1.0])
    assert safest < hint.mine_probability < 0.5


def test_a_safer_cell_safe_whenever_the_guess_is_comes_first() -> None:
    # Beginner, after an opening of one 0. Safe (1, 1) would make (4, 1) certain,
    # which the look-ahead counts as progress; but (4, 1) is safe in every
    # arrangement where (1, 1) is, and safer: it is played first, and (1, 1) can
    # still follow if its number leaves it needed.
    board = ["#########", "#########", "##211####", "##101####", "##211####",
             *["#########"] * 4]
    hint = best_hint(board, 10)
    assert hint is not None and hint.kind == "guess"
    assert (hint.x, hint.y) == (4, 1)
    odds = {(p.x, p.y): p.mine for p in analyze(board, 10).probabilities}
    assert odds[(4, 1)] < odds[(1, 1)]
    # The implication, from every way to place mines on the ring around the numbers.
    ring = [(x, y) for y in range(1, 6) for x in range(1, 6) if not (2 <= x <= 4 and 2 <= y <= 4)]
    numbers = {(x, y): int(board[y][x]) for y in range(2, 5) for x in range(2, 5)}
    fits = 0
    for bits in range(1 << len(ring)):
        mines = {c for n, c in enumerate(ring) if bits >> n & 1}
        if all(
            sum((x + dx, y + dy) in mines for dx in (-1, 0, 1) for dy in (-1, 0, 1)) == v
            for (x, y), v in numbers.items()
        ) and (1, 1) not in mines:
            fits += 1
            assert (4, 1) not in mines
    assert fits > 0


def test_a_guess_says_what_it_can_open() -> None:
    # An expert opening with nothing certain: the reason gives the odds and the
    # chance that the number shown makes the next move certain.
    board = [
        "##############################",
        "##############################",
        "###1112#######################",
        "###1001#######################",
        "###1001#######################",
        "###2112#######################",
        *["#" * 30] * 10,
    ]
    hint = best_hint(board, 99)
    assert hint is not None and hint.kind == "guess"
    assert "chance of a mine" in hint.reason
    assert "next" in hint.reason
    assert 0.0 < hint.mine_probability < 0.5


def _reference_win(
    layouts: list[frozenset[int]], cells: list[int], w: int, h: int,
    memo: dict[frozenset[frozenset[int]], float] | None = None,
) -> float:
    """The best chance of winning, by plain recursion over sets of layouts."""
    if len(layouts) == 1:
        return 1.0
    memo = {} if memo is None else memo
    key = frozenset(layouts)
    if key in memo:
        return memo[key]
    best = 0.0
    for c in cells:
        safe = [lay for lay in layouts if c not in lay]
        if not safe:
            continue
        y, x = divmod(c, w)
        around = {
            ny * w + nx
            for ny in range(max(0, y - 1), min(h, y + 2))
            for nx in range(max(0, x - 1), min(w, x + 2))
        } - {c}
        parts: dict[int, list[frozenset[int]]] = {}
        for lay in safe:
            parts.setdefault(len(lay & around), []).append(lay)
        if len(parts) == 1 and len(safe) == len(layouts):
            continue
        got = sum(len(p) * _reference_win(p, cells, w, h, memo) for p in parts.values())
        best = max(best, got / len(layouts))
    memo[key] = best
    return best


def test_the_endgame_search_finds_the_best_chance_of_winning() -> None:
    from service.engine import endgame

    rng = SplitMix64(77)
    checked = 0
    while checked < 25:
        w, h = 2 + rng.below(3), 2 + rng.below(2)
        n = w * h
        m = 1 + rng.below(max(1, n // 3))
        mines = set(rng.sample(list(range(n)), m))
        # Reveal a few safe cells, as after some play.
        safe = [i for i in range(n) if i not in mines]
        shown = set(rng.sample(safe, rng.below(len(safe))))
        board = _view_of({(i % w, i // w) for i in mines}, w, h, {(i % w, i // w) for i in shown})
        hidden, found = _layouts(board, m)
        layouts = [frozenset(lay) for lay in found]
        if not 2 <= len(layouts) <= 40:
            continue
        table = np.zeros((len(layouts), len(hidden)), dtype=np.uint8)
        for a, lay in enumerate(layouts):
            for u, c in enumerate(hidden):
                table[a, u] = c in lay
        adj = np.zeros((len(hidden), len(hidden)), dtype=np.int16)
        for u, c in enumerate(hidden):
            for v, d in enumerate(hidden):
                if u != v and abs(c % w - d % w) <= 1 and abs(c // w - d // w) <= 1:
                    adj[u, v] = 1
        got = endgame.best_cell(table, (table.astype(np.int16) @ adj), list(range(len(hidden))))
        assert got is not None
        assert got[1] == pytest.approx(_reference_win(layouts, hidden, w, h)), board
        checked += 1


@pytest.mark.parametrize(("preset", "seeds", "start"), [
    ("beginner", range(12), "zero"),
    ("intermediate", range(6), "safe"),
    ("expert", range(2), "zero"),
])
def test_the_autoplayer_makes_exactly_the_guesses_of_best_hint(
    preset: str, seeds: range, start: str
) -> None:
    """The win-rate bench trusts the fast player to play as one following
    best_hint move by move: same guesses, same games won."""
    from service import engine
    from service.engine.autoplay import AutoPlayer

    settings = engine.preset(preset)
    for seed in seeds:
        x, y = (3, 3) if start == "zero" else (0, 0)
        game = engine.new_game(settings, seed=seed, now_ms=0, first_click=start)  # type: ignore[arg-type]
        game, _ = engine.reveal(game, x, y, 0)
        player = AutoPlayer(game)
        while player.step():
            pass
        guessed: list[int] = []
        while game.status == "playing":
            hint = best_hint(game.board(), game.mines)
            assert hint is not None
            if hint.kind == "mine":
                game, _ = engine.flag(game, hint.x, hint.y, 0, "flag")
                continue
            if hint.kind == "guess":
                guessed.append(hint.y * game.width + hint.x)
            game, _ = engine.reveal(game, hint.x, hint.y, 0)
        assert guessed == player.guessed, seed
        assert game.status == player.game.status


def test_the_autoplayer_tells_a_forced_guess_from_a_judgement() -> None:
    """What the win-rate bench's bound on perfect play rests on: a forced guess is
    not counted as a judgement; the first guess that is records the lowest chance of
    a mine on the board at that moment."""
    from service import engine
    from service.engine.autoplay import AutoPlayer

    # Two hidden cells over a row of 1s share the one mine: a forced 50/50.
    game = engine.new_game(engine.custom(2, 5, 1), seed=0, now_ms=0, first_click="none")
    mines = np.zeros((5, 2), dtype=bool)
    mines[0, 0] = True
    game = msgspec.structs.replace(game, layout=grid.pack(mines))
    game, _ = engine.reveal(game, 0, 4, 0)
    assert game.board() == ["##", "11", "00", "00", "00"]
    player = AutoPlayer(game)
    player.step()
    assert len(player.guessed) == 1 and player.judged is None

    # A corner that shows a number on an untouched expert board: every cell is a risk,
    # the safest of them (far from the number) about one in five.
    settings = engine.preset("expert")
    for seed in range(20):
        game = engine.new_game(settings, seed=seed, now_ms=0, first_click="safe")
        game, _ = engine.reveal(game, 0, 0, 0)
        if game.board()[0][0] != "0":
            break
    before = game.board()
    player = AutoPlayer(game)
    player.step()
    analysis = analyze(before, game.mines)
    lowest = min([p.mine for p in analysis.probabilities] + [analysis.interior or 1.0])
    assert player.judged == pytest.approx(lowest, abs=1e-6)
    assert 0.19 < lowest < 0.22
