"""Playing in the browser: win, lose, flag, chord, the timer, the keyboard, a reload."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.web.support import ARTIFACTS, Api, Cell, mine_layout, neighbours, require_chromium

require_chromium()

from playwright.sync_api import expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

BEGINNER = {"width": 9, "height": 9, "mines": 10}
FIRST: Cell = (4, 4)


def seeded(
    api: Api, seed: int, settings: dict[str, Any] | None = None
) -> tuple[dict[str, Any], set[Cell]]:
    """Settings with a seed, and where that board's mines are after the first click."""
    full = {**(settings or BEGINNER), "seed": seed}
    return full, mine_layout(api, full, FIRST)


def open_seeded(api: Api, ms: Minesweeper, settings: dict[str, Any]) -> dict[str, Any]:
    game, token = api.create(**settings)
    ms.play(game["id"], token)
    return game


def safe_hidden(ms: Minesweeper, mines: set[Cell]) -> list[Cell]:
    w, _ = ms.size()
    return [
        (i % w, i // w)
        for i, s in enumerate(ms.states())
        if s == "#" and (i % w, i // w) not in mines
    ]


def chord_candidate(ms: Minesweeper, mines: set[Cell]) -> tuple[Cell, list[Cell], list[Cell]]:
    """A revealed number with a safe hidden neighbour: (cell, its mines, its safe hidden)."""
    w, h = ms.size()
    states = ms.states()
    for i, s in enumerate(states):
        if s not in "12345678":
            continue
        x, y = i % w, i // w
        around = neighbours(x, y, w, h)
        safe = [c for c in around if states[c[1] * w + c[0]] == "#" and c not in mines]
        if safe:
            return (x, y), [c for c in around if c in mines], safe
    raise AssertionError("no number with a safe hidden neighbour on this board")


def test_win_a_seeded_game_by_clicks(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    # A custom board with a seed, through the page's own dialog.
    ms.page.get_by_role("button", name="Custom…").click()
    dialog = ms.page.get_by_role("dialog", name="Custom board")
    dialog.get_by_label("Width").fill("9")
    dialog.get_by_label("Height").fill("9")
    dialog.get_by_label("Mines").fill("10")
    dialog.get_by_text("More options").click()
    dialog.get_by_label("Seed").fill("20240607")
    before = ms.game_id
    dialog.get_by_role("button", name="Start").click()
    expect(dialog).to_be_hidden()
    expect(ms.page).not_to_have_url(re.compile(before))
    assert ms.size() == (9, 9)
    assert ms.status() == "ready" and ms.mines_left() == 10 and ms.face() == "smile"

    _, mines = seeded(api, 20240607)
    assert len(mines) == 10
    ms.cell(*FIRST).click()
    ms.expect_state(*FIRST, "0")
    while todo := safe_hidden(ms, mines):
        x, y = todo[0]
        ms.cell(x, y).click()
        ms.expect_opened(x, y)

    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "won")
    result = ms.page.locator("#result")
    expect(result).to_be_visible()
    expect(result).to_contain_text("You won!")
    assert ms.face() == "win"
    assert ms.mines_left() == 0
    for x, y in mines:  # on a win every mine shows a flag
        ms.expect_state(x, y, "F")
    view = api.get(ms.game_id)
    stats = view["stats"]
    expect(result.locator('[data-stat="bbbv"] dd')).to_have_text(str(stats["bbbv"]))
    expect(result.locator('[data-stat="clicks"] dd')).to_contain_text(str(stats["clicks"]["total"]))
    expect(result.locator('[data-stat="efficiency"] dd')).to_have_text(
        f"{round(stats['efficiency'] * 100)}%"
    )
    expect(result.locator('[data-stat="bbbv-per-second"] dd')).to_have_text(
        f"{stats['bbbv_per_second']:.2f}"
    )
    seconds = view["elapsed_ms"] / 1000
    expect(result.locator('[data-stat="time"] dd')).to_have_text(f"{seconds:.3f} s")

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ms.page.screenshot(path=str(ARTIFACTS / "web-won.png"), full_page=True)


def test_lose_shows_every_mine_the_exploded_one_and_wrong_flags(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 777)
    open_seeded(api, ms, settings)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)

    flagged_mine = sorted(mines)[0]
    wrong = safe_hidden(ms, mines)[0]
    for cell in (flagged_mine, wrong):
        ms.cell(*cell).click(button="right")
        ms.expect_state(*cell, "F")
    assert ms.mines_left() == 8

    boom = sorted(mines)[-1]
    ms.cell(*boom).click()
    ms.expect_state(*boom, "X")
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "lost")
    ms.expect_state(*flagged_mine, "F")  # a right flag stays a flag
    ms.expect_state(*wrong, "!")  # a wrong one is shown as such
    for cell in mines - {boom, flagged_mine}:
        ms.expect_state(*cell, "*")
    assert ms.face() == "dead"
    result = ms.page.locator("#result")
    expect(result).to_be_visible()
    expect(result).to_contain_text("Boom! You hit a mine.")
    expect(ms.cell(*boom)).to_have_attribute("aria-label", re.compile("^exploded mine"))

    # Nothing moves after the end.
    other = safe_hidden(ms, mines)[0]
    ms.cell(*other).click()
    ms.page.wait_for_timeout(300)
    ms.expect_state(*other, "#")

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ms.page.screenshot(path=str(ARTIFACTS / "web-lost.png"), full_page=True)


def test_right_click_flags_without_a_context_menu(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 31337)
    open_seeded(api, ms, settings)
    ms.page.evaluate(
        "window.menus = []; addEventListener('contextmenu', e => menus.push(e.defaultPrevented))"
    )
    cell = (0, 0) if (0, 0) not in mines else (8, 8)
    # Flags go up before the first reveal too, and do not start the clock.
    ms.cell(*cell).click(button="right")
    ms.expect_state(*cell, "F")
    assert ms.mines_left() == 9
    expect(ms.cell(*cell)).to_have_attribute("aria-label", re.compile("^flagged"))
    assert ms.page.evaluate("menus") == [True]

    # A left click on a flag is ignored: no accidental reveal.
    ms.cell(*cell).click()
    ms.page.wait_for_timeout(300)
    ms.expect_state(*cell, "F")
    assert api.get(ms.game_id)["stats"]["clicks"]["reveal"] == 0
    assert ms.status() == "ready" and ms.timer() == 0

    ms.cell(*cell).click(button="right")
    ms.expect_state(*cell, "#")
    assert ms.mines_left() == 10
    view = api.get(ms.game_id)
    assert view["board"][cell[1]][cell[0]] == "#" and view["stats"]["clicks"]["flag"] == 2


def test_question_marks_cycle_when_enabled(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    before = ms.game_id
    ms.page.get_by_label("Question marks").check()
    ms.page.get_by_role("button", name="New game (F2)").click()
    expect(ms.page).not_to_have_url(re.compile(before))
    expect(ms.page.get_by_role("button", name="Beginner")).to_have_attribute("aria-pressed", "true")
    game = api.get(ms.game_id)
    assert game["question_marks"] is True
    for expected in ("F", "?", "#"):
        ms.cell(2, 2).click(button="right")
        ms.expect_state(2, 2, expected)


@pytest.mark.parametrize("how", ["click-number", "both-buttons", "middle-button", "key-c"])
def test_chord(api: Api, ms: Minesweeper, how: str) -> None:
    settings, mines = seeded(api, 4242)
    open_seeded(api, ms, settings)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    number, its_mines, safe = chord_candidate(ms, mines)
    for m in its_mines:
        ms.cell(*m).click(button="right")
        ms.expect_state(*m, "F")

    target = ms.cell(*number)
    if how == "click-number":
        target.click()
    elif how == "middle-button":
        target.click(button="middle")
    elif how == "both-buttons":
        box = target.bounding_box()
        assert box
        ms.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        ms.page.mouse.down(button="left")
        ms.page.mouse.down(button="right")
        # While both are held the block around the number shows pressed.
        for x, y in safe:
            expect(ms.cell(x, y)).to_have_class(re.compile(r"\bpressed\b"))
        ms.page.mouse.up(button="right")
        ms.page.mouse.up(button="left")
    else:
        target.focus()
        ms.page.keyboard.press("C")
    for x, y in safe:
        ms.expect_opened(x, y)
    clicks = api.get(ms.game_id)["stats"]["clicks"]
    assert clicks["chord"] >= 1
    for m in its_mines:
        ms.expect_state(*m, "F")


def test_a_number_without_enough_flags_does_not_chord(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 4242)
    open_seeded(api, ms, settings)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    number, _, safe = chord_candidate(ms, mines)
    ms.cell(*number).click()
    ms.page.wait_for_timeout(300)
    for x, y in safe:
        ms.expect_state(x, y, "#")
    assert api.get(ms.game_id)["stats"]["clicks"]["chord"] == 0


def test_c_and_f_on_an_open_number_with_nothing_left_say_so(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 4242)
    open_seeded(api, ms, settings)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    number, its_mines, safe = chord_candidate(ms, mines)
    for m in its_mines:
        ms.cell(*m).click(button="right")
        ms.expect_state(*m, "F")
    target = ms.cell(*number)
    target.focus()
    ms.page.keyboard.press("c")
    for x, y in safe:
        ms.expect_opened(x, y)

    announcer = ms.page.locator("#announcer")
    ms.page.keyboard.press("c")
    expect(announcer).to_have_text("Nothing left to open around this cell.")
    ms.page.keyboard.press("f")
    expect(announcer).to_have_text("This cell is open: only hidden cells take a flag.")
    assert api.get(ms.game_id)["stats"]["clicks"]["chord"] == 1


def test_timer_starts_on_the_first_reveal_and_stops_at_the_end(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 99)
    open_seeded(api, ms, settings)
    ms.page.wait_for_timeout(1300)
    assert ms.timer() == 0, "the clock must not run before the first reveal"

    # Read before the click: the server's clock starts after it, so a timer that counts
    # true seconds shows 2 no sooner than 2 s from here, however slow the answer.
    started = time.monotonic()
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    expect(ms.page.locator("#timer")).to_have_attribute("data-value", "1")
    expect(ms.page.locator("#timer")).to_have_attribute("data-value", "2")
    assert time.monotonic() - started >= 1.5

    boom = sorted(mines)[0]
    ms.cell(*boom).click()
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "lost")
    stopped = ms.elapsed_ms()
    final = api.get(ms.game_id)["elapsed_ms"]
    assert stopped == final, "the stopped clock shows the server's elapsed time"
    assert ms.timer() == final // 1000
    ms.page.wait_for_timeout(1500)
    assert ms.elapsed_ms() == stopped and ms.timer() == final // 1000


def test_timer_follows_the_server_clock_not_the_page_clock(
    api: Api, ms: Minesweeper, context: Any
) -> None:
    """A computer clock that is 20 minutes off does not change the time shown."""
    settings, _ = seeded(api, 99)
    game, token = api.create(**settings)
    api.move(game["id"], token, "reveal", *FIRST)
    context.add_init_script(
        "{ const skew = -20 * 60 * 1000; const real = Date.now.bind(Date);"
        "  Date.now = () => real() + skew; }"
    )
    ms.play(game["id"], token)
    elapsed = api.get(game["id"])["elapsed_ms"]
    shown = ms.elapsed_ms()
    # Off by no more than the time between the two readings, not by the 20 minutes.
    assert abs(shown - elapsed) < 10_000, (shown, elapsed)


def test_keyboard_play_wins_with_a_roving_tabindex(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 5150)
    open_seeded(api, ms, settings)
    page = ms.page
    focusable = page.locator('#board [tabindex="0"]')
    expect(focusable).to_have_count(1)

    # Tab reaches the grid once: the single focusable cell, in the middle.
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('role')") == "gridcell":
            break
    else:
        raise AssertionError("Tab never reached the minefield")
    pos = tuple(page.evaluate("(({dataset: d}) => [+d.x, +d.y])(document.activeElement)"))
    assert pos == FIRST
    expect(page.locator("#board [data-i]:focus")).to_have_attribute(
        "aria-label", "hidden, row 5, column 5"
    )

    def go(x: int, y: int) -> None:
        nonlocal pos
        dx, dy = x - pos[0], y - pos[1]
        for _ in range(abs(dx)):
            page.keyboard.press("ArrowRight" if dx > 0 else "ArrowLeft")
        for _ in range(abs(dy)):
            page.keyboard.press("ArrowDown" if dy > 0 else "ArrowUp")
        pos = (x, y)
        expect(page.locator("#board [data-i]:focus")).to_have_attribute("data-x", str(x))
        expect(page.locator("#board [data-i]:focus")).to_have_attribute("data-y", str(y))
        expect(focusable).to_have_count(1)

    page.keyboard.press("Space")
    ms.expect_opened(*FIRST)
    # Flag one mine with F, and chord with C where a number is satisfied.
    number, its_mines, safe = chord_candidate(ms, mines)
    for m in its_mines:
        go(*m)
        page.keyboard.press("f")
        ms.expect_state(*m, "F")
    go(*number)
    page.keyboard.press("c")
    for cell in safe:
        ms.expect_opened(*cell)
    # The rest with Enter.
    while todo := safe_hidden(ms, mines):
        go(*todo[0])
        page.keyboard.press("Enter")
        ms.expect_opened(*todo[0])
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "won")
    expect(page.locator("#result")).to_contain_text("You won!")
    expect(page.locator("#announcer")).to_contain_text("You won")

    # F2: a new game of the same size; the keyboard stays on the board, where it was.
    won = ms.game_id
    page.keyboard.press("F2")
    expect(page).not_to_have_url(re.compile(won))
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "ready")
    focused = page.locator("#board [data-i]:focus")
    expect(focused).to_have_attribute("data-x", str(pos[0]))
    expect(focused).to_have_attribute("data-y", str(pos[1]))
    page.keyboard.press("ArrowLeft" if pos[0] > 0 else "ArrowRight")
    expect(focusable).to_have_count(1)
    expect(page.locator('#board [tabindex="0"]:focus')).to_have_count(1)


def test_a_reload_keeps_playing_the_same_game(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    game_id = ms.game_id
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    board = ms.states()
    ms.page.reload()
    ms.wait_game(game_id)
    expect(ms.page.locator("#board [data-i]").first).to_be_attached()
    assert ms.states() == board
    expect(ms.page.locator("#watch-banner")).to_be_hidden()
    # The token survived: the page can still move.
    hidden = next(i for i, s in enumerate(board) if s == "#")
    x, y = hidden % 9, hidden // 9
    ms.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")
    # And the bare address comes back to the unfinished game too.
    ms.page.goto(ms.base_url + "/")
    ms.wait_game(game_id)


def test_the_face_starts_a_new_game_with_the_same_settings(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    ms.page.get_by_role("button", name="Expert").click()
    expect(ms.page.get_by_role("grid")).to_have_attribute("aria-colcount", "30")
    first = ms.game_id
    ms.cell(10, 8).click()
    ms.expect_opened(10, 8)
    # Pressing a hidden cell shows the face's "oh".
    box = ms.cell(0, 0).bounding_box()
    assert box
    ms.page.mouse.move(box["x"] + 5, box["y"] + 5)
    ms.page.mouse.down()
    if ms.state(0, 0) == "#":
        expect(ms.cell(0, 0)).to_have_class(re.compile(r"\bpressed\b"))
    assert ms.face() == "oh"
    ms.page.mouse.move(box["x"] - 40, box["y"] - 40)  # slide off: no reveal
    ms.page.mouse.up()
    assert ms.face() in ("smile", "win", "dead")

    ms.page.locator("#face").click()
    expect(ms.page).not_to_have_url(re.compile(first))
    assert ms.size() == (30, 16) and ms.status() == "ready" and ms.mines_left() == 99
    # The unfinished game is kept, and a toast offers the way back.
    ms.page.get_by_role("button", name="Back to it").click()
    ms.wait_game(first)
    ms.expect_opened(10, 8)


def test_play_again_gives_the_keyboard_to_the_new_board(api: Api, ms: Minesweeper) -> None:
    settings, mines = seeded(api, 778)
    open_seeded(api, ms, settings)
    first = ms.game_id
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    ms.cell(*sorted(mines)[0]).click()
    again = ms.page.locator("#result").get_by_role("button", name="Play again")
    expect(again).to_be_visible()

    # From the keyboard: the button goes with the result, and the focus goes to the board
    # of the new game, not to the page.
    again.focus()
    ms.page.keyboard.press("Enter")
    expect(ms.page).not_to_have_url(re.compile(first))
    expect(ms.page.locator("#result")).to_be_hidden()
    focused = ms.page.locator("#board [role=gridcell]:focus")
    expect(focused).to_have_count(1)
    x = int(focused.get_attribute("data-x") or "-1")
    ms.page.keyboard.press("ArrowLeft")  # the board has the keys
    expect(ms.page.locator("#board [role=gridcell]:focus")).to_have_attribute("data-x", str(x - 1))
    ms.page.keyboard.press("Space")  # a first click always opens an area
    frame = ms.page.locator("#frame")
    expect(frame).to_have_attribute("data-status", re.compile("^(playing|won)$"))


def test_the_keyboard_sees_its_keys_and_hears_of_a_new_game(ms: Minesweeper) -> None:
    """Played by keyboard, the line under the controls names the keys (otherwise only in
    the closed "How to play"); F2's new board looks like the last one, so it is said."""
    ms.goto()
    page = ms.page
    idle = page.locator("#notes-idle")
    expect(idle).to_have_text("Click opens, right click flags; Ctrl + wheel zooms.")
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('role')") == "gridcell":
            break
    else:
        raise AssertionError("Tab never reached the minefield")
    keys = r"^Space or Enter opens, F flags, C chords, H hint, P pause;"
    expect(idle).to_have_text(re.compile(keys))
    expect(idle).to_be_in_viewport()
    before = ms.game_id
    page.keyboard.press("F2")
    expect(page).not_to_have_url(re.compile(before))
    expect(page.locator("#announcer")).to_have_text("New game: beginner, 9 by 9, 10 mines.")
