"""The m-adversary lattice of one group as bitmasks (paper 003 section III.A, Fig. 2-3).

A coalition is an int whose bit ``i`` is set when the i-th provider (in the verifier's
order) is a member. :class:`CoalitionVerdicts` keeps what pruning established: SAFE coalitions
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
    return int(mask).bit_count()


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


_LOW_HALVES = [
    0x5555555555555555,
    0x3333333333333333,
    0x0F0F0F0F0F0F0F0F,
    0x00FF00FF00FF00FF,
    0x0000FFFF0000FFFF,
    0x00000000FFFFFFFF,
]
"""Word masks of the bit positions ``p`` (0..63) whose bit ``i`` is 0, for ``i < 6``."""


def upward_closure(masks: np.ndarray, n: int) -> np.ndarray:
    """Which coalitions of ``n`` providers contain one of ``masks`` (a superset-OR zeta
    transform), as a bitset over all ``2^n`` coalitions: bit ``x % 64`` of word ``x // 64``.

    ``n`` OR-and-shift steps on ``2^n / 64`` words; :func:`bitset_test` reads it. The top-down
    verifier asks this per layer ("which coalitions still sit above an unresolved
    m-coalition") instead of testing every pair (coalition, unresolved m-coalition).
    """
    table = np.zeros(max(1 << n, 64), dtype=bool)
    table[np.asarray(masks, dtype=np.int64)] = True
    words = np.packbits(table, bitorder="little").view("<u8").copy()
    for i in range(min(n, 6)):
        shift = np.uint64(1 << i)
        words |= (words & np.uint64(_LOW_HALVES[i])) << shift
    for i in range(6, n):
        view = words.reshape(-1, 2, 1 << (i - 6))
        view[:, 1, :] |= view[:, 0, :]
    return words


def bitset_test(words: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Whether each coalition of ``masks`` is in the bitset ``words`` (see
    :func:`upward_closure`)."""
    masks = np.asarray(masks, dtype=np.int64)
    bits = words[masks >> 6] >> (masks & 63).astype(np.uint64)
    return (bits & np.uint64(1)).astype(bool)


class CoalitionVerdicts:
    """SAFE / BREACH / UNRESOLVED verdicts on the coalitions of an ``n``-provider lattice,
    for deciding its layer ``m_eff`` (the verifiers' knowledge base; not the adversary's
    background knowledge, :class:`kerckhoffs.attacks.knowledge.Knowledge`).

    UNRESOLVED is a boolean mask over the ``m_eff``-coalitions (numpy), so marking a
    coalition safe resolves all its ``m_eff``-subsets in one vectorized step; that step is deferred
    until UNRESOLVED is read. While every safe coalition is a top one (all providers but one) the
    answers need no numpy at all: with ``P`` the providers left out by the safe tops, the unresolved
    m-coalitions are exactly those containing ``P``. SAFE keeps only maximal coalitions and BREACH
    only minimal ones (``docs/theory/m-privacy.md#verifier-machinery``), which answer ``known_safe``
    / ``known_breach`` exactly as the full lists would, in fewer steps.
    """

    def __init__(self, n: int, m_eff: int) -> None:
        self.n = n
        self.m_eff = m_eff
        self.safe: list[int] = []
        self.breach: list[int] = []
        self._breach_by_size: dict[int, list[int]] = {}
        self.masks = layer_masks(n, m_eff)
        self._alive = np.ones(self.masks.size, dtype=bool)
        self._pending: list[int] = []
        self._full = (1 << n) - 1
        self._left_out: int | None = 0  # P while every safe coalition is a top one, else None
        self._inside: dict[int, np.ndarray] = {}
        self._last: tuple[int, np.ndarray] | None = None

    @property
    def alive(self) -> np.ndarray:
        """Boolean mask over ``masks``: the m_eff-coalitions not yet known safe."""
        if self._pending:
            left = self._left_out
            if left is not None:  # safe tops only: the unresolved are the supersets of P
                self._alive = (self.masks & left) == left
            elif len(self._pending) == 1:
                self._alive &= (self.masks & ~self._pending[0]) != 0
            else:
                outside = ~np.array(self._pending, dtype=np.int64)
                self._alive &= ((self.masks[:, None] & outside[None, :]) != 0).all(axis=1)
            self._pending.clear()
        return self._alive

    @property
    def unresolved(self) -> np.ndarray:
        """The ``m_eff``-coalitions not yet known safe."""
        return self.masks[self.alive]

    def any_unresolved_in(self, mask: int) -> bool:
        """Whether some unresolved coalition is a sub-coalition of ``mask``."""
        left = self._left_out
        if left is not None:  # some U with P <= U <= mask, |U| = m_eff
            return left & ~mask == 0 and left.bit_count() <= self.m_eff <= mask.bit_count()
        return bool(self.unresolved_mask_in(mask).any())

    def unresolved_mask_in(self, mask: int) -> np.ndarray:
        """Boolean mask over ``masks``: the unresolved sub-coalitions of ``mask`` (the last
        answer is kept until the next ``mark_safe``; the sub-coalition tests of the top
        coalitions, all providers but one, are kept for good)."""
        if self._last is not None and self._last[0] == mask:
            return self._last[1]
        inside = self._inside.get(mask)
        if inside is None:
            inside = (self.masks & ~mask) == 0
            if (self._full & ~mask).bit_count() == 1:
                self._inside[mask] = inside
        out = self.alive & inside
        self._last = (mask, out)
        return out

    def unresolved_in(self, mask: int) -> np.ndarray:
        """The unresolved sub-coalitions of ``mask``."""
        return self.masks[self.unresolved_mask_in(mask)]

    def covering(self, size: int) -> np.ndarray:
        """The ``size``-coalitions (ascending) that contain an unresolved ``m_eff``-coalition:
        the only ones whose check can still resolve something."""
        layer = layer_masks(self.n, size)
        unresolved = self.unresolved
        if self.n <= 24 and layer.size * unresolved.size > (1 << self.n):
            return layer[bitset_test(upward_closure(unresolved, self.n), layer)]
        return layer[((unresolved[None, :] & ~layer[:, None]) == 0).any(axis=1)]

    def known_safe(self, mask: int) -> bool:
        """Whether ``mask`` is a sub-coalition of a coalition known safe."""
        for s in self.safe:  # noqa: SIM110 (a loop is faster than any(genexpr))
            if mask & ~s == 0:
                return True
        return False

    def known_breach(self, mask: int) -> bool:
        """Whether ``mask`` contains a coalition known to breach (only BREACH members no
        larger than ``mask`` can)."""
        size = mask.bit_count()
        for members, group in self._breach_by_size.items():
            if members <= size:
                for b in group:
                    if b & ~mask == 0:
                        return True
        return False

    def mark_safe(self, mask: int) -> None:
        """Record ``mask`` safe: all its m_eff-subsets are resolved (downward pruning)."""
        if self.known_safe(mask):
            return
        self.safe = [s for s in self.safe if s & ~mask]
        self.safe.append(mask)
        self._pending.append(mask)
        self._last = None
        if self._left_out is not None:
            out = self._full & ~mask
            self._left_out = self._left_out | out if out.bit_count() == 1 else None

    def mark_breach(self, mask: int) -> None:
        """Record ``mask`` breaching: every super-coalition breaches (upward pruning)."""
        if self.known_breach(mask):
            return
        kept = [b for b in self.breach if mask & ~b]
        kept.append(mask)
        if len(kept) == len(self.breach) + 1:  # nothing dropped: file the new one
            self._breach_by_size.setdefault(mask.bit_count(), []).append(mask)
        else:
            self._breach_by_size = {}
            for b in kept:
                self._breach_by_size.setdefault(b.bit_count(), []).append(b)
        self.breach = kept

    @property
    def done(self) -> bool:
        """Whether every m_eff-coalition is resolved safe."""
        if self._left_out is not None:  # no m_eff-coalition contains P
            return self._left_out.bit_count() > self.m_eff
        return not self.alive.any()
