"""Rate limits: per client address, per game token, and on failed auth.

Failed tokens and unknown games draw on a small per-address bucket, and every
request needs that bucket not to be empty, so ids and tokens cannot be guessed
at speed. A move takes its buckets in the script that loads the game; every
other request takes them here, before it is handled.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import metrics
from ..config import Config
from ..store.ratelimit import Limit, Take, client_keys, retry_after, token_key
from . import backends
from .problems import ApiError, api_error_of, respond

log = logging.getLogger(__name__)

MOVE = re.compile(r"/games/[^/]+/(reveal|flag|chord)")
UNLIMITED = frozenset({"/healthz", "/readyz", "/metrics"})
FAILURES = frozenset({401, 403, 404})


@dataclass(frozen=True)
class Limits:
    requests: Limit | None
    failures: Limit | None
    moves: Limit | None

    @classmethod
    def from_config(cls, config: Config) -> Limits:
        return cls(
            requests=Limit.per_second(config.rate_limit) if config.rate_limit else None,
            failures=(
                Limit.per_minute(config.auth_failure_limit) if config.auth_failure_limit else None
            ),
            moves=Limit.per_second(config.move_rate_limit) if config.move_rate_limit else None,
        )

    @property
    def any(self) -> bool:
        return bool(self.requests or self.failures or self.moves)

    def client(self, address: str) -> list[Take]:
        """What any request from ``address`` takes (one hash tag: one script call)."""
        requests, failures = client_keys(address)
        takes = []
        if self.requests:
            takes.append(Take(requests, self.requests))
        if self.failures:
            takes.append(Take(failures, self.failures, need=1, cost=0))
        return takes

    def move(self, token_hash: bytes) -> list[Take]:
        return [Take(token_key(token_hash), self.moves)] if self.moves else []

    def failure(self, address: str) -> list[Take]:
        if not self.failures:
            return []
        return [Take(client_keys(address)[1], self.failures, need=0, cost=1)]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def refusal(wait_ms: int, scope: str) -> ApiError:
    metrics.LIMITED.labels(scope).inc()
    return ApiError(
        429, "rate_limited", "too many requests; slow down", {"Retry-After": retry_after(wait_ms)}
    )


class ClientLimits:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNLIMITED:
            await self.app(scope, receive, send)
            return
        b = backends.of_scope(scope)
        address = client_address(scope)
        if not MOVE.fullmatch(scope["path"]):
            try:
                wait = await b.limiter.take(b.limits.client(address), now_ms())
            except Exception as exc:
                await respond_error(exc, scope, receive, send)
                return
            if wait:
                await respond(refusal(wait, "client"))(scope, receive, send)
                return
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, watch)
        if status in FAILURES and scope["path"].startswith("/games"):
            try:
                await b.limiter.take(b.limits.failure(address), now_ms())
            except Exception:  # the answer is sent; a lost charge only loosens the limit
                log.debug("could not charge the failure bucket", exc_info=True)


async def respond_error(exc: Exception, scope: Scope, receive: Receive, send: Send) -> None:
    await respond(api_error_of(exc))(scope, receive, send)
