"""The exact m-privacy verifier over a whole partition, vectorized (paper 003 section II,
spec mprivacy.md 2.6 and 3.0; closed forms derived here, beyond the paper).

Input: the nonzero ``(group, provider, SA value) -> count`` triples of a partition. Per
group, ``m_eff = min(m, n_G - 1)``; m-privacy w.r.t. a conjunction is the conjunction of
m-privacy w.r.t. each component, and each component has a closed form:

- k-anonymity: the worst coalition is the ``m_eff`` providers with the most records, so
  ``N - (sum of the m_eff largest c_p) >= k``.
- distinct l-diversity: a value vanishes only when every provider holding it is in the
  coalition, so only values held by at most ``m_eff`` providers can vanish; the group breaches
  iff some ``m_eff`` of the providers holding such values make ``distinct - l + 1`` of them
  vanish. Settled without search when those providers are at most ``m_eff`` (they all fit in
  one coalition), else by every ``m_eff``-subset of them as bitmasks, batched over all groups
  that share (providers, m_eff).
- frequency l-diversity, ``|S| >= l * S_max(S)`` (not EG-monotonic, so Definition 2.1 lets the
  coalition put back any part S of its own records): for a coalition I with remainder R, the
  worst S is empty or all of I's records of one value v (adding records of v raises
  ``l * count_v`` by ``l >= 1`` per record and the size by 1; adding other values only helps),
  and the empty case is implied. So the group is m-private iff for every value v,
  ``N - l * H_v >= (sum of the m_eff largest c_p - h_p[v])``: the condition
  ``|R| + h_I[v] >= l * H_v`` maximized over I.

Nothing loops over rows or groups in Python; the only loops are over SA values' columns in
one sort and over distinct (providers, m_eff) shapes of the distinct-l search.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import EPS
from kerckhoffs.mprivacy.constraints import Constraint, DistinctL, FrequencyL, KAnon

MAX_CELLS = 4_000_000
"""Work-array budget (elements) of one batch of the distinct-l coalition search."""


class _Pairs:
    """The (group, provider) pairs of a partition with their per-value counts."""

    def __init__(
        self, g: np.ndarray, p: np.ndarray, s: np.ndarray, w: np.ndarray, n_groups: int, n_sa: int
    ) -> None:
        g = np.asarray(g, dtype=np.int64)
        p = np.asarray(p, dtype=np.int64)
        s = np.asarray(s, dtype=np.int64)
        w = np.asarray(w, dtype=np.int64)
        pairs, inv = np.unique(np.stack([g, p]), axis=1, return_inverse=True)
        inv = inv.reshape(-1)
        self.group = pairs[0]
        self.n_groups, self.n_sa = n_groups, n_sa
        self.h = np.zeros((self.group.size, n_sa), dtype=np.int64)
        np.add.at(self.h, (inv, s), w)
        self.c = self.h.sum(axis=1)
        self.n_g = np.bincount(self.group, minlength=n_groups)
        self.H = np.zeros((n_groups, n_sa), dtype=np.int64)
        np.add.at(self.H, (g, s), w)
        self.N = self.H.sum(axis=1)
        self.start = np.concatenate([[0], np.cumsum(self.n_g)[:-1]])

    def m_eff(self, m: np.ndarray) -> np.ndarray:
        return np.minimum(m, np.maximum(self.n_g - 1, 0))

    def top_sum(self, values: np.ndarray, m_eff: np.ndarray) -> np.ndarray:
        """Per group (and column), the sum of the ``m_eff`` largest ``values`` (pairs x K)."""
        vals = values.reshape(values.shape[0], -1)
        out = np.zeros((self.n_groups, vals.shape[1]), dtype=np.int64)
        if vals.shape[0] == 0:
            return out
        top = int(vals.max()) + 1
        key = self.group[:, None] * top + (top - 1 - vals)
        srt = np.take_along_axis(vals, np.argsort(key, axis=0, kind="stable"), axis=0)
        rank = np.arange(vals.shape[0]) - self.start[self.group]
        kept = np.where((rank < m_eff[self.group])[:, None], srt, 0)
        present = self.n_g > 0
        out[present] = np.add.reduceat(kept, self.start[present], axis=0)
        return out


def _k_ok(pairs: _Pairs, me: np.ndarray, k: int) -> np.ndarray:
    return pairs.N - pairs.top_sum(pairs.c, me)[:, 0] >= k


def _frequency_ok(pairs: _Pairs, me: np.ndarray, l: float) -> np.ndarray:  # noqa: E741
    worst = pairs.top_sum(pairs.c[:, None] - pairs.h, me)
    ok = pairs.N[:, None] + EPS >= l * pairs.H + worst
    return ok.all(axis=1) & (pairs.N > 0)


def _distinct_ok(pairs: _Pairs, me: np.ndarray, l: int) -> np.ndarray:  # noqa: E741
    held = pairs.h > 0
    holders = np.zeros((pairs.n_groups, pairs.n_sa), dtype=np.int64)
    np.add.at(holders, pairs.group, held.astype(np.int64))
    need = np.count_nonzero(pairs.H, axis=1) - l + 1
    vuln = (holders > 0) & (holders <= me[:, None])
    n_vuln = vuln.sum(axis=1)
    ok = need >= 1
    undecided = ok & (n_vuln >= need)
    # providers holding a vanishable value, numbered within their group
    rel = (held & vuln[pairs.group]).any(axis=1)
    n_rel = np.bincount(pairs.group[rel], minlength=pairs.n_groups)
    fits = undecided & (n_rel <= me)
    ok &= ~fits
    search = undecided & ~fits
    if not search.any():
        return ok
    if n_rel[search].max() > 62:
        raise ParameterError(
            "m-privacy with distinct l-diversity: a group has more than 62 providers holding "
            "rare values; the exact coalition search does not support it"
        )
    rel_start = np.concatenate([[0], np.cumsum(n_rel)[:-1]])
    local = np.cumsum(rel) - 1 - rel_start[pairs.group]
    masks = np.zeros((pairs.n_groups, pairs.n_sa), dtype=np.uint64)
    gi, si = np.nonzero(held & rel[:, None] & vuln[pairs.group])
    np.add.at(
        masks,
        (pairs.group[gi], si),
        np.left_shift(np.uint64(1), local[gi].astype(np.uint64)),
    )
    masks[~vuln] = np.uint64(1) << np.uint64(63)  # never inside a coalition of <= 62 bits
    shapes = np.stack([n_rel[search], me[search]], axis=1)
    groups = np.nonzero(search)[0]
    for r, size in np.unique(shapes, axis=0):
        batch = groups[(shapes[:, 0] == r) & (shapes[:, 1] == size)]
        combos = np.array(
            [sum(1 << i for i in c) for c in combinations(range(int(r)), int(size))],
            dtype=np.uint64,
        )
        outside = ~combos
        cstep = max(1, MAX_CELLS // pairs.n_sa)
        bstep = max(1, MAX_CELLS // (min(combos.size, cstep) * pairs.n_sa))
        for b0 in range(0, batch.size, bstep):
            b = batch[b0 : b0 + bstep]
            for c0 in range(0, combos.size, cstep):
                out = outside[c0 : c0 + cstep]
                killed = ((masks[b][:, None, :] & out[None, :, None]) == 0).sum(axis=2)
                ok[b] &= killed.max(axis=1) < need[b]
    return ok


def m_private_triples(
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n_groups: int,
    n_sa: int,
    m: int | np.ndarray,
    constraint: Constraint,
) -> np.ndarray:
    """Per group, whether it is m-private w.r.t. ``constraint``, from the triples
    ``(g[i], p[i], s[i])`` holding ``w[i]`` records; ``m`` may differ per group."""
    pairs = _Pairs(g, p, s, w, n_groups, n_sa)
    return _private(pairs, np.broadcast_to(np.asarray(m, dtype=np.int64), (n_groups,)), constraint)


def _private(pairs: _Pairs, m: np.ndarray, constraint: Constraint) -> np.ndarray:
    if (m < 0).any():
        raise ParameterError("m must be at least 0")
    me = pairs.m_eff(m)
    ok = pairs.N > 0
    for part in constraint.parts:
        if isinstance(part, KAnon):
            ok &= _k_ok(pairs, me, part.k)
        elif isinstance(part, DistinctL):
            ok &= _distinct_ok(pairs, me, part.l)
        elif isinstance(part, FrequencyL):
            ok &= _frequency_ok(pairs, me, part.l)
        else:
            raise ParameterError(
                f"the exact m-privacy verifier has no closed form for {type(part).__name__}; "
                "it takes k, l and distinct-l"
            )
    return ok


def _achieved(pairs: _Pairs, n_providers: int, constraint: Constraint) -> np.ndarray:
    cap = np.maximum(pairs.n_g - 1, 0)
    top_ok = _private(pairs, cap, constraint)
    lo = np.full(pairs.n_groups, -1, dtype=np.int64)
    hi = cap.copy()
    while True:
        open_ = (hi - lo > 1) & ~top_ok
        if not open_.any():
            break
        mid = np.where(open_, (lo + hi) // 2, 0)
        ok = _private(pairs, mid, constraint)
        lo = np.where(open_ & ok, mid, lo)
        hi = np.where(open_ & ~ok, mid, hi)
    return np.where(top_ok, max(n_providers - 1, 0), lo)


def _triples(
    group: np.ndarray, provider: np.ndarray, sa: np.ndarray, n_providers: int, n_sa: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    key = (np.asarray(group, dtype=np.int64) * n_providers + provider) * n_sa + sa
    uniq, counts = np.unique(key, return_counts=True)
    return uniq // (n_providers * n_sa), uniq // n_sa % n_providers, uniq % n_sa, counts


def m_private_groups(
    group: np.ndarray,
    provider: np.ndarray,
    sa: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    m: int | np.ndarray,
    constraint: Constraint,
) -> np.ndarray:
    """Per group, whether it is m-private w.r.t. ``constraint`` (rows given by their group
    id, provider code and SA code). ``m`` is one value or one per group.

    >>> import numpy as np
    >>> from kerckhoffs.mprivacy.constraints import KAnon
    >>> m_private_groups(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 1, 0, 1]),
    ...                  np.zeros(5, int), 2, 2, 1, 1, KAnon(2)).tolist()
    [False, False]
    """
    g, p, s, w = _triples(group, provider, sa, n_providers, n_sa)
    return m_private_triples(g, p, s, w, n_groups, n_sa, m, constraint)


def achieved_m(
    group: np.ndarray,
    provider: np.ndarray,
    sa: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    constraint: Constraint,
) -> np.ndarray:
    """Per group, the largest m for which it is m-private: -1 when it violates the
    constraint itself, ``n_providers - 1`` (the largest meaningful m) when no coalition of
    its providers breaks it, else a value below its ``n_G - 1``."""
    g, p, s, w = _triples(group, provider, sa, n_providers, n_sa)
    return achieved_triples(g, p, s, w, n_groups, n_providers, n_sa, constraint)


def achieved_triples(
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    constraint: Constraint,
) -> np.ndarray:
    """:func:`achieved_m` from nonzero ``(group, provider, value) -> count`` triples."""
    return _achieved(_Pairs(g, p, s, w, n_groups, n_sa), n_providers, constraint)
