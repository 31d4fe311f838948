"""Windows lower than they are wide: a phone held sideways, a page zoomed to 200 %."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.support import Api, Box, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import Browser, Locator, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402
from tests.web.test_layout import open_level  # noqa: E402

# Phones held sideways, and a laptop's small window at 200 % (the browser then lays the
# page out for half its size, each CSS pixel two of the screen's).
SIDEWAYS: dict[str, dict[str, Any]] = {
    "844x390": {"viewport": {"width": 844, "height": 390}, "is_mobile": True, "has_touch": True,
                "device_scale_factor": 3},
    "740x360": {"viewport": {"width": 740, "height": 360}, "is_mobile": True, "has_touch": True,
                "device_scale_factor": 3},
    "zoom200": {"viewport": {"width": 640, "height": 400}, "device_scale_factor": 2},
}


def window(options: dict[str, Any]) -> tuple[int, int]:
    return options["viewport"]["width"], options["viewport"]["height"]


def in_window(box: Box, size: tuple[int, int]) -> bool:
    width, height = size
    return bool(box) and box["x"] >= -0.5 and box["y"] >= -0.5 and (
        box["x"] + box["width"] <= width + 0.5 and box["y"] + box["height"] <= height + 0.5
    )


def assert_in_window(locator: Locator, size: tuple[int, int]) -> Box:
    box = locator.bounding_box()
    assert box and in_window(box, size), (locator, box, size)
    return box


def settle(ms: Minesweeper) -> None:
    """Let the page finish fitting the board (a fit follows the header's fonts)."""
    ms.page.wait_for_timeout(400)


@pytest.mark.parametrize("name", list(SIDEWAYS))
def test_a_beginner_board_shows_whole_in_a_short_window(
    browser: Browser, live_server: str, name: str
) -> None:
    """Every cell of a 9x9 board in the window at once, big enough to tap or click, with
    the counters, the zoom bar's buttons (not cut short) and the controls in view too."""
    options = SIDEWAYS[name]
    size = window(options)
    ctx, ms = open_level(browser, live_server, options, "beginner")
    try:
        settle(ms)
        page = ms.page
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
        for x, y in ((0, 0), (8, 0), (0, 8), (8, 8), (4, 4)):
            box = assert_in_window(ms.cell(x, y), size)
            assert box["width"] >= (30 if options.get("has_touch") else 22), box
        assert page.locator("#board-area").get_attribute("data-more") == ""
        for selector in ("#mines-left", "#face", "#timer", "#zoom-out", "#cell-size", "#zoom-in",
                         "#zoom-fit"):
            assert_in_window(page.locator(selector), size)
        for selector in ("#zoom-out", "#zoom-in", "#zoom-fit"):
            cut = page.locator(selector).evaluate("e => e.scrollWidth > e.clientWidth + 1")
            assert not cut, selector
        expect(page.get_by_role("button", name="Whole board")).to_be_visible()
        for selector in ("#flag-mode", "#hint", "#pause"):
            assert_in_window(page.locator(selector), size)
        assert not ms.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("name", ["844x390", "740x360"])
def test_an_expert_board_shows_many_rows_in_a_short_window(
    browser: Browser, live_server: str, name: str
) -> None:
    """An expert board in a phone held sideways: at least eight whole rows in the window
    (not a strip of three) of cells a finger can hit, the rest a pan away."""
    options = SIDEWAYS[name]
    size = window(options)
    ctx, ms = open_level(browser, live_server, options, "expert")
    try:
        settle(ms)
        page = ms.page
        area = assert_in_window(page.locator("#board-area"), size)
        more = page.locator("#board-area").get_attribute("data-more") or ""
        assert "left" in more and "right" in more, more
        rows = 0
        for y in range(16):
            box = ms.cell(15, y).bounding_box()
            if box and in_window(box, size) and box["y"] >= area["y"] - 0.5 and (
                box["y"] + box["height"] <= area["y"] + area["height"] + 0.5
            ):
                rows += 1
                assert box["width"] >= 30, box
        assert rows >= 8, rows
        for selector in ("#mines-left", "#face", "#timer", "#zoom-in", "#zoom-fit", "#flag-mode"):
            assert_in_window(page.locator(selector), size)
        assert not ms.errors
    finally:
        ctx.close()


def test_the_paused_card_is_read_whole_over_a_low_board(api: Api, ms: Minesweeper) -> None:
    """A board three rows high is lower than the paused card: paused, the card's title and
    its Resume button are whole on the screen, neither cut off by the board's edge."""
    game, token = api.create(width=16, height=3, mines=4, seed=5)
    ms.play(game["id"], token)
    ms.cell(0, 0).click()
    expect(ms.page.locator("#frame")).to_have_attribute("data-status", "playing")
    ms.page.locator("#pause").click()
    cover = ms.page.locator("#paused")
    expect(cover).to_be_visible()
    area = ms.page.locator("#board-area").bounding_box()
    assert area and area["height"] < 160, area
    resume = ms.page.get_by_role("button", name="Resume (P)")
    for part in (ms.page.locator("#paused-title"), resume):
        box = part.bounding_box()
        assert box and box["height"] > 10, box
        # What is at each corner of it, on the screen, is the part itself: nothing clips it.
        for fx, fy in ((0.1, 0.15), (0.9, 0.15), (0.1, 0.85), (0.9, 0.85)):
            hit = part.evaluate(
                "(e, [fx, fy]) => { const r = e.getBoundingClientRect();"
                " const at = document.elementFromPoint(r.left + fx * r.width,"
                " r.top + fy * r.height);"
                " return Boolean(at && (at === e || e.contains(at))); }",
                [fx, fy],
            )
            assert hit, (part, fx, fy, box, area)
    assert not ms.errors


@pytest.mark.parametrize("name", ["740x360", "zoom200"])
def test_the_result_of_a_game_comes_into_view_in_a_short_window(
    browser: Browser, live_server: str, api: Api, name: str
) -> None:
    """A mine hit in a short window: the page scrolls to what it says about it, the title
    and Play again both in the window."""
    options = SIDEWAYS[name]
    size = window(options)
    settings = {"preset": "beginner", "seed": 21}
    mines = mine_layout(api, settings, (0, 0))
    game, token = api.create(**settings)
    ctx = browser.new_context(**options)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.play(game["id"], token)
        settle(ms)
        tap = options.get("has_touch", False)
        (ms.cell(0, 0).tap if tap else ms.cell(0, 0).click)()
        ms.expect_opened(0, 0)
        x, y = sorted(mines)[0]
        ms.cell(x, y).scroll_into_view_if_needed()
        (ms.cell(x, y).tap if tap else ms.cell(x, y).click)()
        expect(ms.page.locator("#frame")).to_have_attribute("data-status", "lost")
        title = ms.page.locator("#result-title")
        expect(title).to_have_text("Boom! You hit a mine.")
        again = ms.page.get_by_role("button", name="Play again")
        for part in (title, again):
            ms.page.wait_for_function(
                "e => { const r = e.getBoundingClientRect(); return r.top >= 0 &&"
                " r.bottom <= document.documentElement.clientHeight && r.height > 0; }",
                arg=part.element_handle(),
            )
            assert_in_window(part, size)
        assert not ms.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("name", ["844x390", "740x360"])
def test_a_replay_in_a_short_window_shows_legible_cells_with_its_controls(
    browser: Browser, live_server: str, api: Api, name: str
) -> None:
    """The replay of a beginner game in a phone held sideways: every cell big enough to
    read, the counters above them, and beside them the timeline and Play, all in the
    window at once."""
    options = SIDEWAYS[name]
    size = window(options)
    settings = {"preset": "beginner", "seed": 21}
    mines = mine_layout(api, settings, (0, 0))
    game, token = api.create(**settings)
    api.move(game["id"], token, "reveal", 0, 0)
    api.move(game["id"], token, "reveal", *sorted(mines)[0])
    ctx = browser.new_context(**options)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.page.goto(f"{live_server}/#/replay/{game['id']}")
        expect(ms.page.locator("#replay-board [data-i]").first).to_be_attached()
        settle(ms)
        page = ms.page
        for x, y in ((0, 0), (8, 0), (0, 8), (8, 8)):
            cell = page.locator(f'#replay-board [data-x="{x}"][data-y="{y}"]')
            box = assert_in_window(cell, size)
            assert box["width"] >= 20, box
        assert page.locator("#replay-area").get_attribute("data-more") == ""
        for selector in ("#replay-mines", "#replay-timer", "#replay-timeline", "#replay-play",
                         "#replay-end"):
            assert_in_window(page.locator(selector), size)
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
        assert not ms.errors
    finally:
        ctx.close()
