"""The m-adversary lattice of one group as bitmasks (paper 003 section III.A, Fig. 2-3).

A coalition is an int whose bit ``i`` is set when the i-th provider (in the verifier's
order) is a member. The knowledge base keeps what pruning established: SAFE coalitions
(no breach; with C EG-monotonic neither does any sub-coalition: downward pruning) and
BREACH coalitions (every super-coalition breaches: upward pruning), plus the m-coalitions
not yet known safe (UNRESOLVED).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations


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


class Knowledge:
    """SAFE / BREACH / UNRESOLVED for deciding layer ``m_eff`` of an ``n``-provider lattice."""

    def __init__(self, n: int, m_eff: int) -> None:
        self.m_eff = m_eff
        self.safe: list[int] = []
        self.breach: list[int] = []
        self.unresolved: set[int] = set(masks_of_size(n, m_eff))

    def known_safe(self, mask: int) -> bool:
        return any(is_subset(mask, s) for s in self.safe)

    def known_breach(self, mask: int) -> bool:
        return any(is_subset(b, mask) for b in self.breach)

    def mark_safe(self, mask: int) -> None:
        """Record ``mask`` safe: all its m_eff-subsets are resolved (downward pruning)."""
        self.safe.append(mask)
        if len(self.unresolved) < 64:
            self.unresolved = {u for u in self.unresolved if not is_subset(u, mask)}
        else:
            self.unresolved.difference_update(subsets_of_size(mask, self.m_eff))

    def mark_breach(self, mask: int) -> None:
        """Record ``mask`` breaching: every super-coalition breaches (upward pruning)."""
        self.breach.append(mask)
