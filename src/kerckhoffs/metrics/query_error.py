"""Query-workload relative error: the utility measure of paper 000 (section 8.1.3,
``docs/theory/asap.md#query-error``) and paper 001 (``docs/theory/minimality.md#utility``), the
workload of Anatomy (Xiao and Tao 2006).

**Queries.** ``SELECT COUNT(*) FROM T WHERE A_1 IN R_1 AND ... AND A_qd IN R_qd AND S IN R_S``: the
``qd`` quasi-identifiers are drawn uniformly without replacement among those in use; every predicate
(the SA one included) covers ``b_A = ceil(|D_A| * sel^(1/(qd+1)))`` values of its attribute, a
random contiguous range of its code domain, so the expected selectivity is about ``sel``. Numeric
attributes are ordered by value (the domain is the distinct values present, as the encoded table
holds them); taxonomy attributes by the hierarchy's depth-first leaf order (every leaf, present or
not), so a range is contiguous in the taxonomy, our default (``docs/theory/asap.md#query-error``;
its "random subset" variant is not implemented). ``Act`` is the count on the original table; a query
with ``Act = 0`` is discarded and redrawn (paper 001 section 7.2's relative error is undefined when
the true count is 0; we redraw such queries: ``docs/theory/minimality.md#err-zero-count``): queries
are drawn in pools from one seeded stream and the first ``n`` with a nonzero answer are kept, which
is rejection sampling of independent queries.

A :class:`Workload` is drawn once per table (:meth:`Workload.draw`) and then applied to every
release of that table (:func:`estimate`, :func:`query_error`), so algorithms are compared on
the same queries.

**Estimators** (``docs/theory/asap.md#query-error``), from the *published* SA
(``release.sa_published``: the perturbed values of the MASK family, which is how paper 000 scores
it):

- generalization: ``Est = sum_G sum_{t in G, t.S in R_S} prod_A |R_A & cover_G(A)| /
  |cover_G(A)|`` (uniformity inside each published cell; ``cover_G(A)`` from
  :func:`~kerckhoffs.metrics.group_metrics.group_cover`: the interval's values, every leaf
  under the published hierarchy node);
- bucketization: ``Est = sum_G |{t in G : t.Q satisfies the QI predicates}| * |{SA of G in
  R_S}| / |G|``.

**How it is computed.** Every estimate (and ``Act``) is a sum over *boxes* (a published cell,
or a single QI point) carrying SA mass spread uniformly inside the box: ``Est(q) = sum_b
m_b(R_S) prod_A |R_A & box_b(A)| / |box_b(A)|``. Queries are grouped by their set of QI
columns; for each set the boxes are projected onto those columns (equal projections merged,
their SA masses added) and evaluated by whichever of three methods has the least estimated
time (constants calibrated on this project's 2-core machine):

- *cube*: the boxes scattered as densities into a dense array over the projected domain x SA
  (points directly, boxes as difference arrays at their ``2^qd`` corners), turned into a
  summed-area table by cumulative sums along each axis; each query is then answered by
  inclusion-exclusion over its ``2^(qd+1)`` corners, O(1) per query (Census stand-in, qd = 3:
  35 column sets, the largest array 77 x 18 x 44 x 47 cells); at most
  :data:`~kerckhoffs.metrics.query_engine.MAX_CUBE_CELLS` cells;
- *dense*: blocks of queries x boxes (overlap lengths per column, per-box cumulative SA
  counts), best when few boxes remain after merging (Mondrian's large groups);
- *sparse*: query by query, bitsets select the boxes that meet every predicate and only those
  are read; best with many boxes and many query dimensions (paper 001's ``qd = |QID|``).

All three give the same numbers up to float rounding (``Act`` is exact: integer sums in
float64); :func:`reference_estimate` and :func:`reference_actual` are the straightforward
per-query implementations the tests and ``benchmarks/bench_query_error.py`` compare them
with. No loop runs over rows or boxes; the loops are over query column sets, query blocks,
or (sparse) queries.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics.dp_cells import dp_cell_boxes, is_dp_table
from kerckhoffs.metrics.group_metrics import group_cover
from kerckhoffs.metrics.query_engine import (
    MAX_CUBE_CELLS,
    Mass,
    Method,
    aggregate,
    check_method,
    distinct_points,
    evaluate,
    expand_rows,
    original_mass,
)
from kerckhoffs.release import Release, Scheme
from kerckhoffs.tolerance import TOLERANCE

#: How many queries may be drawn (times the number wanted) before giving up on nonzero answers.
MAX_DRAW_FACTOR = 1000


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer (uint64, wrapping)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _fingerprint(table: Table) -> str:
    """Digest of the multiset of QI code vectors (row order is free: a read-back bucketized
    release lists its rows by group) and of the QI domains. Not of the SA: a read-back
    release encodes its published SA values anew (matched by value, :func:`_sa_counts`),
    estimates never read row-level SA values, and ``Act`` is stored."""
    with np.errstate(over="ignore"):
        row = np.zeros(table.n, dtype=np.uint64)
        for j in range(table.d):
            row = _mix(
                row + table.qi[:, j].astype(np.uint64) + np.uint64((j * 0x9E3779B97F4A7C15) % 2**64)
            )
        digest = np.asarray([row.sum(), _mix(row).sum()], dtype=np.uint64)
    h = hashlib.blake2b(digest_size=16)
    h.update(digest.tobytes())
    h.update(np.asarray([c.size for c in table.qi_columns] + [table.n], dtype=np.int64).tobytes())
    for col in table.qi_columns:  # the values behind the codes
        h.update("\x1f".join(map(str, col.values.tolist())).encode())
    return h.hexdigest()


def _sa_values(table: Table) -> tuple[str, ...]:
    return tuple(str(v) for v in table.sa_column.values.tolist())


def predicate_width(size: int, qd: int, selectivity: float) -> int:
    """``b_A = ceil(|D_A| * sel^(1/(qd+1)))`` (Anatomy's rule), at least 1 and at most
    ``|D_A|``. A relative tolerance of :data:`~kerckhoffs.tolerance.TOLERANCE` keeps an exact
    product from rounding up."""
    x = size * selectivity ** (1.0 / (qd + 1))
    return int(min(max(math.ceil(x - TOLERANCE * max(1.0, x)), 1), size))


@dataclass(frozen=True, eq=False)
class Workload:
    """A fixed set of COUNT queries on one table, with their true answers.

    Per query ``i``: ``columns[i]`` the QI column indices (ascending), ``lo[i]`` and
    ``hi[i]`` the inclusive code range of each of those predicates, ``sa_lo[i]`` and
    ``sa_hi[i]`` the SA code range, ``actual[i]`` the count on the original table (> 0).
    ``widths[j]`` is ``b_A`` of QI ``j`` and ``sa_width`` that of the SA; ``sa_values`` the
    SA value of each code; ``drawn`` the number of queries drawn including those discarded
    for ``Act = 0``.
    """

    columns: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    sa_lo: np.ndarray
    sa_hi: np.ndarray
    actual: np.ndarray
    qd: int
    selectivity: float
    seed: int | None
    widths: np.ndarray
    sa_width: int
    sizes: tuple[int, ...]
    n_sa: int
    sa_values: tuple[str, ...]
    drawn: int
    fingerprint: str

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.actual.shape[0])

    def __len__(self) -> int:
        return self.n_queries

    def __repr__(self) -> str:
        return (
            f"Workload(queries={self.n_queries}, qd={self.qd}, sel={self.selectivity:g}, "
            f"seed={self.seed}, drawn={self.drawn})"
        )

    def subset(self, queries: np.ndarray | slice) -> Workload:
        """The workload restricted to some queries (for reference runs on a sample)."""
        return Workload(
            self.columns[queries],
            self.lo[queries],
            self.hi[queries],
            self.sa_lo[queries],
            self.sa_hi[queries],
            self.actual[queries],
            self.qd,
            self.selectivity,
            self.seed,
            self.widths,
            self.sa_width,
            self.sizes,
            self.n_sa,
            self.sa_values,
            self.drawn,
            self.fingerprint,
        )

    @classmethod
    def from_ranges(
        cls,
        table: Table,
        columns: np.ndarray | list,
        lo: np.ndarray | list,
        hi: np.ndarray | list,
        sa_lo: np.ndarray | list,
        sa_hi: np.ndarray | list,
    ) -> Workload:
        """A workload of given queries (code ranges, inclusive), e.g. a hand-written one;
        ``Act`` is computed on ``table``, and a query no row matches is refused (its relative
        error is undefined)."""
        cols = np.atleast_2d(np.asarray(columns, dtype=np.int32))
        lo_a = np.asarray(lo, dtype=np.int32).reshape(cols.shape)
        hi_a = np.asarray(hi, dtype=np.int32).reshape(cols.shape)
        s_lo = np.asarray(sa_lo, dtype=np.int32).reshape(-1)
        s_hi = np.asarray(sa_hi, dtype=np.int32).reshape(-1)
        n_q, qd = cols.shape
        if s_lo.shape != (n_q,) or s_hi.shape != (n_q,):
            raise ParameterError(f"need one SA range per query ({n_q})")
        sizes = np.asarray([c.size for c in table.qi_columns], dtype=np.int64)
        if qd and ((cols < 0) | (cols >= table.d)).any():
            raise ParameterError(f"QI column index outside 0..{table.d - 1}")
        for i in range(n_q):
            if len(set(cols[i].tolist())) != qd:
                raise ParameterError(f"query {i}: a QI column appears twice")
        if qd and ((lo_a < 0) | (lo_a > hi_a) | (hi_a >= sizes[cols])).any():
            i = int(np.argmax(((lo_a < 0) | (lo_a > hi_a) | (hi_a >= sizes[cols])).any(axis=1)))
            raise ParameterError(f"query {i}: a QI range is empty or outside its code domain")
        if ((s_lo < 0) | (s_lo > s_hi) | (s_hi >= table.n_sa)).any():
            i = int(np.argmax((s_lo < 0) | (s_lo > s_hi) | (s_hi >= table.n_sa)))
            raise ParameterError(f"query {i}: the SA range is empty or outside 0..{table.n_sa - 1}")
        order = np.argsort(cols, axis=1, kind="stable")
        cols = np.take_along_axis(cols, order, axis=1)
        lo_a = np.take_along_axis(lo_a, order, axis=1)
        hi_a = np.take_along_axis(hi_a, order, axis=1)
        act = np.rint(
            evaluate(
                original_mass(table),
                cols,
                lo_a,
                hi_a,
                s_lo,
                s_hi,
                tuple(sizes),
                table.n_sa,
                "auto",
            )
        ).astype(np.int64)
        if (act == 0).any():
            raise ParameterError(f"query {int(np.argmax(act == 0))}: no row matches (Act = 0)")
        widths = np.zeros(table.d, dtype=np.int32)
        return cls(
            cols,
            lo_a,
            hi_a,
            s_lo,
            s_hi,
            act,
            qd,
            float("nan"),
            None,
            widths,
            0,
            tuple(int(s) for s in sizes),
            int(table.n_sa),
            _sa_values(table),
            n_q,
            _fingerprint(table),
        )

    @classmethod
    def draw(
        cls,
        table: Table,
        n_queries: int = 10_000,
        qd: int = 3,
        selectivity: float = 0.05,
        seed: int | None = 0,
        *,
        attributes: Sequence[str] | None = None,
        method: Method = "auto",
    ) -> Workload:
        """Draw ``n_queries`` queries of dimension ``qd`` and selectivity ``selectivity`` on
        ``table`` (seeded: the same seed and table give the same workload).

        ``attributes`` restricts the QIs a query may use (default: all of the table's).
        Queries with no matching row are redrawn; ``actual`` holds the true counts.
        """
        n_queries = int(n_queries)
        if n_queries < 1:
            raise ParameterError(f"n_queries must be at least 1, got {n_queries}")
        if not 0.0 < float(selectivity) <= 1.0:
            raise ParameterError(f"selectivity must be in (0, 1], got {selectivity}")
        if attributes is None:
            cand = np.arange(table.d, dtype=np.int32)
        else:
            names = table.qi_names
            unknown = [a for a in attributes if a not in names]
            if unknown:
                raise ParameterError(f"no quasi-identifier {unknown[0]!r} (have {names})")
            cand = np.asarray(sorted({names.index(a) for a in attributes}), dtype=np.int32)
        qd = int(qd)
        if not 0 <= qd <= cand.size:
            raise ParameterError(
                f"qd (query dimension) must be in 0..{cand.size} (the QIs in use), got {qd}"
            )
        check_method(method)
        sizes = tuple(int(c.size) for c in table.qi_columns)
        widths = np.asarray([predicate_width(s, qd, selectivity) for s in sizes], dtype=np.int32)
        sa_width = predicate_width(table.n_sa, qd, selectivity)
        mass = original_mass(table)
        rng = np.random.default_rng(seed)
        size_arr = np.asarray(sizes, dtype=np.int64)

        parts: list[tuple[np.ndarray, ...]] = []
        have = drawn = 0
        rate = 1.0
        while have < n_queries:
            if drawn >= MAX_DRAW_FACTOR * n_queries:
                raise ParameterError(
                    f"only {have} of {drawn} drawn queries have a nonzero answer on this table "
                    f"(qd={qd}, selectivity={selectivity}); raise the selectivity"
                )
            need = n_queries - have
            pool = int(min(MAX_DRAW_FACTOR * n_queries, math.ceil(1.15 * need / rate) + 16))
            # QI columns: a uniform qd-subset of the candidates per query (ascending)
            pick = np.argsort(rng.random((pool, cand.size)), axis=1)[:, :qd]
            cols = np.sort(cand[pick], axis=1).astype(np.int32)
            span = size_arr[cols] - widths[cols] + 1
            lo = (rng.random((pool, qd)) * span).astype(np.int32)
            hi = (lo + widths[cols] - 1).astype(np.int32)
            sa_lo = (rng.random(pool) * (table.n_sa - sa_width + 1)).astype(np.int32)
            sa_hi = (sa_lo + sa_width - 1).astype(np.int32)
            act = evaluate(mass, cols, lo, hi, sa_lo, sa_hi, sizes, table.n_sa, method)
            act = np.rint(act).astype(np.int64)
            ok = np.flatnonzero(act > 0)[:need]
            drawn += pool if ok.size < need else int(ok[-1]) + 1
            parts.append((cols[ok], lo[ok], hi[ok], sa_lo[ok], sa_hi[ok], act[ok]))
            have += ok.size
            rate = max(float(np.count_nonzero(act > 0)) / pool, 1.0 / MAX_DRAW_FACTOR)
        cols, lo, hi, sa_lo, sa_hi, act = (np.concatenate(p) for p in zip(*parts, strict=True))
        return cls(
            cols.reshape(n_queries, qd),
            lo.reshape(n_queries, qd),
            hi.reshape(n_queries, qd),
            sa_lo,
            sa_hi,
            act,
            qd,
            float(selectivity),
            seed,
            widths,
            sa_width,
            sizes,
            int(table.n_sa),
            _sa_values(table),
            drawn,
            _fingerprint(table),
        )


def draw_workload(
    table: Table,
    n_queries: int = 10_000,
    qd: int = 3,
    selectivity: float = 0.05,
    seed: int | None = 0,
    *,
    attributes: Sequence[str] | None = None,
) -> Workload:
    """:meth:`Workload.draw` as a function."""
    return Workload.draw(table, n_queries, qd, selectivity, seed, attributes=attributes)


@dataclass(frozen=True, eq=False)
class QueryError:
    """Per-query answers and relative errors of one release on one workload."""

    estimates: np.ndarray
    actual: np.ndarray
    errors: np.ndarray

    @property
    def median(self) -> float:
        """Median relative error."""
        return float(np.median(self.errors))

    @property
    def mean(self) -> float:
        """Mean (average) relative error: the number papers 000 and 001 plot."""
        return float(np.mean(self.errors))

    def __repr__(self) -> str:
        return (
            f"QueryError(queries={self.errors.size}, median={self.median:.4g}, "
            f"mean={self.mean:.4g})"
        )


def _sa_counts(release: Release, workload: Workload) -> np.ndarray:
    """Published SA counts per group, columns in the workload's SA coding (a release read
    back from its files codes its SA values anew; they are matched by value)."""
    counts = release.histogram().counts
    values = _sa_values(release.table)
    if values == workload.sa_values:
        return counts
    where = {v: i for i, v in enumerate(workload.sa_values)}
    missing = [v for v in values if v not in where]
    if missing:
        raise InputError(f"SA value {missing[0]!r} of the release is not in the workload's table")
    out = np.zeros((counts.shape[0], workload.n_sa), dtype=counts.dtype)
    out[:, [where[v] for v in values]] = counts
    return out


def _release_mass(release: Release, counts: np.ndarray) -> Mass:
    """The release's estimator as boxes with mass (see the module docstring); ``counts`` are
    its published SA counts per group (:func:`_sa_counts`)."""
    g_nz, s_nz = np.nonzero(counts)
    if release.scheme == Scheme.GENERALIZATION:
        lo, hi = group_cover(release)
        return Mass(
            np.asarray(lo, dtype=np.int32),
            np.asarray(hi, dtype=np.int32),
            g_nz.astype(np.int64),
            s_nz.astype(np.int64),
            counts[g_nz, s_nz].astype(np.float64),
        )
    table = release.table
    n_sa = counts.shape[1]
    sizes = release.partition.sizes.astype(np.float64)
    pid, pts = distinct_points(table.qi)
    # rows per (point, group)
    n_groups = release.partition.n_groups
    key = pid * n_groups + release.partition.group
    uniq, n_pg = np.unique(key, return_counts=True)
    p_of, g_of = uniq // n_groups, uniq % n_groups
    nnz_count = np.bincount(g_nz, minlength=n_groups)
    nnz_ptr = np.cumsum(nnz_count) - nnz_count
    item, pos = expand_rows(nnz_ptr, nnz_count, g_of)
    weight = n_pg[item] * counts[g_nz[pos], s_nz[pos]] / sizes[g_of[item]]
    box, sa, w = aggregate(p_of[item], s_nz[pos].astype(np.int64), weight, n_sa)
    return Mass(pts, pts, box, sa, w)


# -- public estimators ------------------------------------------------------------------------
def _check_release(release: Release, workload: Workload) -> None:
    table = release.table
    if _fingerprint(table) != workload.fingerprint:
        raise InputError(
            "the release is not a release of the workload's table (draw the workload on "
            "release.table; a generalized release read back from its files holds only the "
            "published cells, estimate on the release built in-process)"
        )


def _dp_mass(release: Release, workload: Workload, source: Table | None) -> Mass:
    """A DP count table's cells as boxes with (possibly negative) SA mass in the code domain
    of ``source``, the table the workload was drawn on (:mod:`kerckhoffs.metrics.dp_cells`)."""
    if source is None:
        raise ParameterError(
            "a DP release publishes noisy cell counts, not rows: pass source= the table it "
            "was made from (the workload's table)"
        )
    if _fingerprint(source) != workload.fingerprint:
        raise InputError("source is not the table the workload was drawn on")
    lo, hi, _, sa_mass = dp_cell_boxes(release, source)
    values = _sa_values(source)
    if values != workload.sa_values:
        where = {v: i for i, v in enumerate(workload.sa_values)}
        cols = np.asarray([where.get(v, -1) for v in values], dtype=np.int64)
        full = np.zeros((sa_mass.shape[0], workload.n_sa))
        full[:, cols[cols >= 0]] = sa_mass[:, cols >= 0]
        sa_mass = full
    g_nz, s_nz = np.nonzero(sa_mass)
    return Mass(lo, hi, g_nz.astype(np.int64), s_nz.astype(np.int64), sa_mass[g_nz, s_nz])


def estimate(
    release: Release,
    workload: Workload,
    *,
    method: Method = "auto",
    source: Table | None = None,
) -> np.ndarray:
    """``Est`` of every query of ``workload`` from ``release`` (float64 [queries]).

    Generalization or bucketization by ``release.scheme``; SA counts are the published ones
    (``release.sa_published``), matched to the workload's SA values by value (so a bucketized
    release read back from its files works too). ``method`` forces the summed-area ("cube"),
    blocked ("dense") or per-query bitset ("sparse") evaluation; "auto" picks the cheapest
    per query column set. All agree up to float rounding.

    A DP count table (scheme ``dp``) needs ``source``, the table it was made from: each
    cell's noisy count, negative ones included, is spread uniformly over the codes its nodes
    cover in ``source`` (:mod:`kerckhoffs.metrics.dp_cells`), like a generalized group.
    """
    check_method(method)
    if is_dp_table(release):
        mass = _dp_mass(release, workload, source)
    else:
        _check_release(release, workload)
        mass = _release_mass(release, _sa_counts(release, workload))
    return evaluate(
        mass,
        workload.columns,
        workload.lo,
        workload.hi,
        workload.sa_lo,
        workload.sa_hi,
        workload.sizes,
        workload.n_sa,
        method,
    )


def actual_counts(table: Table, workload: Workload, *, method: Method = "auto") -> np.ndarray:
    """``Act`` of every query recomputed on ``table`` (int64); equals ``workload.actual`` on
    the table the workload was drawn on."""
    check_method(method)
    w = workload
    act = evaluate(
        original_mass(table), w.columns, w.lo, w.hi, w.sa_lo, w.sa_hi, w.sizes, w.n_sa, method
    )
    return np.rint(act).astype(np.int64)


def query_error(
    release: Release,
    workload: Workload | None = None,
    *,
    n_queries: int = 10_000,
    qd: int = 3,
    selectivity: float = 0.05,
    seed: int | None = 0,
    method: Method = "auto",
    source: Table | None = None,
) -> QueryError:
    """Relative errors ``|Act - Est| / Act`` of ``release`` on ``workload`` (drawn on
    ``release.table``, or on ``source`` for a DP count table, with ``n_queries``, ``qd``,
    ``selectivity``, ``seed`` when not given). ``.median`` and ``.mean`` summarize them."""
    if workload is None:
        base = source if is_dp_table(release) and source is not None else release.table
        workload = Workload.draw(base, n_queries, qd, selectivity, seed, method=method)
    est = estimate(release, workload, method=method, source=source)
    act = workload.actual.astype(np.float64)
    err = np.abs(act - est) / act
    return QueryError(est, workload.actual, err)


# -- straightforward references (tests, benchmark) --------------------------------------------
def reference_actual(table: Table, workload: Workload) -> np.ndarray:
    """``Act`` query by query with a boolean mask over the rows (the reference)."""
    out = np.empty(workload.n_queries, dtype=np.int64)
    for i in range(workload.n_queries):
        mask = (table.sa >= workload.sa_lo[i]) & (table.sa <= workload.sa_hi[i])
        for k in range(workload.qd):
            v = table.qi[:, workload.columns[i, k]]
            mask &= (v >= workload.lo[i, k]) & (v <= workload.hi[i, k])
        out[i] = int(np.count_nonzero(mask))
    return out


def reference_estimate(release: Release, workload: Workload) -> np.ndarray:
    """``Est`` query by query, straight from the formulas of
    ``docs/theory/asap.md#query-error``, vectorized over groups
    (generalization) or rows (bucketization) only: the reference the fast path is checked
    against."""
    _check_release(release, workload)
    counts = _sa_counts(release, workload)
    cum = np.zeros((counts.shape[0], counts.shape[1] + 1))
    np.cumsum(counts, axis=1, out=cum[:, 1:])
    out = np.empty(workload.n_queries, dtype=np.float64)
    if release.scheme == Scheme.GENERALIZATION:
        lo, hi = group_cover(release)
        for i in range(workload.n_queries):
            est = cum[:, workload.sa_hi[i] + 1] - cum[:, workload.sa_lo[i]]
            for k in range(workload.qd):
                c = workload.columns[i, k]
                ov = np.minimum(hi[:, c], workload.hi[i, k]) - np.maximum(
                    lo[:, c], workload.lo[i, k]
                )
                est = est * np.maximum(ov + 1, 0) / (hi[:, c] - lo[:, c] + 1)
            out[i] = est.sum()
        return out
    table = release.table
    group = release.partition.group
    sizes = release.partition.sizes
    for i in range(workload.n_queries):
        mask = np.ones(table.n, dtype=bool)
        for k in range(workload.qd):
            v = table.qi[:, workload.columns[i, k]]
            mask &= (v >= workload.lo[i, k]) & (v <= workload.hi[i, k])
        per_group = np.bincount(group[mask], minlength=sizes.size)
        sa_share = (cum[:, workload.sa_hi[i] + 1] - cum[:, workload.sa_lo[i]]) / sizes
        out[i] = float(per_group @ sa_share)
    return out


__all__ = [
    "MAX_CUBE_CELLS",
    "QueryError",
    "Workload",
    "actual_counts",
    "draw_workload",
    "estimate",
    "predicate_width",
    "query_error",
    "reference_actual",
    "reference_estimate",
]
