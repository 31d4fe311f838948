"""Boards of every size in the page: a million cells played and watched, the cell size
such a board's whole view shows, and expert on a phone played by touch, with pinch and
zoom."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.support import PHONE, Api, mine_layout, require_chromium

require_chromium()

from playwright.sync_api import Browser, CDPSession, expect  # noqa: E402

from tests.web.conftest import Minesweeper  # noqa: E402

HIDDEN = (192, 192, 192)  # the ground of a hidden cell, as the canvas paints it
OPEN = (217, 217, 217)  # the ground of an open one
FLAG_RED = (212, 27, 22)
CLOTH = (0.45, 0.38)  # a point inside a flag's cloth


def cell_size(ms: Minesweeper) -> float:
    size: float = ms.page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('#board')).getPropertyValue('--cell'))"
    )
    return size


def point_of(ms: Minesweeper, x: int, y: int) -> tuple[float, float]:
    """Where the middle of cell (x, y) is on the screen, whether or not it has an element."""
    space = ms.page.locator("#board-space").bounding_box()
    assert space
    c = cell_size(ms)
    return space["x"] + (x + 0.5) * c, space["y"] + (y + 0.5) * c


def in_view(ms: Minesweeper, x: float, y: float) -> bool:
    area = ms.page.locator("#scroller").bounding_box()
    assert area
    right, bottom = area["x"] + area["width"], area["y"] + area["height"]
    return area["x"] <= x < right and area["y"] <= y < bottom


def test_a_million_cells_played_and_watched(api: Api, ms: Minesweeper, new_ms: Any) -> None:
    game, token = api.create(width=1000, height=1000, mines=1500, seed=1616)
    gid = game["id"]
    ms.play(gid, token)
    expect(ms.grid).to_have_attribute("aria-rowcount", "1000")
    expect(ms.grid).to_have_attribute("aria-colcount", "1000")
    expect(ms.page.locator("#mines-left")).to_have_attribute("aria-label", "Mines left: 1500")
    # The page starts in the middle of the board, where a first click opens most.
    middle = ms.cell(500, 500)
    expect(middle).to_be_visible()
    spectator = new_ms()
    spectator.watch(gid)
    expect(spectator.page.locator("#conn")).to_have_text("Live")

    middle.click()
    ms.expect_opened(500, 500)
    ms.expect_painted(500, 500, OPEN, timeout=60_000)
    # The watcher sees the cascade too, cell elements and paint alike.
    spectator.expect_opened(500, 500)
    spectator.expect_painted(500, 500, OPEN, timeout=60_000)
    board = api.get(gid)["board"]
    assert board[500][500] != "#"

    # The whole board in view: cells too small to hit, so a click zooms in on a mine.
    ms.page.get_by_role("button", name="Whole board").click()
    assert cell_size(ms) < 1
    x, y = next(
        (x, y) for y, row in enumerate(board) for x, ch in enumerate(row)
        if ch == "#" and 100 <= x < 900 and 100 <= y < 900
    )
    ms.page.mouse.click(*point_of(ms, x, y))
    expect(ms.page.locator("#board-area")).to_have_attribute("data-zoom", "play")
    assert cell_size(ms) >= 22
    assert in_view(ms, *point_of(ms, x, y))
    ms.cell(x, y).click(button="right")
    ms.expect_state(x, y, "F")
    ms.expect_painted(x, y, FLAG_RED, at=CLOTH)
    expect(ms.page.locator("#mines-left")).to_have_attribute("aria-label", "Mines left: 1499")
    spectator.page.get_by_role("button", name="Whole board").click()
    spectator.page.mouse.click(*point_of(spectator, x, y))
    spectator.expect_state(x, y, "F")

    # Far corners are a scroll away, and show what the service says.
    ms.page.locator("#scroller").evaluate("s => s.scrollTo(s.scrollWidth, s.scrollHeight)")
    corner = ms.cell(999, 999)
    expect(corner).to_have_attribute("data-state", board[999][999])
    expect(ms.page.locator("#board-area")).to_have_attribute("data-more", "left up")
    expect(ms.page.locator("#view-where")).to_contain_text("columns")
    assert ms.status() == "playing"


SIZE_TEXT = re.compile(r"^(\d+(\.\d+)?) px$")


@pytest.mark.parametrize("device", [
    {"viewport": {"width": 1280, "height": 720}},
    {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
     "device_scale_factor": 3},
])
def test_a_huge_boards_whole_view_says_its_true_cell_size(
    api: Api, browser: Browser, live_server: str, device: dict[str, Any]
) -> None:
    game, token = api.create(width=1000, height=1000, mines=150_000, seed=1618)
    ctx = browser.new_context(**device)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.play(game["id"], token)
        size = ms.page.locator("#cell-size")

        def shown() -> float:
            text = size.inner_text()
            m = SIZE_TEXT.match(text)
            assert m, text
            return float(m.group(1))

        ms.page.get_by_role("button", name="Whole board").click()
        expect(ms.page.locator("#board-area")).to_have_attribute("data-more", "")
        # Cells a fraction of a pixel wide: said as such, never "0 px".
        expect(size).not_to_have_text("0 px")
        whole = shown()
        assert 0 < whole < 1
        assert abs(whole - cell_size(ms)) <= 0.01, (whole, cell_size(ms))
        label = f"Cell size {size.inner_text().removesuffix(' px')} pixels: fit the window"
        expect(size).to_have_attribute("aria-label", label)
        # Every press of + shows a bigger size.
        last = whole
        for _ in range(3):
            before = size.inner_text()
            ms.page.get_by_role("button", name="Zoom in").click()
            expect(size).not_to_have_text(before)
            now = shown()
            assert now > last, (last, now)
            last = now
        # The size is read whole, inside the window.
        box = size.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= device["viewport"]["width"]
        assert size.evaluate("e => e.scrollWidth <= e.clientWidth")
        assert not ms.errors
    finally:
        ctx.close()


def touch(cdp: CDPSession, kind: str, *points: tuple[float, float]) -> None:
    cdp.send("Input.dispatchTouchEvent", {
        "type": kind, "touchPoints": [{"x": x, "y": y, "id": n} for n, (x, y) in enumerate(points)],
    })


def pinch(ms: Minesweeper, centre: tuple[float, float], start: float, end: float) -> None:
    """Two fingers on either side of ``centre``, from ``start`` to ``end`` px apart."""
    cdp = ms.page.context.new_cdp_session(ms.page)
    cx, cy = centre
    steps = 8
    touch(cdp, "touchStart", (cx - start / 2, cy), (cx + start / 2, cy))
    for k in range(1, steps + 1):
        d = start + (end - start) * k / steps
        touch(cdp, "touchMove", (cx - d / 2, cy), (cx + d / 2, cy))
    touch(cdp, "touchEnd")
    cdp.detach()


def drag(ms: Minesweeper, start: tuple[float, float], end: tuple[float, float]) -> None:
    cdp = ms.page.context.new_cdp_session(ms.page)
    steps = 6
    touch(cdp, "touchStart", start)
    for k in range(1, steps + 1):
        touch(cdp, "touchMove", (start[0] + (end[0] - start[0]) * k / steps,
                                 start[1] + (end[1] - start[1]) * k / steps))
    touch(cdp, "touchEnd")
    cdp.detach()


def test_expert_on_a_phone_by_touch_with_zoom(api: Api, browser: Browser, live_server: str) -> None:
    settings = {"preset": "expert", "seed": 1617}
    mines = mine_layout(api, settings, (15, 8))
    game, token = api.create(**settings)
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(15_000)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.play(game["id"], token)
        page = ms.page
        area = page.locator("#board-area")
        # Half the columns fit: the edges and the overview say there is more.
        expect(area).to_have_attribute("data-more", re.compile(r"\bleft\b.*\bright\b"))
        expect(page.locator("#overview")).to_be_visible()
        before = cell_size(ms)
        assert before >= 30

        # Pinch in: smaller cells, more columns in view.
        box = page.locator("#scroller").bounding_box()
        assert box
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        pinch(ms, centre, 160, 80)
        page.wait_for_function(f"parseFloat(getComputedStyle(document.querySelector('#board'))"
                               f".getPropertyValue('--cell')) < {before * 0.75}")
        # The whole board: all 30 columns on the screen at once.
        page.get_by_role("button", name="Whole board").click()
        expect(area).to_have_attribute("data-more", "")
        for x, y in ((0, 0), (29, 15)):
            assert in_view(ms, *point_of(ms, x, y)), (x, y)
        # Too small to tap a cell: a tap zooms in there instead of playing.
        page.touchscreen.tap(*point_of(ms, 15, 8))
        expect(area).to_have_attribute("data-zoom", "play")
        assert ms.state(15, 8) == "#"
        # Pinch out, then tap to play and long press to flag.
        pinch(ms, point_of(ms, 15, 8), 60, 90)
        assert cell_size(ms) >= 30
        page.touchscreen.tap(*point_of(ms, 15, 8))
        ms.expect_opened(15, 8)
        ms.expect_painted(15, 8, OPEN)
        view = api.get(game["id"])["board"]
        mine = min(mines, key=lambda m: abs(m[0] - 15) + abs(m[1] - 8))
        assert view[mine[1]][mine[0]] == "#"
        ms.page.locator("#scroller").evaluate("(s, [x, y]) => s.scrollTo(x, y)", [
            (mine[0] + 0.5) * cell_size(ms) - box["width"] / 2,
            (mine[1] + 0.5) * cell_size(ms) - box["height"] / 2,
        ])
        cdp = ctx.new_cdp_session(page)
        touch(cdp, "touchStart", point_of(ms, *mine))
        ms.expect_state(*mine, "F")  # flagged while the finger is still down
        touch(cdp, "touchEnd")
        cdp.detach()
        ms.expect_painted(*mine, FLAG_RED, at=CLOTH)
        # A drag moves the board and plays nothing.
        version = api.get(game["id"])["version"]
        scrolled = page.locator("#scroller").evaluate("s => s.scrollLeft")
        start = (box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2)
        drag(ms, start, (start[0] - 120, start[1]))
        page.wait_for_function(f"document.querySelector('#scroller').scrollLeft > {scrolled + 60}")
        assert api.get(game["id"])["version"] == version
        assert not ms.errors
    finally:
        ctx.close()


# A tablet held upright, and a phone held sideways.
UPRIGHT_TABLET: dict[str, Any] = {"viewport": {"width": 768, "height": 1024}, "is_mobile": True,
                                  "has_touch": True, "device_scale_factor": 2}
SIDEWAYS_PHONE: dict[str, Any] = {"viewport": {"width": 844, "height": 390}, "is_mobile": True,
                                  "has_touch": True, "device_scale_factor": 3}


@pytest.mark.parametrize("device", ["tablet", "sideways"])
def test_a_daily_board_opens_on_its_open_start(
    browser: Browser, live_server: str, device: str
) -> None:
    """Today's expert board is wider than the window: it opens scrolled to its start area,
    every cell opened there inside the board's view, not to the board's middle."""
    options = UPRIGHT_TABLET if device == "tablet" else SIDEWAYS_PHONE
    ctx = browser.new_context(**options)
    try:
        ms = Minesweeper(ctx.new_page(), live_server)
        ms.goto()
        daily = ms.page.get_by_role("button", name="Daily")
        daily.click()
        ms.page.locator("#daily-menu").get_by_role("button", name="Expert").click()
        expect(ms.page.locator('#game-tags [data-tag="daily"]')).to_be_visible()
        ms.page.wait_for_timeout(600)  # the board fitted to the window
        area = ms.page.locator("#board-area")
        assert "right" in (area.get_attribute("data-more") or "") or "left" in (
            area.get_attribute("data-more") or ""
        )
        # The box of the opened cells, and the board's view, on the screen.
        box, view = ms.page.evaluate(
            "() => { const s = document.querySelector('#scroller');"
            " const v = s.getBoundingClientRect();"
            " const b = [Infinity, Infinity, -Infinity, -Infinity];"
            " for (const e of document.querySelectorAll('#board [data-i]')) {"
            "   if (!/^[0-8]$/.test(e.dataset.state)) continue;"
            "   const r = e.getBoundingClientRect();"
            "   b[0] = Math.min(b[0], r.left); b[1] = Math.min(b[1], r.top);"
            "   b[2] = Math.max(b[2], r.right); b[3] = Math.max(b[3], r.bottom); }"
            " return [b, [v.left, v.top, v.left + s.clientWidth, v.top + s.clientHeight]]; }"
        )
        assert box[2] > box[0], "no cell opened at the start"
        # Along each axis the opened cells are all in view, or (more of them than the view
        # holds) they fill it.
        for lo, hi in ((0, 2), (1, 3)):
            if box[hi] - box[lo] <= view[hi] - view[lo] + 0.5:
                assert view[lo] - 0.5 <= box[lo] and box[hi] <= view[hi] + 0.5, (box, view)
            else:
                assert box[lo] - 0.5 <= view[lo] and view[hi] <= box[hi] + 0.5, (box, view)
        assert not ms.errors
    finally:
        ctx.close()
