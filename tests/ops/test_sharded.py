"""Sharded pub/sub on a real Redis 7 Cluster (three primaries with a replica each), across
two API processes: diffs are published with SPUBLISH and each process listens on every
shard, a channel whose slot moves follows it, and a primary's failover resumes the
subscriptions. Every subscriber gets every version exactly once, in order. In every one
of the cluster's slots, one replica's commits reach the other replica's listener; a
player's socket hears what the other replica publishes for them; and a race paired and
played through one replica is heard, update by update, on the other."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import msgspec
import pytest
import redis.asyncio
import redis.cluster
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from websockets.sync.client import ClientConnection, connect

from service import engine, store
from service.store import keys
from tests.matches.conftest import Seat, play_to_win, wait_until_started
from tests.support.cluster import RedisCluster, services_on
from tests.support.live import Watcher, ws_url
from tests.support.play import Api, unique_name
from tests.support.servers import REDIS_7, RedisServer, ServiceProcess, free_port, wait_for

pytestmark = pytest.mark.skipif(not os.path.exists(REDIS_7), reason=f"no Redis 7 at {REDIS_7}")

TIMEOUT = httpx.Timeout(30.0)
REDIS_7_CLI = str(Path(REDIS_7).with_name("redis-cli"))
T = TypeVar("T")


@dataclass
class Node:
    id: str
    port: int
    primary: bool
    primary_id: str
    slots: list[tuple[int, int]]


def live_port(cluster: RedisCluster) -> int:
    return next(n.port for n in cluster.nodes if n.proc and n.proc.poll() is None)


def nodes(cluster: RedisCluster, port: int | None = None) -> list[Node]:
    """CLUSTER NODES as one live node sees it."""
    port = port or live_port(cluster)
    found = []
    for line in cluster.cli_run(port, "cluster", "nodes").splitlines():
        fields = line.split()
        if "fail" in fields[2].split(","):
            continue
        slots = []
        for part in fields[8:]:
            if part[0].isdigit():
                low, _, high = part.partition("-")
                slots.append((int(low), int(high or low)))
        found.append(Node(fields[0], int(fields[1].split("@")[0].rsplit(":", 1)[1]),
                          "master" in fields[2], fields[3], slots))
    return found


def owner(cluster: RedisCluster, slot: int, port: int | None = None) -> Node:
    return next(n for n in nodes(cluster, port) if n.primary
                and any(low <= slot <= high for low, high in n.slots))


def slot_of(cluster: RedisCluster, game_id: str) -> int:
    return int(cluster.cli_run(live_port(cluster), "cluster", "keyslot",
                               f"ms:{{{game_id}}}:live").strip())


def replicated(cluster: RedisCluster, port: int) -> bool:
    """Whether the primary at ``port`` has a replica with every write it has."""
    info = dict(line.split(":", 1) for line in
                cluster.cli_run(port, "info", "replication").splitlines() if ":" in line)
    offsets = [dict(kv.split("=") for kv in info[k].split(","))["offset"]
               for k in info if k.startswith("slave")]
    return info["master_repl_offset"] in offsets


def server(cluster: RedisCluster, port: int) -> RedisServer:
    return next(n for n in cluster.nodes if n.port == port)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster(replicas=1, executable=REDIS_7) as c:
        yield c


@pytest.fixture(scope="module")
def replicas(cluster: RedisCluster) -> Iterator[tuple[str, str]]:
    with services_on(cluster) as urls:
        yield urls


@dataclass
class LiveGame:
    id: str
    auth: dict[str, str]
    moves: int = 0


class Play:
    """Games moved on over one replica and watched from both."""

    def __init__(self, replicas: tuple[str, str]) -> None:
        self.a, self.b = replicas
        self.http = httpx.AsyncClient(base_url=self.a, timeout=TIMEOUT)
        self.games: list[LiveGame] = []
        self.watchers: list[tuple[LiveGame, Watcher]] = []

    async def create(self) -> LiveGame:
        r = await self.http.post("/games", json={"preset": "expert"})
        assert r.status_code == 201, r.text
        data = r.json()
        game = LiveGame(data["game"]["id"], {"Authorization": f"Bearer {data['token']}"})
        self.games.append(game)
        return game

    async def watch(self, game: LiveGame) -> None:
        for url in (self.a, self.b):
            w = await Watcher(ws_url(url, game.id)).__aenter__()
            self.watchers.append((game, w))
            await w.next_of("snapshot")

    async def move(self, game: LiveGame, deadline: float = 60) -> None:
        """A flag toggle, tried until it is answered (a shard failing over answers 503)."""
        cell = {"x": game.moves % 30, "y": 0}
        stop = time.monotonic() + deadline
        while True:
            r = await self.http.post(f"/games/{game.id}/flag", json=cell, headers=game.auth)
            if r.status_code == 200:
                game.moves += 1
                return
            assert r.status_code == 503 and time.monotonic() < stop, r.text
            await asyncio.sleep(0.2)

    async def move_all(self, rounds: int = 1) -> None:
        for _ in range(rounds):
            await asyncio.gather(*(self.move(g) for g in self.games))

    async def assert_every_version_once(self) -> None:
        for game, w in self.watchers:
            version = (await self.http.get(f"/games/{game.id}")).json()["version"]
            await w.until_version(version)
            got = [m["version"] for m in w.of("diff")]
            assert got == list(range(1, version + 1)), (game.id, w.url, got)

    async def close(self) -> None:
        for _, w in self.watchers:
            await w.close()
        await self.http.aclose()


@pytest.fixture
async def play(replicas: tuple[str, str]) -> AsyncIterator[Play]:
    p = Play(replicas)
    try:
        yield p
    finally:
        await p.close()


async def games_on_every_shard(cluster: RedisCluster, play: Play, each: int = 2) -> None:
    """Games until every primary serves ``each`` of them."""
    primaries = {n.id for n in nodes(cluster) if n.primary}
    count = dict.fromkeys(primaries, 0)
    while min(count.values()) < each:
        game = await play.create()
        count[owner(cluster, slot_of(cluster, game.id)).id] += 1


async def test_diffs_travel_on_the_games_shard(cluster: RedisCluster, play: Play) -> None:
    game = await play.create()
    await play.watch(game)
    node = owner(cluster, slot_of(cluster, game.id))
    channel = f"ms:{{{game.id}}}:live"
    # Both API processes listen on the game's shard, with SSUBSCRIBE, and on nothing else.
    assert cluster.cli_run(node.port, "pubsub", "shardnumsub", channel).split() == [channel, "2"]
    for n in cluster.nodes:
        assert cluster.cli_run(n.port, "pubsub", "numsub", channel).split() == [channel, "0"]
    await play.move_all(3)
    await play.assert_every_version_once()


async def test_moves_on_every_shard_reach_subscribers_on_the_other_replica(
    cluster: RedisCluster, play: Play
) -> None:
    await games_on_every_shard(cluster, play)
    for game in play.games:
        await play.watch(game)
    await play.move_all(4)
    await play.assert_every_version_once()


async def test_a_channel_follows_its_slot_to_another_shard(
    cluster: RedisCluster, play: Play
) -> None:
    game = await play.create()
    await play.watch(game)
    await play.move_all(3)
    slot = slot_of(cluster, game.id)
    source = owner(cluster, slot)
    target = next(n for n in nodes(cluster) if n.primary and n.id != source.id)
    # Moved by hand, as a resharding moves it: importing, migrating, keys, then the owner.
    cluster.cli_run(target.port, "cluster", "setslot", str(slot), "importing", source.id)
    cluster.cli_run(source.port, "cluster", "setslot", str(slot), "migrating", target.id)
    keys = cluster.cli_run(source.port, "cluster", "getkeysinslot", str(slot), "100").split()
    assert keys
    cluster.cli_run(source.port, "migrate", "127.0.0.1", str(target.port), "", "0", "5000",
                    "keys", *keys)
    for n in nodes(cluster):
        if n.primary:
            cluster.cli_run(n.port, "cluster", "setslot", str(slot), "node", target.id)
    assert owner(cluster, slot).id == target.id
    await play.move_all(5)
    await play.assert_every_version_once()
    # The old shard no longer carries the channel; the new one does, for both processes.
    channel = f"ms:{{{game.id}}}:live"
    for n, listeners in ((source, "0"), (target, "2")):
        assert cluster.cli_run(n.port, "pubsub", "shardnumsub", channel).split() == [
            channel, listeners]


def test_a_players_socket_hears_changes_made_on_the_other_replica(
    cluster: RedisCluster, replicas: tuple[str, str]
) -> None:
    a, b = replicas
    with httpx.Client(base_url=a, timeout=TIMEOUT) as http:
        player = Api(http).register()
        with connect(b.replace("http://", "ws://") + "/players/me/events",
                     open_timeout=30) as ws:
            ws.send(json.dumps({"type": "auth", "token": player.token}))
            assert json.loads(ws.recv(timeout=30))["type"] == "player"
            channel = f"ms:{{p:{player.id}}}:live"
            port = owner(cluster, int(cluster.cli_run(
                live_port(cluster), "cluster", "keyslot", channel).strip())).port
            assert cluster.cli_run(port, "pubsub", "shardnumsub", channel).split() == [
                channel, "1"]
            name = unique_name("sharded")
            assert http.patch("/players/me", json={"name": name}, headers=player.auth).is_success
            while (message := json.loads(ws.recv(timeout=30)))["type"] == "heartbeat":
                pass
            assert message["type"] == "player" and message["player"]["name"] == name


async def test_a_replica_started_before_redis_learns_its_pub_sub_when_redis_answers() -> None:
    port = free_port()
    svc = ServiceProcess({"REDIS_URL": f"redis://127.0.0.1:{port}/0"}).start(ready="/healthz")
    server = RedisServer(port, executable=REDIS_7)
    try:
        async with httpx.AsyncClient(base_url=svc.url, timeout=TIMEOUT) as http:
            assert (await http.get("/readyz")).status_code == 503
            assert (await http.post("/games", json={"preset": "beginner"})).status_code == 503
            server.start()
            wait_for(lambda: httpx.get(f"{svc.url}/readyz").status_code == 200,
                     what="ready once Redis answers")
            created = (await http.post("/games", json={"preset": "beginner"})).json()
            game_id = created["game"]["id"]
            async with Watcher(ws_url(svc.url, game_id)) as w:
                await w.next_of("snapshot")
                auth = {"Authorization": f"Bearer {created['token']}"}
                r = await http.post(f"/games/{game_id}/flag", json={"x": 0, "y": 0},
                                    headers=auth)
                assert r.status_code == 200
                await w.until_version(1)
                channel = f"ms:{{{game_id}}}:live"
                shard_listeners = subprocess.run(
                    [REDIS_7_CLI, "-p", str(port), "pubsub", "shardnumsub", channel],
                    capture_output=True, text=True, check=True).stdout.split()
                assert shard_listeners == [channel, "1"]
    finally:
        svc.stop()
        server.cleanup()


async def test_a_primary_fails_over_and_subscriptions_resume(
    cluster: RedisCluster, play: Play
) -> None:
    await games_on_every_shard(cluster, play, each=1)
    for game in play.games:
        await play.watch(game)
    await play.move_all(2)
    await play.assert_every_version_once()
    # The shard of the first game loses its primary, once its replica has every write.
    failing = owner(cluster, slot_of(cluster, play.games[0].id))
    survivor = next(n for n in cluster.nodes if n.port != failing.port)
    wait_for(lambda: replicated(cluster, failing.port), what="the replica to catch up")
    proc = server(cluster, failing.port).proc
    assert proc is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    # Moves meanwhile wait for the replica to take over (503 until then).
    await play.move_all(3)
    promoted = owner(cluster, slot_of(cluster, play.games[0].id), survivor.port)
    assert promoted.port != failing.port
    await play.assert_every_version_once()
    # Both processes listen on the promoted replica now.
    channel = f"ms:{{{play.games[0].id}}}:live"
    assert cluster.cli_run(promoted.port, "pubsub", "shardnumsub", channel).split() == [
        channel, "2"]


class Replica:
    """What one API process holds for live messages: its own connections to the cluster,
    the store whose scripts publish, and the listener."""

    def __init__(self, url: str) -> None:
        # The service's client but for a long command timeout: thousands of commands on a
        # loaded machine, and what is tested is where messages go, not how fast.
        self.redis = redis.asyncio.RedisCluster.from_url(url, socket_timeout=60)
        self.routing = store.Routing(url, self.redis)
        self.games = store.GameStore(self.redis, ttl_seconds=600,
                                     buckets=store.Buckets(self.redis), routing=self.routing)
        self.events = store.Events(self.routing)

    async def aclose(self) -> None:
        await self.events.stop()
        await self.routing.aclose()
        await self.redis.aclose()


def a_game_in_every_slot() -> list[str]:
    """Game ids whose channels cover every slot, one each."""
    found: dict[int, str] = {}
    while len(found) < REDIS_CLUSTER_HASH_SLOTS:
        game_id = secrets.token_hex(16)
        found.setdefault(key_slot(keys.channel(game_id).encode()), game_id)
    return [found[slot] for slot in range(REDIS_CLUSTER_HASH_SLOTS)]


def version_of(data: bytes) -> tuple[str, int]:
    head = msgspec.json.decode(data)
    return head["game"], head["version"]


async def each(ids: list[str], call: Callable[[str], Awaitable[T]], at_once: int = 16) -> list[T]:
    """``call`` for every id, a few at a time (as many as the pools' connections allow)."""
    done: list[T] = []
    for start in range(0, len(ids), at_once):
        done += await asyncio.gather(*map(call, ids[start:start + at_once]))
    return done


async def test_commits_in_every_slot_reach_the_other_replica_once(
    cluster: RedisCluster,
) -> None:
    ids = a_game_in_every_slot()
    fresh = engine.new_game(engine.preset("beginner"), seed=1, now_ms=0)
    # Any live node (a failover before may have taken the first).
    url = f"redis://127.0.0.1:{live_port(cluster)}/0"
    writer, reader = Replica(url), Replica(url)
    try:
        await asyncio.gather(writer.routing.learn(), reader.routing.learn())
        assert writer.routing.publish == "SPUBLISH"
        await each(ids, lambda i: writer.games.create(i, fresh, b"", None))
        async with contextlib.AsyncExitStack() as subscribed:
            subs = await each(ids, lambda i: subscribed.enter_async_context(
                reader.events.subscribe(keys.channel(i), version_of)))

            async def commit_everywhere(version: int) -> None:
                game = msgspec.structs.replace(fresh, version=version)

                async def commit(game_id: str) -> store.Record | None:
                    record = await writer.games.load(game_id)
                    diff = msgspec.json.encode({"game": game_id, "version": version})
                    return await writer.games.commit(game_id, record, game, diff)

                # None: committed.
                assert await each(ids, commit) == [None] * len(ids)

            # Two versions each: a message delivered twice would show before the second.
            await commit_everywhere(1)
            await commit_everywhere(2)
            for game_id, sub in zip(ids, subs, strict=True):
                got = [(await sub.queue.get()).head for _ in range(2)]
                assert got == [(game_id, 1), (game_id, 2)]
                assert sub.queue.empty() and not sub.overflowed.is_set()
        # Unsubscribed from every one, on whichever primary carried it.
        channels = {keys.channel(i) for i in ids}
        for node in nodes(cluster):
            if node.primary:
                left = cluster.cli_run(node.port, "pubsub", "shardchannels").split()
                assert not channels.intersection(left)
    finally:
        await writer.aclose()
        await reader.aclose()


def heard(ws: ClientConnection, within: float = 60) -> dict[str, Any]:
    """The socket's next message but heartbeats, which keep coming while nothing else
    does: a message that never comes fails here rather than waits for ever."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        message: dict[str, Any] = json.loads(ws.recv(timeout=within))
        if message["type"] != "heartbeat":
            return message
    raise AssertionError("only heartbeats arrived")


def test_a_race_paired_and_played_on_one_replica_is_heard_on_the_other(
    cluster: RedisCluster, replicas: tuple[str, str]
) -> None:
    a, b = replicas
    body = {"preset": "beginner", "no_guess": False}
    with httpx.Client(base_url=a, timeout=TIMEOUT) as via_a, \
            httpx.Client(base_url=b, timeout=TIMEOUT) as via_b:
        api_a, api_b = Api(via_a), Api(via_b)
        alice, bob = api_a.register(), api_b.register()
        with connect(b.replace("http://", "ws://") + "/players/me/events",
                     open_timeout=30) as bobs:
            bobs.send(json.dumps({"type": "auth", "token": bob.token}))
            assert heard(bobs)["type"] == "player"
            waiting = via_b.post("/seeks", json=body, headers=bob.auth)
            assert waiting.status_code == 201 and waiting.json()["seek"]["status"] == "waiting"
            # Alice's seek pairs on replica a, which makes the match and tells both players.
            paired = via_a.post("/seeks", json=body, headers=alice.auth)
            assert paired.status_code == 201, paired.text
            seek = paired.json()["seek"]
            assert seek["status"] == "matched"
            match_id = seek["match_id"]
            while (notice := heard(bobs))["type"] != "matched":
                pass
            assert notice == {"type": "matched", "match_id": match_id}

        with connect(f"{b.replace('http://', 'ws://')}/matches/{match_id}/events",
                     open_timeout=30) as spectator:
            first = heard(spectator)
            assert first["type"] == "match" and first["match"]["id"] == match_id
            seen = first["match"]["version"]
            view = api_a.client.get(f"/matches/{match_id}").json()
            wait_until_started(api_a, view)
            seats = []
            for player in (alice, bob):
                mine = api_a.client.get(f"/matches/{match_id}", headers=player.auth).json()
                game_id = next(s["game_id"] for s in mine["seats"]
                               if s["player"]["id"] == player.id)
                seats.append(Seat(api_a, player, game_id))
            # Both boards are one board: its mines, read from the first seat's game.
            with redis.cluster.RedisCluster.from_url(
                f"redis://127.0.0.1:{live_port(cluster)}/0"
            ) as direct:
                snap = direct.hget(keys.game(seats[0].game_id), "snap")
            game = engine.decode(snap)  # type: ignore[arg-type]
            mines = {(i % game.width, i // game.width)
                     for i in range(game.width * game.height) if game.is_mine(i)}
            for seat in seats:
                assert play_to_win(seat, mines)["status"] == "won"

            # Every update the moves made through replica a, on replica b, once and in order.
            versions, seated = [], set()
            while True:
                message = heard(spectator)
                assert message["type"] == "match_update", message
                versions.append(message["version"])
                if message["seat"] is not None:
                    seated.add(message["seat"])
                if message["match"]["status"] == "finished":
                    break
            assert versions == list(range(seen + 1, seen + 1 + len(versions)))
            assert seated == {0, 1}
            done = api_b.client.get(f"/matches/{match_id}").json()
            assert done["status"] == "finished" and done["version"] == versions[-1]
            assert all(s["status"] == "won" for s in done["seats"])
