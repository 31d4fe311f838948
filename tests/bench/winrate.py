"""How often the hints win: games played through the pure engine, following the hints alone.

Run from the repository root::

    python -m tests.bench.winrate                          # 1,000 games per preset and start
    python -m tests.bench.winrate --games 40000 --preset expert --start zero
    python -m tests.bench.winrate --player hint --games 200   # one best_hint call per move
    python -m tests.bench.winrate --latency 100    # best_hint CPU time on expert views
    python -m tests.bench.winrate --games 5000 --preset expert --start zero --outcomes a.txt
    python -m tests.bench.paired a.txt b.txt       # two versions on the same seeds

Each game starts with a first click, then plays every move the hints give: reveal
a safe cell or the suggested guess (certain mines need no flag to win). Two starts,
as published solvers report them:

- ``zero``: the first click at (3, 3) always opens an area (no mine on it or around it);
- ``safe``: the first click in the corner (0, 0) is only safe, so it may show a number.

``--at X,Y`` moves the first click: MineSweeperProb's beginner and intermediate
figures start at its third cell, (2, 2) here (its expert figure at (3, 3)), and a
start cell alone moves a win rate by tenths of a point.

``--player auto`` (the default) is :class:`service.engine.autoplay.AutoPlayer`,
which keeps its deductions from move to move instead of analysing each view
afresh, and reveals every certain cell at once; it makes exactly the guesses that
``best_hint`` makes on the same views (the engine tests check that), so it wins
exactly the same games, only faster. ``--player hint`` calls ``best_hint`` on the
whole view before every move, as the service does.

Beside each win rate the bench prints a ceiling: how often perfect play could win,
at most. The fast player knows which of its guesses were judgements (see
:mod:`service.engine.autoplay`): every move before the first of them is one perfect
play makes too, and from there perfect play wins at most the chance of surviving the
safest cell. So perfect play's chance, averaged over the boards, is at most that of
a game scored as the hints' result where they made no judgement, and as that chance
where they did. The ceiling is such an average, with the upper end of its 95 %
interval; under it, how many points above the hints perfect play could be, at most.
Where judgements are rare (beginner) the ceiling is close; where every game needs
several (expert) it is far above anything reachable and tells little.

Games run in parallel on every core; each game's seed is its number, so a run is
reproducible and a slice of seeds can be replayed. ``--outcomes FILE`` writes each
game's result, one line a game, for :mod:`tests.bench.paired` to compare two
versions on the same seeds. The interval is the Wilson 95 %
score interval. CPU ms per game is measured inside each worker (wall time on a
shared machine moves with others' load).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from typing import NamedTuple, TextIO

from service import engine
from service.engine import solver
from service.engine.settings import PRESETS
from service.engine.solver import MINE

# Published win rates, in percent, by preset, start and first click.
PUBLISHED: dict[tuple[str, str, int, int], list[tuple[str, float]]] = {
    ("beginner", "zero", 2, 2): [("MineSweeperProb", 97.17)],
    ("beginner", "zero", 3, 3): [("MineSweeperProb's lighter search", 96.85)],
    ("intermediate", "zero", 2, 2): [("MineSweeperProb", 89.08)],
    ("intermediate", "zero", 3, 3): [("MineSweeperProb's lighter search", 88.71)],
    ("expert", "zero", 3, 3): [("MineSweeperProb", 53.45), ("David Hill", 54.3)],
    ("expert", "safe", 0, 0): [("David Hill", 41.0)],
}
STARTS = {"zero": ("zero", 3, 3), "safe": ("safe", 0, 0)}

Cell = tuple[int, int]
# player, preset, start, first seed, games, first click (None: the start's own)
Job = tuple[str, str, str, int, int, Cell | None]


class Played(NamedTuple):
    won: bool
    guesses: int
    # The lowest chance of a mine at the first guess that was a judgement (None: no
    # judgement, or not known to this player).
    judged: float | None


def play_hint(
    settings: engine.Settings, seed: int, start: str, at: Cell | None = None
) -> Played:
    """One game, one ``best_hint`` call per move (which does not tell judgements apart)."""
    first_click, x, y = STARTS[start]
    if at is not None:
        x, y = at
    game = engine.new_game(settings, seed=seed, now_ms=0, first_click=first_click)  # type: ignore[arg-type]
    game, _ = engine.reveal(game, x, y, 0)
    guesses = 0
    while game.status == "playing":
        hint = solver.best_hint(game.board(), game.mines)
        assert hint is not None
        if hint.kind == "mine":
            game, _ = engine.flag(game, hint.x, hint.y, 0, "flag")
            continue
        guesses += hint.kind == "guess"
        game, _ = engine.reveal(game, hint.x, hint.y, 0)
    return Played(game.status == "won", guesses, None)


def play_auto(
    settings: engine.Settings, seed: int, start: str, at: Cell | None = None
) -> Played:
    from service.engine import autoplay

    first_click, x, y = STARTS[start]
    if at is not None:
        x, y = at
    game = engine.new_game(settings, seed=seed, now_ms=0, first_click=first_click)  # type: ignore[arg-type]
    game, _ = engine.reveal(game, x, y, 0)
    player = autoplay.AutoPlayer(game)
    while player.step():
        pass
    return Played(player.game.status == "won", len(player.guessed), player.judged)


class Slice(NamedTuple):
    games: int
    wins: int
    guesses: int
    cpu: float  # seconds
    outcomes: list[tuple[int, bool, int]]  # (seed, won, guesses) for each game
    # Perfect play's chance at most, each game: its result, or from its first judgement
    # on, the chance of surviving the safest cell there; summed, and summed squared.
    ceiling: float
    ceiling_sq: float
    judged: int  # games that reached a judgement


def run_job(job: Job) -> Slice:
    """A slice of seeds played out."""
    player, preset, start, first, count, at = job
    settings = PRESETS[preset]
    play = play_hint if player == "hint" else play_auto
    wins = guesses = judged = 0
    ceiling = ceiling_sq = 0.0
    outcomes: list[tuple[int, bool, int]] = []
    t0 = time.process_time()
    for seed in range(first, first + count):
        got = play(settings, seed, start, at)
        wins += got.won
        guesses += got.guesses
        outcomes.append((seed, got.won, got.guesses))
        best = float(got.won) if got.judged is None else 1.0 - got.judged
        ceiling += best
        ceiling_sq += best * best
        judged += got.judged is not None
    return Slice(count, wins, guesses, time.process_time() - t0, outcomes,
                 ceiling, ceiling_sq, judged)


def hint_latency(games: int) -> tuple[list[float], list[float]]:
    """CPU ms per ``best_hint`` call on the views of expert games: every view the
    fast player met, and those where the hint was a guess. CPU time, because wall
    time on a shared machine measures the other work as much as this."""
    from service.engine import autoplay

    every: list[float] = []
    guesses: list[float] = []
    settings = PRESETS["expert"]
    for seed in range(1, games + 1):
        game = engine.new_game(settings, seed=seed, now_ms=0)
        game, _ = engine.reveal(game, 3, 3, 0)
        player = autoplay.AutoPlayer(game)
        while player.game.status == "playing":
            # A player flags what is certain: the hint then moves on to the next cell.
            cells = bytearray(player.game.cells)
            for c, known in enumerate(player.d.state):
                if known == MINE:
                    cells[c] = ord("F")
            w = settings.width
            board = [cells[y * w : (y + 1) * w].decode() for y in range(settings.height)]
            t0 = time.process_time()
            hint = solver.best_hint(board, player.game.mines)
            ms = (time.process_time() - t0) * 1000
            every.append(ms)
            if hint is not None and hint.kind == "guess":
                guesses.append(ms)
            player.step()
    return every, guesses


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def jobs(player: str, preset: str, start: str, seed0: int, games: int, chunk: int,
         at: Cell | None) -> Iterator[Job]:
    for first in range(seed0, seed0 + games, chunk):
        yield player, preset, start, first, min(chunk, seed0 + games - first), at


def cell(text: str) -> Cell:
    x, _, y = text.partition(",")
    return int(x), int(y)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=1000, help="games per preset and start")
    parser.add_argument("--preset", action="append", choices=list(PRESETS))
    parser.add_argument("--start", action="append", choices=list(STARTS))
    parser.add_argument("--at", type=cell, metavar="X,Y",
                        help="the first click's cell (the start's own by default)")
    parser.add_argument("--player", choices=["auto", "hint"], default="auto")
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--chunk", type=int, default=50, help="games per task")
    parser.add_argument("--progress", type=int, default=0, metavar="GAMES",
                        help="print the running tally every this many games")
    parser.add_argument("--latency", type=int, default=0, metavar="GAMES",
                        help="only time best_hint on the views of this many expert games")
    parser.add_argument("--outcomes", metavar="FILE",
                        help="append each game's result to FILE: preset start seed won guesses")
    args = parser.parse_args(argv)
    if args.latency:
        every, guessing = hint_latency(args.latency)
        print(f"best_hint CPU time on expert views, load average {os.getloadavg()[0]:.2f}")
        for name, ms in (("every view", every), ("guesses", guessing)):
            ms.sort()
            print(f"{name:<11}{len(ms):>6} views  p50 {ms[len(ms) // 2]:.2f} ms  "
                  f"p99 {ms[int(len(ms) * 0.99)]:.2f} ms  max {ms[-1]:.2f} ms")
        return 0
    presets = args.preset or list(PRESETS)
    starts = args.start or list(STARTS)
    load = os.getloadavg()[0]
    print(f"player {args.player}, {args.workers} workers, seeds from {args.seed}, "
          f"load average {load:.2f}", flush=True)
    print(f"{'preset':<13}{'start':<10}{'games':>7}{'won':>7}{'win %':>8}{'95 % interval':>17}"
          f"{'guesses':>9}{'cpu ms':>8}{'perfect <=':>16}  published")
    out: TextIO | None = open(args.outcomes, "a") if args.outcomes else None  # noqa: SIM115
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for preset in presets:
            for start in starts:
                if preset != "expert" and start == "safe" and not args.start:
                    continue  # published figures for the safe start are expert only
                t0 = time.perf_counter()
                n = wins = guesses = judged = 0
                cpu = ceiling = ceiling_sq = 0.0
                todo = jobs(args.player, preset, start, args.seed, args.games, args.chunk, args.at)
                x, y = args.at or STARTS[start][1:]
                for got in pool.imap_unordered(run_job, todo):
                    n += got.games
                    wins += got.wins
                    guesses += got.guesses
                    cpu += got.cpu
                    ceiling += got.ceiling
                    ceiling_sq += got.ceiling_sq
                    judged += got.judged
                    if out is not None:
                        out.writelines(f"{preset} {start} {seed} {int(won)} {g}\n"
                                       for seed, won, g in got.outcomes)
                        out.flush()
                    if args.progress and n % args.progress < got[0] and n < args.games:
                        lo, hi = wilson(wins, n)
                        print(f"  ... {preset} {start}: {wins} of {n} "
                              f"({100 * wins / n:.2f}, {100 * lo:.2f}-{100 * hi:.2f})", flush=True)
                lo, hi = wilson(wins, n)
                published = ", ".join(f"{who} {rate:.2f}" for who, rate in
                                      PUBLISHED.get((preset, start, x, y), []))
                perfect = "-"
                if args.player == "auto":
                    mean = ceiling / n
                    spread = math.sqrt(max(ceiling_sq / n - mean * mean, 0.0) / n)
                    perfect = f"{100 * mean:.2f} ({100 * (mean + 1.96 * spread):.2f})"
                print(f"{preset:<13}{f'{start} {x},{y}':<10}{n:>7}{wins:>7}{100 * wins / n:>8.2f}"
                      f"{f'{100 * lo:.2f}-{100 * hi:.2f}':>17}{guesses / n:>9.2f}"
                      f"{1000 * cpu / n:>8.1f}{perfect:>16}  {published}"
                      f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
                if args.player == "auto":
                    print(f"{'':<23}{judged} games reached a guess that was a judgement; "
                          f"perfect play at most {100 * (ceiling - wins) / n:+.2f} points",
                          flush=True)
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
