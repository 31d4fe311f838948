"""Throughput of moves: the service against the plainest app doing the same Redis work.

    python tests/bench/load.py [--seconds 10] [--rounds 3] [--connections 32] [--games 64]
                               [--appendfsync everysec|always] [--profile FILE]

One redis-server serves three apps, each under uvicorn (uvloop, httptools):

- the service, ``python -m service`` with its defaults: access log at ``LOG_LEVEL=info``
  (written to a file), metrics, the failed-auth limit, and its copy of recent games, so
  a move takes one Redis round trip. Only the per-address and per-token rate limits are
  off, as every request comes from one address;
- the same service without that copy (``GAME_CACHE_MB=0``): every move loads its game
  first, two round trips, as the baseline does;
- the baseline (``create_baseline`` below): Starlette, msgspec and redis-py with their
  defaults (hiredis), and per move the same Redis work as a move of the service: an
  HMGET of the game's snapshot (the size of the service's expert snapshot), then one
  Lua script that checks the version, writes the snapshot, XADDs the diff and
  PUBLISHes it. No game, no token check, no log, no metrics.

``wrk`` (a C load generator, ``apt-get install wrk``) drives each with ``-t1`` and
``--connections`` keep-alive connections, toggling flags on ``--games`` expert games
whose middle was revealed, so every request is a committed move. The apps take turns,
``--rounds`` times each after a warm-up, so the machine's load hits them alike; the
script prints each round's moves/s, p50/p99 latency, server CPU per move and the load
average, then each service's ratio of the medians to the baseline's (targets: >= 0.8
without the copy, >= 1.0 with it).
``--profile FILE`` records the last round of the service (into FILE) and of the baseline
(FILE with ``-baseline`` after its stem) with py-spy: a flame graph for ``.svg``,
speedscope for ``.json``, else collapsed stacks.

Without wrk it says so and drives both from a Python client instead, which saturates a
core of its own before the servers do: its ratio understates the service's cost.
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers import RedisServer, ServiceProcess, free_port, wait_for  # noqa: E402

EXPERT = {"preset": "expert"}
MIDDLE = {"x": 15, "y": 8}

# ---- the baseline app ---------------------------------------------------------------------

BASELINE_COMMIT = """
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'rev', ARGV[2], 'snap', ARGV[3])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 100000, '*', 'd', ARGV[4])
redis.call('PUBLISH', KEYS[3], ARGV[4])
return 1
"""


def create_baseline() -> Any:
    """Starlette + msgspec + redis-py, with the Redis work of a move and nothing else."""
    import secrets

    import msgspec
    import redis.asyncio as redis
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    snap_size = int(os.environ.get("SNAPSHOT_BYTES", "1000"))

    class Cell(msgspec.Struct):
        x: int
        y: int

    class Played(msgspec.Struct):
        action: str
        x: int
        y: int
        at: str

    class Diff(msgspec.Struct, tag="diff", tag_field="type"):
        version: int
        status: str
        paused: bool
        move: Played
        cells: list[tuple[int, int, str]]
        mines_left: int
        started_at: str | None
        ended_at: str | None
        elapsed_ms: int

    decode_cell = msgspec.json.Decoder(Cell).decode
    encode = msgspec.json.Encoder().encode
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    commit = client.register_script(BASELINE_COMMIT)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    async def create(request: Request) -> Response:
        await request.body()
        game_id = secrets.token_hex(16)
        await client.hset(f"bl:{{{game_id}}}:game",
                          mapping={"rev": 0, "snap": os.urandom(snap_size)})
        board = ["#" * 30] * 16
        return Response(encode({"game": {"id": game_id, "board": board}, "token": "-"}),
                        status_code=201, media_type="application/json")

    async def flag(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        cell = decode_cell(await request.body())
        key = f"bl:{{{game_id}}}:game"
        rev, snap = await client.hmget(key, ["rev", "snap"])
        version = int(rev) + 1
        now = "2025-01-01T00:00:00.000Z"
        diff = encode(Diff(version, "playing", False, Played("flag", cell.x, cell.y, now),
                           [(cell.x, cell.y, "F")], 99, now, None, 0))
        done = await commit(keys=[key, f"bl:{{{game_id}}}:events", f"bl:{{{game_id}}}:live"],
                            args=[rev, version, snap, diff])
        return Response(diff if done else b"{}", status_code=200 if done else 409,
                        media_type="application/json")

    return Starlette(routes=[
        Route("/games", create, methods=["POST"]),
        Route("/games/{game_id}/flag", flag, methods=["POST"]),
        Route("/healthz", lambda request: Response(b'{"status":"ok"}')),
    ], lifespan=lifespan)


# ---- the games both apps are driven on ----------------------------------------------------


@dataclass(frozen=True)
class Game:
    id: str
    token: str
    # The cells the first reveal left hidden: flags toggle on these.
    hidden: list[tuple[int, int]]


def make_games(url: str, count: int) -> list[Game]:
    """Expert games with their middle revealed (the baseline's reveal is a flag: it only
    stands for a move)."""
    import httpx

    games = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(count):
            created = http.post("/games", json=EXPERT).json()
            game_id, token = created["game"]["id"], created["token"]
            auth = {"Authorization": f"Bearer {token}"}
            answer = http.post(f"/games/{game_id}/reveal", json=MIDDLE, headers=auth)
            board = [list(row) for row in created["game"]["board"]]
            if answer.status_code == 200:
                for x, y, ch in answer.json()["cells"]:
                    board[y][x] = ch
            hidden = [(x, y) for y, row in enumerate(board) for x, ch in enumerate(row)
                      if ch == "#"]
            games.append(Game(game_id, token, hidden))
    return games


def snapshot_bytes(redis_url: str, game_id: str) -> int:
    """The size of a game's snapshot as the service stores it."""
    import redis

    r = redis.Redis.from_url(redis_url)
    try:
        return len(r.hget(f"ms:{{{game_id}}}:game", "snap") or b"")
    finally:
        r.close()


# ---- wrk ----------------------------------------------------------------------------------

WRK_SCRIPT = """
local games = %(games)s
local n = 0
-- Round robin over the games, and over each game's hidden cells: every request
-- toggles a flag, so every one is a committed move.
request = function()
  local g = games[n %% #games + 1]
  local cells = g[3]
  local body = cells[math.floor(n / #games) %% #cells + 1]
  n = n + 1
  return wrk.format("POST", g[1], {["Authorization"] = g[2],
                                   ["Content-Type"] = "application/json"}, body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\nRESULT {"requests": %%d, "us": %%d, "p50_us": %%d, "p99_us": %%d, "non2xx": %%d, ' ..
    '"socket_errors": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
"""


def lua_string(s: str) -> str:
    return json.dumps(s)  # a JSON string of ASCII is a Lua string too


def wrk_script(games: list[Game], directory: str) -> str:
    entries = []
    for g in games:
        bodies = ", ".join(lua_string(json.dumps({"x": x, "y": y})) for x, y in g.hidden)
        entries.append(f"{{{lua_string(f'/games/{g.id}/flag')}, "
                       f"{lua_string(f'Bearer {g.token}')}, {{{bodies}}}}}")
    path = os.path.join(directory, f"flags-{len(os.listdir(directory))}.lua")
    Path(path).write_text(WRK_SCRIPT % {"games": "{\n" + ",\n".join(entries) + "\n}"})
    return path


def run_wrk(port: int, script: str, seconds: float, connections: int) -> dict[str, Any]:
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s",
         "-s", script, f"http://127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=seconds + 60, check=True,
    ).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    r: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    return {"moves": r["requests"], "seconds": r["us"] / 1e6, "p50_ms": r["p50_us"] / 1000,
            "p99_ms": r["p99_us"] / 1000, "errors": r["non2xx"] + r["socket_errors"]}


# ---- the Python fallback ------------------------------------------------------------------


def run_python(port: int, games: list[Game], seconds: float, connections: int
               ) -> dict[str, Any]:
    """The same toggles from asyncio connections in this process, for a machine
    without wrk."""
    from tests.support.load import Http, percentile

    latencies: list[float] = []
    errors = 0

    async def connection(k: int, until: float) -> None:
        nonlocal errors
        http = Http(f"http://127.0.0.1:{port}")
        n = k
        try:
            while time.monotonic() < until:
                g = games[n % len(games)]
                x, y = g.hidden[n // len(games) % len(g.hidden)]
                n += connections
                t0 = time.perf_counter()
                reply = await http.post_json(f"/games/{g.id}/flag", {"x": x, "y": y},
                                             {"Authorization": f"Bearer {g.token}"})
                latencies.append(time.perf_counter() - t0)
                errors += reply.status != 200
        finally:
            await http.close()

    async def drive() -> float:
        t0 = time.monotonic()
        await asyncio.gather(*(connection(k, t0 + seconds) for k in range(connections)))
        return time.monotonic() - t0

    took = asyncio.run(drive())
    return {"moves": len(latencies), "seconds": took, "errors": errors,
            "p50_ms": percentile(latencies, 50) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000}


# ---- running both -------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its children so far (Linux)."""
    import psutil

    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    return sum(p.cpu_times().user + p.cpu_times().system for p in procs)


# Each app, and the ratio to the baseline it should reach.
TARGETS: dict[str, float | None] = {"service": 1.0, "uncached": 0.8, "baseline": None}


@dataclass
class App:
    name: str
    port: int
    pid: int
    games: list[Game]
    script: str | None = None


def measure(app: App, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    cpu0 = cpu_seconds(app.pid)
    if app.script is not None:
        r = run_wrk(app.port, app.script, seconds, args.connections)
    else:
        r = run_python(app.port, app.games, seconds, args.connections)
    r["cpu_us"] = (cpu_seconds(app.pid) - cpu0) / max(1, r["moves"]) * 1e6
    r["moves_per_s"] = r["moves"] / r["seconds"]
    r["load"] = os.getloadavg()[0]
    return r


def start_baseline(redis_url: str, snapshot: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "SNAPSHOT_BYTES": str(snapshot)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tests.bench.load:create_baseline", "--factory",
         "--host", "127.0.0.1", "--port", str(port), "--loop", "uvloop", "--http",
         "httptools", "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env=env,
    )
    try:
        wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{port}/healthz", timeout=1).status == 200, what="baseline")
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, port


@contextlib.contextmanager
def profiling(pid: int, out: str | None) -> Any:
    """py-spy recording ``pid`` while the block runs, when asked for."""
    if out is None:
        yield
        return
    kind = {".svg": "flamegraph", ".json": "speedscope"}.get(Path(out).suffix, "raw")
    spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--rate", "200",
                            "--format", kind, "--output", out, "--nonblocking"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        spy.send_signal(2)
        try:
            spy.wait(60)
        except subprocess.TimeoutExpired:
            spy.kill()
            spy.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each app, taking turns, so noise hits both alike")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--appendfsync", choices=["everysec", "always"], default="everysec",
                        help="the shared Redis's fsync policy (the embedded Redis's default "
                        "is always)")
    parser.add_argument("--profile", metavar="FILE",
                        help="record each app's last round with py-spy (see above)")
    args = parser.parse_args()

    use_wrk = shutil.which("wrk") is not None
    if not use_wrk:
        print("wrk not found (apt-get install wrk): driving both apps from Python instead; "
              "that client loads a core itself, so the ratio understates the service's cost",
              file=sys.stderr)
    redis_server = RedisServer(None, None, "--appendfsync", args.appendfsync).start()
    scripts = tempfile.mkdtemp(prefix="ms-bench-")
    services: list[ServiceProcess] = []
    base = None
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in TARGETS}
    try:
        defaults = {"LOG_LEVEL": "info", "AUTH_FAILURE_LIMIT": "60"}
        apps = []
        for name, cache in (("service", {}), ("uncached", {"GAME_CACHE_MB": "0"})):
            svc = ServiceProcess({"REDIS_URL": redis_server.url, **defaults, **cache}).start()
            services.append(svc)
            assert svc.proc is not None
            apps.append(App(name, svc.port, svc.proc.pid, make_games(svc.url, args.games)))
        snapshot = snapshot_bytes(redis_server.url, apps[0].games[0].id)
        base, base_port = start_baseline(redis_server.url, snapshot)
        apps.append(App("baseline", base_port, base.pid,
                        make_games(f"http://127.0.0.1:{base_port}", args.games)))
        for app in apps:
            if use_wrk:
                app.script = wrk_script(app.games, scripts)
            measure(app, args, args.warmup)
        for n in range(args.rounds):
            # The order turns each round, so no app always follows the same one.
            for app in apps[n % len(apps):] + apps[:n % len(apps)]:
                out = None
                if args.profile and n == args.rounds - 1:
                    path = Path(args.profile)
                    out = str(path if app.name == "service"
                              else path.with_stem(f"{path.stem}-{app.name}"))
                with profiling(app.pid, out):
                    runs[app.name].append(measure(app, args, args.seconds))
    finally:
        for svc in services:
            svc.stop()
        if base is not None:
            base.terminate()
            base.wait(15)
        redis_server.cleanup()
        shutil.rmtree(scripts, ignore_errors=True)

    report(runs, args, snapshot, use_wrk)


def report(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace, snapshot: int,
           use_wrk: bool) -> None:
    driver = f"wrk -t1 -c{args.connections}" if use_wrk else "Python client"
    print(f"flag toggles on {args.games} expert games, {driver}, {args.rounds} x "
          f"{args.seconds:.0f} s each, snapshot {snapshot} bytes, appendfsync "
          f"{args.appendfsync}, {os.cpu_count()} CPUs")
    print(f"{'':10} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} "
          f"{'CPU us/move':>12} {'load avg':>9}")
    for n in range(args.rounds):
        for name, rounds in runs.items():
            r = rounds[n]
            print(f"  {name:8} {r['moves_per_s']:9.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} "
                  f"{r['errors']:7d} {r['cpu_us']:12.0f} {r['load']:9.1f}")
    median = {name: statistics.median(r["moves_per_s"] for r in rounds)
              for name, rounds in runs.items()}
    print("median of the rounds:")
    for name, rounds in runs.items():
        print(f"  {name:8} {median[name]:9.0f} "
              f"{statistics.median(r['p50_ms'] for r in rounds):8.2f} "
              f"{statistics.median(r['p99_ms'] for r in rounds):8.2f} "
              f"{'':7} {statistics.median(r['cpu_us'] for r in rounds):12.0f}")
    for name, target in TARGETS.items():
        if target is None:
            continue
        ratios = [s["moves_per_s"] / b["moves_per_s"]
                  for s, b in zip(runs[name], runs["baseline"], strict=True)]
        print(f"ratio {name}/baseline: {median[name] / median['baseline']:.2f} "
              f"(each round: {', '.join(f'{r:.2f}' for r in ratios)}; target >= {target:.2f})")


if __name__ == "__main__":
    main()
