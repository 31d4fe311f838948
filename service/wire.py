"""The service's side of the wire: every shape of :mod:`minesweeper.wire`, and how the
service writes them (RFC 3339 timestamps, one JSON encoder).

The shapes live in the SDK so that a client installs without the service; the service
takes them from here, so each is defined once and ``openapi.yaml`` and
``asyncapi.yaml`` are checked against exactly what the service sends.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime

import msgspec
from minesweeper.wire import *  # noqa: F403  (every shape, under the names the service uses)


@functools.lru_cache(maxsize=1024)
def _second(seconds: int) -> str:
    # A move formats several stamps of the same second: format each second once.
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def timestamp(ms: int) -> str:
    """RFC 3339 in UTC with millisecond precision."""
    seconds, millis = divmod(ms, 1000)
    return f"{_second(seconds)}.{millis:03d}Z"


def optional_timestamp(ms: int | None) -> str | None:
    return None if ms is None else timestamp(ms)


json_encoder = msgspec.json.Encoder()
