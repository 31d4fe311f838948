"""Winning games through the public API by logic, guessing only when logic is stuck."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx

from service.engine import solver


def next_cell(board: list[str], mines: int) -> tuple[int, int]:
    """A certainly safe cell, else the one least likely to hold a mine."""
    analysis = solver.analyze(board, mines)
    # The solver treats marks as unknown; only unmarked cells can be revealed.
    safe = [(x, y) for x, y in analysis.safe if board[y][x] == "#"]
    if safe:
        return safe[0]
    odds = {(p.x, p.y): p.mine for p in analysis.probabilities if board[p.y][p.x] == "#"}
    frontier = min(odds, key=odds.__getitem__) if odds else None
    interior = [
        (x, y) for y, row in enumerate(board) for x, ch in enumerate(row)
        if ch == "#" and (x, y) not in odds
    ]
    if frontier is None or (interior and (analysis.interior or 1) < odds[frontier]):
        return interior[0]
    return frontier


# Seconds between moves at a person's pace: uneven, and far slower than a program's.
HUMAN_PACE = (0.08, 0.3)


def play_out(
    http: httpx.Client, game_id: str, token: str, first: tuple[int, int],
    pace: tuple[float, float] | None = None,
) -> str:
    """Reveal from ``first`` on until the game ends (waiting between moves a random time
    within ``pace``, if given); its final status."""
    auth = {"Authorization": f"Bearer {token}"}
    x, y = first
    while True:
        if pace is not None:
            time.sleep(random.uniform(*pace))
        diff: dict[str, Any] = http.post(
            f"/games/{game_id}/reveal", json={"x": x, "y": y}, headers=auth
        ).json()
        if diff["status"] != "playing":
            return str(diff["status"])
        view = http.get(f"/games/{game_id}").json()
        x, y = next_cell(view["board"], view["mines"])


def win(
    http: httpx.Client, tries: int = 20, *, player_token: str | None = None,
    pace: tuple[float, float] | None = None, **body: Any,
) -> tuple[str, str]:
    """Create games with ``body`` (the player's, with ``player_token``) until one is won,
    played at ``pace`` (see :func:`play_out`); its id and token. A given seed is counted
    up between tries, as the same seed would only lose the same way again."""
    headers = {"Authorization": f"Bearer {player_token}"} if player_token else {}
    for attempt in range(tries):
        if "seed" in body:
            body = {**body, "seed": body["seed"] + attempt}
        created = http.post("/games", json=body, headers=headers).json()
        game_id, token = created["game"]["id"], created["token"]
        start = (created["game"]["width"] // 2, created["game"]["height"] // 2)
        if play_out(http, game_id, token, start, pace) == "won":
            return game_id, token
    raise AssertionError(f"no game of {body} was won in {tries} tries")
