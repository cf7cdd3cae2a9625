"""Random range COUNT queries of paper 003 (Goryczka, Xiong, Fung, section V.B;
``docs/theory/m-privacy.md#procedures``; the paper leaves the query error's definition, zero
answers, ranges and selectivity open, resolved in ``docs/theory/m-privacy.md#err-query-error``): the
utility measure of the m-privacy anonymization experiments.

The paper only says "2,500 random count queries" and that the error is the difference between the
anonymized and the original answers; our resolution fixes the rest
(``docs/theory/m-privacy.md#err-query-error``), which differs from the Anatomy workload of
:mod:`kerckhoffs.metrics.query_error` (fixed ``qd``, fixed selectivity, an SA predicate), so it
lives here:

- ``SELECT COUNT(*) FROM T WHERE a_1 <= A_1 <= b_1 AND ... AND a_qd <= A_qd <= b_qd``, no
  predicate on the SA;
- ``qd`` uniform in ``[qd_min, qd_max]`` (default ``[2, floor(q/2)]``), the ``qd`` attributes
  distinct and uniform among the QIs;
- each range's endpoints two uniform draws from the attribute's code domain, sorted (numeric
  codes are value ranks, categorical codes follow the column's order);
- ``Act`` on the original table; a query with ``Act = 0`` is re-drawn (its relative error is
  undefined);
- ``Est`` assumes records spread uniformly in each group's published box:
  ``Est = sum_G |G| prod_{A in preds} |cover_G(A) & [a, b]| / |cover_G(A)|``, the cover from
  :func:`~kerckhoffs.metrics.group_metrics.group_cover` (code intervals; every leaf under the
  published node for a categorical QI with a hierarchy). Boxes may overlap (provider cuts give
  groups with equal boxes, which the paper does not address; we allow them:
  ``docs/theory/m-privacy.md#err-overlap``): the sum is over groups, no disjointness is assumed;
- the error of a query is ``|Est - Act| / Act``; the mean (the paper's number) and the median.

Both answers are the same sum over boxes carrying mass (a group's cover and size, or one
distinct QI point and its row count, for which the sum is the exact count). Queries are
grouped by their set of predicated columns (a loop over distinct column sets, at most
``sum_qd C(q, qd)`` of them); per set the boxes are projected on those columns, equal
projections merged, and a (boxes x queries) block evaluated in numpy. No loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.metrics.dp_cells import dp_cell_boxes, is_dp_table
from kerckhoffs.metrics.group_metrics import group_cover
from kerckhoffs.randomness import Seed, generator
from kerckhoffs.release import Release

#: Queries drawn at most, as a multiple of those wanted, before giving up on ``Act > 0``.
MAX_DRAW_FACTOR = 200
#: Elements of one (boxes x queries) block.
BLOCK = 1 << 22


@dataclass(frozen=True, eq=False)
class RangeCountWorkload:
    """Range COUNT queries on one table: ``lo``/``hi`` int64 [queries, d] inclusive code
    ranges (an unpredicated column spans its whole domain), ``used`` bool [queries, d] the
    predicated columns, ``actual`` the true counts (all > 0), ``drawn`` the queries drawn
    including those re-drawn for ``Act = 0``, ``sizes`` the QI domain sizes."""

    lo: np.ndarray
    hi: np.ndarray
    used: np.ndarray
    actual: np.ndarray
    drawn: int
    sizes: tuple[int, ...]

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.actual.shape[0])

    @property
    def qd(self) -> np.ndarray:
        """Predicates per query."""
        return self.used.sum(axis=1)


def _qd_bounds(d: int, qd_min: int, qd_max: int | None) -> tuple[int, int]:
    hi = d // 2 if qd_max is None else int(qd_max)
    lo = int(qd_min)
    if not 1 <= lo <= hi <= d:
        raise ParameterError(
            f"query dimensions need 1 <= qd_min <= qd_max <= {d} (QIs), got {lo}..{hi} "
            "(the default qd_max is floor(q/2): paper 003's workload needs q >= 4)"
        )
    return lo, hi


def _draw(
    rng: np.random.Generator, n: int, sizes: np.ndarray, qd_lo: int, qd_hi: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = sizes.size
    qd = rng.integers(qd_lo, qd_hi + 1, size=n)
    rank = np.argsort(rng.random((n, d)), axis=1)  # a uniform permutation of the QIs per query
    used = np.zeros((n, d), dtype=bool)
    np.put_along_axis(used, rank, np.arange(d)[None, :] < qd[:, None], axis=1)
    a = (rng.random((n, d)) * sizes).astype(np.int64)
    b = (rng.random((n, d)) * sizes).astype(np.int64)
    lo = np.where(used, np.minimum(a, b), 0)
    hi = np.where(used, np.maximum(a, b), sizes - 1)
    return lo, hi, used


def box_sums(
    box_lo: np.ndarray,
    box_hi: np.ndarray,
    mass: np.ndarray,
    q_lo: np.ndarray,
    q_hi: np.ndarray,
    used: np.ndarray,
) -> np.ndarray:
    """``sum_b mass_b prod_{A used} |box_b(A) & [q_lo, q_hi]| / |box_b(A)|`` for every query
    (float64 [queries]): boxes ``box_lo``/``box_hi`` int [boxes, d] inclusive, queries
    ``q_lo``/``q_hi``/``used`` [queries, d]. Points (``box_lo == box_hi``) give exact counts."""
    box_lo = np.asarray(box_lo, dtype=np.int64)
    box_hi = np.asarray(box_hi, dtype=np.int64)
    mass = np.asarray(mass, dtype=np.float64)
    out = np.zeros(q_lo.shape[0], dtype=np.float64)
    if box_lo.shape[0] == 0 or out.size == 0:
        return out
    sets, which = np.unique(used, axis=0, return_inverse=True)
    which = which.reshape(-1)
    for s in range(sets.shape[0]):  # a loop over distinct predicate column sets
        cols = np.flatnonzero(sets[s])
        qs = np.flatnonzero(which == s)
        if cols.size == 0:
            out[qs] = mass.sum()
            continue
        # merge boxes with equal projections (summing their mass)
        proj = np.concatenate([box_lo[:, cols], box_hi[:, cols]], axis=1)
        inv, first = _row_ids(proj)
        m = np.bincount(inv, weights=mass, minlength=first.size)
        uniq = proj[first]
        b_lo, b_hi1 = uniq[:, : cols.size].T, uniq[:, cols.size :].T + 1  # [k, B']
        inv_vol = m / np.prod((b_hi1 - b_lo).astype(np.float64), axis=0)
        block = max(1, BLOCK // uniq.shape[0])
        for start in range(0, qs.size, block):
            z = qs[start : start + block]
            acc = np.broadcast_to(inv_vol, (z.size, inv_vol.size)).copy()
            for k, c in enumerate(cols.tolist()):
                ov = np.minimum(b_hi1[k], q_hi[z, c, None] + 1) - np.maximum(
                    b_lo[k], q_lo[z, c, None]
                )
                np.maximum(ov, 0, out=ov)
                acc *= ov
            out[z] = acc.sum(axis=1)
    return out


def _row_ids(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Id of each distinct row of an int array [n, c] and the index of each id's first row:
    columns folded into one int64 key (mixed radix, re-compressed when it could overflow)."""
    key = np.zeros(rows.shape[0], dtype=np.int64)
    span = 1
    for j in range(rows.shape[1]):
        col = rows[:, j] - rows[:, j].min()
        radix = int(col.max()) + 1
        if span * radix >= 2**62:
            key = pd.factorize(key)[0].astype(np.int64)
            span = int(key.max()) + 1
        key = key * radix + col
        span *= radix
    ids, uniques = pd.factorize(key)
    first = np.full(uniques.size, rows.shape[0], dtype=np.int64)
    np.minimum.at(first, ids, np.arange(rows.shape[0]))
    return ids.astype(np.int64), first


def _points(table: Table) -> tuple[np.ndarray, np.ndarray]:
    qi = table.qi.astype(np.int64)
    ids, first = _row_ids(qi)
    return qi[first], np.bincount(ids, minlength=first.size).astype(np.float64)


def true_counts(table: Table, lo: np.ndarray, hi: np.ndarray, used: np.ndarray) -> np.ndarray:
    """``Act`` of every query on ``table`` (int64): the box sum over its distinct QI points."""
    pts, counts = _points(table)
    return np.rint(box_sums(pts, pts, counts, lo, hi, used)).astype(np.int64)


def draw_range_counts(
    table: Table,
    n_queries: int = 2500,
    seed: Seed = 0,
    *,
    qd_min: int = 2,
    qd_max: int | None = None,
) -> RangeCountWorkload:
    """Draw paper 003's workload on ``table`` (``docs/theory/m-privacy.md#procedures``):
    ``n_queries`` range COUNT queries over ``qd`` uniform in ``[qd_min, qd_max]`` distinct QIs
    (default ``[2, floor(q/2)]``), endpoints uniform in each domain; queries with no matching row
    are re-drawn.

    >>> from kerckhoffs.datasets import generate_hospital, hospital_schema
    >>> t = Table.encode(generate_hospital(300, seed=0), hospital_schema())
    >>> w = draw_range_counts(t, 50, seed=1, qd_min=1, qd_max=2)
    >>> w.n_queries, bool((w.actual > 0).all())
    (50, True)
    """
    n_queries = int(n_queries)
    if n_queries < 1:
        raise ParameterError(f"n_queries must be at least 1, got {n_queries}")
    sizes = np.asarray([c.size for c in table.qi_columns], dtype=np.int64)
    qd_lo, qd_hi = _qd_bounds(sizes.size, qd_min, qd_max)
    if table.n == 0:
        raise ParameterError("the table has no rows: every count would be 0")
    rng = generator(seed)
    pts, counts = _points(table)
    keep: list[tuple[np.ndarray, ...]] = []
    have = drawn = 0
    while have < n_queries:
        if drawn >= MAX_DRAW_FACTOR * n_queries:
            raise ParameterError(
                f"only {have} of {drawn} drawn queries have a nonzero answer on this table"
            )
        need = n_queries - have
        lo, hi, used = _draw(rng, need, sizes, qd_lo, qd_hi)
        act = np.rint(box_sums(pts, pts, counts, lo, hi, used)).astype(np.int64)
        ok = act > 0  # re-draw the queries no row answers: their relative error is undefined
        drawn += need
        keep.append((lo[ok], hi[ok], used[ok], act[ok]))
        have += int(ok.sum())
    lo, hi, used, act = (np.concatenate(p) for p in zip(*keep, strict=True))
    return RangeCountWorkload(lo, hi, used, act, drawn, tuple(int(s) for s in sizes))


@dataclass(frozen=True, eq=False)
class RangeCountError:
    """Per-query estimates, true counts and relative errors of one release."""

    estimates: np.ndarray
    actual: np.ndarray
    errors: np.ndarray

    @property
    def mean(self) -> float:
        """Mean relative error (the number the experiments plot)."""
        return float(self.errors.mean())

    @property
    def median(self) -> float:
        """Median relative error."""
        return float(np.median(self.errors))


def range_count_estimates(
    release: Release, workload: RangeCountWorkload, *, source: Table | None = None
) -> np.ndarray:
    """``Est`` of every query from the release's published boxes (uniform spread).

    A DP count table (scheme ``dp``) needs ``source``, the table it was made from: each
    cell's noisy count (summed over SA values, negative ones included) is spread uniformly
    over the codes its nodes cover there (:mod:`kerckhoffs.metrics.dp_cells`)."""
    if is_dp_table(release):
        if source is None:
            raise ParameterError(
                "a DP release publishes noisy cell counts, not rows: pass source= the table "
                "it was made from"
            )
        if tuple(int(c.size) for c in source.qi_columns) != workload.sizes:
            raise ParameterError("the workload was drawn on a table with other QI domains")
        lo, hi, count, _ = dp_cell_boxes(release, source)
        return box_sums(lo, hi, count, workload.lo, workload.hi, workload.used)
    sizes = tuple(int(c.size) for c in release.table.qi_columns)
    if sizes != workload.sizes:
        raise ParameterError("the workload was drawn on a table with other QI domains")
    lo, hi = group_cover(release)
    return box_sums(lo, hi, release.partition.sizes, workload.lo, workload.hi, workload.used)


def range_count_error(
    release: Release, workload: RangeCountWorkload, *, source: Table | None = None
) -> RangeCountError:
    """Relative errors ``|Est - Act| / Act`` of ``release`` on ``workload`` (``source``: the
    table a DP count table was made from)."""
    est = range_count_estimates(release, workload, source=source)
    act = workload.actual.astype(np.float64)
    return RangeCountError(est, workload.actual, np.abs(est - act) / act)


__all__ = [
    "RangeCountError",
    "RangeCountWorkload",
    "box_sums",
    "draw_range_counts",
    "range_count_error",
    "range_count_estimates",
    "true_counts",
]
