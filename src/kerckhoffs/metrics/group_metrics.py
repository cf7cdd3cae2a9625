"""Per-group utility metrics of a release: the published cover of each group, GCP,
discernibility and the (normalized) average group size.

- :func:`group_cover`: the code range each group publishes on each quasi-identifier (the set
  ``cover_g(A)`` of ``docs/theory/asap.md#query-error`` and ``coverage[v*]`` of
  ``docs/theory/minimality.md#information-loss`` are read off it). Every other metric here and in
  :mod:`~kerckhoffs.metrics.distortion` and :mod:`~kerckhoffs.metrics.query_error` measures a
  generalized cell through it.
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

from kerckhoffs.data.cells import group_code_cover
from kerckhoffs.data.schema import Kind
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics.ncp import numeric_penalty
from kerckhoffs.release import Release, Scheme


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
    lo, hi = release.group_bounds()
    if release.scheme != Scheme.GENERALIZATION:
        return lo, hi
    c_lo, c_hi = group_code_cover(release.table.qi_columns, lo, hi, release.cells)
    return c_lo.astype(np.int32), c_hi.astype(np.int32)


def check_weights(weights: np.ndarray | list[float] | None, d: int) -> np.ndarray:
    """One non-negative weight per quasi-identifier, summing to 1 (default ``1/d`` each);
    :class:`~kerckhoffs.errors.ParameterError` otherwise."""
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
            out[:, j] = numeric_penalty(col, lo[:, j], hi[:, j])
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
    w = check_weights(weights, table.d)
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
    "check_weights",
    "discernibility",
    "gcp",
    "group_cover",
    "group_gcp",
    "normalized_average_group_size",
]
