"""Pure ASGI middleware giving every request an id, one log line and its metrics."""

from __future__ import annotations

import logging
import re
import secrets
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import metrics
from ..logs import request_id

log = logging.getLogger("service.access")

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path in (None, ""):
        return "static" if route is not None else "unmatched"
    return str(path)


class RequestContext:
    """Gives every request an id (the client's ``X-Request-ID`` when sensible),
    returns it as a header, logs the request and counts it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        rid = given if _REQUEST_ID.fullmatch(given) else secrets.token_hex(8)
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
                route, method = _route(scope), scope["method"]
                metrics.REQUESTS.labels(route, method, str(status)).inc()
                metrics.LATENCY.labels(route, method).observe(elapsed)
                log.info(
                    "%s %s %s", method, scope["path"], status,
                    extra={"status": status, "ms": round(elapsed * 1000, 2),
                           "client": client_address(scope)},
                )
            request_id.reset(token)
