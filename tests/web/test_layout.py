"""The page from a 360 px phone to a desktop, and touch input."""

from __future__ import annotations

import json
import random
import re
from typing import Any, Literal

import pytest

from tests.web.support import ARTIFACTS, DEVICES, PHONE, Api, require_chromium

require_chromium()

from playwright.sync_api import Browser, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402


def open_level(browser: Browser, live_server: str, options: dict[str, Any], level: str) -> Any:
    ctx = browser.new_context(**options)
    ms = Minesweeper(ctx.new_page(), live_server)
    ms.goto()
    if level != "beginner":
        before = ms.game_id
        ms.page.get_by_role("button", name=level.capitalize()).click()
        expect(ms.page).not_to_have_url(re.compile(before))
    expect(ms.page.get_by_role("button", name=level.capitalize())).to_have_attribute(
        "aria-pressed", "true"
    )
    return ctx, ms


@pytest.mark.parametrize("level", ["beginner", "expert"])
@pytest.mark.parametrize("device", ["phone", "desktop", "laptop"])
def test_layout(browser: Browser, live_server: str, device: str, level: str) -> None:
    options = DEVICES[device]
    width = options["viewport"]["width"]
    height = options["viewport"]["height"]
    ctx, ms = open_level(browser, live_server, options, level)
    try:
        page = ms.page
        # The page itself never scrolls sideways.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for selector in (".topbar", ".levels", ".top-tools", "#daily-button", "#opt-noguess",
                         "#leaders-button", "#player-button", "#frame .panel", "#face",
                         "#mines-left", "#timer", "#board-area", ".viewbar", "#zoom-in",
                         "#zoom-out", "#zoom-fit", ".controls", "#flag-mode", "#hint", "#pause",
                         "#share"):
            box = page.locator(selector).bounding_box()
            assert box, selector
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (selector, box)
            assert box["y"] >= 0 and box["y"] + box["height"] <= height + 0.5, (selector, box)
        # The keyboard's starting cell, in the middle, is on screen and big enough to hit.
        w, h = ms.size()
        middle = ms.cell(w // 2, h // 2).bounding_box()
        area = page.locator("#board-area").bounding_box()
        assert middle and area
        right, bottom = area["x"] + area["width"], area["y"] + area["height"]
        assert area["x"] <= middle["x"] and middle["x"] + middle["width"] <= right
        assert area["y"] <= middle["y"] and middle["y"] + middle["height"] <= bottom
        assert middle["width"] >= (30 if device == "phone" else 22)
        more = page.locator("#board-area").get_attribute("data-more")
        if device != "phone" or level == "beginner":
            # A laptop's shorter window too: every row, with cells a mouse can hit.
            assert more == "", "the whole board is in view"
            last = ms.cell(w - 1, h - 1).bounding_box()
            assert last
            assert last["x"] + last["width"] <= right and last["y"] + last["height"] <= bottom
        else:
            # A board wider than a phone: the edges say so, and the overview shows where.
            assert more and "left" in more and "right" in more, more
            expect(page.locator("#overview")).to_be_visible()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"web-layout-{device}-{level}.png"), full_page=True)
        assert not ms.errors
    finally:
        ctx.close()


def test_reduced_motion_turns_animations_off(browser: Browser, live_server: str) -> None:
    cases: tuple[tuple[Literal["reduce", "no-preference"], str], ...] = (
        ("reduce", "none"),
        ("no-preference", "nudge"),
    )
    for motion, expected in cases:
        ctx = browser.new_context(reduced_motion=motion)
        try:
            ms = Minesweeper(ctx.new_page(), live_server)
            ms.goto()
            ms.cell(0, 0).click(button="right")
            ms.expect_state(0, 0, "F")
            ms.cell(0, 0).click()  # refused: the cell is flagged, so it shakes (or not)
            if expected == "nudge":
                expect(ms.cell(0, 0)).to_have_class(re.compile(r"\bnudge\b"))
            else:
                ms.page.wait_for_timeout(200)
                expect(ms.cell(0, 0)).not_to_have_class(re.compile(r"\bnudge\b"))
            ms.expect_state(0, 0, "F")
        finally:
            ctx.close()


def long_press(ms: Minesweeper, x: int, y: int) -> None:
    """Touch a cell and hold it until the page takes the touch as a long press (the cell
    changes), then let go. A hold of fixed length can end before a busy page's timer
    fires, and then it is a tap."""
    box = ms.cell(x, y).bounding_box()
    assert box
    before = ms.state(x, y)
    point = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    cdp = ms.page.context.new_cdp_session(ms.page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
    expect(ms.cell(x, y)).not_to_have_attribute("data-state", before)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def test_touch_tap_long_press_and_flag_mode(browser: Browser, live_server: str) -> None:
    ctx, ms = open_level(browser, live_server, PHONE, "beginner")
    try:
        page = ms.page
        page.evaluate("window.menus = 0; addEventListener('contextmenu', () => menus++)")
        # A long press flags...
        long_press(ms, 0, 0)
        ms.expect_state(0, 0, "F")
        # ...a tap on a flag does nothing, a tap on a hidden cell opens it.
        box = ms.cell(0, 0).bounding_box()
        assert box
        page.touchscreen.tap(box["x"] + 5, box["y"] + 5)
        page.wait_for_timeout(300)
        ms.expect_state(0, 0, "F")
        box = ms.cell(4, 4).bounding_box()
        assert box
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        ms.expect_opened(4, 4)
        # In flag mode a tap flags and a long press opens.
        flag_mode = page.get_by_role("button", name="Flag mode")
        flag_mode.click()
        expect(flag_mode).to_have_attribute("aria-pressed", "true")
        hidden = [i for i, s in enumerate(ms.states()) if s == "#"]
        a, b = hidden[0], hidden[-1]
        box = ms.cell(a % 9, a // 9).bounding_box()
        assert box
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        ms.expect_state(a % 9, a // 9, "F")
        long_press(ms, b % 9, b // 9)
        expect(ms.cell(b % 9, b // 9)).not_to_have_attribute("data-state", "#")
        assert not ms.errors
    finally:
        ctx.close()


TAG_WINDOWS: dict[str, dict[str, Any]] = {
    "phone": {**PHONE, "viewport": {"width": 390, "height": 844}},
    "600px": {"viewport": {"width": 600, "height": 960}},
    # A small laptop window at 200 %: the page is laid out for half its size.
    "zoom200": {"viewport": {"width": 640, "height": 400}, "device_scale_factor": 2},
}


@pytest.mark.parametrize("name", list(TAG_WINDOWS))
def test_the_tags_are_read_whole(browser: Browser, live_server: str, name: str) -> None:
    """Today's expert board with no guessing, a hint and the player's name make more tags
    than a narrow line holds: they wrap, each inside the window and read whole, none cut
    short."""
    options = TAG_WINDOWS[name]
    width = options["viewport"]["width"]
    ctx = browser.new_context(**options)
    try:
        ctx.add_init_script(
            "localStorage.setItem('minesweeper.prefs', JSON.stringify({noGuess: true}));"
        )
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        page.get_by_role("button", name="Daily").click()
        page.locator("#daily-menu").get_by_role("button", name="Expert").click()
        tags = page.locator("#game-tags")
        expect(tags.locator('[data-tag="daily"]')).to_be_visible()
        expect(tags.locator('[data-tag="player"]')).to_be_visible()
        page.get_by_role("button", name="Hint").click()
        page.get_by_role("dialog", name="Use a hint?").get_by_role(
            "button", name="Show a hint"
        ).click()
        expect(tags.locator('[data-tag="assisted"]')).to_be_visible()
        seen = set()
        for tag in tags.locator(".tag").all():
            if not tag.is_visible():
                continue
            kind = tag.get_attribute("data-tag") or ""
            box = tag.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (kind, box)
            cut = tag.evaluate(
                "e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1"
            )
            assert not cut, (kind, tag.inner_text())
            seen.add(kind)
        assert {"daily", "no-guess", "assisted", "player"} <= seen, seen
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not ms.errors
    finally:
        ctx.close()


HEADER_ITEMS = (".title", "#online-button", ".levels", "#daily-button", ".switch",
                "#leaders-button", "#player-button")


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720), (1100, 800)])
def test_the_header_keeps_to_one_line_and_names_its_buttons(
    browser: Browser, live_server: str, api: Api, size: tuple[int, int]
) -> None:
    """A desktop's header is one line: the player's whole name and the buttons' words where
    there is room for them; a button shown as its icon only is named in its tooltip."""
    width, height = size
    ctx = browser.new_context(viewport={"width": width, "height": height})
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        page.wait_for_function("localStorage.getItem('minesweeper.player')")
        kept = json.loads(page.evaluate("localStorage.getItem('minesweeper.player')"))
        # As long as a name may be (a guest's such as "CleverWombat-9021" is 17 characters).
        name = f"CleverWombat-{random.randrange(10**6, 10**7)}"
        r = api.http.patch("/players/me", json={"name": name},
                           headers={"Authorization": f"Bearer {kept['token']}"})
        assert r.status_code == 200, r.text
        ms.goto()
        label = page.locator("#player-label")
        expect(label).to_have_text(name)

        boxes = {}
        for selector in HEADER_ITEMS:
            box = page.locator(selector).bounding_box()
            assert box, selector
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (selector, box)
            boxes[selector] = box
        middles = [b["y"] + b["height"] / 2 for b in boxes.values()]
        assert max(middles) - min(middles) < 12, ("one line", boxes)

        def words_shown(selector: str) -> bool:
            box = page.locator(selector).bounding_box()
            return bool(box and box["width"] > 20 and box["height"] > 10)

        # The player's name is read whole where the header has room for it (a full HD
        # window, a laptop's); cut short, it is whole in the tooltip.
        whole = label.evaluate("e => e.scrollWidth <= e.clientWidth")
        if width >= 1280:
            assert whole, name
        expect(page.locator("#player-button")).to_have_attribute("title", f"Your profile: {name}")
        # Play online and Leaderboards: their words on a wide window; as icons, their names
        # in their tooltips.
        named = (("#online-button", "Play online"), ("#leaders-button", "Leaderboards"))
        for button, words in named:
            if width >= 1920:
                assert words_shown(f"{button} .wide-only"), button
                expect(page.locator(f"{button} .wide-only")).to_have_text(words)
            elif not words_shown(f"{button} .wide-only"):
                title = page.locator(button).get_attribute("title") or ""
                assert title.startswith(words), (button, title)
        assert not ms.errors
    finally:
        ctx.close()


def luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# A control's focus ring as the keyboard shows it, and the colour it is drawn on: the
# first background up from the control's parent (the ring lies outside the control).
RING_JS = """e => {
    e.focus();
    const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
    let around = e.parentElement;
    while (around && rgb(getComputedStyle(around).backgroundColor)[3] === 0)
      around = around.parentElement;
    const cs = getComputedStyle(e);
    return {
        visible: e.matches(':focus-visible') && cs.outlineStyle !== 'none',
        ring: rgb(cs.outlineColor),
        around: rgb(getComputedStyle(around || document.body).backgroundColor),
    };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_focus_rings_stand_out_on_the_board_frame_and_on_notices(
    browser: Browser, live_server: str, scheme: Literal["light", "dark"]
) -> None:
    """Reached by the keyboard, the zoom buttons on the board's grey frame and the buttons
    of a notice (dark in either theme) show a ring of at least 3:1 against what is
    around it."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme=scheme)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        notice = page.locator(".toast", has_text="You are playing as")
        expect(notice).to_be_visible()
        page.keyboard.press("Tab")  # the keyboard drives: focus rings show
        controls = [page.locator(s) for s in ("#zoom-out", "#cell-size", "#zoom-in", "#zoom-fit")]
        controls += [notice.get_by_role("button", name="Change name"),
                     notice.get_by_role("button", name="Dismiss")]
        for control in controls:
            expect(control).to_be_visible()
            seen = control.evaluate(RING_JS)
            assert seen["visible"], control
            ratio = contrast(tuple(seen["ring"]), tuple(seen["around"]))
            assert ratio >= 3, (control, seen, round(ratio, 2))
        assert not ms.errors
    finally:
        ctx.close()


def test_a_header_button_shown_as_its_icon_says_its_name_when_focused(
    browser: Browser, live_server: str
) -> None:
    """At 1280x800 Play online and Leaderboards are icons (a tooltip never shows on focus):
    reached by the keyboard, each shows its name in the window, and the header stays as
    it was."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        bar = page.locator(".topbar")
        expect(bar).to_have_attribute("data-fit", re.compile("^(icons|short|tight)$"))
        header = bar.bounding_box()
        board = ms.grid.bounding_box()
        named = (("#online-button", "Play online"), ("#leaders-button", "Leaderboards"))
        for button, words in named:
            label = page.locator(f"{button} .wide-only")
            box = label.bounding_box()
            assert box and box["width"] <= 1, ("an icon until focused", box)
            for _ in range(20):
                page.keyboard.press("Tab")
                if page.evaluate(f"document.activeElement === document.querySelector('{button}')"):
                    break
            else:
                raise AssertionError(f"Tab never reached {button}")
            expect(label).to_have_text(words)
            box = label.bounding_box()
            assert box and box["width"] > 40 and box["height"] > 10, (button, box)
            assert label.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "cut off"
            assert box["x"] >= 0 and box["x"] + box["width"] <= 1280 and box["y"] >= 0, box
            assert bar.bounding_box() == header
            assert ms.grid.bounding_box() == board
        assert not ms.errors
    finally:
        ctx.close()


def rows_whole_in_view(ms: Minesweeper, x: int = 0) -> list[int]:
    """The rows whose cell in column ``x`` is whole inside the board's view."""
    rows: list[int] = ms.page.evaluate(
        "x => { const s = document.querySelector('#scroller');"
        " const v = s.getBoundingClientRect(); const out = [];"
        " for (const e of document.querySelectorAll(`#board [data-x=\"${x}\"]`)) {"
        "   const r = e.getBoundingClientRect();"
        "   if (r.top >= v.top - 0.5 && r.bottom <= v.top + s.clientHeight + 0.5)"
        "     out.push(Number(e.dataset.y)); }"
        " return out.sort((a, b) => a - b); }",
        x,
    )
    return rows


def test_an_expert_board_fits_a_small_laptop_window_whole(
    browser: Browser, live_server: str
) -> None:
    """A 1100 x 700 window: all 16 rows of an expert board whole in view, none half under
    the edge's shadow, at cells a mouse can hit."""
    ctx, ms = open_level(browser, live_server, {"viewport": {"width": 1100, "height": 700}},
                         "expert")
    try:
        ms.page.wait_for_timeout(400)  # the board fitted to the header's fonts
        assert rows_whole_in_view(ms) == list(range(16))
        assert ms.page.locator("#board-area").get_attribute("data-more") == ""
        box = ms.cell(0, 0).bounding_box()
        assert box and box["width"] >= 22, box
        assert not ms.errors
    finally:
        ctx.close()


def test_the_zoom_bar_counts_only_rows_and_columns_whole_in_view(
    browser: Browser, live_server: str
) -> None:
    """Zoomed in on an expert board, the view's edges cut rows and columns in half: what
    the zoom bar says is in view is the rows and columns seen whole."""
    ctx, ms = open_level(browser, live_server, DEVICES["laptop"], "expert")
    try:
        page = ms.page
        for _ in range(3):
            page.locator("#zoom-in").click()
        page.locator("#scroller").evaluate("s => { s.scrollTop = 45; s.scrollLeft = 45; }")
        where = page.locator("#view-where")
        expect(where).to_contain_text("rows")
        page.wait_for_timeout(200)
        m = re.search(r"rows (\d+)\u2013(\d+) of 16", where.inner_text())
        assert m, where.inner_text()
        rows = rows_whole_in_view(ms)
        assert (int(m.group(1)), int(m.group(2))) == (rows[0] + 1, rows[-1] + 1), (m.group(0), rows)
        assert not ms.errors
    finally:
        ctx.close()


def test_a_tap_leaves_no_hover_border_on_a_touch_screen(
    browser: Browser, live_server: str
) -> None:
    """On a phone a tap leaves no hover state behind: once the dialog a button opened is
    closed, the button looks as it did before it was tapped."""
    ctx = browser.new_context(**PHONE)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        page = ms.page
        look = "e => { const s = getComputedStyle(e); return [s.borderColor, s.backgroundColor]; }"
        for selector, dialog in (("#hint", "Use a hint?"), ("#online-button", "Play online")):
            button = page.locator(selector)
            before = button.evaluate(look)
            button.tap()
            expect(page.get_by_role("dialog", name=dialog)).to_be_visible()
            page.keyboard.press("Escape")
            expect(page.get_by_role("dialog", name=dialog)).to_be_hidden()
            button.evaluate("e => e.blur()")
            assert button.evaluate(look) == before, selector
        assert not ms.errors
    finally:
        ctx.close()
