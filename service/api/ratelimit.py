"""Rate limits: per client address, per token, on failed auth, and on registrations.

Failed tokens, unknown games and unknown players draw on a small per-address bucket,
and every request needs that bucket not to be empty, so ids and tokens cannot be
guessed at speed. A move takes its buckets in the script that loads its game (see
``moves.py``); every other request takes them here, before it is handled, and so
does a WebSocket before it serves (``edge.py`` and ``events.py`` take them). A
registration also takes from a bucket of its own.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from .. import metrics
from ..config import Config
from ..store import Buckets, Limit, Take, keys
from ..store.ratelimit import retry_after
from .problems import ApiError
from .requests import now_ms

log = logging.getLogger(__name__)

MOVE = re.compile(r"/games/[^/]+/(reveal|flag|chord)")
UNLIMITED = frozenset({"/healthz", "/readyz", "/metrics"})
FAILURES = frozenset({401, 403, 404})
# The paths whose 401, 403 and 404 are wrong tokens or guessed ids.
GUARDED = ("/games", "/players", "/matches", "/seeks")


@dataclass(frozen=True)
class Limits:
    """The configured limits; None where a limit is off."""

    requests: Limit | None
    failures: Limit | None
    moves: Limit | None
    registrations: Limit | None = None

    @classmethod
    def from_config(cls, config: Config) -> Limits:
        return cls(
            requests=Limit.per_second(config.rate_limit) if config.rate_limit else None,
            failures=(
                Limit.per_minute(config.auth_failure_limit) if config.auth_failure_limit else None
            ),
            moves=Limit.per_second(config.move_rate_limit) if config.move_rate_limit else None,
            registrations=(
                Limit.per_minute(config.register_rate_limit)
                if config.register_rate_limit else None
            ),
        )

    @property
    def any(self) -> bool:
        return bool(self.requests or self.failures or self.moves)


@dataclass(frozen=True)
class RateLimits:
    """Which buckets each kind of request takes, and taking them."""

    limits: Limits
    buckets: Buckets

    def client(self, address: str) -> list[Take]:
        """What any request from ``address`` takes (one hash tag: one script call)."""
        takes = []
        if self.limits.requests:
            takes.append(Take(keys.client_requests(address), self.limits.requests))
        if self.limits.failures:
            takes.append(Take(keys.client_failures(address), self.limits.failures, need=1, cost=0))
        return takes

    def move(self, token_hash: bytes) -> list[Take]:
        moves = self.limits.moves
        return [Take(keys.token_moves(token_hash), moves)] if moves else []

    async def admit(self, address: str) -> None:
        """Take what any request from ``address`` takes; 429 when a bucket is empty."""
        wait = await self.buckets.take(self.client(address), now_ms())
        if wait:
            raise refusal(wait, "client")

    async def register(self, address: str) -> None:
        """Take a registration from ``address``'s bucket; 429 when it is empty."""
        limit = self.limits.registrations
        if not limit:
            return
        wait = await self.buckets.take([Take(keys.client_registrations(address), limit)], now_ms())
        if wait:
            raise refusal(wait, "register")

    async def charge_failure(self, address: str) -> None:
        """Count a failed token or unknown game against ``address``."""
        if not self.limits.failures:
            return
        take = Take(keys.client_failures(address), self.limits.failures, need=0, cost=1)
        try:
            await self.buckets.take([take], now_ms())
        except Exception:  # the answer is sent or on its way: a lost charge only loosens the limit
            log.debug("could not charge the failure bucket", exc_info=True)


def admitted_here(path: str) -> bool:
    """Whether a request needs no admission before it is handled: a move takes its
    limits as it loads its game, and the probes and metrics take none."""
    return path in UNLIMITED or MOVE.fullmatch(path) is not None


def refusal(wait_ms: int, scope: str) -> ApiError:
    metrics.LIMITED.labels(scope).inc()
    return ApiError(
        429, "rate_limited", "too many requests; slow down", {"Retry-After": retry_after(wait_ms)}
    )
