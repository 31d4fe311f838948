"""The rules that hold a human's win off the human boards, on chosen times: faster than
the human records allow, or moves spaced like a program's. (The service applying them
to real games is in test_leaderboards.py.)"""

from __future__ import annotations

import random

import pytest

from service.api import held


@pytest.mark.parametrize(
    ("preset", "bbbv", "elapsed_ms", "is_held"),
    [
        ("beginner", 20, 800, False),  # 25 3BV/s: the limit itself is allowed
        ("beginner", 20, 790, True),
        ("beginner", 2, 90, False),  # the fastest published beginner game: 0.09 s, 3BV 2
        ("beginner", 2, 0, True),  # two clicks in the same millisecond
        ("beginner", 1, 0, False),  # one lucky click clears a board of 3BV 1: no speed at all
        ("intermediate", 60, 5000, False),  # 12 3BV/s
        ("intermediate", 60, 4900, True),
        ("expert", 150, 15_000, False),  # 10 3BV/s
        ("expert", 150, 14_900, True),
    ],
)
def test_faster_than_the_human_records(
    preset: str, bbbv: int, elapsed_ms: int, is_held: bool
) -> None:
    verdict = held.too_fast(preset, bbbv, elapsed_ms)
    assert (verdict is not None) == is_held
    if verdict is not None:
        assert verdict.reason == "faster_than_human_records"
        assert preset in verdict.detail and f"3BV {bbbv}" in verdict.detail


def times(gaps: list[float]) -> list[int]:
    out = [1_000_000]
    for gap in gaps:
        out.append(out[-1] + round(gap))
    return out


def test_moves_closer_than_a_person_clicks() -> None:
    rng = random.Random(1)
    fast = times([rng.uniform(2, 30) for _ in range(40)])
    verdict = held.machine_cadence(fast)
    assert verdict is not None and verdict.reason == "machine_cadence"
    assert "no person keeps that pace" in verdict.detail
    # A few fast moves among a person's are no program: the median decides.
    mixed = times([rng.uniform(2, 30) for _ in range(15)]
                  + [rng.uniform(90, 600) for _ in range(25)])
    assert held.machine_cadence(mixed) is None


def test_moves_as_regular_as_a_metronome() -> None:
    rng = random.Random(2)
    steady = times([200 + rng.uniform(-4, 4) for _ in range(40)])
    verdict = held.machine_cadence(steady)
    assert verdict is not None and "regularity of a program" in verdict.detail
    # A person's rhythm wanders far more than that.
    person = times([rng.lognormvariate(5.3, 0.45) for _ in range(40)])
    assert held.machine_cadence(person) is None
    # Too few moves to tell.
    assert held.machine_cadence(times([200] * 25)) is None
    assert held.machine_cadence(times([5] * 19)) is None


def test_a_verdict_names_the_first_reason() -> None:
    fast_and_steady = times([10] * 40)
    verdict = held.verdict("beginner", 30, 200, fast_and_steady)
    assert verdict is not None and verdict.reason == "faster_than_human_records"
    assert held.verdict("beginner", 30, 60_000, fast_and_steady) == held.machine_cadence(
        fast_and_steady
    )
    assert held.verdict("expert", 120, 60_000, times([180, 240, 90, 400] * 10)) is None
