"""What a request works with: the settings, the stores (games, players, leaderboards, matches),
the events and the rate limits, built once at start-up."""

from __future__ import annotations

import asyncio
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
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
    heavy: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(cores()))


def cores() -> int:
    """The cores this process may use: those it may run on, within its container's CPU
    quota (cgroup v2), which a pod's CPU limit sets."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass  # no cgroup v2 here, or no quota
    return n


def of(conn: HTTPConnection) -> Backends:
    backends: Backends = conn.app.state.backends
    return backends


def of_scope(scope: Scope) -> Backends:
    backends: Backends = scope["app"].state.backends
    return backends
