"""MDAV microaggregation (Domingo-Ferrer & Mateo-Sanz, "Practical data-oriented
microaggregation for statistical disclosure control", IEEE TKDE 14(1), 2002, as paper 004 cites
it; ``docs/theory/composition.md#mdav``).

One of paper 004's k-anonymizers. Maximum Distance to Average Vector, on the QIs encoded as numbers
(numeric QIs by value, categorical ones by their hierarchy-ordered codes) and z-scored per column
(paper 004 leaves the encoding open; our resolution, ordinal codes standardized, is
``docs/theory/composition.md#err-mdav-encoding``; a constant column stays 0), with Euclidean
distance:

```
while |R| >= 3k:
    c = centroid(R); r = farthest from c; group r + its k-1 nearest; remove them
    s = farthest from r (in what remains); group s + its k-1 nearest; remove them
if |R| >= 2k: c = centroid(R); r = farthest from c; group r + its k-1 nearest; remove them
the rest (k .. 2k-1 rows) is the last group
```

Every group has between ``k`` and ``2k - 1`` rows. Ties in distance are broken by row id (the
lowest first), the centroid is the exact mean rounded once, so the output is deterministic
and ``seed`` is unused. Each round is ``O(T d)`` numpy work over the ``T`` distinct points still
live (three distance passes, two farthest points, two partial selections) and there are about
``n / (2k)`` rounds: ``O(n T d / k)`` in all. Census stand-in subset of 37.6k rows (14k
distinct), k = 5: about 1.9 s, against 4.3 s for the row-by-row version this replaced
(``benchmarks/bench_mdav.py``).

Publication. Our reading of paper 004 (``docs/theory/composition.md#mdav``) has each group publish
its *centroid* as the QI summary (the classic microaggregation output, which paper 004's
nearest-centroid locator attacks). A :class:`~kerckhoffs.release.Release` has no centroid scheme, so
``mdav`` publishes the groups by **generalization** (each group's cells: ``[lo-hi]`` for numeric
QIs, the lowest common hierarchy node for categorical ones), exactly like the other partitioning
algorithms, and the SA multiset is untouched. The centroids that reading describes are available
from :func:`mdav_centroids` (same encoding as the grouping), for the nearest-centroid locator.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import pick, refuse_others, register
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release


def mdav_encode(table: Table) -> np.ndarray:
    """The QIs as z-scored float64 [n, d] (C order): what MDAV measures distances on.

    Numeric QIs by their values, categorical ones by their hierarchy-ordered codes (paper 004
    leaves the encoding open: ``docs/theory/composition.md#err-mdav-encoding``); then every column
    is z-scored.
    """
    x = np.empty(table.qi.shape, dtype=np.float64)
    for j, col in enumerate(table.qi_columns):
        codes = table.qi[:, j]
        x[:, j] = col.values[codes].astype(np.float64) if col.kind == Kind.NUMERIC else codes
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    return (x - mean) / std


def mdav_centroids(release: Release) -> np.ndarray:
    """Each group's centroid in :func:`mdav_encode` space: float64 [groups, d]."""
    x = mdav_encode(release.table)
    g = release.partition.group
    sums = np.zeros((release.partition.n_groups, x.shape[1]))
    np.add.at(sums, g, x)
    return sums / release.partition.sizes[:, None]


def _exact_units(cols: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Each coordinate as an exact integer multiple of a power of two per coordinate axis:
    ``cols[j, t] == exact[j, t] * 2 ** units[j]`` (``exact`` holds Python ints, so sums of
    them are exact at any size). Every float64 is ``mantissa * 2 ** exponent`` with a 53-bit
    integer mantissa; ``units[j]`` is the smallest exponent on axis ``j``."""
    mant, expo = np.frexp(cols)
    m = (mant * 2.0**53).astype(np.int64)  # exact: frexp's mantissa has 53 bits
    e = expo.astype(np.int64) - 53
    e[m == 0] = np.iinfo(np.int64).max
    units = [int(v) if v != np.iinfo(np.int64).max else 0 for v in e.min(axis=1)]
    exact = np.empty(cols.shape, dtype=object)
    for j, u in enumerate(units):
        shift = np.where(m[j] == 0, 0, e[j] - u).astype(object)
        exact[j] = m[j].astype(object) * (2**shift if shift.size else shift)
    return units, exact


def _mean(total: int, n: int, unit: int) -> float:
    """``total * 2 ** unit / n`` rounded once to float64."""
    if unit > -900:  # no subnormal result, so the power-of-two scale is exact
        try:
            return math.ldexp(total / n, unit)
        except OverflowError:
            pass
    return float(Fraction(total, n) * Fraction(2) ** unit)


class _Types:
    """The live points of an MDAV run, folded into *types* (distinct points).

    Rows with equal coordinates are interchangeable for every distance MDAV computes, so the
    distances are computed once per type, not once per row. Each type keeps its rows in row-id
    order; MDAV's tie rule (lowest row id first) always takes a type's rows from the front,
    so a type's live rows are a suffix of its list: ``order[ptr[t]:end[t]]``.

    The arrays cover the live types only (compacted once a quarter of them has emptied), in
    order of their first row id.
    """

    def __init__(self, x: np.ndarray) -> None:
        # + 0.0 turns -0.0 into 0.0, so equal points are equal bytes
        pts, inverse, counts = np.unique(
            np.asarray(x, dtype=np.float64) + 0.0, axis=0, return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")  # rows by type, then row id
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        first = order[start]  # each type's lowest row id
        by_first = np.argsort(first, kind="stable")
        self.order = order
        self.cols = np.ascontiguousarray(pts[by_first].T)  # [d, T]: one row per coordinate
        self.ptr = start[by_first].astype(np.int64)
        self.end = (start + counts)[by_first].astype(np.int64)
        self.cnt = counts[by_first].astype(np.int64)
        self.n_alive = int(x.shape[0])
        self.n_dead_types = 0
        self._buf = np.empty_like(self.cols)
        self.units, exact = _exact_units(self.cols)
        self.total = list((exact * self.cnt.astype(object)).sum(axis=1))  # exact Python ints
        self.exact = exact.T.tolist()  # per type, its coordinates as exact ints

    def centroid(self) -> np.ndarray:
        """The exact mean of the live points, rounded once to float64 (``int / int`` is
        correctly rounded; the power-of-two scale is exact)."""
        return np.array(
            [_mean(s, self.n_alive, e) for s, e in zip(self.total, self.units, strict=True)]
        )

    def dist(self, point: np.ndarray) -> np.ndarray:
        """Squared Euclidean distance of every live type to ``point`` (a fresh array)."""
        np.subtract(self.cols, point[:, None], out=self._buf)
        np.square(self._buf, out=self._buf)
        return np.add.reduce(self._buf, axis=0)

    def head(self, t: np.ndarray) -> np.ndarray:
        """The lowest live row id of each type in ``t``."""
        return self.order[self.ptr[t]]

    def farthest(self, d: np.ndarray) -> int:
        """The live type holding the farthest row (ties: the lowest row id)."""
        dm = np.where(self.cnt > 0, d, -1.0)
        best = np.flatnonzero(dm == dm.max())
        return int(best[0]) if best.size == 1 else int(best[np.argmin(self.head(best))])

    def take(self, center: int, d: np.ndarray, k: int) -> np.ndarray:
        """Remove and return the row ids of the head row of type ``center`` and the ``k - 1``
        live rows nearest to it (``d``: every type's distance to it), ties by lowest row id."""
        cnt = self.cnt
        left = int(cnt[center]) - 1  # the center row itself goes first, whatever its distance
        need = min(k - 1, self.n_alive - 1)
        hit = [np.array([center])]
        count = [np.array([1])]
        if need > 0:
            dm = np.where(cnt > 0, d, np.inf)
            if left == 0:
                dm[center] = np.inf
            n_live = cnt.size - self.n_dead_types - (left == 0)
            kth = min(need, n_live) - 1
            cand = np.flatnonzero(dm <= np.partition(dm, kth)[kth])
            cand = cand[np.argsort(dm[cand], kind="stable")]
            cd = dm[cand]
            avail = cnt[cand] - (cand == center)  # live rows each candidate can give
            at = int(np.searchsorted(np.cumsum(avail), need))  # first type reaching need
            thr = cd[at]
            below = cd < thr
            hit.append(cand[below])
            count.append(avail[below])
            rest = need - int(avail[below].sum())
            tied = cd == thr
            if tied.sum() == 1:
                hit.append(cand[tied])
                count.append(np.array([rest]))
            else:  # the lowest row ids among the tied types' first ``rest`` live rows
                t_ids, t_avail = cand[tied], avail[tied]
                lo = self.ptr[t_ids] + (t_ids == center)
                m = np.minimum(t_avail, rest)
                rows = np.concatenate([self.order[a : a + b] for a, b in zip(lo, m, strict=True)])
                owner = np.repeat(np.arange(t_ids.size), m)
                got = np.bincount(
                    owner[np.argsort(rows, kind="stable")[:rest]], minlength=t_ids.size
                )
                hit.append(t_ids)
                count.append(got)
        h = np.concatenate(hit)
        c = np.concatenate(count)
        h, inv = np.unique(h, return_inverse=True)  # the center may also be a candidate
        c = np.bincount(inv.reshape(-1), weights=c, minlength=h.size).astype(np.int64)
        h, c = h[c > 0], c[c > 0]
        rows = np.concatenate([self.order[a : a + b] for a, b in zip(self.ptr[h], c, strict=True)])
        total = self.total
        for t, m in zip(h.tolist(), c.tolist(), strict=True):
            total = [a - m * b for a, b in zip(total, self.exact[t], strict=True)]
        self.total = total
        self.ptr[h] += c
        cnt[h] -= c
        self.n_alive -= rows.size
        self.n_dead_types += int((cnt[h] == 0).sum())
        return rows

    def compact(self) -> None:
        """Drop the emptied types once they are a quarter of the arrays."""
        if self.n_dead_types < 0.25 * self.cnt.size:
            return
        keep = self.cnt > 0
        self.cols = np.ascontiguousarray(self.cols[:, keep])
        self.exact = [e for e, kept in zip(self.exact, keep.tolist(), strict=True) if kept]
        self.ptr, self.end, self.cnt = self.ptr[keep], self.end[keep], self.cnt[keep]
        self.n_dead_types = 0
        self._buf = np.empty_like(self.cols)

    def live_rows(self) -> np.ndarray:
        live = np.flatnonzero(self.cnt)
        return np.concatenate(
            [self.order[a:b] for a, b in zip(self.ptr[live], self.end[live], strict=True)]
            or [np.empty(0, dtype=np.int64)]
        )


def mdav_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Group id per row of ``x`` (float [n, d]) by MDAV; ids in order of formation.

    Distances are computed per distinct point (:class:`_Types`), which on real QIs is a
    fraction of the rows (Census stand-in subsets: 14k types for 37.6k rows). Each round
    costs three passes over the live types: the distance to the centroid, to ``r`` (which
    serves both for ``r``'s nearest and for the point farthest from ``r``) and to ``s``.

    The centroid is the exact mean of the live points rounded once to float64 (a running sum
    in exact integers, :func:`_exact_units`): a function of the live points alone, not of the
    order of summation, the compaction state or a BLAS build. So the distances, and the ties
    our reading breaks by lowest row id, are those of the plain pseudo-code with that centroid
    (the tests' reference); a float running sum would let its last bit decide points that tie
    in distance to the centroid, which happens on Adult.
    """
    n = x.shape[0]
    group = np.full(n, -1, dtype=np.int32)
    if n == 0:
        return group
    live = _Types(x)
    next_id = 0

    def form(center: int, d: np.ndarray) -> None:
        nonlocal next_id
        group[live.take(center, d, k)] = next_id
        next_id += 1

    while live.n_alive >= 3 * k:
        live.compact()
        r = live.farthest(live.dist(live.centroid()))
        d_r = live.dist(live.cols[:, r].copy())
        form(r, d_r)
        s = live.farthest(d_r)
        form(s, live.dist(live.cols[:, s].copy()))
    if live.n_alive >= 2 * k:
        r = live.farthest(live.dist(live.centroid()))
        form(r, live.dist(live.cols[:, r].copy()))
    rest = live.live_rows()
    if rest.size:
        group[rest] = next_id
    return group


@register(
    "mdav",
    summary="MDAV microaggregation (paper 004): groups of k..2k-1 rows around the points "
    "farthest from the centroid, published by generalization",
    models=("KAnonymity",),
)
def mdav(table: Table, models: list[PrivacyModel], *, seed: Seed = None, **options: Any) -> Release:
    """MDAV with ``k`` from :class:`KAnonymity`; deterministic (``seed`` is not used)."""
    if options:
        raise ParameterError(f"mdav: unknown option {sorted(options)[0]!r}")
    refuse_others(models, (KAnonymity,), "mdav")
    km = pick(models, KAnonymity, "mdav")
    if km is None:
        raise ParameterError("mdav needs k-anonymity (e.g. k=5)")
    whole = Release(table, Partition.single(table.n)).histogram()
    km.validate(whole, table.sa_name)
    group = mdav_groups(mdav_encode(table), km.k)
    return Release(
        table,
        Partition.from_labels(group),
        provenance=Provenance("mdav", {"k": km.k, "encoding": "z-scored values"}),
    )
