"""Whether a human account's win is one no person could have played, and so is held off
the human leaderboards: faster than the human records allow, or moves spaced the way
a program spaces them.

The limits come from the published human records (minesweepergame.com's world records
and the Authoritative Minesweeper rankings; the README says how they were chosen).
Pure functions: the caller gives the times.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

from .. import wire

# 3BV/s above which a win is beyond any person, per preset: beginner just above its record's
# rate (0.09 s on 3BV 2), intermediate and expert above what their record times (under 8 s,
# 26.59 s) reach on any but the rarest boards; the README says how.
HUMAN_BBBV_PER_S: dict[str, float] = {"beginner": 25.0, "intermediate": 12.0, "expert": 10.0}
# Moves this close together, in the middle of a game, are a program's: no person clicks
# 25 times a second for long.
FASTEST_MEDIAN_GAP_MS = 40
FAST_GAPS = 20
# Gaps this regular (half their spread within 5 % of their median) are a metronome's.
METRONOME_SPREAD = 0.05
METRONOME_GAPS = 30


def verdict(
    preset: str, bbbv: int, elapsed_ms: int, move_times: Sequence[int]
) -> wire.Held | None:
    """Why the win is held, or None when a person could have played it. ``move_times``
    are the server times of the game's moves in order (the last ones, at least)."""
    return too_fast(preset, bbbv, elapsed_ms) or machine_cadence(move_times)


def too_fast(preset: str, bbbv: int, elapsed_ms: int) -> wire.Held | None:
    limit = HUMAN_BBBV_PER_S.get(preset)
    # One click clears a board of 3BV 1 in no time at all: luck, not speed.
    if limit is None or bbbv < 2:
        return None
    rate = bbbv * 1000 / elapsed_ms if elapsed_ms > 0 else float("inf")
    if rate <= limit:
        return None
    pace = "in no time at all" if elapsed_ms <= 0 else f"at {rate:.1f} 3BV/s"
    return wire.Held(
        reason="faster_than_human_records",
        detail=f"a board of 3BV {bbbv} cleared {pace}: the human records on {preset} "
        f"stay under {limit:g} 3BV/s",
    )


def machine_cadence(move_times: Sequence[int]) -> wire.Held | None:
    gaps = [b - a for a, b in itertools.pairwise(move_times)]
    if len(gaps) < FAST_GAPS:
        return None
    middle = statistics.median(gaps)
    if middle < FASTEST_MEDIAN_GAP_MS:
        return wire.Held(
            reason="machine_cadence",
            detail=f"moves {middle:g} ms apart (the median of {len(gaps)} gaps): "
            "no person keeps that pace",
        )
    if len(gaps) >= METRONOME_GAPS:
        spread = statistics.median(abs(g - middle) for g in gaps)
        if spread <= METRONOME_SPREAD * middle:
            return wire.Held(
                reason="machine_cadence",
                detail=f"moves {middle:g} ms apart, half of {len(gaps)} gaps within "
                f"{spread:g} ms of that: the regularity of a program",
            )
    return None
