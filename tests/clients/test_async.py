"""The async SDK against live services: games over HTTP and over the socket, watching,
resuming with ``since``, and a watcher that outlives its server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from minesweeper import (
    AsyncClient,
    Client,
    Diff,
    Forbidden,
    GameOver,
    InvalidRequest,
    LiveGame,
    LiveMessage,
    NotFound,
    RateLimited,
    Reset,
    Snapshot,
    Unauthorized,
    apply_diff,
    changed_count,
)

from tests.support.play import one_click_win
from tests.support.servers import ServiceProcess, free_port

from .conftest import FIRST, mines_of, safe_cells


async def collect(
    messages: AsyncIterator[LiveMessage], until: int, kinds: tuple[type, ...] = (Snapshot, Diff)
) -> list[LiveMessage]:
    """Messages of ``kinds`` up to the first that reaches version ``until``."""
    got: list[LiveMessage] = []
    async for message in messages:
        if not isinstance(message, kinds):
            continue
        got.append(message)
        version = message.game.version if isinstance(message, Snapshot) else getattr(
            message, "version", None)
        if version is not None and version >= until:
            break
    return got


async def test_win_over_http(client: Client, aclient: AsyncClient) -> None:
    mines = mines_of(client, seed=201, preset="beginner")
    game = await aclient.new_game("beginner", seed=201)
    await aclient.reveal(game, *FIRST)
    for x, y in safe_cells(game, mines):
        if game[x, y] == "#":
            await aclient.reveal(game, x, y)
    assert game.view.status == "won"
    assert (await aclient.get(game.id)).board == game.view.board
    text = await aclient.board_text(game.id)
    assert text.startswith("\n".join(game.view.board)) and "won" in text


async def test_win_over_the_socket(client: Client, aclient: AsyncClient) -> None:
    mines = mines_of(client, seed=202, preset="beginner")
    game = await aclient.new_game("beginner", seed=202)
    async with aclient.connect(game) as live:
        first = await anext(live)
        assert isinstance(first, Snapshot) and first.game.version == 0
        diff = await live.reveal(*FIRST)
        assert diff.version == 1 and game.apply(diff)
        for x, y in safe_cells(game, mines):
            if game[x, y] == "#":
                assert game.apply(await live.reveal(x, y))
        assert game.view.status == "won"
        # Every move also came in order on the stream, the last one ending the game.
        diffs = await collect(live, until=game.view.version)
        assert [d.version for d in diffs] == list(range(1, game.view.version + 1))
        assert isinstance(diffs[-1], Diff) and diffs[-1].status == "won"
        with pytest.raises(GameOver):
            await live.reveal(0, 0)
        # A no-op answers with the unchanged version.
    assert (await aclient.get(game)).board == game.view.board


async def test_socket_move_errors(aclient: AsyncClient) -> None:
    game = await aclient.new_game("beginner", seed=203)
    async with aclient.connect(game.id) as live:  # no token
        with pytest.raises(Unauthorized):
            await live.reveal(0, 0)
    async with aclient.connect(game) as live:
        with pytest.raises(InvalidRequest):
            await live.flag(0, 0, "question")
        with pytest.raises(InvalidRequest):
            await live.chord(9, 9)
        noop = await live.chord(0, 0)  # a chord on a hidden cell changes nothing
        assert noop.version == 0 and noop.cells == []
    async with aclient.connect(game.id, token="not-the-token") as live:
        with pytest.raises(Forbidden):
            await live.reveal(0, 0)
        with pytest.raises(Forbidden):  # and the stream reports it too
            await collect(live, until=10**9)


async def test_watch_sees_moves_made_elsewhere(client: Client, aclient: AsyncClient) -> None:
    game = client.new_game("beginner", seed=204)
    watching = aclient.watch(game.id)
    # The snapshot shows the watcher subscribed; the moves come after it.
    snapshot = await asyncio.wait_for(anext(watching), 60)
    assert isinstance(snapshot, Snapshot) and snapshot.game.version == 0
    client.reveal(game, *FIRST)
    client.flag(game, 0, 0)
    client.flag(game, 0, 0)
    diffs = [m for m in await asyncio.wait_for(collect(watching, until=3), 60)
             if isinstance(m, Diff)]
    assert [(d.version, d.move.action) for d in diffs] == [(1, "reveal"), (2, "flag"), (3, "flag")]
    assert diffs[-1].cells == [(0, 0, "#")]


async def test_a_watcher_with_a_1_mib_limit_follows_the_largest_board(
    client: Client, aclient: AsyncClient
) -> None:
    """A whole-board cascade on a 1000x1000 board changes a million cells: its diff
    comes as runs, and a watcher taking messages of up to 1 MiB (websockets' default,
    and the SDK's) gets it."""
    seed = one_click_win(1000, 1000, (999, 999))
    game = client.new_game(width=1000, height=1000, mines=1, seed=seed)
    async with LiveGame(aclient.base_url, game.id, max_size=2**20, timeout=60) as live:
        snapshot = await asyncio.wait_for(anext(live), 60)
        assert isinstance(snapshot, Snapshot)
        client.reveal(game, 999, 999)
        diff = await asyncio.wait_for(anext(live), 120)
    assert isinstance(diff, Diff) and diff.status == "won"
    assert changed_count(diff.cells) == 10**6 and len(diff.cells) < 10**6
    followed = apply_diff(snapshot.game, diff)
    assert followed.board == game.view.board == client.get(game).board
    assert sum(row.count("F") for row in followed.board) == 1


async def test_watch_resumes_from_since(client: Client, aclient: AsyncClient) -> None:
    game = client.new_game("beginner", seed=205)
    client.reveal(game, *FIRST)
    hidden = safe_cells(game, set())[0]
    for _ in range(4):
        client.flag(game, *hidden)
    assert game.view.version == 5
    messages = await collect(aclient.watch(game.id, since=2), until=5)
    assert [m.version for m in messages if isinstance(m, Diff)] == [3, 4, 5]
    assert not any(isinstance(m, Snapshot) for m in messages)
    # Past the end: a snapshot instead.
    messages = await collect(aclient.watch(game.id, since=99), until=5)
    assert isinstance(messages[0], Snapshot) and messages[0].game.version == 5


async def test_a_missed_version_is_fetched_again(client: Client, aclient: AsyncClient) -> None:
    game = client.new_game("beginner", seed=207)
    client.reveal(game, *FIRST)
    hidden = safe_cells(game, set())[0]
    client.flag(game, *hidden)
    async with aclient.connect(game.id) as live:
        snapshot = await anext(live)
        assert isinstance(snapshot, Snapshot) and live.version == 2
        live.version = 0  # as if versions 1 and 2 had never arrived
        client.flag(game, *hidden)
        # Diff 3 shows the gap: the connection resumes from 0 and replays 1, 2, 3.
        messages = await asyncio.wait_for(collect(live, until=3), 10)
    assert [m.version for m in messages if isinstance(m, Diff)] == [1, 2, 3]


async def test_watch_tells_of_a_reset(client: Client, aclient: AsyncClient) -> None:
    game = client.new_game("intermediate")
    async with aclient.connect(game.id) as live:
        assert isinstance(await anext(live), Snapshot)
        fresh = await aclient.reset(game)
        message = await asyncio.wait_for(anext(live), 10)
    assert isinstance(message, Reset) and message.next_id == fresh.id
    assert fresh.view.preset == "intermediate"


async def test_watch_an_unknown_game(aclient: AsyncClient) -> None:
    with pytest.raises(NotFound):
        async for _ in aclient.watch("0" * 32):
            pass


async def test_watch_survives_a_server_restart(redis_url: str) -> None:
    """The watcher's server goes away; moves go on elsewhere; it comes back on the
    same port and the watcher resumes with ``since``, missing nothing."""
    port = free_port()
    env = {"REDIS_URL": redis_url}
    first = ServiceProcess(env, port=port).start()
    other = ServiceProcess(env).start()
    try:
        async with AsyncClient(first.url) as watcher, AsyncClient(other.url) as player:
            game = await player.new_game("beginner", seed=206)
            async with watcher.connect(game.id, retries=40) as live:
                assert isinstance(await anext(live), Snapshot)
                await player.reveal(game, *FIRST)
                assert (await anext(live)).version == 1  # type: ignore[union-attr]
                first.stop()
                hidden = safe_cells(game, set())[0]
                for _ in range(3):
                    await player.flag(game, *hidden)
                first.start()
                messages = await asyncio.wait_for(collect(live, until=4), 30)
                assert [m.version for m in messages if isinstance(m, Diff)] == [2, 3, 4]
                assert live.version == 4
    finally:
        first.stop()
        other.stop()


async def test_rate_limited_says_when_to_retry(redis_url: str) -> None:
    svc = ServiceProcess({"REDIS_URL": redis_url, "MOVE_RATE_LIMIT": "2"}).start()
    try:
        async with AsyncClient(svc.url) as client:
            game = await client.new_game("beginner")
            with pytest.raises(RateLimited) as caught:
                for i in range(100):  # past the burst the bucket allows
                    await client.flag(game, i % 9, 0)
            assert caught.value.status == 429
            assert caught.value.retry_after is not None and caught.value.retry_after > 0
    finally:
        svc.stop()



async def test_moves_as_fast_as_a_program_can_keep_the_socket(aclient: AsyncClient) -> None:
    """The service closes a socket that floods it; the SDK paces a quick run of moves (a
    bot's, or a burst of keys after a stalled moment) so that none is lost with it."""
    game = await aclient.new_game("beginner", seed=207)
    async with aclient.connect(game) as live:
        assert game.apply(await live.reveal(*FIRST))
        x, y = next((x, y) for y, row in enumerate(game.view.board)
                    for x, c in enumerate(row) if c == "#")
        diffs = await asyncio.gather(*(live.flag(x, y) for _ in range(80)))
    assert len(diffs) == 80
    assert sorted(d.version for d in diffs) == list(range(2, 82))
