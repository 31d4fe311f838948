"""64 clients on one game and 64 clients on 64 games, through two replicas, for a few
seconds: no lost update, no 5xx, and the event stream replays to the stored board.

Every mover plays moves that can never end its game (reveals of safe cells, flags),
so each accepted move that changes the board must get its own version, and together
the versions must run without a gap up to the game's final version.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
import redis

from tests.support.load import (
    Follower,
    Http,
    KnownGame,
    Outcome,
    assert_acknowledged_kept,
    assert_stream_replays,
    assert_versions_contiguous,
    collect_live,
    create_known_game,
    replay_board,
    run_load,
    stream_diffs,
)
from tests.support.servers import RedisServer, ServiceProcess

CLIENTS = 64
SECONDS = float(os.environ.get("LOAD_SECONDS", "5"))


@pytest.fixture(scope="module")
def replicas(redis_server: RedisServer) -> Iterator[list[ServiceProcess]]:
    started: list[ServiceProcess] = []
    try:
        for _ in range(2):
            started.append(ServiceProcess({"REDIS_URL": redis_server.url}).start())
        yield started
    finally:
        for svc in started:
            svc.stop()


def summary(name: str, out: Outcome) -> str:
    return (
        f"{name}: {len(out.ok())} moves in {out.seconds:.1f} s = {out.rate():.0f} moves/s, "
        f"p50 {out.latency_ms(50):.1f} ms, p99 {out.latency_ms(99):.1f} ms, "
        f"statuses {out.statuses()}, busy and sent again {len(out.retried)}"
    )


async def check_game(r: redis.Redis, base_url: str, game: KnownGame, out: Outcome) -> int:
    """No lost update on ``game``; its final version."""
    stored = assert_stream_replays(r, game.id)
    mine = [s for s in out.samples if s.game == game.id]
    # Version 1 is the opening click made when the game was set up.
    assert_versions_contiguous(mine, stored.version, first=2)
    http = Http(base_url)
    try:
        view = (await http.request("GET", f"/games/{game.id}")).json()
    finally:
        await http.close()
    assert view["version"] == stored.version and view["board"] == stored.board()
    assert view["status"] == "playing"
    # A late subscriber asking for everything gets every diff, equal to the stream's.
    live = await collect_live(base_url, game.id, 0, stored.version)
    diffs = stream_diffs(r, game.id)
    assert [v for v, _ in live] == list(range(1, stored.version + 1))
    assert all(diffs[v] == data for v, data in live)
    assert replay_board([d for _, d in live], game.width, game.height) == view["board"]
    return stored.version


def assert_only_busy_retried(out: Outcome) -> None:
    """A move may be answered "busy, try again" when the game's turn does not come in
    time (a machine far busier than its cores); the mover then sends it again with the
    same Idempotency-Key. Nothing else is retried, and each move ends answered 200."""
    assert all(
        s.status == 503 and s.code == "store_unavailable" for s in out.retried
    ), out.retried[:3]


async def test_64_clients_on_one_game(
    replicas: list[ServiceProcess], redis_server: RedisServer, figures: list[str]
) -> None:
    urls = [svc.url for svc in replicas]
    http = Http(urls[0])
    game = await create_known_game(http, seed=1)
    await http.close()
    # A subscriber on the second replica watches the whole run (resuming with since,
    # as a client should, should it ever be dropped as a slow consumer).
    watcher = Follower([urls[1]], game.id).run()
    await asyncio.wait_for(watcher.connected.wait(), 60)

    out = await run_load(urls, [game], CLIENTS, SECONDS, retry_busy=True)
    figures.append(summary(f"{CLIENTS} clients, one game, 2 replicas", out))

    assert not out.errors, out.errors[:5]
    assert_only_busy_retried(out)
    assert out.statuses() == {200: len(out.samples)}, out.statuses()
    r = redis.Redis.from_url(redis_server.url)
    final = await check_game(r, urls[1], game, out)
    assert final > CLIENTS
    assert assert_acknowledged_kept(out.samples, r) == final - 1

    # The live subscriber saw every version once, in order, the same bytes as the stream.
    await watcher.finish(final)
    watcher.assert_complete(stream_diffs(r, game.id))
    assert watcher.start is not None and watcher.start <= 1


async def test_64_clients_on_64_games(
    replicas: list[ServiceProcess], redis_server: RedisServer, figures: list[str]
) -> None:
    urls = [svc.url for svc in replicas]
    http = Http(urls[0])
    games = [await create_known_game(http, seed=100 + i) for i in range(CLIENTS)]
    await http.close()

    out = await run_load(urls, games, CLIENTS, SECONDS, retry_busy=True)
    figures.append(summary(f"{CLIENTS} clients, {CLIENTS} games, 2 replicas", out))

    assert not out.errors, out.errors[:5]
    assert_only_busy_retried(out)
    assert out.statuses() == {200: len(out.samples)}, out.statuses()
    r = redis.Redis.from_url(redis_server.url)
    for i, game in enumerate(games):
        if i % 8 == 0:
            await check_game(r, urls[i % 2], game, out)
        else:
            stored = assert_stream_replays(r, game.id)
            mine = [s for s in out.samples if s.game == game.id]
            assert_versions_contiguous(mine, stored.version, first=2)
    assert_acknowledged_kept(out.samples, r)


async def test_the_load_client_resends_on_a_connection_closed_while_idle(
    replicas: list[ServiceProcess],
) -> None:
    """The tests' client must tell a server closing an idle keep-alive connection from
    a failure, as real clients do, or a slow moment in a test reads as a lost request."""
    http = Http(replicas[0].url)
    game = await create_known_game(http, seed=5)
    kept = http._reader
    assert kept is not None

    async def closed_by_server() -> None:
        while not kept.at_eof():
            await asyncio.sleep(0.05)

    # uvicorn closes a connection idle for 5 s.
    await asyncio.wait_for(closed_by_server(), 60)
    x, y = game.safe[0]
    reply = await http.post_json(f"/games/{game.id}/flag", {"x": x, "y": y}, game.auth)
    assert reply.status == 200 and reply.json()["cells"] == [[x, y, "F"]]
    assert http._reader is not kept
    await http.close()
