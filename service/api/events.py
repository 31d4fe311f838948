"""``GET /games/{id}/events``: a snapshot, then every diff in version order, and the
moves a player sends over the same socket.

Subscribing comes first and is confirmed before the stream or the snapshot is
read, so a diff committed in between arrives twice at worst (and is dropped by
version), never not at all. A gap in versions is filled from the stream. A board
that came from a paused snapshot shows nothing, so the diff that resumes the game
is followed by a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from typing import Any

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import engine, metrics, wire
from ..store import GameStore, Record, Subscription
from ..store.events import RESYNC
from . import backends, moves, views
from .auth import authorise, hash_token
from .backends import Backends
from .problems import ApiError, api_error_of, problem
from .requests import client_address, now_ms

log = logging.getLogger(__name__)

SEND_TIMEOUT = 5.0
CLOSE_TIMEOUT = 2.0
# Close codes: 1013 "try again later" for a consumer that fell behind.
TRY_AGAIN_LATER = 1013
POLICY_VIOLATION = 1008
NOT_FOUND = 4404
MESSAGE_RATE = 20.0
MESSAGE_BURST = 40.0

# Open sockets per client address in this process.
_open: collections.Counter[str] = collections.Counter()


class _Head(msgspec.Struct):
    """What a session reads of a message from the stream: a diff, or a reset."""

    type: str
    version: int | None = None
    paused: bool = False


_head = msgspec.json.Decoder(_Head)
_client_messages = msgspec.json.Decoder(wire.ClientMessage)
_encode = wire.json_encoder.encode
_ACTIONS: dict[type[Any], engine.Action] = {
    wire.RevealMessage: "reveal",
    wire.FlagMessage: "flag",
    wire.ChordMessage: "chord",
}


class _TooSlow(Exception):
    """The client fell behind: its queue filled, or it did not take a message in time."""


class _Flooding(Exception):
    """The client sent messages faster than a socket may."""


class _RawResult(msgspec.Struct, tag="result", tag_field="type"):
    """:class:`wire.Result` with the diff passed through as the bytes the move service made."""

    id: wire.RequestId | None
    diff: msgspec.Raw


class Session:
    """One socket: a writer that forwards live diffs, a reader that takes moves."""

    def __init__(self, ws: WebSocket, game_id: str, b: Backends) -> None:
        self.ws = ws
        self.game_id = game_id
        self.backends = b
        self.games: GameStore = b.games
        self.address = client_address(ws.scope)
        self._allowance = MESSAGE_BURST
        self._allowance_at = time.monotonic()
        self.version = 0
        # Whether the client's board came from a paused snapshot, so shows nothing.
        self.hidden = False
        self.token: str | None = None
        self._send_lock = asyncio.Lock()
        self._resets: set[bytes] = set()

    async def send(self, data: bytes) -> None:
        async with self._send_lock:
            try:
                async with asyncio.timeout(SEND_TIMEOUT):
                    await self.ws.send_text(data.decode())
            except TimeoutError:
                raise _TooSlow from None

    async def send_event(self, data: bytes, head: _Head) -> None:
        """A diff not sent yet (then a fresh snapshot if it showed a hidden board again),
        or a reset not sent yet."""
        if head.version is None:
            if data not in self._resets:
                self._resets.add(data)
                await self.send(data)
            return
        if head.version <= self.version:
            return
        await self.send(data)
        self.version = head.version
        if self.hidden and not head.paused:
            await self.snapshot()

    async def snapshot(self, record: Record | None = None) -> None:
        record = record or await self.games.load(self.game_id)
        view = views.record_view(self.game_id, record, now_ms())
        await self.send(_encode(wire.Snapshot(view)))
        self.version = record.game.version
        self.hidden = view.paused

    async def catch_up(self, since: int | None, record: Record | None = None) -> None:
        """Replay the events after ``since``, or send a snapshot when the stream cannot."""
        events = None if since is None else await self.games.events_after(self.game_id, since)
        if events is None:
            await self.snapshot(record)
            return
        self.version = max(self.version, since or 0)
        for data in events:
            await self.send_event(data, _head.decode(data))

    async def forward(self, sub: Subscription) -> None:
        while True:
            # A full queue is what sets the flag, so checking it between messages is enough.
            if sub.overflowed.is_set():
                raise _TooSlow
            try:
                async with asyncio.timeout(self.backends.config.heartbeat_seconds):
                    data = await sub.queue.get()
            except TimeoutError:
                now = wire.timestamp(now_ms())
                await self.send(_encode(wire.Heartbeat(version=self.version, server_time=now)))
                continue
            if data == RESYNC:
                await self.catch_up(self.version)
                continue
            head = _head.decode(data)
            if head.version is not None and head.version > self.version + 1:
                await self.catch_up(self.version)
            await self.send_event(data, head)

    def _flooding(self) -> bool:
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

    async def receive(self) -> None:
        while True:
            frame = await self.ws.receive()
            if frame["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(frame.get("code", 1000), frame.get("reason"))
            # A binary frame is judged like a text one: not JSON, or not a message, is an error.
            text = frame.get("text") or frame.get("bytes") or b""
            if self._flooding():
                raise _Flooding
            request_id = None
            try:
                message = wire.decode(_client_messages, text)
                request_id = getattr(message, "id", None)
                await self.handle(message)
            except Exception as exc:
                err = api_error_of(exc)
                out = wire.Error(id=request_id, problem=problem(err.status, err.code, err.detail))
                await self.send(_encode(out))

    async def admit(self) -> None:
        """Take what any HTTP request from this address takes: a socket is no way around
        the rate limits, nor around the budget for failed tokens and unknown games."""
        await self.backends.rate_limits.admit(self.address)

    async def charge_failure(self) -> None:
        await self.backends.rate_limits.charge_failure(self.address)

    async def handle(self, message: Any) -> None:
        if isinstance(message, wire.Auth):
            await self.admit()
            try:
                authorise(await self.games.load(self.game_id), hash_token(message.token))
            except ApiError:
                await self.charge_failure()
                raise
            self.token = message.token
            return
        if self.token is None:
            raise ApiError(401, "unauthorized", 'send {"type": "auth", "token": ...} first')
        action = _ACTIONS[type(message)]
        move = engine.Move(action, message.x, message.y, getattr(message, "mark", None))
        diff = await moves.move(
            self.backends, self.game_id, self.token, move, address=self.address
        )
        await self.send(_encode(_RawResult(message.id, msgspec.Raw(diff))))


async def events(ws: WebSocket) -> None:
    game_id = ws.path_params["game_id"]
    b = backends.of(ws)
    address = client_address(ws.scope)
    if _open[address] >= b.config.max_sockets_per_client:
        await ws.close(POLICY_VIOLATION, "too many open sockets")
        return
    _open[address] += 1
    metrics.SUBSCRIBERS.inc()
    try:
        await _serve(ws, game_id, b)
    finally:
        _open[address] -= 1
        if not _open[address]:
            del _open[address]
        metrics.SUBSCRIBERS.dec()


async def _serve(ws: WebSocket, game_id: str, b: Backends) -> None:
    await ws.accept()
    session = Session(ws, game_id, b)
    try:
        await session.admit()
        since = _since(ws.query_params.get("since"))
        async with b.events.subscribe(game_id) as sub:
            record = await b.games.load(game_id)
            if since is not None and since > record.game.version:
                since = None
            await session.catch_up(since, record)
            tasks = [
                asyncio.create_task(session.forward(sub)),
                asyncio.create_task(session.receive()),
            ]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    exc = task.exception()
                    if exc is not None and not isinstance(exc, WebSocketDisconnect):
                        raise exc
            finally:
                for task in tasks:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
    except WebSocketDisconnect:
        return
    # The socket is closed here, once both of its tasks have stopped, so nothing is sent
    # after the close.
    except _TooSlow:
        metrics.DROPPED.inc()
        await _close(ws, TRY_AGAIN_LATER, "too slow: reconnect with ?since")
    except _Flooding:
        await _close(ws, POLICY_VIOLATION, "too many messages")
    except Exception as exc:
        try:
            err = api_error_of(exc)
        except Exception:
            log.exception("live session failed")
            with contextlib.suppress(Exception):
                await ws.close(1011)
            return
        if err.code == "not_found":
            await session.charge_failure()
        out = wire.Error(id=None, problem=problem(err.status, err.code, err.detail))
        with contextlib.suppress(Exception):
            await session.send(_encode(out))
            await ws.close(NOT_FOUND if err.code == "not_found" else 1008, err.code)


async def _close(ws: WebSocket, code: int, reason: str) -> None:
    """Close, then read what the client still sends until its close arrives: a socket shut
    with unread data is reset, and the reset can overtake the close frame."""
    with contextlib.suppress(Exception):
        await ws.close(code, reason)
        async with asyncio.timeout(CLOSE_TIMEOUT):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass


def _since(raw: str | None) -> int | None:
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise ApiError(422, "invalid_request", "since takes a version number")
    return int(raw)
