"""Settings: each declared once on :class:`Config` (type, default, meaning), read from
command-line flags and the environment, coerced and checked by msgspec.

A field ``port`` is the setting ``PORT`` in the environment and ``--port`` on the command
line; the flag wins. Its annotation's ``Meta`` holds the meaning and the bounds, which
give ``--help`` and the error a bad value gets.
"""

from __future__ import annotations

import argparse
import difflib
import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec
import msgspec.inspect as mi
from msgspec import Meta

from .engine import DEFAULT_MAX_CELLS
from .store.connection import check_url

LogLevel = Literal["debug", "info", "warning", "error", "critical"]

# Bounds of the numeric settings: a value past them (``inf`` among others) would reach
# Redis's scripts or the event loop as a number they cannot take.
TEN_YEARS = 10 * 365 * 24 * 3600
MOST_A_SECOND = 1_000_000
# A limit is 0 (off) or at least this much: a smaller rate would make a bucket's expiry
# and its wait too long for Redis to write as a whole number.
LEAST_ON = {"least": 0.001}


class Config(msgspec.Struct, frozen=True, kw_only=True):
    host: Annotated[str, Meta(description="address to listen on")] = "127.0.0.1"
    port: Annotated[int, Meta(ge=0, le=65535, description="port to listen on")] = 8000
    redis_url: Annotated[str, Meta(
        description="redis://, rediss://, unix://, redis+sentinel:// or redis+cluster:// URL "
        "of Redis; unset: an embedded Redis with its data in DATA_DIR"
    )] = ""
    redis_cluster: Annotated[bool, Meta(
        description="REDIS_URL names a node of a Redis Cluster (a redis+cluster:// URL says so too)"
    )] = False
    data_dir: Annotated[Path, Meta(
        description="where the embedded Redis keeps its data; unused when REDIS_URL is set"
    )] = Path("data")
    appendfsync: Annotated[Literal["always", "everysec"], Meta(
        description="when the embedded Redis syncs its append-only file to disk. always: "
        "before a move is answered, so no answered move is lost; everysec: about once a "
        "second, for more moves a second, losing those of the last second or two if the "
        "machine fails or the server is killed while the disk lags"
    )] = "always"
    workers: Annotated[int, Meta(ge=1, le=256, description="service processes")] = 1
    game_ttl: Annotated[int, Meta(
        ge=1, le=TEN_YEARS, description="seconds an untouched game is kept"
    )] = 7 * 24 * 3600
    max_cells: Annotated[int, Meta(
        ge=4, le=100_000_000, description="largest board, in cells"
    )] = DEFAULT_MAX_CELLS
    log_level: Annotated[LogLevel, Meta(
        description="JSON logs on stderr at this level, one line per request at info"
    )] = "info"
    rate_limit: Annotated[float, Meta(
        ge=0, le=MOST_A_SECOND, extra=LEAST_ON,
        description="requests a second per client address (0: no limit)"
    )] = 100
    move_rate_limit: Annotated[float, Meta(
        ge=0, le=MOST_A_SECOND, extra=LEAST_ON,
        description="moves a second per token, a game's or a player's (0: no limit)"
    )] = 30
    auth_failure_limit: Annotated[float, Meta(
        ge=0, le=MOST_A_SECOND, extra=LEAST_ON,
        description="wrong tokens, unknown games and unknown players a minute per "
        "client address (0: off)"
    )] = 60
    register_rate_limit: Annotated[float, Meta(
        ge=0, le=MOST_A_SECOND, extra=LEAST_ON,
        description="players registered a minute per client address (0: no limit)"
    )] = 10
    max_sockets_per_client: Annotated[int, Meta(
        ge=1, le=1_000_000, description="open WebSockets per client address in each process"
    )] = 32
    cors_origins: Annotated[tuple[str, ...], Meta(
        description="comma-separated origins allowed to call the API from a browser"
    )] = ()
    forwarded_allow_ips: Annotated[tuple[str, ...], Meta(
        description="comma-separated addresses and networks of the proxies whose "
        "X-Forwarded-For and X-Forwarded-Proto are believed; from any other peer they are "
        "ignored and the peer's own address is the client's (none by default: a proxy "
        "in front must be listed, even one on the same machine)"
    )] = ()
    game_cache_mb: Annotated[int, Meta(
        ge=0, le=1_000_000,
        description="megabytes of recent games each process keeps a copy of, so a "
        "move on one takes a single Redis round trip (0: none, every move loads its game)"
    )] = 32
    heartbeat_seconds: Annotated[float, Meta(
        gt=0, le=3600,
        description="seconds of quiet on a WebSocket before the server sends a heartbeat"
    )] = 15.0
    seek_expiry: Annotated[float, Meta(
        ge=1, le=86400, description="seconds a seek waits for an opponent after its player last "
        "polled it, when the player has no socket open"
    )] = 30.0
    match_wait: Annotated[float, Meta(
        ge=1, le=7 * 86400, description="seconds a match (a room, a rematch) may wait for "
        "its start; then it lapses, unrated, and frees its seats"
    )] = 900.0

    # Not a setting: the most a request body or a socket message may hold.
    max_body: ClassVar[int] = 16 * 1024

    def __post_init__(self) -> None:
        for entry in self.forwarded_allow_ips:
            trusted_network(entry)
        if self.redis_url and not self.redis_url.startswith(REDIS_SCHEMES):
            raise ValueError(
                f"REDIS_URL must start with {', '.join(REDIS_SCHEMES)}, not "
                f"{self.redis_url.partition('://')[0] + '://'!r}"
            )
        if self.redis_url:
            cluster = self.redis_cluster or self.redis_url.startswith("redis+cluster://")
            try:
                check_url(self.redis_url, cluster=cluster)
            except ValueError as exc:  # the message never repeats the URL: it may hold a password
                raise ValueError(f"REDIS_URL is not a Redis URL the service can use: {exc}") \
                    from None

    @property
    def trusted_proxies(self) -> list[str]:
        """``forwarded_allow_ips`` as networks, written out (``192.0.2.7`` is ``192.0.2.7/32``)."""
        return [str(trusted_network(entry)) for entry in self.forwarded_allow_ips]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        return read(os.environ if env is None else env)


def trusted_network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if entry == "*":
        # uvicorn would then believe the first address a client wrote into the header.
        raise ValueError(
            "FORWARDED_ALLOW_IPS may not be *: list the addresses or networks of the proxies"
        )
    try:
        return ipaddress.ip_network(entry)
    except ValueError as exc:
        raise ValueError(f"FORWARDED_ALLOW_IPS: {exc}") from None


REDIS_SCHEMES = ("redis://", "rediss://", "unix://", "redis+sentinel://", "redis+cluster://")


class SettingError(ValueError):
    """A setting's value that does not fit it; the message names the setting."""


@dataclass(frozen=True)
class Setting:
    """One field of :class:`Config`, as an operator sees it."""

    field: str
    type: mi.Type
    meaning: str
    default: Any
    # The least value above 0 a setting that 0 turns off takes (None: no such rule).
    least: float | None = None

    @property
    def env(self) -> str:
        return self.field.upper()

    @property
    def flag(self) -> str:
        return "--" + self.field.replace("_", "-")

    @property
    def shown(self) -> str:
        """The default as it would be written in the environment ('' for none)."""
        return spelled(self.default)

    @property
    def expected(self) -> str:
        """What a value must be, in words."""
        t = self.type
        if isinstance(t, mi.BoolType):
            return "1 or 0"
        if isinstance(t, mi.LiteralType):
            return "one of " + ", ".join(map(str, t.values))
        if isinstance(t, (mi.IntType, mi.FloatType)):
            kind = "a whole number" if isinstance(t, mi.IntType) else "a number"
            if self.least is not None and t.le is not None:
                return f"0 (off) or {kind} from {spelled(self.least)} to {spelled(t.le)}"
            if t.ge is not None and t.le is not None:
                return f"{kind} from {spelled(t.ge)} to {spelled(t.le)}"
            if t.gt is not None and t.le is not None:
                return f"{kind} above {spelled(t.gt)} and at most {spelled(t.le)}"
            if t.ge is not None:
                return f"{kind} of at least {spelled(t.ge)}"
            if t.gt is not None:
                return f"{kind} above {spelled(t.gt)}"
            return kind
        if isinstance(t, mi.VarTupleType):
            return "a comma-separated list"
        if isinstance(t, mi.CustomType):
            return "a path"
        return "text"

    def parse(self, raw: str) -> Any:
        """The shape msgspec converts from: lists for list settings, the rest as given."""
        if isinstance(self.type, mi.VarTupleType):
            return [item.strip() for item in raw.split(",") if item.strip()]
        if isinstance(self.type, mi.LiteralType):
            return raw.strip().lower()
        return raw.strip()


def spelled(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _settings() -> tuple[Setting, ...]:
    info = mi.type_info(Config)
    assert isinstance(info, mi.StructType)
    out = []
    for f in info.fields:
        assert isinstance(f.type, mi.Metadata) and f.type.extra_json_schema, f.name
        least = (f.type.extra or {}).get("least")
        out.append(Setting(
            f.name, f.type.type, f.type.extra_json_schema["description"], f.default, least
        ))
    return tuple(out)


SETTINGS = _settings()
_BY_FIELD = {s.field: s for s in SETTINGS}
_BY_ENV = {s.env: s for s in SETTINGS}
_ERROR_AT = re.compile(r" - at `\$\.(\w+)")


def read(env: Mapping[str, str], flags: Mapping[str, str] | None = None) -> Config:
    """The settings from ``flags`` (by environment name), else ``env``, else the defaults.

    An empty value counts as unset. Raises :class:`SettingError` on the first bad value.
    """
    given: dict[str, tuple[str, str]] = {}
    for s in SETTINGS:
        if flags is not None and s.env in flags:
            if flags[s.env]:  # an empty flag unsets what the environment says
                given[s.field] = (s.flag, flags[s.env])
        elif env.get(s.env):
            given[s.field] = (s.env, env[s.env])
    values = {name: _BY_FIELD[name].parse(raw) for name, (_, raw) in given.items()}
    try:
        config = msgspec.convert(values, Config, strict=False, dec_hook=_decode)
    except msgspec.ValidationError as exc:
        at = _ERROR_AT.search(str(exc))
        if at is None:  # raised by Config.__post_init__, which names the setting itself
            raise SettingError(str(exc)) from None
        source, raw = given[at[1]]
        raise SettingError(
            f"{source} must be {_BY_FIELD[at[1]].expected}, not {raw!r}"
        ) from None
    for name, (source, raw) in given.items():
        least = _BY_FIELD[name].least
        value = getattr(config, name)
        if least is not None and 0 < value < least:
            raise SettingError(f"{source} must be {_BY_FIELD[name].expected}, not {raw!r}")
    if config.redis_url.startswith("redis+cluster://") and not config.redis_cluster:
        config = msgspec.structs.replace(config, redis_cluster=True)
    return config


# How alike an environment variable's name must be to a setting's to be taken for it
# misspelled (difflib's ratio: REDIS_URI and REDIS_URL are 0.89, REDIS_PORT 0.74).
MISSPELLED_CUTOFF = 0.85


def misspelled(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` that are no setting but look like one misspelled (or in
    lower case), each with the setting it likely means; ignored, as every variable that
    is not a setting is."""
    names = [s.env for s in SETTINGS]
    out = {}
    for name, value in env.items():
        if name in _BY_ENV or not value:
            continue
        close = difflib.get_close_matches(name.upper(), names, n=1, cutoff=MISSPELLED_CUTOFF)
        if close:
            out[name] = close[0]
    return out


def _decode(type_: type, value: object) -> object:
    if type_ is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(type_)


def parser() -> argparse.ArgumentParser:
    """``python -m service``'s command line: one flag per setting."""
    p = argparse.ArgumentParser(
        prog="python -m service",
        usage="%(prog)s [-h] [--SETTING VALUE ...]",
        description="Runs the Minesweeper service.",
        epilog="Each setting can also come from the environment variable named after the "
        "flag (PORT for --port); a flag wins over the environment.",
    )
    for s in SETTINGS:
        default = f"default {s.shown}" if s.shown else "unset by default"
        shape = "" if s.expected == "text" else f"{s.expected}, "
        text = f"{s.meaning}; {shape}{default}".replace("%", "%%")
        if isinstance(s.type, mi.BoolType):
            p.add_argument(s.flag, dest=s.field, action=argparse.BooleanOptionalAction,
                           default=None, help=f"{s.env}: {text}")
        else:
            p.add_argument(s.flag, dest=s.field, metavar=s.env, default=None, help=text)
    return p


def flags_given(args: argparse.Namespace) -> dict[str, str]:
    """The settings given as flags, by environment name, spelled as in the environment."""
    out = {}
    for s in SETTINGS:
        value = getattr(args, s.field)
        if value is not None:
            out[s.env] = spelled(value)
    return out
