"""Soak: a steady load at half the measured capacity for a bounded time, watching the
memory of the API processes and of Redis, and the latency, minute by minute.

    python tests/bench/soak.py [--minutes 10] [--fraction 0.5] [--replicas 2]

Starts a redis-server and ``--replicas`` service processes, measures capacity (moves/s
of 64 closed-loop clients on 64 games for ``--probe`` seconds), then drives moves at
``--fraction`` of it, open loop (each move is sent at its scheduled time, and latency
counts from that time, so a stall cannot hide). The load plays 32 games at a time,
each replaced by a new game after 300 moves, with a WebSocket subscriber on each of
8 of them; the services run with GAME_TTL=120, so abandoned games expire and Redis
can reach a steady state. Each ``--interval`` a row is printed: moves/s, latency
p50/p99/max, errors, live messages delivered, the RSS of each API process, Redis
used_memory and RSS (INFO memory), its key count and the machine's load average.
At the end: flat or drift.
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import redis  # noqa: E402

from tests.support.load import (  # noqa: E402
    Http,
    KnownGame,
    create_known_game,
    percentile,
    pick_move,
    run_load,
    ws_url,
)
from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402

SLOTS = 32
WATCHED = 8
MOVES_PER_GAME = 300
GAME_TTL = 120


@dataclass
class Window:
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: int = 0
    live: int = 0


@dataclass
class Slot:
    game: KnownGame
    moves: int = 0


class Soak:
    def __init__(self, urls: list[str], rate: float, seed: int = 0) -> None:
        self.urls = urls
        self.rate = rate
        self.window = Window()
        self.slots: list[Slot] = []
        self.rng = random.Random(seed)
        self.stop = asyncio.Event()

    async def setup(self) -> None:
        http = Http(self.urls[0])
        for i in range(SLOTS):
            self.slots.append(Slot(await create_known_game(http, seed=50_000 + i)))
        await http.close()

    async def worker(self, index: int) -> None:
        """One slot's moves, at rate/SLOTS a second each, on schedule."""
        http = Http(self.urls[index % len(self.urls)], timeout=30)
        interval = SLOTS / self.rate
        scheduled = time.monotonic() + self.rng.uniform(0, interval)
        rng = random.Random(index)
        games = 0
        try:
            while not self.stop.is_set():
                delay = scheduled - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                slot = self.slots[index]
                if slot.moves >= MOVES_PER_GAME:
                    games += 1
                    slot.game = await create_known_game(http, seed=index * 100_000 + games)
                    slot.moves = 0
                action, body = pick_move(slot.game, rng)
                try:
                    reply = await http.post_json(f"/games/{slot.game.id}/{action}", body,
                                                 slot.game.auth)
                    w = self.window
                    w.statuses[reply.status] = w.statuses.get(reply.status, 0) + 1
                    w.latencies.append(time.monotonic() - scheduled)
                except (OSError, asyncio.IncompleteReadError, TimeoutError):
                    self.window.errors += 1
                slot.moves += 1
                scheduled += interval
        finally:
            await http.close()

    async def watcher(self, index: int) -> None:
        """A subscriber on a slot's game, following it to the next game."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        while not self.stop.is_set():
            game = self.slots[index].game
            try:
                async with connect(ws_url(self.urls[(index + 1) % len(self.urls)], game.id),
                                   max_size=2**24) as ws:
                    while not self.stop.is_set() and self.slots[index].game is game:
                        try:
                            message = await asyncio.wait_for(ws.recv(), 1.0)
                        except TimeoutError:
                            continue
                        if json.loads(message)["type"] == "diff":
                            self.window.live += 1
            except (OSError, WebSocketException):
                await asyncio.sleep(0.5)

    def take_window(self) -> Window:
        window, self.window = self.window, Window()
        return window


def rss_mb(svc: ServiceProcess) -> float:
    assert svc.proc is not None
    return psutil.Process(svc.proc.pid).memory_info().rss / 2**20


def trend(values: list[float]) -> float:
    """Least-squares slope per step."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--interval", type=float, default=60.0, help="seconds per row")
    parser.add_argument("--fraction", type=float, default=0.5, help="of measured capacity")
    parser.add_argument("--probe", type=float, default=20.0, help="seconds to measure capacity")
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()

    server = RedisServer().start()
    services: list[ServiceProcess] = []
    r = redis.Redis.from_url(server.url)
    try:
        for _ in range(args.replicas):
            services.append(ServiceProcess({"REDIS_URL": server.url,
                                            "GAME_TTL": str(GAME_TTL)}).start())
        urls = [s.url for s in services]

        http = Http(urls[0])
        probe_games = [await create_known_game(http, seed=i) for i in range(64)]
        await http.close()
        probe = await run_load(urls, probe_games, 64, args.probe)
        capacity = probe.rate()
        rate = capacity * args.fraction
        print(f"capacity: {capacity:.0f} moves/s (64 clients, 64 games, {args.replicas} "
              f"replicas, p99 {probe.latency_ms(99):.0f} ms); soak at {rate:.0f} moves/s "
              f"for {args.minutes:g} min\n")
        rss_names = " ".join(f"{'API' + str(i + 1) + ' MB':>8}" for i in range(len(services)))
        print(f"{'min':>5} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
              f"{'non-200':>7} {'errors':>6} {'live':>6} {rss_names} {'Redis MB':>8} "
              f"{'RSS MB':>7} {'keys':>6} {'load':>5}")

        soak = Soak(urls, rate)
        await soak.setup()
        tasks = [asyncio.create_task(soak.worker(i)) for i in range(SLOTS)]
        tasks += [asyncio.create_task(soak.watcher(i)) for i in range(WATCHED)]
        rows: list[dict[str, Any]] = []
        started = time.monotonic()
        end = started + args.minutes * 60
        next_row = started + args.interval
        while next_row <= end + 1e-6:
            await asyncio.sleep(max(0.0, next_row - time.monotonic()))
            w = soak.take_window()
            info: dict[str, Any] = r.info("memory")  # type: ignore[assignment]
            lat = [v * 1000 for v in w.latencies]
            row = {
                "minute": (next_row - started) / 60,
                "rate": len(lat) / args.interval,
                "p50": percentile(lat, 50), "p99": percentile(lat, 99),
                "max": max(lat, default=float("nan")),
                "bad": sum(n for s, n in w.statuses.items() if s != 200),
                "errors": w.errors, "live": w.live,
                "rss": [rss_mb(s) for s in services],
                "redis": info["used_memory"] / 2**20, "redis_rss": info["used_memory_rss"] / 2**20,
                "keys": r.dbsize(),
                # The machine's 1-minute load average: other work on it shows in the tails.
                "load": os.getloadavg()[0],
            }
            rows.append(row)
            rss_cells = " ".join(f"{v:>8.1f}" for v in row["rss"])
            print(f"{row['minute']:>5.1f} {row['rate']:>8.0f} {row['p50']:>7.1f} "
                  f"{row['p99']:>7.1f} {row['max']:>7.0f} {row['bad']:>7} {row['errors']:>6} "
                  f"{row['live']:>6} {rss_cells} {row['redis']:>8.1f} {row['redis_rss']:>7.1f} "
                  f"{row['keys']:>6} {row['load']:>5.1f}", flush=True)
            next_row += args.interval
        soak.stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        verdict(rows, args.interval)
    finally:
        for s in services:
            s.stop()
        server.cleanup()


def verdict(rows: list[dict[str, Any]], interval: float) -> None:
    """Flat or drift, judged after the first row (warm-up) and, for Redis, once
    abandoned games have had time to expire."""
    settled = rows[1:] if len(rows) > 2 else rows
    per_min = 60 / interval
    lines = []
    flat = True
    for i in range(len(rows[0]["rss"])):
        series = [row["rss"][i] for row in settled]
        slope = trend(series) * per_min
        growth = series[-1] - series[0]
        ok = growth < max(5.0, 0.05 * series[0])
        flat &= ok
        lines.append(f"API process {i + 1} RSS: {series[0]:.1f} -> {series[-1]:.1f} MB "
                     f"({slope:+.2f} MB/min) {'flat' if ok else 'DRIFT'}")
    ttl_rows = max(1, int(GAME_TTL * 1.5 / interval))
    redis_rows = rows[ttl_rows:] if len(rows) > ttl_rows + 1 else settled
    series = [row["redis"] for row in redis_rows]
    ok = series[-1] - min(series) < max(2.0, 0.1 * min(series))
    flat &= ok
    lines.append(f"Redis used_memory (from minute {redis_rows[0]['minute']:.0f}): "
                 f"{series[0]:.1f} -> {series[-1]:.1f} MB "
                 f"({trend(series) * per_min:+.2f} MB/min) {'flat' if ok else 'DRIFT'}")
    half = len(settled) // 2 or 1
    first = sorted(row["p99"] for row in settled[:half])[half // 2]
    second = sorted(row["p99"] for row in settled[half:])[len(settled[half:]) // 2]
    ok = second <= 1.5 * first + 5
    flat &= ok
    lines.append(f"p99 latency, first half vs second half (medians): {first:.1f} -> "
                 f"{second:.1f} ms {'flat' if ok else 'DRIFT'}")
    errors = sum(row["bad"] + row["errors"] for row in rows)
    lines.append(f"non-200 answers and connection errors: {errors}")
    print("\n" + "\n".join(lines))
    print(f"\nverdict: {'FLAT' if flat and not errors else 'DRIFT'}")


if __name__ == "__main__":
    asyncio.run(main())
