"""What a request works with: the stores, the live fan-out and the settings."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import HTTPConnection

from ..config import Config
from ..store import GameStore, Leaderboards
from ..store.live import Live


@dataclass(frozen=True)
class Backends:
    config: Config
    games: GameStore
    live: Live
    leaderboards: Leaderboards


def of(conn: HTTPConnection) -> Backends:
    backends: Backends = conn.app.state.backends
    return backends
