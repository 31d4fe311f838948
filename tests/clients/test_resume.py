"""The SDK's three streams after a dropped socket: a game's, a match's and the player's
own. Each connects again where it left off, and raises ``ConnectionError`` once it
could not after ``retries`` tries."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import re
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from minesweeper import AsyncClient, Diff, Matched, PlayerHeartbeat, PlayerSnapshot, Snapshot
from minesweeper.wire import MatchHeartbeat, MatchSnapshot, MatchUpdate
from websockets.exceptions import InvalidHandshake

from tests.support.play import unique_name
from tests.support.servers import ServiceProcess, free_port, running_service

from .test_stalled import own_service

STREAMS = ["game", "match", "player"]


@pytest.fixture
def service(redis_url: str) -> Iterator[ServiceProcess]:
    yield from own_service(redis_url)


async def opened(
    client: AsyncClient, stream: str, retries: int | None
) -> tuple[AsyncGenerator[Any, None], Callable[[AsyncClient], Awaitable[object]]]:
    """One of the three streams, opened on ``client``'s service, and what makes it
    yield again, to call on any client of the same Redis."""
    if stream == "game":
        game = await client.new_game("beginner")
        return client.watch(game, retries=retries), lambda other: other.flag(game, 0, 0)
    ada = await client.register(unique_name("rs"))
    if stream == "match":
        room = await client.new_match("race", "beginner", seats=3, rated=False,
                                      player_token=ada.token)

        async def join(other: AsyncClient) -> object:
            bob = await other.register(unique_name("rs"))
            return await other.join_match(room.id, player_token=bob.token)

        return client.watch_match(room.id, retries=retries), join
    # The player's socket has no version to resume from: the player comes first again.
    return client.player_events(player_token=ada.token, retries=retries), no_change


async def no_change(other: AsyncClient) -> None:
    pass


@contextlib.asynccontextmanager
async def refusing(port: int) -> AsyncIterator[list[int]]:
    """Something on ``port`` that takes each connection and closes it at once, so that no
    handshake succeeds; the list counts the connections. It is bound before this yields
    to the event loop, so a stream resuming there can reach nothing else."""
    tries: list[int] = []
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(16)

    async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tries.append(1)
        writer.close()

    server = await asyncio.start_server(take, sock=sock)
    try:
        yield tries
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("stream", STREAMS)
async def test_a_stream_gives_up_after_its_retries(service: ServiceProcess, stream: str) -> None:
    """Three tries after the drop, no more, then ``ConnectionError``."""
    async with AsyncClient(service.url, timeout=5) as client:
        messages, _ = await opened(client, stream, retries=3)
        async with contextlib.aclosing(messages):
            await asyncio.wait_for(anext(messages), 10)
            service.stop(kill=True)  # the event loop waits meanwhile: nothing resumes yet
            async with refusing(service.port) as tries:
                with pytest.raises(ConnectionError, match="could not resume") as caught:
                    while True:
                        await asyncio.wait_for(anext(messages), 30)
    assert isinstance(caught.value.__cause__, OSError | InvalidHandshake)
    assert len(tries) == 3


@pytest.mark.parametrize("stream", STREAMS)
async def test_a_stream_resumes_after_its_server_restarts(
    service: ServiceProcess, redis_url: str, stream: str
) -> None:
    """The socket dropped, a change made elsewhere meanwhile, then a service back on the
    same port: the game and the match go on from the version they had (the change, and
    no snapshot again), the player's socket from the player."""
    with running_service(redis_url) as other:
        async with AsyncClient(service.url, timeout=5) as client, \
                AsyncClient(other.url, timeout=5) as elsewhere:
            messages, change = await opened(client, stream, retries=40)
            async with contextlib.aclosing(messages):
                first = await asyncio.wait_for(anext(messages), 10)
                service.stop(kill=True)
                await change(elsewhere)
                service.start()
                again = await asyncio.wait_for(anext(messages), 30)
    if stream == "player":
        assert isinstance(first, PlayerSnapshot) and isinstance(again, PlayerSnapshot)
        assert again.player.id == first.player.id
    elif stream == "game":
        assert isinstance(first, Snapshot) and isinstance(again, Diff)
        assert again.version == first.game.version + 1
    else:
        assert isinstance(first, MatchSnapshot) and isinstance(again, MatchUpdate)
        assert again.version == first.match.version + 1 and again.change == "joined"


async def test_a_match_watch_with_a_token_resumes_after_its_server_restarts(
    service: ServiceProcess, redis_url: str
) -> None:
    """With a seated player's token: the match once, then after the restart the updates
    made meanwhile elsewhere, each once and in order."""
    with running_service(redis_url) as other:
        async with AsyncClient(service.url, timeout=5) as watcher, \
                AsyncClient(other.url, timeout=5) as client:
            ada = await client.register(unique_name("rs"))
            bob = await client.register(unique_name("rs"))
            room = await client.new_match("race", "beginner", seats=3, rated=False,
                                          player_token=ada.token)
            watch = watcher.watch_match(room.id, player_token=ada.token, retries=40)
            async with contextlib.aclosing(watch):
                first = await asyncio.wait_for(anext(watch), 10)
                service.stop(kill=True)
                await client.join_match(room.id, player_token=bob.token)
                await client.leave_match(room.id, player_token=bob.token)
                service.start()
                seen: list[Any] = []
                while len([m for m in seen if isinstance(m, MatchUpdate)]) < 2:
                    message = await asyncio.wait_for(anext(watch), 30)
                    if not isinstance(message, MatchHeartbeat):
                        seen.append(message)
            await client.leave_match(room.id, player_token=ada.token)
    assert isinstance(first, MatchSnapshot)
    assert [(type(m).__name__, m.version) for m in seen] == [
        ("MatchUpdate", first.match.version + 1), ("MatchUpdate", first.match.version + 2),
    ]
    assert [m.change for m in seen] == ["joined", "left"]


async def test_a_player_socket_tells_a_pairing_made_while_it_was_away(
    service: ServiceProcess, redis_url: str
) -> None:
    with running_service(redis_url) as other:
        async with AsyncClient(service.url, timeout=5) as listener, \
                AsyncClient(other.url, timeout=5) as client:
            ada = await client.register(unique_name("rs"), bot=True)
            bob = await client.register(unique_name("rs"), bot=True)
            events = listener.player_events(player_token=ada.token, retries=40)
            match_id = None
            try:
                async with contextlib.aclosing(events):
                    assert isinstance(await asyncio.wait_for(anext(events), 10), PlayerSnapshot)
                    await client.seek("intermediate", no_guess=False, player_token=ada.token)
                    service.stop(kill=True)
                    theirs = await client.seek("intermediate", no_guess=False,
                                               player_token=bob.token)
                    match_id = theirs.match_id
                    assert match_id is not None
                    service.start()
                    told = []
                    while Matched(match_id=match_id) not in told:
                        message = await asyncio.wait_for(anext(events), 30)
                        if not isinstance(message, PlayerHeartbeat):
                            told.append(message)
                assert isinstance(told[0], PlayerSnapshot)
            finally:
                for token in (ada.token, bob.token):
                    if match_id is not None:
                        with contextlib.suppress(Exception):
                            await client.leave_match(match_id, player_token=token)


class Proxy:
    """A go-between on a port of its own for one service: it forwards each connection,
    except those it is told to cut short: for them it answers the WebSocket handshake
    itself and closes the socket in the same breath, before the client can send a word."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.cut_short = 0  # how many of the next connections to cut short
        self.open: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> Proxy:
        self.server = await asyncio.start_server(self._take, "127.0.0.1", free_port())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.drop()
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    def drop(self) -> None:
        """Close every connection it forwards."""
        for writer in self.open:
            writer.close()
        self.open.clear()

    async def _take(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_short:
            self.cut_short -= 1
            await self._open_and_close(reader, writer)
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self.open += [writer, up_writer]
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    @staticmethod
    async def _open_and_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        key = re.search(rb"(?i)sec-websocket-key:\s*(\S+)", request)
        assert key is not None
        accept = base64.b64encode(hashlib.sha1(key[1] + WS_GUID).digest())
        # One write: the client reads the close with the handshake's answer.
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
                     + CLOSE_GOING_AWAY)
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(reader.read(64), 5)  # the client's close
        writer.close()


WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CLOSE_GOING_AWAY = b"\x88\x02\x03\xe9"  # a close frame, code 1001


async def with_token(
    client: AsyncClient, stream: str
) -> tuple[AsyncGenerator[Any, None], Callable[[AsyncClient], Awaitable[object]], type]:
    """One of the three streams, with a token so that each of its sockets starts with an
    auth; what makes it yield again (on any client of the same Redis), and what it then
    yields."""
    if stream == "game":
        game = await client.new_game("beginner")

        async def live() -> AsyncGenerator[Any, None]:
            async with client.connect(game) as connection:
                async for message in connection:
                    yield message

        return live(), lambda other: other.flag(game, 0, 0), Diff
    ada = await client.register(unique_name("rs"))
    if stream == "match":
        room = await client.new_match("race", "beginner", seats=3, rated=False,
                                      player_token=ada.token)

        async def join(other: AsyncClient) -> object:
            bob = await other.register(unique_name("rs"))
            return await other.join_match(room.id, player_token=bob.token)

        return client.watch_match(room.id, player_token=ada.token), join, MatchUpdate
    return client.player_events(player_token=ada.token), no_change, PlayerSnapshot


@pytest.mark.parametrize("stream", STREAMS)
async def test_a_socket_closed_before_its_auth_went_is_a_dropped_one(
    service: ServiceProcess, stream: str
) -> None:
    """A socket the service closes as soon as it opened, before the auth could go: the
    stream resumes with the next one, as after any drop."""
    async with Proxy(service.port) as proxy, AsyncClient(proxy.url, timeout=5) as client, \
            AsyncClient(service.url, timeout=5) as elsewhere:
        messages, change, expected = await with_token(client, stream)
        async with contextlib.aclosing(messages):
            await asyncio.wait_for(anext(messages), 10)
            proxy.cut_short = 1
            proxy.drop()
            await change(elsewhere)
            while not isinstance(await asyncio.wait_for(anext(messages), 30), expected):
                pass
        assert proxy.cut_short == 0
