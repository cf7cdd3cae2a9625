"""Paper 001's information loss of the quasi-identifiers and distortion of the sensitive attribute
(Definitions 6-7: ``docs/theory/minimality.md#information-loss``; section 7.2:
``docs/theory/minimality.md#utility``).

**QID information loss** ``Dist(T, T*)`` (Definition 7): each published cell costs
``(coverage(v*) - 1) / (base - 1)`` (0 when ``base = 1``), ``coverage(v*)`` the number of ground
values under the published value ``v*`` (a ground value counts itself: Definition 6's coverage
counts strict descendants, ``v' < v*``, which we read as ``v' <= v*``;
``docs/theory/minimality.md#err-coverage``) and ``base`` the number of ground values of the
attribute; a row costs the weighted sum over the quasi-identifiers, ``weight(A) = 1/|QID|`` as in
the paper's experiments (weights summing to 1 keep the result in 0..1; Definition 7's remark on the
range is garbled: ``docs/theory/minimality.md#err-weights``), and ``Dist`` is the average over the
rows. Ground values are the encoded domain: every hierarchy leaf of a categorical QI (present in the
data or not), every distinct value present of a numeric one; a numeric QI published as an interval
(Mondrian-style local recoding) covers the values inside it
(``docs/theory/minimality.md#information-loss``). The published value is the group's cover
(:func:`~kerckhoffs.metrics.group_metrics.group_cover`), so a full-domain release counts the node
its cells name and a suppressed row counts 1 on every attribute, which is the ``information_loss``
the lattice search minimizes (:func:`kerckhoffs.algorithms.lattice.information_loss`). A bucketized
release publishes the QIs exactly: 0 (MASK's two-table variant: ``docs/theory/minimality.md#mask``).

**SA distortion** (``docs/theory/minimality.md#information-loss``; paper 001 section 7.2 does not
say over what it averages, we average over all rows:
``docs/theory/minimality.md#err-distortion-average``): the same cost on the sensitive attribute
alone, weight 1, with ``v*`` the nearest common ancestor of the original and the published SA value
in the SA's taxonomy (its hierarchy; a flat one when the schema gives none, so any changed value
costs 1 in a two-value domain), averaged over *all* rows (undistorted rows cost 0). A numeric SA
without a hierarchy uses the interval between the two values. Only the MASK family perturbs the SA;
for every other release this is 0.

Both need the release built on the original table: a release read back from its files has
the published cells as its domain and no original SA to compare with.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.data.cells import node_cover
from kerckhoffs.metrics.group_metrics import check_weights, group_cover
from kerckhoffs.release import Release, Scheme


def group_information_loss(release: Release) -> np.ndarray:
    """Definition 7 cost of each group's published cell on each QI: float64 [groups, d],
    ``(coverage - 1) / (base - 1)`` (0 for a one-value domain and for bucketization)."""
    table = release.table
    n_groups = release.partition.n_groups
    if release.scheme != Scheme.GENERALIZATION:
        return np.zeros((n_groups, table.d), dtype=np.float64)
    lo, hi = group_cover(release)
    base = np.asarray([c.size for c in table.qi_columns], dtype=np.float64)
    coverage = (hi.astype(np.int64) - lo + 1).astype(np.float64)
    out = np.zeros((n_groups, table.d), dtype=np.float64)
    ok = base > 1
    out[:, ok] = (coverage[:, ok] - 1) / (base[ok] - 1)
    return out


def qid_information_loss(
    release: Release, weights: np.ndarray | list[float] | None = None
) -> float:
    """``Dist(T, T*)`` of paper 001 Definition 7: the row average of the weighted per-QI
    costs of :func:`group_information_loss`; ``weights`` one per QI summing to 1 (default
    ``1/|QID|`` each, the paper's). 0 = nothing generalized, 1 = every cell at the root."""
    table = release.table
    w = check_weights(weights, table.d)
    if table.n == 0 or table.d == 0:
        return 0.0
    sizes = release.partition.sizes.astype(np.float64)
    return float(sizes @ group_information_loss(release) @ w / table.n)


def row_sa_distortion(release: Release) -> np.ndarray:
    """Definition 7 cost of each row's published SA value against its original one:
    float64 [rows], 0 where the value was not changed."""
    table = release.table
    col = table.sa_column
    base = col.size
    orig = table.sa.astype(np.int64)
    pub = np.asarray(release.sa_published, dtype=np.int64)
    out = np.zeros(table.n, dtype=np.float64)
    changed = np.flatnonzero(orig != pub)
    if base <= 1 or changed.size == 0:
        return out
    a = np.minimum(orig[changed], pub[changed])
    b = np.maximum(orig[changed], pub[changed])
    if col.hierarchy is not None:
        lo, hi = node_cover(col, a, b)
    else:
        lo, hi = a, b
    out[changed] = (hi - lo) / (base - 1)
    return out


def sa_distortion(release: Release) -> float:
    """Distortion of the sensitive attribute (paper 001,
    ``docs/theory/minimality.md#information-loss``): the average over all rows
    of :func:`row_sa_distortion`."""
    n = release.table.n
    return float(row_sa_distortion(release).sum() / n) if n else 0.0


__all__ = [
    "group_information_loss",
    "qid_information_loss",
    "row_sa_distortion",
    "sa_distortion",
]
