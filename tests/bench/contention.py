"""Concurrent clients on one game, and on one game each: throughput, latency, and proof
that no update was lost.

    python tests/bench/contention.py [--seconds 30] [--clients 64] [--replicas 2]

Starts a redis-server and ``--replicas`` service processes (``python -m service``)
on it, then runs two scenarios, each for ``--seconds``: ``--clients`` keep-alive
clients moving on one shared expert game, spread over the replicas, and the same
number of clients each on a game of its own. Every move is one that cannot end the
game (a reveal of a safe cell, a flag), so every accepted move that changed the board
must have its own version, the versions must run without a gap, and replaying the
game's event stream onto a hidden board must give the stored board. Prints moves/s,
p50/p99/max latency and the status counts, then the checks. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from tests.support.load import (  # noqa: E402
    Http,
    Outcome,
    assert_acknowledged_kept,
    assert_stream_replays,
    assert_versions_contiguous,
    create_known_game,
    run_load,
)
from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402


def report(name: str, out: Outcome) -> None:
    print(f"{name:<28} {len(out.ok()):>8} {out.rate():>9.0f} {out.latency_ms(50):>8.1f} "
          f"{out.latency_ms(99):>8.1f} {out.latency_ms(100):>8.1f}  {out.statuses()} "
          f"{len(out.errors)} connection errors")


async def scenario(urls: list[str], r: redis.Redis, clients: int, seconds: float,
                   shared: bool) -> Outcome:
    http = Http(urls[0])
    count = 1 if shared else clients
    games = [await create_known_game(http, seed=10_000 + i) for i in range(count)]
    await http.close()
    out = await run_load(urls, games, clients, seconds)
    for game in games:
        stored = assert_stream_replays(r, game.id)
        assert_versions_contiguous([s for s in out.samples if s.game == game.id],
                                   stored.version, first=2)
    assert_acknowledged_kept(out.samples, r)
    assert not out.errors and set(out.statuses()) == {200}, out.statuses()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()

    server = RedisServer().start()
    services = []
    try:
        for _ in range(args.replicas):
            services.append(ServiceProcess({"REDIS_URL": server.url}).start())
        urls = [s.url for s in services]
        r = redis.Redis.from_url(server.url)
        print(f"{args.clients} clients, {args.replicas} replicas, {args.seconds:.0f} s each\n")
        print(f"{'scenario':<28} {'moves':>8} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'max ms':>8}  statuses")
        one = await scenario(urls, r, args.clients, args.seconds, shared=True)
        report("one shared game", one)
        many = await scenario(urls, r, args.clients, args.seconds, shared=False)
        report(f"{args.clients} games, one each", many)
        print("\nno lost update: versions unique and contiguous on every game, every "
              "acknowledged move in the stream, every stream replays to its board")
    finally:
        for s in services:
            s.stop()
        server.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
