"""Hints over HTTP: ``POST /games/{id}/hint`` on expert positions, round trip p50/p99.

    python tests/bench/hint.py [--games 40]

Starts a redis-server and one service process on it, then plays ``--games`` seeded
expert games the way a player leaning on the hints does: every move is the hint's
(reveal the safe cell or the guess, flag the mine), one request at a time over one
kept-alive connection. Before each hint the same client reads the game
(``GET /games/{id}``): the baseline, a request with the same connection, routing, auth
and Redis read but no solving and no commit. Prints both round trips, and the hints
that were guesses (the solver's longest work) apart. Target: hint p99 <= 10 ms.

Round trips are wall time seen by the client, so a busy machine shows in them: compare
the hint with the baseline taken in the same run. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else 0.0


def ms(seconds: float) -> float:
    return seconds * 1000


def play(client: httpx.Client, seed: int) -> tuple[list[float], list[float], list[float]]:
    """One expert game moved by its hints: (hint round trips, of which guesses, reads)."""
    made = client.post("/games", json={"preset": "expert", "seed": seed})
    made.raise_for_status()
    game = made.json()
    gid, auth = game["game"]["id"], {"Authorization": f"Bearer {game['token']}"}
    client.post(f"/games/{gid}/reveal", json={"x": 3, "y": 3}, headers=auth).raise_for_status()
    hints: list[float] = []
    guesses: list[float] = []
    reads: list[float] = []
    status = "playing"
    while status == "playing":
        t0 = time.perf_counter()
        client.get(f"/games/{gid}").raise_for_status()
        t1 = time.perf_counter()
        answer = client.post(f"/games/{gid}/hint", headers=auth)
        t2 = time.perf_counter()
        answer.raise_for_status()
        reads.append(ms(t1 - t0))
        hints.append(ms(t2 - t1))
        hint = answer.json()
        if hint["kind"] == "guess":
            guesses.append(ms(t2 - t1))
        move = "flag" if hint["kind"] == "mine" else "reveal"
        done = client.post(f"/games/{gid}/{move}", json={"x": hint["x"], "y": hint["y"]},
                           headers=auth)
        done.raise_for_status()
        status = done.json()["status"]
    return hints, guesses, reads


def line(name: str, values: list[float]) -> str:
    return (f"{name:<22} {len(values):>6} {pct(values, 50):>8.2f} {pct(values, 95):>8.2f} "
            f"{pct(values, 99):>8.2f} {max(values, default=0.0):>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed")
    args = parser.parse_args()
    redis = RedisServer().start()
    service = ServiceProcess(env={"REDIS_URL": redis.url})
    try:
        service.start()
        hints: list[float] = []
        guesses: list[float] = []
        reads: list[float] = []
        with httpx.Client(base_url=service.url, timeout=30) as client:
            play(client, args.seed + args.games)  # warm up: imports, scripts, connections
            for seed in range(args.seed, args.seed + args.games):
                h, g, r = play(client, seed)
                hints += h
                guesses += g
                reads += r
        print(f"{args.games} expert games moved by their hints, load average "
              f"{os.getloadavg()[0]:.2f}")
        print(f"{'round trip, ms':<22} {'count':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}")
        print(line("GET /games/{id}", reads))
        print(line("POST .../hint", hints))
        print(line("  of which guesses", guesses))
        print(f"hint p99 {pct(hints, 99):.2f} ms (target <= 10), "
              f"{pct(hints, 99) / max(pct(reads, 99), 1e-9):.2f}x the read's p99")
    finally:
        service.stop()
        redis.stop()


if __name__ == "__main__":
    main()
