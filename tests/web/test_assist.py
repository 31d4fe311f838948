"""Hints, pause, no-guess and daily boards in the browser."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from typing import Any

from service.engine import solver
from tests.support.play import stored_mines
from tests.support.solve import next_cell
from tests.web.support import Api, Cell, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

FIRST: Cell = (4, 4)



def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)

def rows(ms: Minesweeper) -> list[str]:
    """The board on the page, one string per row, as the service writes it."""
    w, _ = ms.size()
    states = "".join(ms.states())
    return [states[i : i + w] for i in range(0, len(states), w)]


def safe_hidden(ms: Minesweeper, mines: set[Cell]) -> list[Cell]:
    return [
        (x, y)
        for y, row in enumerate(rows(ms))
        for x, ch in enumerate(row)
        if ch == "#" and (x, y) not in mines
    ]


def cell_of(locator: Any) -> Cell:
    return int(locator.get_attribute("data-x")), int(locator.get_attribute("data-y"))


def test_a_hint_highlights_a_safe_cell_and_is_counted(api: Api, ms: Minesweeper) -> None:
    settings = {"preset": "beginner", "seed": 4242}
    mines = mine_layout(api, settings, FIRST)
    game, token = api.create(**settings)
    ms.play(game["id"], token)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)

    # A preset could be ranked: the first hint asks before it costs the game its place.
    ms.page.get_by_role("button", name="Hint").click()
    dialog = ms.page.get_by_role("dialog", name="Use a hint?")
    expect(dialog).to_contain_text("does not enter the leaderboards")
    dialog.get_by_role("button", name="Show a hint").click()

    hinted = ms.page.locator("#board .cell.hint")
    expect(hinted).to_have_count(1)
    x, y = cell_of(hinted)
    assert (x, y) not in mines and ms.state(x, y) == "#"
    expect(hinted).to_have_class(re.compile(r"\bhint-safe\b"))
    expect(hinted).to_have_attribute("aria-label", re.compile(r", hint: safe$"))
    panel = ms.page.locator("#hint-panel")
    expect(panel).to_be_visible()
    expect(panel).to_have_attribute("data-kind", "safe")
    expect(panel).to_contain_text(f"Safe: row {y + 1}, column {x + 1}.")
    # The reason names cells as the page does (rows and columns from 1), and they show.
    reason = ms.page.locator("#hint-reason").inner_text()
    assert reason.strip() and not re.search(r"\(\d+, \d+\)", reason), reason
    for m in re.finditer(r"row (\d+), column (\d+)", reason):
        cx, cy = int(m.group(2)) - 1, int(m.group(1)) - 1
        expect(ms.cell(cx, cy)).to_have_class(re.compile(r"\bhint-source\b"))

    view = api.get(game["id"])
    assert view["stats"]["hints"] == 1 and view["stats"]["assisted"] is True
    expect(ms.page.locator('#game-tags [data-tag="assisted"]')).to_have_text(
        "Assisted: 1 hint, not ranked"
    )

    # "Open it" plays the hinted cell; the highlight goes with it.
    panel.get_by_role("button", name="Open it").click()
    ms.expect_opened(x, y)
    expect(panel).to_be_hidden()
    expect(hinted).to_have_count(0)

    # H asks again, without asking first: the game is assisted already.
    ms.page.keyboard.press("h")
    expect(ms.page.locator("#board .cell.hint")).to_have_count(1)
    expect(dialog).to_be_hidden()
    assert api.get(game["id"])["stats"]["hints"] == 2

    while todo := safe_hidden(ms, mines):
        ms.cell(*todo[0]).click()
        ms.expect_opened(*todo[0])
    result = ms.page.locator("#result")
    expect(result).to_contain_text("You won!")
    expect(result.locator("#result-assisted")).to_be_visible()
    expect(result).to_contain_text("Assisted: 2 hints used, so this game is not ranked.")
    expect(ms.page.locator("#hint")).to_be_disabled()


def test_a_hint_with_no_certain_cell_gives_the_chance_of_a_mine(api: Api, ms: Minesweeper) -> None:
    # Mines placed at creation and nothing open: every cell is a guess, 10 in 81.
    game, token = api.create(width=9, height=9, mines=10, first_click="none", seed=3)
    ms.play(game["id"], token)
    ms.page.keyboard.press("h")  # a custom board is never ranked: no question first
    panel = ms.page.locator("#hint-panel")
    expect(panel).to_have_attribute("data-kind", "guess")
    expect(panel).to_contain_text("Best guess:")
    expect(panel).to_contain_text("a 12.3% chance of a mine")
    hinted = ms.page.locator("#board .cell.hint")
    expect(hinted).to_have_class(re.compile(r"\bhint-guess\b"))
    expect(hinted).to_have_attribute("aria-label", re.compile("12.3% chance of a mine"))
    expect(panel.get_by_role("button", name="Open it")).to_be_visible()
    assert api.get(game["id"])["stats"]["hints"] == 1


def test_pause_hides_the_board_and_blocks_clicks_and_resume_restores_it(
    api: Api, ms: Minesweeper
) -> None:
    game, token = api.create(preset="beginner", seed=8)
    gid = game["id"]
    ms.play(gid, token)
    pause = ms.page.locator("#pause")
    expect(pause).to_be_disabled()  # nothing to pause before the clock starts
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    expect(ms.page.locator("#timer")).to_have_attribute("data-value", "1")
    before = ms.states()

    ms.page.keyboard.press("p")  # the focus is on the board
    cover = ms.page.locator("#paused")
    expect(cover).to_be_visible()
    expect(cover).to_contain_text("Paused")
    expect(ms.page.locator("#frame")).to_have_attribute("data-paused", "true")
    expect(ms.grid).to_be_hidden()  # a paused board shows nothing
    expect(pause).to_have_text("Resume")
    expect(ms.page.locator("#hint")).to_be_disabled()
    # Keyboard users land on the cover's Resume button.
    expect(ms.page.get_by_role("button", name="Resume (P)")).to_be_focused()
    view = api.get(gid)
    assert view["paused"] is True
    frozen = ms.elapsed_ms()
    assert frozen == view["elapsed_ms"]

    # Clicks reach nothing: the cover is on top and the board is inert.
    box = ms.cell(0, 8).bounding_box()
    assert box
    ms.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    ms.page.wait_for_timeout(1200)
    after = api.get(gid)
    assert after["version"] == view["version"]
    assert after["stats"]["clicks"] == view["stats"]["clicks"]
    assert ms.elapsed_ms() == frozen, "the clock stands still while paused"

    ms.page.get_by_role("button", name="Resume (P)").click()
    expect(cover).to_be_hidden()
    expect(ms.grid).to_be_visible()
    ms.expect_opened(*FIRST)
    assert ms.states() == before
    expect(pause).to_have_text("Pause")
    resumed = api.get(gid)
    assert resumed["paused"] is False
    # The time paused (at least the 1.2 s waited) is left out, on the server and on the
    # page alike: the page shows the server's time, not the time since the first click.
    running = _ms(resumed["server_time"]) - _ms(resumed["started_at"])
    assert running - resumed["elapsed_ms"] >= 1200
    expect(ms.page.locator("#timer")).to_have_attribute("data-value", "2")


def _opened_by_keyboard(api: Api, ms: Minesweeper) -> dict[str, Any]:
    """A beginner game on screen, its first cell opened with Enter on the focused cell."""
    game, token = api.create(preset="beginner", seed=8)
    ms.play(game["id"], token)
    ms.cell(*FIRST).focus()
    ms.page.keyboard.press("Enter")
    ms.expect_opened(*FIRST)
    return game


def test_pause_by_keyboard_from_its_button_lands_on_resume_and_then_on_the_board(
    api: Api, ms: Minesweeper
) -> None:
    game = _opened_by_keyboard(api, ms)

    # Enter on the Pause button: the focus goes to the cover's Resume, not to the page.
    ms.page.locator("#pause").focus()
    ms.page.keyboard.press("Enter")
    cover = ms.page.locator("#paused")
    expect(cover).to_be_visible()
    resume = ms.page.get_by_role("button", name="Resume (P)")
    expect(resume).to_be_focused()

    # Enter again resumes, and the board's cursor cell has the focus again.
    ms.page.keyboard.press("Enter")
    expect(cover).to_be_hidden()
    expect(ms.cell(*FIRST)).to_be_focused()

    # The same with the mouse: Resume (P) clicked gives the focus back to the board.
    ms.page.locator("#pause").click()
    expect(cover).to_be_visible()
    resume.click()
    expect(cover).to_be_hidden()
    expect(ms.cell(*FIRST)).to_be_focused()
    assert api.get(game["id"])["paused"] is False


def test_resume_pressed_before_the_pause_is_answered_is_not_lost(
    api: Api, ms: Minesweeper
) -> None:
    game = _opened_by_keyboard(api, ms)
    # The pause's answer is held back: its diff comes by the socket, and the cover shows.
    held: list[Any] = []
    ms.page.route("**/pause", lambda route: held.append((route, route.fetch())))
    ms.page.locator("#pause").focus()
    ms.page.keyboard.press("Enter")
    resume = ms.page.get_by_role("button", name="Resume (P)")
    expect(resume).to_be_focused()
    assert len(held) == 1
    # Enter on Resume at once: it waits for the pause's answer, then resumes.
    ms.page.keyboard.press("Enter")
    route, response = held[0]
    route.fulfill(response=response)
    expect(ms.page.locator("#paused")).to_be_hidden()
    expect(ms.cell(*FIRST)).to_be_focused()
    assert api.get(game["id"])["paused"] is False


def test_playing_a_hint_by_keyboard_keeps_the_focus_on_its_cell(api: Api, ms: Minesweeper) -> None:
    # A custom board is never ranked: H shows the hint without asking first.
    game, token = api.create(width=9, height=9, mines=10, seed=4242)
    ms.play(game["id"], token)
    ms.cell(*FIRST).focus()
    ms.page.keyboard.press("Enter")
    ms.expect_opened(*FIRST)
    ms.page.keyboard.press("h")
    hinted = ms.page.locator("#board .cell.hint")
    expect(hinted).to_have_count(1)
    x, y = cell_of(hinted)

    act = ms.page.locator("#hint-act")
    act.focus()
    ms.page.keyboard.press("Enter")
    expect(ms.cell(x, y)).not_to_have_attribute("data-state", "#")
    expect(ms.page.locator("#hint-panel")).to_be_hidden()
    # The focus is on the played cell, not dropped with the button.
    expect(ms.cell(x, y)).to_be_focused()


def test_a_spectator_sees_the_game_paused_and_resumed(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(preset="beginner", seed=8)
    gid = game["id"]
    api.move(gid, token, "reveal", *FIRST)
    ms.watch(gid)
    expect(ms.page.locator("#conn")).to_have_text("Live")
    ms.expect_opened(*FIRST)
    board = ms.states()

    api.act(gid, token, "pause")
    cover = ms.page.locator("#paused")
    expect(cover).to_be_visible()
    expect(cover).to_contain_text("The player has paused this game")
    expect(cover.get_by_role("button")).to_be_hidden()  # only the player resumes
    expect(ms.grid).to_be_hidden()
    expect(ms.page.locator("#announcer")).to_have_text("The player paused the game.")

    api.act(gid, token, "resume")
    expect(cover).to_be_hidden()
    expect(ms.grid).to_be_visible()
    ms.expect_opened(*FIRST)
    assert ms.states() == board


def test_a_game_opened_while_paused_shows_its_board_when_resumed(api: Api, ms: Minesweeper) -> None:
    """A paused game's view hides every cell: the page gets the board from the service on resume."""
    game, token = api.create(preset="beginner", seed=8)
    gid = game["id"]
    api.move(gid, token, "reveal", *FIRST)
    board = list("".join(api.get(gid)["board"]))
    api.act(gid, token, "pause")
    ms.watch(gid)
    expect(ms.page.locator("#conn")).to_have_text("Live")
    expect(ms.page.locator("#paused")).to_be_visible()
    expect(ms.grid).to_be_hidden()

    api.act(gid, token, "resume")
    expect(ms.page.locator("#paused")).to_be_hidden()
    expect(ms.grid).to_be_visible()
    ms.expect_opened(*FIRST)
    assert ms.states() == board


def test_a_no_guess_game_starts_from_the_top_bar_and_is_won_by_logic(
    api: Api, ms: Minesweeper
) -> None:
    ms.goto()
    before = ms.game_id
    # Nobody has touched the board on screen: switching no-guess on replaces it at once.
    ms.page.get_by_role("switch", name="No guessing").check()
    expect(ms.page).not_to_have_url(re.compile(before))
    gid = ms.game_id
    assert api.get(gid)["no_guess"] is True
    expect(ms.page.locator('#game-tags [data-tag="no-guess"]')).to_have_text("No guessing")

    # The custom dialog shares the setting; no-guess boards always start with an opening.
    ms.page.get_by_role("button", name="Custom…").click()
    dialog = ms.page.get_by_role("dialog", name="Custom board")
    expect(dialog.get_by_label("No guessing")).to_be_checked()
    dialog.get_by_text("More options").click()
    expect(dialog.get_by_label("First click")).to_be_disabled()
    dialog.get_by_role("button", name="Cancel").click()

    # Logic alone wins it: there is always a certain safe cell.
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    while ms.status() == "playing":
        board = rows(ms)
        safe = [(x, y) for x, y in solver.analyze(board, 10).safe if board[y][x] == "#"]
        assert safe, "a no-guess board left the player without a safe cell"
        for x, y in safe:
            if ms.state(x, y) == "#":
                ms.cell(x, y).click()
                ms.expect_opened(x, y)
    expect(ms.page.locator("#result")).to_contain_text("You won!")
    assert api.get(gid)["status"] == "won"

    # The setting stays for the next visit.
    ms.page.reload()
    expect(ms.page.get_by_role("switch", name="No guessing")).to_be_checked()


def test_a_daily_game_starts_with_its_start_area_open(api: Api, ms: Minesweeper) -> None:
    ms.goto()
    before = ms.game_id
    daily = ms.page.get_by_role("button", name="Daily")
    daily.click()
    expect(daily).to_have_attribute("aria-expanded", "true")
    menu = ms.page.locator("#daily-menu")
    expect(menu).to_contain_text("the same mines for everyone")
    menu.get_by_role("button", name="Intermediate").click()
    expect(menu).to_be_hidden()
    expect(ms.page).not_to_have_url(re.compile(before))

    view = api.get(ms.game_id)
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert view["daily"] == today and view["preset"] == "intermediate"
    assert view["status"] == "playing" and view["started_at"] is None
    assert ms.size() == (16, 16)
    page_board = rows(ms)
    assert page_board == view["board"]
    assert any(ch.isdigit() for row in page_board for ch in row), "the start area is open"
    # Everyone gets the same board today.
    other, _ = api.create(daily="intermediate")
    assert other["board"] == view["board"]
    expect(ms.page.locator('#game-tags [data-tag="daily"]')).to_have_text(f"Daily board, {today}")
    expect(ms.page.get_by_role("button", name="Intermediate").first).to_have_attribute(
        "aria-pressed", "true"
    )
    assert ms.timer() == 0

    # The clock starts at the player's first move.
    x, y = next_cell(page_board, 40)
    ms.cell(x, y).click()
    expect(ms.cell(x, y)).not_to_have_attribute("data-state", "#")
    assert api.get(ms.game_id)["started_at"] is not None


def test_escape_takes_a_hint_away_and_each_notice_is_said_by_one_region(
    api: Api, ms: Minesweeper
) -> None:
    """A hint is said once (its panel, holding buttons, is no live region of its own) and
    Escape on the board takes it away; a notice is said by the notes alone, not by a
    region inside them as well."""
    settings = {"width": 9, "height": 9, "mines": 10, "first_click": "none", "seed": 3}
    mines = mine_layout(api, settings, (0, 0))
    game, token = api.create(**settings)
    # Under way (a board nobody touched would be replaced by the switch below).
    safe = next((x, y) for y in range(9) for x in range(9) if (x, y) not in mines)
    api.move(game["id"], token, "reveal", *safe)
    ms.play(game["id"], token)
    page = ms.page
    page.locator('#board [tabindex="0"]').focus()
    page.keyboard.press("h")
    panel = page.locator("#hint-panel")
    expect(panel).to_be_visible()
    expect(page.locator("#announcer")).to_have_text(
        re.compile(r"^(Safe|Mine|Best guess): row \d+, column \d+")
    )
    live = "[aria-live], [role=status], [role=alert], [role=log]"
    assert panel.evaluate("(e, live) => !e.closest(live) && !e.querySelector(live)", live)
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(page.locator("#board .cell.hint")).to_have_count(0)
    expect(page.locator("#board [data-i]:focus")).to_have_count(1)

    page.get_by_label("Question marks").check()
    notice = page.locator(".toast", has_text="Question marks are on from the next game")
    expect(notice).to_be_visible()
    nested = page.evaluate(
        "live => [...document.querySelectorAll(live)]"
        ".filter(e => e.parentElement.closest(live)).length",
        live,
    )
    assert nested == 0



def _page_token(ms: Minesweeper) -> str:
    """The token the page keeps for the game on screen."""
    kept = ms.page.evaluate(f"localStorage.getItem('minesweeper.token.{ms.game_id}')")
    token: str = json.loads(kept)["token"]
    return token


def test_a_pause_says_it_unranks_a_rankable_game_and_its_win_says_why(
    api: Api, ms: Minesweeper, redis_url: str
) -> None:
    ms.goto()  # the player's own beginner game: a win of it could be ranked
    gid = ms.game_id
    assert api.get(gid)["ranked"] is True
    pause = ms.page.locator("#pause")
    note = "a game paused once its clock runs is not ranked"
    expect(pause).to_have_attribute("title", re.compile(note))
    ms.cell(*FIRST).click()  # the first click is safe; the mines are placed then
    ms.expect_opened(*FIRST)
    mines = stored_mines(redis_url, gid)

    pause.click()
    expect(ms.page.locator("#paused")).to_be_visible()
    # Told once, where notices show, that the game is now off the leaderboards.
    told = ms.page.locator(".toast", has_text="this game is no longer ranked")
    expect(told).to_be_visible()
    expect(pause).to_have_attribute("title", re.compile("this game is no longer ranked"))
    ms.page.get_by_role("button", name="Resume (P)").click()
    expect(ms.page.locator("#paused")).to_be_hidden()
    # After the pause and the resume the tooltip still says why.
    expect(pause).to_have_text("Pause")
    expect(pause).to_have_attribute("title", re.compile("this game is no longer ranked"))
    assert api.get(gid)["ranked"] is False

    token = _page_token(ms)
    for x, y in safe_hidden(ms, mines):
        if ms.state(x, y) == "#":
            api.move(gid, token, "reveal", x, y)
    result = ms.page.locator("#result")
    expect(result).to_contain_text("You won!")
    expect(ms.page.locator("#result-note")).to_have_text("Paused, so this game is not ranked.")


def test_a_custom_games_pause_says_nothing_of_ranks(api: Api, ms: Minesweeper) -> None:
    game, token = api.create(width=9, height=9, mines=10, seed=8)
    ms.play(game["id"], token)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    pause = ms.page.locator("#pause")
    expect(pause).to_have_attribute("title", "Pause (P): stop the clock and hide the board")
    pause.click()
    expect(ms.page.locator("#paused")).to_be_visible()
    expect(pause).to_have_attribute(
        "title", "Resume (P): show the board and start the clock again"
    )


def test_a_hint_on_a_cell_the_player_wrongly_flagged_says_so_and_unflags_it(
    api: Api, ms: Minesweeper
) -> None:
    """A safe cell the player flagged by mistake, then a hint that names it: the hint says
    the flag there is wrong and offers to take it off and open the cell, which it does
    with the player's own moves."""
    settings = {"preset": "beginner", "seed": 4242}
    mines = mine_layout(api, settings, FIRST)
    game, token = api.create(**settings)
    ms.play(game["id"], token)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    # The cell a hint names now: flagged by mistake.
    first = api.act(game["id"], token, "hint")
    x, y = first["x"], first["y"]
    assert first["kind"] == "safe" and (x, y) not in mines
    ms.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")

    ms.page.get_by_role("button", name="Hint").click()
    hinted = ms.page.locator("#board .cell.hint")
    expect(hinted).to_have_count(1)
    assert cell_of(hinted) == (x, y)
    panel = ms.page.locator("#hint-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text(f"Safe: row {y + 1}, column {x + 1}.")
    expect(panel).to_contain_text("Your flag there is wrong")
    expect(ms.page.locator("#announcer, [aria-live]").filter(
        has_text="Your flag there is wrong").first).to_be_attached()
    expect(hinted).to_have_attribute("aria-label", re.compile(r"hint: safe, wrongly flagged$"))
    act = panel.get_by_role("button", name="Unflag and open")
    expect(act).to_be_visible()
    act.click()
    ms.expect_opened(x, y)
    expect(panel).to_be_hidden()
    assert ms.mines_left() == 10
    board = api.get(game["id"])["board"]
    assert board[y][x] in "012345678"
