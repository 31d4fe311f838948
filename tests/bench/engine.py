"""Engine speed and size, printed next to the targets of the engine issue.

    python -m tests.bench.engine

Not a test: timings depend on the machine, so nothing here fails a build.
Every figure is a median, so one slow run (a GC pause, a busy core) does not
move it.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable, Sequence

import msgspec
import numpy as np

from service import engine
from service.engine import Game

EXPERT_SEED = 20240611
BIG = 1000


def _median_us(calls: Sequence[Callable[[], object]], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        for call in calls:
            start = time.perf_counter_ns()
            call()
            samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def _mines(game: Game) -> set[int]:
    return {i for i in range(game.width * game.height) if game.is_mine(i)}


def expert_midgame() -> Game:
    """An expert game about half solved: a real opening, then every other safe cell."""
    game = engine.new_game(engine.preset("expert"), seed=EXPERT_SEED, now_ms=0)
    game, _ = engine.reveal(game, 15, 8, 1)
    mines = _mines(game)
    hidden = [i for i, c in enumerate(game.cells) if c == ord("#") and i not in mines]
    for n, i in enumerate(hidden[::2], start=2):
        if game.cells[i] == ord("#"):
            game, _ = engine.reveal(game, i % game.width, i // game.width, n)
    assert game.status == "playing"
    return game


def flag_all_mines(game: Game) -> Game:
    for i in sorted(_mines(game)):
        game, _ = engine.flag(game, i % game.width, i // game.width, 10_000, "flag")
    return game


def bench_expert() -> dict[str, float]:
    game = expert_midgame()
    w = game.width
    hidden_safe = [
        i for i, c in enumerate(game.cells) if c == ord("#") and not game.is_mine(i)
    ]
    hidden = [i for i, c in enumerate(game.cells) if c == ord("#")]
    reveal_calls = [
        (lambda i=i: engine.reveal(game, i % w, i // w, 20_000)) for i in hidden_safe
    ]
    zeros = [i for i in hidden_safe if game.count(i) == 0]
    cascade_calls = [
        (lambda i=i: engine.reveal(game, i % w, i // w, 20_000)) for i in zeros
    ]
    flag_calls = [(lambda i=i: engine.flag(game, i % w, i // w, 20_000)) for i in hidden]

    flagged = flag_all_mines(game)
    chordable = []
    for i, c in enumerate(flagged.cells):
        if ord("1") <= c <= ord("8"):
            around = flagged.neighbours(i)
            if any(flagged.cells[n] == ord("#") for n in around):
                chordable.append(i)
    chord_calls = [
        (lambda i=i: engine.chord(flagged, i % w, i // w, 20_000)) for i in chordable
    ]
    # Each call must really do the work being timed, not hit a no-op.
    assert all(call()[1] for call in reveal_calls + flag_calls + chord_calls)
    return {
        "reveal": _median_us(reveal_calls, 30),
        "reveal_zero": _median_us(cascade_calls, 30),
        "flag": _median_us(flag_calls, 30),
        "chord": _median_us(chord_calls, 30),
        "snapshot": float(len(engine.encode(game))),
        "snapshot_won": float(len(engine.encode(won(game)))),
    }


def won(game: Game) -> Game:
    mines = _mines(game)
    for i in range(game.width * game.height):
        if game.status != "playing":
            break
        if i not in mines and game.cells[i] == ord("#"):
            game, _ = engine.reveal(game, i % game.width, i // game.width, 30_000)
    assert game.status == "won"
    return game


def bench_big_cascade(runs: int = 7) -> tuple[float, float, int]:
    """A first click on a 1000x1000 board with one mine: the cascade opens every safe cell.

    Returns the median wall time and the median CPU time in milliseconds: on a
    shared machine the two differ, and the CPU time shows the engine's own cost.
    """
    fresh = engine.new_game(engine.custom(BIG, BIG, 1), seed=1, now_ms=0)
    wall, cpu = [], []
    cells = 0
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        game, diff = engine.reveal(fresh, BIG // 2, BIG // 2, 1)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert game.status == "won"
        cells = sum(len(chars) for _, _, chars in diff)  # runs count each cell
        del game, diff
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000, cells


def main() -> None:
    expert = bench_expert()
    cascade_ms, cascade_cpu_ms, cascade_cells = bench_big_cascade()
    rows = [
        ("expert reveal, median", expert["reveal"], "us", 50.0),
        ("expert reveal opening a zero, median", expert["reveal_zero"], "us", None),
        ("expert flag, median", expert["flag"], "us", None),
        ("expert chord, median", expert["chord"], "us", None),
        (f"1000x1000 cascade ({cascade_cells:,} cells), median", cascade_ms, "ms", 250.0),
        ("  the same, CPU time", cascade_cpu_ms, "ms", 250.0),
        ("expert snapshot, mid-game", expert["snapshot"], "B", 1024.0),
        ("expert snapshot, won", expert["snapshot_won"], "B", 1024.0),
    ]
    print(f"{'measure':<46} {'figure':>12} {'target':>12}")
    for name, value, unit, target in rows:
        figure = f"{value:,.1f} {unit}" if unit != "B" else f"{value:,.0f} {unit}"
        if target is None:
            print(f"{name:<46} {figure:>12} {'-':>12}")
            continue
        verdict = "ok" if value <= target else "MISSED"
        print(f"{name:<46} {figure:>12} {'<= ' + f'{target:,.0f} {unit}':>12}  {verdict}")
    versions = f"numpy {np.__version__}, msgspec {msgspec.__version__}"
    print(f"python {platform.python_version()}, {versions}")


if __name__ == "__main__":
    main()
