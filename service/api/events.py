"""``GET /games/{id}/events``: a snapshot, then every diff in version order, and the
moves a player sends over the same socket.

Subscribing comes first and is confirmed before the stream or the snapshot is
read, so a diff committed in between arrives twice at worst (and is dropped by
version), never not at all. A gap in versions is filled from the stream. A board
that came from a paused snapshot shows nothing, so the diff that resumes the game
is followed by a fresh snapshot.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.websockets import WebSocket

from .. import engine, wire
from ..store import GameStore, Record, Subscription, keys
from . import backends, moves, views
from .auth import authorise, hash_token
from .backends import Backends
from .problems import ApiError
from .requests import now_ms
from .sockets import Feed, as_text, counted, serve_feed


class _Head(msgspec.Struct):
    """What a session reads of a message from the stream: a diff, or a notice (a reset,
    a hint given) that has no version."""

    type: str
    version: int | None = None
    paused: bool = False
    # Kept as sent: only whether there are any is asked.
    cells: msgspec.Raw = msgspec.Raw(b"[]")


_head = msgspec.json.Decoder(_Head)
_client_messages = msgspec.json.Decoder(wire.ClientMessage)
_ACTIONS: dict[type[Any], engine.Action] = {
    wire.RevealMessage: "reveal",
    wire.FlagMessage: "flag",
    wire.ChordMessage: "chord",
}


class _RawResult(msgspec.Struct, tag="result", tag_field="type"):
    """:class:`wire.Result` with the diff passed through as the bytes the move service made."""

    id: wire.RequestId | None
    diff: msgspec.Raw


def _paused_after(heads: list[_Head]) -> bool:
    """Whether the last diff among ``heads`` left the game paused."""
    return next((h.paused for h in reversed(heads) if h.version is not None), False)


class Session(Feed):
    """One socket: a writer that forwards live diffs, a reader that takes moves, and a
    keeper that sends heartbeats while it is quiet and ends it when a send hangs."""

    def __init__(self, ws: WebSocket, game_id: str, b: Backends) -> None:
        super().__init__(ws, b)
        self.game_id = game_id
        self.games: GameStore = b.games
        self.version = 0
        # Whether the client's board came from a paused snapshot, so shows nothing.
        self.hidden = False
        self.token: str | None = None
        # The notices sent on this socket: the stream and the channel may both bring one.
        self._notices: set[str] = set()

    def heartbeat(self) -> str:
        return as_text(wire.Heartbeat(version=self.version, server_time=wire.timestamp(now_ms())))

    async def deliver(self, text: str, head: _Head) -> None:
        """A diff not sent yet (then a fresh snapshot if it showed a hidden board again),
        or a notice not sent yet."""
        if head.version is None:
            if text not in self._notices:
                self._notices.add(text)
                await self.send(text)
            return
        if head.version <= self.version:
            return
        await self.send(text)
        self.version = head.version
        if self.hidden and not head.paused:
            await self.snapshot()

    async def snapshot(self, record: Record | None = None) -> None:
        record = record or await self.games.load(self.game_id)
        view = views.record_view(self.game_id, record, now_ms())
        await self.send(as_text(wire.Snapshot(view)))
        self.version = record.game.version
        self.hidden = view.paused

    async def catch_up(self, since: int | None) -> None:
        """Replay the events after ``since`` from the stream alone; when it cannot answer,
        send a snapshot, unless ``since`` is the game's version already."""
        events = None if since is None else await self.games.events_after(self.game_id, since)
        if events is None:
            record = await self.games.load(self.game_id)
            if since != record.game.version:
                await self.snapshot(record)
                return
            events = []
        heads = [_head.decode(data) for data in events]
        if _paused_after(heads) and any(bytes(h.cells) != b"[]" for h in heads):
            # The missed diffs' cells are the board that pausing hides: a paused snapshot
            # in their place (the notices still), and the board again once it is resumed.
            await self.snapshot()
            for data, head in zip(events, heads, strict=True):
                if head.version is None:
                    await self.deliver(data.decode(), head)
            return
        self.version = max(self.version, since or 0)
        for data, head in zip(events, heads, strict=True):
            await self.deliver(data.decode(), head)

    async def forward(self, sub: Subscription[_Head], since: int | None) -> None:
        """What the client missed (or a snapshot), then the live messages."""
        await self.catch_up(since)
        self.live.set()
        await self.relay(sub)

    async def receive(self) -> None:
        # Answers come after the snapshot or replay.
        await self.answer(_client_messages, self.handle)

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
        await self.send(as_text(_RawResult(message.id, msgspec.Raw(diff))))


async def events(ws: WebSocket) -> None:
    b = backends.of(ws)
    async with counted(ws, b) as admitted:
        if admitted:
            game_id = ws.path_params["game_id"]
            feed = Session(ws, game_id, b)
            await serve_feed(feed, keys.channel(game_id), _head.decode)
