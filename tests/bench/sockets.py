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
import shutil
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
    open; on ("count",) answers how many messages they received after their snapshots;
    on ("close",) closes them all and ends."""
    from websockets.asyncio.client import connect

    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()

    open_sockets: list[Any] = []
    readers: list[asyncio.Task[None]] = []
    received = [0]

    async def drain(ws: Any) -> None:
        with contextlib.suppress(Exception):
            async for m in ws:
                if "diff" in (m if isinstance(m, str) else m.decode()):
                    received[0] += 1

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
            elif command[0] == "count":
                commands.send(received[0])
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


WRK_SCRIPT = """
local games = {%s}
local i = 0
request = function()
  i = i + 1
  local g = games[(i %% #games) + 1]
  return wrk.format("POST", "/games/" .. g[1] .. "/flag",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. g[2]},
    '{"x":' .. (i %% 30) .. ',"y":0}')
end
"""


def live_phase(pid: int, mover: ServiceProcess, created: list[dict[str, Any]], commands: Any,
               args: argparse.Namespace) -> dict[str, float]:
    """Moves on every game in turn, made on another replica (wrk, closed loop), so this
    replica's CPU goes to passing each diff from Redis to its one socket, and no move."""
    import re
    import subprocess
    import tempfile

    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed for --live (apt-get install wrk), or pass --live 0")
    pairs = ",".join(f'{{"{g["game"]["id"]}","{g["token"]}"}}' for g in created)
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT % pairs)
        script.flush()
        commands.send(("count",))
        before = commands.recv()
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        out = subprocess.run(
            ["wrk", "-t1", f"-c{args.live_connections}", f"-d{args.live:.0f}s", "-s",
             script.name, mover.url], capture_output=True, text=True, check=True,
        ).stdout
        # What is still in flight lands within a moment; heartbeats are not counted.
        time.sleep(1.0)
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
        commands.send(("count",))
        after = commands.recv()
    moves = re.search(r"Requests/sec:\s+([\d.]+)", out)
    refused = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if refused:
        print(f"wrk: {refused[1]} moves were not answered 200", file=sys.stderr)
    return {"seconds": t1 - t0, "cpu": cpu1 - cpu0, "messages": after - before,
            "moves": float(moves[1]) if moves else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--per-game", type=int, default=1,
                        help="sockets on each game (1: every socket its own game)")
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--no-deflate", action="store_true")
    parser.add_argument("--live", type=float, default=15.0,
                        help="seconds of moves at the largest step (0: none)")
    parser.add_argument("--live-connections", type=int, default=8,
                        help="wrk's connections to the replica that takes the moves")
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
            created = [c.post("/games", json={"preset": "expert"}).json() for _ in range(count)]
        games = [g["game"]["id"] for g in created]
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
        if args.live:
            mover = ServiceProcess({"REDIS_URL": server.url, "LOG_LEVEL": "warning"}).start()
            try:
                live = live_phase(pid, mover, created, commands, args)
            finally:
                mover.stop()
            live["rss"] = rss(pid)
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
    if args.live:
        idle = rows[-1]["cpu"]
        busy = live["cpu"] / live["seconds"]
        per_message = (live["cpu"] - idle * live["seconds"]) / max(1, live["messages"])
        print(f"moves on another replica for {live['seconds']:.0f} s ({live['moves']:.0f}/s, "
              f"wrk -c{args.live_connections}): {live['messages'] / live['seconds']:.0f} "
              f"messages/s to {rows[-1]['sockets']} sockets on this replica, its CPU "
              f"{busy:.0%} of a core ({idle:.1%} idle); {per_message * 1e6:.0f} us a message "
              f"over idle: {1 / per_message:.0f} messages/s per core; RSS after "
              f"{live['rss'] / mib:.1f} MiB")


if __name__ == "__main__":
    main()
