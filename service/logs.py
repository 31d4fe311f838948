"""JSON log lines, each carrying the id of the request it belongs to, and the access
log: one such line per request, written in batches.

Nothing secret is ever passed to a logger: tokens stay in headers that are not
logged, and seeds and mines stay inside the snapshot.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import json
import logging
import sys
import time

import msgspec

from .wire import timestamp

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}
# uvicorn's copy of a message with ANSI colour codes, for a terminal: not for a JSON log.
_DROPPED = frozenset({"color_message"})


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            line["request_id"] = rid
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in _DROPPED and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


# What uvicorn and the websockets library say at info of every WebSocket, on uvicorn's
# logger: its handshake (with the raw peer address, whatever FORWARDED_ALLOW_IPS says, and
# the query string), its opening and closing. The service's own access line says all of it
# once, when the socket ends (``AccessLog.record_socket``).
_SOCKET_CHATTER = frozenset({
    '%s - "WebSocket %s" [accepted]',
    '%s - "WebSocket %s" 403',
    '%s - "WebSocket %s" %d',
    "connection open",
    "connection closed",
    "connection rejected (%d %s)",
})


class SocketChatter(logging.Filter):
    """Drops uvicorn's info lines about each WebSocket; its warnings and errors pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and record.name.startswith("uvicorn")
                    and record.msg in _SOCKET_CHATTER)


def config(level: str) -> dict[str, object]:
    """A ``logging.config.dictConfig`` for the service and uvicorn alike."""
    handler = {"class": "logging.StreamHandler", "formatter": "json",
               "stream": "ext://sys.stderr", "filters": ["sockets"]}
    # The WebSocket protocol logs every frame at debug, a player's auth message (its
    # token) among them: those loggers stay at info whatever the level.
    framed = max(logging.getLevelName(level.upper()), logging.INFO)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "filters": {"sockets": {"()": SocketChatter}},
        "handlers": {"default": handler},
        "root": {"handlers": ["default"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": framed},
            "websockets": {"level": framed},
            # Requests are logged once, by the service's access log, with their id.
            "uvicorn.access": {"handlers": [], "propagate": False},
        },
    }


class AccessLine(msgspec.Struct):
    """An access log line: the fields of any other line, and the request's own."""

    time: str
    level: str
    logger: str
    message: str
    request_id: str
    status: int
    ms: float
    client: str


class SocketLine(AccessLine):
    """A WebSocket's access log line, written when it closed: the fields of a request's,
    and the route (a template, without ids), the close code, who closed it (``server``
    or ``client``) and the server's reason."""

    route: str
    code: int
    closed_by: str
    reason: str


ACCESS_LOGGER = "service.access"
# A batch waits this long for more lines: a busy server writes a few a second, not
# one per request, and a quiet one still shows each line at once to a person.
BATCH_SECONDS = 0.02


class AccessLog:
    """One JSON line per request on stderr, when the ``service.access`` logger is at info.

    Going through ``logging`` costs a request about as much as its own work does, so
    the lines are encoded straight from a Struct and written a batch at a time. None is
    dropped: a batch is written a moment after its first line, and whatever is left
    when the process stops is written then.
    """

    def __init__(self) -> None:
        self.enabled = logging.getLogger(ACCESS_LOGGER).isEnabledFor(logging.INFO)
        self._lines: list[bytes] = []
        self._encode = msgspec.json.Encoder().encode
        if self.enabled:
            atexit.register(self.flush)

    def record(
        self, method: str, path: str, status: int, seconds: float, client: str, rid: str
    ) -> None:
        if not self._lines:
            asyncio.get_running_loop().call_later(BATCH_SECONDS, self.flush)
        now = time.time_ns() // 1_000_000
        self._lines.append(self._encode(AccessLine(
            time=timestamp(now), level="info", logger=ACCESS_LOGGER,
            message=f"{method} {path} {status}", request_id=rid, status=status,
            ms=round(seconds * 1000, 2), client=client,
        )))
        self._lines.append(b"\n")

    def record_socket(
        self, route: str, status: int, code: int, reason: str, closed_by: str,
        seconds: float, client: str, rid: str,
    ) -> None:
        """A socket's line, as it closed: ``status`` 101 when it was accepted, 403 when
        it was refused."""
        self._add(SocketLine(
            time=timestamp(time.time_ns() // 1_000_000), level="info", logger=ACCESS_LOGGER,
            message=f"WEBSOCKET {route} {code}", request_id=rid, status=status,
            ms=round(seconds * 1000, 2), client=client, route=route, code=code,
            closed_by=closed_by or "client", reason=reason,
        ))

    def _add(self, line: AccessLine | SocketLine) -> None:
        if not self._lines:
            asyncio.get_running_loop().call_later(BATCH_SECONDS, self.flush)
        self._lines.append(self._encode(line))
        self._lines.append(b"\n")

    def flush(self) -> None:
        if not self._lines:
            return
        data = b"".join(self._lines)
        self._lines.clear()
        stream = sys.stderr
        stream.flush()  # what ``logging`` wrote before goes first
        binary = getattr(stream, "buffer", None)
        if binary is None:
            stream.write(data.decode())
        else:
            binary.write(data)
            binary.flush()
