"""What can go wrong with the store, as exceptions the API turns into problems."""

from types import TracebackType

import redis.exceptions

from .. import metrics


class StoreError(Exception):
    pass


class StoreUnavailable(StoreError):
    """Redis cannot be reached or did not answer in time."""


class GameNotFound(StoreError):
    """No such game, or it expired."""


class RateLimited(StoreError):
    """A rate limit's bucket is empty: the request may be made again after ``wait_ms``."""

    def __init__(self, wait_ms: int) -> None:
        super().__init__(f"rate limited for {wait_ms} ms")
        self.wait_ms = wait_ms


_LOST = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
    OSError,
)
_FAILED = (redis.exceptions.RedisError, OSError)


def _closed_under(exc: BaseException) -> bool:
    """uvloop's RuntimeError for a command written on a connection that a dying node closed
    under it ("... the handler is closed"); any other RuntimeError is a bug."""
    return isinstance(exc, RuntimeError) and "handler is closed" in str(exc)


class redis_errors:  # named like a function: it is used as ``with redis_errors(): ...``
    """Count every failed Redis call, and turn a lost or silent Redis into
    :class:`StoreUnavailable`.

    A plain (not async, not generator-based) context manager: it wraps every Redis
    call on the move path, where each microsecond shows.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            return
        closed = _closed_under(exc)
        if not (closed or isinstance(exc, _FAILED)):
            return
        metrics.REDIS_ERRORS.inc()
        if closed or isinstance(exc, _LOST):
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
