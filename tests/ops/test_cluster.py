"""Every feature on a real three-master Redis Cluster, across two API processes; and a
player's stats, whose keys live in another slot than their games', counted once even
when a replica dies between the two steps of a game's end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
import websockets
from websockets.sync.client import connect

from tests.support.cluster import REDIS_CLI, RedisCluster, services_on
from tests.support.play import Api
from tests.support.solve import win


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster() as c:
        yield c


@pytest.fixture(scope="module")
def replicas(cluster: RedisCluster) -> Iterator[tuple[str, str]]:
    with services_on(cluster) as urls:
        yield urls


def keyslot(cluster: RedisCluster, key: str) -> int:
    out = subprocess.run(
        [REDIS_CLI, "-p", str(cluster.nodes[0].port), "cluster", "keyslot", key],
        capture_output=True, text=True, check=True,
    )
    return int(out.stdout.strip())


def test_a_game_lives_in_one_slot(cluster: RedisCluster, replicas: tuple[str, str]) -> None:
    a, _ = replicas
    created = httpx.post(f"{a}/games", json={"preset": "beginner"}, timeout=30).json()
    game_id = created["game"]["id"]
    auth = {"Authorization": f"Bearer {created['token']}", "Idempotency-Key": "one"}
    assert httpx.post(f"{a}/games/{game_id}/reveal", json={"x": 4, "y": 4}, headers=auth,
                      timeout=30).is_success
    keys = [f"ms:{{{game_id}}}:{suffix}" for suffix in ("game", "events", "idem:one", "live")]
    assert len({keyslot(cluster, k) for k in keys}) == 1


async def test_moves_on_one_replica_reach_subscribers_on_the_other(
    replicas: tuple[str, str],
) -> None:
    a, b = replicas
    async with httpx.AsyncClient(timeout=30) as http:
        created = (await http.post(f"{a}/games", json={"preset": "expert", "seed": 3})).json()
        game_id, token = created["game"]["id"], created["token"]
        ws_url = b.replace("http://", "ws://") + f"/games/{game_id}/events"
        async with websockets.connect(ws_url) as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "snapshot"
            auth = {"Authorization": f"Bearer {token}"}
            sent = []
            for x in range(5):
                cell = {"x": x, "y": 0}
                r = await http.post(f"{a}/games/{game_id}/flag", json=cell, headers=auth)
                sent.append(r.json())
            got = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in sent]
            assert [d["version"] for d in got] == [1, 2, 3, 4, 5]
            assert got == sent


def test_redis_6_keeps_classic_pub_sub(cluster: RedisCluster, replicas: tuple[str, str]) -> None:
    """The embedded Redis has no sharded pub/sub: both processes subscribe with SUBSCRIBE
    on the node in their URL, which the cluster relays every PUBLISH to."""
    a, b = replicas
    created = httpx.post(f"{a}/games", json={"preset": "beginner"}, timeout=30).json()
    game_id = created["game"]["id"]
    channel = f"ms:{{{game_id}}}:live"
    with contextlib.ExitStack() as watching:
        for url in (a, b):
            ws = watching.enter_context(
                connect(url.replace("http://", "ws://") + f"/games/{game_id}/events"))
            assert json.loads(ws.recv())["type"] == "snapshot"
        out = subprocess.run(
            [REDIS_CLI, "-p", str(cluster.nodes[0].port), "pubsub", "numsub", channel],
            capture_output=True, text=True, check=True,
        )
        assert out.stdout.split() == [channel, "2"]


def test_a_win_enters_the_leaderboard(replicas: tuple[str, str]) -> None:
    a, b = replicas
    with httpx.Client(base_url=a, timeout=30) as http:
        bot = Api(http).register(bot=True)
        won, _ = win(http, preset="beginner", player_token=bot.token)
    board = httpx.get(
        f"{b}/leaderboards/beginner", params={"limit": 100, "bot": "true"}, timeout=30
    ).json()
    assert won in [e["game_id"] for e in board["entries"]]


def test_rate_limits_are_shared_through_the_cluster(cluster: RedisCluster) -> None:
    with services_on(cluster, RATE_LIMIT="2") as (a, b):
        statuses = [
            httpx.get(f"{url}/games/{'0' * 32}", timeout=30).status_code for url in (a, b) * 15
        ]
    assert 429 in statuses
    assert set(statuses) <= {404, 429}


# ---- players ----------------------------------------------------------------------------------

AT_ONCE = {"preset": "beginner", "seed": 4711, "first_click": "none"}


def a_mine(http: httpx.Client) -> tuple[int, int]:
    """A mine of the AT_ONCE board, learnt by losing an anonymous twin."""
    api = Api(http)
    twin = api.create(**AT_ONCE)
    for y in range(9):
        for x in range(9):
            if api.reveal(twin, x, y)["status"] == "lost":
                return x, y
    raise AssertionError("a board revealed in full has ended")


def test_a_players_keys_and_their_games_live_in_other_slots(
    cluster: RedisCluster, replicas: tuple[str, str]
) -> None:
    a, _ = replicas
    with httpx.Client(base_url=a, timeout=30) as http:
        player = Api(http).register()
        game = Api(http).create(owner=player, preset="beginner")
    player_slot = keyslot(cluster, f"ms:{{p:{player.id}}}:player")
    assert player_slot == keyslot(cluster, f"ms:{{p:{player.id}}}:recent")
    assert player_slot != keyslot(cluster, f"ms:{{{game.id}}}:game")


def test_stats_are_counted_once_across_replicas(replicas: tuple[str, str]) -> None:
    a, b = replicas
    with httpx.Client(base_url=a, timeout=30) as ha, httpx.Client(base_url=b, timeout=30) as hb:
        x, y = a_mine(ha)
        player = Api(ha).register()
        games = [Api(ha).create(owner=player, **AT_ONCE) for _ in range(6)]
        for i, game in enumerate(games):
            http = (ha, hb)[i % 2]
            r = http.post(f"/games/{game.id}/reveal", json={"x": x, "y": y},
                          headers=player.auth)
            assert r.json()["status"] == "lost"
        for http in (ha, hb):
            view = Api(http).player(player)
            assert view["stats"]["beginner"]["classic"]["played"] == 6
            assert [r["id"] for r in view["recent"]] == [g.id for g in reversed(games)]
        # A bot's win is ranked on the bots' board from any replica.
        bot = Api(hb).register(bot=True)
        won, _ = win(hb, preset="beginner", player_token=bot.token)
        assert Api(ha).player(bot)["stats"]["beginner"]["classic"]["won"] == 1
        ranked = ha.get("/leaderboards/beginner", params={"limit": 100, "bot": "true"}).json()
        assert won in [e["game_id"] for e in ranked["entries"]]


async def test_a_replica_dying_between_the_two_steps_loses_nothing(
    cluster: RedisCluster, replicas: tuple[str, str]
) -> None:
    """The move service's own steps, run here against the cluster and stopped after the
    commit, as a replica that died there would: the next read of the player counts the
    game, and a second step that comes late, or twice, counts nothing more."""
    from service import engine, store, wire
    from service.api import endings, views
    from service.api.backends import Backends
    from service.config import Config

    a, b = replicas
    with httpx.Client(base_url=a, timeout=30) as http:
        x, y = a_mine(http)
        player = Api(http).register()
        game = Api(http).create(owner=player, **AT_ONCE)
        never = Api(http).create(owner=player, **AT_ONCE)
    redis = store.connect(cluster.url, cluster=True)
    try:
        games = store.GameStore(redis, ttl_seconds=3600, buckets=store.Buckets(redis))
        players = store.PlayerStore(redis, game_ttl_seconds=3600)
        backends = Backends(
            config=Config(), games=games, players=players,
            events=store.Events(store.Routing(cluster.url, redis)),
            leaderboards=store.Leaderboards(redis), rate_limits=None,  # type: ignore[arg-type]
            matches=store.MatchStore(redis, ttl_seconds=3600),
        )
        record = await games.load(game.id)
        now = int(time.time() * 1000)
        lost, cells = engine.reveal(record.game, x, y, now)
        assert lost.status == "lost"
        ending = await endings.prepare(backends, game.id, record, lost, now)
        assert ending is not None
        diff = wire.json_encoder.encode(
            views.diff(lost, views.played("reveal", x, y, now), cells, now)
        )
        assert await games.commit(
            game.id, record, lost, diff, **endings.commit_options(record, ending)
        ) is None, "committed"
        # The replica dies here: its second step never runs. The next read counts it.
        with httpx.Client(base_url=b, timeout=30) as http:
            view = Api(http).player(player)
        assert view["stats"]["beginner"]["classic"]["played"] == 1
        assert [r["id"] for r in view["recent"]] == [game.id]
        # The dead replica's step, had it come late, or sent twice: nothing more.
        assert not await players.count(player.id, game.id, ending.tally, now)
        assert not await players.count(player.id, game.id, ending.tally, now)
        # A game listed as ending whose commit never came is forgotten once it is old,
        # not counted.
        await players.mark_pending(player.id, never.id, now)
        with httpx.Client(base_url=a, timeout=30) as http:
            assert Api(http).player(player)["stats"]["beginner"]["classic"]["played"] == 1
            await players.recover(player.id, [never.id], now + store.players.PENDING_MS + 1)
            assert await redis.zscore(f"ms:{{p:{player.id}}}:pending", never.id) is None
            view = Api(http).player(player)
        assert view["stats"]["beginner"]["classic"]["played"] == 1
        assert [r["id"] for r in view["recent"]] == [game.id]
    finally:
        await redis.aclose()
