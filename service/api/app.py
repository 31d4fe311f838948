"""The Starlette application: routes, one lifespan, error handlers."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Scope

from .. import engine, metrics, store, wire
from ..config import Config
from ..logs import AccessLog
from . import (
    deadlines,
    events,
    games,
    leaderboards,
    match_events,
    matches,
    player_events,
    players,
    problems,
    ratings,
    replays,
    seeks,
)
from .backends import Backends
from .edge import Edge, Proxies
from .ratelimit import Limits, RateLimits
from .responses import MsgspecResponse

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "openapi.yaml"
ASYNCAPI = ROOT / "asyncapi.yaml"
WEB = ROOT / "clients" / "web"

log = logging.getLogger(__name__)


class WebClient(Mount):
    """The web client at ``/``, for the paths no API route knows.

    A mount at ``/`` matches every path, and a full match wins over the partial one
    of an API route called with the wrong method: stepping aside for those paths
    keeps their 405 and its ``Allow`` header.
    """

    def __init__(self, api: list[BaseRoute], directory: Path) -> None:
        super().__init__("/", StaticFiles(directory=directory, html=True), name="web")
        self.api = api

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if any(route.matches(scope)[0] is not Match.NONE for route in self.api):
            return Match.NONE, {}
        return super().matches(scope)


async def healthz(request: Request) -> Response:
    return MsgspecResponse(wire.Health(status="ok"))


# A readiness answer serves every probe of this process for this long (unless a Redis
# call failed since): asked a thousand times a second, /readyz costs Redis a PING a second.
READY_SECONDS = 1.0


class Readiness:
    """Ready once Redis answers, has told its version, takes writes, keeps what it is
    given (``maxmemory-policy noeviction``), and lets the service's user do what the
    service does (publish and subscribe among it); when it does not, the problem's detail
    says why.

    Each answer is kept for :data:`READY_SECONDS`, or until a Redis call of the process
    fails. Finding it out takes a PING on a connection of the pool; the settings and
    permissions are asked at most every ``routes.CHECK_SECONDS`` (see
    :meth:`store.Routing.not_ready`).
    """

    def __init__(self, routing: store.Routing, ping: Callable[[], Awaitable[object]]) -> None:
        self._routing = routing
        self._ping = ping
        self._lock = asyncio.Lock()
        self._until = 0.0
        self._errors = 0.0
        self._reason: str | None = None
        self._outage: store.StoreUnavailable | None = None

    def _fresh(self) -> bool:
        if time.monotonic() >= self._until:
            return False
        # A ready answer is kept only while every Redis call since has worked.
        return self._reason is not None or self._outage is not None or \
            metrics.redis_errors() == self._errors

    async def reason(self) -> str | None:
        """Why the service is not ready (None: it is); raises :class:`StoreUnavailable`
        while Redis is away."""
        if not self._fresh():
            async with self._lock:
                if not self._fresh():
                    await self._find_out()
        if self._outage is not None:
            raise store.StoreUnavailable(str(self._outage)) from self._outage
        return self._reason

    async def _find_out(self) -> None:
        reason, outage = self._routing.trouble.problem, None
        if reason is None:
            try:
                await self._ping()
                reason = await self._routing.not_ready()
            except store.StoreUnavailable as exc:
                if exc.refused is None:
                    outage = exc
                reason = exc.refused  # Redis answers, and refuses: say why
        self._reason, self._outage = reason, outage
        self._errors = metrics.redis_errors()
        self._until = time.monotonic() + READY_SECONDS


async def readyz(request: Request) -> Response:
    """See :class:`Readiness`."""
    readiness: Readiness = request.app.state.readiness
    reason = await readiness.reason()
    if reason is not None:
        return problems.respond(problems.ApiError(
            503, "store_unavailable", f"not ready: {reason}", {"Retry-After": "5"}
        ))
    return MsgspecResponse(wire.Health(status="ok"))


async def prometheus(request: Request) -> Response:
    body, media_type = metrics.render()
    return Response(body, media_type=media_type)


def document(path: Path, request: Request) -> Response:
    """A contract document, as YAML; as text for a client that asks for text and not YAML
    (generated clients read ``text/*`` but often not ``application/yaml``)."""
    accept = request.headers.get("accept", "")
    text = "text/plain" in accept and "yaml" not in accept
    media_type = "text/plain; charset=utf-8" if text else "application/yaml"
    return FileResponse(path, media_type=media_type)


async def openapi(request: Request) -> Response:
    return document(OPENAPI, request)


async def asyncapi(request: Request) -> Response:
    return document(ASYNCAPI, request)


class Service(Starlette):
    """The app with one layer in front of its routes (``edge.py``) in place of
    Starlette's stack of error and exception middleware."""

    def __init__(
        self,
        *,
        edge: Callable[[ASGIApp], ASGIApp],
        cors: Callable[[ASGIApp], ASGIApp] | None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.edge = edge
        self.cors = cors

    def build_middleware_stack(self) -> ASGIApp:
        app: ASGIApp = self.router
        if self.cors is not None:
            app = self.cors(app)
        return self.edge(app)


def create_app(config: Config | None = None) -> Starlette:
    config = config or Config.from_env()
    limits = Limits.from_config(config)
    access = AccessLog()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not config.redis_url:
            raise RuntimeError("REDIS_URL is not set; start the service with python -m service")
        redis = store.connect(config.redis_url, cluster=config.redis_cluster)
        routing = store.Routing(config.redis_url, redis)
        learning = asyncio.create_task(routing.learn(), name="pubsub-routing")
        buckets = store.Buckets(redis)
        games = store.GameStore(
            redis, ttl_seconds=config.game_ttl, buckets=buckets,
            cache_bytes=config.game_cache_mb * 2**20, routing=routing,
        )
        b = Backends(
            config=config,
            games=games,
            players=store.PlayerStore(
                redis, game_ttl_seconds=config.game_ttl, routing=routing
            ),
            events=store.Events(routing),
            leaderboards=store.Leaderboards(redis),
            rate_limits=RateLimits(limits, buckets),
            matches=store.MatchStore(
                redis, ttl_seconds=config.game_ttl, routing=routing
            ),
        )
        app.state.backends = b
        app.state.routing = routing
        app.state.readiness = Readiness(routing, b.games.ping)
        engine.preload()
        # What start-up built lives as long as the process: keeping it out of the
        # collector's full passes makes each of those a fraction of the cost.
        gc.freeze()
        try:
            async with deadlines.running(b):
                yield
        finally:
            learning.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await learning
            await b.events.stop()
            await routing.aclose()
            await redis.aclose()
            access.flush()

    # The router tries each route in turn: the moves, most of the traffic, come first.
    routes = [
        Route("/games/{game_id}/reveal", games.reveal, methods=["POST"]),
        Route("/games/{game_id}/flag", games.flag, methods=["POST"]),
        Route("/games/{game_id}/chord", games.chord, methods=["POST"]),
        Route("/games", games.create_game, methods=["POST"]),
        Route("/games/{game_id}", games.get_game),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", prometheus),
        Route("/openapi.yaml", openapi),
        Route("/asyncapi.yaml", asyncapi),
        Route("/games/{game_id}/reset", games.reset_game, methods=["POST"]),
        Route("/games/{game_id}/pause", games.pause, methods=["POST"]),
        Route("/games/{game_id}/resume", games.resume, methods=["POST"]),
        Route("/games/{game_id}/hint", games.hint, methods=["POST"]),
        Route("/games/{game_id}/replay", replays.replay),
        Route("/leaderboards/{preset}", leaderboards.leaderboard),
        Route("/players", players.register, methods=["POST"]),
        # Before /players/{player_id}, which "me" would match too.
        Route("/players/me", players.me, methods=["GET", "PATCH"]),
        Route("/players/{player_id}", players.get_player),
        Route("/matches", matches.create, methods=["POST"]),
        Route("/matches/{match_id}", matches.get_match),
        Route("/matches/{match_id}/join", matches.join, methods=["POST"]),
        Route("/matches/{match_id}/leave", matches.leave, methods=["POST"]),
        Route("/matches/{match_id}/start", matches.start, methods=["POST"]),
        Route("/matches/{match_id}/rematch", matches.rematch, methods=["POST"]),
        Route("/seeks", seeks.create, methods=["POST"]),
        Route("/seeks/{seek_id}", seeks.seek, methods=["GET", "DELETE"]),
        Route("/ratings/race", ratings.race),
        WebSocketRoute("/games/{game_id}/events", events.events),
        WebSocketRoute("/matches/{match_id}/events", match_events.match_events),
        WebSocketRoute("/players/me/events", player_events.player_events),
    ]
    if WEB.is_dir():
        routes.append(WebClient(list(routes), WEB))
    cors = None
    if config.cors_origins:
        cors = functools.partial(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "If-Match", "Idempotency-Key"],
            expose_headers=["Location", "Retry-After", "X-Request-ID"],
        )
    edge = functools.partial(Edge, proxies=Proxies(config.trusted_proxies), access=access)
    app = Service(routes=routes, lifespan=lifespan, edge=edge, cors=cors)
    app.state.config = config
    return app
