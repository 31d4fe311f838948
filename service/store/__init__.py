"""Redis: games, their event streams, live fan-out, and the embedded server."""

from .connection import Redis, connect, connect_pubsub
from .errors import GameNotFound, RateLimited, StoreError, StoreUnavailable
from .games import GameStore, Record
from .leaderboards import Entry, Leaderboards, board_name

__all__ = [
    "Entry",
    "GameNotFound",
    "GameStore",
    "Leaderboards",
    "RateLimited",
    "Record",
    "Redis",
    "StoreError",
    "StoreUnavailable",
    "board_name",
    "connect",
    "connect_pubsub",
]
