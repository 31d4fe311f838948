"""Connecting to Redis: a single server, a cluster, or a primary found through Sentinel,
with short timeouts so an outage turns into a quick 503 rather than a hanging request.

A Sentinel URL names the sentinels and the monitored primary:
``redis+sentinel://[[user]:password@]host:26379[,host:26379...]/primary-name[/db]``, whose
user and password are the primary's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import ConnectionPool, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff

CONNECT_TIMEOUT = 1.0
COMMAND_TIMEOUT = 2.0

__all__ = ["Redis", "RedisCluster", "connect", "connect_node", "connect_pubsub"]

Redis = aioredis.Redis | RedisCluster
_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": CONNECT_TIMEOUT,
    "socket_timeout": COMMAND_TIMEOUT,
    "health_check_interval": 15,
}


def _plain_url(url: str) -> str:
    return url.replace("redis+cluster://", "redis://", 1)


SENTINEL_SCHEME = "redis+sentinel://"


def _primary(url: str, **options: Any) -> aioredis.Redis:
    """The primary that the sentinels in ``url`` point at, followed across failovers."""
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2]
    sentinels = [
        (host, int(port or 26379))
        for host, _, port in (h.partition(":") for h in hosts.split(",") if h)
    ]
    path = [p for p in parts.path.split("/") if p]
    if not sentinels or not path:
        raise ValueError("a Sentinel URL is redis+sentinel://host:port[,host:port]/primary[/db]")
    password = unquote(parts.password) if parts.password else None
    username = unquote(parts.username) if parts.username else None
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        sentinels,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=COMMAND_TIMEOUT,
    )
    db = int(path[1]) if len(path) > 1 else 0
    primary: aioredis.Redis = sentinel.master_for(
        path[0], db=db, username=username, password=password, **options
    )
    return primary


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
        return RedisCluster.from_url(_plain_url(url), **_OPTIONS)
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
