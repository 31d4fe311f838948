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
