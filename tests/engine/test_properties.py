"""Properties of the engine over random boards, seeds and move sequences.

The expected results here come from small, obviously correct references
written below (a breadth-first flood fill, a plain neighbour count), never
from the engine's own NumPy code.

Example counts come from the ``engine`` Hypothesis profile, sized so the whole
engine suite stays well under a minute on two cores. Set
``ENGINE_HYPOTHESIS_PROFILE=engine-thorough`` for a longer search.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable

import msgspec
import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from service import engine
from service.engine import ChangedCell, Game, codec, grid, placement
from service.engine.rng import SplitMix64
from service.engine.text import dump, load

settings.register_profile(
    "engine",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "engine-thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Applied per test rather than loaded globally, so other suites keep their own settings.
PROFILE = settings.get_profile(os.environ.get("ENGINE_HYPOTHESIS_PROFILE", "engine"))

DIGITS = frozenset("012345678")
PLAYER_CHARS = frozenset("#F?") | DIGITS
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
NOW = 1_000


# ---- references ---------------------------------------------------------------------------


def mine_list(game: Game) -> list[bool]:
    n = game.width * game.height
    return [bool(game.layout[i // 8] & (0x80 >> (i % 8))) for i in range(n)]


def around(i: int, w: int, h: int) -> list[int]:
    y, x = divmod(i, w)
    return [
        (y + dy) * w + (x + dx)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if (dx or dy) and 0 <= x + dx < w and 0 <= y + dy < h
    ]


def mine_count(i: int, mines: list[bool], w: int, h: int) -> int:
    return sum(mines[n] for n in around(i, w, h))


def flood(view: str, mines: list[bool], w: int, h: int, starts: Iterable[int]) -> set[int]:
    """Cells a reveal of ``starts`` opens: a plain breadth-first search through hidden cells."""
    opened: set[int] = set()
    queue = deque(s for s in starts if view[s] == "#" and not mines[s])
    while queue:
        i = queue.popleft()
        if i in opened:
            continue
        opened.add(i)
        if mine_count(i, mines, w, h) == 0:
            queue.extend(n for n in around(i, w, h) if view[n] == "#" and n not in opened)
    return opened


def reference_bbbv(mines: list[bool], w: int, h: int) -> int:
    zero = [not m and mine_count(i, mines, w, h) == 0 for i, m in enumerate(mines)]
    seen: set[int] = set()
    openings = 0
    for start, is_zero in enumerate(zero):
        if not is_zero or start in seen:
            continue
        openings += 1
        stack = [start]
        seen.add(start)
        while stack:
            for n in around(stack.pop(), w, h):
                if zero[n] and n not in seen:
                    seen.add(n)
                    stack.append(n)
    lone = sum(
        1
        for i, m in enumerate(mines)
        if not m and not zero[i] and not any(zero[n] for n in around(i, w, h))
    )
    return openings + lone


def view_of(game: Game) -> str:
    return "".join(game.board())


# ---- strategies ---------------------------------------------------------------------------


@st.composite
def new_games(draw: st.DrawFn, max_side: int = 9) -> Game:
    w = draw(st.integers(2, max_side))
    h = draw(st.integers(2, max_side))
    assume(w * h >= 10)
    mines = draw(st.integers(1, w * h - 9))
    return engine.new_game(
        engine.custom(w, h, mines),
        seed=draw(SEEDS),
        now_ms=0,
        first_click=draw(st.sampled_from(["zero", "safe", "none"])),
        question_marks=draw(st.booleans()),
    )


@st.composite
def states(draw: st.DrawFn) -> Game:
    """Any board a game could show, mines and marks anywhere, numbers correct."""
    w = draw(st.integers(2, 9))
    h = draw(st.integers(2, 9))
    mines = draw(st.lists(st.integers(0, 4).map(lambda v: v == 0), min_size=w * h, max_size=w * h))
    assume(any(mines) and not all(mines))
    rows: list[str] = []
    for y in range(h):
        row = []
        for x in range(w):
            i = y * w + x
            if mines[i]:
                row.append(draw(st.sampled_from("mmmFQ")))
            else:
                kind = draw(st.sampled_from("...nnfq"))
                row.append(str(mine_count(i, mines, w, h)) if kind == "n" else kind)
        rows.append("".join(row))
    safe_left = any(c in ".fq" for row in rows for c in row)
    assume(safe_left)
    return load("question_marks=1 first_click=none\n" + "\n".join(rows))


# ---- one move, checked ------------------------------------------------------------------


def expected_open(
    view: str, mines: list[bool], w: int, h: int, action: str, i: int
) -> tuple[set[int], set[int]]:
    """(safe cells opened, mines hit) by a reveal or a chord at ``i``, from the references."""
    if action == "reveal":
        targets = [i] if view[i] == "#" else []
    else:
        near = around(i, w, h)
        flagged = sum(view[n] == "F" for n in near)
        if view[i] in DIGITS and view[i] != "0" and flagged == int(view[i]):
            targets = [n for n in near if view[n] == "#"]
        else:
            targets = []
    return flood(view, mines, w, h, targets), {t for t in targets if mines[t]}


def apply_diff(view: str, diff: list[ChangedCell], w: int) -> str:
    cells = list(view)
    for x, y, char in diff:
        cells[y * w + x] = char
    return "".join(cells)


def check_state(game: Game) -> None:
    """What must hold of any snapshot the engine hands out."""
    view = view_of(game)
    w, h = game.width, game.height
    assert codec.decode(codec.encode(game)) == game
    assert load(dump(game)) == game
    if not game.placed:
        assert set(view) <= {"#", "F", "?"}
        assert game.status == "ready"
        assert game.flags == view.count("F")
        return
    mines = mine_list(game)
    assert sum(mines) == game.mines
    assert game.bbbv == reference_bbbv(mines, w, h)
    # The count a move keeps is the one counted from the whole board.
    recount = msgspec.structs.replace(game, bbbv_done=None)
    assert game.bbbv_done is None or game.bbbv_done == engine.bbbv_done(recount)
    all_safe_open = all(view[i] in DIGITS for i in range(w * h) if not mines[i])
    assert (game.status == "won") == all_safe_open
    closed_safe = sum(1 for i in range(w * h) if not mines[i] and view[i] not in DIGITS)
    assert game.hidden_safe == closed_safe
    for i, ch in enumerate(view):
        if ch in DIGITS:
            assert not mines[i]
            assert int(ch) == mine_count(i, mines, w, h)
    if not game.finished:
        assert set(view) <= PLAYER_CHARS
        assert game.flags == view.count("F")
        assert game.mines_left == game.mines - view.count("F")
        assert game.ended_at is None
    elif game.status == "won":
        assert game.mines_left == 0
        assert all(view[i] == "F" for i in range(w * h) if mines[i])
    else:
        assert "X" in view
        for i, ch in enumerate(view):
            if ch in "X*":
                assert mines[i]
            if ch == "!":
                assert not mines[i]


def checked(game: Game, move: engine.Move, now: int = NOW) -> tuple[Game, list[ChangedCell]]:
    """Apply ``move`` and check everything a single move must keep."""
    stored = codec.encode(game)
    before = view_of(game)
    i = move.y * game.width + move.x
    new, diff = engine.apply(game, move, now)
    assert codec.encode(game) == stored, "the input snapshot changed"

    after = view_of(new)
    assert apply_diff(before, diff, game.width) == after
    assert len({(x, y) for x, y, _ in diff}) == len(diff)
    assert all(type(x) is int and type(y) is int and len(c) == 1 for x, y, c in diff)
    assert new.version == game.version + (1 if diff else 0)
    assert new.clicks.total == game.clicks.total + 1
    assert new.clicks.useful == game.clicks.useful + (1 if diff else 0)

    # Server time: the clock starts with the first move that opens something.
    starts = game.started_at is None and bool(diff) and move.action != "flag"
    assert new.started_at == (now if starts else game.started_at)
    assert new.ended_at == (now if new.finished else None)
    if new.status == "lost":
        # The loss board: every mine shows, flags are judged, marks on safe cells stay.
        mines = mine_list(new)
        for j, (b, a) in enumerate(zip(before, after, strict=True)):
            if mines[j]:
                assert a == ("F" if b == "F" else "X" if a == "X" else "*")
            elif b == "F":
                assert a == "!"
            elif b == "?":
                assert a == "?"

    if move.action == "flag":
        assert len(diff) <= 1
        assert all((x, y) == (move.x, move.y) for x, y, _ in diff)
    elif new.placed:
        # The mines come from the new snapshot: a first reveal places them just now.
        mines = mine_list(new)
        opened, hit = expected_open(before, mines, game.width, game.height, move.action, i)
        digits_before = {j for j, c in enumerate(before) if c in DIGITS}
        digits_after = {j for j, c in enumerate(after) if c in DIGITS}
        assert digits_after == digits_before | opened
        assert {j for j, c in enumerate(after) if c == "X"} == hit
        assert (new.status == "lost") == bool(hit)
        if not new.finished:
            # Nothing but opening touches a cell while the game goes on.
            for j, (b, a) in enumerate(zip(before, after, strict=True)):
                if b != a:
                    assert j in opened
    check_state(new)
    if diff:
        event(f"{move.action} changed {'one cell' if len(diff) == 1 else 'cells'}")
    if new.finished:
        event(f"{move.action} ended the game: {new.status}")
    return new, diff


def _chord_would_open(view: str, i: int, w: int, h: int) -> bool:
    near = around(i, w, h)
    flags = sum(view[n] == "F" for n in near)
    return flags == int(view[i]) and any(view[n] == "#" for n in near)


@st.composite
def moves(draw: st.DrawFn, game: Game) -> engine.Move:
    """A move aimed at cells where something can happen, now and then anywhere."""
    w, h = game.width, game.height
    view = view_of(game)
    mines = mine_list(game) if game.placed else [False] * (w * h)
    hidden_safe = [i for i, c in enumerate(view) if c == "#" and not mines[i]]
    hidden_mines = [i for i, c in enumerate(view) if c in "#?" and mines[i]]
    numbers = [i for i, c in enumerate(view) if c in DIGITS and c != "0"]
    near_numbers = {n for i in numbers for n in around(i, w, h)}
    pools = {
        "anywhere": list(range(w * h)),
        "safe": hidden_safe,
        "mine": hidden_mines,
        "wrong flag": [i for i in hidden_safe if i in near_numbers],
        "number": numbers,
        "chord": [i for i in numbers if _chord_would_open(view, i, w, h)],
    }
    kind = draw(st.sampled_from([k for k, v in pools.items() if v]))
    i = draw(st.sampled_from(pools[kind]))
    x, y = i % w, i // w
    if kind in ("mine", "wrong flag"):
        return engine.Move("flag", x, y, "flag")
    if kind in ("number", "chord"):
        return engine.Move("chord", x, y)
    action = draw(st.sampled_from(["reveal", "reveal", "flag", "chord"]))
    if action != "flag":
        return engine.Move(action, x, y)
    marks: list[engine.Mark | None] = [None, None, "flag", "none"]
    if game.question_marks:
        marks.append("question")
    return engine.Move("flag", x, y, draw(st.sampled_from(marks)))


# ---- properties ---------------------------------------------------------------------------


@PROFILE
@given(st.data(), new_games())
def test_random_play_keeps_every_invariant(data: st.DataObject, game: Game) -> None:
    check_state(game)
    for step in range(data.draw(st.integers(1, 40), label="moves")):
        if game.finished:
            break
        move = data.draw(moves(game), label="move")
        game, _ = checked(game, move, now=NOW * (step + 1))
    if game.finished:
        stored = codec.encode(game)
        for action in ("reveal", "flag", "chord"):
            try:
                engine.apply(game, engine.Move(action, 0, 0), NOW)  # type: ignore[arg-type]
            except engine.GameOver:
                pass
            else:
                raise AssertionError(f"{action} after the end was accepted")
        assert codec.encode(game) == stored


@PROFILE
@given(st.data(), states())
def test_reveal_matches_a_reference_flood_fill(data: st.DataObject, game: Game) -> None:
    view = view_of(game)
    hidden = [i for i, c in enumerate(view) if c == "#"]
    assume(hidden)
    i = data.draw(st.sampled_from(hidden))
    checked(game, engine.Move("reveal", i % game.width, i // game.width))


@PROFILE
@given(st.data(), states())
def test_chord_matches_the_reference(data: st.DataObject, game: Game) -> None:
    view = view_of(game)
    w, h = game.width, game.height
    mines = mine_list(game)
    numbers = [i for i, c in enumerate(view) if c in DIGITS]
    assume(numbers)
    i = data.draw(st.sampled_from(numbers))
    # Most random boards give a chord nothing to do; flag the right count often enough,
    # sometimes on the wrong cells.
    if data.draw(st.booleans(), label="set up flags"):
        cells = list(view)
        near = around(i, w, h)
        hidden = [n for n in near if cells[n] in "#?"]
        needed = int(view[i]) - sum(cells[n] == "F" for n in near)
        wrong = data.draw(st.booleans(), label="wrong flags")
        hidden.sort(key=lambda n: mines[n] == wrong)
        for n in hidden[: max(0, needed)]:
            cells[n] = "F"
        game = msgspec.structs.replace(
            game, cells="".join(cells).encode(), flags=cells.count("F")
        )
    checked(game, engine.Move("chord", i % w, i // w))


@PROFILE
@given(
    w=st.integers(2, 30),
    h=st.integers(2, 30),
    seed=SEEDS,
    first_click=st.sampled_from(["zero", "safe", "none"]),
    data=st.data(),
)
def test_first_click_rule(
    w: int, h: int, seed: int, first_click: engine.FirstClick, data: st.DataObject
) -> None:
    assume(w * h >= 10)
    m = data.draw(st.integers(1, w * h - 9), label="mines")
    x = data.draw(st.integers(0, w - 1), label="x")
    y = data.draw(st.integers(0, h - 1), label="y")
    game = engine.new_game(engine.custom(w, h, m), seed=seed, now_ms=0, first_click=first_click)
    assert game.placed == (first_click == "none")
    new, _ = engine.reveal(game, x, y, NOW)
    mines = mine_list(new)
    assert sum(mines) == m
    i = y * w + x
    if first_click == "zero":
        assert not any(mines[n] for n in [i, *around(i, w, h)])
        assert new.board()[y][x] == "0"
    elif first_click == "safe":
        assert not mines[i]
        assert new.status != "lost"
    else:
        assert new.layout == game.layout
    # Same seed, settings and first click: the same board, every time.
    again, _ = engine.reveal(
        engine.new_game(engine.custom(w, h, m), seed=seed, now_ms=5, first_click=first_click),
        x, y, NOW + 1,
    )
    assert again.layout == new.layout
    assert again.cells == new.cells


def reference_place(width: int, height: int, mines: int, seed: int, keep: set[int]) -> list[bool]:
    """The placement rule as a plain loop over single draws of the seeded generator."""
    cells = width * height
    rng = SplitMix64(seed)
    free = cells - len(keep)
    dense = mines * 2 > free
    wanted = free - mines if dense else mines
    chosen: set[int] = set()
    while len(chosen) < wanted:
        i = rng.below(cells)
        if i not in keep:
            chosen.add(i)
    return [i not in keep and ((i in chosen) != dense) for i in range(cells)]


@PROFILE
@given(
    w=st.integers(2, 60),
    h=st.integers(2, 60),
    seed=SEEDS,
    first_click=st.sampled_from(["zero", "safe", "none"]),
    data=st.data(),
)
def test_placement_matches_the_plain_loop(
    w: int, h: int, seed: int, first_click: engine.FirstClick, data: st.DataObject
) -> None:
    assume(w * h >= 10)
    m = data.draw(st.integers(1, w * h - 9), label="mines")
    start = data.draw(st.integers(0, w * h - 1), label="start")
    keep = placement.start_area(w, h, start, first_click)
    board = placement.place(w, h, m, seed, keep)
    assert board.shape == (h, w)
    assert int(board.sum()) == m
    assert board.ravel().tolist() == reference_place(w, h, m, seed, keep)


def test_placement_matches_the_plain_loop_on_a_big_board() -> None:
    keep = placement.start_area(400, 400, 1234, "zero")
    for mines in (1, 30_000, 79_000, 120_000):
        board = placement.place(400, 400, mines, 99, keep)
        assert board.ravel().tolist() == reference_place(400, 400, mines, 99, keep)


def test_bulk_draws_continue_the_single_draw_stream() -> None:
    one, many = SplitMix64(12345), SplitMix64(12345)
    singles = [one.next64() for _ in range(1000)]
    assert many.next64_many(600).tolist() + many.next64_many(400).tolist() == singles
    assert one.next64() == many.next64()
    # Values of n near 2**64 make about half the raw draws rejected.
    for n in (1, 7, 480, 2**40 + 3, 2**63, 2**63 + 1, 3 * 2**62 + 5):
        a, b = SplitMix64(n), SplitMix64(n)
        values = b.below_many(n, 500).tolist()
        assert [a.below(n) for _ in range(len(values))] == values


@PROFILE
@given(st.data(), new_games())
def test_the_view_before_the_end_is_the_same_for_any_seed(
    data: st.DataObject, game: Game
) -> None:
    """Flags before the first reveal show nothing of where the mines will go."""
    other = engine.new_game(
        engine.Settings(game.width, game.height, game.mines),
        seed=data.draw(SEEDS, label="other seed"),
        now_ms=0,
        first_click=game.first_click,
        question_marks=game.question_marks,
    )
    for _ in range(data.draw(st.integers(0, 8), label="flags")):
        x = data.draw(st.integers(0, game.width - 1))
        y = data.draw(st.integers(0, game.height - 1))
        game, d1 = engine.flag(game, x, y, NOW)
        other, d2 = engine.flag(other, x, y, NOW)
        assert d1 == d2
    assert game.board() == other.board()
    assert game.mines_left == other.mines_left
    assert game.started_at is None


@PROFILE
@given(st.data(), new_games())
def test_snapshots_round_trip(data: st.DataObject, game: Game) -> None:
    for _ in range(data.draw(st.integers(0, 6))):
        if game.finished:
            break
        game, _ = engine.apply(game, data.draw(moves(game)), NOW)
        assert codec.decode(codec.encode(game)) == game
        assert load(dump(game)) == game


@PROFILE
@given(st.lists(st.integers(0, 4).map(lambda v: v == 0), min_size=4, max_size=144), st.data())
def test_bbbv_matches_the_reference(cells: list[bool], data: st.DataObject) -> None:
    w = data.draw(st.integers(2, max(2, len(cells) // 2)))
    h = len(cells) // w
    assume(h >= 2)
    mines = cells[: w * h]
    board = np.array(mines, dtype=bool).reshape(h, w)
    assert grid.bbbv(board) == reference_bbbv(mines, w, h)


def test_a_big_change_is_listed_as_runs_that_rebuild_the_board() -> None:
    game = engine.new_game(engine.custom(100, 60, 30), seed=7, now_ms=NOW)
    opened, cells = engine.reveal(game, 50, 30, NOW)
    changed = sum(a != b for a, b in zip(game.cells, opened.cells, strict=True))
    assert changed > grid.RUNS_FROM
    assert len(cells) < changed / 10, "a cascade's changes run along its rows"
    assert_runs_rebuild(game.cells, cells, opened.cells, game.width)


def assert_runs_rebuild(before: bytes, cells: list[ChangedCell], after: bytes,
                        width: int) -> None:
    board = bytearray(before)
    last = -1
    for x, y, chars in cells:
        start = y * width + x
        assert start >= last and x + len(chars) <= width, "in board order, within a row"
        assert board[start] != ord(chars[0]) and board[start + len(chars) - 1] != ord(
            chars[-1]), "a run starts and ends on a changed cell"
        stretch = longest = 0
        for i, c in enumerate(chars):
            stretch = stretch + 1 if board[start + i] == ord(c) else 0
            longest = max(longest, stretch)
        assert longest <= grid.BRIDGE, "a run bridges only short gaps"
        board[start : start + len(chars)] = chars.encode()
        last = start + len(chars)
    assert bytes(board) == after


def test_a_lost_game_on_the_largest_board_fits_a_1_mib_message() -> None:
    """A loss shows every mine: scattered single cells, which runs bridge."""
    game = engine.new_game(engine.custom(1000, 1000, 300_000), seed=7, now_ms=NOW)
    game, _ = engine.reveal(game, 500, 500, NOW)
    mine = int(np.flatnonzero(grid.unpack(game.layout, 1000, 1000))[0])
    lost, cells = engine.reveal(game, mine % 1000, mine // 1000, NOW)
    assert lost.status == "lost"
    assert len(msgspec.json.encode(cells)) < 2**20
    assert_runs_rebuild(game.cells, cells, lost.cells, 1000)
