"""Nothing is left behind: sockets that come and go (closed, reset, refused), games'
and players' alike, release their subscriptions, connections and memory, and failing
requests (on games and on players) leave no keys in Redis. Each workload runs in
rounds; after the first round (pools warmed up) later rounds must not grow anything.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from typing import Any

import psutil
import redis
from websockets.asyncio.client import connect

from tests.support.load import Http, ws_url
from tests.support.rawws import RawSocket
from tests.support.servers import RedisServer, ServiceProcess, wait_for

# More rounds (LEAK_ROUNDS=12) show where memory levels off.
ROUNDS = int(os.environ.get("LEAK_ROUNDS", "3"))
CHURN = 160  # sockets a round
CHURN_WAYS = 8  # ways a socket ends, taken in turn


def process(svc: ServiceProcess) -> psutil.Process:
    assert svc.proc is not None
    return psutil.Process(svc.proc.pid)


def usage(svc: ServiceProcess, redis_port: int) -> dict[str, int]:
    p = process(svc)
    connections = p.net_connections(kind="tcp")
    return {
        "fds": p.num_fds(),
        "rss_mb": p.memory_info().rss // 2**20,
        "client_sockets": sum(1 for c in connections
                              if c.laddr and c.laddr.port == svc.port and c.raddr),
        "redis_sockets": sum(1 for c in connections if c.raddr and c.raddr.port == redis_port),
    }


def subscribers(svc: ServiceProcess) -> float:
    import urllib.request

    with urllib.request.urlopen(svc.url + "/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("ms_live_subscribers "):
                return float(line.split()[1])
    return 0.0


def player_ws_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://", 1) + "/players/me/events"


async def churn(svc: ServiceProcess, games: list[str], n: int, player_token: str) -> None:
    """``n`` sockets, games' and a player's, that end every way a socket can end."""

    async def one(i: int) -> None:
        game = games[i % len(games)]
        kind = i % CHURN_WAYS
        if kind == 0:  # read the snapshot, close properly
            async with connect(ws_url(svc.url, game)) as ws:
                await ws.recv()
        elif kind == 1:  # ask for history, leave before reading it
            async with connect(ws_url(svc.url, game, 0)):
                pass
        elif kind == 2:  # vanish with a TCP reset, no close frame
            raw = await asyncio.to_thread(RawSocket, "127.0.0.1", svc.port,
                                          f"/games/{game}/events")
            await asyncio.to_thread(raw.recv)
            raw.vanish()
        elif kind == 3:  # an unknown game: refused
            async with connect(ws_url(svc.url, secrets.token_hex(16))) as ws:
                await ws.recv()
        elif kind == 5:  # the player's socket: authenticated, read, closed
            async with connect(player_ws_url(svc.url)) as ws:
                await ws.send(json.dumps({"type": "auth", "token": player_token}))
                await ws.recv()
        elif kind == 6:  # the player's socket, a wrong token: refused
            async with connect(player_ws_url(svc.url)) as ws:
                await ws.send(json.dumps({"type": "auth", "token": "wrong"}))
                await ws.recv()
        elif kind == 7:  # the player's socket, gone before authenticating
            raw = await asyncio.to_thread(RawSocket, "127.0.0.1", svc.port, "/players/me/events")
            raw.vanish()
        else:  # a bad message, then gone
            async with connect(ws_url(svc.url, game)) as ws:
                await ws.recv()
                await ws.send("{")
                await ws.recv()

    for start in range(0, n, 25):
        await asyncio.gather(*(one(i) for i in range(start, min(n, start + 25))))


async def test_sockets_leave_nothing_behind(
    service: ServiceProcess, redis_server: RedisServer, figures: list[str]
) -> None:
    http = Http(service.url)
    games = []
    for _ in range(10):
        games.append((await http.post_json("/games", {"preset": "beginner"})).json()["game"]["id"])
    player_token = (await http.post_json("/players", {})).json()["token"]
    r = redis.Redis.from_url(redis_server.url)
    seen = []
    for _ in range(ROUNDS):
        await churn(service, games, CHURN, player_token)
        wait_for(lambda: subscribers(service) == 0, timeout=60, what="subscribers to go")
        wait_for(lambda: not r.pubsub_channels("ms:*"), timeout=60, what="channels to go")
        wait_for(lambda: usage(service, redis_server.port)["client_sockets"] <= 1, timeout=60,
                 what="client sockets to close")
        seen.append(usage(service, redis_server.port))
    figures.append(f"socket churn, {ROUNDS} rounds of {CHURN}: " + " -> ".join(
        f"{u['fds']} fds/{u['rss_mb']} MB" for u in seen))
    # Redis's connection pool keeps as many connections as were ever busy at once: the
    # first round grows it to about the churn's peak, and a later round may still set a
    # new peak by a few. A leak is tied to one way a socket ends, and each way comes
    # CHURN_WAYS times a round: it grows by that much round after round, past the slack.
    first, last = seen[min(1, len(seen) - 1)], seen[-1]
    slack = CHURN // CHURN_WAYS // 2
    assert last["fds"] <= first["fds"] + slack, seen
    assert last["redis_sockets"] <= first["redis_sockets"] + slack, seen
    assert last["rss_mb"] <= first["rss_mb"] + 16, seen
    await http.close()


async def test_failing_requests_leave_nothing_behind(
    service: ServiceProcess, redis_server: RedisServer, figures: list[str]
) -> None:
    http = Http(service.url)
    registered = (await http.post_json("/players", {})).json()
    name, player_token = registered["player"]["name"], registered["token"]
    created = (await http.post_json("/games", {"preset": "beginner"},
                                    {"Authorization": f"Bearer {player_token}"})).json()
    gid, token = created["game"]["id"], created["token"]
    r = redis.Redis.from_url(redis_server.url)
    keys_before = set(r.scan_iter("ms:*"))
    names_before = r.hgetall("ms:{names}:owners")
    seen = []
    for _ in range(ROUNDS):
        for i in range(300):
            kind = i % 12
            if kind >= 6:
                reply = await failing_player_request(http, kind, name, player_token)
                assert 400 <= reply.status < 500, reply.body
                continue
            if kind == 0:
                reply = await http.request("GET", f"/games/{secrets.token_hex(16)}")
            elif kind == 1:
                reply = await http.post_json(f"/games/{gid}/reveal", {"x": 99, "y": 0},
                                             {"Authorization": f"Bearer {token}",
                                              "Idempotency-Key": f"bad-{i}"})
            elif kind == 2:
                reply = await http.post_json(f"/games/{gid}/flag", {"x": 1, "y": 1},
                                             {"Authorization": "Bearer wrong",
                                              "Idempotency-Key": f"wrong-{i}"})
            elif kind == 3:
                reply = await http.request("POST", "/games", b"{" * 100)
            elif kind == 4:
                reply = await http.post_json("/games", {"width": 5000, "height": 5000,
                                                        "mines": 1})
            else:
                reply = await http.request("POST", f"/games/{gid}/chord", b"[]",
                                           {"Authorization": f"Bearer {token}"})
            assert 400 <= reply.status < 500, reply.body
        seen.append(usage(service, redis_server.port))
    # No failed request wrote anything: no idempotency record, no game, no stream, no
    # player, no name.
    assert set(r.scan_iter("ms:*")) == keys_before
    assert r.hgetall("ms:{names}:owners") == names_before
    view = (await http.request("GET", f"/games/{gid}")).json()
    assert view["version"] == 0 and view["stats"]["clicks"]["total"] == 0
    assert view["status"] == "ready" and not r.exists(f"ms:{{{gid}}}:events")
    figures.append(f"failing requests, {ROUNDS} rounds of 300: " + " -> ".join(
        f"{u['fds']} fds/{u['rss_mb']} MB" for u in seen))
    assert seen[-1]["fds"] <= seen[0]["fds"] + 3, seen
    assert seen[-1]["rss_mb"] <= seen[0]["rss_mb"] + 16, seen
    await http.close()


async def failing_player_request(http: Http, kind: int, name: str, token: str) -> Any:
    """A request on players that fails: unknown, unauthorised, invalid, or a name taken."""
    if kind == 6:
        return await http.request("GET", f"/players/{secrets.token_hex(16)}")
    if kind == 7:
        return await http.request("GET", "/players/me", b"",
                                  {"Authorization": f"Bearer {token}x"})
    if kind == 8:
        return await http.request("PATCH", "/players/me", b'{"name": "no spaces"}',
                                  {"Authorization": f"Bearer {token}",
                                   "Content-Type": "application/json"})
    if kind == 9:
        return await http.post_json("/players", {"name": name.upper()})
    if kind == 10:
        return await http.post_json("/players", {"name": "x", "bot": True})
    return await http.post_json("/games", {"preset": "beginner"},
                                {"Authorization": f"Bearer {token[:-2]}"})
