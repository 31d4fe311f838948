"""A typed client for the Minesweeper service.

    >>> from minesweeper import Client
    >>> with Client("http://127.0.0.1:8000") as client:
    ...     game = client.new_game("beginner", seed=7)
    ...     diff = client.reveal(game, 4, 4)

:class:`Client` is synchronous, :class:`AsyncClient` asynchronous and can also
follow a game live (:meth:`AsyncClient.watch`, :meth:`AsyncClient.connect`).
Answers are the service's own wire Structs from :mod:`service.wire`; errors are
:class:`ApiError` subclasses, one per problem ``code``.
"""

from service.wire import (
    CreatedGame,
    Diff,
    GameView,
    Heartbeat,
    Problem,
    Reset,
    Snapshot,
)

from .aio import AsyncClient
from .client import Client
from .errors import (
    ApiError,
    Forbidden,
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
    "Forbidden",
    "Game",
    "GameOver",
    "GameView",
    "Heartbeat",
    "InvalidRequest",
    "LiveGame",
    "LiveMessage",
    "NotFound",
    "Paused",
    "Problem",
    "RateLimited",
    "Reset",
    "Snapshot",
    "StoreUnavailable",
    "TooLarge",
    "Unauthorized",
    "VersionConflict",
    "apply_diff",
]
