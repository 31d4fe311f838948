"""A small seeded PRNG with a stream fixed by this file alone.

Python's ``random`` only promises a stable stream for ``random()``; boards must
stay the same for a seed across Python and NumPy upgrades, so the generator is
SplitMix64, written out here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


class SplitMix64:
    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK

    def next64(self) -> int:
        self._state = (self._state + _GAMMA) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        return z ^ (z >> 31)

    def next64_many(self, count: int) -> npt.NDArray[np.uint64]:
        """The next ``count`` values of :meth:`next64` at once, state moved on the same.

        The k-th state is ``seed + k * GAMMA``, so the whole block is computed
        without a Python loop; uint64 arithmetic in NumPy wraps exactly like the
        masks above.
        """
        steps = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(self._state) + steps * np.uint64(_GAMMA)
        self._state = (self._state + count * _GAMMA) & _MASK
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
        out: npt.NDArray[np.uint64] = z ^ (z >> np.uint64(31))
        return out

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, without modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            r = self.next64()
            if r < limit:
                return r % n

    def below_many(self, n: int, draws: int) -> npt.NDArray[np.uint64]:
        """What repeated :meth:`below` calls return, from the next ``draws`` raw values.

        Rejected values are dropped, so the result may be shorter than ``draws``;
        in order, it is exactly the sequence of :meth:`below` results.
        """
        if n <= 0:
            raise ValueError("n must be positive")
        raw = self.next64_many(draws)
        rest = (1 << 64) % n
        if rest:
            raw = raw[raw < np.uint64((1 << 64) - rest)]
        values: npt.NDArray[np.uint64] = raw % np.uint64(n)
        return values

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
