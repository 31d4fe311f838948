"""Redis, and nothing else touches it: games, their event streams and live fan-out,
players, leaderboards, rate-limit buckets, and the embedded server. Every key is built in
``keys.py``; every script is a ``.lua`` file beside the module that runs it."""

from .connection import Redis, connect, connect_pubsub
from .errors import GameNotFound, RateLimited, StoreError, StoreUnavailable
from .events import Events, Subscription
from .games import GameStore, Record
from .leaderboards import Entry, Leaderboards, board_name
from .players import Owner, PlayerRecord, PlayerStore, Recent, Tally
from .ratelimit import Buckets, Limit, Take

__all__ = [
    "Buckets",
    "Entry",
    "Events",
    "GameNotFound",
    "GameStore",
    "Leaderboards",
    "Limit",
    "Owner",
    "PlayerRecord",
    "PlayerStore",
    "RateLimited",
    "Recent",
    "Record",
    "Redis",
    "StoreError",
    "StoreUnavailable",
    "Subscription",
    "Take",
    "Tally",
    "board_name",
    "connect",
    "connect_pubsub",
]
