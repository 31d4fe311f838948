"""Throughput of moves: the service against a baseline that does only the Redis work.

    python tests/bench/load.py [--seconds 10] [--concurrency 32] [--appendfsync always]

Starts, one after the other, each on its own redis-server and under uvicorn with the
same settings:

- the service (``python -m service``) with its defaults, except the per-address and
  per-token rate limits, which the load from one address would run into, and
- a baseline Starlette app (``create_baseline`` below) that answers the same requests
  with the same two Redis round trips per move (an HMGET pipeline, then EVALSHA of the
  service's own commit script writing a snapshot of the same size) and no game logic.

Both get the same load from a separate process: ``--concurrency`` keep-alive
connections, each playing expert boards: create a game, reveal the middle, then toggle
flags on cells the reveal left hidden, and start a fresh game every ``--moves-per-game``
moves. It prints moves/s and p50/p99 move latency for each, and the ratio (the
service's target is >= 0.8 of the baseline's throughput). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers import RedisServer, ServiceProcess, free_port, wait_for  # noqa: E402

EXPERT = {"preset": "expert"}
WIDTH, HEIGHT = 30, 16

# ---- the baseline app ---------------------------------------------------------------------


def create_baseline() -> Any:
    """Two Redis round trips per move, the same as the service's, and nothing else."""
    import contextlib
    import secrets

    import msgspec
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    url = os.environ["REDIS_URL"]
    snap_size = int(os.environ.get("SNAPSHOT_BYTES", "700"))
    commit_lua = (ROOT / "service" / "store" / "commit.lua").read_text()

    class Cell(msgspec.Struct):
        x: int
        y: int
        mark: str | None = None

    decode_cell = msgspec.json.Decoder(Cell)
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        # The service's own connection settings (timeouts, retry), so the two differ only
        # in what they do per request.
        from service.store import connect

        state["redis"] = connect(url)
        state["commit"] = state["redis"].register_script(commit_lua)
        yield
        await state["redis"].aclose()

    def key(game_id: str, kind: str) -> str:
        return f"bl:{{{game_id}}}:{kind}"

    async def create(request: Request) -> Response:
        await request.body()
        game_id = secrets.token_hex(16)
        pipe = state["redis"].pipeline(transaction=True)
        pipe.hset(key(game_id, "game"), mapping={"rev": 0, "snap": os.urandom(snap_size),
                                                  "tok": os.urandom(32)})
        pipe.pexpire(key(game_id, "game"), 3_600_000)
        await pipe.execute()
        body = json.dumps({"game": {"id": game_id, "board": ["#" * WIDTH] * HEIGHT},
                           "token": secrets.token_urlsafe(32)}).encode()
        return Response(body, status_code=201, media_type="application/json",
                        headers={"Location": f"/games/{game_id}"})

    async def move(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        cell = decode_cell.decode(await request.body())
        pipe = state["redis"].pipeline(transaction=False)
        pipe.hmget(key(game_id, "game"), ["rev", "snap", "tok", "player", "next"])
        rev = (await pipe.execute())[0][0]
        version = int(rev) + 1
        diff = json.dumps({"type": "diff", "version": version, "status": "playing",
                           "move": {"action": "flag", "x": cell.x, "y": cell.y,
                                    "at": "2025-01-01T00:00:00.000Z"},
                           "cells": [[cell.x, cell.y, "F"]], "mines_left": 98,
                           "started_at": "2025-01-01T00:00:00.000Z", "ended_at": None,
                           "elapsed_ms": 0, "stats": None}).encode()
        await state["commit"](
            keys=[key(game_id, "game"), key(game_id, "events"), key(game_id, "game")],
            args=[rev, os.urandom(snap_size), version, diff, key(game_id, "live"),
                  3_600_000, b"", 86_400_000, 100_000, os.urandom(12)],
        )
        return Response(diff, media_type="application/json")

    return Starlette(routes=[
        Route("/games", create, methods=["POST"]),
        Route("/games/{game_id}/{action}", move, methods=["POST"]),
        Route("/healthz", lambda r: Response(b'{"status":"ok"}')),
    ], lifespan=lifespan)


# ---- a small keep-alive HTTP/1.1 client ---------------------------------------------------


class Conn:
    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, path: str, body: dict[str, Any], token: str | None = None
                      ) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        data = json.dumps(body).encode()
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{auth}Content-Length: {len(data)}\r\n\r\n".encode() + data
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(v) for k, _, v in (ln.partition(":") for ln in lines[1:])
                      if k.lower() == "content-length")
        return status, json.loads(await self.reader.readexactly(length))

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def drive(port: int, seconds: float, warmup: float, concurrency: int,
                moves_per_game: int) -> dict[str, Any]:
    latencies: list[float] = []
    counts = {"moves": 0, "creates": 0, "errors": 0, "total_requests": 0}
    start = time.perf_counter()
    measure_from = start + warmup
    stop = measure_from + seconds

    async def worker(n: int) -> None:
        rng = random.Random(n)
        conn = Conn(port)
        try:
            while time.perf_counter() < stop:
                status, created = await conn.request("/games", EXPERT)
                counts["total_requests"] += 1
                if status != 201:
                    counts["errors"] += 1
                    continue
                if time.perf_counter() >= measure_from:
                    counts["creates"] += 1
                game_id, token = created["game"]["id"], created["token"]
                board = [list(row) for row in created["game"]["board"]]
                hidden: list[tuple[int, int]] = []
                for i in range(moves_per_game):
                    if i == 0:
                        path, body = f"/games/{game_id}/reveal", {"x": 15, "y": 8}
                    else:
                        x, y = rng.choice(hidden)
                        path, body = f"/games/{game_id}/flag", {"x": x, "y": y}
                    t0 = time.perf_counter()
                    status, answer = await conn.request(path, body, token)
                    t1 = time.perf_counter()
                    counts["total_requests"] += 1
                    if status != 200:
                        counts["errors"] += 1
                        break
                    if t0 >= measure_from and t1 <= stop:
                        latencies.append(t1 - t0)
                        counts["moves"] += 1
                    if i == 0:
                        for cx, cy, ch in answer["cells"]:
                            board[cy][cx] = ch
                        hidden = [(x, y) for y in range(HEIGHT) for x in range(WIDTH)
                                  if board[y][x] == "#"] or [(0, 0)]
                    if time.perf_counter() >= stop:
                        break
        finally:
            await conn.close()

    await asyncio.gather(*[worker(n) for n in range(concurrency)])
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {"moves_per_s": counts["moves"] / seconds, "p50_ms": pct(0.50), "p99_ms": pct(0.99),
            **counts}


def _drive_in_process(port: int, args: argparse.Namespace, out: Any) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.put(asyncio.run(drive(port, args.seconds, args.warmup, args.concurrency,
                              args.moves_per_game)))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_load(port: int, pid: int, args: argparse.Namespace) -> dict[str, Any]:
    """The load generator runs in its own process, like a real client would. Besides
    moves/s, the server's CPU time per request: a figure a busy machine disturbs less."""
    out: Any = mp.Queue()
    proc = mp.Process(target=_drive_in_process, args=(port, args, out))
    cpu0 = cpu_seconds(pid)
    proc.start()
    result: dict[str, Any] = out.get(timeout=args.seconds + args.warmup + 120)
    proc.join()
    requests = result["total_requests"]
    result["cpu_us"] = (cpu_seconds(pid) - cpu0) / max(1, requests) * 1e6
    return result


def snapshot_bytes(redis_url: str, service_url: str) -> int:
    """The size of an expert snapshot after a reveal, as the service stores it."""
    import httpx
    import redis

    with httpx.Client(base_url=service_url) as c:
        created = c.post("/games", json=EXPERT).json()
        game_id = created["game"]["id"]
        c.post(f"/games/{game_id}/reveal", json={"x": 15, "y": 8},
               headers={"Authorization": f"Bearer {created['token']}"})
    r = redis.Redis.from_url(redis_url)
    size = len(r.hget(f"ms:{{{game_id}}}:game", "snap") or b"")
    r.close()
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--moves-per-game", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each, alternating, so noise hits both alike")
    parser.add_argument("--appendfsync", choices=["everysec", "always"], default="everysec",
                        help="the service's Redis only (the baseline's stays at everysec): "
                        "the ratio against a run with the default is what fsyncing every "
                        "write costs, as the embedded Redis does")
    args = parser.parse_args()

    import urllib.request

    redis_service = RedisServer(None, None, "--appendfsync", args.appendfsync).start()
    redis_base = RedisServer().start()
    svc = base = None
    runs: dict[str, list[dict[str, Any]]] = {"service": [], "baseline": []}
    try:
        svc = ServiceProcess({"REDIS_URL": redis_service.url}).start()
        size = snapshot_bytes(redis_service.url, svc.url)
        port = free_port()
        env = {**os.environ, "REDIS_URL": redis_base.url, "SNAPSHOT_BYTES": str(size)}
        # The same uvicorn settings as ``python -m service``.
        base = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "tests.bench.load:create_baseline", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
             "--no-access-log", "--proxy-headers", "--ws-max-size", str(64 * 1024),
             "--timeout-graceful-shutdown", "5"],
            cwd=ROOT, env=env,
        )
        wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{port}/healthz", timeout=1).status == 200, what="baseline")
        for n in range(args.rounds):
            assert svc.proc is not None
            order = [("service", svc.port, svc.proc.pid), ("baseline", port, base.pid)]
            for name, p, pid in order if n % 2 == 0 else order[::-1]:
                runs[name].append(run_load(p, pid, args))
    finally:
        if svc is not None:
            svc.stop()
        if base is not None:
            base.terminate()
            base.wait(15)
        redis_service.cleanup()
        redis_base.cleanup()

    print(f"expert boards, {args.concurrency} connections, {args.rounds} x {args.seconds:.0f} s "
          f"each, snapshot {size} bytes, service's Redis appendfsync {args.appendfsync}, "
          f"{os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'':10} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'moves':>7} {'games':>6} "
          f"{'errors':>6} {'server CPU us/request':>22}")
    best: dict[str, dict[str, Any]] = {}
    for name, rounds in runs.items():
        for r in rounds:
            print(f"  {name:8} {r['moves_per_s']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
                  f"{r['moves']:7d} {r['creates']:6d} {r['errors']:6d} {r['cpu_us']:22.0f}")
        best[name] = sorted(rounds, key=lambda r: r["moves_per_s"])[len(rounds) // 2]
    print("median round of each, by moves/s:")
    for name, r in best.items():
        print(f"{name:10} {r['moves_per_s']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
              f"{'':22} {r['cpu_us']:22.0f}")
    ratio = best["service"]["moves_per_s"] / best["baseline"]["moves_per_s"]
    print(f"ratio service/baseline: {ratio:.2f} (target >= 0.80)")
    cpu = [sum(r["cpu_us"] for r in runs[n]) / len(runs[n]) for n in ("baseline", "service")]
    print(f"server CPU per request, baseline/service: {cpu[0] / cpu[1]:.2f}")


if __name__ == "__main__":
    main()
