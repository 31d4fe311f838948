"""Board settings, new games, and the text form's round trip on the awkward cases."""

from __future__ import annotations

import pytest

from service import engine
from service.engine import InvalidSettings, custom, new_game, preset
from service.engine.text import board_text, dump, load


@pytest.mark.parametrize(
    ("name", "size"),
    [("beginner", (9, 9, 10)), ("intermediate", (16, 16, 40)), ("expert", (30, 16, 99))],
)
def test_presets(name: str, size: tuple[int, int, int]) -> None:
    s = preset(name)
    assert (s.width, s.height, s.mines) == size
    assert s.preset == name


def test_unknown_preset_names_the_choices() -> None:
    with pytest.raises(InvalidSettings, match="beginner, intermediate, expert"):
        preset("insane")


@pytest.mark.parametrize(
    ("width", "height", "mines", "message"),
    [
        (1, 10, 1, "at least 2x2"),
        (10, 1, 1, "at least 2x2"),
        (3, 3, 1, "no room"),
        (10, 10, 0, "1 to 91 mines, not 0"),
        (10, 10, 92, "1 to 91 mines, not 92"),
        (1001, 1000, 1, "limit is 1000000"),
    ],
)
def test_impossible_boards_are_refused_precisely(
    width: int, height: int, mines: int, message: str
) -> None:
    with pytest.raises(InvalidSettings, match=message):
        custom(width, height, mines)


def test_board_limits() -> None:
    assert custom(2, 5, 1).mines == 1
    assert custom(10, 10, 91).mines == 91
    assert custom(1000, 1000, 1).width == 1000
    with pytest.raises(InvalidSettings):
        custom(20, 20, 1, max_cells=399)


def test_a_new_game_is_hidden_and_ready() -> None:
    g = new_game(preset("expert"), seed=7, now_ms=123)
    assert g.status == "ready"
    assert g.version == 0
    assert g.created_at == 123
    assert g.started_at is None
    assert g.board() == ["#" * 30] * 16
    assert g.mines_left == 99
    assert not g.placed
    assert g.bbbv == 0


def test_first_click_none_places_mines_at_creation() -> None:
    g = new_game(preset("beginner"), seed=7, now_ms=0, first_click="none")
    assert g.placed
    assert g.status == "ready"
    assert g.bbbv > 0


def test_seed_is_kept_but_never_in_the_view() -> None:
    g = new_game(preset("beginner"), seed=2**64 - 1, now_ms=0)
    assert g.seed == 2**64 - 1
    assert str(g.seed) not in "".join(g.board())


def test_a_new_game_dump_loads_back() -> None:
    g = new_game(preset("beginner"), seed=3, now_ms=5)
    assert "version=0" in dump(g)
    assert load(dump(g)) == g


def test_a_lost_game_keeps_its_wrong_flags_in_the_count() -> None:
    g = load("F1000\n12110\n01m10\n01121\n000fm")
    g, _ = engine.reveal(g, 4, 4, 1000)
    assert g.status == "lost"
    assert board_text(g).split()[4] == "000!X"
    assert g.flags == 2
    assert load(dump(g)) == g


def test_text_refuses_a_wrong_number() -> None:
    with pytest.raises(ValueError, match="shows 2, not 1"):
        load("m2\n..")


def test_text_refuses_ragged_rows() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        load("m..\n..")
