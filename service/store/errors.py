"""What can go wrong with the store, as exceptions the API turns into problems."""

import logging
import time
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


# What a lost or failing-over Redis raises: a cluster mid-failover answers with its own
# errors (no primary for a slot yet, try again, too many redirections) until a replica
# takes over, and a demoted primary refuses writes.
_LOST = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterError,
    redis.exceptions.SlotNotCoveredError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ReadOnlyError,
    # No node of the cluster answers, or the Redis named is not a cluster node at all
    # (what the routing's start-up logs say): not a RedisError.
    redis.exceptions.RedisClusterException,
    OSError,
)
_FAILED = (redis.exceptions.RedisError, OSError)


def _closed_under(exc: BaseException) -> bool:
    """A command written on a connection that a dying node's teardown closed under it:
    uvloop's RuntimeError ("... the handler is closed"), or redis-py's AttributeError when
    the connection's writer was dropped between its check and its write (a cluster client
    disconnects every connection of a node it gives up on, those in use too). Any other
    RuntimeError or AttributeError is a bug."""
    if isinstance(exc, RuntimeError):
        return "handler is closed" in str(exc)
    return isinstance(exc, AttributeError) and exc.obj is None and _raised_in_redis(exc)


def _raised_in_redis(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module: str = tb.tb_frame.f_globals.get("__name__", "")
    return module.startswith("redis.")


log = logging.getLogger(__name__)

# How Redis words a refusal for lack of permission: NOPERM replies, and the errors of a
# script whose command the user may not run.
_REFUSALS = ("NOPERM", "no permissions", "The user executing the script can't")
PERMISSION_LOG_SECONDS = 60.0


def missing_permission(exc: BaseException) -> str | None:
    """The permission whose lack made Redis refuse with ``exc`` (None: not a refusal)."""
    if not isinstance(exc, redis.exceptions.ResponseError):
        return None
    text = str(exc)
    if not (isinstance(exc, redis.exceptions.NoPermissionError)
            or any(refusal in text for refusal in _REFUSALS)):
        return None
    if "channel" in text or "publish" in text:
        return "publishing on the service's pub/sub channels (ACL: &ms:* or allchannels)"
    if "key" in text:
        return "the service's keys (ACL: ~ms:* or allkeys)"
    return "a command the service runs (ACL: +@all -@dangerous +hello)"


class _Refusals:
    """Logs a refusal when it is new, then at most once a period."""

    def __init__(self) -> None:
        self.next_at: dict[str, float] = {}

    def report(self, missing: str, exc: BaseException) -> None:
        now = time.monotonic()
        if now >= self.next_at.get(missing, 0.0):
            self.next_at[missing] = now + PERMISSION_LOG_SECONDS
            log.error("Redis refused the service for lack of a permission: its user needs %s "
                      "(Redis said: %s)", missing, exc)


_refusals = _Refusals()


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
        lost = isinstance(exc, _LOST) or _closed_under(exc)
        if not (lost or isinstance(exc, _FAILED)):
            return
        metrics.REDIS_ERRORS.inc()
        if lost:
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
        missing = missing_permission(exc)
        if missing is not None:
            _refusals.report(missing, exc)
            raise StoreUnavailable(f"Redis refused for lack of permission: {missing}") from exc
