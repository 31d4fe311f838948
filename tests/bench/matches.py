"""Matches: moves and match-update delivery in simultaneous races; seek to ``matched``.

    python tests/bench/matches.py [--races 100] [--seekers 200]

Starts a redis-server and two service replicas on it (rate limits off). Then:

0. A baseline: as many players each play a game of no match, the same way.
1. ``--races`` 2-seat beginner races at once, seats and a spectator socket per race spread
   over both replicas. Every seat plays its board to the end (its mines read from Redis,
   as a bot that knows the board would); prints the move round trip p50/p99, and the
   delivery of match updates to the spectators, from the update's ``server_time`` (the
   commit) to receipt, p50/p99. Target: delivery p99 <= 100 ms.
2. ``--seekers`` players seek on one preset, a pair at a time: one waits (its player
   socket open), the other arrives and finds it waiting. Prints, for the arriving
   half, the seek's round trip (it answers ``matched``), and for the waiting half the time
   from their opponent's seek to the ``matched`` notice on their socket, p50/p99. Target:
   p99 <= 1 s.

Figures on a shared machine are noisy: compare runs made at the same time. Not collected
by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from service import engine, wire  # noqa: E402
from service.store import keys  # noqa: E402
from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402

LIMITS_OFF = {"RATE_LIMIT": "0", "MOVE_RATE_LIMIT": "0", "REGISTER_RATE_LIMIT": "0",
              "AUTH_FAILURE_LIMIT": "0", "MAX_SOCKETS_PER_CLIENT": "10000"}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else 0.0


def ws(url: str) -> str:
    return url.replace("http://", "ws://", 1)


# Requests in flight at once while setting up (the players and the joins).
SETUP = asyncio.Semaphore(16)  # made again in each run's loop
# Moves in flight at once, across all the races: every seat plays as fast as it can, and
# 200 requests at once would only measure the queue in front of two processes.
MOVING = asyncio.Semaphore(64)


async def register(http: httpx.AsyncClient) -> dict[str, Any]:
    async with SETUP:
        r = await http.post("/players", json={})
    r.raise_for_status()
    body: dict[str, Any] = r.json()
    return body


def auth(player: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {player['token']}"}


async def play_seat(http: httpx.AsyncClient, store: Any, player: dict[str, Any],
                    game_id: str, starts_ms: int, moves: list[float]) -> None:
    async with SETUP:
        snap = await store.hget(keys.game(game_id), "snap")
    game = engine.decode(snap)
    hidden = [i for i in range(game.width * game.height)
              if game.cells[i] == ord("#") and not game.is_mine(i)]
    await asyncio.sleep(max(0.0, starts_ms / 1000 - time.time()) + 0.05)
    for i in hidden:
        x, y = i % game.width, i // game.width
        async with MOVING:
            t0 = time.perf_counter()
            r = await http.post(f"/games/{game_id}/reveal", json={"x": x, "y": y},
                                headers=auth(player))
            moves.append((time.perf_counter() - t0) * 1000)
        r.raise_for_status()
        if r.json()["status"] != "playing":
            return


async def baseline(urls: list[str], redis_url: str, count: int) -> list[float]:
    """The same moves on games of no match: ``count`` x 2 players, one game each, made
    from one seed with the start opened as a match's are (a daily-like board)."""
    global SETUP, MOVING
    SETUP, MOVING = asyncio.Semaphore(16), asyncio.Semaphore(64)
    clients = [httpx.AsyncClient(base_url=u, timeout=60) for u in urls]
    store = aioredis.Redis.from_url(redis_url)
    moves: list[float] = []
    try:
        players = await asyncio.gather(*(register(clients[i % 2]) for i in range(2 * count)))

        async def one(i: int) -> None:
            player, http = players[i], clients[i % 2]
            async with SETUP:
                r = await http.post("/games", json={"preset": "beginner", "seed": i},
                                    headers=auth(player))
            r.raise_for_status()
            game_id = r.json()["game"]["id"]
            # The first reveal opens the board, as a match's start does.
            first = await http.post(f"/games/{game_id}/reveal", json={"x": 4, "y": 4},
                                    headers=auth(player))
            if first.json()["status"] == "playing":
                await play_seat(http, store, player, game_id, 0, moves)

        await asyncio.gather(*(one(i) for i in range(2 * count)))
        return moves
    finally:
        await store.aclose()
        for c in clients:
            await c.aclose()


async def spectate(url: str, match_id: str, delays: list[float], done: asyncio.Event) -> None:
    async with connect(f"{ws(url)}/matches/{match_id}/events") as sock:
        while True:
            message = json.loads(await sock.recv())
            if message["type"] != "match_update":
                continue
            received = time.time() * 1000
            delays.append(received - wire.milliseconds(message["match"]["server_time"]))
            if message["match"]["status"] == "finished":
                done.set()
                return


async def races(urls: list[str], redis_url: str, count: int) -> None:
    global SETUP, MOVING
    SETUP, MOVING = asyncio.Semaphore(16), asyncio.Semaphore(64)
    clients = [httpx.AsyncClient(base_url=u, timeout=60) for u in urls]
    store = aioredis.Redis.from_url(redis_url)
    try:
        players = await asyncio.gather(*(register(clients[i % 2]) for i in range(2 * count)))
        matches = []
        for i in range(count):
            a, b = players[2 * i], players[2 * i + 1]
            r = await clients[0].post("/matches", json={"mode": "race", "preset": "beginner",
                                                        "no_guess": False}, headers=auth(a))
            r.raise_for_status()
            matches.append((r.json()["match"]["id"], a, b))
        delays: list[float] = []
        moves: list[float] = []
        ends = [asyncio.Event() for _ in matches]
        watchers = [asyncio.create_task(spectate(urls[i % 2], m[0], delays, ends[i]))
                    for i, m in enumerate(matches)]
        await asyncio.sleep(1)
        async def join(match_id: str, player: dict[str, Any]) -> httpx.Response:
            async with SETUP:
                return await clients[1].post(f"/matches/{match_id}/join", headers=auth(player))

        joined = await asyncio.gather(*(join(m, b) for m, _, b in matches))
        seats = []
        for (match_id, a, b), answer in zip(matches, joined, strict=True):
            answer.raise_for_status()
            starts = wire.milliseconds(answer.json()["starts_at"])
            for k, player in enumerate((a, b)):
                view = (await clients[k].get(f"/matches/{match_id}", headers=auth(player))).json()
                game_id = next(s["game_id"] for s in view["seats"]
                               if s["player"]["id"] == player["player"]["id"])
                seats.append(play_seat(clients[k], store, player, game_id, starts, moves))
        t0 = time.perf_counter()
        await asyncio.gather(*seats)
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ends)), 120)
        elapsed = time.perf_counter() - t0
        for w in watchers:
            w.cancel()
        print(f"races: {count} at once, {len(moves)} moves in {elapsed:.1f} s")
        print(f"  move round trip      p50 {pct(moves, 50):7.1f} ms   p99 {pct(moves, 99):7.1f} ms")
        print(f"  match_update delivery p50 {pct(delays, 50):6.1f} ms   p99 "
              f"{pct(delays, 99):7.1f} ms   ({len(delays)} updates to spectators)")
    finally:
        await store.aclose()
        for c in clients:
            await c.aclose()


async def wait_matched(url: str, player: dict[str, Any], ready: asyncio.Event,
                       notices: dict[str, float]) -> None:
    async with connect(f"{ws(url)}/players/me/events") as sock:
        await sock.send(json.dumps({"type": "auth", "token": player["token"]}))
        while True:
            message = json.loads(await sock.recv())
            if message["type"] == "player":
                ready.set()
            elif message["type"] == "matched":
                notices[message["match_id"]] = time.perf_counter()
                return


async def seeking(urls: list[str], count: int) -> None:
    global SETUP
    SETUP = asyncio.Semaphore(16)
    clients = [httpx.AsyncClient(base_url=u, timeout=60) for u in urls]
    body = {"preset": "intermediate", "no_guess": False}
    try:
        players = await asyncio.gather(*(register(clients[i % 2]) for i in range(count)))
        half = count // 2
        notices: dict[str, float] = {}
        ready = [asyncio.Event() for _ in range(half)]
        sockets = [asyncio.create_task(wait_matched(urls[i % 2], players[i], ready[i], notices))
                   for i in range(half)]
        await asyncio.gather(*(e.wait() for e in ready))
        sent: dict[str, float] = {}
        round_trips: list[float] = []
        # One pair at a time, so that each arriving seek finds exactly one waiting.
        for i in range(half):
            r = await clients[i % 2].post("/seeks", json=body, headers=auth(players[i]))
            r.raise_for_status()
            assert r.json()["seek"]["status"] == "waiting", r.text
            t0 = time.perf_counter()
            r = await clients[(i + 1) % 2].post(
                "/seeks", json=body, headers=auth(players[half + i])
            )
            round_trips.append((time.perf_counter() - t0) * 1000)
            seek = r.json()["seek"]
            assert seek["status"] == "matched", r.text
            sent[seek["match_id"]] = t0
        await asyncio.wait_for(asyncio.gather(*sockets), 60)
        notice_ms = [(notices[m] - t) * 1000 for m, t in sent.items() if m in notices]
        print(f"matchmaking: {count} players, {len(sent)} pairs, each seek finding one waiting")
        print(f"  seek to matched (arriving)        p50 {pct(round_trips, 50):6.1f} ms   "
              f"p99 {pct(round_trips, 99):6.1f} ms")
        print(f"  seek to matched notice (waiting)  p50 {pct(notice_ms, 50):6.1f} ms   "
              f"p99 {pct(notice_ms, 99):6.1f} ms")
    finally:
        for c in clients:
            await c.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=100)
    parser.add_argument("--seekers", type=int, default=200)
    args = parser.parse_args()
    server = RedisServer().start()
    services: list[ServiceProcess] = []
    try:
        for _ in range(2):
            services.append(ServiceProcess({"REDIS_URL": server.url, **LIMITS_OFF}).start())
        urls = [s.url for s in services]
        plain = asyncio.run(baseline(urls, server.url, args.races))
        print(f"baseline: {len(plain)} moves on {2 * args.races} games of no match, 64 in flight")
        print(f"  move round trip      p50 {pct(plain, 50):7.1f} ms   p99 {pct(plain, 99):7.1f} ms")
        asyncio.run(races(urls, server.url, args.races))
        asyncio.run(seeking(urls, args.seekers))
    finally:
        for s in services:
            s.stop()
        server.cleanup()


if __name__ == "__main__":
    main()
