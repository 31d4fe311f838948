"""What every WebSocket of the service shares: sending one message at a time, a keeper
that sends heartbeats and ends a socket whose send hangs, a bound on what a client may
send, the rate limits and the failed-auth budget, a cap on the sockets of one address,
and closing cleanly. The game socket (``events.py``), the match socket
(``match_events.py``) and the player socket (``player_events.py``) are built on it; the
first two are feeds of a channel, resumable with ``?since``."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import metrics, wire
from ..store import Message, Resync, Subscription
from .backends import Backends
from .problems import ApiError, api_error_of, problem
from .requests import client_address

log = logging.getLogger(__name__)

SEND_TIMEOUT = 5.0
CLOSE_TIMEOUT = 2.0
# How long a stopped task has to end before it is cancelled again.
CANCEL_AGAIN_SECONDS = 0.2
# Close codes: 1013 "try again later" for a consumer that fell behind or a store away.
TRY_AGAIN_LATER = 1013
POLICY_VIOLATION = 1008
NOT_FOUND = 4404
# The close code after an ``error`` with these codes (1008 after any other).
_CLOSE_CODES = {"not_found": NOT_FOUND, "store_unavailable": TRY_AGAIN_LATER}
MESSAGE_RATE = 20.0
MESSAGE_BURST = 40.0

M = TypeVar("M")

# Open sockets per client address in this process.
_open: collections.Counter[str] = collections.Counter()


class TooSlow(Exception):
    """The client fell behind: its queue filled, or it did not take a message in time."""


class Flooding(Exception):
    """The client sent messages faster than a socket may."""


def as_text(value: Any) -> str:
    return wire.json_encoder.encode(value).decode()


class Socket:
    """One client's socket: what it may send, and sending to it one message at a time."""

    def __init__(self, ws: WebSocket, b: Backends) -> None:
        self.ws = ws
        self.backends = b
        self.address = client_address(ws.scope)
        self._allowance = MESSAGE_BURST
        self._allowance_at = time.monotonic()
        self._send_lock = asyncio.Lock()
        # When the last send started, and whether it is still under way.
        self._sent_at = time.monotonic()
        self._sending = False
        # Set once the socket's first message (its snapshot, replay or view) is out.
        self.live = asyncio.Event()

    async def send(self, text: str) -> None:
        """Sends in turn with the socket's other sends. No timer guards each send, as one
        per message would cost a thousand subscribers more than the message:
        :meth:`keep_alive` watches for a send that hangs."""
        async with self._send_lock:
            self._sent_at = time.monotonic()
            self._sending = True
            await self.ws.send_text(text)
            self._sending = False

    async def send_within(self, text: str, seconds: float = SEND_TIMEOUT) -> None:
        try:
            async with asyncio.timeout(seconds):
                await self.send(text)
        except TimeoutError:
            raise TooSlow from None

    def heartbeat(self) -> str:
        """The message that says the socket is alive while nothing else is sent."""
        raise NotImplementedError

    async def keep_alive(self) -> None:
        """A heartbeat after ``heartbeat_seconds`` of quiet, once the socket is :attr:`live`;
        :class:`TooSlow` when a send has not finished within ``SEND_TIMEOUT``."""
        quiet = self.backends.config.heartbeat_seconds
        while True:
            now = time.monotonic()
            if self._sending:
                if now - self._sent_at > SEND_TIMEOUT:
                    raise TooSlow
                wait = self._sent_at + SEND_TIMEOUT - now + 0.01
            elif not self.live.is_set():
                # Quiet is counted from the catch-up's end: wake as it ends, not later.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.live.wait(), SEND_TIMEOUT)
                continue
            elif now - self._sent_at >= quiet:
                await self.send_within(self.heartbeat())
                continue
            else:
                wait = self._sent_at + quiet - now
            await asyncio.sleep(wait)

    async def next_event(self, sub: Subscription[Any]) -> Message[Any] | Resync:
        """The next message published for this socket (or the word to catch up)."""
        # A full queue is what sets the flag, so checking it between messages is enough.
        if sub.overflowed.is_set():
            raise TooSlow
        return await sub.queue.get()

    def flooding(self) -> bool:
        """A per-socket token bucket: a client may send bursts, not floods."""
        now = time.monotonic()
        self._allowance = min(
            MESSAGE_BURST, self._allowance + (now - self._allowance_at) * MESSAGE_RATE
        )
        self._allowance_at = now
        if self._allowance < 1:
            return True
        self._allowance -= 1
        return False

    async def receive_text(self) -> str | bytes:
        """The next message the client sent (a binary frame is judged like a text one)."""
        frame = await self.ws.receive()
        if frame["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(frame.get("code", 1000), frame.get("reason"))
        if self.flooding():
            raise Flooding
        text: str | bytes = frame.get("text") or frame.get("bytes") or b""
        return text

    async def answer(
        self, decoder: msgspec.json.Decoder[M], handle: Callable[[M], Awaitable[None]]
    ) -> None:
        """Handle what the client sends, once its first message is out; a message that
        is refused is answered with an ``error`` carrying the message's ``id``, and the
        socket stays open."""
        await self.live.wait()
        while True:
            text = await self.receive_text()
            message = None
            try:
                message = wire.decode(decoder, text)
                await handle(message)
            except Exception as exc:
                err = api_error_of(exc)
                request_id = getattr(message, "id", None)
                out = wire.Error(id=request_id, problem=problem(err.status, err.code, err.detail))
                await self.send(as_text(out))

    async def admit(self) -> None:
        """Take what any HTTP request from this address takes: a socket is no way around
        the rate limits, nor around the budget for failed tokens and unknown ids."""
        await self.backends.rate_limits.admit(self.address)

    async def charge_failure(self) -> None:
        await self.backends.rate_limits.charge_failure(self.address)


@contextlib.asynccontextmanager
async def counted(ws: WebSocket, b: Backends) -> AsyncIterator[bool]:
    """Counts the socket against its address's cap while it is open; yields False (and
    the socket is refused) when the address has too many open already."""
    address = client_address(ws.scope)
    if _open[address] >= b.config.max_sockets_per_client:
        await ws.close(POLICY_VIOLATION, "too many open sockets")
        yield False
        return
    _open[address] += 1
    metrics.SUBSCRIBERS.inc()
    try:
        yield True
    finally:
        _open[address] -= 1
        if not _open[address]:
            del _open[address]
        metrics.SUBSCRIBERS.dec()


@contextlib.asynccontextmanager
async def served(socket: Socket, too_slow: str) -> AsyncIterator[None]:
    """Runs a socket's session, and closes the socket as the session ended: a client
    that left needs nothing, one that fell behind gets 1013 (``too_slow`` says what to
    do), a flood 1008, a refusal its ``error`` then 4404 (not found), 1013 (the store is
    unavailable: try again later) or 1008, a bug 1011.
    The socket is closed here, once the session's tasks have stopped, so nothing is sent
    after the close."""
    ws = socket.ws
    try:
        yield
    except WebSocketDisconnect:
        return
    except TooSlow:
        metrics.DROPPED.inc()
        await close(ws, TRY_AGAIN_LATER, too_slow)
    except Flooding:
        await close(ws, POLICY_VIOLATION, "too many messages")
    except Exception as exc:
        try:
            err = api_error_of(exc)
        except Exception:
            log.exception("live session failed")
            with contextlib.suppress(Exception):
                await ws.close(1011)
            return
        if err.code == "not_found":
            await socket.charge_failure()
        out = wire.Error(id=err.request_id, problem=problem(err.status, err.code, err.detail))
        with contextlib.suppress(Exception):
            await socket.send_within(as_text(out))
            await ws.close(_CLOSE_CODES.get(err.code, POLICY_VIOLATION), err.code)


class Feed(Socket):
    """A socket that forwards a channel's messages (a game's diffs, a match's updates)
    from ``since`` on, and answers what its client sends."""

    #: The last version the client was sent.
    version = 0

    async def forward(self, sub: Subscription[Any], since: int | None) -> None:
        raise NotImplementedError

    async def receive(self) -> None:
        raise NotImplementedError

    async def catch_up(self, since: int | None) -> None:
        """Send what came after ``since`` (from the stream, or a fresh snapshot)."""
        raise NotImplementedError

    async def deliver(self, text: str, head: Any) -> None:
        """Send one live message (``head`` is what the feed read of it), if it is news."""
        raise NotImplementedError

    async def relay(self, sub: Subscription[Any]) -> None:
        """The live messages, in version order: a gap in the versions, or the word that
        messages were missed, is filled from the stream first."""
        while True:
            item = await self.next_event(sub)
            if isinstance(item, Resync):
                await self.catch_up(self.version)
                continue
            version = item.head.version
            if version is not None and version > self.version + 1:
                await self.catch_up(self.version)
            await self.deliver(item.text, item.head)


async def serve_feed(feed: Feed, channel: str, head: Callable[[bytes], Any]) -> None:
    """Accept the socket, admit it, subscribe to ``channel`` (its messages read with
    ``head``) and run the feed's forwarding, answering and heartbeats until one ends."""
    ws = feed.ws
    await ws.accept()
    async with served(feed, "too slow: reconnect with ?since"):
        await feed.admit()
        since = since_of(ws.query_params.get("since"))
        async with feed.backends.events.subscribe(channel, head) as sub:
            await until_one_ends(feed.forward(sub, since), feed.receive(), feed.keep_alive())


def since_of(raw: str | None) -> int | None:
    """The version in a socket's ``?since=``, if given."""
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise ApiError(422, "invalid_request", "since takes a version number")
    return int(raw)


async def until_one_ends(*work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` until one of them ends; raise what it raised (a client that left
    is no error), and stop the others."""
    tasks = [asyncio.create_task(w) for w in work]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            exc = task.exception()
            if exc is not None and not isinstance(exc, WebSocketDisconnect):
                raise exc
    finally:
        await _stop(tasks)


async def _stop(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` until every one is over. Once is not always enough: a
    cancellation that lands as a Redis call's answer arrives is lost inside the call
    (Python 3.11's ``asyncio.wait_for`` returns the answer instead), and a task that
    loops on Redis calls would go on for ever, its socket's subscription with it."""
    pending = {t for t in tasks if not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=CANCEL_AGAIN_SECONDS)
    for task in tasks:
        if not task.cancelled():
            task.exception()  # retrieved: what a stopped task raised is nobody's news


async def close(ws: WebSocket, code: int, reason: str) -> None:
    """Close, then read what the client still sends until its close arrives: a socket shut
    with unread data is reset, and the reset can overtake the close frame."""
    with contextlib.suppress(Exception):
        await ws.close(code, reason)
        async with asyncio.timeout(CLOSE_TIMEOUT):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass
