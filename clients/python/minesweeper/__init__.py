"""A typed client for the Minesweeper service.

    >>> from minesweeper import Client
    >>> with Client("http://127.0.0.1:8000") as client:
    ...     game = client.new_game("beginner", seed=7)
    ...     diff = client.reveal(game, 4, 4)
    ...     hint = client.hint(game)       # the next cell, and why

:class:`Client` is synchronous, :class:`AsyncClient` asynchronous and can also
follow a game live (:meth:`AsyncClient.watch`, :meth:`AsyncClient.connect`).
Answers are the service's own wire Structs from :mod:`service.wire`; errors are
:class:`ApiError` subclasses, one per problem ``code``.
"""

from service.wire import (
    CreatedGame,
    Diff,
    Fatal,
    GameView,
    Heartbeat,
    Hint,
    Leaderboard,
    LeaderboardEntry,
    Problem,
    Replay,
    ReplayMove,
    Reset,
    Snapshot,
    Stats,
)

from .aio import AsyncClient
from .client import Client
from .errors import (
    ApiError,
    Forbidden,
    GameInProgress,
    GameOver,
    InvalidRequest,
    NotFound,
    Paused,
    RateLimited,
    StoreUnavailable,
    TooLarge,
    Unauthorized,
    VersionConflict,
)
from .game import Game, apply_diff
from .live import LiveGame, LiveMessage

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "CreatedGame",
    "Diff",
    "Fatal",
    "Forbidden",
    "Game",
    "GameInProgress",
    "GameOver",
    "GameView",
    "Heartbeat",
    "Hint",
    "InvalidRequest",
    "Leaderboard",
    "LeaderboardEntry",
    "LiveGame",
    "LiveMessage",
    "NotFound",
    "Paused",
    "Problem",
    "RateLimited",
    "Replay",
    "ReplayMove",
    "Reset",
    "Snapshot",
    "Stats",
    "StoreUnavailable",
    "TooLarge",
    "Unauthorized",
    "VersionConflict",
    "apply_diff",
]
