"""Phones as players hold them: screens whose device pixel ratio is not a whole number,
short screens, fingers on buttons."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.support import require_chromium

require_chromium()

from playwright.sync_api import Browser, expect  # noqa: E402

from tests.web.test_layout import open_level  # noqa: E402


def phone(width: int, height: int, ratio: float) -> dict[str, Any]:
    return {"viewport": {"width": width, "height": height}, "is_mobile": True,
            "has_touch": True, "device_scale_factor": ratio}


@pytest.mark.parametrize("ratio", [2.625, 2.75, 1.5])
def test_a_tap_opens_a_cell_at_the_smallest_touch_size_on_any_pixel_ratio(
    browser: Browser, live_server: str, ratio: float
) -> None:
    """An expert board opens at the smallest cell a finger can hit, which the screen's
    pixels round a little down: a tap on a cell opens it (not a zoom that changes
    nothing), and the board says it is at a size to play."""
    ctx, ms = open_level(browser, live_server, phone(412, 839, ratio), "expert")
    try:
        page = ms.page
        page.wait_for_timeout(300)
        area = page.locator("#board-area")
        expect(area).to_have_attribute("data-zoom", "play")
        box = ms.cell(15, 8).bounding_box()
        assert box and box["width"] >= 29, box
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        ms.expect_opened(15, 8)
        assert not ms.errors
    finally:
        ctx.close()


def in_window(box: Any, width: int, height: int) -> bool:
    return bool(box) and box["x"] >= -0.5 and box["y"] >= -0.5 and (
        box["x"] + box["width"] <= width + 0.5 and box["y"] + box["height"] <= height + 0.5
    )


@pytest.mark.parametrize("size", [(390, 664, 3), (360, 640, 2.625), (360, 640, 3)])
def test_a_beginner_board_shows_whole_on_a_short_phone(
    browser: Browser, live_server: str, size: tuple[int, int, float]
) -> None:
    """Most phones held upright leave the page 640 to 700 px of height: a beginner board
    is there whole, every row and column, in cells a finger can hit, with the counters,
    the zoom bar, the controls and the notes under them in the window too (on a first
    visit, with the notice that names the player)."""
    width, height, ratio = size
    ctx, ms = open_level(browser, live_server, phone(width, height, ratio), "beginner")
    try:
        page = ms.page
        expect(page.locator(".toast").first).to_be_visible()
        page.wait_for_timeout(400)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("#board-area").get_attribute("data-more") == ""
        for y in range(9):
            for x in range(9):
                box = ms.cell(x, y).bounding_box()
                assert box and in_window(box, width, height), ((x, y), box)
                assert box["width"] >= 29, box
        for selector in ("#mines-left", "#face", "#timer", "#zoom-out", "#zoom-in", "#zoom-fit",
                         "#flag-mode", "#hint", "#share", "#notes", ".levels",
                         "#daily-button", "#online-button", "#player-button"):
            box = page.locator(selector).bounding_box()
            assert box and in_window(box, width, height), (selector, box)
        # The title is still there for assistive technology.
        expect(page.get_by_role("heading", name="Minesweeper")).to_be_attached()
        # And a tap plays, whatever the screen's pixel ratio made of the cells.
        box = ms.cell(4, 4).bounding_box()
        assert box
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        ms.expect_opened(4, 4)
        assert not ms.errors
    finally:
        ctx.close()


TARGETS = ("#zoom-out", "#cell-size", "#zoom-in", "#zoom-fit", ".toast-close", ".level",
           "#daily-button", ".top-button.switch", "#leaders-button", "#player-button",
           "#online-button", "#flag-mode", "#hint", "#pause", "#share", "#face")


@pytest.mark.parametrize("size", [(360, 640), (412, 839), (844, 390), (740, 360)])
def test_touch_targets_are_big_enough_for_a_finger(
    browser: Browser, live_server: str, size: tuple[int, int]
) -> None:
    """On a touch screen, upright or held sideways, every button of the game's page is at
    least 40 by 40 CSS px, and a double tap on one does not zoom the page."""
    width, height = size
    ctx, ms = open_level(browser, live_server, phone(width, height, 3), "beginner")
    try:
        page = ms.page
        expect(page.locator(".toast-close").first).to_be_visible()
        page.wait_for_timeout(300)
        small = []
        for selector in TARGETS:
            for k in range(page.locator(selector).count()):
                box = page.locator(selector).nth(k).bounding_box()
                assert box, selector
                if box["width"] < 39.5 or box["height"] < 39.5:
                    small.append((selector, k, round(box["width"], 1), round(box["height"], 1)))
        assert not small, small
        actions = page.eval_on_selector_all(
            "button", "els => els.map(e => getComputedStyle(e).touchAction)"
        )
        assert actions and set(actions) <= {"manipulation", "none"}, set(actions)
        # The page still lays out without sideways scrolling.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not ms.errors
    finally:
        ctx.close()
