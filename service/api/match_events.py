"""``GET /matches/{id}/events``: the match, then every update in version order, resumable
with ``?since``; co-op cursors relayed between the seated players.

Anybody may watch; what they see is the match as anybody may see it (no race seat's
game until the end). A seated player who sends ``{"type": "auth", "token"}`` with
their token gets the match again with their own seat's game, and from then on every
update carries it; in co-op they may send ``{"type": "cursor", "x", "y"}``, which the
others receive (a cell of the board; not stored; ten a second at most, the last of a
quicker run sent once the interval is over, so the teammates always see where it stopped).
"""

from __future__ import annotations

import asyncio
import time

import msgspec
from starlette.websockets import WebSocket

from .. import wire
from ..store import MatchState, Subscription, keys
from . import backends, match_rules, views
from .auth import player_of_token
from .backends import Backends
from .problems import ApiError, api_error_of, problem
from .requests import now_ms
from .sockets import Feed, as_text, counted, serve_feed, until_one_ends

CURSOR_INTERVAL = 0.1

_client = msgspec.json.Decoder(wire.MatchClientMessage)
_update = msgspec.json.Decoder(wire.MatchUpdate)


class _Head(msgspec.Struct):
    type: str
    version: int | None = None
    by: str | None = None


_head = msgspec.json.Decoder(_Head)


class MatchSession(Feed):
    def __init__(self, ws: WebSocket, match_id: str, b: Backends) -> None:
        super().__init__(ws, b)
        self.match_id = match_id
        self.version = 0
        self.viewer: str | None = None
        # The viewer's seat and its game, once the match started.
        self.seat: int | None = None
        self.game_id: str | None = None
        self.coop = False
        self.size = (0, 0)  # the board's width and height
        # When the last cursor went out; the one held back until the interval is over.
        self._cursor_at = 0.0
        self._cursor_next: wire.Cursor | None = None
        self._cursor_held = asyncio.Event()

    async def snapshot(self, state: MatchState | None = None) -> None:
        if state is None:
            _, state = await self.backends.matches.load(self.match_id)
        self._learn(state)
        view = views.match_view(state, now_ms(), self.viewer)
        await self.send(as_text(wire.MatchSnapshot(view)))
        self.version = state.version

    def _learn(self, state: MatchState) -> None:
        self.coop = state.mode == "coop"
        self.size = (state.width, state.height)
        if self.viewer is not None:
            self.seat = match_rules.seated(state, self.viewer)
            if self.seat is not None:
                self.game_id = state.seats[self.seat].game_id

    async def catch_up(self, since: int | None, state: MatchState | None = None) -> None:
        found = None if since is None else await self.backends.matches.events_after(
            self.match_id, since
        )
        if found is None:
            await self.snapshot(state)
            return
        self.version = max(self.version, since or 0)
        for data in found:
            await self.send_update(data.decode(), _head.decode(data))

    async def send_update(self, text: str, head: _Head) -> None:
        if head.version is None or head.version <= self.version:
            return
        if self.viewer is not None and not self.coop:
            text = await self._own(text)
        await self.send(text)
        self.version = head.version

    def heartbeat(self) -> str:
        return as_text(wire.MatchHeartbeat(self.version, wire.timestamp(now_ms())))

    async def _own(self, text: str) -> str:
        """The update with the viewer's own seat's game, which the stored one leaves out
        until the end. The seat is looked up in the update itself: a seat before the
        viewer's that is freed moves the viewer's up."""
        message = _update.decode(text)
        match = message.match
        seat = next((n for n, s in enumerate(match.seats) if s.player.id == self.viewer), None)
        if match.status in ("waiting", "finished") or seat is None:
            return text
        if self.game_id is None:
            _, state = await self.backends.matches.load(self.match_id)
            self._learn(state)
        if self.game_id is None or self.seat != seat:
            return text
        seats = list(match.seats)
        seats[seat] = msgspec.structs.replace(seats[seat], game_id=self.game_id)
        match = msgspec.structs.replace(match, seats=seats)
        return as_text(msgspec.structs.replace(message, match=match))

    async def forward(self, sub: Subscription[_Head], since: int | None) -> None:
        """What the client missed (or the match), then the live messages."""
        _, state = await self.backends.matches.load(self.match_id)
        if since is not None and since > state.version:
            since = None
        await self.catch_up(since, state)
        self.live.set()
        await self.relay(sub)

    async def deliver(self, text: str, head: _Head) -> None:
        if head.type == "cursor":  # a teammate's pointer: no version, not stored
            if head.by != self.viewer:
                await self.send(text)
            return
        await self.send_update(text, head)

    async def receive(self) -> None:
        # Answers come after the match itself.
        await until_one_ends(self.answer(_client, self.handle), self.send_held_cursors())

    async def send_held_cursors(self) -> None:
        """The cursor the throttle held back, sent once the interval is over: of
        cursors closer together than ``CURSOR_INTERVAL`` some are skipped, never the
        last, which says where the pointer stopped."""
        while True:
            await self._cursor_held.wait()
            await asyncio.sleep(self._cursor_at + CURSOR_INTERVAL - time.monotonic())
            cursor, self._cursor_next = self._cursor_next, None
            self._cursor_held.clear()
            if cursor is None:
                continue
            try:
                await self._publish_cursor(cursor)
            except Exception as exc:  # answered as the cursor's own failure would be
                err = api_error_of(exc)
                out = wire.Error(id=None, problem=problem(err.status, err.code, err.detail))
                await self.send(as_text(out))

    async def _publish_cursor(self, cursor: wire.Cursor) -> None:
        self._cursor_at = time.monotonic()
        await self.backends.matches.publish(self.match_id, wire.json_encoder.encode(cursor))

    async def handle(self, message: wire.Auth | wire.CursorMessage) -> None:
        if isinstance(message, wire.Auth):
            await self.admit()
            try:
                owner = await player_of_token(self.ws, message.token)
            except ApiError:
                await self.charge_failure()
                raise
            self.viewer = owner.player_id
            await self.snapshot()
            return
        if self.viewer is not None and self.seat is None:
            _, state = await self.backends.matches.load(self.match_id)
            self._learn(state)
        if self.viewer is None or self.seat is None:
            raise ApiError(409, "not_seated", "only a seated player sends a cursor")
        if not self.coop:
            raise ApiError(422, "invalid_request", "cursors are for co-op matches")
        width, height = self.size
        if not (0 <= message.x < width and 0 <= message.y < height):
            # Relayed to every watcher as it is: a cell of the board or nothing.
            raise ApiError(
                422, "invalid_request",
                f"cell ({message.x}, {message.y}) is off the {width}x{height} board",
            )
        cursor = wire.Cursor(by=self.viewer, x=message.x, y=message.y)
        if self._cursor_held.is_set() or time.monotonic() - self._cursor_at < CURSOR_INTERVAL:
            # Too soon: held back until the interval is over, in place of any held before.
            self._cursor_next = cursor
            self._cursor_held.set()
            return
        await self._publish_cursor(cursor)


async def match_events(ws: WebSocket) -> None:
    b = backends.of(ws)
    async with counted(ws, b) as admitted:
        if admitted:
            match_id = ws.path_params["match_id"]
            feed = MatchSession(ws, match_id, b)
            await serve_feed(feed, keys.match_channel(match_id), _head.decode)
