"""No-guess boards: the solver wins every one from its first click, through the real game."""

from __future__ import annotations

import numpy as np
import pytest

from service.engine import InvalidSettings, Settings, custom, grid, new_game, preset, reveal
from service.engine.game import HIDDEN
from service.engine.noguess import (
    BUDGET,
    _Play,
    check_settings,
    generate,
    max_mines,
    plays_through,
)
from service.engine.placement import place, start_area
from service.engine.rng import SplitMix64
from service.engine.solver import Geometry, analyze, analyze_view

BOARDS = [
    ("beginner", preset("beginner"), 60),
    ("intermediate", preset("intermediate"), 30),
    ("expert", preset("expert"), 30),
    ("custom 20x12 at 20%", custom(20, 12, 48), 15),
    ("expert size at 30%", custom(30, 16, 144), 10),
    ("custom 32x32 at 35%", custom(32, 32, 358), 4),
    ("custom 8x30 at the density limit", custom(8, 30, 84), 15),
    ("custom 5x5 at the density limit", custom(5, 5, 8), 40),
    ("custom 4x4 at the density limit", custom(4, 4, 5), 40),
]


def first_click(settings: Settings, seed: int) -> tuple[int, int]:
    """Anywhere on the board, as players click: edges and corners included."""
    rng = SplitMix64(seed ^ 0xC11C)
    return rng.below(settings.width), rng.below(settings.height)


def play(settings: Settings, seed: int) -> int:
    """Play a no-guess game with nothing but the view and the solver; return the rounds."""
    x, y = first_click(settings, seed)
    game = new_game(settings, seed=seed, now_ms=0, no_guess=True)
    game, _ = reveal(game, x, y, 1)
    assert game.board()[y][x] == "0", "the first click opens an area"
    rounds = 0
    while game.status == "playing":
        analysis = analyze(game.board(), game.mines)
        assert analysis.safe, f"seed {seed}: the solver would have to guess:\n" + "\n".join(
            game.board()
        )
        for cx, cy in analysis.safe:
            if game.status != "playing":
                break
            game, _ = reveal(game, cx, cy, 2 + rounds)
            assert game.status != "lost", f"seed {seed}: ({cx}, {cy}) was called safe"
        rounds += 1
    assert game.status == "won"
    return rounds


@pytest.mark.parametrize(("name", "settings", "seeds"), BOARDS, ids=[b[0] for b in BOARDS])
def test_the_solver_wins_every_no_guess_board(name: str, settings: Settings, seeds: int) -> None:
    rounds = [play(settings, seed) for seed in range(seeds)]
    assert max(rounds) >= 1


@pytest.mark.parametrize(("name", "seeds"), [("beginner", 20), ("intermediate", 8), ("expert", 3)])
def test_a_player_revealing_one_safe_cell_at_a_time_also_wins(name: str, seeds: int) -> None:
    """Boards are built for a player who reveals every safe cell of each analysis; one
    who takes them one by one knows at least as much at each step, so wins too."""
    settings = preset(name)
    for seed in range(seeds):
        x, y = first_click(settings, seed)
        game = new_game(settings, seed=seed, now_ms=0, no_guess=True)
        game, _ = reveal(game, x, y, 1)
        while game.status == "playing":
            safe = analyze(game.board(), game.mines).safe
            assert safe, f"seed {seed}: stuck"
            game, _ = reveal(game, *safe[-1], 2)
        assert game.status == "won"


def test_a_large_custom_board() -> None:
    layout = generate(100, 100, 2000, 3, 97, 7)
    assert int(layout.sum()) == 2000
    assert plays_through(layout, 2000, 97 * 100 + 3)


def test_same_arguments_same_board() -> None:
    a = generate(30, 16, 99, 4, 9, 1234)
    b = generate(30, 16, 99, 4, 9, 1234)
    assert a.dtype == np.bool_ and a.shape == (16, 30)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, generate(30, 16, 99, 4, 9, 1235))
    assert not np.array_equal(a, generate(30, 16, 99, 5, 9, 1234))


def test_same_seed_same_game() -> None:
    boards = []
    for _ in range(2):
        game = new_game(preset("expert"), seed=99, now_ms=0, no_guess=True)
        game, _ = reveal(game, 15, 8, 1)
        boards.append((game.layout, game.board()))
    assert boards[0] == boards[1]


@pytest.mark.parametrize(("w", "h", "m"), [(9, 9, 10), (30, 16, 99), (4, 4, 4), (6, 5, 7)])
def test_the_start_is_an_opening_and_the_mine_count_exact(w: int, h: int, m: int) -> None:
    for seed in range(20):
        x, y = first_click(Settings(w, h, m), seed)
        layout = generate(w, h, m, x, y, seed)
        assert int(layout.sum()) == m
        assert not layout[max(0, y - 1) : y + 2, max(0, x - 1) : x + 2].any()


def test_check_settings_accepts_presets_and_large_custom_boards() -> None:
    for name in ("beginner", "intermediate", "expert"):
        s = preset(name)
        check_settings(s.width, s.height, s.mines)
    check_settings(100, 100, 2000)
    check_settings(100, 100, max_mines(100, 100))
    check_settings(30, 16, 144)
    check_settings(64, 64, 1433)
    check_settings(500, 500, 50_000)
    check_settings(4, 4, 1)


@pytest.mark.parametrize(
    ("w", "h", "m", "words"),
    [
        (9, 9, 30, "1 to 28 mines"),
        (32, 32, 400, "1 to 358 mines"),
        (65, 64, 1400, "1 to 1040 mines"),  # past 4,096 cells, the 25% tier
        (100, 100, 3000, "1 to 2500 mines"),
        (500, 500, 50_001, "1 to 50000 mines"),
        (30, 16, 0, "1 to 168 mines"),
        (3, 10, 2, "at least 4x4"),
        (600, 500, 100, "at most 250000 cells"),
    ],
)
def test_check_settings_rejects_what_cannot_be_promised(
    w: int, h: int, m: int, words: str
) -> None:
    with pytest.raises(InvalidSettings, match=words):
        check_settings(w, h, m)


def test_a_no_guess_game_checks_its_settings_up_front() -> None:
    with pytest.raises(InvalidSettings):
        new_game(custom(9, 9, 40), seed=1, now_ms=0, no_guess=True)
    with pytest.raises(InvalidSettings):
        generate(9, 9, 10, 9, 0, 1)


@pytest.mark.parametrize(
    ("w", "h", "density", "budget"),
    [(16, 16, 0.2, BUDGET), (30, 16, 0.21, BUDGET), (16, 16, 0.3, 3), (12, 12, 0.25, 0)],
)
def test_the_generators_player_is_exactly_a_player_asking_the_analysis(
    w: int, h: int, density: float, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generator trusts its incremental player to find, round after round, exactly
    the safe cells a fresh analysis of the view names. Checked on ordinary random
    layouts, guessing a safe cell whenever stuck to go on, and with tiny search
    budgets so that components over budget are covered too."""
    monkeypatch.setattr("service.engine.noguess.BUDGET", budget)
    m = int(w * h * density)
    rounds = 0
    for seed in range(12):
        rng = SplitMix64(seed)
        start = rng.below(h) * w + rng.below(w)
        layout = place(w, h, m, seed, start_area(w, h, start, "zero"))
        flat = layout.ravel()
        player = _Play(Geometry(w, h), bytearray(flat.astype(np.uint8).tobytes()), m, {})
        player.open([start])
        view = grid.open_from(np.full(w * h, HIDDEN, dtype=np.uint8), layout, [start])
        while player.left:
            found = player.round()
            expected = analyze_view(view.reshape(h, w), m, budget=budget)
            assert sorted(found) == sorted(cy * w + cx for cx, cy in expected.safe)
            rounds += 1
            if not found:
                hidden_safe = np.flatnonzero((view == HIDDEN) & ~flat).tolist()
                found = [hidden_safe[rng.below(len(hidden_safe))]]
            player.open(found)
            view = grid.open_from(view, layout, found)
            assert np.array_equal(view != HIDDEN, np.frombuffer(player.opened, dtype=bool))
    assert rounds > 100
