"""The SDK's matches: open, join, watch a match and play a seat; seek an opponent."""

from __future__ import annotations

import asyncio

import pytest
from minesweeper import AlreadySeated, AsyncClient, Client, wire

from tests.matches.conftest import LIMITS_OFF
from tests.support.servers import ServiceProcess, free_port


async def watched(
    client: AsyncClient, match_id: str, seen: list[wire.MatchSnapshot | wire.MatchUpdate],
    retries: int = 8,
) -> asyncio.Task[None]:
    """A task that puts the match and its updates in ``seen`` until the match is over;
    returned once the match came."""

    async def watch() -> None:
        async for message in client.watch_match(match_id, retries=retries):
            if isinstance(message, wire.MatchSnapshot | wire.MatchUpdate):
                seen.append(message)
                if message.match.status == "finished":
                    return

    task = asyncio.create_task(watch())
    while not seen and not task.done():
        await asyncio.sleep(0.05)
    return task


@pytest.mark.asyncio
async def test_open_join_watch_and_resign(
    replicas: tuple[ServiceProcess, ServiceProcess],
) -> None:
    one, two = replicas
    async with AsyncClient(one.url, timeout=30) as a, AsyncClient(two.url, timeout=30) as b:
        alice, bob = await a.register(), await b.register()
        a.player_token, b.player_token = alice.token, bob.token
        match = await a.new_match("race", "beginner", seats=2)
        assert match.status == "waiting" and match.seats[0].player.id == alice.player.id
        seen: list[wire.MatchSnapshot | wire.MatchUpdate] = []
        watching = await watched(a, match.id, seen)
        started = await b.join_match(match.id)
        assert started.status == "countdown"
        mine = [s.game_id for s in started.seats if s.player.id == bob.player.id]
        assert mine[0] is not None
        with pytest.raises(AlreadySeated):
            await b.join_match(match.id)
        await a.leave_match(match.id)
        end = await b.leave_match(match.id)
        assert end.status == "finished"
        await asyncio.wait_for(watching, 30)
    changes = [m.change for m in seen if isinstance(m, wire.MatchUpdate)]
    assert changes[:2] == ["joined", "countdown"] and changes[-1] == "resigned"
    assert isinstance(seen[-1], wire.MatchUpdate) and seen[-1].match.status == "finished"


def test_two_players_seek_and_meet(replicas: tuple[ServiceProcess, ServiceProcess]) -> None:
    one, two = replicas
    with Client(one.url, timeout=30) as a, Client(two.url, timeout=30) as b:
        alice, bob = a.register(), b.register()
        mine = a.seek("intermediate", no_guess=True, player_token=alice.token)
        theirs = b.seek("intermediate", no_guess=True, player_token=bob.token)
        assert theirs.status == "matched" and theirs.match_id is not None
        assert a.get_seek(mine.id).match_id == theirs.match_id
        match = a.match(theirs.match_id, player_token=alice.token)
        assert match.rated and {s.player.id for s in match.seats} == {
            alice.player.id, bob.player.id
        }
        assert a.race_ratings(limit=5).mode == "race"


@pytest.mark.asyncio
async def test_watch_match_resumes_after_its_server_restarts(redis_url: str) -> None:
    """The watcher's server goes away; the match goes on through the other one; the
    server comes back on the same port and the watch resumes with ``since``: every
    update, in order, none twice."""
    env = {"REDIS_URL": redis_url, **LIMITS_OFF}
    first = ServiceProcess(env, port=free_port()).start()
    other = ServiceProcess(env).start()
    try:
        async with AsyncClient(first.url, timeout=30) as watcher, \
                AsyncClient(other.url, timeout=30) as a, AsyncClient(other.url, timeout=30) as b:
            alice, bob = await a.register(), await b.register()
            a.player_token, b.player_token = alice.token, bob.token
            match = await a.new_match("race", "beginner", seats=2)
            seen: list[wire.MatchSnapshot | wire.MatchUpdate] = []
            watching = await watched(watcher, match.id, seen, retries=40)
            first.stop()
            await b.join_match(match.id)
            await a.leave_match(match.id)
            end = await b.leave_match(match.id)
            assert end.status == "finished"
            first.start()
            await asyncio.wait_for(watching, 60)
    finally:
        first.stop()
        other.stop()
    assert isinstance(seen[0], wire.MatchSnapshot) and seen[0].match.status == "waiting"
    updates = [m for m in seen[1:] if isinstance(m, wire.MatchUpdate)]
    assert len(updates) == len(seen) - 1
    versions = [m.version for m in updates]
    assert versions == list(range(seen[0].match.version + 1, end.version + 1))
    assert [m.change for m in updates][:2] == ["joined", "countdown"]
    assert updates[-1].match.status == "finished"
