"""Every feature on a real three-master Redis Cluster, across two API processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest
import websockets

from tests.support.cluster import REDIS_CLI, RedisCluster
from tests.support.play import Api
from tests.support.servers import ServiceProcess
from tests.support.solve import win


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    c = RedisCluster().start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def replicas(cluster: RedisCluster) -> Iterator[tuple[str, str]]:
    env = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "1"}
    a, b = ServiceProcess(env).start(), ServiceProcess(env).start()
    try:
        yield a.url, b.url
    finally:
        a.stop()
        b.stop()


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
    env = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "1", "RATE_LIMIT": "2"}
    a, b = ServiceProcess(env).start(), ServiceProcess(env).start()
    try:
        statuses = [
            httpx.get(f"{url}/games/{'0' * 32}", timeout=30).status_code
            for url in (a.url, b.url) * 15
        ]
    finally:
        a.stop()
        b.stop()
    assert 429 in statuses
    assert set(statuses) <= {404, 429}
