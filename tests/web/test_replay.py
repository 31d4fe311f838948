"""Replays and leaderboards in the browser."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import redis

from service.store import keys
from tests.support.play import stored_mines
from tests.support.solve import HUMAN_PACE, win
from tests.web.support import ARTIFACTS, PHONE, Api, Cell, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import Browser, Locator, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

FIRST: Cell = (4, 4)


def replay_cell(ms: Minesweeper, x: int, y: int) -> Locator:
    return ms.page.locator(f'#replay-board [data-x="{x}"][data-y="{y}"]')


def replay_states(ms: Minesweeper) -> list[str]:
    states: list[str] = ms.page.eval_on_selector_all(
        "#replay-board [data-i]", "els => els.map(e => e.dataset.state)"
    )
    return states


def expect_position(ms: Minesweeper, position: int, total: int) -> None:
    expect(ms.page.locator("#replay-step")).to_have_text(f"Move {position} of {total}")
    expect(ms.page.locator("#replay-frame")).to_have_attribute("data-position", str(position))


def open_replay(ms: Minesweeper, game_id: str) -> None:
    """Open a replay by its address, as a shared link does."""
    ms.page.goto(f"{ms.base_url}/#/replay/{game_id}")
    expect(ms.page.locator("#replay-board [data-i]").first).to_be_attached()


def test_the_replay_viewer_steps_through_a_lost_game_and_names_the_fatal_click(
    api: Api, ms: Minesweeper
) -> None:
    settings = {"preset": "beginner", "seed": 777}
    mines = mine_layout(api, settings, FIRST)
    flagged, boom = sorted(mines)[0], sorted(mines)[-1]
    game, token = api.create(**settings)
    gid = game["id"]
    ms.play(gid, token)
    ms.cell(*FIRST).click()
    ms.expect_opened(*FIRST)
    ms.cell(*flagged).click(button="right")
    ms.expect_state(*flagged, "F")
    ms.cell(*boom).click()
    ms.expect_state(*boom, "X")
    final = list("".join(api.get(gid)["board"]))

    ms.page.locator("#result").get_by_role("button", name="Watch replay").click()
    expect(ms.page).to_have_url(re.compile(f"#/replay/{gid}$"))
    viewer = ms.page.locator("#replay")
    expect(viewer).to_be_visible()
    expect(ms.page.locator("#game")).to_be_hidden()
    expect(viewer.get_by_role("heading", name="Replay: The player lost")).to_be_visible()
    # The post-mortem: the player clicked a mine while logic could still find a safe cell.
    verdict = ms.page.locator("#replay-verdict")
    expect(verdict).to_have_attribute("data-verdict", "mistake")
    expect(verdict).to_contain_text(
        f"The fatal click, row {boom[1] + 1}, column {boom[0] + 1}, was a mistake"
    )

    total = len(api.replay(gid)["moves"])
    assert total == 3
    expect_position(ms, 0, total)
    assert set(replay_states(ms)) == {"#"}
    expect(ms.page.get_by_role("button", name="Play the replay (Space)")).to_be_focused()

    ms.page.get_by_role("button", name="Step forward (Right arrow)").click()
    expect_position(ms, 1, total)
    expect(replay_cell(ms, *FIRST)).to_have_attribute("data-state", "0")
    expect(replay_cell(ms, *FIRST)).to_have_class(re.compile(r"\breplay-last\b"))
    expect(ms.page.locator("#replay-move")).to_contain_text(
        f"Move 1 of 3, at 0:00.000: opened row {FIRST[1] + 1}, column {FIRST[0] + 1}"
    )
    ms.page.keyboard.press("ArrowRight")
    expect_position(ms, 2, total)
    expect(replay_cell(ms, *flagged)).to_have_attribute("data-state", "F")
    expect(ms.page.locator("#replay-mines")).to_have_attribute("data-value", "9")
    ms.page.keyboard.press("End")
    expect_position(ms, 3, total)
    assert replay_states(ms) == final, "the replay ends on the game's own final board"
    fatal = replay_cell(ms, *boom)
    expect(fatal).to_have_attribute("data-state", "X")
    expect(fatal).to_have_class(re.compile(r"\bfatal\b"))
    expect(fatal).to_have_attribute("aria-label", re.compile("the fatal click, a mistake"))
    expect(ms.page.locator("#replay-frame")).to_have_attribute("data-status", "lost")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ms.page.screenshot(path=str(ARTIFACTS / "web-replay.png"), full_page=True)

    # Back one move: the mine is hidden again, and nothing marks a fatal click yet.
    ms.page.keyboard.press("ArrowLeft")
    expect_position(ms, 2, total)
    expect(fatal).to_have_attribute("data-state", "#")
    expect(ms.page.locator("#replay-board .fatal")).to_have_count(0)
    # The mine layout on demand, from any point.
    ms.page.get_by_label("Show mines").check()
    expect(ms.page.locator("#replay-board .layout-mine")).to_have_count(len(mines))

    # The timeline runs on the server's timestamps; from the keyboard it steps by moves.
    timeline = ms.page.get_by_role("slider", name="Timeline")
    timeline.fill("0")
    expect_position(ms, 0, total)
    timeline.press("ArrowRight")
    expect_position(ms, 1, total)

    # Play at 16 times the speed: it reaches the end and stops there.
    ms.page.get_by_label("Speed").select_option("16")
    ms.page.get_by_role("button", name="Play the replay (Space)").click()
    expect_position(ms, 3, total)
    expect(ms.page.get_by_role("button", name="Play the replay (Space)")).to_be_visible()
    assert replay_states(ms) == final

    ms.page.get_by_role("button", name="Back to the game").focus()
    ms.page.keyboard.press("Enter")
    expect(ms.page).to_have_url(re.compile(f"#/game/{gid}$"))
    expect(ms.page.locator("#game")).to_be_visible()
    expect(ms.page.locator("#result")).to_contain_text("Boom! You hit a mine.")
    # The button went with the replay: the keyboard focus is on the board, not the page.
    expect(ms.page.locator("#board [role=gridcell]:focus")).to_have_count(1)


def test_a_loss_on_the_first_click_is_a_forced_guess(api: Api, ms: Minesweeper) -> None:
    settings = {"width": 9, "height": 9, "mines": 30, "first_click": "none", "seed": 77}
    mines = mine_layout(api, settings, (0, 0))
    game, token = api.create(**settings)
    gid = game["id"]
    x, y = sorted(mines)[0]
    assert api.move(gid, token, "reveal", x, y)["status"] == "lost"

    open_replay(ms, gid)
    verdict = ms.page.locator("#replay-verdict")
    expect(verdict).to_have_attribute("data-verdict", "forced-guess")
    expect(verdict).to_contain_text(f"row {y + 1}, column {x + 1}, was a forced guess")
    expect_position(ms, 0, 1)
    ms.page.keyboard.press("End")
    expect(replay_cell(ms, x, y)).to_have_attribute("data-state", "X")
    # A link from elsewhere goes back to the game itself: watched, as this browser never played it.
    ms.page.get_by_role("button", name="Back to the game").click()
    expect(ms.page).to_have_url(re.compile(f"#/watch/{gid}$"))
    expect(ms.page.locator("#result")).to_contain_text("The player hit a mine.")
    expect(ms.page.locator("#board [role=gridcell]:focus")).to_have_count(1)


def test_a_replay_shows_what_each_move_did_even_an_explicit_mark(api: Api, ms: Minesweeper) -> None:
    """The viewer shows the cells the service recorded: a flag sent with ``mark`` sets that
    mark (a cycle worked out in the page would have shown a flag)."""
    settings = {"preset": "beginner", "seed": 777, "question_marks": True}
    mines = mine_layout(api, settings, FIRST)
    game, token = api.create(**settings)
    gid = game["id"]
    api.move(gid, token, "reveal", *FIRST)
    marked = next(
        (x, y)
        for y, row in enumerate(api.get(gid)["board"])
        for x, ch in enumerate(row)
        if ch == "#" and (x, y) not in mines
    )
    api.move(gid, token, "flag", *marked, mark="question")
    boom = sorted(mines)[0]
    assert api.move(gid, token, "reveal", *boom)["status"] == "lost"
    final = list("".join(api.get(gid)["board"]))

    open_replay(ms, gid)
    ms.page.keyboard.press("ArrowRight")
    expect_position(ms, 1, 3)
    ms.page.keyboard.press("ArrowRight")
    expect_position(ms, 2, 3)
    expect(replay_cell(ms, *marked)).to_have_attribute("data-state", "?")
    expect(ms.page.locator("#replay-move")).to_contain_text(
        f"question-marked row {marked[1] + 1}, column {marked[0] + 1}"
    )
    ms.page.keyboard.press("End")
    assert replay_states(ms) == final
    expect(replay_cell(ms, *marked)).to_have_attribute("data-state", "?")
    ms.page.keyboard.press("ArrowLeft")
    ms.page.keyboard.press("ArrowLeft")
    expect_position(ms, 1, 3)
    expect(replay_cell(ms, *marked)).to_have_attribute("data-state", "#")


def test_a_daily_replay_starts_from_its_open_start_area(
    api: Api, ms: Minesweeper, redis_url: str
) -> None:
    game, token = api.create(daily="beginner")
    gid = game["id"]
    start = list("".join(game["board"]))
    assert any(ch.isdigit() for ch in start)
    boom = sorted(stored_mines(redis_url, gid))[0]
    assert api.move(gid, token, "reveal", *boom)["status"] == "lost"
    lost = list("".join(api.get(gid)["board"]))  # the mine hit, as the loss showed it
    assert lost.count("X") == 1 and "*" not in lost
    # A daily board's replay waits for the end of its day: here, moved back one.
    with redis.Redis.from_url(redis_url) as r:
        r.hset(keys.game(gid), "daily", "2001-01-01")

    open_replay(ms, gid)
    expect_position(ms, 0, 1)
    assert replay_states(ms) == start
    # The player's own 3BV, as the result counts it, and the start's apart.
    expect(ms.page.locator("#replay-sub")).to_contain_text(re.compile(
        r"3BV 0 of \d+ \(and [1-9]\d* opened at the start\)"))
    expect(ms.page.locator("#replay-move")).to_contain_text("its start area already open")
    ms.page.keyboard.press("End")
    expect(replay_cell(ms, *boom)).to_have_attribute("data-state", "X")
    assert replay_states(ms) == lost
    ms.page.keyboard.press("Home")
    assert replay_states(ms) == start


def next_hidden(board: list[str]) -> Cell:
    return next((x, y) for y, row in enumerate(board) for x, ch in enumerate(row) if ch == "#")


def test_a_replay_waits_for_the_end_of_the_game(api: Api, ms: Minesweeper) -> None:
    game, _ = api.create(preset="beginner")
    ms.page.goto(f"{ms.base_url}/#/replay/{game['id']}")
    status = ms.page.locator("#replay-status")
    expect(status).to_contain_text("still being played")
    status.get_by_role("link", name="Watch it live").click()
    ms.wait_game(game["id"])
    expect(ms.page.locator("#watch-banner")).to_be_visible()


def test_the_leaderboard_lists_a_win_made_through_the_api(api: Api, ms: Minesweeper) -> None:
    name = f"Tester-{random.randrange(10**6):06d}"
    created = api.http.post("/players", json={"name": name}).json()
    # A person's pace: a win at a program's speed is held off the humans' board.
    game_id, _ = win(api.http, preset="beginner", player_token=created["token"], pace=HUMAN_PACE)
    board: dict[str, Any] = api.http.get("/leaderboards/beginner", params={"limit": 50}).json()
    entry = next(e for e in board["entries"] if e["game_id"] == game_id)

    ms.goto()
    ms.page.get_by_role("button", name="Leaderboards").click()
    dialog = ms.page.get_by_role("dialog", name="Leaderboards")
    beginner = dialog.get_by_role("tab", name="Beginner")
    expect(beginner).to_have_attribute("aria-selected", "true")
    expect(dialog.get_by_role("button", name="Classic")).to_have_attribute("aria-pressed", "true")
    expect(dialog.get_by_role("button", name="All time")).to_have_attribute("aria-pressed", "true")
    expect(dialog.locator("caption")).to_have_text("Best times on beginner (classic), all time")
    row = dialog.locator(f'tr[data-game-id="{game_id}"]')
    expect(row).to_contain_text(name)
    cells = row.locator("td")
    expect(cells.nth(0)).to_have_text(str(entry["rank"]))
    expect(cells.nth(2)).to_have_text(f"{entry['elapsed_ms'] / 1000:.3f} s")
    expect(cells.nth(3)).to_have_text(str(entry["bbbv"]))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ms.page.screenshot(path=str(ARTIFACTS / "web-leaderboard.png"))

    # Tabs follow the arrow keys; the other boards do not list this win.
    beginner.focus()
    ms.page.keyboard.press("ArrowRight")
    intermediate = dialog.get_by_role("tab", name="Intermediate")
    expect(intermediate).to_be_focused()
    expect(intermediate).to_have_attribute("aria-selected", "true")
    expect(dialog.locator("caption")).to_contain_text("intermediate")
    expect(row).to_have_count(0)
    ms.page.keyboard.press("ArrowLeft")
    expect(row).to_be_visible()
    dialog.get_by_role("button", name="No guessing").click()
    expect(dialog.locator("caption")).to_have_text("Best times on beginner (no-guess), all time")
    expect(row).to_have_count(0)
    dialog.get_by_role("button", name="Today's daily").click()
    expect(dialog.locator("caption")).to_contain_text("Today's daily beginner board (no-guess)")
    dialog.get_by_role("button", name="Classic").click()
    dialog.get_by_role("button", name="All time").click()
    expect(row).to_be_visible()

    # The bots have a board of their own, without this person's win.
    dialog.get_by_role("button", name="Bots").click()
    caption = "Best times on beginner (classic), all time, bots"
    expect(dialog.locator("caption")).to_have_text(caption)
    expect(row).to_have_count(0)
    dialog.get_by_role("button", name="People").click()
    expect(row).to_be_visible()

    # The entry's name is the player's now, and opens their profile.
    renamed = f"Renamed-{random.randrange(10**6):06d}"
    r = api.http.patch(
        "/players/me", json={"name": renamed},
        headers={"Authorization": f"Bearer {created['token']}"},
    )
    assert r.status_code == 200, r.text
    dialog.get_by_role("button", name="All time").click()
    link = row.get_by_role("link", name=f"Profile of {renamed}")
    expect(link).to_have_text(renamed)
    link.click()
    expect(dialog).to_be_hidden()
    expect(ms.page).to_have_url(re.compile(f"#/player/{created['player']['id']}$"))
    profile = ms.page.locator("#profile")
    expect(profile.get_by_role("heading", name=renamed, exact=True)).to_be_in_viewport()
    expect(profile.locator(f'li[data-game-id="{game_id}"]')).to_contain_text("Won")
    profile.get_by_role("button", name="Back to the game").click()
    expect(ms.page.locator("#game")).to_be_visible()

    # Every ranked win has its replay (under the name the game was played with): this
    # one ends with every mine flagged.
    ms.page.get_by_role("button", name="Leaderboards").click()
    row.get_by_role("button", name=re.compile(f"^Replay of {renamed}'s win")).click()
    expect(ms.page).to_have_url(re.compile(f"#/replay/{game_id}$"))
    expect(ms.page.get_by_role("heading", name=f"Replay: {name} won")).to_be_visible()
    ms.page.keyboard.press("End")
    expect(ms.page.locator("#replay-frame")).to_have_attribute("data-status", "won")
    assert replay_states(ms) == list("".join(api.get(game_id)["board"]))
    expect(ms.page.locator("#replay-mines")).to_have_attribute("data-value", "0")


@pytest.mark.parametrize("level", ["intermediate", "expert"])
def test_a_replay_on_a_phone_shows_the_whole_board(
    api: Api, browser: Browser, live_server: str, level: str
) -> None:
    """The replay of a lost game fits its board to the phone like the game's page does: every
    row and column in the window, none to pan to."""
    settings = {"preset": level, "seed": 1604}
    first = (8, 8)
    boom = sorted(mine_layout(api, settings, first))[0]
    game, token = api.create(**settings)
    api.move(game["id"], token, "reveal", *first)
    phone = {**PHONE, "viewport": {"width": 390, "height": 844}}
    ctx = browser.new_context(**phone)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.play(game["id"], token)
        api.move(game["id"], token, "reveal", *boom)
        expect(ms.page.locator("#frame")).to_have_attribute("data-status", "lost")
        expect(ms.page.locator("#board-area")).to_have_attribute("data-more", "")
        ms.page.locator("#result").get_by_role("button", name="Watch replay").click()
        expect(ms.page.locator("#replay-board [data-i]").first).to_be_attached()
        ms.page.keyboard.press("End")
        area = ms.page.locator("#replay-area")
        expect(area).to_have_attribute("data-more", "")
        expect(area).to_be_in_viewport(ratio=1)
        w, h = game["width"], game["height"]
        box = area.bounding_box()
        assert box
        for x, y in ((0, 0), (w - 1, h - 1)):
            cell = replay_cell(ms, x, y).bounding_box()
            assert cell, (x, y)
            assert box["x"] <= cell["x"] and cell["x"] + cell["width"] <= box["x"] + box["width"]
            assert box["y"] <= cell["y"] and cell["y"] + cell["height"] <= box["y"] + box["height"]
        page_width = ms.page.evaluate("document.documentElement.scrollWidth")
        assert page_width <= phone["viewport"]["width"]
        assert not ms.errors
    finally:
        ctx.close()
