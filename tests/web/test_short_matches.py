"""Matches in windows lower than they are wide (a phone held sideways, a page zoomed to
200 %), and on a tablet held sideways: the seats and the time left in view while the
board is played, the match's result in view once it ends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.web.support import Box, require_chromium

require_chromium()

from playwright.sync_api import Browser, BrowserContext, Locator, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402
from tests.web.test_matches import Rival, sit_down  # noqa: E402
from tests.web.test_short import SIDEWAYS, in_window, window  # noqa: E402

TABLET: dict[str, Any] = {"viewport": {"width": 1024, "height": 768}, "is_mobile": True,
                          "has_touch": True, "device_scale_factor": 2}


def wait_in_window(m: Minesweeper, locator: Locator, size: tuple[int, int]) -> Box:
    """Shown, whole inside the window, once the page has settled (it may scroll to it)."""
    expect(locator).to_be_visible()
    m.page.wait_for_function(
        "([e, w, h]) => { const r = e.getBoundingClientRect(); return r.height > 0 &&"
        " r.top >= -0.5 && r.left >= -0.5 && r.bottom <= h + 0.5 && r.right <= w + 0.5; }",
        arg=[locator.element_handle(), *size],
    )
    box = locator.bounding_box()
    assert box and in_window(box, size), (locator, box, size)
    return box


def start_race(ctx: BrowserContext, http: httpx.Client, base: str, **settings: Any
               ) -> tuple[Minesweeper, Rival, Rival, str]:
    rival, me = Rival(http, "Sideways-"), Rival(http, "Held-")
    m = Minesweeper(ctx.new_page(), base)
    me.adopt(m)
    match = rival.post("/matches", mode="race", preset="beginner", **settings)["match"]
    sit_down(m, match["id"])
    expect(m.page.locator("body")).to_have_attribute("data-match", "playing", timeout=15_000)
    return m, rival, me, match["id"]


@pytest.mark.parametrize("name", list(SIDEWAYS))
def test_a_race_in_a_short_window_keeps_seats_and_time_in_view(
    browser: Browser, live_server: str, name: str
) -> None:
    """During play every seat's row, its progress, the time left and Resign are in the
    window together with the whole board, its cells big enough to hit; once the match
    is over, its result (the heading and the places) comes into the window."""
    options = SIDEWAYS[name]
    size = window(options)
    ctx = browser.new_context(**options)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            m, rival, me, match = start_race(ctx, http, live_server, time_limit_s=300)
            page = m.page
            m.page.wait_for_timeout(500)  # the board fitted and brought into view
            seats = page.locator("#match-seats li")
            expect(seats).to_have_count(2)
            shown = [seats.nth(0), seats.nth(1), page.locator("#match-seats .seat-bar").nth(0),
                     page.locator("#match-seats .seat-bar").nth(1), page.get_by_role("timer"),
                     page.get_by_role("button", name="Resign"), page.locator("#flag-mode")]
            for locator in shown:
                wait_in_window(m, locator, size)
            expect(page.get_by_role("timer")).to_contain_text("Time left")
            least = 30 if options.get("has_touch") else 22
            for x, y in ((0, 0), (8, 0), (0, 8), (8, 8)):
                box = wait_in_window(m, m.cell(x, y), size)
                assert box["width"] >= least, box
            # Nothing covers the board's first row: what is at its cells is the board.
            for x in (0, 8):
                hit = m.cell(x, 0).evaluate(
                    "e => { const r = e.getBoundingClientRect();"
                    " const at = document.elementFromPoint(r.left + r.width / 2, r.top + 2);"
                    " return Boolean(at && at.closest('#frame')); }"
                )
                assert hit, x

            rival.clear(match)
            me.clear(match)
            title = page.locator("#match-title")
            expect(title).to_have_text("Race: result")
            table = page.get_by_role("table", name="Result")
            expect(table.locator("tbody tr")).to_have_count(2)
            for locator in (title, table.locator("caption"), table.locator("tbody tr").nth(0)):
                wait_in_window(m, locator, size)
            assert not m.errors
    finally:
        ctx.close()


def test_a_tablets_race_keeps_the_final_board_legible(browser: Browser, live_server: str) -> None:
    """A tablet held sideways: the page's seat clears first, then the rival; beside the
    match's result the final board keeps cells a finger can tell apart (the page scrolls
    to it rather than shrinking it), shown whole."""
    ctx = browser.new_context(**TABLET)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            m, rival, me, match = start_race(ctx, http, live_server)
            box = m.cell(0, 0).bounding_box()
            assert box and box["width"] >= 30, box
            me.clear(match)
            expect(m.page.locator("#frame")).to_have_attribute("data-status", "won")
            rival.clear(match)
            expect(m.page.locator("#match-title")).to_have_text("Race: result")
            m.page.wait_for_timeout(500)  # the board fitted again has settled
            for x, y in ((0, 0), (8, 8)):
                box = m.cell(x, y).bounding_box()
                assert box and box["width"] >= 22, box
            expect(m.page.locator("#board-area")).to_have_attribute("data-more", "")
            assert not m.errors
    finally:
        ctx.close()
