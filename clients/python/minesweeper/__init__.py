"""A typed client for the Minesweeper service.

    >>> from minesweeper import Client
    >>> with Client("http://127.0.0.1:8000") as client:
    ...     game = client.new_game("beginner", seed=7)
    ...     diff = client.reveal(game, 4, 4)
    ...     hint = client.hint(game)       # the next cell, and why

:class:`Client` is synchronous, :class:`AsyncClient` asynchronous and can also
follow a game live (:meth:`AsyncClient.watch`, :meth:`AsyncClient.connect`), a match
(:meth:`AsyncClient.watch_match`) and the player's own socket
(:meth:`AsyncClient.player_events`).
Answers are the wire Structs of :mod:`minesweeper.wire`, the same the service sends;
errors are :class:`ApiError` subclasses, one per problem ``code``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import (
    AlreadyPlaying,
    AlreadySeated,
    ApiError,
    Forbidden,
    GameInProgress,
    GameOver,
    InvalidRequest,
    MatchFull,
    MatchStarted,
    NameTaken,
    NotFound,
    NotSeated,
    NotStarted,
    Paused,
    RateLimited,
    StoreUnavailable,
    TooLarge,
    Unauthorized,
    VersionConflict,
)
from .game import Game, apply_diff, changed_count, each_cell
from .wire import (
    CreatedGame,
    CreatedMatch,
    CreatedPlayer,
    CreatedSeek,
    Cursor,
    Diff,
    Error,
    Fatal,
    GameView,
    Heartbeat,
    Hint,
    Hinted,
    Leaderboard,
    LeaderboardEntry,
    Matched,
    MatchHeartbeat,
    MatchServerMessage,
    MatchSnapshot,
    MatchUpdate,
    MatchView,
    PlayerHeartbeat,
    PlayerServerMessage,
    PlayerSnapshot,
    PlayerView,
    Problem,
    Progress,
    RatingList,
    Replay,
    ReplayMove,
    Reset,
    Seat,
    SeatPlayer,
    SeekView,
    Snapshot,
    Stats,
)

if TYPE_CHECKING:
    from .aio import AsyncClient
    from .client import Client
    from .live import LiveGame, LiveMessage
else:
    # The clients load httpx and websockets on first use: the service imports
    # ``minesweeper.wire``, which runs this file, and needs neither.
    _CLIENTS = {"AsyncClient": ".aio", "Client": ".client", "LiveGame": ".live",
                "LiveMessage": ".live"}

    def __getattr__(name: str) -> object:
        if name not in _CLIENTS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(_CLIENTS[name], __name__), name)
        globals()[name] = value
        return value

__all__ = [
    "AlreadyPlaying",
    "AlreadySeated",
    "ApiError",
    "AsyncClient",
    "Client",
    "CreatedGame",
    "CreatedMatch",
    "CreatedPlayer",
    "CreatedSeek",
    "Cursor",
    "Diff",
    "Error",
    "Fatal",
    "Forbidden",
    "Game",
    "GameInProgress",
    "GameOver",
    "GameView",
    "Heartbeat",
    "Hint",
    "Hinted",
    "InvalidRequest",
    "Leaderboard",
    "LeaderboardEntry",
    "LiveGame",
    "LiveMessage",
    "MatchFull",
    "MatchHeartbeat",
    "MatchServerMessage",
    "MatchSnapshot",
    "MatchStarted",
    "MatchUpdate",
    "MatchView",
    "Matched",
    "NameTaken",
    "NotFound",
    "NotSeated",
    "NotStarted",
    "Paused",
    "PlayerHeartbeat",
    "PlayerServerMessage",
    "PlayerSnapshot",
    "PlayerView",
    "Problem",
    "Progress",
    "RateLimited",
    "RatingList",
    "Replay",
    "ReplayMove",
    "Reset",
    "Seat",
    "SeatPlayer",
    "SeekView",
    "Snapshot",
    "Stats",
    "StoreUnavailable",
    "TooLarge",
    "Unauthorized",
    "VersionConflict",
    "apply_diff",
    "changed_count",
    "each_cell",
]
