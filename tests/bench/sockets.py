"""Open sockets on one replica: the memory each costs and the CPU they take while idle.

    python tests/bench/sockets.py [--steps 2000 5000] [--per-game 1] [--idle 30] [--no-deflate]

Starts a redis-server and one service replica (``python -m service``, one process),
creates one expert game per ``--per-game`` sockets, then from a separate client process
opens WebSocket subscribers to those games (``/games/{id}/events``, each waits for its
snapshot) up to each of ``--steps`` in turn. At each step it waits for the replica to
settle and prints its RSS (the replica's process tree, Redis not included), the RSS
per open socket against the same replica before any socket was open (after a warm-up
of a few sockets opened and closed), and the replica's CPU over ``--idle`` seconds of
quiet (heartbeats only: keep ``--idle`` above HEARTBEAT_SECONDS, 15 s by default).

Subscribers offer permessage-deflate, as browsers do; ``--no-deflate`` measures sockets
without it. Every socket is a file descriptor on both sides: the script raises its soft
limit to the hard limit (the service and the clients inherit it) and says so if that
caps the largest step. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402

# Descriptors the service needs besides its sockets: Redis connections, logs, epoll...
SPARE_FDS = 200


def raise_fd_limit(wanted: int) -> tuple[int, int]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def _clients(port: int, games: list[str], deflate: bool, commands: Any) -> None:
    """The client process: on ("open", n) opens sockets up to n and answers how many are
    open; on ("close",) closes them all and ends."""
    from websockets.asyncio.client import connect

    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()

    open_sockets: list[Any] = []
    readers: list[asyncio.Task[None]] = []

    async def drain(ws: Any) -> None:
        with contextlib.suppress(Exception):
            async for _ in ws:
                pass

    async def one(n: int, gate: asyncio.Semaphore) -> None:
        async with gate:
            ws = await connect(
                f"ws://127.0.0.1:{port}/games/{games[n % len(games)]}/events",
                open_timeout=120, ping_interval=None, max_size=None,
                compression="deflate" if deflate else None,
            )
            first = await ws.recv()
            assert '"snapshot"' in (first if isinstance(first, str) else first.decode())
        open_sockets.append(ws)
        readers.append(asyncio.create_task(drain(ws)))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        while True:
            command = await loop.run_in_executor(None, commands.recv)
            if command[0] == "open":
                gate = asyncio.Semaphore(64)
                start = len(open_sockets)
                await asyncio.gather(*[one(n, gate) for n in range(start, command[1])])
                commands.send(len(open_sockets))
            else:
                await asyncio.gather(*[ws.close() for ws in open_sockets],
                                     return_exceptions=True)
                for t in readers:
                    t.cancel()
                commands.send(0)
                return

    asyncio.run(run())


def tree(pid: int) -> list[psutil.Process]:
    """The replica's processes, without the Redis it may have started."""
    root = psutil.Process(pid)
    return [p for p in [root, *root.children(recursive=True)] if "redis" not in p.name()]


def rss(pid: int) -> int:
    return sum(p.memory_info().rss for p in tree(pid))


def cpu_seconds(pid: int) -> float:
    return sum(sum(p.cpu_times()[:2]) for p in tree(pid))


def settle(pid: int, seconds: float = 3.0) -> int:
    """RSS once it stops moving (or after a while): sockets' buffers are allocated lazily."""
    last = rss(pid)
    for _ in range(10):
        time.sleep(seconds)
        now = rss(pid)
        if abs(now - last) < 256 * 1024:
            return now
        last = now
    return last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--per-game", type=int, default=1,
                        help="sockets on each game (1: every socket its own game)")
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--no-deflate", action="store_true")
    args = parser.parse_args()

    soft, hard = raise_fd_limit(max(args.steps) + SPARE_FDS)
    steps = sorted(args.steps)
    capped = [s for s in steps if s + SPARE_FDS > soft]
    if capped:
        steps = [s for s in steps if s not in capped] + [soft - SPARE_FDS]
        print(f"file-descriptor limit {soft} (hard {hard}): largest step capped at "
              f"{steps[-1]} sockets")

    import httpx

    server = RedisServer().start()
    svc = None
    commands, theirs = mp.Pipe()
    client = None
    rows: list[dict[str, Any]] = []
    try:
        svc = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "warning"}).start()
        assert svc.proc is not None
        pid = svc.proc.pid
        count = -(-steps[-1] // args.per_game)
        with httpx.Client(base_url=svc.url, timeout=30) as c:
            games = [c.post("/games", json={"preset": "expert"}).json()["game"]["id"]
                     for _ in range(count)]
        client = mp.Process(target=_clients, args=(svc.port, games, not args.no_deflate, theirs))
        client.start()
        # Warm-up: what the first sockets load or allocate once is not a cost per socket.
        commands.send(("open", 50))
        commands.recv()
        commands.send(("close",))
        commands.recv()
        client.join(30)
        client = mp.Process(target=_clients, args=(svc.port, games, not args.no_deflate, theirs))
        client.start()
        base = settle(pid)
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(args.idle)
        rows.append({"sockets": 0, "rss": base,
                     "cpu": (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)})
        for step in steps:
            started = time.monotonic()
            commands.send(("open", step))
            opened = commands.recv()
            connect_s = time.monotonic() - started
            now = settle(pid)
            cpu0, t0 = cpu_seconds(pid), time.monotonic()
            time.sleep(args.idle)
            rows.append({"sockets": opened, "rss": now, "connect_s": connect_s,
                         "cpu": (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)})
        commands.send(("close",))
        commands.recv()
    finally:
        if client is not None:
            client.join(30)
            if client.is_alive():
                client.terminate()
        if svc is not None:
            svc.stop()
        server.cleanup()

    print(f"one replica (1 process), {count} games, {args.per_game} socket(s) a game, "
          f"permessage-deflate {'off' if args.no_deflate else 'on'}, fd limit {soft}, "
          f"idle window {args.idle:.0f} s, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'sockets':>8} {'RSS MiB':>8} {'KiB/socket':>10} {'idle CPU':>9} {'opened in':>9}")
    mib = 1024 * 1024
    for r in rows:
        per = (r["rss"] - base) / r["sockets"] / 1024 if r["sockets"] else 0.0
        opened_in = f"{r['connect_s']:8.1f}s" if "connect_s" in r else ""
        print(f"{r['sockets']:8d} {r['rss'] / mib:8.1f} {per:10.1f} {r['cpu']:9.1%} "
              f"{opened_in:>9}")
    print("idle CPU: share of one core; KiB/socket: (RSS - RSS with no socket) / sockets")


if __name__ == "__main__":
    main()
