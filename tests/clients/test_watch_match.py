"""``AsyncClient.watch_match``: the match once, its updates, and the end."""

from __future__ import annotations

import asyncio

from minesweeper import AsyncClient
from minesweeper.wire import MatchServerMessage, MatchSnapshot, MatchUpdate

from tests.support.play import unique_name


async def test_the_watch_ends_with_the_match_and_shows_it_once(aclient: AsyncClient) -> None:
    a = await aclient.register(unique_name("wm"))
    b = await aclient.register(unique_name("wm"))
    room = await aclient.new_match("race", "beginner", seats=2, rated=False,
                                   player_token=a.token)
    await aclient.join_match(room.id, player_token=b.token)  # the countdown starts
    seen: list[MatchServerMessage] = []
    started = asyncio.Event()

    async def watch() -> None:
        async for message in aclient.watch_match(room.id, player_token=a.token):
            seen.append(message)
            started.set()

    watching = asyncio.create_task(watch())
    try:
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.sleep(0.5)  # the match sent again after the auth, had it been yielded
        await aclient.leave_match(room.id, player_token=a.token)
        await aclient.leave_match(room.id, player_token=b.token)
        await asyncio.wait_for(watching, 20)  # it ends by itself, the socket still open
    finally:
        watching.cancel()
    snapshots = [m for m in seen if isinstance(m, MatchSnapshot)]
    assert len(snapshots) == 1, seen
    own = snapshots[0].match.seats[0]
    assert own.player.id == a.player.id and own.game_id is not None  # the one after the auth
    last = seen[-1]
    assert isinstance(last, MatchUpdate) and last.match.status == "finished"

    # A finished match: its snapshot, and the end.
    async def all_of() -> list[MatchServerMessage]:
        return [m async for m in aclient.watch_match(room.id, player_token=b.token)]

    again = await asyncio.wait_for(all_of(), 20)
    assert len(again) == 1 and isinstance(again[0], MatchSnapshot)
    assert again[0].match.status == "finished"


async def test_a_resume_with_a_token_shows_the_match_at_once(aclient: AsyncClient) -> None:
    """Nothing missed since ``since``: the match comes after the auth alone, and is not
    held back for a copy that never comes (the next heartbeat is 15 s away)."""
    a = await aclient.register(unique_name("wm"))
    b = await aclient.register(unique_name("wm"))
    room = await aclient.new_match("race", "beginner", seats=3, rated=False,
                                   player_token=a.token)
    room = await aclient.join_match(room.id, player_token=b.token)
    watch = aclient.watch_match(room.id, since=room.version, player_token=a.token)
    try:
        first = await asyncio.wait_for(anext(watch), 5)
    finally:
        await watch.aclose()
    assert isinstance(first, MatchSnapshot) and first.match.version == room.version
