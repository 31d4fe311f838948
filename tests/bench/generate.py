"""No-guess board generation time per preset, against the targets.

Run from the repository root::

    python -m tests.bench.generate            # presets and a 100x100 board at 20%
    python -m tests.bench.generate --seeds 500 --custom 50x50x500

Each board is generated for a first click drawn from its seed, as players click
anywhere. Wall time is what a player waits for; CPU time is shown beside it
because other work on a shared machine inflates wall time.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from service.engine.noguess import generate
from service.engine.rng import SplitMix64
from service.engine.settings import PRESETS

# (p50, p99) targets in milliseconds; only expert has a stated one.
TARGETS_MS: dict[str, tuple[float, float]] = {"expert": (200.0, 2000.0)}


def measure(width: int, height: int, mines: int, seeds: int) -> tuple[list[float], list[float]]:
    generate(width, height, mines, width // 2, height // 2, 0)  # warm up imports and caches
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
    parser.add_argument("--seeds", type=int, default=300, help="boards per preset")
    parser.add_argument(
        "--custom", default="100x100x2000", help="an extra WIDTHxHEIGHTxMINES board"
    )
    parser.add_argument("--custom-seeds", type=int, default=30)
    args = parser.parse_args(argv)
    boards: list[tuple[str, int, int, int, int]] = [
        (name, s.width, s.height, s.mines, args.seeds) for name, s in PRESETS.items()
    ]
    if args.custom:
        w, h, m = (int(v) for v in args.custom.lower().split("x"))
        boards.append((f"{w}x{h}/{m}", w, h, m, args.custom_seeds))
    print(f"{'board':<14}{'n':>5}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'cpu p50':>9}{'cpu p99':>9}  target")
    failed = False
    for name, w, h, m, n in boards:
        wall, cpu = measure(w, h, m, n)
        p50, p99 = pct(wall, 50), pct(wall, 99)
        verdict = ""
        target = TARGETS_MS.get(name)
        if target is not None:
            ok = p50 <= target[0] and p99 <= target[1]
            failed |= not ok
            verdict = f"p50 <= {target[0]:.0f}, p99 <= {target[1]:.0f}: {'ok' if ok else 'MISSED'}"
        print(f"{name:<14}{n:>5}{p50:>9.1f}{p99:>9.1f}{max(wall):>9.1f}"
              f"{pct(cpu, 50):>9.1f}{pct(cpu, 99):>9.1f}  {verdict}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
