"""Per-group utility metrics of a release: the published cover of each group, GCP,
discernibility and the (normalized) average group size.

- :func:`group_cover`: the code range each group publishes on each quasi-identifier (the
  set ``cover_g(A)`` of spec ``asap.md`` 2.14 and ``coverage[v*]`` of spec ``minimality.md``
  2.9 are read off it). Every other metric here and in :mod:`~kerckhoffs.metrics.distortion`
  and :mod:`~kerckhoffs.metrics.query_error` measures a generalized cell through it.
- :func:`gcp`: the global certainty penalty of Ghinita, Karras, Kalnis and Mamoulis ("Fast
  data anonymization with low information loss", VLDB 2007, section 2; the Hilb paper that
  paper 000 attacks), ``GCP(T*) = sum_G |G| * NCP(G) / (d * N)`` with ``NCP(G)`` the sum over
  the ``d`` quasi-identifiers of the normalized certainty penalty of Xu et al. 2006
  (:mod:`kerckhoffs.metrics.ncp`): 0 when nothing is generalized, 1 when every cell is the
  whole domain.
- :func:`discernibility`: Bayardo and Agrawal 2005 ("Data privacy through optimal
  k-anonymization", ICDE, section 2.3), ``DM = sum_G |G|^2``, a suppressed row costing ``N``.
- :func:`average_group_size` and :func:`normalized_average_group_size`: LeFevre, DeWitt and
  Ramakrishnan 2006 ("Mondrian multidimensional k-anonymity", ICDE, section 4.1),
  ``C_avg = (N / #groups) / k``; 1 is the ideal (every group of exactly ``k`` rows).

All are vectorized over groups (a loop over the ``d`` columns and the few hierarchy levels only).
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import EncodedColumn
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics.ncp import _numeric_penalty
from kerckhoffs.release import Release, Scheme


def _node_of_code(col: EncodedColumn, level: int) -> np.ndarray:
    """Hierarchy node id at ``level`` of every code of ``col`` (non-decreasing in the code:
    categorical codes are leaves in depth-first order; numeric hierarchies are validated to
    group neighbouring values)."""
    h = col.hierarchy
    assert h is not None
    return h.node_ids[level][col.leaves(np.arange(col.size))]


def _node_range(node_of_code: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last code under each ``node`` (codes of a node are contiguous)."""
    lo = np.searchsorted(node_of_code, node, side="left")
    hi = np.searchsorted(node_of_code, node, side="right") - 1
    return lo.astype(np.int32), hi.astype(np.int32)


def _lca_cover(col: EncodedColumn, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes under the lowest common hierarchy node of codes ``lo`` and ``hi`` (categorical)."""
    h = col.hierarchy
    assert h is not None
    level = h.lca_level(col.leaves(lo), col.leaves(hi))
    out_lo, out_hi = lo.copy(), hi.copy()
    for j in range(1, h.height + 1):
        at = level == j
        if at.any():
            noc = _node_of_code(col, j)
            out_lo[at], out_hi[at] = _node_range(noc, noc[lo[at]])
    return out_lo, out_hi


def _cells_cover(
    col: EncodedColumn, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code range of the hierarchy node each group publishes as its cell (full-domain
    generalization publishes the node of a lattice level, wider than the rows it holds).

    The node is the lowest ancestor of the group's smallest code whose label is the cell and
    which also covers the group's largest code. Returns the ranges and a mask of the groups
    whose cell matched a node (the others keep their tight bounds)."""
    h = col.hierarchy
    assert h is not None
    out_lo, out_hi = lo.copy(), hi.copy()
    found = np.zeros(lo.shape, dtype=bool)
    for j in range(h.height + 1):
        noc = _node_of_code(col, j)
        labels = np.asarray(h.labels[j], dtype=object)[col.leaves(lo)]
        hit = ~found & (labels == cells) & (noc[lo] == noc[hi])
        if hit.any():
            out_lo[hit], out_hi[hit] = _node_range(noc, noc[lo[hit]])
            found |= hit
    return out_lo, out_hi, found


def group_cover(release: Release) -> tuple[np.ndarray, np.ndarray]:
    """The code range each group publishes on each quasi-identifier: two int32 [groups, d].

    Generalization: a numeric QI publishes ``[lo-hi]``, the codes between the group's smallest
    and largest value; a categorical QI publishes the lowest common hierarchy node, whose cover
    is every leaf under it (present in the data or not); a release that carries its own cells
    (full-domain generalization, :func:`kerckhoffs.algorithms.lattice.full_domain_cells`)
    covers the whole node its cell names, numeric bins included. Bucketization publishes the
    exact values: the result is each group's tight bounds, which only
    :func:`~kerckhoffs.metrics.query_error` never uses (it reads the rows' own values).

    The release must be built on the original table: a generalized release read back from its
    files has only the published cells, with no domain to measure them against.
    """
    table = release.table
    lo, hi = release.group_bounds()
    if release.scheme != Scheme.GENERALIZATION:
        return lo, hi
    lo = np.array(lo, dtype=np.int32, order="F")
    hi = np.array(hi, dtype=np.int32, order="F")
    cells = release.cells
    for j, col in enumerate(table.qi_columns):
        found = np.zeros(lo.shape[0], dtype=bool)
        if cells is not None and col.hierarchy is not None and col.name in cells.columns:
            values = cells[col.name].to_numpy(dtype=object).astype(str).astype(object)
            c_lo, c_hi, found = _cells_cover(col, values, lo[:, j], hi[:, j])
            lo[found, j], hi[found, j] = c_lo[found], c_hi[found]
        if col.kind == Kind.CATEGORICAL:
            rest = ~found
            if rest.any():
                lo[rest, j], hi[rest, j] = _lca_cover(col, lo[rest, j], hi[rest, j])
    return lo, hi


def _check_weights(weights: np.ndarray | list[float] | None, d: int) -> np.ndarray:
    if weights is None:
        return np.full(d, 1.0 / d) if d else np.zeros(0)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (d,):
        raise ParameterError(f"weights: need one weight per quasi-identifier ({d}), got {w.size}")
    if (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ParameterError(f"weights must be non-negative and sum to 1, got sum {w.sum():g}")
    return w


def group_gcp(release: Release) -> np.ndarray:
    """Normalized certainty penalty of each group on each QI, of its *published* cover:
    float64 [groups, d] in 0..1. Equals :func:`kerckhoffs.metrics.group_ncp` except for
    releases that carry their own cells (full-domain generalization), where the cover is the
    published node rather than the rows' lowest common ancestor."""
    table = release.table
    n_groups = release.partition.n_groups
    if release.scheme != Scheme.GENERALIZATION:
        return np.zeros((n_groups, table.d), dtype=np.float64)
    lo, hi = group_cover(release)
    out = np.empty((n_groups, table.d), dtype=np.float64)
    for j, col in enumerate(table.qi_columns):
        if col.kind == Kind.NUMERIC:
            out[:, j] = _numeric_penalty(col, lo[:, j], hi[:, j])
        else:
            size = col.size
            out[:, j] = (hi[:, j] - lo[:, j]) / (size - 1) if size > 1 else 0.0
    return out


def gcp(release: Release, weights: np.ndarray | list[float] | None = None) -> float:
    """Global certainty penalty (Ghinita et al. 2007): ``sum_G |G| NCP(G) / (d N)``.

    ``NCP(G)`` sums the per-QI penalties of :func:`group_gcp` (numeric ``(max - min) /
    (domain max - domain min)`` on the values, categorical ``(leaves(node) - 1) / (leaves -
    1)``); ``weights`` (one per QI, summing to 1; default ``1/d`` each, Ghinita's definition)
    replace the ``1/d``. In 0..1; 0 for a bucketized release (exact QIs).
    """
    table = release.table
    w = _check_weights(weights, table.d)
    if table.n == 0 or table.d == 0:
        return 0.0
    sizes = release.partition.sizes.astype(np.float64)
    return float(sizes @ group_gcp(release) @ w / table.n)


def _suppressed_groups(release: Release) -> np.ndarray:
    """Groups every QI cell of which is the hierarchy root, in a release that carries its own
    cells: the suppressed group of full-domain generalization with suppression."""
    n_groups = release.partition.n_groups
    cells = release.cells
    if cells is None or release.scheme != Scheme.GENERALIZATION:
        return np.zeros(n_groups, dtype=bool)
    out = np.ones(n_groups, dtype=bool)
    for col in release.table.qi_columns:
        if col.hierarchy is None or col.name not in cells.columns:
            return np.zeros(n_groups, dtype=bool)
        root = str(col.hierarchy.labels[col.hierarchy.height][0])
        out &= cells[col.name].to_numpy(dtype=object).astype(str) == root
    return out


def discernibility(release: Release, suppressed: np.ndarray | None = None) -> int:
    """Discernibility metric (Bayardo and Agrawal 2005): ``sum_G |G|^2 + N * (suppressed
    rows)``; each row pays the size of the group it cannot be told apart from, a suppressed
    row the whole table.

    ``suppressed`` (bool per group) marks suppressed groups; by default, for a release that
    carries its own cells (full-domain generalization), the group whose every cell is the
    root (:func:`kerckhoffs.algorithms.lattice.release_at` publishes suppressed rows that way;
    the same count as ``metric="discernibility"`` of the lattice search). An exact integer.
    """
    sizes = release.partition.sizes.astype(np.int64)
    if suppressed is None:
        suppressed = _suppressed_groups(release)
    suppressed = np.asarray(suppressed, dtype=bool)
    if suppressed.shape != sizes.shape:
        raise InputError(
            f"suppressed: need one flag per group ({sizes.size}), got {suppressed.size}"
        )
    n = int(release.table.n)
    kept = sizes[~suppressed]
    return int((kept * kept).sum()) + n * int(sizes[suppressed].sum())


def average_group_size(release: Release) -> float:
    """Rows per group, ``N / #groups``."""
    n_groups = release.partition.n_groups
    return release.table.n / n_groups if n_groups else 0.0


def normalized_average_group_size(release: Release, k: int) -> float:
    """``C_avg = (N / #groups) / k`` (LeFevre et al. 2006, section 4.1): 1 when every group has
    exactly ``k`` rows, larger when groups are bigger than the privacy requirement needs. For
    l-diversity releases pass ``k = l`` (the smallest group an l-diverse group can be)."""
    if int(k) < 1:
        raise ParameterError(f"k must be at least 1, got {k}")
    return average_group_size(release) / int(k)


__all__ = [
    "average_group_size",
    "discernibility",
    "gcp",
    "group_cover",
    "group_gcp",
    "normalized_average_group_size",
]
