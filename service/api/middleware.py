"""Pure ASGI middleware giving every request an id, one log line and its metrics."""

from __future__ import annotations

import functools
import itertools
import logging
import re
import secrets
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import metrics
from ..logs import request_id
from .requests import client_address

log = logging.getLogger("service.access")

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path in (None, ""):
        return "static" if route is not None else "unmatched"
    return str(path)


_PREFIX = secrets.token_hex(4)
_counter = itertools.count()


def _new_id() -> str:
    """16 hex digits: this process's random prefix, then a counter (cheaper than fresh
    randomness on every request, and still unique across processes)."""
    return f"{_PREFIX}{next(_counter) & 0xFFFFFFFF:08x}"


@functools.lru_cache(maxsize=512)
def _series(route: str, method: str, status: int) -> tuple[Any, Any]:
    """The metric children of one kind of request, looked up once: ``labels`` takes a lock."""
    return (
        metrics.REQUESTS.labels(route, method, str(status)),
        metrics.LATENCY.labels(route, method),
    )


class RequestContext:
    """Gives every request an id (the client's ``X-Request-ID`` when sensible),
    returns it as a header, logs the request and counts it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == b"x-request-id"), b"")
        text = given.decode("latin-1")
        rid = text if _REQUEST_ID.fullmatch(text) else _new_id()
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if scope["type"] == "http":
                elapsed = time.perf_counter() - started
                method = scope["method"]
                counted, timed = _series(_route(scope), method, status)
                counted.inc()
                timed.observe(elapsed)
                if log.isEnabledFor(logging.INFO):
                    log.info(
                        "%s %s %s", method, scope["path"], status,
                        extra={"status": status, "ms": round(elapsed * 1000, 2),
                               "client": client_address(scope)},
                    )
            request_id.reset(token)
