"""Matches in the browser: a private race between two pages to the end (room, share link,
countdown, progress, result table, replays), a co-op game whose moves and cursors reach
the teammate, quick pairing on a phone with the keyboard, and a waiting page told of its
pairing on the player's socket; and a rematch: asked for from the result, joined by the
other player, watched by a page without a seat, refused in words when it went on without
a player."""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from service.engine import solver
from tests.support.solve import next_cell
from tests.web.support import ARTIFACTS, DESKTOP, LAPTOP, PHONE, Box, require_chromium

require_chromium()

from playwright.sync_api import (  # noqa: E402
    Browser,
    BrowserContext,
    Locator,
    Route,
    WebSocketRoute,
    expect,
)
from playwright.sync_api import Error as PlaywrightError  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

NewPage = Callable[[BrowserContext], Minesweeper]
MATCH_URL = re.compile(r"#/match/([0-9a-f]{32})$")


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    """Two browsers' worth of storage: two players."""
    made = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(2)]
    for ctx in made:
        ctx.set_default_timeout(15_000)
    try:
        yield made
    finally:
        for ctx in made:
            ctx.close()


def in_view(locator: Locator, timeout: float = 15_000) -> None:
    """Seen by a person: shown, and inside the viewport (the countdown takes seconds)."""
    expect(locator).to_be_visible(timeout=timeout)
    expect(locator).to_be_in_viewport(timeout=timeout)


def open_home(m: Minesweeper) -> None:
    m.goto()
    expect(m.page.locator("#player-label")).not_to_have_text("Player")


def create_room(m: Minesweeper, mode: str, seats: int = 2, board: str = "beginner") -> str:
    m.page.get_by_role("button", name="Play online").click()
    dialog = m.page.get_by_role("dialog", name="Play online")
    in_view(dialog)
    dialog.get_by_label("Mode").select_option(mode)
    dialog.get_by_label("Board").select_option(board)
    dialog.get_by_label("Seats").select_option(str(seats))
    dialog.get_by_role("button", name="Create room").click()
    expect(m.page).to_have_url(MATCH_URL)
    found = MATCH_URL.search(m.page.url)
    assert found
    return found.group(1)


def join_by_link(creator: Minesweeper, guest: Minesweeper) -> None:
    link = creator.page.get_by_label("Invite with this link:")
    in_view(link)
    # The field shows before the room is made: its link comes with the room.
    expect(link).to_have_value(re.compile(r"^https?://"))
    url = link.input_value()
    guest.page.goto(url)
    take = guest.page.get_by_role("button", name="Take a seat")
    in_view(take)
    take.click()
    for m in (creator, guest):
        expect(m.page.locator("#match-seats li")).to_have_count(2)


def board_rows(m: Minesweeper) -> list[str]:
    width, _ = m.size()
    # A mine opened under the penalty rule counts as flagged: the solver's "F".
    states = ["F" if s == "X" else s for s in m.states()]
    return ["".join(states[i:i + width]) for i in range(0, len(states), width)]


def play_one(m: Minesweeper, mines: int) -> None:
    """One move a solver would make, clicked on the page's board."""
    x, y = next_cell(board_rows(m), mines)
    cell = m.cell(x, y)
    cell.scroll_into_view_if_needed()
    cell.click()
    expect(cell).not_to_have_attribute("data-state", "#")


def seat_bar(m: Minesweeper, name: str) -> Locator:
    return m.page.get_by_role("progressbar", name=f"{name}'s progress")


def test_two_pages_race_a_private_match_to_the_end(
    contexts: list[BrowserContext], new_ms: NewPage
) -> None:
    one: Minesweeper = new_ms(contexts[0])
    two: Minesweeper = new_ms(contexts[1])
    open_home(one)
    # Three seats: the creator starts with the two taken (a full match starts by itself).
    create_room(one, "race", seats=3)
    in_view(one.page.get_by_role("heading", name="Race"))
    # Out of how many seats, and the time limit.
    expect(one.page.locator("#match-status")).to_contain_text("1 of 3 seats taken")
    in_view(one.page.get_by_text("time limit 10 min"))
    # The creator cannot start alone.
    expect(one.page.get_by_role("button", name="Start")).to_be_disabled()
    # And looks it: dimmed, not the solid button that starts the match.
    expect(one.page.get_by_role("button", name="Start")).to_have_css("opacity", "0.5")

    two.page.goto(f"{two.base_url}/")
    expect(two.page.locator("#player-label")).not_to_have_text("Player")
    # Whoever opens the link is told the seats too, and the time limit.
    two.page.goto(one.page.get_by_label("Invite with this link:").input_value())
    status = two.page.locator("#match-status")
    expect(status).to_have_text("1 of 3 seats taken. Take a seat to play.")
    in_view(status)
    in_view(two.page.get_by_text("time limit 10 min"))
    join_by_link(one, two)
    expect(status).to_contain_text("2 of 3 seats taken")
    expect(status).to_be_focused()
    name_one = one.page.locator("#player-label").inner_text()
    name_two = two.page.locator("#player-label").inner_text()
    in_view(one.page.locator("#match-seats li", has_text=name_two))
    in_view(two.page.locator("#match-seats li", has_text=f"{name_two} (you)"))
    expect(two.page.get_by_role("button", name="Start")).to_be_hidden()
    expect(two.page.locator("#match-status")).to_contain_text(f"Waiting for {name_one} to start")

    one.page.get_by_role("button", name="Start").click()
    # The Start button went: the status has the focus, not the page.
    expect(one.page.locator("#match-status")).to_be_focused()
    for m in (one, two):
        in_view(m.page.locator("#match-countdown"))
        # The words in view beside the big counter name no number of seconds, which would
        # go stale as it counts down; a screen reader hears them once.
        expect(m.page.locator("#match-status")).to_have_text(re.compile(
            r"^Get ready: the match starts when the countdown ends\. It starts in [1-3] seconds?\.$"
        ))
    for m in (one, two):
        # After the countdown, the board: the start cell already open.
        in_view(m.grid)
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        assert any(s != "#" for s in m.states())
        in_view(seat_bar(m, name_one))
        in_view(seat_bar(m, name_two))

    # Two opens a mine it knows is one: a penalty, told to both as it happens.
    mines = 10
    while not (known := solver.analyze(board_rows(two), mines).mines):
        play_one(two, mines)
    x, y = known[0]
    two.cell(x, y).click()
    two.expect_state(x, y, "X")
    in_view(two.page.locator(".toast", has_text="You opened a mine: +5 s."))
    # The rival's row counts it; no notice of another's mine interrupts one's own race.
    in_view(one.page.locator("#match-seats li", has_text=name_two).get_by_text("1 mine +5 s"))
    expect(one.page.locator(".toast", has_text="opened a mine")).to_have_count(0)
    assert two.status() == "playing"

    # One clears the board first; two, still racing, sees one's progress fill up.
    while one.status() != "won":
        assert one.status() in ("ready", "playing"), one.status()
        play_one(one, mines)
    expect(seat_bar(two, name_one)).to_have_attribute(
        "aria-valuenow", seat_bar(two, name_one).get_attribute("aria-valuemax") or "x"
    )
    # One's finished board, shown while two plays, offers neither its replay nor a watch
    # link: both would hand two the board.
    in_view(one.page.locator("#result-title"))
    for button in ("#result-replay", "#result-share", "#share"):
        expect(one.page.locator(button)).to_be_hidden()
    while two.status() != "won":
        play_one(two, mines)

    for m, me in ((one, name_one), (two, name_two)):
        # Neither hints nor a pause in a race.
        expect(m.page.locator("#hint")).to_be_hidden()
        expect(m.page.locator("#pause")).to_be_hidden()
        table = m.page.get_by_role("table", name="Result")
        in_view(table)
        rows = table.locator("tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td").first).to_have_text("1")
        expect(rows.nth(1).locator("td").first).to_have_text(re.compile("^[12]$"))
        expect(table.locator("tbody tr", has_text=f"{me} (you)")).to_have_count(1)
        # Times, penalties, and a rated race's rating changes.
        for i in range(2):
            cells = rows.nth(i).locator("td")
            expect(cells.nth(2)).to_have_text(re.compile(r"^\d+ \((\+\d+|\u2212\d+|±0)\)$"))
        # The time says what the penalty added.
        penalised = table.locator("tbody tr", has_text=name_two).locator("td")
        expect(penalised.nth(1)).to_have_text(
            re.compile(r"^\d+\.\d{3} s \+ 5 s penalty = \d+\.\d{3} s$")
        )
        expect(table.locator("tbody tr", has_text=name_one).locator("td").nth(1)).to_have_text(
            re.compile(r"^\d+\.\d{3} s$")
        )
        expect(table.get_by_role("link", name=re.compile("^Replay of"))).to_have_count(2)

    for m in (one, two):
        # The board beside the match's result keeps cells a mouse can hit, whole.
        expect(m.page.locator("#board-area")).to_have_attribute("data-more", "")
        box = m.cell(0, 0).bounding_box()
        assert box and box["width"] >= 22, box
    ARTIFACTS.mkdir(exist_ok=True)
    one.page.screenshot(path=str(ARTIFACTS / "match-result.png"), full_page=True)
    # A game of one's own after the match, so named: the match's page left.
    one.page.locator("#result").get_by_role("button", name="New solo game").click()
    expect(one.page).to_have_url(re.compile(r"#/game/[0-9a-f]{32}$"))
    expect(one.page.locator("#match")).to_be_hidden()
    expect(one.page.locator("#frame")).to_have_attribute("data-status", "ready")
    # The opponent's replay opens from the table.
    two.page.get_by_role("link", name=f"Replay of {name_one}'s board").click()
    expect(two.page).to_have_url(re.compile(r"#/replay/[0-9a-f]{32}$"))
    in_view(two.page.locator("#replay"))
    expect(two.page.locator("#match")).to_be_hidden()

    # The profile shows the race rating and the match among the recent games, opening its result.
    one.page.locator("#player-button").click()
    rating = re.compile(r"^Race: \d+ ± \d+ \(1 game, provisional\)$")
    in_view(one.page.locator("#profile-ratings", has_text=rating))
    entry = one.page.locator("#profile-recent li").first
    in_view(entry)
    expect(entry).to_contain_text("Match, beginner, no guessing")
    entry.get_by_role("link", name=re.compile("^Result of the match")).click()
    expect(one.page).to_have_url(MATCH_URL)
    in_view(one.page.get_by_role("table", name="Result"))


def pressed_levels(m: Minesweeper) -> Locator:
    return m.page.get_by_role("navigation", name="Difficulty").locator("[aria-pressed=true]")


def test_a_rooms_level_shows_in_the_top_bar_for_creator_and_guest(
    contexts: list[BrowserContext], new_ms: NewPage
) -> None:
    one: Minesweeper = new_ms(contexts[0])
    two: Minesweeper = new_ms(contexts[1])
    for m in (one, two):
        open_home(m)
        expect(pressed_levels(m)).to_have_text("Beginner")
    create_room(one, "race", board="intermediate")
    in_view(one.page.get_by_text("Intermediate, no guessing"))
    two.page.goto(one.page.get_by_label("Invite with this link:").input_value())
    in_view(two.page.get_by_role("button", name="Take a seat"))
    # Both see the match's level, not the level of the game they had on screen before.
    for m in (one, two):
        expect(pressed_levels(m)).to_have_text("Intermediate")
    # Leaving the match for a game of one's own shows that game's level again.
    two.page.get_by_role("button", name="Beginner", exact=True).click()
    expect(two.page).to_have_url(re.compile(r"#/game/[0-9a-f]{32}$"))
    expect(two.page.locator("#match")).to_be_hidden()
    in_view(two.grid)
    expect(pressed_levels(two)).to_have_text("Beginner")


def test_coop_moves_and_cursors_reach_the_teammate(
    contexts: list[BrowserContext], new_ms: NewPage
) -> None:
    one: Minesweeper = new_ms(contexts[0])
    two: Minesweeper = new_ms(contexts[1])
    open_home(one)
    create_room(one, "coop")
    in_view(one.page.get_by_role("heading", name="Co-op"))
    two.page.goto(f"{two.base_url}/")
    expect(two.page.locator("#player-label")).not_to_have_text("Player")
    join_by_link(one, two)
    name_one = one.page.locator("#player-label").inner_text()
    # Two seats of two: the match starts by itself.
    for m in (one, two):
        in_view(m.grid)
        expect(m.page).to_have_url(MATCH_URL)

    # The face does not restart a match's board while it is played (one move
    # may win a small board, so before any).
    one.page.locator("#face").click()
    in_view(one.page.locator(".toast", has_text="cannot be restarted"))
    expect(one.page).to_have_url(MATCH_URL)

    # A move by one shows on the other's board.
    x, y = next_cell(board_rows(one), 10)
    one.cell(x, y).click()
    expect(two.cell(x, y)).not_to_have_attribute("data-state", "#")
    assert one.state(x, y) == two.state(x, y)
    # Two sees who played it: one's marker on that cell, saying what the move opened.
    played = two.page.locator(".coop-cursor")
    in_view(played)
    expect(played).to_contain_text(re.compile(f"^{re.escape(name_one)}: opened \\d+ cells?$"))
    expect(played).to_have_attribute("data-x", str(x))
    expect(played).to_have_attribute("data-y", str(y))

    # One's pointer is drawn on the other's board, on its cell, with one's name.
    one.cell(4, 4).hover()
    one.cell(5, 3).hover()
    cursor = two.page.locator(".coop-cursor")
    in_view(cursor)
    expect(cursor).to_have_attribute("data-x", "5")
    expect(cursor).to_have_attribute("data-y", "3")
    expect(cursor).to_contain_text(name_one)
    box = cursor.bounding_box()
    cell = two.cell(5, 3).bounding_box()
    assert box and cell
    assert abs(box["x"] - cell["x"]) < 2 and abs(box["y"] - cell["y"]) < 2
    # Nobody sees their own pointer.
    expect(one.page.locator(".coop-cursor")).to_have_count(0)
    # The match over, the teammate's pointer goes with it.
    for m in (one, two):
        resign(m)
    expect(two.page.locator("#match-status")).to_contain_text("over")
    expect(two.page.locator(".coop-cursor")).to_have_count(0)


def test_quick_pairing_on_a_phone_with_the_keyboard(browser: Browser, new_ms: NewPage) -> None:
    pages: list[Minesweeper] = []
    contexts = [browser.new_context(**PHONE) for _ in range(2)]
    try:
        for ctx in contexts:
            ctx.set_default_timeout(15_000)
            m: Minesweeper = new_ms(ctx)
            open_home(m)
            pages.append(m)
        for m in pages:
            button = m.page.get_by_role("button", name="Play online")
            in_view(button)
            button.focus()
            m.page.keyboard.press("Enter")
            dialog = m.page.get_by_role("dialog", name="Play online")
            in_view(dialog)
            beginner = dialog.get_by_role("button", name="Beginner")
            in_view(beginner)
            beginner.focus()
            m.page.keyboard.press("Enter")
            if m is pages[0]:
                # Stopping the search leaves the focus on the board it looked on, not the page.
                stop = dialog.get_by_role("button", name="Stop looking")
                in_view(stop)
                stop.focus()
                m.page.keyboard.press("Enter")
                expect(dialog.get_by_text("Stopped looking.")).to_be_visible()
                expect(beginner).to_be_focused()
                m.page.keyboard.press("Enter")
        # The first is told it waits (unless the second paired it already); both end in one race.
        ids = set()
        for m in pages:
            expect(m.page).to_have_url(MATCH_URL)
            found = MATCH_URL.search(m.page.url)
            assert found
            ids.add(found.group(1))
            in_view(m.grid)
            in_view(m.page.locator("#match-seats li", has_text="(you)"))
            # The board fits the phone's width.
            box = m.grid.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["viewport"]["width"]
        assert len(ids) == 1
        for m in pages:
            # Nothing of the match's page reaches past the phone's width.
            page_width = m.page.evaluate("document.documentElement.scrollWidth")
            assert page_width <= PHONE["viewport"]["width"]
        for m in pages:
            expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
            # Under the seats, the whole board is in the window with the controls under
            # it (the page scrolled to it): no panning a board that fits the phone.
            w, h = m.size()
            for x, y in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)):
                in_view(m.cell(x, y))
            in_view(m.page.locator("#flag-mode"))
            expect(m.page.locator("#board-area")).to_have_attribute("data-more", "")
            # The race began: the keyboard is on the board, not on "Play online".
            expect(m.page.locator("#board [data-i]:focus")).to_have_count(1)
            # A race has no hints and no pause.
            expect(m.page.locator("#hint")).to_be_hidden()
            expect(m.page.locator("#pause")).to_be_hidden()
        ARTIFACTS.mkdir(exist_ok=True)
        pages[1].page.screenshot(path=str(ARTIFACTS / "match-race-phone.png"))
        # A tap plays on the phone.
        m = pages[0]
        x, y = next_cell(board_rows(m), 10)
        m.cell(x, y).tap()
        expect(m.cell(x, y)).not_to_have_attribute("data-state", "#")
    finally:
        for ctx in contexts:
            ctx.close()


def test_a_waiting_page_hears_of_its_pairing_on_the_players_socket(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """The page polls its seek as well, but with every poll held unanswered it still goes
    to the match once another player's seek pairs it: the player's socket told it."""
    m = new_ms(context)
    open_home(m)
    held: list[Route] = []

    def hold_polls(route: Route) -> None:
        if route.request.method == "GET":
            held.append(route)  # never answered while the test runs
        else:
            route.continue_()

    m.page.route(re.compile(r"/seeks/[0-9a-f]{32}$"), hold_polls)
    m.page.get_by_role("button", name="Play online").click()
    dialog = m.page.get_by_role("dialog", name="Play online")
    in_view(dialog)
    dialog.get_by_label("No guessing").uncheck()
    with m.page.expect_request(lambda r: "/seeks/" in r.url and r.method == "GET"):
        dialog.get_by_role("button", name="Intermediate").click()
    # The seek waits (nobody was paired at once), and its first poll hangs.
    in_view(dialog.get_by_text("Looking for an opponent on Intermediate"))
    assert held
    with httpx.Client(base_url=live_server, timeout=15) as http:
        rival = http.post("/players", json={"name": f"rival{secrets.token_hex(4)}"}).json()
        seek = http.post(
            "/seeks", json={"mode": "race", "preset": "intermediate", "no_guess": False},
            headers={"Authorization": f"Bearer {rival['token']}"},
        ).json()["seek"]
    assert seek["status"] == "matched"
    expect(m.page).to_have_url(re.compile(rf"#/match/{seek['match_id']}$"))
    in_view(m.page.locator("#match-seats li", has_text="(you)"))
    assert all(r.request.method == "GET" for r in held), "no poll was let through"


def inside_width(m: Minesweeper, selector: str, width: int) -> None:
    """Every box of ``selector`` lies within the page's width."""
    boxes = m.page.locator(selector).evaluate_all(
        "els => els.filter(e => e.getClientRects().length)"
        ".map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"
    )
    assert boxes, selector
    for left, right in boxes:
        assert left >= 0 and right <= width + 0.5, (selector, left, right)


def test_a_match_result_fits_a_phone(browser: Browser, new_ms: NewPage) -> None:
    """Both players resign a race on phones: the result card stays within the screen (the
    page never scrolls sideways), and so does its table: each row stands as a card, every
    cell whole under its label (the rating and its change too), each replay link in reach."""
    phone = {**PHONE, "viewport": {"width": 390, "height": 844}}
    with two_players(browser, new_ms, phone) as pages:
        one, two = pages
        create_room(one, "race")
        join_by_link(one, two)
        # Resigned once play began, the race is rated: each row has a rating change. (By
        # the service's clock: a race every seat left before its start rates nobody.)
        for m in pages:
            expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        wait_for_play(one)
        resign_all(pages)
        width = phone["viewport"]["width"]
        for m in pages:
            table = m.page.get_by_role("table", name="Result")
            expect(table).to_be_visible()
            expect(m.page.locator("#match-status")).to_contain_text("over")
            assert m.page.evaluate("document.documentElement.scrollWidth") <= width
            inside_width(m, "#match, #match-title, #match-settings, #match-status, #match-results",
                         width)
            # Nothing scrolls sideways, not even inside the card.
            results = m.page.locator("#match-results")
            assert results.evaluate("e => e.scrollWidth <= e.clientWidth")
            inside_width(m, "#match-results tbody th, #match-results tbody td", width)
            for row in range(2):
                cells = table.locator("tbody tr").nth(row).locator("th, td")
                for i in range(cells.count()):
                    cell = cells.nth(i)
                    cell.scroll_into_view_if_needed()
                    whole_in(m, cell)
                # A resigned seat's card says so in words, with no "Time:" before them.
                outcome = table.locator("tbody tr").nth(row).locator("td").nth(1)
                assert outcome.inner_text().startswith("Resigned: "), outcome.inner_text()
                rating = table.locator("tbody tr").nth(row).locator("td[data-label=Rating]")
                expect(rating).to_have_text(re.compile(r"^\d+ \((\+\d+|\u2212\d+|±0)\)$"))
                replay = table.locator("tbody tr").nth(row).get_by_role(
                    "link", name=re.compile("^Replay of")
                )
                replay.scroll_into_view_if_needed()
                in_window(m, replay)
            # The match's end ended each resigned seat's game: the board shows where the
            # mines were, under the match's result; its panel says the seat resigned.
            expect(m.page.locator("#frame")).to_have_attribute("data-status", "lost")
            assert "*" in m.states() and "X" not in m.states()
            expect(m.page.locator("#result-title")).to_have_text("You resigned")
        ARTIFACTS.mkdir(exist_ok=True)
        one.page.locator("#match").screenshot(path=str(ARTIFACTS / "match-result-phone.png"))


@contextlib.contextmanager
def two_players(browser: Browser, new_ms: NewPage, device: dict[str, Any]
                ) -> Iterator[list[Minesweeper]]:
    """Two people on the home page, each in a browser context of ``device``."""
    contexts = [browser.new_context(**device) for _ in range(2)]
    try:
        pages: list[Minesweeper] = []
        for ctx in contexts:
            ctx.set_default_timeout(15_000)
            m: Minesweeper = new_ms(ctx)
            open_home(m)
            pages.append(m)
        yield pages
    finally:
        for ctx in contexts:
            ctx.close()


def inside(a: Box, b: Box) -> bool:
    return (
        b["x"] <= a["x"] and a["x"] + a["width"] <= b["x"] + b["width"] + 0.5
        and b["y"] <= a["y"] and a["y"] + a["height"] <= b["y"] + b["height"] + 0.5
    )


def test_a_race_on_a_laptop_keeps_the_seats_in_view_with_the_board(
    browser: Browser, new_ms: NewPage
) -> None:
    """A 720 px high window, an intermediate race: once play starts, the status, Resign and
    both players' progress are in the window together with the whole board."""
    with two_players(browser, new_ms, LAPTOP) as pages:
        one, two = pages
        create_room(one, "race", board="intermediate")
        join_by_link(one, two)
        names = [m.page.locator("#player-label").inner_text() for m in pages]
        window = {"x": 0, "y": 0, **LAPTOP["viewport"]}
        for m in pages:
            expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
            expect(m.page.locator("#match-leave")).to_have_text("Resign")
            area = m.page.locator("#board-area")
            expect(area).to_have_attribute("data-more", "")
            shown = [
                m.page.locator("#match-status"), m.page.get_by_role("button", name="Resign"),
                *(seat_bar(m, name) for name in names), area, m.page.locator("#flag-mode"),
            ]
            for locator in shown:
                expect(locator).to_be_visible()
                b = locator.bounding_box()
                assert b and inside(b, window), (locator, b)
            w, h = m.size()
            for x, y in ((0, 0), (w - 1, h - 1)):
                cell = m.cell(x, y).bounding_box()
                assert cell and inside(cell, window), (x, y, cell)
                assert cell["width"] >= 22, cell
            assert m.page.evaluate("document.documentElement.scrollWidth") <= window["width"]


# ---- rematches ---------------------------------------------------------------------------


def window_of(m: Minesweeper) -> Box:
    size = m.page.viewport_size
    assert size
    return {"x": 0, "y": 0, **size}


def in_window(m: Minesweeper, locator: Locator, timeout: float = 5.0) -> None:
    """Shown, and its whole box inside the window (not just touching it). Asked again
    while the page redraws it (the room draws its seats anew as the countdown ticks)."""
    expect(locator).to_be_visible()
    deadline = time.monotonic() + timeout
    while True:
        try:
            box = locator.bounding_box(timeout=1_000)
        except PlaywrightError:
            box = None  # drawn anew between finding it and measuring it
        if (box and inside(box, window_of(m))) or time.monotonic() > deadline:
            break
        m.page.wait_for_timeout(100)
    assert box and inside(box, window_of(m)), (locator, box, window_of(m))


def resign(m: Minesweeper) -> None:
    """The seat resigns from the page, confirming it."""
    button = m.page.get_by_role("button", name="Resign")
    in_view(button)
    button.click()
    dialog = m.page.get_by_role("dialog", name=re.compile("^Resign"))
    in_view(dialog)
    dialog.get_by_role("button", name="Resign").click()
    expect(button).to_have_count(0)


# How the room's status ends a race its player resigned: the place, and who won if anybody
# (nobody, when every seat resigned).
RESIGNED_OVER = (
    r"The match is over: (you resigned(, (tied for )?\d+(st|nd|rd|th) place)?"
    r"|everybody resigned, so nobody won)\.( \S+ won\.)?"
)


def resign_all(pages: list[Minesweeper]) -> None:
    """Every seat resigns from the page: the race is over, its result on every page."""
    for m in pages:
        resign(m)
    for m in pages:
        expect(m.page.get_by_role("table", name="Result")).to_be_visible()


def wait_for_play(m: Minesweeper) -> None:
    """Until the service says the page's match is playing (its countdown over)."""
    deadline = time.monotonic() + 15
    while httpx.get(f"{m.base_url}/matches/{match_id(m)}").json()["status"] != "playing":
        assert time.monotonic() < deadline, "the countdown never ended"
        time.sleep(0.05)


def match_id(m: Minesweeper) -> str:
    found = MATCH_URL.search(m.page.url)
    assert found, m.page.url
    return found.group(1)


def expect_rematch_rooms(pages: list[Minesweeper], new: str, names: list[str]) -> None:
    """Every page is the rematch's, counting down (3 s: looked at first, on every page),
    with every player seated."""
    for m in pages:
        expect(m.page).to_have_url(re.compile(f"#/match/{new}$"))
        in_view(m.page.locator("#match-countdown"))
    for m in pages:
        seats = m.page.locator("#match-seats li")
        expect(seats).to_have_count(len(names))
        for name in names:
            in_view(seats.filter(has_text=name))


def test_two_players_play_their_race_again(
    browser: Browser, context: BrowserContext, new_ms: NewPage
) -> None:
    """Both resign a race in laptop windows. One asks for a rematch with the keyboard and is
    taken to its room; the other is told who asked and joins it; a page without a seat is
    offered to watch it. The rematch counts down with both, and a reload stays in it."""
    with two_players(browser, new_ms, LAPTOP) as pages:
        one, two = pages
        old = create_room(one, "race")
        join_by_link(one, two)
        names = [m.page.locator("#player-label").inner_text() for m in pages]
        watcher = new_ms(context)
        watcher.page.goto(f"{watcher.base_url}/#/match/{old}")
        expect(watcher.page.locator("#match-seats li")).to_have_count(2)
        resign_all(pages)
        expect(watcher.page.get_by_role("table", name="Result")).to_be_visible()

        # The players are offered the same race again, under its result; a page without a
        # seat is offered nothing until somebody asks.
        for m in pages:
            in_window(m, m.page.get_by_role("button", name="Rematch", exact=True))
        expect(watcher.page.locator("#match-rematch-box")).to_be_hidden()

        ask = one.page.get_by_role("button", name="Rematch", exact=True)
        ask.focus()
        one.page.keyboard.press("Enter")
        expect(one.page).not_to_have_url(re.compile(f"#/match/{old}$"))
        expect(one.page).to_have_url(MATCH_URL)
        new = match_id(one)
        # The rematch's room, one seated in the creator's seat; the focus on its status
        # (Start waits for the other player).
        expect(one.page.locator("#match-seats li")).to_have_count(1)
        in_window(one, one.page.locator("#match-seats li", has_text=f"{names[0]} (you)"))
        expect(one.page.locator("#match-status")).to_be_focused()
        in_window(one, one.page.locator("#match-status"))
        expect(one.page.get_by_role("button", name="Start")).to_be_disabled()
        # Only the last match's players may sit down: nobody else is invited, and the room
        # knows its seats are as many as they were.
        expect(one.page.locator("#match-status")).to_have_text(
            "1 of 2 seats taken. Start once another player is in."
        )
        only = one.page.get_by_text("Rematch of the last match: only its players can join.")
        in_window(one, only)
        expect(one.page.get_by_label("Invite with this link:")).to_be_hidden()

        # The other player hears of it on the finished match's page, and who asked.
        join = two.page.get_by_role("button", name="Join the rematch")
        in_window(two, join)
        expect(two.page.get_by_role("button", name="Rematch", exact=True)).to_have_count(0)
        status = two.page.locator("#match-status")
        expect(status).to_have_text(re.compile(f"^{RESIGNED_OVER} {names[0]} wants a rematch\\.$"))
        in_window(two, status)
        # The page without a seat may watch it.
        watch = watcher.page.get_by_role("link", name="Watch the rematch")
        in_window(watcher, watch)
        expect(watch).to_have_attribute("href", f"#/match/{new}")
        expect(watcher.page.locator("#match-status")).to_contain_text(
            f"{names[0]} wants a rematch."
        )
        expect(watcher.page.locator("#match-rematch")).to_be_hidden()
        # Its room offers the watcher no seat: it is the players'.
        watch.click()
        expect(watcher.page).to_have_url(re.compile(f"#/match/{new}$"))
        expect(watcher.page.locator("#match-status")).to_be_focused()
        expect(watcher.page.locator("#match-status")).to_have_text(
            "1 of 2 seats taken. Only the last match's players can take a seat; you can watch."
        )
        only = "Rematch of the last match: only its players can join."
        in_window(watcher, watcher.page.get_by_text(only))
        expect(watcher.page.get_by_role("button", name="Take a seat")).to_be_hidden()

        join.click()
        expect(two.page).to_have_url(re.compile(f"#/match/{new}$"))
        # Both seated, it starts by itself: both pages count down with both seats.
        expect_rematch_rooms([two, one], new, names)
        expect(two.page.locator("#match-status")).to_be_focused()
        expect(watcher.page.locator("#match-seats li")).to_have_count(2)

        # The address is the rematch's: a reload stays in it, on its board once it starts.
        one.page.reload()
        expect(one.page).to_have_url(re.compile(f"#/match/{new}$"))
        expect(one.page.locator("#match-seats li")).to_have_count(2)
        in_view(one.grid)
        expect(one.page.locator("#match-leave")).to_have_text("Resign")
        # Back on the finished match, the player seated in its rematch goes straight there.
        one.page.goto(f"{one.base_url}/#/match/{old}")
        back = one.page.get_by_role("button", name="Go to the rematch")
        in_window(one, back)
        expect(one.page.locator("#match-status")).to_have_text(
            re.compile(f"^{RESIGNED_OVER} You asked for a rematch\\.$")
        )
        back.click()
        expect(one.page).to_have_url(re.compile(f"#/match/{new}$"))
        in_view(one.grid)


def test_a_rematch_on_phones(browser: Browser, new_ms: NewPage) -> None:
    """On phones the rematch's button, who asked, and the rematch's room are all inside
    the screen, and nothing reaches past its width."""
    phone = {**PHONE, "viewport": {"width": 390, "height": 844}}
    with two_players(browser, new_ms, phone) as pages:
        one, two = pages
        old = create_room(one, "race")
        join_by_link(one, two)
        names = [m.page.locator("#player-label").inner_text() for m in pages]
        resign_all(pages)
        for m in pages:
            in_window(m, m.page.get_by_role("button", name="Rematch", exact=True))
        one.page.get_by_role("button", name="Rematch", exact=True).tap()
        expect(one.page).not_to_have_url(re.compile(f"#/match/{old}$"))
        expect(one.page.locator("#match-seats li")).to_have_count(1)
        new = match_id(one)
        status = one.page.locator("#match-status")
        expect(status).to_be_focused()
        in_window(one, status)
        join = two.page.get_by_role("button", name="Join the rematch")
        in_window(two, join)
        in_window(two, two.page.locator("#match-status", has_text=f"{names[0]} wants a rematch."))
        ARTIFACTS.mkdir(exist_ok=True)
        two.page.screenshot(path=str(ARTIFACTS / "match-rematch-phone.png"))
        join.tap()
        expect_rematch_rooms([two, one], new, names)
        for m in pages:
            assert m.page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_rematch_that_went_on_without_a_player_says_so(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """Three raced; two of them sat down in the rematch and started it. The third, asking
    to join it, is told in the room's status why not, and offered to watch it."""
    m = new_ms(context)
    open_home(m)
    with httpx.Client(base_url=live_server, timeout=15) as http:

        def player(name: str) -> dict[str, str]:
            made = http.post("/players", json={"name": f"{name}{secrets.token_hex(3)}"})
            assert made.status_code == 201, made.text
            return {"Authorization": f"Bearer {made.json()['token']}",
                    "name": made.json()["player"]["name"]}

        def post(path: str, who: dict[str, str], **body: Any) -> dict[str, Any]:
            r = http.post(path, json=body or None,
                          headers={"Authorization": who["Authorization"]})
            assert r.status_code in (200, 201), r.text
            answer: dict[str, Any] = r.json()
            return answer

        ada, bob = player("ada"), player("bob")
        old = post("/matches", ada, mode="race", preset="beginner", seats=3)["match"]["id"]
        post(f"/matches/{old}/join", bob)
        m.page.goto(f"{m.base_url}/#/match/{old}")
        m.page.get_by_role("button", name="Take a seat").click()
        # Three of three: it starts by itself; everybody resigns.
        in_view(m.page.get_by_role("button", name="Resign"))
        for who in (ada, bob):
            post(f"/matches/{old}/leave", who)
        resign(m)
        in_view(m.page.get_by_role("table", name="Result"))
        in_view(m.page.get_by_role("button", name="Rematch", exact=True))

        new = post(f"/matches/{old}/rematch", ada)["match"]["id"]
        join = m.page.get_by_role("button", name="Join the rematch")
        in_view(join)
        status = m.page.locator("#match-status")
        wants = f"^{RESIGNED_OVER} {ada['name']} wants a rematch\\.$"
        expect(status).to_have_text(re.compile(wants))
        post(f"/matches/{old}/rematch", bob)
        post(f"/matches/{new}/start", ada)

        join.focus()
        m.page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(
            f"^{RESIGNED_OVER} The rematch has started without you; you can watch it\\.$"
        ))
        in_view(status)
        expect(m.page).to_have_url(re.compile(f"#/match/{old}$"))
        watch = m.page.get_by_role("link", name="Watch the rematch")
        in_view(watch)
        expect(watch).to_be_focused()
        expect(m.page.locator("#match-rematch")).to_be_hidden()


# ---- how a match ends, as each seat is told it ---------------------------------------------

WIDE = {"viewport": {"width": 1920, "height": 1080}}


class Rival:
    """A player of the service's API: seated, moving and resigning without a page."""

    def __init__(self, http: httpx.Client, prefix: str = "Rival") -> None:
        self.http = http
        # 20 characters, the longest name there is.
        made = http.post("/players", json={"name": f"{prefix}{secrets.token_hex(10)}"[:20]})
        assert made.status_code == 201, made.text
        body = made.json()
        self.id: str = body["player"]["id"]
        self.name: str = body["player"]["name"]
        self.token: str = body["token"]
        self.auth = {"Authorization": f"Bearer {self.token}"}

    def post(self, path: str, **body: Any) -> dict[str, Any]:
        r = self.http.post(path, json=body or None, headers=self.auth)
        assert r.status_code in (200, 201), r.text
        answer: dict[str, Any] = r.json()
        return answer

    def match(self, match_id: str) -> dict[str, Any]:
        view: dict[str, Any] = self.http.get(f"/matches/{match_id}", headers=self.auth).json()
        return view

    def wait_playing(self, match_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + 20
        while (view := self.match(match_id))["status"] != "playing":
            assert time.monotonic() < deadline, view["status"]
            time.sleep(0.2)
        return view

    def clear(self, match_id: str) -> None:
        """Clears this rival's board by logic (a mine opened by a guess is a penalty)."""
        seat = next(s for s in self.wait_playing(match_id)["seats"] if s["player"]["id"] == self.id)
        game_id = seat["game_id"]
        while True:
            view = self.http.get(f"/games/{game_id}").json()
            if view["status"] != "playing":
                assert view["status"] == "won", view["status"]
                return
            x, y = next_cell([row.replace("X", "F") for row in view["board"]], view["mines"])
            r = self.http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=self.auth)
            assert r.status_code == 200, r.text

    def open_mine(self, match_id: str) -> None:
        """Plays by logic until a mine is certain, then opens it: a penalty."""
        seat = next(s for s in self.wait_playing(match_id)["seats"] if s["player"]["id"] == self.id)
        game_id = seat["game_id"]
        while True:
            view = self.http.get(f"/games/{game_id}").json()
            rows = [row.replace("X", "F") for row in view["board"]]
            certain = solver.analyze(rows, view["mines"]).mines
            known = [(x, y) for x, y in certain if rows[y][x] == "#"]
            x, y = known[0] if known else next_cell(rows, view["mines"])
            r = self.http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=self.auth)
            assert r.status_code == 200, r.text
            if known:
                return

    def adopt(self, m: Minesweeper) -> None:
        """The page plays as this player (its browser holds the player's token)."""
        value = json.dumps(json.dumps({"id": self.id, "name": self.name, "token": self.token}))
        m.page.add_init_script(f"localStorage.setItem('minesweeper.player', {value});")


def sit_down(m: Minesweeper, match_id: str) -> None:
    """The page opens a match's room and takes a seat there."""
    m.page.goto(f"{m.base_url}/#/match/{match_id}")
    take = m.page.get_by_role("button", name="Take a seat")
    in_view(take)
    take.click()


def race_begun(m: Minesweeper, rival: Rival) -> dict[str, Any]:
    """A beginner race the rival opens, with the page seated in it, once its countdown
    is over and the board shows: the match."""
    match: dict[str, Any] = rival.post("/matches", mode="race", preset="beginner")["match"]
    sit_down(m, match["id"])
    expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
    in_view(m.grid)
    return match


def open_a_known_mine(m: Minesweeper, mines: int = 10) -> None:
    """Plays on until the solver knows a mine, then opens it: a penalty."""
    def known() -> list[tuple[int, int]]:
        # A mine opened before is "F" to the solver, and certain: not one to open again.
        rows = board_rows(m)
        return [(x, y) for x, y in solver.analyze(rows, mines).mines if rows[y][x] == "#"]

    while not (cells := known()):
        play_one(m, mines)
    x, y = cells[0]
    m.cell(x, y).click()
    m.expect_state(x, y, "X")


def clear_board_last_on_a_mine(m: Minesweeper, mines: int = 10) -> None:
    """Clears the board, opening a known mine just before its last safe cell."""
    while m.status() != "won":
        rows = board_rows(m)
        hidden = sum(row.count("#") for row in rows)
        opened_mines = m.states().count("X")
        known = [(x, y) for x, y in solver.analyze(rows, mines).mines if rows[y][x] == "#"]
        if known and hidden - (mines - opened_mines) == 1:
            x, y = known[0]
            m.cell(x, y).click()
            m.expect_state(x, y, "X")
        play_one(m, mines)


def clear_board(m: Minesweeper, mines: int = 10) -> None:
    while m.status() != "won":
        assert m.status() in ("ready", "playing"), m.status()
        play_one(m, mines)


def whole_in(m: Minesweeper, locator: Locator) -> None:
    """Every box of ``locator`` is shown whole: nothing of its text is cut off (it does
    not overflow its own box), and its box is inside the window."""
    for i in range(locator.count()):
        item = locator.nth(i)
        expect(item).to_be_visible()
        cut = item.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        assert not cut, (item.inner_text(), "cut off")
        box = item.bounding_box()
        assert box and inside(box, window_of(m)), (item.inner_text(), box)


def test_a_race_tells_each_seat_its_place_and_its_time_with_penalties(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """Three seats at 1920x1080, names as long as names go. A rival clears first; the page
    opens a mine (+5 s) and clears second while the third still races: it is told it
    cleared and waits, not that it won, and the race list shows every name whole. The
    third resigns: the page came second, in words, in its panel and its replay's title;
    its time says what the penalty added, alike in the panel and the table."""
    ctx = browser.new_context(**WIDE)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            first, third, me = Rival(http, "First"), Rival(http, "Third"), Rival(http, "Myself")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = first.post("/matches", mode="race", preset="beginner", seats=3)["match"]
            third.post(f"/matches/{match['id']}/join")
            sit_down(m, match["id"])
            expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
            in_view(m.grid)

            first.clear(match["id"])
            open_a_known_mine(m)
            # Every name is read whole in the race list, the page's own with "(you)", beside
            # the penalty it took.
            seats = m.page.locator("#match-seats li")
            in_view(seats.filter(has_text=f"{me.name} (you)").get_by_text("1 mine +5 s"))
            whole_in(m, m.page.locator("#match-seats .seat-name"))
            ARTIFACTS.mkdir(exist_ok=True)
            m.page.screenshot(path=str(ARTIFACTS / "match-race-wide.png"))
            for name in (first.name, third.name, f"{me.name} (you)"):
                expect(m.page.locator("#match-seats .seat-name", has_text=name)).to_have_count(1)
            clear_board(m)

            # Cleared, and the race goes on: not a win yet.
            status = m.page.locator("#match-status")
            expect(status).to_have_text(re.compile(
                r"^Cleared in \d+\.\d{3} s \+ 5 s penalty = \d+\.\d{3} s, waiting for "
                + re.escape(third.name) + r"\.$"
            ))
            in_window(m, status)
            title = m.page.locator("#result-title")
            expect(title).to_have_text("Cleared!")
            in_view(title)
            expect(m.page.get_by_text("You won!")).to_have_count(0)

            third.post(f"/matches/{match['id']}/leave")
            table = m.page.get_by_role("table", name="Result")
            in_view(table)
            expect(title).to_have_text("Cleared, 2nd place")
            in_view(title)
            expect(m.page.get_by_text("You won!")).to_have_count(0)
            mine = table.locator("tbody tr", has_text=f"{me.name} (you)")
            expect(mine.locator("td").first).to_have_text("2")
            time_cell = mine.locator("td").nth(1)
            expect(time_cell).to_have_text(
                re.compile(r"^\d+\.\d{3} s \+ 5 s penalty = \d+\.\d{3} s$")
            )
            base, total = re.findall(r"\d+\.\d{3}", time_cell.inner_text())
            assert abs(float(total) - float(base) - 5) < 0.0015, (base, total)
            # The panel under the board says the same time the same way, and names the time
            # it shows as the one with the penalty.
            panel = m.page.locator("#result")
            panel.scroll_into_view_if_needed()
            sub = m.page.locator("#result-sub")
            expect(sub).to_have_text(f"Cleared the beginner board in {time_cell.inner_text()}.")
            in_view(sub)
            stat = m.page.locator("#result-stats [data-stat=time]")
            expect(stat.locator("dt")).to_have_text("Time with penalties")
            expect(stat.locator("dd")).to_have_text(f"{total} s")
            in_view(stat)
            again = m.page.locator("#result").get_by_role("button", name="New solo game")
            in_view(again)
            play_again = m.page.locator("#result").get_by_role("button", name="Play again")
            expect(play_again).to_have_count(0)

            # The replay says the place too.
            table.get_by_role("link", name=f"Replay of {me.name}'s board").click()
            replay_title = m.page.locator("#replay-title")
            expect(replay_title).to_have_text(f"Replay: {me.name} cleared the board, 2nd place")
            in_view(replay_title)
            m.page.go_back()
            in_view(table)
            table.get_by_role("link", name=f"Replay of {first.name}'s board").click()
            expect(replay_title).to_have_text(f"Replay: {first.name} won")
            m.page.go_back()
            again = m.page.locator("#result").get_by_role("button", name="New solo game")
            in_view(again)
            again.click()
            expect(m.page).to_have_url(re.compile(r"#/game/[0-9a-f]{32}$"))
            expect(m.page.locator("#match")).to_be_hidden()
    finally:
        ctx.close()


def test_a_race_out_of_time_shows_its_clock_and_ends_on_the_3bv_done(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """A race with a 15 s limit, made over the API. The room says the limit; during play the
    time left counts down in the window, and a polite notice says once, near the end,
    that time is running out. The page does more than its rival: at the end its row says
    it ran out of time with the 3BV that put it first, and its face is not a dead one."""
    m = new_ms(context)
    open_home(m)
    with httpx.Client(base_url=live_server, timeout=15) as http:
        rival = Rival(http)
        match = rival.post("/matches", mode="race", preset="beginner", time_limit_s=15)["match"]
        m.page.goto(f"{m.base_url}/#/match/{match['id']}")
        in_view(m.page.get_by_text("time limit 15 s"))
        m.page.get_by_role("button", name="Take a seat").click()
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        clock = m.page.get_by_role("timer")
        expect(clock).to_have_text(re.compile(r"^Time left 0:1[0-5]$"))
        in_window(m, clock)
        # Counting down on the server's clock.
        before = clock.inner_text()
        expect(clock).not_to_have_text(before, timeout=3_000)
        # Moves put the page ahead of a rival that makes none: one may not (a number beside
        # an opening not opened yet adds no 3BV by itself).
        def ahead() -> bool:
            done = {s["player"]["id"]: s["progress"]["bbbv_done"]
                    for s in rival.match(match["id"])["seats"]}
            return done.pop(rival.id) < max(done.values())

        for _ in range(5):
            play_one(m, 10)
            if ahead():
                break
        assert ahead(), "five safe moves and not one more 3BV than the start's"
        # Said once, politely, shortly before the end (not every second: the timer is not
        # a live region).
        assert clock.get_attribute("aria-live") in (None, "off")
        announcer = m.page.locator("#announcer")
        expect(announcer).to_have_attribute("aria-live", "polite")
        expect(announcer).to_have_text(
            re.compile(r"^(10|9|8) seconds left in the match\.$"), timeout=10_000
        )
        expect(clock).to_have_class(re.compile(r"\bnear\b"))
        in_window(m, clock)

        table = m.page.get_by_role("table", name="Result")
        expect(table).to_be_visible(timeout=20_000)
        first_row = table.locator("tbody tr").first
        expect(first_row).to_contain_text(m.page.locator("#player-label").inner_text())
        expect(first_row.locator("td").first).to_have_text("1")
        expect(first_row.locator("td").nth(1)).to_have_text(
            re.compile(r"^Out of time: \d+ of \d+ 3BV$")
        )
        in_view(first_row)
        expect(table.get_by_text("Lost")).to_have_count(0)
        expect(clock).to_be_hidden()
        # The board stopped by the end is not a loss on a mine.
        expect(m.page.locator("#face")).not_to_have_attribute("data-face", "dead")
        title = m.page.locator("#result-title")
        expect(title).to_have_text("Out of time, 1st place")
        title.scroll_into_view_if_needed()
        in_view(title)
        expect(m.page.locator("#result-sub")).to_have_text(
            re.compile(r"^\d+ of \d+ 3BV done when the time ran out\.$")
        )


def test_resigning_is_confirmed_and_then_the_page_stops(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """Resign asks first, in a dialog the keyboard answers (Escape keeps playing). Once
    resigned the page says so, its clock stops, its board takes no clicks and looks it; the
    focus stays with the status. When the rival wins, the panel says the page resigned."""
    m = new_ms(context)
    open_home(m)
    with httpx.Client(base_url=live_server, timeout=15) as http:
        rival = Rival(http)
        match = rival.post("/matches", mode="race", preset="beginner")["match"]
        sit_down(m, match["id"])
        # The button pressed went: the status, saying what comes next, has the focus.
        status = m.page.locator("#match-status")
        expect(status).to_be_focused()
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        in_view(m.grid)

        resign = m.page.get_by_role("button", name="Resign")
        resign.focus()
        m.page.keyboard.press("Enter")
        dialog = m.page.get_by_role("dialog", name="Resign this race?")
        in_window(m, dialog)
        expect(dialog).to_contain_text("counts for your rating")
        keep = dialog.get_by_role("button", name="Keep playing")
        expect(keep).to_be_focused()
        m.page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        expect(resign).to_be_focused()
        expect(m.page.locator("#match-seats li", has_text="(you)")).not_to_contain_text("Resigned")
        m.page.keyboard.press("Enter")
        expect(keep).to_be_focused()
        m.page.keyboard.press("Tab")
        expect(dialog.get_by_role("button", name="Resign")).to_be_focused()
        m.page.keyboard.press("Enter")

        expect(status).to_have_text(
            "You resigned. The others play on; the result shows when the match ends."
        )
        in_window(m, status)
        expect(status).to_be_focused()
        expect(resign).to_have_count(0)
        # The clock stopped; the board takes no moves, and says so.
        stopped = m.timer()
        expect(m.grid).to_have_attribute("aria-readonly", "true")
        hidden = next(
            (i % 9, i // 9) for i, s in enumerate(m.states()) if s == "#"
        )
        m.cell(*hidden).click()
        m.page.wait_for_timeout(1500)
        assert m.timer() == stopped
        m.expect_state(*hidden, "#")
        expect(m.page.locator(".toast.error")).to_have_count(0)
        filter_ = m.page.locator("#board-area").evaluate("e => getComputedStyle(e).filter")
        assert "grayscale" in filter_, filter_

        rival.clear(match["id"])
        table = m.page.get_by_role("table", name="Result")
        in_view(table)
        title = m.page.locator("#result-title")
        expect(title).to_have_text("You resigned")
        title.scroll_into_view_if_needed()
        in_view(title)
        expect(m.page.get_by_text("Boom!")).to_have_count(0)
        expect(m.page.locator("#face")).not_to_have_attribute("data-face", "dead")


def test_coop_speaks_of_the_team_and_counts_its_penalties_once(
    contexts: list[BrowserContext], context: BrowserContext, new_ms: NewPage
) -> None:
    """Two players clear a co-op board, one of them opening a mine on the way; a third page
    watches. The watcher is told the board follows the team, and that the team won; the
    penalty is the team's, said once; the team's time says what the penalty added, the
    same way above the board and under it."""
    one: Minesweeper = new_ms(contexts[0])
    two: Minesweeper = new_ms(contexts[1])
    open_home(one)
    match = create_room(one, "coop")
    two.page.goto(f"{two.base_url}/")
    expect(two.page.locator("#player-label")).not_to_have_text("Player")
    join_by_link(one, two)
    watcher = new_ms(context)
    watcher.page.goto(f"{watcher.base_url}/#/match/{match}")
    for m in (one, two, watcher):
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        in_view(m.grid)
    idle = watcher.page.locator("#notes-idle")
    expect(idle).to_have_text("Watching live: the board follows the team's moves.")
    in_view(idle)

    open_a_known_mine(one)
    for m in (one, two, watcher):
        penalties = m.page.locator("#match-seats .seat-penalties")
        expect(penalties).to_have_count(1)
        expect(penalties).to_have_text("Team: 1 mine +5 s")
        in_view(penalties)
    # A teammate's mine is the team's: said so, once, on the teammate's page too.
    in_view(two.page.locator("#toasts .toast", has_text="The team opened a mine: +5 s."))
    expect(two.page.locator("#toasts .toast", has_text="opened a mine")).to_have_count(1)
    clear_board(one)

    sums = []
    said = re.compile(r"^The match is over: (?:together you|the team) cleared the board in"
                      r" (\d+\.\d{3} s \+ 5 s penalty = \d+\.\d{3} s)\.$")
    for m in (one, two, watcher):
        status = m.page.locator("#match-status")
        expect(status).to_have_text(said)
        in_view(status)
        found = said.match(status.inner_text())
        assert found
        sums.append(found.group(1))
        # The team's time is said once in the match's result, not again under the status.
        expect(m.page.locator("#match-summary")).to_have_count(0)
        assert m.page.locator("#match").inner_text().count("cleared the board") == 1
        table = m.page.get_by_role("table", name="The team's result")
        expect(table.locator("tbody tr")).to_have_count(2)
        expect(table).not_to_contain_text("+5 s")
        expect(m.page.get_by_text("The player").locator("visible=true")).to_have_count(0)
        expect(m.page.locator("#announcer")).not_to_contain_text("The player")
    assert len(set(sums)) == 1, sums
    phrase = sums[0]
    total = phrase.rsplit("= ", 1)[1]
    titles = ((one, "Cleared together!"), (two, "Cleared together!"), (watcher, "The team won!"))
    for m, title in titles:
        heading = m.page.locator("#result-title")
        expect(heading).to_have_text(title)
        heading.scroll_into_view_if_needed()
        in_view(heading)
        expect(m.page.locator("#result-sub")).to_contain_text(
            f"cleared the beginner board in {phrase}."
        )
        stat = m.page.locator("#result-stats [data-stat=time]")
        expect(stat.locator("dt")).to_have_text("Time with penalties")
        expect(stat.locator("dd")).to_have_text(total)
    solo = watcher.page.locator("#result").get_by_role("button", name="New solo game")
    expect(solo).to_be_visible()


@pytest.mark.parametrize("device", ["phone", "laptop"])
def test_the_play_online_dialog_reads_at_a_glance(
    browser: Browser, new_ms: NewPage, device: str
) -> None:
    """"No guessing" is a small box with its label beside it, above both ways to play, and
    says it is for both; each mode's name shows whole in its select, described below it."""
    phone = {**PHONE, "viewport": {"width": 390, "height": 844}}
    ctx = browser.new_context(**(phone if device == "phone" else LAPTOP))
    ctx.set_default_timeout(15_000)
    try:
        m: Minesweeper = new_ms(ctx)
        open_home(m)
        m.page.get_by_role("button", name="Play online").click()
        dialog = m.page.get_by_role("dialog", name="Play online")
        in_view(dialog)
        box = dialog.get_by_label("No guessing")
        expect(box).to_be_checked()
        check = box.bounding_box()
        words = dialog.locator(".online-check span").bounding_box()
        assert check and words
        assert check["width"] <= 24 and check["height"] <= 24, check
        # Beside it, on its line.
        middle = words["y"] + words["height"] / 2
        assert check["y"] <= middle <= check["y"] + check["height"], (check, words)
        assert words["x"] >= check["x"] + check["width"], (check, words)
        note = dialog.get_by_text("for quick races and private rooms alike")
        in_window(m, note)
        quick = dialog.get_by_role("heading", name="Quick race").bounding_box()
        assert quick and words["y"] < quick["y"], (words, quick)
        expect(box).to_have_attribute("aria-describedby", "online-noguess-hint")

        mode = dialog.get_by_label("Mode")
        mode.scroll_into_view_if_needed()
        in_window(m, mode)
        fits = mode.evaluate(
            """sel => {
                const cs = getComputedStyle(sel);
                const ctx = document.createElement('canvas').getContext('2d');
                ctx.font = cs.font;
                // Room for the text: the box less its padding and the arrow.
                const room = sel.clientWidth - parseFloat(cs.paddingLeft)
                    - parseFloat(cs.paddingRight) - 20;
                return [...sel.options].map(o => [o.text, ctx.measureText(o.text).width <= room]);
            }"""
        )
        assert all(ok for _, ok in fits), fits
        hint = dialog.locator("#room-mode-hint")
        expect(hint).to_have_text("Everybody plays the same board; the fastest clear wins.")
        in_window(m, hint)
        mode.select_option("coop")
        expect(hint).to_have_text("One board, played together: every move counts for the team.")
    finally:
        ctx.close()


# What a screen reader is given to say: every live region's text as it changes (the
# innermost region around a change), in order.
SPOKEN_JS = """
window.spoken = [];
const LIVE = '[aria-live]:not([aria-live="off"]), [role=status], [role=alert], [role=log]';
new MutationObserver((records) => {
  const regions = new Set();
  for (const r of records) {
    const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    const region = node && node.closest(LIVE);
    if (region) regions.add(region);
  }
  for (const region of regions) {
    const text = region.textContent.trim();
    if (text) window.spoken.push(text);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def test_the_last_to_finish_a_race_hears_its_place_once(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """At 1280x800 a rival clears first; the page clears last, which ends the race. It is
    said once how the race went (second, the time, who won), never that it waits for the
    others, and that the match is over only once."""
    ctx = browser.new_context(**DESKTOP)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "First"), Rival(http, "Last")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            m.page.add_init_script(SPOKEN_JS)
            match = race_begun(m, rival)
            rival.clear(match["id"])
            expect(m.page.locator("#match-seats li", has_text=rival.name)).to_have_attribute(
                "data-status", "won"
            )
            m.page.evaluate("window.spoken.length = 0")

            clear_board(m)
            in_view(m.page.get_by_role("table", name="Result"))
            expect(m.page.locator("#result-title")).to_have_text("Cleared, 2nd place")
            status = m.page.locator("#match-status")
            expect(status).to_have_text(re.compile(
                rf"^The match is over: you cleared the board in \d+\.\d{{3}} s, 2nd place\. "
                rf"{rival.name} won\.$"
            ))
            m.page.wait_for_timeout(1000)  # anything said a moment after
            spoken: list[str] = m.page.evaluate("window.spoken")
            assert not [t for t in spoken if "waiting for the others" in t.lower()], spoken
            assert [t for t in spoken if "2nd place" in t] == [status.inner_text()], spoken
            assert len([t for t in spoken if "match is over" in t]) == 1, spoken
    finally:
        ctx.close()


def test_a_phones_race_keeps_its_board_still_when_a_rival_clears(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """On a phone held upright, names as long as names go: when the rival clears, its row
    says so without growing (names keep to one line, cut short with the whole name in
    their tooltip), and the board under the seats does not move."""
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": 390, "height": 844}})
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Gentle-"), Rival(http, "Panda-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = race_begun(m, rival)
            seats = m.page.locator("#match-seats li")
            expect(seats).to_have_count(2)
            m.page.wait_for_timeout(300)  # the board brought into view has settled
            rows = [seats.nth(i).bounding_box() for i in range(2)]
            grid = m.grid.bounding_box()

            rival.clear(match["id"])
            theirs = seats.filter(has_text=rival.name)
            expect(theirs).to_have_attribute("data-status", "won")
            in_view(theirs.get_by_text("Cleared"))
            ARTIFACTS.mkdir(exist_ok=True)
            m.page.screenshot(path=str(ARTIFACTS / "match-race-phone-cleared.png"))
            assert [seats.nth(i).bounding_box() for i in range(2)] == rows
            assert m.grid.bounding_box() == grid
            for name in (rival.name, me.name):
                player = m.page.locator("#match-seats .seat-player", has_text=name)
                expect(player).to_have_attribute("title", name)
                lines = player.evaluate(
                    "e => e.getClientRects().length === 1"
                    " && e.getBoundingClientRect().height"
                    " < 1.5 * parseFloat(getComputedStyle(e).lineHeight || 20)"
                )
                assert lines, name
    finally:
        ctx.close()


def test_a_room_just_made_has_the_keyboard_focus(context: BrowserContext, new_ms: NewPage) -> None:
    """After "Create room" the focus is in the room, on its status (Start waits for a
    second player), not back on the header's Play online that opened the dialog."""
    m = new_ms(context)
    open_home(m)
    create_room(m, "race")
    status = m.page.locator("#match-status")
    expect(status).to_have_text("1 of 2 seats taken. Share the link; start once somebody joins.")
    expect(status).to_be_focused()
    in_view(status)


def test_a_phones_race_shows_the_whole_board_beside_cleared(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """On a phone held upright, an intermediate race: the page's seat clears while the
    rival still plays. Like a solo game's result, its panel comes with smaller cells that
    show all of the board with it, its first and last rows in the window."""
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": 390, "height": 844}})
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Still-"), Rival(http, "Done-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = rival.post("/matches", mode="race", preset="intermediate")["match"]
            sit_down(m, match["id"])
            expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
            in_view(m.grid)
            me.clear(match["id"])  # the page's own seat, cleared with its player's token
            expect(m.page.locator("#frame")).to_have_attribute("data-status", "won")
            title = m.page.locator("#result-title")
            expect(title).to_have_text("Cleared!")
            m.page.wait_for_timeout(500)  # the board fitted again has settled
            ARTIFACTS.mkdir(exist_ok=True)
            m.page.screenshot(path=str(ARTIFACTS / "match-race-phone-waiting.png"))
            window = window_of(m)
            for locator in (title, m.cell(0, 0), m.cell(15, 15)):
                b = locator.bounding_box()
                assert b and inside(b, window), (locator, b)
    finally:
        ctx.close()


def penalty_toasts(m: Minesweeper, text: str = "opened a mine") -> int:
    """How many notices about mines are on show now (counted at once, not waited for)."""
    count: int = m.page.locator("#toasts .toast", has_text=text).count()
    return count


def test_a_race_says_each_rivals_end_once_and_the_pages_own_mines_quietly(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """Three seats. The page opens two mines: the move says each ("exploded mine"), and
    one notice, the latest, shows its cost without saying it again. A rival's mine shows
    in their row only. A rival clears, the other resigns: the status, a live region, says
    each once, and no longer promises first place. The page's last mine's notice goes
    with the board's end."""
    m = new_ms(context)
    with httpx.Client(base_url=live_server, timeout=15) as http:
        first, second, me = Rival(http, "Quick"), Rival(http, "Quits"), Rival(http, "Me")
        me.adopt(m)
        match = first.post("/matches", mode="race", preset="beginner", seats=3)["match"]
        second.post(f"/matches/{match['id']}/join")
        sit_down(m, match["id"])
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        in_view(m.grid)
        status = m.page.locator("#match-status")
        expect(status).to_have_text("Go! Clear your board first.")

        own = m.page.locator("#match-seats li", has_text=f"{me.name} (you)")
        open_a_known_mine(m)
        open_a_known_mine(m)
        in_view(own.get_by_text("2 mines +10 s"))
        expect(m.page.locator("#announcer")).to_have_text("exploded mine")
        toast = m.page.locator("#toasts .toast", has_text="You opened a mine: +5 s.")
        in_view(toast)
        assert penalty_toasts(m) == 1
        # Shown, not said: the move said it already.
        expect(toast).to_have_attribute("aria-hidden", "true")

        first.open_mine(match["id"])
        rival_row = m.page.locator("#match-seats li", has_text=first.name)
        in_view(rival_row.get_by_text("1 mine +5 s"))
        assert penalty_toasts(m, first.name) == 0

        first.clear(match["id"])
        expect(status).to_have_text(
            f"{first.name} cleared the board. Play on: clear your board for the best place left."
        )
        in_view(status)
        expect(status).to_have_attribute("aria-live", "polite")
        second.post(f"/matches/{match['id']}/leave")
        expect(status).to_have_text(
            f"{second.name} resigned. Play on: clear your board for the best place left."
        )
        in_view(status)

        clear_board_last_on_a_mine(m)
        expect(m.page.locator("#result-title")).to_be_visible()
        assert penalty_toasts(m) == 0


@pytest.mark.parametrize("size", [(390, 844), (844, 390)], ids=["upright", "sideways"])
def test_a_phone_that_resigns_shows_what_happened_where_the_focus_is(
    browser: Browser, new_ms: NewPage, live_server: str, size: tuple[int, int]
) -> None:
    """On a phone the status is hidden during play, for the board's sake; once the page
    resigns (by the keyboard), the status it focuses shows, with its focus ring, and
    nothing still says how to play the frozen board or shows its face."""
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": size[0], "height": size[1]}})
    ctx.set_default_timeout(15_000)
    try:
        m = new_ms(ctx)
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http), Rival(http, "Phone")
            me.adopt(m)
            race_begun(m, rival)
            status = m.page.locator("#match-status")

            button = m.page.get_by_role("button", name="Resign")
            button.focus()
            m.page.keyboard.press("Enter")
            dialog = m.page.get_by_role("dialog", name="Resign this race?")
            in_view(dialog)
            m.page.keyboard.press("Tab")
            m.page.keyboard.press("Enter")

            expect(status).to_be_focused()
            expect(status).to_have_text(
                "You resigned. The others play on; the result shows when the match ends."
            )
            in_window(m, status)
            box = status.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 10, box
            assert status.evaluate("e => getComputedStyle(e).outlineStyle") != "none"
            expect(m.page.locator("#notes-idle")).to_be_hidden()
            expect(m.page.locator("#face")).to_be_hidden()
    finally:
        ctx.close()


def test_a_room_that_fills_gives_the_focus_to_its_status(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """The creator waits on "Copy link" when the second player sits down: the share area
    goes with the countdown, and the focus goes to the status saying what comes, not to
    the page."""
    m = new_ms(context)
    open_home(m)
    create_room(m, "race")
    copy = m.page.get_by_role("button", name="Copy link")
    in_view(copy)
    copy.focus()
    with httpx.Client(base_url=live_server, timeout=15) as http:
        Rival(http).post(f"/matches/{match_id(m)}/join")
    in_view(m.page.locator("#match-countdown"))
    status = m.page.locator("#match-status")
    expect(status).to_be_focused()
    in_view(status)
    expect(copy).to_be_hidden()


def test_a_countdown_says_its_seconds_once_to_a_screen_reader(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """The big counter is hidden from screen readers: the status says how many seconds,
    once, in words only they hear (those in view would go stale)."""
    m = new_ms(context)
    open_home(m)
    with httpx.Client(base_url=live_server, timeout=15) as http:
        rival = Rival(http)
        match = rival.post("/matches", mode="race", preset="beginner")["match"]
        sit_down(m, match["id"])
    in_view(m.page.locator("#match-countdown"))
    expect(m.page.locator("#match-countdown")).to_have_attribute("aria-hidden", "true")
    status = m.page.locator("#match-status")
    expect(status).to_have_attribute("aria-live", "polite")
    expect(status).to_have_text(re.compile(
        r"^Get ready: the match starts when the countdown ends\. It starts in [1-3] seconds?\.$"
    ))
    in_view(status.get_by_text("Get ready: the match starts when the countdown ends."))
    heard = status.locator(".visually-hidden")
    box = heard.bounding_box()
    assert box and box["width"] <= 1 and box["height"] <= 1, box


def test_a_quick_search_says_its_status_once_and_its_end_where_it_is_seen(
    context: BrowserContext, new_ms: NewPage
) -> None:
    """Polls do not rewrite the search's status (each rewrite is said again); Escape ends
    the search with the dialog, and the notes under the board say so."""
    m = new_ms(context)
    open_home(m)
    m.page.get_by_role("button", name="Play online").click()
    dialog = m.page.get_by_role("dialog", name="Play online")
    in_view(dialog)
    dialog.get_by_role("button", name="Intermediate").click()
    status = dialog.locator("#online-status")
    expect(status).to_have_text("Looking for an opponent on Intermediate…")
    status.evaluate("""e => {
        window.rewrites = 0;
        new MutationObserver((r) => { window.rewrites += r.length; })
            .observe(e, { childList: true, characterData: true, subtree: true });
    }""")
    for _ in range(2):
        with m.page.expect_response(
            lambda r: "/seeks/" in r.url and r.request.method == "GET", timeout=10_000
        ):
            pass
    expect(status).to_have_text("Looking for an opponent on Intermediate…")
    assert m.page.evaluate("window.rewrites") == 0
    m.page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    in_view(m.page.locator("#toasts .toast", has_text="Stopped looking for an opponent."))
    expect(m.page.locator("#toasts")).to_have_attribute("aria-live", "polite")


def test_a_phones_race_keeps_a_cleared_rivals_row_inside_its_card(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """On a phone a rival that opened mines and then cleared has its penalties and
    "Cleared" on its one line, inside the card, not past its right edge."""
    ctx = browser.new_context(**{**PHONE, "viewport": {"width": 390, "height": 844}})
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Careless-"), Rival(http, "Careful-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = race_begun(m, rival)
            rival.open_mine(match["id"])
            rival.open_mine(match["id"])
            rival.clear(match["id"])
            theirs = m.page.locator("#match-seats li", has_text=rival.name)
            expect(theirs).to_have_attribute("data-status", "won")
            in_view(theirs.get_by_text("Cleared"))
            in_view(theirs.get_by_text("2 mines +10 s"))
            card = theirs.bounding_box()
            assert card
            for part in ("Cleared", "2 mines +10 s"):
                box = theirs.get_by_text(part).bounding_box()
                right = card["x"] + card["width"]
                assert box and box["x"] + box["width"] <= right, (part, box, card)
            assert not theirs.evaluate("e => e.scrollWidth > e.clientWidth + 1")
    finally:
        ctx.close()


def test_a_room_with_a_free_seat_tells_its_creator_that_start_works_now(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """Two of three seats taken: Start works, and the status says so rather than asking
    the creator to wait for everybody."""
    m = new_ms(context)
    open_home(m)
    create_room(m, "race", seats=3)
    with httpx.Client(base_url=live_server, timeout=15) as http:
        Rival(http).post(f"/matches/{match_id(m)}/join")
    status = m.page.locator("#match-status")
    expect(status).to_have_text("2 of 3 seats taken. Start now, or wait for more players.")
    in_view(status)
    in_view(m.page.get_by_role("button", name="Start"))
    expect(m.page.get_by_role("button", name="Start")).to_be_enabled()


def test_hint_and_pause_keys_in_a_race_say_they_are_not_available(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    ctx = browser.new_context(**DESKTOP)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival = Rival(http)
            m: Minesweeper = new_ms(ctx)
            race_begun(m, rival)
            m.page.locator('#board [tabindex="0"]').focus()
            before = m.states()
            toasts = m.page.locator("#toasts")
            for key, words in (
                ("h", "Hints are not available in a match."),
                ("p", "Pause is not available in a match."),
            ):
                m.page.keyboard.press(key)
                # The notes are a live region: what shows there is read out.
                expect(toasts).to_have_attribute("aria-live", "polite")
                in_view(toasts.locator(".toast", has_text=words))
            expect(m.page.locator("#paused")).to_be_hidden()
            expect(m.page.locator("#hint-panel")).to_be_hidden()
            assert m.states() == before
    finally:
        ctx.close()


def test_a_race_move_with_the_network_gone_is_given_up_in_time_and_said(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    ctx = browser.new_context(**DESKTOP)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival = Rival(http)
            m: Minesweeper = new_ms(ctx)
            race_begun(m, rival)
            conn = m.page.locator("#conn")

            ctx.set_offline(True)
            expect(conn).to_have_text("Connection lost: reconnecting…")
            in_view(conn)
            x, y = next_cell(board_rows(m), 10)
            m.cell(x, y).click()
            expect(m.cell(x, y)).to_have_class(re.compile(r"\bpending\b"))
            in_view(
                m.page.locator(
                    ".toast", has_text="The server cannot be reached; that move was not played."
                ),
                timeout=15_000,
            )
            m.expect_state(x, y, "#")
            expect(m.cell(x, y)).not_to_have_class(re.compile(r"\bpending\b"))

            ctx.set_offline(False)
            expect(conn).to_have_text("")
            m.cell(x, y).click()
            expect(m.cell(x, y)).not_to_have_attribute("data-state", "#")
    finally:
        ctx.close()


def test_a_race_every_seat_resigned_places_nobody(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """The rival resigns, then the page: the status says nobody won, and the result table
    agrees. No seat shows a place: a dash where the place would be, read out as not
    placed, never "1" for every seat."""
    ctx = browser.new_context(**DESKTOP)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival = Rival(http, "Quits")
            m: Minesweeper = new_ms(ctx)
            match = race_begun(m, rival)
            rival.post(f"/matches/{match['id']}/leave")
            resign(m)
            status = m.page.locator("#match-status")
            expect(status).to_have_text("The match is over: everybody resigned, so nobody won.")
            table = m.page.get_by_role("table", name="Result")
            in_view(table)
            places = table.locator("td[data-label=Place]")
            expect(places).to_have_count(2)
            for i in range(2):
                place = places.nth(i)
                dash = place.locator("[aria-hidden=true]")
                expect(dash).to_have_text("—")
                in_view(dash)
                expect(place).not_to_have_text(re.compile(r"\d"))
            expect(table.get_by_role("cell", name="Did not place", exact=True)).to_have_count(2)
    finally:
        ctx.close()


def test_a_race_heard_again_at_once_when_the_browser_comes_back_online(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """The browser goes offline while the match's socket looks open (a dead link hears
    nothing and closes nothing), and the rival resigns meanwhile. Back online, the page
    says so at once, from a socket dialled again from the version it held: not once the
    silence has lasted long enough to give the old socket up."""
    ctx = browser.new_context(**DESKTOP)
    ctx.set_default_timeout(15_000)
    sockets: list[WebSocketRoute] = []
    dead: set[int] = set()

    def relay(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        n = len(sockets)
        sockets.append(ws)

        def down(message: str | bytes) -> None:
            if n not in dead:
                ws.send(message)

        server.on_message(down)

    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival = Rival(http, "Quits")
            m: Minesweeper = new_ms(ctx)
            m.page.route_web_socket(re.compile(r"/matches/[0-9a-f]+/events"), relay)
            match = race_begun(m, rival)
            status = m.page.locator("#match-status")
            expect(status).to_have_text("Go! Clear your board first.")
            held = rival.match(match["id"])["version"]

            dead.update(range(len(sockets)))
            ctx.set_offline(True)
            rival.post(f"/matches/{match['id']}/leave")
            m.page.wait_for_timeout(500)
            ctx.set_offline(False)
            expect(status).to_have_text(
                f"{rival.name} resigned. Go! Clear your board first.", timeout=5_000
            )
            in_view(status)
            rows = m.page.locator("#match-seats li", has_text=rival.name)
            expect(rows.get_by_text("Resigned")).to_be_visible()
            assert re.search(rf"[?&]since={held}(&|$)", sockets[-1].url), sockets[-1].url
    finally:
        ctx.close()


# What a screen reader says, as it says it: in a live region, what is added (the whole
# region when it is atomic), leaving out whatever is hidden from it (aria-hidden).
SAID_JS = """
window.said = [];
const LIVE = '[aria-live]:not([aria-live="off"]), [role=status], [role=alert], [role=log]';
const heard = (node) => {
  if (node.nodeType === 3) return node.textContent;
  if (node.nodeType !== 1 || node.getAttribute('aria-hidden') === 'true') return '';
  return [...node.childNodes].map(heard).join('');
};
new MutationObserver((records) => {
  for (const r of records) {
    const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    const region = node && node.closest(LIVE);
    if (!region || node.closest('[aria-hidden=true]')) continue;
    const atomic = region.getAttribute('aria-atomic') === 'true'
      || ['status', 'alert'].includes(region.getAttribute('role'));
    const text = (atomic ? heard(region) : r.type === 'characterData' ? heard(r.target)
      : [...r.addedNodes].map(heard).join(' ')).trim();
    if (text) window.said.push(text);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def test_a_coop_players_own_mine_is_said_once_and_a_teammates_once(
    context: BrowserContext, new_ms: NewPage, live_server: str
) -> None:
    """In co-op the page opens a mine: the move says it ("exploded mine"), and the team's
    notice of its cost shows without saying it again. Then the teammate opens one: that
    one is said, once, by the team's notice."""
    with httpx.Client(base_url=live_server, timeout=15) as http:
        mate, me = Rival(http, "Mate"), Rival(http, "Me")
        m: Minesweeper = new_ms(context)
        me.adopt(m)
        m.page.add_init_script(SAID_JS)
        match = mate.post("/matches", mode="coop", preset="beginner")["match"]
        sit_down(m, match["id"])
        expect(m.page.locator("#match-countdown")).to_be_hidden(timeout=15_000)
        in_view(m.grid)
        penalties = m.page.locator("#match-seats .seat-penalties")

        open_a_known_mine(m)
        expect(penalties).to_have_text("Team: 1 mine +5 s")
        toast = m.page.locator("#toasts .toast", has_text="opened a mine: +5 s.")
        in_view(toast)
        m.page.wait_for_timeout(1000)  # anything said a moment after
        said: list[str] = m.page.evaluate("window.said")
        mines = [t for t in said if "mine" in t]
        assert mines == ["exploded mine"], said

        m.page.evaluate("window.said.length = 0")
        mate.open_mine(match["id"])
        expect(penalties).to_have_text("Team: 2 mines +10 s")
        in_view(m.page.locator("#toasts .toast", has_text="The team opened a mine: +5 s."))
        m.page.wait_for_timeout(1000)
        said = m.page.evaluate("window.said")
        mines = [t for t in said if "mine" in t]
        assert len(mines) == 1 and mines[0].startswith("The team opened a mine: +5 s."), said
