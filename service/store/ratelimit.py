"""Rate limits' token buckets in Redis, shared by every replica.

One script call (``take.lua``) checks and takes from several buckets at once (all
or none). A move's buckets are taken by the script that loads its game, in the
same round trip (see ``games.py``).
"""

from __future__ import annotations

import math

import msgspec

from .connection import Redis
from .errors import redis_errors
from .scripts import source

# The ``take`` function, which load.lua calls too.
TAKE_FUNCTION = source("take.lua")
TAKE_SCRIPT = TAKE_FUNCTION + "return take(KEYS, 1, ARGV, 1)\n"


class Limit(msgspec.Struct, frozen=True):
    """``rate`` tokens a second, up to ``burst`` saved."""

    rate: float
    burst: float

    @classmethod
    def per_second(cls, n: float) -> Limit:
        return cls(rate=n, burst=max(10.0, 2 * n))

    @classmethod
    def per_minute(cls, n: float) -> Limit:
        return cls(rate=n / 60, burst=n)


class Take(msgspec.Struct, frozen=True):
    """Take ``cost`` from the bucket at ``key`` if it holds at least ``need``."""

    key: str
    limit: Limit
    need: float = 1
    cost: float = 1


def take_args(takes: list[Take], now_ms: int) -> list[float | int]:
    args: list[float | int] = [now_ms]
    for t in takes:
        args += [t.limit.rate, t.limit.burst, t.need, t.cost]
    return args


class Buckets:
    def __init__(self, redis: Redis) -> None:
        self._take = redis.register_script(TAKE_SCRIPT)

    async def take(self, takes: list[Take], now_ms: int) -> int:
        """The wait in ms before ``takes`` (keys of one hash tag) can be had; 0: taken."""
        if not takes:
            return 0
        with redis_errors():
            return int(await self._take(keys=[t.key for t in takes], args=take_args(takes, now_ms)))


def retry_after(wait_ms: int) -> str:
    return str(max(1, math.ceil(wait_ms / 1000)))
