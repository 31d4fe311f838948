"""Connecting to Redis: a single server, a cluster, or a primary found through Sentinel,
with short timeouts so an outage turns into a quick 503 rather than a hanging request.

A Sentinel URL names the sentinels and the monitored primary:
``redis+sentinel://[[user]:password@]host:26379[,host:26379...]/primary-name[/db]``, whose
user and password are the primary's.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection, Connection, ConnectionPool, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff

from .errors import RefusedConnection

CONNECT_TIMEOUT = 1.0
COMMAND_TIMEOUT = 2.0

__all__ = ["Redis", "RedisCluster", "check_url", "connect", "connect_node", "connect_pubsub"]

Redis = aioredis.Redis | RedisCluster


async def _set_up(connection: AbstractConnection) -> None:
    """A new connection's set-up (log in, select the database), with Redis's refusal of
    it as :class:`RefusedConnection`: redis-py raises a plain ResponseError, like a
    command's, and the service would take it for its own bug."""
    try:
        await connection.on_connect()
    except redis.exceptions.ResponseError as exc:
        if "DB index is out of range" in str(exc):
            db = getattr(connection, "db", "?")
            raise RefusedConnection(
                f"Redis has no database {db}, the one REDIS_URL names (Redis said: {exc}): "
                f"name one below its databases setting (16 unless set)"
            ) from exc
        raise RefusedConnection(f"Redis refused to set up a connection as REDIS_URL asks "
                                f"(Redis said: {exc})") from exc


# A cluster client takes no set-up of its own, and needs none: its database is 0.
_CLUSTER_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": CONNECT_TIMEOUT,
    "socket_timeout": COMMAND_TIMEOUT,
    "health_check_interval": 15,
}
_OPTIONS: dict[str, Any] = {**_CLUSTER_OPTIONS, "redis_connect_func": _set_up}


def _plain_url(url: str) -> str:
    return url.replace("redis+cluster://", "redis://", 1)


SENTINEL_SCHEME = "redis+sentinel://"


class Sentinels(NamedTuple):
    """What a Sentinel URL names: the sentinels, the primary, and how to log in to it."""

    sentinels: list[tuple[str, int]]
    primary: str
    db: int
    username: str | None
    password: str | None


def sentinel_parts(url: str) -> Sentinels:
    """``url``'s sentinels and primary; ValueError when it does not name them."""
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2]
    sentinels = []
    for host, _, port in (h.partition(":") for h in hosts.split(",") if h):
        if port and not (port.isdigit() and 0 < int(port) <= 65535):
            raise ValueError(f"a sentinel's port must be a number from 1 to 65535{_ENCODED}")
        sentinels.append((host, int(port or 26379)))
    path = [p for p in parts.path.split("/") if p]
    if not sentinels or not path:
        raise ValueError("a Sentinel URL is redis+sentinel://host:port[,host:port]/primary[/db]")
    if len(path) > 1 and not path[1].isdigit():
        raise ValueError(f"the primary's database must be a number{_ENCODED}")
    return Sentinels(
        sentinels, path[0], int(path[1]) if len(path) > 1 else 0,
        unquote(parts.username) if parts.username else None,
        unquote(parts.password) if parts.password else None,
    )


def _primary(url: str, **options: Any) -> aioredis.Redis:
    """The primary that the sentinels in ``url`` point at, followed across failovers."""
    named = sentinel_parts(url)
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        named.sentinels,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=COMMAND_TIMEOUT,
    )
    primary: aioredis.Redis = sentinel.master_for(
        named.primary, db=named.db, username=named.username, password=named.password,
        **options,
    )
    return primary


# A password holding one of these characters cuts the URL short where it stands.
_ENCODED = " (a password with / ? # or @ in it must be percent-encoded: %2F %3F %23 %40)"


def check_url(url: str, *, cluster: bool = False) -> None:
    """Raise ValueError, saying why, when the store could not connect with ``url`` as it
    is written (whether Redis is there is found out later)."""
    if url.startswith(SENTINEL_SCHEME):
        if cluster:
            raise ValueError("a redis+sentinel:// URL names no cluster: turn REDIS_CLUSTER off")
        sentinel_parts(url)
        return
    scheme = _plain_url(url).partition("://")[0]
    if scheme != "unix":
        try:
            port = urlsplit(url).port
        except ValueError:
            port = 0  # not a number, or out of range: not repeated, it may be a password's
        if port == 0:
            raise ValueError(f"the port must be a number from 1 to 65535{_ENCODED}")
        path = urlsplit(url).path
        if path.strip("/") and not path.strip("/").isdigit():
            raise ValueError(f"the path must be a database number such as /0{_ENCODED}")
    options = parse_url(_plain_url(url))  # the database and the ?options
    if cluster:
        if scheme == "unix":
            raise ValueError("a Redis Cluster is not reached over a unix socket")
        if options.get("db"):
            raise ValueError(f"a Redis Cluster has database 0 only, not {options['db']}")
    cls = options.pop("connection_class", Connection)
    try:
        cls(**{**_OPTIONS, **options})
    except TypeError as exc:  # an ?option that no connection takes
        unknown = re.search(r"argument '(\w+)'", str(exc))
        raise ValueError(f"no Redis connection takes the option "
                         f"{unknown[1] if unknown else exc!r}") from None


def user_of(url: str) -> str:
    """The Redis user that ``url`` logs in as (``default`` when it names none)."""
    parts = urlsplit(url)
    if parts.username:
        return unquote(parts.username)
    for name, _, value in (p.partition("=") for p in parts.query.split("&")):
        if name == "username" and value:
            return unquote(value)
    return "default"


def connect(url: str, *, cluster: bool = False) -> Redis:
    if cluster:
        return RedisCluster.from_url(_plain_url(url), **_CLUSTER_OPTIONS)
    if url.startswith(SENTINEL_SCHEME):
        return _primary(url, retry=Retry(NoBackoff(), 1), **_OPTIONS)
    # One quick retry covers a connection the server closed while idle; more would only
    # stretch an outage into a slow answer.
    return aioredis.Redis.from_url(url, retry=Retry(NoBackoff(), 1), **_OPTIONS)


# A pub/sub connection waits for messages as long as it takes, and pings by itself when
# idle. It does not retry either: a connection that failed may have missed messages, and
# its subscribers must hear of it.
_PUBSUB_OPTIONS: dict[str, Any] = {
    **_OPTIONS,
    "socket_timeout": None,
    "health_check_interval": 0,
    "retry": Retry(NoBackoff(), 0),
}


def connect_pubsub(url: str, *, cluster: bool = False) -> aioredis.Redis:
    """A plain connection for pub/sub. On a cluster, a message published on any node
    reaches subscribers on every node, so the node in the URL serves."""
    options = _PUBSUB_OPTIONS
    if url.startswith(SENTINEL_SCHEME):
        return _primary(url, **options)
    return aioredis.Redis.from_url(_plain_url(url) if cluster else url, **options)


def connect_node(url: str, host: str, port: int) -> aioredis.Redis:
    """A plain connection for pub/sub to one node of the cluster that ``url`` names, with
    the URL's credentials and TLS."""
    options = {**parse_url(_plain_url(url)), **_PUBSUB_OPTIONS, "host": host, "port": port}
    return aioredis.Redis.from_pool(ConnectionPool(**options))
