"""What a request works with: the settings, the stores (games, players, leaderboards, matches),
the events and the rate limits, built once at start-up."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection
from starlette.types import Scope

from ..config import Config
from ..store import Events, GameStore, Leaderboards, MatchStore, PlayerStore

if TYPE_CHECKING:
    from .ratelimit import RateLimits


@dataclass(frozen=True)
class Backends:
    config: Config
    games: GameStore
    players: PlayerStore
    events: Events
    leaderboards: Leaderboards
    rate_limits: RateLimits
    matches: MatchStore
    # Slow changes run in worker threads, as many at once as the process has cores.
    heavy: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(len(os.sched_getaffinity(0)))
    )


def of(conn: HTTPConnection) -> Backends:
    backends: Backends = conn.app.state.backends
    return backends


def of_scope(scope: Scope) -> Backends:
    backends: Backends = scope["app"].state.backends
    return backends
