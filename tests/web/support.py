"""Helpers for the browser tests: the API as a second client, and the page's board."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

# Browser contexts the size of a phone held upright, and of a laptop.
PHONE: dict[str, Any] = {
    "viewport": {"width": 360, "height": 740},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}
DESKTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 800}}
# A laptop's window, shorter than the desktop's: the height is what a board lacks.
LAPTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 720}}
DEVICES = {"phone": PHONE, "desktop": DESKTOP, "laptop": LAPTOP}

# A box on the screen, as Playwright gives it: x, y, width, height in CSS pixels.
Box = Any


def require_chromium() -> None:
    """Skip the calling test module when Debian's chromium is not installed."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
            allow_module_level=True,
        )


Cell = tuple[int, int]


class Api:
    """A second client that plays through the public HTTP API."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=15)

    def close(self) -> None:
        self.http.close()

    def create(self, **body: Any) -> tuple[dict[str, Any], str]:
        r = self.http.post("/games", json=body)
        assert r.status_code == 201, r.text
        data = r.json()
        return data["game"], data["token"]

    def get(self, game_id: str) -> dict[str, Any]:
        r = self.http.get(f"/games/{game_id}")
        assert r.status_code == 200, r.text
        view: dict[str, Any] = r.json()
        return view

    def move(self, game_id: str, token: str, action: str, x: int, y: int, **extra: Any) -> Any:
        r = self.http.post(
            f"/games/{game_id}/{action}",
            json={"x": x, "y": y, **extra},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 200, r.text
        return r.json()

    def act(self, game_id: str, token: str, action: str) -> Any:
        """An action without a body: ``pause``, ``resume`` or ``hint``."""
        r = self.http.post(
            f"/games/{game_id}/{action}", headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 200, r.text
        return r.json()

    def replay(self, game_id: str) -> dict[str, Any]:
        r = self.http.get(f"/games/{game_id}/replay")
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def reset(self, game_id: str, token: str) -> tuple[dict[str, Any], str]:
        r = self.http.post(f"/games/{game_id}/reset", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text
        data = r.json()
        return data["game"], data["token"]


def mine_layout(api: Api, settings: dict[str, Any], first: Cell) -> set[Cell]:
    """Where the mines of a seeded board are.

    Same seed, settings and first click give the same board, so a twin game played
    through the API until it ends shows them all.
    """
    game, token = api.create(**settings)
    board = [list(row) for row in game["board"]]

    def reveal(x: int, y: int) -> str:
        diff = api.move(game["id"], token, "reveal", x, y)
        for cx, cy, ch in diff["cells"]:
            board[cy][cx] = ch
        status: str = diff["status"]
        return status

    status = reveal(*first)
    for y in range(game["height"]):
        for x in range(game["width"]):
            if status in ("won", "lost"):
                break
            if board[y][x] == "#":
                status = reveal(x, y)
    final = api.get(game["id"])["board"]
    assert final and status in ("won", "lost")
    return {(x, y) for y, row in enumerate(final) for x, ch in enumerate(row) if ch in "*XF"}


def neighbours(x: int, y: int, width: int, height: int) -> list[Cell]:
    return [
        (nx, ny)
        for ny in range(max(0, y - 1), min(height, y + 2))
        for nx in range(max(0, x - 1), min(width, x + 2))
        if (nx, ny) != (x, y)
    ]


def token_script(game_id: str, token: str) -> str:
    """An init script that puts a game's token where the page keeps it."""
    key = json.dumps(f"minesweeper.token.{game_id}")
    value = json.dumps(json.dumps({"token": token, "saved": 0}))
    return f"localStorage.setItem({key}, {value});"
