"""The one ASGI layer in front of the routes: what every request goes through.

It believes ``X-Forwarded-For`` and ``X-Forwarded-Proto`` from trusted proxies only,
gives the request an id (the client's ``X-Request-ID`` when sensible) and returns it
as a header, admits the request against its client's rate limits and charges its
failures, turns whatever a handler raised into a problem, and counts and logs the
request. One layer rather than a stack of them: each layer costs a request a few
coroutine frames and a wrapped ``send``, and a move is short enough for that to show.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import secrets
import time
from typing import Any

from starlette.exceptions import WebSocketException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import metrics
from ..logs import AccessLog, request_id
from . import backends, problems
from .ratelimit import FAILURES, GUARDED, admitted_here
from .requests import client_address

log = logging.getLogger(__name__)

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_SCHEMES = {"http", "https", "ws", "wss"}
_HANDLERS: dict[Any, Any] = dict.fromkeys(problems.HANDLED, problems.handle)


def _new_id() -> str:
    """16 random hex digits. Not a counter: ids one player sees would then tell how
    many requests others made in between (a rival's moves in a race, say)."""
    return secrets.token_hex(8)


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path in (None, ""):
        return "static" if route is not None else "unmatched"
    return str(path)


@functools.lru_cache(maxsize=512)
def _series(route: str, method: str, status: int) -> tuple[Any, Any]:
    """The metric children of one kind of request, looked up once: ``labels`` takes a lock."""
    return (
        metrics.REQUESTS.labels(route, method, str(status)),
        metrics.LATENCY.labels(route, method),
    )


class Proxies:
    """The peers whose forwarding headers are believed (``FORWARDED_ALLOW_IPS``)."""

    def __init__(self, networks: list[str]) -> None:
        self.networks = [ipaddress.ip_network(n) for n in networks]
        self.trusted = functools.lru_cache(maxsize=4096)(self._trusted)

    def _trusted(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client(self, forwarded_for: str) -> str:
        """The address a chain of proxies names: the last one not a trusted proxy."""
        hosts = [h.strip() for h in forwarded_for.split(",")]
        for host in reversed(hosts):
            if host and not self.trusted(_without_port(host)):
                return _without_port(host)
        return _without_port(hosts[0])

    def apply(self, scope: Scope) -> None:
        """Put the forwarded client and scheme in ``scope`` when a trusted proxy sent them."""
        peer = scope.get("client")
        if not peer or not self.trusted(peer[0]):
            return
        proto = None
        forwarded = []
        for name, value in scope["headers"]:
            if name == b"x-forwarded-proto":
                proto = value.decode("latin-1").strip()
            elif name == b"x-forwarded-for":
                forwarded.append(value.decode("latin-1"))
        if proto in _SCHEMES:
            scope["scheme"] = proto.replace("http", "ws") if scope["type"] == "websocket" else proto
        if forwarded:
            host = self.client(", ".join(forwarded))
            if host:
                scope["client"] = (host, 0)


def _without_port(host: str) -> str:
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        return host.partition(":")[0]
    return host


class Edge:
    def __init__(self, app: ASGIApp, proxies: Proxies, access: AccessLog) -> None:
        self.app = app
        self.proxies = proxies
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self.app(scope, receive, send)
            return
        self.proxies.apply(scope)
        given = next((v for k, v in scope["headers"] if k == b"x-request-id"), b"")
        text = given.decode("latin-1")
        rid = text if _REQUEST_ID.fullmatch(text) else _new_id()
        token = request_id.set(rid)
        # Handlers raise; the routes turn what they raise into problems with these.
        scope["starlette.exception_handlers"] = (_HANDLERS, {})
        try:
            if kind == "http":
                await self._http(scope, receive, send, rid)
            else:
                await self._websocket(scope, receive, send, rid)
        finally:
            request_id.reset(token)

    async def _http(self, scope: Scope, receive: Receive, send: Send, rid: str) -> None:
        started = time.perf_counter()
        status = 0
        header = (b"x-request-id", rid.encode())

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), header]
            await send(message)

        path = scope["path"]
        address = client_address(scope)
        rate_limits = backends.of_scope(scope).rate_limits
        limited = rate_limits.limits.any
        try:
            if limited and not admitted_here(path):
                await rate_limits.admit(address)
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            if status:
                raise  # the answer is on its way: nothing left to tell the client
            await _problem(scope, exc)(scope, receive, send_with_id)
        if limited and status in FAILURES and path.startswith(GUARDED):
            await rate_limits.charge_failure(address)
        elapsed = time.perf_counter() - started
        method = scope["method"]
        counted, timed = _series(_route(scope), method, status)
        counted.inc()
        timed.observe(elapsed)
        if self.access.enabled:
            self.access.record(method, path, status, elapsed, address, rid)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send, rid: str) -> None:
        """Runs the socket, and logs it once it is over: an access line (how it closed,
        and after how long), and an info line when the service closed or refused it for
        a reason of its own."""
        started = time.perf_counter()
        end = _Ending()

        async def watched_send(message: Message) -> None:
            end.sent(message)
            await send(message)

        async def watched_receive() -> Message:
            message = await receive()
            end.received(message)
            return message

        try:
            await self.app(scope, watched_receive, watched_send)
        except WebSocketException as exc:
            await watched_send({"type": "websocket.close", "code": exc.code,
                                "reason": exc.reason or ""})
        except BaseException:
            end.failed()
            raise
        finally:
            self._socket_closed(scope, end, time.perf_counter() - started, rid)

    def _socket_closed(self, scope: Scope, end: _Ending, seconds: float, rid: str) -> None:
        route = _route(scope)
        address = client_address(scope)
        status = 101 if end.accepted else 403
        code = end.code if end.code is not None else 1006
        if end.by == "server" and (code in _SAID_CODES or not end.accepted):
            if end.accepted:
                log.info("closed a socket with %d: %s", code, end.reason,
                         extra={"route": route, "client": address, "code": code})
            else:
                log.info("refused a socket: %s", end.reason or code,
                         extra={"route": route, "client": address, "code": code})
        if self.access.enabled:
            self.access.record_socket(route, status, code, end.reason, end.by, seconds,
                                      address, rid)


# Closes the service makes for a reason of its own (a policy, a frame too big, the client
# too slow or the store away, not found), each said in an info line.
_SAID_CODES = frozenset({1008, 1009, 1013, 4404})
# Closes by the server's WebSocket layer that the app learns of as a disconnect: a frame
# too big (1009), text that is not UTF-8 (1007), a protocol error (1002), a shutdown (1012).
_LAYER_CLOSES = {1002: "protocol error", 1007: "invalid UTF-8", 1009: "message too big",
                 1012: "server restart"}


class _Ending:
    """How a socket ended, as its messages tell: who closed it, with what code and
    reason. A client's own reason is not kept: it is the client's text."""

    __slots__ = ("accepted", "by", "code", "reason")

    def __init__(self) -> None:
        self.accepted = False
        self.code: int | None = None
        self.reason = ""
        self.by = ""

    def sent(self, message: Message) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            self.accepted = True
        elif kind in ("websocket.close", "websocket.http.response.start") and not self.by:
            self.by = "server"
            self.code = int(message.get("code", 1000))
            self.reason = str(message.get("reason") or "")

    def received(self, message: Message) -> None:
        if message["type"] != "websocket.disconnect" or self.by:
            return
        self.code = int(message.get("code", 1005))
        layer = _LAYER_CLOSES.get(self.code)
        self.by = "server" if layer else "client"
        self.reason = layer or ""

    def failed(self) -> None:
        if not self.by:
            self.by, self.code, self.reason = "server", 1011, "internal error"


def _problem(scope: Scope, exc: Exception) -> ASGIApp:
    """The answer to an exception no route handled: a problem, a 500 for a bug."""
    try:
        return problems.respond(problems.api_error_of(exc))
    except Exception:
        log.exception("unhandled error on %s %s", scope["method"], scope["path"], exc_info=exc)
        return problems.respond(
            problems.ApiError(500, "internal_error", "the server failed; the game is unchanged")
        )
