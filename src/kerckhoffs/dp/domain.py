"""The public cell domain of a DP count table: the cross product of each quasi-identifier's
nodes at a chosen hierarchy level, optionally crossed with the sensitive attribute (paper 004).

It must be *public*: a level's nodes come from a hierarchy the user gave in the schema, or
the level is the root (one cell, ``*``). A domain built from the data (distinct values
present, intervals from ``widths`` over the data's range) would tell which values occur, so
it is refused. Both the count table (:mod:`kerckhoffs.dp.counts`) and the private choice of
its levels (:mod:`kerckhoffs.dp.select`) number cells here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError

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


def cell_domain(
    table: Table,
    levels: Mapping[str, int] | str | None = None,
    *,
    with_sa: bool = False,
    max_cells: int = MAX_CELLS,
) -> tuple[CellDomain, np.ndarray]:
    """The public cell domain and each row's cell code (int64).

    ``levels`` maps QI (and SA) names to hierarchy levels (0 = leaves; missing names: 0).
    A level is public if the schema gives the column a hierarchy file or the level is the
    root; anything else, an unknown name, a level above the hierarchy or a domain over
    ``max_cells`` cells is a one-line ParameterError.
    """
    lv = parse_levels(levels)
    columns = list(table.qi_columns) + ([table.sa_column] if with_sa else [])
    codes = [table.qi[:, j] for j in range(table.d)] + ([table.sa] if with_sa else [])
    known = [c.name for c in columns]
    unknown = sorted(set(lv) - set(known))
    if unknown:
        raise ParameterError(f"levels: no column {unknown[0]!r} in the cell domain (have {known})")
    names, kinds, used, labels, node_codes = [], [], [], [], []
    for col, code in zip(columns, codes, strict=True):
        h = col.hierarchy
        level = lv.get(col.name, 0)
        height = h.height if h is not None else 0
        if h is None or level > height:
            raise ParameterError(
                f"levels: column {col.name!r} has "
                + (f"levels 0..{height}, not {level}" if h is not None else "no hierarchy")
            )
        given = table.schema.column(col.name).hierarchy is not None
        if not given and level != height:
            raise ParameterError(
                f"column {col.name!r}: its cells at level {level} come from the data, not a "
                "hierarchy file, so the domain is not public; give the schema a hierarchy for "
                f"it or use its root (levels={col.name}:{height})"
            )
        names.append(col.name)
        kinds.append(col.kind)
        used.append(level)
        labels.append(np.asarray(h.node_labels(level)))
        node_codes.append(h.node_ids[level][col.leaves(code)])
    domain = CellDomain(tuple(names), tuple(kinds), tuple(used), tuple(labels), with_sa)
    if domain.size > max_cells:
        raise ParameterError(
            f"the cell domain has {domain.size:,} cells (more than max_cells={max_cells:,}); "
            "generalize with levels=NAME:LEVEL,... or raise max_cells"
        )
    key = np.zeros(table.n, dtype=np.int64)
    for radix, nc in zip(domain.radix, node_codes, strict=True):
        key = key * radix + nc
    return domain, key


__all__ = ["MAX_CELLS", "CellDomain", "cell_domain", "parse_levels"]
