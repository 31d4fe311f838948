"""Two versions of the hints on the same seeds: which games only one of them won.

Run from the repository root, on two outcome files that ``tests.bench.winrate
--outcomes FILE`` wrote (one before a change, one after)::

    python -m tests.bench.paired before.txt after.txt
    python -m tests.bench.paired before.txt after.txt --list 20   # and the seeds

A win rate measured over 5,000 games is only known to about +-1.4 points, far
wider than most changes to a guess move it. But two versions played on the same
seeds make the same moves until their first different guess, so they differ on a
few games only, and whether one is better shows in those games alone: if neither
were better, each discordant game would be as likely to fall to either side. The
p-value is McNemar's exact test (a two-sided sign test on the discordant games);
games that only one file holds are left out.
"""

from __future__ import annotations

import argparse
import math
import sys

Key = tuple[str, str, int]  # preset, start, seed


def read(path: str) -> dict[Key, bool]:
    """Each game's result in a file; a game listed twice keeps its last line."""
    got: dict[Key, bool] = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            preset, start, seed, won = parts[:4]
            got[(preset, start, int(seed))] = won == "1"
    return got


def sign_test(a: int, b: int) -> float:
    """Two-sided exact p-value of a split of a + b discordant games into a and b,
    when each would fall to either side with even odds."""
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    # Summed in logs: C(n, i) / 2^n underflows long before n reaches the thousands.
    log_half = n * math.log(0.5)
    tail = sum(
        math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half)
        for i in range(k + 1)
    )
    return min(1.0, 2 * tail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("a", help="outcomes of version A (the baseline)")
    parser.add_argument("b", help="outcomes of version B")
    parser.add_argument("--list", type=int, default=10, metavar="N",
                        help="list up to N discordant seeds each way")
    args = parser.parse_args(argv)
    a, b = read(args.a), read(args.b)
    groups = sorted({k[:2] for k in a.keys() & b.keys()})
    if not groups:
        print("no game in common")
        return 1
    for preset, start in groups:
        keys = sorted(k for k in a.keys() & b.keys() if k[:2] == (preset, start))
        n = len(keys)
        wins_a = sum(a[k] for k in keys)
        wins_b = sum(b[k] for k in keys)
        only_a = [k[2] for k in keys if a[k] and not b[k]]
        only_b = [k[2] for k in keys if b[k] and not a[k]]
        p = sign_test(len(only_a), len(only_b))
        print(f"{preset} {start}: {n} games on the same seeds")
        print(f"  A won {wins_a} ({100 * wins_a / n:.2f} %), B won {wins_b} "
              f"({100 * wins_b / n:.2f} %), B - A {100 * (wins_b - wins_a) / n:+.2f} points")
        print(f"  discordant: {len(only_a)} won by A only, {len(only_b)} by B only; "
              f"sign test p = {p:.3g}")
        if args.list:
            print(f"  A only: {' '.join(map(str, only_a[: args.list]))}")
            print(f"  B only: {' '.join(map(str, only_b[: args.list]))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
