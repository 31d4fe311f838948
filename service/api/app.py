"""The Starlette application: routes, one lifespan, error handlers."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from .. import store, wire
from ..config import Config
from ..store.live import Live
from . import backends, games, hints, leaderboards, live, problems, replays
from .backends import Backends
from .responses import MsgspecResponse

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "openapi.yaml"
ASYNCAPI = ROOT / "asyncapi.yaml"
WEB = ROOT / "clients" / "web"

log = logging.getLogger(__name__)


async def healthz(request: Request) -> Response:
    return MsgspecResponse(wire.Health(status="ok"))


async def readyz(request: Request) -> Response:
    await backends.of(request).games.ping()
    return MsgspecResponse(wire.Health(status="ok"))


async def openapi(request: Request) -> Response:
    return FileResponse(OPENAPI, media_type="application/yaml")


async def asyncapi(request: Request) -> Response:
    return FileResponse(ASYNCAPI, media_type="application/yaml")


def create_app(config: Config | None = None) -> Starlette:
    config = config or Config.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not config.redis_url:
            raise RuntimeError("REDIS_URL is not set; start the service with python -m service")
        redis = store.connect(config.redis_url, cluster=config.redis_cluster)
        b = Backends(
            config=config,
            games=store.GameStore(redis, ttl_seconds=config.game_ttl),
            live=Live(redis),
            leaderboards=store.Leaderboards(redis),
        )
        app.state.backends = b
        await b.live.start()
        try:
            yield
        finally:
            await b.live.stop()
            await redis.aclose()

    routes = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/openapi.yaml", openapi),
        Route("/asyncapi.yaml", asyncapi),
        Route("/games", games.create_game, methods=["POST"]),
        Route("/games/{game_id}", games.get_game),
        Route("/games/{game_id}/reveal", games.reveal, methods=["POST"]),
        Route("/games/{game_id}/flag", games.flag, methods=["POST"]),
        Route("/games/{game_id}/chord", games.chord, methods=["POST"]),
        Route("/games/{game_id}/reset", games.reset_game, methods=["POST"]),
        Route("/games/{game_id}/pause", games.pause, methods=["POST"]),
        Route("/games/{game_id}/resume", games.resume, methods=["POST"]),
        Route("/games/{game_id}/hint", hints.hint, methods=["POST"]),
        Route("/games/{game_id}/replay", replays.replay),
        Route("/leaderboards/{preset}", leaderboards.leaderboard),
        WebSocketRoute("/games/{game_id}/events", live.events),
    ]
    if WEB.is_dir():
        routes.append(Mount("/", StaticFiles(directory=WEB, html=True), name="web"))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            Exception: problems.handle_unexpected,
            **{exc: problems.handle for exc in problems.HANDLED},
        },
    )
    app.state.config = config
    return app
