"""Daily boards: one board per preset and day, the same for every player.

The seed is an HMAC of the date under a secret kept in Redis, so nobody can
compute a day's mines from the date and this code. The board opens its start
the way the engine opens any shared board's (``engine.open_start``).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, date, datetime, time, timedelta

# How long a day's leaderboards are kept after the day: a year of them to look back on,
# and a Redis that does not grow by a day's boards every day for ever.
KEEP_DAYS = 366


def today(now_ms: int) -> str:
    return datetime.fromtimestamp(now_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def over(date: str, now_ms: int) -> bool:
    """Whether the day ``date`` (UTC) has ended: its board's games are everybody's to see."""
    return date < today(now_ms)


def kept_until(day: str) -> int:
    """When (ms) the leaderboards of the day ``day`` are dropped."""
    end = datetime.combine(date.fromisoformat(day), time(), UTC) + timedelta(days=1 + KEEP_DAYS)
    return int(end.timestamp() * 1000)


def seed(secret: bytes, date: str, preset: str, no_guess: bool) -> int:
    message = f"{date}:{preset}:{'noguess' if no_guess else 'classic'}".encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")
