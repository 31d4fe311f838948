"""Redis: games, their event streams, live fan-out, and the embedded server."""

from .connection import Redis, connect
from .errors import GameNotFound, StoreError, StoreUnavailable
from .games import GameStore, Record

__all__ = [
    "GameNotFound",
    "GameStore",
    "Record",
    "Redis",
    "StoreError",
    "StoreUnavailable",
    "connect",
]
