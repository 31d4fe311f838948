"""What a request works with: the stores, the live fan-out and the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection
from starlette.types import Scope

from ..config import Config
from ..store import GameStore, Leaderboards
from ..store.live import Live
from ..store.ratelimit import RateLimiter

if TYPE_CHECKING:
    from .limits import Limits


@dataclass(frozen=True)
class Backends:
    config: Config
    games: GameStore
    live: Live
    leaderboards: Leaderboards
    limiter: RateLimiter
    limits: Limits


def of(conn: HTTPConnection) -> Backends:
    backends: Backends = conn.app.state.backends
    return backends


def of_scope(scope: Scope) -> Backends:
    backends: Backends = scope["app"].state.backends
    return backends
