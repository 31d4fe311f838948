"""No-guess board generation time per board, against the targets.

Run from the repository root::

    python -m tests.bench.generate                  # every board below
    python -m tests.bench.generate --seeds 500      # more boards per size
    python -m tests.bench.generate --custom 50x50x500 --custom-seeds 30

Each board is generated for a first click drawn from its seed, as players click
anywhere. Wall time is what a player waits for; CPU time is shown beside it
because other work on a shared machine inflates wall time, and the verdict is
taken on CPU time for that reason.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from service.engine.noguess import generate
from service.engine.rng import SplitMix64
from service.engine.settings import PRESETS

# name, width, height, mines, share of --seeds, target (p50, p99) in ms or None
BOARDS: list[tuple[str, int, int, int, float, tuple[float, float] | None]] = [
    *((name, s.width, s.height, s.mines, 1.0, None) for name, s in PRESETS.items()),
    ("30x16 at 30%", 30, 16, 144, 1.0, (100.0, 500.0)),
    ("32x32 at 35%", 32, 32, 358, 0.5, (500.0, 2000.0)),
    ("100x100 at 20%", 100, 100, 2000, 0.1, None),
    ("500x500 at 20%", 500, 500, 50_000, 0.01, (10_000.0, 10_000.0)),
]
BOARDS = [
    (n, w, h, m, share, (200.0, 2000.0) if n == "expert" else t)
    for n, w, h, m, share, t in BOARDS
]


def measure(width: int, height: int, mines: int, seeds: int) -> tuple[list[float], list[float]]:
    wall: list[float] = []
    cpu: list[float] = []
    for seed in range(1, seeds + 1):
        rng = SplitMix64(seed)
        x, y = rng.below(width), rng.below(height)
        t0, c0 = time.perf_counter(), time.process_time()
        generate(width, height, mines, x, y, seed)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=200, help="boards for the small sizes")
    parser.add_argument("--custom", help="an extra WIDTHxHEIGHTxMINES board")
    parser.add_argument("--custom-seeds", type=int, default=30)
    args = parser.parse_args(argv)
    boards = [(n, w, h, m, max(2, round(args.seeds * share)), t)
              for n, w, h, m, share, t in BOARDS]
    if args.custom:
        w, h, m = (int(v) for v in args.custom.lower().split("x"))
        boards.append((f"{w}x{h}/{m}", w, h, m, args.custom_seeds, None))
    generate(30, 16, 99, 15, 8, 0)  # imports and first-use costs
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'board':<16}{'n':>5}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'cpu p50':>9}{'cpu p99':>9}  target (cpu)")
    failed = False
    for name, w, h, m, n, target in boards:
        wall, cpu = measure(w, h, m, n)
        verdict = ""
        if target is not None:
            ok = pct(cpu, 50) <= target[0] and pct(cpu, 99) <= target[1]
            failed |= not ok
            verdict = f"p50 <= {target[0]:.0f}, p99 <= {target[1]:.0f}: {'ok' if ok else 'MISSED'}"
        print(f"{name:<16}{n:>5}{pct(wall, 50):>9.1f}{pct(wall, 99):>9.1f}{max(wall):>9.1f}"
              f"{pct(cpu, 50):>9.1f}{pct(cpu, 99):>9.1f}  {verdict}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
