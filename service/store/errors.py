from types import TracebackType

import redis.exceptions


class StoreError(Exception):
    pass


class StoreUnavailable(StoreError):
    """Redis cannot be reached or did not answer in time."""


class GameNotFound(StoreError):
    """No such game, or it expired."""


_LOST = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
    OSError,
)


class redis_errors:  # named like a function: it is used as ``with redis_errors(): ...``
    """Turn a lost or silent Redis into :class:`StoreUnavailable`.

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
        if exc is not None and isinstance(exc, _LOST):
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
