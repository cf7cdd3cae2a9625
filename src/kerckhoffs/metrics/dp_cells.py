"""DP count tables as boxes with mass, for the query-error metrics (paper 004's DP releases,
``docs/theory/composition.md#dp-mechanisms``; the estimators of
:mod:`kerckhoffs.metrics.query_error` and :mod:`kerckhoffs.metrics.range_count`).

A DP release (:class:`~kerckhoffs.dp.counts.DPRelease`) publishes a noisy count per cell of
a public domain: each QI's hierarchy nodes at one level, optionally crossed with the SA. To
answer a COUNT query from it, each cell is read like a generalized group: its noisy count is
spread uniformly over the codes its nodes cover in the *source* table's code domain (the table
the release and the workload were made from; a categorical node covers a contiguous range of
leaf codes, a numeric one the ranks of the values under it), and over SA values:

* SA in the cells at level 0: the cell's count goes to its SA value;
* SA in the cells at a level above 0: spread evenly over the SA values under its node;
* SA not in the cells: spread evenly over every SA value of the source table.

Counts are used as published, negative ones included (a DP table without clamping), so an
estimate can be negative. A cell whose node covers no code of the source table (a numeric
node with no value present) cannot meet any query and is dropped; a cell whose SA value the
table does not hold meets no query with an SA predicate, but its count (noise) still enters
range counts without one. No loop over rows or cells: loops run over axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.release import Release, Scheme


def is_dp_table(release: Release) -> bool:
    """Whether ``release`` is a DP count table (a :class:`~kerckhoffs.dp.counts.DPRelease`);
    a plain release merely labelled scheme ``dp`` is read by its groups as before."""
    from kerckhoffs.dp.counts import DPRelease

    return release.scheme == Scheme.DP and isinstance(release, DPRelease)


def _node_ranges(table: Table, j: int, level: int) -> tuple[np.ndarray, np.ndarray]:
    """Code range ``[lo, hi]`` of every node at ``level`` of QI ``j`` (lo > hi: no code)."""
    col = table.qi_columns[j]
    h = col.hierarchy
    if h is None or level > h.height:
        raise InputError(f"QI {col.name!r} of the source table has no hierarchy level {level}")
    codes = np.arange(col.size, dtype=np.int64)
    nodes = h.node_ids[level][col.leaves(codes)]
    n_nodes = len(h.node_labels(level))
    lo = np.full(n_nodes, col.size, dtype=np.int64)
    hi = np.full(n_nodes, -1, dtype=np.int64)
    np.minimum.at(lo, nodes, codes)
    np.maximum.at(hi, nodes, codes)
    per = np.bincount(nodes, minlength=n_nodes)
    if np.any((per > 0) & (hi - lo + 1 != per)):
        raise InputError(f"QI {col.name!r}: a hierarchy node covers codes that are not contiguous")
    return lo, hi


def dp_cell_boxes(
    release: Release, source: Table
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(lo, hi, count, sa_mass)`` of a DP count table in ``source``'s code domain.

    ``lo``/``hi`` int32 [cells, d] the inclusive code box of each kept cell on each of the
    source's QIs (the whole domain for a QI the release does not count), ``count`` float64
    [cells] the kept cells' published counts (what a query without an SA predicate reads),
    ``sa_mass`` float64 [cells, source SA values] each kept cell's count spread over SA values
    (module docstring; a row is zero when the cell's SA value is not in the source).
    """
    from kerckhoffs.dp.counts import COUNT, DPRelease

    if release.scheme != Scheme.DP or not isinstance(release, DPRelease):
        raise ParameterError("not a DP count table (scheme dp)")
    counts = release.counts
    noisy = pd.to_numeric(counts[COUNT]).to_numpy(dtype=np.float64)
    n_cells = noisy.size
    keep = np.ones(n_cells, dtype=bool)
    names = source.qi_names
    axes = {a["name"]: a for a in release.axes}
    quasi = [a["name"] for a in release.axes if a["role"] == "quasi"]
    extra = sorted(set(quasi) - set(names))
    if extra:
        raise InputError(f"the DP release counts {extra[0]!r}, not a QI of the source table")
    lo = np.zeros((n_cells, source.d), dtype=np.int64)
    hi = np.zeros((n_cells, source.d), dtype=np.int64)
    for j, name in enumerate(names):
        if name not in quasi or source.qi_columns[j].hierarchy is None:  # absent, or its root
            hi[:, j] = source.qi_columns[j].size - 1
            continue
        level = int(axes[name]["level"])
        n_lo, n_hi = _node_ranges(source, j, level)
        labels = pd.Index(source.qi_columns[j].hierarchy.node_labels(level).astype(str))  # type: ignore[union-attr]
        node = labels.get_indexer(counts[name].astype(str).to_numpy())
        if (node < 0).any():
            bad = counts[name].astype(str).to_numpy()[np.argmax(node < 0)]
            raise InputError(f"cell {bad!r} of {name!r} is not a node of the source's hierarchy")
        lo[:, j], hi[:, j] = n_lo[node], n_hi[node]
        keep &= n_lo[node] <= n_hi[node]
    sa_col = source.sa_column
    n_sa = source.n_sa
    sa_mass = np.zeros((n_cells, n_sa), dtype=np.float64)
    sa_axis = [a for a in release.axes if a["role"] == "sensitive"]
    if not sa_axis:
        sa_mass += noisy[:, None] / n_sa
    else:
        name, level = sa_axis[0]["name"], int(sa_axis[0]["level"])
        cell_sa = counts[name].astype(str).to_numpy()
        h = sa_col.hierarchy
        if level == 0 or h is None:
            code = pd.Index([str(v) for v in sa_col.values.tolist()]).get_indexer(cell_sa)
            rows = np.flatnonzero(code >= 0)
            sa_mass[rows, code[rows]] = noisy[rows]
        else:
            node_of_code = h.node_ids[level][sa_col.leaves(np.arange(n_sa))]
            labels = pd.Index(h.node_labels(level).astype(str))
            node = labels.get_indexer(cell_sa)
            under = (node[:, None] == node_of_code[None, :]) & (node[:, None] >= 0)
            width = under.sum(axis=1)
            sa_mass = np.where(under, (noisy / np.maximum(width, 1))[:, None], 0.0)
    cell = np.flatnonzero(keep)
    return lo[cell].astype(np.int32), hi[cell].astype(np.int32), noisy[cell], sa_mass[cell]


__all__ = ["dp_cell_boxes", "is_dp_table"]
