"""``GET /players/me/events``: a player's own socket.

The client's first message is ``{"type": "auth", "token": ...}`` with the player's
token. The socket then sends the player's view, and everything published on the
player's channel (on any replica: the same fan-out as a game's diffs), which is the
view again whenever the player changed and the ``matched`` notice of a paired seek,
with a heartbeat while nothing happens. While it is open the player's seek does not
expire.
"""

from __future__ import annotations

import asyncio
import math

import msgspec
from starlette.websockets import WebSocket

from .. import wire
from ..store import Owner, Resync, Subscription, keys
from . import backends, ratings, seeks
from .auth import player_of_token
from .backends import Backends
from .problems import ApiError, api_error_of, problem
from .requests import now_ms
from .sockets import Socket, as_text, counted, served, until_one_ends

# Seconds a client has to authenticate after the upgrade.
AUTH_TIMEOUT = 10.0
# How often an open socket moves its player's seek on: the reach widens by the second.
SEEK_STEP_SECONDS = 1.0

_auth = msgspec.json.Decoder(wire.PlayerClientMessage)


def _unread(data: bytes) -> None:
    """A player's messages go to the socket as they are: nothing to read of them."""


class PlayerSession(Socket):
    def __init__(self, ws: WebSocket, b: Backends) -> None:
        super().__init__(ws, b)
        self.player_id = ""
        # Set by whatever may have moved the player's seek: a new seek, a notice, a gap.
        self.seek_moved = asyncio.Event()

    async def authenticate(self) -> Owner:
        """The player the first message's token belongs to."""
        try:
            async with asyncio.timeout(AUTH_TIMEOUT):
                text = await self.receive_text()
        except TimeoutError:
            detail = 'send {"type": "auth", "token": ...} first'
            raise ApiError(401, "unauthorized", detail) from None
        message = _auth.decode(text)
        try:
            return await player_of_token(self.ws, message.token)
        except Exception as exc:
            if isinstance(exc, ApiError):
                await self.charge_failure()
            err = api_error_of(exc)
            err.request_id = message.id
            raise err from exc

    async def send_player(self) -> None:
        player = await self.backends.players.load(self.player_id, now_ms())
        if player is None:
            raise ApiError(404, "not_found", "no such player")
        view = await ratings.player_view(self.backends, player)
        await self.send(as_text(wire.PlayerSnapshot(view)))

    def heartbeat(self) -> str:
        return as_text(wire.PlayerHeartbeat(server_time=wire.timestamp(now_ms())))

    async def forward(self, sub: Subscription[None]) -> None:
        while True:
            item = await self.next_event(sub)
            self.seek_moved.set()
            if isinstance(item, Resync):
                # What was published meanwhile is lost: the player as they are now says
                # it, and a pair made meanwhile its notice.
                await self.send_player()
                await self.tell_pair()
            elif item.text != seeks.SEEKING:
                await self.send(item.text)

    async def tell_pair(self) -> None:
        match_id = await seeks.live_pair(self.backends, self.player_id)
        if match_id is not None:
            await self.send(as_text(wire.Matched(match_id=match_id)))

    async def keep_seeking(self) -> None:
        """While the socket is open, the player's seek does not expire, and is moved on
        as a poll would move it (the ``matched`` notice comes here). With no seek to
        move on it waits for word of one, reading nothing."""
        b = self.backends
        await self.tell_pair()
        settled: set[str] = set()
        touched = -math.inf
        while True:
            self.seek_moved.clear()
            now = now_ms()
            touch = now - touched >= b.config.seek_expiry * 1000 / 3
            if touch:
                touched = now
            if await seeks.advance(b, self.player_id, settled, touch=touch):
                await asyncio.sleep(min(SEEK_STEP_SECONDS, b.config.seek_expiry / 3))
            else:
                await self.seek_moved.wait()

    async def receive(self) -> None:
        """Nothing more is taken on this socket; what a client sends is answered with an
        error, and a flood closes it."""
        while True:
            await self.receive_text()
            err = problem(422, "invalid_request", "this socket takes nothing after its 'auth'")
            await self.send(as_text(wire.Error(id=None, problem=err)))


async def player_events(ws: WebSocket) -> None:
    b = backends.of(ws)
    async with counted(ws, b) as admitted:
        if admitted:
            await _serve(ws, b)


async def _serve(ws: WebSocket, b: Backends) -> None:
    await ws.accept()
    session = PlayerSession(ws, b)
    async with served(session, "too slow: reconnect"):
        await session.admit()
        owner = await session.authenticate()
        session.player_id = owner.player_id
        async with b.events.subscribe(keys.player_channel(owner.player_id), _unread) as sub:
            await session.send_player()
            session.live.set()
            await until_one_ends(
                session.forward(sub),
                session.receive(),
                session.keep_alive(),
                session.keep_seeking(),
            )
