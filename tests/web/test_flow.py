"""What a player sees around the board, on a desktop and on a phone: the end of a game in
view (a ranked win's too), a board that stays put while the game goes on, a skip link that
keeps the game, notices that cover no control, switches that reach an untouched board,
counters past 999 and a spectator told about hints."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service.api.held import FASTEST_MEDIAN_GAP_MS, HUMAN_BBBV_PER_S
from tests.support.play import stored_mines
from tests.web.support import DEVICES, Api, Box, Cell, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import Browser, Locator, Page, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

FIRST = {"beginner": (4, 4), "intermediate": (8, 8), "expert": (15, 8)}


@pytest.fixture
def device_ms(browser: Browser, live_server: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Open pages the size of ``device`` ("phone" or "desktop")."""
    contexts = []
    pages: list[Minesweeper] = []

    def make(device: str, **extra: Any) -> Minesweeper:
        ctx = browser.new_context(**DEVICES[device], **extra)
        ctx.set_default_timeout(15_000)
        contexts.append(ctx)
        ms = Minesweeper(ctx.new_page(), live_server)
        pages.append(ms)
        return ms

    yield make
    for ctx in contexts:
        ctx.close()
    for ms in pages:
        assert not ms.errors, f"errors in the page: {ms.errors}"


def box(locator: Locator) -> Box:
    b = locator.bounding_box()
    assert b, locator
    return b


def viewport(page: Page) -> tuple[int, int]:
    size: list[int] = page.evaluate("[innerWidth, innerHeight]")
    return size[0], size[1]


def expect_in_view(locator: Locator) -> None:
    """Visible, and wholly inside the window: seen without scrolling."""
    expect(locator).to_be_visible()
    w, h = viewport(locator.page)
    b = box(locator)
    assert b["x"] >= 0 and b["y"] >= 0, (locator, b)
    assert b["x"] + b["width"] <= w + 0.5 and b["y"] + b["height"] <= h + 0.5, (locator, b, w, h)


def expect_uncovered(locator: Locator) -> None:
    """In view, and what a tap at its middle lands on is it: nothing lies over it."""
    expect_in_view(locator)
    b = box(locator)
    on_top = locator.evaluate(
        "(el, [x, y]) => el.contains(document.elementFromPoint(x, y))",
        [b["x"] + b["width"] / 2, b["y"] + b["height"] / 2],
    )
    assert on_top, locator


def inner(a: Box, b: Box) -> None:
    """Box ``a`` lies wholly inside box ``b``."""
    assert b["x"] <= a["x"] and a["x"] + a["width"] <= b["x"] + b["width"] + 0.5, (a, b)
    assert b["y"] <= a["y"] and a["y"] + a["height"] <= b["y"] + b["height"] + 0.5, (a, b)


def overlap(a: Box, b: Box) -> bool:
    return (
        a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]
    )


def board_boxes(ms: Minesweeper) -> list[Box]:
    """Where the board and two of its cells are on the screen."""
    return [box(ms.page.locator("#frame")), box(ms.grid), box(ms.cell(0, 0)), box(ms.cell(1, 1))]


# ---- 1. the end of a game is seen without scrolling ----------------------------------------


@pytest.mark.parametrize("level", ["beginner", "intermediate", "expert"])
@pytest.mark.parametrize("device", ["desktop", "laptop", "phone"])
def test_the_end_of_a_game_is_in_view(api: Api, device_ms: Any, device: str, level: str) -> None:
    settings = {"preset": level, "seed": 1601}
    mines = mine_layout(api, settings, FIRST[level])
    game, token = api.create(**settings)
    api.move(game["id"], token, "reveal", *FIRST[level])
    ms = device_ms(device)
    ms.play(game["id"], token)
    ms.expect_opened(*FIRST[level])

    api.move(game["id"], token, "reveal", *sorted(mines)[0])
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "lost")
    result = ms.page.locator("#result")
    expect(result).to_contain_text("Boom! You hit a mine.")
    assert ms.page.evaluate("scrollY") == 0
    expect_in_view(result)
    # Its stats are filled in (the time, 3BV, ...) and fit the window too.
    expect(result.locator("#result-stats dt")).not_to_have_count(0)
    expect_in_view(result.locator("#result-stats"))
    for name in ("Play again", "Watch replay"):
        expect_in_view(result.get_by_role("button", name=name))
    expect_in_view(ms.page.locator("#face"))
    # Every mine is seen beside the result: the whole board, its last row too.
    whole_board_in_view(ms)
    # The zoom bar's labels are read whole.
    for label in ms.page.locator(".viewbar > *").all():
        if label.is_visible():
            expect_in_view(label)
            assert label.evaluate("e => e.scrollWidth <= e.clientWidth"), label.inner_text()


def daily_mines(api: Api, redis_url: str, preset: str) -> set[Cell]:
    """Where the mines of today's daily board are: the same for everyone, and kept from
    every player until the day is over, so read from a game of it as stored."""
    game, _ = api.create(daily=preset)
    return stored_mines(redis_url, game["id"])


def open_daily(ms: Minesweeper, preset: str) -> None:
    """Choose today's board of ``preset`` from the Daily menu, and wait for it."""
    before = ms.game_id
    ms.page.get_by_role("button", name="Daily").click()
    ms.page.locator("#daily-menu").get_by_role("button", name=preset.capitalize()).click()
    expect(ms.page).not_to_have_url(re.compile(before))
    expect(ms.page.locator('#game-tags [data-tag="daily"]')).to_be_visible()


def win_like_a_person(api: Api, ms: Minesweeper, mines: set[Cell]) -> None:
    """Clear the board on screen through the API, with the page's token, at a pace a
    person could keep (moves tens of milliseconds apart, no faster than the human records
    of its preset), so the win is ranked rather than held."""
    gid = ms.game_id
    kept = ms.page.evaluate(f"localStorage.getItem('minesweeper.token.{gid}')")
    token = json.loads(kept)["token"]
    view = api.get(gid)
    least = view["stats"]["bbbv"] / HUMAN_BBBV_PER_S[view["preset"]] + 0.5
    board = [list(row) for row in view["board"]]
    todo = [(x, y) for y, row in enumerate(board) for x in range(len(row))
            if (x, y) not in mines and board[y][x] == "#"]
    started = 0.0
    while todo:
        x, y = todo.pop(0)
        if board[y][x] != "#":
            continue
        if not any(board[cy][cx] == "#" for cx, cy in todo if (cx, cy) not in mines):
            # The last move: no sooner than a person could have come to it.
            time.sleep(max(0.0, started + least - time.monotonic()))
        diff = api.move(gid, token, "reveal", x, y)
        started = started or time.monotonic()
        for cx, cy, ch in diff["cells"]:
            if len(ch) == 1:
                board[cy][cx] = ch
        if diff["status"] == "won":
            return
        time.sleep(random.uniform(1.2, 2.4) * FASTEST_MEDIAN_GAP_MS / 1000)
    raise AssertionError("the board was not won")


def whole_board_in_view(ms: Minesweeper) -> None:
    """The board's area in the window, its first and last cells inside it."""
    area = ms.page.locator("#board-area")
    expect(area).to_have_attribute("data-more", "")
    expect_in_view(area)
    w, h = ms.size()
    for x, y in ((0, 0), (w - 1, h - 1)):
        inner(box(ms.cell(x, y)), box(area))


def wait_in_view(locator: Locator, timeout: float = 5.0) -> None:
    """``expect_in_view``, once the page has had a moment to lay itself out again."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        b = locator.bounding_box()
        w, h = viewport(locator.page)
        if b and b["y"] >= 0 and b["y"] + b["height"] <= h + 0.5 and b["x"] + b["width"] <= w + 0.5:
            break
        locator.page.wait_for_timeout(100)
    expect_in_view(locator)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_a_ranked_win_keeps_its_result_and_buttons_in_view(
    api: Api, browser: Browser, live_server: str, redis_url: str, size: tuple[int, int]
) -> None:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    ctx.set_default_timeout(15_000)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        open_daily(ms, "intermediate")
        win_like_a_person(api, ms, daily_mines(api, redis_url, "intermediate"))
        result = ms.page.locator("#result")
        expect(result).to_contain_text("You won!")
        # Its rank comes once the leaderboard is read, after the result is on the screen:
        # the board makes room for that line too.
        expect(ms.page.locator("#result-note")).to_contain_text("Ranked #")
        for name in ("Play again", "Watch replay", "Share this game"):
            wait_in_view(result.get_by_role("button", name=name))
        expect_in_view(ms.page.locator("#result-note"))
        expect_in_view(ms.page.locator("#face"))
        assert ms.page.evaluate("scrollY") == 0
        # The whole board is seen beside it.
        whole_board_in_view(ms)
        assert not ms.errors
    finally:
        ctx.close()


def test_a_daily_board_played_today_says_so_before_another_go(
    api: Api, ms: Minesweeper, redis_url: str
) -> None:
    ms.goto()
    open_daily(ms, "intermediate")
    first = ms.game_id
    win_like_a_person(api, ms, daily_mines(api, redis_url, "intermediate"))
    result = ms.page.locator("#result")
    expect(result).to_contain_text("You won!")
    time_text = result.locator('[data-stat="time"] dd').inner_text()

    # Before choosing it again: the menu says it was played, how, and what another go does.
    ms.page.get_by_role("button", name="Daily").click()
    menu = ms.page.locator("#daily-menu")
    again = menu.locator('[data-daily="intermediate"]')
    expect(again).to_contain_text(f"played today: won in {time_text}")
    expect(menu.locator('[data-daily="beginner"]')).not_to_contain_text("played")
    expect(menu).to_contain_text(
        "Another go counts in your stats, but only your first game of the day is ranked."
    )
    expect_in_view(again)

    # And as it opens: a fresh game of the same board, with a notice saying so.
    again.click()
    expect(ms.page).not_to_have_url(re.compile(first))
    notice = ms.page.locator(".toast", has_text="You played this board today")
    expect(notice).to_contain_text(f"won in {time_text}.")
    expect(notice).to_contain_text("only your first game of the day is ranked")
    expect_uncovered(notice)
    assert api.get(ms.game_id)["daily"] == api.get(first)["daily"]
    # The controls stay clear of it.
    assert not overlap(box(notice), box(ms.page.locator(".controls")))


def test_a_second_daily_win_says_why_it_is_not_ranked(
    api: Api, ms: Minesweeper, redis_url: str
) -> None:
    ms.goto()
    mines = daily_mines(api, redis_url, "beginner")
    open_daily(ms, "beginner")
    win_like_a_person(api, ms, mines)
    expect(ms.page.locator("#result-note")).to_contain_text("Ranked #")

    ms.page.get_by_role("button", name="Daily").click()
    ms.page.locator('#daily-menu [data-daily="beginner"]').click()
    notice = ms.page.locator(".toast", has_text="You played this board today")
    expect(notice).to_be_visible()
    win_like_a_person(api, ms, mines)
    expect(ms.page.locator("#result")).to_contain_text("You won!")
    note = ms.page.locator("#result-note")
    expect(note).to_contain_text("Not ranked: only your first game of today's board is.")
    expect_in_view(note)
    # The notice said how the board went before this game: it goes as this one ends.
    expect(notice).to_have_count(0)


# ---- 2. nothing moves the board during play ------------------------------------------------


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_hint_moves_nothing_on_the_board(api: Api, device_ms: Any, device: str) -> None:
    # A custom board: never ranked, so the hint is given without a question first.
    game, token = api.create(width=30, height=16, mines=99, seed=1602)
    api.move(game["id"], token, "reveal", 15, 8)
    ms = device_ms(device)
    ms.play(game["id"], token)
    ms.expect_opened(15, 8)
    before = board_boxes(ms)

    ms.page.get_by_role("button", name="Hint").click()
    panel = ms.page.locator("#hint-panel")
    expect(panel).to_be_visible()
    expect(ms.page.locator("#board .cell.hint")).to_have_count(1)
    expect(ms.page.locator('#game-tags [data-tag="assisted"]')).to_be_visible()
    assert board_boxes(ms) == before
    # The reason and the way to play it are on the screen.
    expect_in_view(ms.page.locator("#hint-reason"))
    expect_uncovered(ms.page.locator("#hint-panel .hint-text"))
    act = panel.get_by_role("button", name=re.compile("^(Open|Flag) it$"))
    expect_uncovered(act)

    act.click()
    expect(panel).to_be_hidden()
    expect(ms.page.locator("#board .cell.hint")).to_have_count(0)
    assert board_boxes(ms) == before


# ---- 3. the skip link goes to the board, and keeps the game --------------------------------


def test_the_skip_link_focuses_the_board_and_keeps_the_game(api: Api, ms: Minesweeper) -> None:
    settings = {"preset": "beginner", "seed": 1603}
    mines = mine_layout(api, settings, FIRST["beginner"])
    game, token = api.create(**settings)
    gid = game["id"]
    ms.play(gid, token)
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    skip = ms.page.get_by_role("link", name="Skip to the minefield")

    def skip_to_board() -> None:
        skip.focus()
        expect_in_view(skip)
        ms.page.keyboard.press("Enter")
        focused = ms.page.locator("#board [role=gridcell]:focus")
        expect(focused).to_have_count(1)
        expect_in_view(focused)
        expect(ms.page).to_have_url(re.compile(f"#/game/{gid}$"))

    skip_to_board()
    assert ms.status() == "playing"
    ms.page.keyboard.press("ArrowRight")  # the board has the keys
    expect(ms.page.locator("#board [role=gridcell]:focus")).to_have_attribute("data-x", "5")

    api.move(gid, token, "reveal", *sorted(mines)[0])
    expect(ms.page.locator("#result")).to_contain_text("Boom! You hit a mine.")
    skip_to_board()
    expect(ms.page.locator("#result")).to_be_visible()
    assert ms.status() == "lost" and ms.game_id == gid


def test_a_daily_loss_says_why_the_other_mines_stay_hidden(
    ms: Minesweeper, redis_url: str
) -> None:
    ms.goto()
    open_daily(ms, "beginner")
    x, y = sorted(stored_mines(redis_url, ms.game_id))[0]
    ms.cell(x, y).click()
    ms.expect_state(x, y, "X")
    note = ms.page.locator("#result-note")
    expect(note).to_contain_text("its other mines show once the day is over")
    expect_in_view(note)
    assert "*" not in ms.states()


def test_a_daily_board_chosen_from_the_keyboard_gets_the_focus(ms: Minesweeper) -> None:
    ms.goto()
    before = ms.game_id
    daily = ms.page.get_by_role("button", name="Daily")
    daily.focus()
    ms.page.keyboard.press("Enter")
    menu = ms.page.locator("#daily-menu")
    expect(menu.get_by_role("button", name="Beginner")).to_be_focused()
    ms.page.keyboard.press("ArrowDown")
    ms.page.keyboard.press("Enter")
    expect(menu).to_be_hidden()
    expect(ms.page).not_to_have_url(re.compile(before))
    expect(ms.page.locator('#game-tags [data-tag="daily"]')).to_be_visible()
    # The menu went: the keyboard is on the new board, on a cell in view.
    focused = ms.page.locator("#board [role=gridcell]:focus")
    expect(focused).to_have_count(1)
    expect_in_view(focused)
    assert ms.size() == (16, 16)


# ---- 4. notices cover no control and go with the game they are about ------------------------


@pytest.mark.parametrize(("device", "level"), [("desktop", "expert"), ("phone", "beginner"),
                                               ("phone", "expert")])
def test_notices_cover_no_control_and_go_with_their_game(
    api: Api, device_ms: Any, device: str, level: str
) -> None:
    game, token = api.create(preset=level)
    api.move(game["id"], token, "reveal", *FIRST[level])
    ms = device_ms(device)
    ms.play(game["id"], token)
    ms.expect_opened(*FIRST[level])

    # Question marks change from the next game on: a game in play says so.
    ms.page.get_by_label("Question marks").check()
    toast = ms.page.locator(".toast", has_text="Question marks are on from the next game")
    expect(toast).to_be_visible()
    expect_in_view(toast)
    notice = box(toast)
    # The controls the notices used to cover are on the screen, and none is under it.
    for selector in ("#flag-mode", "#hint", "#share"):
        expect_in_view(ms.page.locator(selector))
    for selector in ("#flag-mode", "#hint", "#pause", "#share", "#face", "#opt-marks",
                     ".levels", "#mines-left", "#timer"):
        control = ms.page.locator(selector)
        if control.is_visible():
            assert not overlap(notice, box(control)), selector

    # Another game: what was said about this one goes.
    before = ms.game_id
    ms.page.get_by_role("button", name="Beginner" if level == "expert" else "Expert").click()
    expect(ms.page).not_to_have_url(re.compile(before))
    expect(toast).to_have_count(0)


# ---- 5. the switches reach an untouched board ----------------------------------------------


def test_the_switches_apply_to_a_board_not_played_yet(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    first = ms.game_id
    assert api.get(first)["version"] == 0
    ms.page.get_by_role("switch", name="No guessing").check()
    expect(ms.page).not_to_have_url(re.compile(first))
    second = ms.game_id
    view = api.get(second)
    assert view["no_guess"] is True and view["status"] == "ready"
    expect(ms.page.locator('#game-tags [data-tag="no-guess"]')).to_be_visible()

    ms.page.get_by_label("Question marks").check()
    expect(ms.page).not_to_have_url(re.compile(second))
    third = ms.game_id
    view = api.get(third)
    assert view["question_marks"] is True and view["no_guess"] is True
    for expected in ("F", "?"):  # the board on screen takes question marks now
        ms.cell(0, 0).click(button="right")
        ms.expect_state(0, 0, expected)

    # A board in play keeps its settings, and says when the switch applies.
    ms.cell(0, 0).click(button="right")
    ms.expect_state(0, 0, "#")
    ms.cell(4, 4).click()
    ms.expect_opened(4, 4)
    ms.page.get_by_role("switch", name="No guessing").uncheck()
    notice = ms.page.locator(".toast", has_text="No guessing is off from the next game")
    expect(notice).to_be_visible()
    assert ms.game_id == third and api.get(third)["no_guess"] is True


# ---- 6. counters past 999 ------------------------------------------------------------------

# The segments lit for each digit, as a seven-segment display draws it.
DIGITS = {
    "abcdef": "0", "bc": "1", "abdeg": "2", "abcdg": "3", "bcfg": "4", "acdfg": "5",
    "acdefg": "6", "abc": "7", "abcdefg": "8", "abcdfg": "9", "g": "-", "": " ",
}


def shown(counter: Locator) -> str:
    """The digits a counter shows, read from its lit segments."""
    groups: list[str] = counter.evaluate(
        """el => [...el.querySelectorAll('svg > g')].map(g =>
             [...g.querySelectorAll('.on')].map(p => p.dataset.seg).sort().join(''))"""
    )
    return "".join(DIGITS[g] for g in groups).strip()


def test_counters_go_past_999(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(width=100, height=100, mines=2000, seed=1606)
    ms.page.clock.install()
    ms.play(game["id"], token)
    mines = ms.page.locator("#mines-left")
    expect(mines).to_have_attribute("aria-label", "Mines left: 2000")
    expect_in_view(mines)
    assert shown(mines) == "2000"

    api.move(game["id"], token, "reveal", 50, 50)
    timer = ms.page.locator("#timer")
    expect(timer).to_have_attribute("data-value", re.compile(r"^\d+$"))
    ms.page.clock.fast_forward("20:00")
    expect(timer).to_have_attribute("data-value", re.compile(r"^1\d\d\d$"))
    assert shown(timer) == timer.get_attribute("data-value")
    expect_in_view(timer)
    assert not overlap(box(timer), box(mines))


# ---- 7. a spectator is told about hints ----------------------------------------------------


def test_a_spectator_is_told_the_player_used_a_hint(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(preset="beginner", seed=1607)
    gid = game["id"]
    api.move(gid, token, "reveal", *FIRST["beginner"])
    ms.watch(gid)
    expect(ms.page.locator("#conn")).to_have_text("Live")
    tag = ms.page.locator('#game-tags [data-tag="assisted"]')
    expect(tag).to_have_count(0)

    api.act(gid, token, "hint")
    expect(tag).to_have_text("Assisted: 1 hint, not ranked")
    expect_in_view(tag)
    expect(ms.page.locator("#announcer")).to_have_text("The player used a hint: not ranked.")
    api.act(gid, token, "hint")
    expect(tag).to_have_text("Assisted: 2 hints, not ranked")


def test_a_win_held_off_the_peoples_board_says_so_at_once(
    api: Api, ms: Minesweeper, redis_url: str
) -> None:
    """A win played faster than any person is held off the people's leaderboard; the
    result says so as the game ends, not only once the page loads the game again."""
    ms.goto()
    open_daily(ms, "beginner")
    gid = ms.game_id
    token = json.loads(ms.page.evaluate(f"localStorage.getItem('minesweeper.token.{gid}')"))
    mines = daily_mines(api, redis_url, "beginner")
    board = api.get(gid)["board"]
    todo = [(x, y) for y, row in enumerate(board) for x, c in enumerate(row)
            if c == "#" and (x, y) not in mines]
    while api.get(gid)["status"] != "won":
        x, y = todo.pop()
        if api.get(gid)["board"][y][x] == "#":
            api.move(gid, token["token"], "reveal", x, y)
    assert api.get(gid)["held"] is not None, "a machine's pace, held"
    expect(ms.page.locator("#result")).to_contain_text("You won!")
    expect(ms.page.locator("#result-note")).to_contain_text("Not on the people's leaderboard")
    expect_in_view(ms.page.locator("#result-note"))
