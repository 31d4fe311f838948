"""What can go wrong with the store, as exceptions the API turns into problems."""

import logging
import re
import time
from types import TracebackType

import redis.exceptions

from .. import metrics


class StoreError(Exception):
    pass


class StoreUnavailable(StoreError):
    """Redis cannot be reached or did not answer in time, or refuses to write
    (``refused`` says why: a setting of Redis to fix, not an outage)."""

    def __init__(self, detail: str, refused: str | None = None) -> None:
        super().__init__(detail)
        self.refused = refused


class RefusedConnection(redis.exceptions.ConnectionError):
    """Redis refused to set up a connection as REDIS_URL asks (a database it does not
    have): a setting to fix, which no retry mends. Its text says why, for the operator."""


class GameNotFound(StoreError):
    """No such game, or it expired."""


class TooLate(StoreError):
    """A change reached Redis past the time it was allowed until (a match's move after
    the match's end has read its games)."""


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

# While Redis cannot be used, the same line would come twice a second: it is logged when it
# changes, then at most once a period.
REPEAT_LOG_SECONDS = 60.0


class Trouble:
    """What stops the service from using Redis, logged once when it starts or changes and
    then once a period while it lasts."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.problem: str | None = None
        self._log = logger or log
        self._said = ""
        self._next_at = 0.0
        self._held = 0

    def report(self, level: int, text: str, *, problem: bool = True) -> None:
        """``text`` happened; a ``problem`` is one the operator must fix (readiness says
        so), where otherwise Redis is only away for now."""
        self.problem = text if problem else None
        now = time.monotonic()
        if text == self._said and now < self._next_at:
            self._held += 1
            return
        if text == self._said and self._held:
            self._log.log(level, "%s (still, %d more tries since the last report)", text,
                          self._held)
        else:
            self._log.log(level, "%s", text)
        self._said, self._next_at, self._held = text, now + REPEAT_LOG_SECONDS, 0

    def clear(self) -> None:
        if self._said:
            self._log.info("Redis answers as configured again")
        self.problem, self._said, self._held = None, "", 0


# How Redis words a refusal for lack of permission: NOPERM replies, and the errors of a
# script whose command the user may not run.
_REFUSALS = ("NOPERM", "no permissions", "The user executing the script can't")
# The publish scripts' own refusal (routes.py), asked of Redis before writing: Redis does not
# say whether the command or the channel is missing.
SCRIPT_MAY_NOT_PUBLISH = "this user may not publish on"
PERMISSION_LOG_SECONDS = 60.0
_COMMAND = re.compile(r"run the '([a-z|]+)' command")


def missing_command(exc: BaseException) -> str | None:
    """The command (in lower case) that Redis refused to run for lack of permission, when
    it says so (None: it refused something else, or nothing)."""
    found = _COMMAND.search(str(exc)) if isinstance(exc, redis.exceptions.ResponseError) else None
    return found.group(1) if found is not None else None


def missing_permission(exc: BaseException) -> str | None:
    """The permission whose lack made Redis refuse with ``exc`` (None: not a refusal),
    with the ACL rule that grants it: a command, or the service's channels or keys."""
    if not isinstance(exc, redis.exceptions.ResponseError):
        return None
    text = str(exc)
    if not (isinstance(exc, redis.exceptions.NoPermissionError)
            or any(refusal in text for refusal in _REFUSALS)):
        return None
    command = _COMMAND.search(text)
    if command is not None:
        name = command.group(1)
        return f"the {name.upper()} command (ACL: +{name})"
    if SCRIPT_MAY_NOT_PUBLISH in text:
        return ("publishing on the service's pub/sub channels (ACL: the PUBLISH and SPUBLISH "
                "commands, +publish +spublish, and the channels, &ms:* or allchannels)")
    if "channel" in text:
        return "the service's pub/sub channels (ACL: &ms:* or allchannels)"
    if "key" in text:
        return "the service's keys (ACL: ~ms:* or allkeys)"
    return "a command the service runs (ACL: +@all -@dangerous +hello)"


def refused_write(exc: BaseException) -> str | None:
    """Why Redis refuses to write at all, when ``exc`` says it does (None: it does not):
    full under ``noeviction``, unable to save to disk, or a read-only replica. Redis 7
    answers a script with the error itself, Redis 6 wraps it in the script's error."""
    if not isinstance(exc, redis.exceptions.ResponseError):
        return None
    text = str(exc)
    if isinstance(exc, redis.exceptions.OutOfMemoryError) or "-OOM " in text:
        return ("Redis is out of memory (maxmemory reached; under maxmemory-policy noeviction "
                "it refuses writes): raise maxmemory or free memory")
    if text.startswith("MISCONF") or "-MISCONF " in text:
        return ("Redis refuses writes because it could not save to disk (MISCONF, "
                "stop-writes-on-bgsave-error): see Redis's log for why its save failed")
    if isinstance(exc, redis.exceptions.ReadOnlyError) or "-READONLY " in text:
        return ("Redis refuses writes: it is a read-only replica (READONLY); REDIS_URL must "
                "name the primary, or Sentinel or the cluster must fail over")
    return None


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
# Writes refused by a Redis that cannot take them: the reason, once a period.
writes_refused = Trouble()
# Connections Redis refuses to set up: the reason, once a period.
connections_refused = Trouble()


# While Redis is away every request fails the same way, thousands a second under load: one
# line says so, then at most one a period, with how many failures it stands for.
OUTAGE_LOG_SECONDS = 10.0


class Outage:
    """Requests failing for want of the store: the first failure is logged, then at most
    one line a period with how many failed since the last. Once Redis answers again and
    no request has failed for a period, one line says the store is available again, with
    the failures not yet reported, and the next failure starts a new outage."""

    def __init__(self, logger: logging.Logger) -> None:
        self.failing = False
        self._log = logger
        self._next_at = 0.0
        self._failed_at = 0.0
        self._held = 0

    def report(self, exc: Exception) -> None:
        now = time.monotonic()
        self.failing, self._failed_at = True, now
        if now < self._next_at:
            self._held += 1
            return
        if self._held:
            self._log.warning("store unavailable: %s (and %d more failed requests since the "
                              "last report)", exc, self._held)
        else:
            self._log.warning("store unavailable: %s", exc)
        self._next_at, self._held = now + OUTAGE_LOG_SECONDS, 0

    def answered(self) -> None:
        """Redis answered a call: the outage is over once no request failed for a period."""
        if time.monotonic() - self._failed_at < OUTAGE_LOG_SECONDS:
            return
        if self._held:
            self._log.info("store available again (and %d more failed requests since the "
                           "last report)", self._held)
        else:
            self._log.info("store available again")
        self.failing, self._next_at, self._held = False, 0.0, 0


# The requests' outage, said by the problems they get (api/problems.py, whose logger it is).
outage = Outage(logging.getLogger("service.api.problems"))


class redis_errors:  # named like a function: it is used as ``with redis_errors(): ...``
    """Count every failed Redis call, and turn a lost or silent Redis, one that refuses
    writes or the service's user, into :class:`StoreUnavailable`.

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
            if outage.failing:
                outage.answered()
            return
        lost = isinstance(exc, _LOST) or _closed_under(exc)
        if not (lost or isinstance(exc, _FAILED)):
            return
        metrics.REDIS_ERRORS.inc()
        refused = refused_write(exc)
        if refused is not None:
            writes_refused.report(logging.ERROR, refused)
            raise StoreUnavailable(refused, refused) from exc
        if isinstance(exc, RefusedConnection):
            connections_refused.report(logging.ERROR, str(exc))
            raise StoreUnavailable(str(exc), str(exc)) from exc
        if lost:
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc
        missing = missing_permission(exc)
        if missing is not None:
            _refusals.report(missing, exc)
            raise StoreUnavailable(f"Redis refused for lack of permission: {missing}") from exc
