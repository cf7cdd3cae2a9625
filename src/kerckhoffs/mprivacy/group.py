"""One equivalence group's per-provider statistics and the counted breach oracle
(paper 003 section III; ``docs/theory/m-privacy.md#verifier-machinery``).

Everything the verifiers ask is a function of counts: ``c[p]`` (records of provider ``p`` in
the group) and ``h[p, v]`` (of them, with SA value ``v``). The oracle answers "does
coalition I breach C?" (the paper's ``privacy_is_breached_by``) by checking C on
``H - sum_{p in I} h[p]`` and counts its calls, the paper's cost measure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.mprivacy.constraints import Constraint, DistinctL, KAnon
from kerckhoffs.mprivacy.fitness import fitness


@dataclass(frozen=True, eq=False)
class GroupStats:
    """Counts of one group: ``providers`` (ids, ascending), ``h[i, v]`` for the i-th of them."""

    providers: np.ndarray
    h: np.ndarray
    c: np.ndarray = field(init=False)
    H: np.ndarray = field(init=False)
    N: int = field(init=False)

    def __post_init__(self) -> None:
        if self.h.ndim != 2 or self.h.shape[0] == 0 or self.h.sum() == 0:
            raise ParameterError("an m-privacy group needs at least one record")
        object.__setattr__(self, "c", self.h.sum(axis=1))
        object.__setattr__(self, "H", self.h.sum(axis=0))
        object.__setattr__(self, "N", int(self.h.sum()))

    @classmethod
    def from_records(cls, provider: np.ndarray, sa: np.ndarray, n_sa: int) -> GroupStats:
        """Stats of the records ``(provider[i], sa[i])`` of one group."""
        provider = np.asarray(provider, dtype=np.int64)
        sa = np.asarray(sa, dtype=np.int64)
        ids, local = np.unique(provider, return_inverse=True)
        h = np.bincount(local * n_sa + sa, minlength=ids.size * n_sa).reshape(ids.size, n_sa)
        return cls(ids, h)

    @property
    def n_providers(self) -> int:
        """``n_G``: providers contributing to the group."""
        return int(self.providers.size)

    def m_eff(self, m: int) -> int:
        """``min(m, n_G - 1)``: a coalition owning every record has no victim
        (``docs/theory/m-privacy.md#per-group``)."""
        if m < 0:
            raise ParameterError(f"m must be at least 0, got {m}")
        return min(int(m), self.n_providers - 1)

    def coalition(self, members: Iterable[int]) -> tuple[int, np.ndarray]:
        """Records count and SA histogram contributed by the providers ``members``
        (local indices): ``G ∩ T_I``."""
        idx = list(members)
        if not idx:
            return 0, np.zeros_like(self.H)
        hist = self.h[idx].sum(axis=0)
        return int(hist.sum()), hist

    def power(self, members: Iterable[int], constraint: Constraint, alpha: float) -> float:
        """Attack power of a coalition: the fitness of the records it contributes (Eq. 1)."""
        count, hist = self.coalition(members)
        return fitness(constraint, count, hist, alpha)


class Oracle:
    """``breaches(I)``: whether removing coalition ``I`` (local provider indices, distinct)
    leaves a remainder violating C; ``calls`` counts the checks.

    For k-anonymity, distinct l-diversity and their conjunctions (the paper's C) a check
    costs no numpy call: the remainder has ``N - sum c[p]`` records and SA value ``v`` is
    still present iff some provider outside ``I`` holds it (its holder bitmask is not inside
    ``I``). Any other constraint is checked on the remainder's histogram. ``log`` keeps
    ``(I, breached)`` of every call only when ``keep_log`` is set (it costs time per call).
    """

    def __init__(self, stats: GroupStats, constraint: Constraint, keep_log: bool = False) -> None:
        self.stats = stats
        self.constraint = constraint
        self.calls = 0
        self.keep_log = keep_log
        self.log: list[tuple[tuple[int, ...], bool]] = []
        n = stats.n_providers
        self._n_records = stats.N
        self._c: list[int] = stats.c.tolist()
        self._bit = _bits(n)
        self._k, self._l, self._holders = _counting_form(stats, constraint)

    def breaches(self, members: Iterable[int]) -> bool:
        self.calls += 1
        if self._holders is None or self.keep_log:
            return self._breaches_hist(tuple(members))
        c, bit = self._c, self._bit
        taken = mask = 0
        for i in members:
            taken += c[i]
            mask |= bit[i]
        if self._n_records - taken < self._k:
            return True
        need = self._l
        if need <= 0:
            return False
        for holders in self._holders:  # most widely held values first: early exit
            if holders & ~mask:
                need -= 1
                if need == 0:
                    return False
        return True

    def _breaches_hist(self, idx: tuple[int, ...]) -> bool:
        s = self.stats
        if idx:
            rem = s.H - s.h[list(idx)].sum(axis=0)
            count = s.N - int(s.c[list(idx)].sum())
        else:
            rem, count = s.H, s.N
        out = not self.constraint.check(count, rem)
        if self.keep_log:
            self.log.append((idx, out))
        return out


@lru_cache(maxsize=64)
def _bits(n: int) -> tuple[int, ...]:
    """``1 << i`` for ``i < n`` (Python ints)."""
    return tuple(1 << i for i in range(n))


@lru_cache(maxsize=64)
def _powers(n: int) -> np.ndarray:
    """``1 << i`` for ``i < n`` (int64)."""
    out = np.int64(1) << np.arange(n, dtype=np.int64)
    out.flags.writeable = False
    return out


def _counting_form(stats: GroupStats, constraint: Constraint) -> tuple[int, int, list[int] | None]:
    """``(k, l, holders)`` when C is a conjunction of k-anonymity and distinct l-diversity
    parts (k, l the largest thresholds, 0 if absent; ``holders[v]`` the bitmask of providers
    holding SA value ``v``, most widely held first), else ``(0, 0, None)``."""
    thresholds = _thresholds(constraint)
    if thresholds is None or stats.n_providers > 62:
        return 0, 0, None
    k, l = thresholds  # noqa: E741
    holders = [x for x in ((stats.h > 0).T @ _powers(stats.n_providers)).tolist() if x]
    holders.sort(key=int.bit_count, reverse=True)
    return k, l, holders


@lru_cache(maxsize=64)
def _thresholds(constraint: Constraint) -> tuple[int, int] | None:
    """The largest k and distinct l of a conjunction of k-anonymity and distinct l-diversity
    parts (0 if absent), else None."""
    parts = constraint.parts
    if not all(type(p) in (KAnon, DistinctL) for p in parts):
        return None
    k = max((p.k for p in parts if isinstance(p, KAnon)), default=0)
    l = max((p.l for p in parts if isinstance(p, DistinctL)), default=0)  # noqa: E741
    return int(k), int(l)
