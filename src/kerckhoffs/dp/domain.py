"""The public cell domain of a DP count table: the cross product of each quasi-identifier's
nodes at a chosen hierarchy level, optionally crossed with the sensitive attribute (paper 004).

It must be *public*: a level's nodes come from a domain the schema declares (a hierarchy
file, ``bounds`` with ``bins``, or a ``values`` list: :attr:`Column.public_domain
<kerckhoffs.data.schema.Column.public_domain>`), or the level is the root (one cell, ``*``).
A domain built from the data (distinct values present, intervals from ``widths`` over the
data's range) would tell which values occur, so it is refused.

No impossible cell: a hierarchy node that holds no value of the declared domain (Adult's ages
are declared 17..90, so the age hierarchy's ``[0-4]`` is no cell) is left out. The filter is
per axis, so cells stay the cross product of each axis's possible nodes, numbered in mixed
radix in hierarchy order (the order of ``counts.csv``); it reads the schema only. Both the
count table (:mod:`kerckhoffs.dp.counts`) and the private choice of its levels
(:mod:`kerckhoffs.dp.select`) number cells here (:func:`axis_labels`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import ROOT, Hierarchy
from kerckhoffs.data.schema import DECLARE_DOMAIN, Column, Kind
from kerckhoffs.data.table import EncodedColumn, Table
from kerckhoffs.errors import InternalError, ParameterError

MAX_CELLS = 10_000_000
"""Largest cell domain built by default (``max_cells`` raises it)."""


@dataclass(frozen=True)
class CellDomain:
    """A public cell domain: for each axis (QIs, then optionally the SA) its name, kind,
    hierarchy level and node labels; cells are numbered in mixed radix, first axis most
    significant."""

    names: tuple[str, ...]
    kinds: tuple[Kind, ...]
    levels: tuple[int, ...]
    labels: tuple[np.ndarray, ...]
    with_sa: bool

    @property
    def radix(self) -> tuple[int, ...]:
        """Number of nodes on each axis."""
        return tuple(len(x) for x in self.labels)

    @property
    def size(self) -> int:
        """Number of cells."""
        return math.prod(self.radix)

    def frame(self) -> pd.DataFrame:
        """One row per cell, in cell-code order: each axis's node label (text)."""
        n = self.size
        out: dict[str, Any] = {}
        inner = n
        for name, lab in zip(self.names, self.labels, strict=True):
            inner //= len(lab)
            outer = n // (len(lab) * inner)
            out[name] = np.tile(np.repeat(np.asarray(lab, dtype=object), inner), outer)
        return pd.DataFrame(out)


def parse_levels(levels: Mapping[str, int] | str | None) -> dict[str, int]:
    """``{"age": 2, "zip": 1}`` from a mapping or the option text ``age:2,zip:1``."""
    if levels is None or levels == "":
        return {}
    items: list[tuple[str, object]]
    if isinstance(levels, Mapping):
        items = list(levels.items())
    else:
        items = []
        for part in str(levels).split(","):
            key, sep, text = part.partition(":")
            if not sep or not key.strip():
                raise ParameterError(f"levels {levels!r}: expected NAME:LEVEL,... e.g. age:2,zip:1")
            items.append((key.strip(), text.strip()))
    out: dict[str, int] = {}
    for name, raw in items:
        try:
            level = int(str(raw))
        except (TypeError, ValueError):
            raise ParameterError(f"levels: {name}:{raw} is not an integer level") from None
        if level < 0:
            raise ParameterError(f"levels: {name}:{level} must be 0 or more")
        out[str(name)] = level
    return out


def root_level(col: EncodedColumn) -> int:
    """The level of a column's root ``*`` (0 for a column without a hierarchy)."""
    return col.hierarchy.height if col.hierarchy is not None else 0


def is_public(table: Table, name: str) -> bool:
    """Whether the schema declares column ``name``'s domain (levels below the root allowed)."""
    return table.schema.column(name).public_domain


def possible_leaves(column: Column, h: Hierarchy) -> np.ndarray:
    """Which leaves of ``h`` the schema allows for ``column``: inside its ``bounds`` (a leaf
    that is not a number, such as the missing value ``?``, is kept) and in its ``values``;
    every leaf when it declares neither. From the schema only."""
    keep = np.ones(len(h), dtype=bool)
    if column.bounds is not None:
        lo, hi = column.bounds
        num = pd.to_numeric(pd.Series(h.leaves, dtype=object), errors="coerce").to_numpy(float)
        keep &= np.isnan(num) | ((num >= lo) & (num <= hi))
    if column.values is not None:
        keep &= np.isin(h.leaves.astype(str), np.asarray(column.values, dtype=str))
    return keep


def axis_labels(table: Table, column: EncodedColumn, level: int) -> tuple[np.ndarray, np.ndarray]:
    """The possible nodes of ``column`` at ``level``: their labels (hierarchy order) and the
    axis index of every hierarchy node (-1: impossible). From the schema only. A column
    without a hierarchy has one node, its root ``*``."""
    h = column.hierarchy
    if h is None:
        return np.array([ROOT], dtype=object), np.zeros(1, dtype=np.int64)
    ids = h.node_ids[level]
    nodes = np.unique(ids[possible_leaves(table.schema.column(column.name), h)])
    remap = np.full(int(ids[-1]) + 1, -1, dtype=np.int64)
    remap[nodes] = np.arange(len(nodes))
    return np.asarray(h.node_labels(level))[nodes], remap


def axis_codes(
    column: EncodedColumn, code: np.ndarray, level: int, remap: np.ndarray
) -> np.ndarray:
    """Each row's axis index at ``level`` (``code``: the rows' codes of ``column``;
    ``remap`` from :func:`axis_labels`)."""
    h = column.hierarchy
    if h is None:
        return np.zeros(len(code), dtype=np.int64)
    axis = remap[h.node_ids[level][column.leaves(code)]]
    if len(axis) and axis.min() < 0:  # the encoding refuses a value outside the domain
        raise InternalError(f"column {column.name!r}: a row lies outside its declared domain")
    return axis


def _check_level(table: Table, col: EncodedColumn, level: int) -> None:
    """A one-line ParameterError unless ``level`` is public for ``col`` (module docstring)."""
    height = root_level(col)
    if level > height:
        raise ParameterError(f"levels: column {col.name!r} has levels 0..{height}, not {level}")
    if level != height and not is_public(table, col.name):
        raise ParameterError(
            f"column {col.name!r}: its domain is not public (the schema declares none), so it "
            f"can only be counted at its root (levels={col.name}:{height}); to count it "
            f"finer, {DECLARE_DOMAIN}"
        )


def cell_domain(
    table: Table,
    levels: Mapping[str, int] | str | None = None,
    *,
    with_sa: bool = False,
    max_cells: int = MAX_CELLS,
) -> tuple[CellDomain, np.ndarray]:
    """The public cell domain and each row's cell code (int64).

    ``levels`` maps QI (and SA) names to hierarchy levels (0 = leaves; missing names: 0).
    A level is public if the schema declares the column's domain or the level is the root;
    anything else, an unknown name, a level above the hierarchy or a domain over
    ``max_cells`` cells is a one-line ParameterError. Impossible nodes are left out
    (:func:`axis_labels`).
    """
    lv = parse_levels(levels)
    columns = list(table.qi_columns) + ([table.sa_column] if with_sa else [])
    codes = [table.qi[:, j] for j in range(table.d)] + ([table.sa] if with_sa else [])
    known = [c.name for c in columns]
    unknown = sorted(set(lv) - set(known))
    if unknown:
        raise ParameterError(f"levels: no column {unknown[0]!r} in the cell domain (have {known})")
    for col in columns:
        _check_level(table, col, lv.get(col.name, 0))
    axes = [axis_labels(table, col, lv.get(col.name, 0)) for col in columns]
    domain = CellDomain(
        tuple(c.name for c in columns),
        tuple(c.kind for c in columns),
        tuple(lv.get(c.name, 0) for c in columns),
        tuple(lab for lab, _ in axes),
        with_sa,
    )
    if domain.size > max_cells:
        raise ParameterError(
            f"the cell domain has {domain.size:,} cells (more than max_cells={max_cells:,}); "
            "generalize with levels=NAME:LEVEL,... or raise max_cells (or leave levels out: "
            "dp-histogram then chooses them with DP)"
        )
    node_codes = [
        axis_codes(col, code, level, remap)
        for col, code, level, (_, remap) in zip(columns, codes, domain.levels, axes, strict=True)
    ]
    key = np.zeros(table.n, dtype=np.int64)
    for radix, nc in zip(domain.radix, node_codes, strict=True):
        key = key * radix + nc
    return domain, key


__all__ = [
    "MAX_CELLS",
    "CellDomain",
    "axis_codes",
    "axis_labels",
    "cell_domain",
    "is_public",
    "parse_levels",
    "possible_leaves",
    "root_level",
]
