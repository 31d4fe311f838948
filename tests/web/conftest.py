"""Fixtures for the browser tests: one headless Chromium per test package run, a fresh
context (storage, viewport) per test, and an API client on the same live server."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.support import CHROMIUM, LAUNCH_ARGS, Api, token_script

if os.path.exists(CHROMIUM):
    from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect, sync_playwright


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(10_000)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def api(live_server: str) -> Iterator[Api]:
    client = Api(live_server)
    try:
        yield client
    finally:
        client.close()


class Minesweeper:
    """The page, seen the way a player sees it: cells by coordinates, the header."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    # navigation
    def goto(self, fragment: str = "") -> None:
        self.page.goto(f"{self.base_url}/{fragment}")
        expect(self.page.locator("#board [data-i]").first).to_be_attached()

    def play(self, game_id: str, token: str) -> None:
        """Open a game created elsewhere, holding its token like the page that made it."""
        self.page.add_init_script(token_script(game_id, token))
        self.goto(f"#/game/{game_id}")
        self.wait_game(game_id)

    def watch(self, game_id: str) -> None:
        self.goto(f"#/watch/{game_id}")
        self.wait_game(game_id)

    def wait_game(self, game_id: str) -> None:
        expect(self.page).to_have_url(re.compile(f"#/(game|watch)/{game_id}$"))

    @property
    def game_id(self) -> str:
        m = re.search(r"#/(?:game|watch)/([0-9a-f]{32})$", self.page.url)
        assert m, self.page.url
        return m.group(1)

    # the board
    @property
    def grid(self) -> Locator:
        return self.page.get_by_role("grid")

    def size(self) -> tuple[int, int]:
        w = self.grid.get_attribute("aria-colcount")
        h = self.grid.get_attribute("aria-rowcount")
        assert w and h
        return int(w), int(h)

    def cell(self, x: int, y: int) -> Locator:
        return self.page.locator(f'#board [data-x="{x}"][data-y="{y}"]')

    def states(self) -> list[str]:
        states: list[str] = self.page.eval_on_selector_all(
            "#board [data-i]", "els => els.map(e => e.dataset.state)"
        )
        return states

    def state(self, x: int, y: int) -> str:
        value = self.cell(x, y).get_attribute("data-state")
        assert value is not None
        return value

    def expect_state(self, x: int, y: int, state: str) -> None:
        expect(self.cell(x, y)).to_have_attribute("data-state", state)

    def expect_opened(self, x: int, y: int) -> None:
        expect(self.cell(x, y)).to_have_attribute("data-state", re.compile(r"^[0-8]$"))

    # what the board's canvas shows
    PAINTED_JS = """([x, y, fx, fy]) => {
        const space = document.querySelector('#board-space').getBoundingClientRect();
        const grid = document.querySelector('#board');
        const cell = parseFloat(getComputedStyle(grid).getPropertyValue('--cell'));
        const canvas = document.querySelector('#board-canvas');
        const box = canvas.getBoundingClientRect();
        const dpr = canvas.width / box.width;
        const px = Math.floor((space.left + (x + fx) * cell - box.left) * dpr);
        const py = Math.floor((space.top + (y + fy) * cell - box.top) * dpr);
        if (px < 0 || py < 0 || px >= canvas.width || py >= canvas.height) return null;
        return [...canvas.getContext('2d').getImageData(px, py, 1, 1).data.slice(0, 3)];
    }"""

    def painted(self, x: int, y: int, at: tuple[float, float] = (0.2, 0.75)) -> Any:
        """The colour the canvas shows at a point of cell (x, y) (None when out of view):
        by default a point clear of a number or an icon, which shows the cell's ground."""
        return self.page.evaluate(self.PAINTED_JS, [x, y, *at])

    def expect_painted(
        self, x: int, y: int, rgb: tuple[int, int, int], at: tuple[float, float] = (0.2, 0.75),
        timeout: float = 10_000,
    ) -> None:
        """Wait until the canvas shows ``rgb`` at that point of cell (x, y)."""
        self.page.wait_for_function(
            f"args => {{ const c = ({self.PAINTED_JS})(args);"
            f" return c && c.join() === {list(rgb)!r}.join(); }}",
            arg=[x, y, *at], timeout=timeout,
        )

    # the header
    def mines_left(self) -> int:
        return int(self.page.locator("#mines-left").get_attribute("data-value") or "nan")

    def timer(self) -> int:
        return int(self.page.locator("#timer").get_attribute("data-value") or "nan")

    def elapsed_ms(self) -> int:
        return int(self.page.locator("#frame").get_attribute("data-elapsed") or "nan")

    def face(self) -> str:
        return self.page.locator("#face").get_attribute("data-face") or ""

    def status(self) -> str:
        return self.page.locator("#frame").get_attribute("data-status") or ""


@pytest.fixture
def ms(context: BrowserContext, live_server: str) -> Iterator[Minesweeper]:
    page = context.new_page()
    game = Minesweeper(page, live_server)
    yield game
    assert not game.errors, f"errors in the page: {game.errors}"


@pytest.fixture
def new_ms(context: BrowserContext, live_server: str) -> Iterator[Any]:
    """Open further pages (another player's tab, a spectator) in the same test."""
    pages: list[Minesweeper] = []

    def make(ctx: BrowserContext | None = None) -> Minesweeper:
        page = (ctx or context).new_page()
        m = Minesweeper(page, live_server)
        pages.append(m)
        return m

    yield make
    for m in pages:
        assert not m.errors, f"errors in the page: {m.errors}"
