"""The m-adversary lattice of one group as bitmasks (paper 003 section III.A, Fig. 2-3).

A coalition is an int whose bit ``i`` is set when the i-th provider (in the verifier's
order) is a member. The knowledge base keeps what pruning established: SAFE coalitions
(no breach; with C EG-monotonic neither does any sub-coalition: downward pruning) and
BREACH coalitions (every super-coalition breaches: upward pruning), plus the m-coalitions
not yet known safe (UNRESOLVED).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations

import numpy as np


def popcount(mask: int) -> int:
    """Number of members of ``mask``."""
    return bin(mask).count("1")


def members(mask: int) -> list[int]:
    """The bit positions set in ``mask``, ascending."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def masks_of_size(n: int, r: int) -> Iterator[int]:
    """All coalitions of ``r`` of the ``n`` providers, in lexicographic order."""
    for combo in combinations(range(n), r):
        yield sum(1 << i for i in combo)


def subsets_of_size(mask: int, r: int) -> Iterator[int]:
    """All ``r``-member sub-coalitions of ``mask``."""
    for combo in combinations(members(mask), r):
        yield sum(1 << i for i in combo)


def is_subset(a: int, b: int) -> bool:
    """Whether coalition ``a`` is a sub-coalition of ``b`` (``a & ~b == 0``)."""
    return a & ~b == 0


@lru_cache(maxsize=64)
def layer_masks(n: int, r: int) -> np.ndarray:
    """All ``r``-member coalitions of ``n`` providers as an int64 array (ascending)."""
    if n > 25:
        return np.array(list(masks_of_size(n, r)), dtype=np.int64)
    every = np.arange(1 << n, dtype=np.int64)
    pop = np.zeros(every.size, dtype=np.int64)
    for i in range(n):
        pop += (every >> i) & 1
    out = every[pop == r]
    out.flags.writeable = False
    return out


class Knowledge:
    """SAFE / BREACH / UNRESOLVED for deciding layer ``m_eff`` of an ``n``-provider lattice.

    UNRESOLVED is a boolean mask over the ``m_eff``-coalitions (numpy), so marking a
    coalition safe resolves all its ``m_eff``-subsets in one vectorized step.
    """

    def __init__(self, n: int, m_eff: int) -> None:
        self.m_eff = m_eff
        self.safe: list[int] = []
        self.breach: list[int] = []
        self.masks = layer_masks(n, m_eff)
        self.alive = np.ones(self.masks.size, dtype=bool)

    @property
    def unresolved(self) -> np.ndarray:
        """The ``m_eff``-coalitions not yet known safe."""
        return self.masks[self.alive]

    def any_unresolved_in(self, mask: int) -> bool:
        """Whether some unresolved coalition is a sub-coalition of ``mask``."""
        return bool((self.alive & ((self.masks & ~mask) == 0)).any())

    def unresolved_in(self, mask: int) -> np.ndarray:
        """The unresolved sub-coalitions of ``mask``."""
        return self.masks[self.alive & ((self.masks & ~mask) == 0)]

    def known_safe(self, mask: int) -> bool:
        return any(is_subset(mask, s) for s in self.safe)

    def known_breach(self, mask: int) -> bool:
        return any(is_subset(b, mask) for b in self.breach)

    def mark_safe(self, mask: int) -> None:
        """Record ``mask`` safe: all its m_eff-subsets are resolved (downward pruning)."""
        self.safe.append(mask)
        self.alive &= (self.masks & ~mask) != 0

    def mark_breach(self, mask: int) -> None:
        """Record ``mask`` breaching: every super-coalition breaches (upward pruning)."""
        self.breach.append(mask)

    @property
    def done(self) -> bool:
        """Whether every m_eff-coalition is resolved safe."""
        return not self.alive.any()
