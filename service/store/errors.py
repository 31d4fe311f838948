from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.exceptions


class StoreError(Exception):
    pass


class StoreUnavailable(StoreError):
    """Redis cannot be reached or did not answer in time."""


class GameNotFound(StoreError):
    """No such game, or it expired."""


@asynccontextmanager
async def redis_errors() -> AsyncIterator[None]:
    """Turn a lost or silent Redis into :class:`StoreUnavailable`."""
    try:
        yield
    except (
        redis.exceptions.ConnectionError,
        redis.exceptions.TimeoutError,
        redis.exceptions.ClusterDownError,
        OSError,
    ) as exc:
        raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
