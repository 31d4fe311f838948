"""Live diffs across replicas: every subscriber sees every version once, in order, and
can resume with ``since`` without missing or repeating anything."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import redis.asyncio as aioredis

from tests.support.live import Watcher, replay, ws_url
from tests.support.play import Game, apply_cells, positions

TIMEOUT = httpx.Timeout(60.0)


async def create(c: httpx.AsyncClient, **body: Any) -> Game:
    r = await c.post("/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    return Game(data["game"]["id"], data["token"], data["game"])


async def move(c: httpx.AsyncClient, game: Game, action: str, x: int, y: int) -> dict[str, Any]:
    r = await c.post(f"/games/{game.id}/{action}", json={"x": x, "y": y}, headers=game.auth)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def versions(w: Watcher) -> list[int]:
    return [m["version"] for m in w.of("diff")]


async def test_moves_on_one_replica_reach_subscribers_on_the_other(
    replicas: tuple[str, str],
) -> None:
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=TIMEOUT) as ca, \
            httpx.AsyncClient(base_url=b, timeout=TIMEOUT) as cb:
        game = await create(ca, preset="expert")
        async with Watcher(ws_url(a, game.id)) as on_a, Watcher(ws_url(b, game.id)) as on_b:
            await on_a.next_of("snapshot")
            await on_b.next_of("snapshot")
            d1 = await move(cb, game, "flag", 0, 0)  # via B, seen on A
            d2 = await move(ca, game, "flag", 1, 0)  # via A, seen on B
            for w in (on_a, on_b):
                await w.until_version(2)
                assert w.of("diff") == [d1, d2]


async def test_twenty_movers_five_subscribers(replicas: tuple[str, str]) -> None:
    movers, toggles = 20, 5
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(
            httpx.AsyncClient(base_url=url, timeout=TIMEOUT)) for url in replicas]
        game = await create(clients[0], width=40, height=40, mines=300, seed=4242)
        watchers = [
            await stack.enter_async_context(Watcher(ws_url(replicas[i % 2], game.id)))
            for i in range(5)
        ]
        for w in watchers:
            await w.next_of("snapshot")
        first = await move(clients[1], game, "reveal", 20, 20)
        board = apply_cells(game.view["board"], first["cells"])
        hidden = sorted(positions(board, "#"))
        assert len(hidden) >= movers
        cells = hidden[:: len(hidden) // movers][:movers]

        async def http_mover(i: int, x: int, y: int) -> list[int]:
            c = clients[i % 2]
            return [(await move(c, game, "flag", x, y))["version"] for _ in range(toggles)]

        async def socket_mover(i: int, x: int, y: int) -> list[int]:
            # Some movers play over the socket: auth, then moves answered by a result.
            async with Watcher(ws_url(replicas[i % 2], game.id)) as w:
                await w.send({"type": "auth", "token": game.token})
                got = []
                for n in range(toggles):
                    request_id = f"m{i}-{n}"
                    await w.send({"type": "flag", "x": x, "y": y, "id": request_id})
                    await w.wait(lambda ms, r=request_id: any(
                        m.get("id") == r for m in ms if m["type"] in ("result", "error")))
                    answer = next(m for m in w.messages if m.get("id") == request_id)
                    assert answer["type"] == "result", answer
                    got.append(answer["diff"]["version"])
                return got

        results = await asyncio.gather(*[
            (socket_mover if i % 4 == 3 else http_mover)(i, x, y)
            for i, (x, y) in enumerate(cells)
        ])
        total = 1 + movers * toggles
        assert sorted(v for r in results for v in r) == list(range(2, total + 1))
        view = (await clients[0].get(f"/games/{game.id}")).json()
        assert view["version"] == total
        for w in watchers:
            await w.until_version(total)
        for w in watchers:
            assert w.messages[0]["type"] == "snapshot"
            assert w.messages[0]["game"]["version"] == 0
            assert versions(w) == list(range(1, total + 1))
            state = replay(w.messages)
            assert state == {k: view[k] for k in ("version", "status", "mines_left", "board")}
        # Each flagged an odd number of times: flagged at the end.
        assert positions(view["board"], "F") == set(cells)


async def test_reconnect_with_since_misses_nothing_and_repeats_nothing(
    replicas: tuple[str, str],
) -> None:
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=TIMEOUT) as c:
        game = await create(c, preset="expert")
        cells = [(x, y) for y in range(16) for x in range(30)]
        async with Watcher(ws_url(a, game.id)) as w:
            await w.next_of("snapshot")
            for x, y in cells[:10]:
                await move(c, game, "flag", x, y)
            await w.until_version(10)
            seen = w.version
        assert versions(w) == list(range(1, 11))
        # Moves while away.
        for x, y in cells[10:20]:
            await move(c, game, "flag", x, y)
        async with Watcher(ws_url(b, game.id, since=seen)) as back:
            await back.until_version(20)
            for x, y in cells[20:25]:  # then live again
                await move(c, game, "flag", x, y)
            await back.until_version(25)
            assert not back.of("snapshot")
            assert versions(back) == list(range(11, 26))
        # From the start: the whole game from the stream, no snapshot.
        async with Watcher(ws_url(a, game.id, since=0)) as full:
            await full.until_version(25)
            assert not full.of("snapshot") and versions(full) == list(range(1, 26))
            assert full.of("diff")[:10] == w.of("diff")
        # Up to date: nothing replayed, then live.
        async with Watcher(ws_url(b, game.id, since=25)) as now:
            await move(c, game, "flag", 0, 15)
            await now.until_version(26)
            assert [m["type"] for m in now.messages] == ["diff"]
            assert versions(now) == [26]
        # A version from the future gets a snapshot.
        async with Watcher(ws_url(a, game.id, since=999)) as future:
            snap = await future.next_of("snapshot")
            assert snap["game"]["version"] == 26


async def test_since_older_than_the_stream_gets_a_snapshot(
    live_server: str, redis_url: str
) -> None:
    async with httpx.AsyncClient(base_url=live_server, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner")
        for x in range(6):
            await move(c, game, "flag", x, 0)
        r = aioredis.Redis.from_url(redis_url)
        try:
            await r.xtrim(f"ms:{{{game.id}}}:events", minid="4-0", approximate=False)
        finally:
            await r.aclose()
        async with Watcher(ws_url(live_server, game.id, since=1)) as w:
            snap = await w.next_of("snapshot")
            assert snap["game"]["version"] == 6 and snap["game"]["board"][0] == "FFFFFF###"
            await move(c, game, "flag", 8, 8)
            await w.until_version(7)
            assert [m["type"] for m in w.messages] == ["snapshot", "diff"]
        # Versions still in the stream replay as usual.
        async with Watcher(ws_url(live_server, game.id, since=4)) as w:
            await w.until_version(7)
            assert not w.of("snapshot") and versions(w) == [5, 6, 7]


async def test_final_diff_reaches_subscribers_and_the_socket_stays_readable(
    live_server: str,
) -> None:
    async with httpx.AsyncClient(base_url=live_server, timeout=TIMEOUT) as c:
        # Everything but the start area is a mine: the first reveal wins.
        game = await create(c, width=5, height=5, mines=16, seed=1)
        async with Watcher(ws_url(live_server, game.id)) as w:
            await w.next_of("snapshot")
            final = await move(c, game, "reveal", 2, 2)
            assert final["status"] == "won"
            await w.until_version(1)
            assert w.of("diff") == [final]
            assert final["stats"] is not None and final["ended_at"] is not None
        async with Watcher(ws_url(live_server, game.id)) as late:
            snap = await late.next_of("snapshot")
            assert snap["game"]["status"] == "won"


async def test_resuming_with_since_reads_the_stream_not_the_snapshot(
    live_server: str, redis_url: str
) -> None:
    def snapshot_reads(info: dict[str, Any]) -> int:
        return int(info.get("cmdstat_hmget", {}).get("calls", 0))

    async with httpx.AsyncClient(base_url=live_server, timeout=TIMEOUT) as c:
        game = await create(c, preset="beginner")
        for x in range(3):
            await move(c, game, "flag", x, 0)
        r = aioredis.Redis.from_url(redis_url)
        try:
            before = snapshot_reads(await r.info("commandstats"))
            async with Watcher(ws_url(live_server, game.id, since=1)) as w:
                await w.until_version(3)
            resumed = snapshot_reads(await r.info("commandstats"))
            async with Watcher(ws_url(live_server, game.id)) as fresh:
                await fresh.next_of("snapshot")
            loaded = snapshot_reads(await r.info("commandstats"))
        finally:
            await r.aclose()
        assert versions(w) == [2, 3] and not w.of("snapshot")
        assert resumed == before
        assert loaded > resumed  # the check can tell: a snapshot is read with HMGET
