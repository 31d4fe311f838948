"""Redis, and nothing else touches it: games, their event streams and live fan-out,
players, leaderboards, rate-limit buckets, and the embedded server. Every key is built in
``keys.py``; every script is a ``.lua`` file beside the module that runs it."""

from .connection import Redis, connect
from .errors import GameNotFound, RateLimited, StoreError, StoreUnavailable, TooLate
from .events import RESYNC, Events, Message, Resync, Subscription
from .games import GameStore, MatchLink, Record
from .leaderboards import Entry, Leaderboards, board_name
from .matches import MatchNotFound, MatchState, MatchStore, SeatState, Seek, SeekNotFound
from .players import Owner, PlayerRecord, PlayerStore, Recent, Tally
from .ratelimit import Buckets, Limit, Take
from .routes import Routing

__all__ = [
    "RESYNC",
    "Buckets",
    "Entry",
    "Events",
    "GameNotFound",
    "GameStore",
    "Leaderboards",
    "Limit",
    "MatchLink",
    "MatchNotFound",
    "MatchState",
    "MatchStore",
    "Message",
    "Owner",
    "PlayerRecord",
    "PlayerStore",
    "RateLimited",
    "Recent",
    "Record",
    "Redis",
    "Resync",
    "Routing",
    "SeatState",
    "Seek",
    "SeekNotFound",
    "StoreError",
    "StoreUnavailable",
    "Subscription",
    "Take",
    "Tally",
    "TooLate",
    "board_name",
    "connect",
]
