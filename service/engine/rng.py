"""A small seeded PRNG with a stream fixed by this file alone.

Python's ``random`` only promises a stable stream for ``random()``; boards must
stay the same for a seed across Python and NumPy upgrades, so the generator is
SplitMix64, written out here.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1


class SplitMix64:
    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next64(self) -> int:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, without modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            r = self.next64()
            if r < limit:
                return r % n

    def sample(self, population: list[int], k: int) -> list[int]:
        """``k`` distinct items of ``population`` (partial Fisher-Yates; the list is shuffled)."""
        n = len(population)
        for i in range(k):
            j = i + self.below(n - i)
            population[i], population[j] = population[j], population[i]
        return population[:k]


def derive_seed(seed: int, *salt: int) -> int:
    """A seed for a sub-stream (a retry, a daily board) that is still a function of ``seed``."""
    rng = SplitMix64(seed)
    for s in salt:
        rng = SplitMix64(rng.next64() ^ (s & _MASK))
    return rng.next64()
