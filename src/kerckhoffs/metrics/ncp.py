"""Normalized certainty penalty (NCP; Xu et al. 2006, "Utility-based anonymization using local
recoding"; called GCP, global certainty penalty, when averaged over a table).

The information a generalization loses, per published cell, on a 0..1 scale:

- numeric quasi-identifier published as ``[lo-hi]``: ``(hi - lo) / (max - min)``, on the actual
  values, ``max`` and ``min`` over the column's domain (the values the table holds);
- categorical quasi-identifier published as hierarchy node ``u``: ``(leaves(u) - 1) /
  (leaves - 1)``, with ``leaves(u)`` the number of hierarchy leaves under ``u`` (present in the
  data or not) and ``leaves`` the size of the whole domain; 0 when the domain has one value.

A release's NCP is the average over its rows and quasi-identifiers (every row of a group
pays the group's penalty), so 0 is the table itself and 1 is every cell suppressed to the
domain. Computed from each group's smallest and largest code
(:meth:`~kerckhoffs.release.Release.group_bounds`, the bounds
:meth:`~kerckhoffs.release.Release.generalized_cells` publishes by default) or, when the
algorithm published cells of its own (full-domain generalization publishes every group at its
lattice node's levels), from the whole node each cell names
(:func:`kerckhoffs.data.cells.group_code_cover`), vectorized over groups.

A bucketized release (Anatomy) publishes the quasi-identifiers exactly: its NCP is 0. The
release must be built on the original table (a release read back from published files has
the published cells as its values and no hierarchy to measure them against).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kerckhoffs.data.cells import group_code_cover
from kerckhoffs.data.schema import Kind, Schema
from kerckhoffs.data.table import EncodedColumn
from kerckhoffs.errors import InternalError
from kerckhoffs.release import Release, Scheme


def numeric_penalty(col: EncodedColumn, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(value[hi] - value[lo]) / (domain max - domain min)`` per group (0 on a one-value
    domain): the NCP of numeric cells covering codes ``lo..hi``."""
    values = np.asarray(col.values, dtype=np.float64)
    width = float(values[-1] - values[0]) if values.size else 0.0
    if width <= 0:
        return np.zeros(lo.shape, dtype=np.float64)
    return (values[hi] - values[lo]) / width


def _categorical_penalty(col: EncodedColumn, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    h = col.hierarchy
    if h is None:
        raise InternalError(f"column {col.name!r} has no hierarchy")
    total = len(h)
    if total <= 1:
        return np.zeros(lo.shape, dtype=np.float64)
    lo_leaf = col.leaves(lo)
    hi_leaf = col.leaves(hi)
    level = h.lca_level(lo_leaf, hi_leaf)
    covered = np.ones(lo.shape, dtype=np.int64)
    for j in range(1, h.height + 1):
        at = level == j
        if at.any():
            covered[at] = h.coverage(j)[h.node_ids[j][lo_leaf[at]]]
    return (covered - 1) / (total - 1)


def group_ncp(release: Release) -> np.ndarray:
    """Penalty of each group on each quasi-identifier: float64 [groups, d], in 0..1."""
    table = release.table
    n_groups = release.partition.n_groups
    if release.scheme != Scheme.GENERALIZATION:
        return np.zeros((n_groups, table.d), dtype=np.float64)
    lo, hi = release.group_bounds()
    if release.cells is not None:  # the algorithm chose its cells (full-domain): penalize
        lo, hi = group_code_cover(table.qi_columns, lo, hi, release.cells)  # the whole node
    out = np.empty((n_groups, table.d), dtype=np.float64)
    for j, col in enumerate(table.qi_columns):
        if col.kind == Kind.NUMERIC:
            out[:, j] = numeric_penalty(col, lo[:, j], hi[:, j])
        else:
            out[:, j] = _categorical_penalty(col, lo[:, j], hi[:, j])
    return out


def ncp_by_qi(release: Release) -> dict[str, float]:
    """Average penalty over the rows, per quasi-identifier (the per-QI breakdown of NCP)."""
    sizes = release.partition.sizes.astype(np.float64)
    per_row = sizes @ group_ncp(release) / max(release.table.n, 1)
    return {name: float(v) for name, v in zip(release.table.qi_names, per_row, strict=True)}


def ncp(release: Release) -> float:
    """The release's NCP: average over rows and quasi-identifiers, 0 (exact) .. 1 (suppressed)."""
    by_qi = ncp_by_qi(release)
    return float(np.mean(list(by_qi.values()))) if by_qi else 0.0


def covered_ncp_by_qi(
    release: Release, population: pd.DataFrame, schema: Schema | None = None
) -> dict[str, float]:
    """NCP per quasi-identifier of a release read back from files, measured on the population
    its published cells cover: a group's penalty on a numeric QI is the range of the covered
    population values over the population's range, on a categorical QI the covered distinct
    values less one over the population's distinct values less one (Xu et al., "Utility-based
    anonymization using local recoding", KDD 2006, with the domain taken from the population).

    A release read back holds cells as text, not the codes :func:`ncp_by_qi` reads, so its
    cells are located on the population (:func:`kerckhoffs.attacks.locate.locate`): this is
    the loss an analyst sees who maps each cell onto real values. A cell wider than every
    population value it covers is measured by what it covers (never more than its own width).
    """
    from kerckhoffs.attacks.locate import locate

    where = locate(release, population, schema)
    who = np.repeat(np.arange(where.n, dtype=np.int64), where.n_matches)
    grp = where.candidates
    n_groups = release.partition.n_groups
    sizes = release.partition.sizes.astype(np.float64)
    covered = np.bincount(grp, minlength=n_groups) > 0
    weight = sizes * covered
    out: dict[str, float] = {}
    for name in release.table.qi_names:
        s = population[name]
        names = {c.name for c in schema.columns} if schema is not None else set()
        kind = schema.column(name).kind if schema is not None and name in names else None
        numeric = kind == Kind.NUMERIC or (
            kind is None and pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        )
        if numeric:
            x = s.to_numpy(dtype=np.float64)
            lo = np.full(n_groups, np.inf)
            hi = np.full(n_groups, -np.inf)
            np.minimum.at(lo, grp, x[who])
            np.maximum.at(hi, grp, x[who])
            span = float(x.max() - x.min())
            pen = np.where(covered, (hi - lo) / span, 0.0) if span > 0 else np.zeros(n_groups)
        else:
            codes, uniques = pd.factorize(s.astype(str))
            pairs = np.unique(grp * max(len(uniques), 1) + codes[who])
            distinct = np.bincount(pairs // max(len(uniques), 1), minlength=n_groups)
            total = len(uniques)
            pen = (distinct - 1) / (total - 1) if total > 1 else np.zeros(n_groups)
            pen = np.where(covered, pen, 0.0)
        out[name] = float(weight @ pen / max(weight.sum(), 1.0))
    return out


__all__ = ["covered_ncp_by_qi", "group_ncp", "ncp", "ncp_by_qi", "numeric_penalty"]
