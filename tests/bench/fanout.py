"""Live fan-out: delivery latency and rate with many subscribers on one game.

    python tests/bench/fanout.py [--subscribers 1000] [--rate 20] [--seconds 15]
                                 [--baseline DIR] [--rounds N]

Starts a redis-server and two service replicas on it, opens ``--subscribers`` WebSocket
subscribers to one expert game, half on each replica (from two client processes), then
makes ``--rate`` moves a second over HTTP, alternating replicas, for ``--seconds``.
Every subscriber checks it got every version once and in order. Prints the delivery
latency p50/p99 from commit (the diff's ``move.at`` server timestamp) to receipt, the
messages delivered per second, and per second of the replicas' CPU time (messages/s per
core). Target: p99 <= 50 ms. Not collected by pytest.

``--baseline DIR`` runs the same rounds, alternated, with the service code of another
checkout (for instance ``git archive main | tar -x -C DIR``) and prints the ratios: the
machine's load moves the absolute figures, less so the ratios of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402


class Move(msgspec.Struct):
    at: str


class Message(msgspec.Struct):
    """Just what the latency needs from a live message."""

    type: str
    version: int = 0
    move: Move | None = None


def _subscribers(
    url: str, count: int, final: Any, ready: Any, out: Any, deflate: bool
) -> None:
    """One client process: ``count`` sockets; reports latencies once ``final`` is known."""
    from websockets.asyncio.client import connect

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass

    decode = msgspec.json.Decoder(Message).decode

    def at_ms(stamp: str) -> float:
        # "2025-01-01T00:00:00.123Z": the service writes UTC with millisecond precision.
        import calendar

        seconds = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        return seconds * 1000.0 + int(stamp[20:23])

    latencies: list[float] = []
    problems: list[str] = []
    last_receipt = [0.0]

    async def one(gate: asyncio.Semaphore, connected: list[int]) -> None:
        async with gate:
            ws = await connect(url, open_timeout=120, max_size=None, ping_interval=None,
                               compression="deflate" if deflate else None)
            first = decode(await ws.recv())
            assert first.type == "snapshot"
        connected[0] += 1
        expected = 1
        try:
            while True:
                raw = await ws.recv()
                now = time.time() * 1000.0
                m = decode(raw)
                if m.type != "diff":
                    continue
                if m.version != expected:
                    problems.append(f"got version {m.version}, expected {expected}")
                    expected = m.version
                expected += 1
                assert m.move is not None
                latencies.append(now - at_ms(m.move.at))
                last_receipt[0] = max(last_receipt[0], now)
                if final.value and m.version >= final.value:
                    break
        finally:
            await ws.close()

    async def run() -> None:
        gate = asyncio.Semaphore(50)
        connected = [0]
        tasks = [asyncio.create_task(one(gate, connected)) for _ in range(count)]
        while connected[0] < count:
            await asyncio.sleep(0.05)
            for t in tasks:
                if t.done() and t.exception():
                    raise t.exception()  # type: ignore[misc]
        ready.release()
        await asyncio.gather(*tasks)

    asyncio.run(run())
    out.put({"latencies": latencies, "problems": problems, "last": last_receipt[0]})


def _cpu_seconds(pids: list[int]) -> float:
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)


def run_round(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One round against the service code in ``root``: its figures."""
    import httpx

    env = {"PYTHONPATH": f"{root}{os.pathsep}{root / 'clients' / 'python'}"}
    server = RedisServer().start()
    replicas = []
    try:
        for _ in range(2):
            replicas.append(ServiceProcess({"REDIS_URL": server.url, **env}, root=root).start())
        c = httpx.Client(timeout=30)
        created = c.post(f"{replicas[0].url}/games", json={"preset": "expert"}).json()
        game_id, token = created["game"]["id"], created["token"]
        auth = {"Authorization": f"Bearer {token}"}

        final: Any = mp.Value("q", 0)
        ready: Any = mp.Semaphore(0)
        out: Any = mp.Queue()
        procs = []
        for i, svc in enumerate(replicas):
            url = f"ws://127.0.0.1:{svc.port}/games/{game_id}/events"
            n = args.subscribers // 2 + (args.subscribers % 2 if i == 0 else 0)
            p = mp.Process(target=_subscribers,
                           args=(url, n, final, ready, out, not args.no_deflate))
            p.start()
            procs.append(p)
        connect_start = time.monotonic()
        for _ in procs:
            if not ready.acquire(timeout=300):
                raise SystemExit("subscribers did not connect")
        connect_s = time.monotonic() - connect_start

        # The moves: flag toggles on cells of the top row, at a steady rate, both replicas.
        pids = [svc.proc.pid for svc in replicas if svc.proc is not None]
        cpu_before = _cpu_seconds(pids)
        moves = int(args.rate * args.seconds)
        interval = 1.0 / args.rate
        started = time.time()
        t_next = time.monotonic()
        version = 0
        for i in range(moves):
            t_next += interval
            svc = replicas[i % 2]
            r = c.post(f"{svc.url}/games/{game_id}/flag", json={"x": i % 30, "y": 0},
                       headers=auth)
            r.raise_for_status()
            version = r.json()["version"]
            delay = t_next - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        final.value = version
        # A last move so every subscriber sees a version >= final and stops.
        c.post(f"{replicas[0].url}/games/{game_id}/flag", json={"x": 0, "y": 1}, headers=auth)
        results = [out.get(timeout=300) for _ in procs]
        cpu = _cpu_seconds(pids) - cpu_before
        for p in procs:
            p.join(30)
    finally:
        for svc in replicas:
            svc.stop()
        server.cleanup()

    latencies = sorted(x for r in results for x in r["latencies"])
    last = max(r["last"] for r in results)

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))]

    return {
        "connect_s": connect_s,
        "moves": moves,
        "delivered": len(latencies),
        "rate": len(latencies) / (last / 1000 - started),
        "per_core": len(latencies) / cpu,
        "cpu_us": cpu / len(latencies) * 1e6,
        "p50": pct(0.5),
        "p99": pct(0.99),
        "max": latencies[-1],
        "problems": [p for r in results for p in r["problems"]],
        "load": os.getloadavg()[0],
    }


def _report(name: str, r: dict[str, Any]) -> None:
    print(f"  {name:8} load {r['load']:4.1f}  connected in {r['connect_s']:5.1f} s  "
          f"{r['delivered']} messages ({r['delivered'] / max(1, r['moves']):.0f} per move), "
          f"{r['rate']:,.0f}/s  {r['per_core']:,.0f}/s per core ({r['cpu_us']:.0f} us CPU each)  "
          f"p50 {r['p50']:.1f} ms  p99 {r['p99']:.1f} ms  max {r['max']:.1f} ms  "
          f"order problems {len(r['problems'])}" + (f" e.g. {r['problems'][:3]}"
                                                    if r["problems"] else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=20.0, help="moves per second")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--no-deflate", action="store_true",
                        help="subscribers do not offer permessage-deflate (browsers do)")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout whose service code to compare with, alternated")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each code")
    args = parser.parse_args()

    codes = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    print(f"{args.subscribers} subscribers on 2 replicas, {args.rate:.0f} moves/s for "
          f"{args.seconds:.0f} s, permessage-deflate {'off' if args.no_deflate else 'on'}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in codes}
    for _ in range(args.rounds):
        for name, root in codes:
            rounds[name].append(run_round(root, args))
            _report(name, rounds[name][-1])

    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in rounds[name])

    for name, _ in codes:
        print(f"{name}: median of {args.rounds}: p50 {median(name, 'p50'):.1f} ms  "
              f"p99 {median(name, 'p99'):.1f} ms (target <= 50 ms)  "
              f"{median(name, 'rate'):,.0f} messages/s  "
              f"{median(name, 'per_core'):,.0f} messages/s per core")
    if args.baseline:
        print(f"this / baseline: messages/s per core "
              f"{median('this', 'per_core') / median('baseline', 'per_core'):.2f}, "
              f"p99 {median('this', 'p99') / median('baseline', 'p99'):.2f}")


if __name__ == "__main__":
    main()
