"""``AsyncClient.player_events``: the player's own socket, where a seek's pairing is told."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterator

import pytest
from minesweeper import (
    AsyncClient,
    Matched,
    PlayerHeartbeat,
    PlayerServerMessage,
    PlayerSnapshot,
    Unauthorized,
)

from tests.support.play import unique_name
from tests.support.servers import ServiceProcess

from .test_stalled import frozen, own_service


async def _next_not_heartbeat(
    messages: AsyncGenerator[PlayerServerMessage, None], seconds: float
) -> PlayerServerMessage:
    async def first() -> PlayerServerMessage:
        async for message in messages:
            if not isinstance(message, PlayerHeartbeat):
                return message
        raise AssertionError("the player's socket ended")

    return await asyncio.wait_for(first(), seconds)


async def test_a_bot_seeks_and_only_listens(aclient: AsyncClient) -> None:
    """The socket keeps the seek and tells of its pairing; opened again while the match
    is played, it tells of it again."""
    ada = await aclient.register(unique_name("pe"), bot=True)
    bob = await aclient.register(unique_name("pe"), bot=True)
    events = aclient.player_events(player_token=ada.token)
    async with contextlib.aclosing(events):
        first = await _next_not_heartbeat(events, 10)
        assert isinstance(first, PlayerSnapshot) and first.player.id == ada.player.id
        seek = await aclient.seek("intermediate", no_guess=False, player_token=ada.token)
        assert seek.status == "waiting"
        theirs = await aclient.seek("intermediate", no_guess=False, player_token=bob.token)
        match_id = (await aclient.get_seek(seek.id)).match_id
        assert match_id is not None and theirs.match_id in (match_id, None)
        told = await _next_not_heartbeat(events, 10)
        assert told == Matched(match_id=match_id)
    try:
        again = aclient.player_events(player_token=ada.token)
        async with contextlib.aclosing(again):
            assert isinstance(await _next_not_heartbeat(again, 10), PlayerSnapshot)
            assert await _next_not_heartbeat(again, 10) == Matched(match_id=match_id)
    finally:
        for token in (ada.token, bob.token):
            with contextlib.suppress(Exception):
                await aclient.leave_match(match_id, player_token=token)


async def test_a_refused_token_raises(aclient: AsyncClient) -> None:
    with pytest.raises(Unauthorized):
        async for _ in aclient.player_events(player_token="0" * 43):
            pass


@pytest.fixture
def chatty(redis_url: str) -> Iterator[ServiceProcess]:
    """A service of the test's own that sends a heartbeat every second."""
    yield from own_service(redis_url, HEARTBEAT_SECONDS="1")


async def test_a_silent_player_socket_resumes(chatty: ServiceProcess) -> None:
    """No heartbeat for heartbeat_timeout seconds: the socket is opened again once the
    service answers, and the player comes first again."""
    async with AsyncClient(chatty.url, timeout=2, heartbeat_timeout=3) as client:
        ada = await client.register(unique_name("pe"))
        events = client.player_events(player_token=ada.token, retries=None)
        async with contextlib.aclosing(events):
            assert isinstance(await _next_not_heartbeat(events, 10), PlayerSnapshot)
            assert isinstance(await asyncio.wait_for(anext(events), 10), PlayerHeartbeat)
            with frozen(chatty):
                waiting = asyncio.create_task(_next_not_heartbeat(events, 30))
                await asyncio.sleep(6)  # the socket counts as dropped; tries to resume fail
            again = await waiting
            assert isinstance(again, PlayerSnapshot) and again.player.id == ada.player.id
