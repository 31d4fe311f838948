"""The SDK's three streams after a dropped socket: a game's, a match's and the player's
own. Each connects again where it left off, and raises ``ConnectionError`` once it
could not after ``retries`` tries."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from minesweeper import AsyncClient, Diff, Matched, PlayerHeartbeat, PlayerSnapshot, Snapshot
from minesweeper.wire import MatchHeartbeat, MatchSnapshot, MatchUpdate
from websockets.exceptions import InvalidHandshake

from tests.support.play import unique_name
from tests.support.servers import ServiceProcess, running_service

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
