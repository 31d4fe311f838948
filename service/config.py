"""Settings from the environment: one frozen value, read once at start-up."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .engine import DEFAULT_MAX_CELLS

# (name, default, meaning): the one list behind Config.from_env and ``--help``.
VARIABLES: list[tuple[str, str, str]] = [
    ("HOST", "127.0.0.1", "address to listen on"),
    ("PORT", "8000", "port to listen on"),
    ("REDIS_URL", "", "redis://, rediss://, unix:// or redis+sentinel:// URL; unset: embedded"),
    ("REDIS_CLUSTER", "0", "1: treat REDIS_URL as a Redis Cluster node"),
    ("DATA_DIR", "./data", "where the embedded Redis keeps its data"),
    ("WORKERS", "1", "number of worker processes"),
    ("GAME_TTL", "604800", "seconds an untouched game is kept (default 7 days)"),
    ("MAX_CELLS", str(DEFAULT_MAX_CELLS), "largest board, in cells"),
    ("LOG_LEVEL", "info", "debug, info, warning or error"),
    ("RATE_LIMIT", "100", "requests a second per client address (0: no limit)"),
    ("MOVE_RATE_LIMIT", "30", "moves a second per game token (0: no limit)"),
    ("AUTH_FAILURE_LIMIT", "60", "failed tokens or unknown games a minute per address (0: off)"),
    ("MAX_SOCKETS_PER_CLIENT", "32", "open WebSockets per client address in each process"),
    ("CORS_ORIGINS", "", "comma-separated origins allowed to call the API from a browser"),
]


class Config(msgspec.Struct, frozen=True, kw_only=True):
    host: str = "127.0.0.1"
    port: int = 8000
    redis_url: str = ""
    redis_cluster: bool = False
    data_dir: Path = Path("data")
    workers: int = 1
    game_ttl: int = 7 * 24 * 3600
    max_cells: int = DEFAULT_MAX_CELLS
    log_level: str = "info"
    rate_limit: float = 100
    move_rate_limit: float = 30
    auth_failure_limit: float = 60
    max_sockets_per_client: int = 32
    cors_origins: tuple[str, ...] = ()
    # Not for operators: the limits a request body and a socket message may reach.
    max_body: int = 16 * 1024

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Config:
        env = dict(os.environ if env is None else env)

        def get(name: str) -> str:
            default = next(d for n, d, _ in VARIABLES if n == name)
            return env.get(name) or default

        def integer(name: str, minimum: int) -> int:
            raw = get(name)
            try:
                value = int(raw)
            except ValueError:
                raise SystemExit(f"{name} must be a whole number, not {raw!r}") from None
            if value < minimum:
                raise SystemExit(f"{name} must be at least {minimum}, not {value}")
            return value

        level = get("LOG_LEVEL").lower()
        if level not in ("debug", "info", "warning", "error", "critical"):
            raise SystemExit(f"LOG_LEVEL must be debug, info, warning or error, not {level!r}")
        url = get("REDIS_URL")
        return cls(
            host=get("HOST"),
            port=integer("PORT", 0),
            redis_url=url,
            redis_cluster=get("REDIS_CLUSTER").lower() in ("1", "true", "yes")
            or url.startswith("redis+cluster://"),
            data_dir=Path(get("DATA_DIR")),
            workers=integer("WORKERS", 1),
            game_ttl=integer("GAME_TTL", 1),
            max_cells=integer("MAX_CELLS", 4),
            log_level=level,
            rate_limit=integer("RATE_LIMIT", 0),
            move_rate_limit=integer("MOVE_RATE_LIMIT", 0),
            auth_failure_limit=integer("AUTH_FAILURE_LIMIT", 0),
            max_sockets_per_client=integer("MAX_SOCKETS_PER_CLIENT", 1),
            cors_origins=tuple(o.strip() for o in get("CORS_ORIGINS").split(",") if o.strip()),
        )


def usage() -> str:
    lines = ["usage: python -m service", "", "Runs the Minesweeper service. Environment:"]
    for name, default, meaning in VARIABLES:
        shown = f" (default {default})" if default else ""
        lines.append(f"  {name:<14} {meaning}{shown}")
    return "\n".join(lines)
