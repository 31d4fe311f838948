"""Connecting to Redis: a single server or a cluster, with short timeouts so an
outage turns into a quick 503 rather than a hanging request."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

CONNECT_TIMEOUT = 1.0
COMMAND_TIMEOUT = 2.0

__all__ = ["Redis", "RedisCluster", "connect", "connect_pubsub"]

Redis = aioredis.Redis | RedisCluster
_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": CONNECT_TIMEOUT,
    "socket_timeout": COMMAND_TIMEOUT,
    "health_check_interval": 15,
}


def _plain_url(url: str) -> str:
    return url.replace("redis+cluster://", "redis://", 1)


def connect(url: str, *, cluster: bool = False) -> Redis:
    if cluster:
        return RedisCluster.from_url(_plain_url(url), **_OPTIONS)
    # One quick retry covers a connection the server closed while idle; more would only
    # stretch an outage into a slow answer.
    return aioredis.Redis.from_url(url, retry=Retry(NoBackoff(), 1), **_OPTIONS)


def connect_pubsub(url: str, *, cluster: bool = False) -> aioredis.Redis:
    """A plain connection for pub/sub. On a cluster, a message published on any node
    reaches subscribers on every node, so the node in the URL serves."""
    options = {**_OPTIONS, "socket_timeout": None}
    return aioredis.Redis.from_url(_plain_url(url) if cluster else url, **options)
