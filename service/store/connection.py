"""Connecting to Redis: a single server or a cluster, with short timeouts so an
outage turns into a quick 503 rather than a hanging request."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.backoff import NoBackoff
from redis.retry import Retry

CONNECT_TIMEOUT = 1.0
COMMAND_TIMEOUT = 2.0

Redis = aioredis.Redis | RedisCluster


def connect(url: str, *, cluster: bool = False) -> Redis:
    options: dict[str, Any] = {
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_timeout": COMMAND_TIMEOUT,
        "health_check_interval": 15,
    }
    if cluster:
        return RedisCluster.from_url(url.replace("redis+cluster://", "redis://"), **options)
    # One quick retry covers a connection the server closed while idle; more would only
    # stretch an outage into a slow answer.
    return aioredis.Redis.from_url(url, retry=Retry(NoBackoff(), 1), **options)
