"""The service's side of the wire: every shape of :mod:`minesweeper.wire`, and how the
service reads and writes them (integral numbers, RFC 3339 timestamps, one JSON encoder).

The shapes live in the SDK so that a client installs without the service; the service
takes them from here, so each is defined once and ``openapi.yaml`` and
``asyncapi.yaml`` are checked against exactly what the service sends.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any, TypeVar

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


T = TypeVar("T")


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def decode(decoder: msgspec.json.Decoder[T], data: bytes | str) -> T:
    """``data`` decoded by ``decoder``, with ``1.0`` taken as the integer it is.

    JSON Schema counts a number with a zero fraction as an integer, and so do the
    documents; msgspec does not. Only a body msgspec refuses is read a second time, which
    also tells malformed JSON (``DecodeError``, a 400) from a body that is JSON but not
    the type (``ValidationError``, a 422) when a field failed before the parser reached
    the syntax error.
    """
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        value = _integral(msgspec.json.decode(data))
        converted: T = msgspec.convert(value, decoder.type)
        return converted


def milliseconds(stamp: str) -> int:
    """The time a :func:`timestamp` names, in ms since the epoch."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return int(moment.timestamp()) * 1000 + moment.microsecond // 1000


json_encoder = msgspec.json.Encoder()
