"""Races on a phone held upright, in an iPhone 13's window (390x664): what the player sees
of the race, of leaving it for another game, of its result and of its room's link."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.web.support import ARTIFACTS, PHONE, require_chromium

require_chromium()

from playwright.sync_api import Browser, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402
from tests.web.test_matches import (  # noqa: E402
    MATCH_URL,
    NewPage,
    Rival,
    create_room,
    in_window,
    inside,
    open_home,
    race_begun,
    resign,
    window_of,
)

IPHONE_13: dict[str, Any] = {**PHONE, "viewport": {"width": 390, "height": 664},
                             "device_scale_factor": 3}


def test_a_new_game_during_a_race_is_asked_first_and_leads_back_to_the_race(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """Tapping a level mid-race asks first; keeping on racing changes nothing. Starting
    the new game resigns nothing (the seat still plays), and its notice's "Back to it"
    opens the match's page again, with its time left and no hint or pause."""
    ctx = browser.new_context(**IPHONE_13)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Away-"), Rival(http, "Racer-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = race_begun(m, rival)
            page = m.page
            expert = page.locator('.level[data-level="expert"]')
            expert.scroll_into_view_if_needed()
            expert.tap()
            dialog = page.get_by_role("dialog", name="Leave the race for a new game?")
            in_window(m, dialog)
            expect(dialog).to_contain_text("goes on without you")
            keep = dialog.get_by_role("button", name="Keep racing")
            expect(keep).to_be_focused()
            keep.tap()
            expect(dialog).to_be_hidden()
            expect(page).to_have_url(MATCH_URL)
            expect(page.get_by_role("timer")).to_be_visible()
            assert m.size() == (9, 9)

            expert.scroll_into_view_if_needed()
            expert.tap()
            dialog.get_by_role("button", name="Start the new game").tap()
            expect(page).to_have_url(re.compile(r"#/game/[0-9a-f]{32}$"))
            expect(m.grid).to_have_attribute("aria-colcount", "30")
            toast = page.locator(".toast", has_text="Your match goes on without you")
            expect(toast).to_be_visible()
            # Nothing resigned: the seat still plays.
            seat = next(s for s in rival.match(match["id"])["seats"] if s["player"]["id"] == me.id)
            assert seat["status"] == "playing", seat

            toast.get_by_role("button", name="Back to it").tap()
            expect(page).to_have_url(re.compile(f"#/match/{match['id']}$"))
            expect(m.grid).to_have_attribute("aria-colcount", "9")
            in_window(m, page.get_by_role("timer"))
            expect(page.get_by_role("timer")).to_contain_text("Time left")
            expect(page.locator("#hint")).to_be_hidden()
            expect(page.locator("#pause")).to_be_hidden()
            expect(page.locator(".toast.error")).to_have_count(0)
    finally:
        ctx.close()


def test_a_race_on_a_short_phone_keeps_time_left_and_rivals_in_view(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """All race long the time left and every seat's progress are in the window, with the
    whole board, its cells big enough for a finger and none of them covered."""
    ctx = browser.new_context(**IPHONE_13)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Short-"), Rival(http, "Phone-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            race_begun(m, rival)
            page = m.page
            page.wait_for_timeout(500)  # the board fitted and brought into view
            shown = [page.get_by_role("timer"),
                     page.get_by_role("progressbar", name=f"{rival.name}'s progress"),
                     page.get_by_role("progressbar", name=f"{me.name}'s progress")]
            for locator in shown:
                in_window(m, locator)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "match-race-iphone13.png"))
            for x, y in ((0, 0), (8, 0), (0, 8), (8, 8)):
                box = m.cell(x, y).bounding_box()
                assert box and inside(box, window_of(m)), (x, y, box)
                assert box["width"] >= 30, box
                at = m.cell(x, y).evaluate(
                    "e => { const r = e.getBoundingClientRect();"
                    " const at = document.elementFromPoint(r.left + r.width / 2, r.top + 2);"
                    " return Boolean(at && at.closest('#frame')); }"
                )
                assert at, (x, y)
            # A move keeps them there.
            m.cell(4, 4).tap()
            for locator in shown:
                in_window(m, locator)
    finally:
        ctx.close()


def test_a_resigned_seat_is_counted_alike_in_the_table_and_under_its_board(
    browser: Browser, new_ms: NewPage, live_server: str
) -> None:
    """A seat that resigns at once: once the rival clears, the result table and the panel
    under the board give the same count of its 3BV, and a line under the table says once
    what 3BV is."""
    ctx = browser.new_context(**IPHONE_13)
    ctx.set_default_timeout(15_000)
    try:
        with httpx.Client(base_url=live_server, timeout=15) as http:
            rival, me = Rival(http, "Winner-"), Rival(http, "Quitter-")
            m: Minesweeper = new_ms(ctx)
            me.adopt(m)
            match = race_begun(m, rival)
            resign(m)
            rival.clear(match["id"])
            table = m.page.get_by_role("table", name="Result")
            expect(table).to_be_visible()
            row = table.locator("tbody tr", has_text=f"{me.name} (you)")
            outcome = row.locator("td").nth(1)
            expect(outcome).to_have_text(re.compile(r"^Resigned: \d+ of \d+ 3BV$"))
            count = re.search(r"\d+ of \d+ 3BV", outcome.inner_text())
            assert count
            sub = m.page.locator("#result-sub")
            expect(sub).to_contain_text(f"Resigned with {count.group(0)} done")
            note = m.page.get_by_text(re.compile("^3BV: the fewest clicks that clear the board"))
            expect(note).to_have_count(1)
            expect(note).to_be_visible()
    finally:
        ctx.close()


# A page over plain HTTP has no clipboard, and this browser lets the page copy nothing;
# the share sheet is a phone's, recorded here (or failing, once `__shareFails` is set).
NO_CLIPBOARD_WITH_SHEET = """
Object.defineProperty(Navigator.prototype, "clipboard",
  { get: () => undefined, configurable: true });
Document.prototype.execCommand = () => false;
window.__shared = [];
Navigator.prototype.share = async function (data) {
  if (window.__shareFails) throw new DOMException("refused", "NotAllowedError");
  window.__shared.push(data);
};
Navigator.prototype.canShare = () => true;
"""


def test_a_rooms_link_on_a_phone_goes_by_the_share_sheet_or_is_selected_to_copy(
    browser: Browser, new_ms: NewPage
) -> None:
    """The room's invite link on a phone: "Share link" opens the system's share sheet with
    it; where the page cannot copy (plain HTTP), "Copy link" selects it and says to copy
    it, as does a share sheet that fails."""
    ctx = browser.new_context(**IPHONE_13)
    ctx.set_default_timeout(15_000)
    ctx.add_init_script(NO_CLIPBOARD_WITH_SHEET)
    try:
        m: Minesweeper = new_ms(ctx)
        open_home(m)
        create_room(m, "race")
        page = m.page
        link = page.get_by_label("Invite with this link:")
        expect(link).to_have_value(re.compile(r"^https?://"))
        url = link.input_value()
        send = page.get_by_role("button", name="Share link")
        in_window(m, send)
        send.tap()
        page.wait_for_function("window.__shared.length === 1")
        shared = page.evaluate("window.__shared[0]")
        assert shared["url"] == url, shared
        assert "race" in shared["text"], shared

        told = page.locator("#match-share-status")
        expect(told).to_have_text("Link shared.")
        copy = page.get_by_role("button", name="Copy link")
        copy.tap()
        expect(told).to_have_text("Select the link and copy it.")
        in_window(m, told)
        selected = link.evaluate("e => [e.selectionStart, e.selectionEnd, e.value.length]")
        assert selected[0] == 0 and selected[1] == selected[2], selected

        # A share sheet that fails: the link is copied instead, here selected, and said.
        page.evaluate("window.__shareFails = true")
        told.evaluate("e => { e.textContent = ''; }")
        send.tap()
        expect(told).to_have_text("Select the link and copy it.")
    finally:
        ctx.close()
