"""Daily boards: one board per preset and day, the same for every player.

The seed is an HMAC of the date under a secret kept in Redis, so nobody can
compute a day's mines from the date and this code.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime

from .. import engine


def today(now_ms: int) -> str:
    return datetime.fromtimestamp(now_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def seed(secret: bytes, date: str, preset: str, no_guess: bool) -> int:
    message = f"{date}:{preset}:{'noguess' if no_guess else 'classic'}".encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")


def board(settings: engine.Settings, seed: int, no_guess: bool, now_ms: int) -> engine.Game:
    """The day's game with its start cell opened; the clock starts at the player's first move."""
    game = engine.new_game(settings, seed=seed, now_ms=now_ms, no_guess=no_guess)
    opened, _ = engine.open_start(game, now_ms)
    return opened
