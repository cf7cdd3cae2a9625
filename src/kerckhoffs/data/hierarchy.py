"""Generalization hierarchies (taxonomy trees) in the ARX CSV format.

A hierarchy lists one row per leaf, from the leaf up to the root: ``leaf;level1;...;*``. On load the
leaves are put in depth-first order (siblings adjacent, nodes in order of first appearance in the
file), so that every node covers a contiguous range of leaf indices. The encoded table uses these
indices as codes (``docs/concepts.md``, section Table), which makes the lowest common ancestor of a
set of leaves the lowest common ancestor of its smallest and largest code (the QI encoding of
``docs/theory/asap.md#primitives``).

Validation (a bad hierarchy file is refused with one line): rows of equal depth, unique leaves,
one parent per node, a single root.
Builders: :meth:`Hierarchy.intervals` for numeric columns (nested widths such as 5, 10, 20),
:meth:`Hierarchy.bounded` (the public interval hierarchy of a schema's ``bounds`` and ``bins``)
and :meth:`Hierarchy.flat` (every leaf directly under ``*``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from kerckhoffs.data.io import regular_file
from kerckhoffs.errors import HierarchyError

ROOT = "*"


def format_value(value: object) -> str:
    """The string a data value takes as a hierarchy leaf (integral floats lose their ``.0``)."""
    if isinstance(value, float | np.floating):
        f = float(value)
        if math.isfinite(f) and f.is_integer():
            return str(int(f))
        return repr(f)
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


SMALL_LEVEL = 4096
"""Levels up to this many rows are numbered with a dict (pandas' factorize costs more there)."""


def _first_codes(labels: np.ndarray) -> np.ndarray:
    """Each label's number in order of first appearance (as ``pd.factorize`` numbers them)."""
    if labels.size > SMALL_LEVEL:
        return pd.factorize(labels)[0]
    seen: dict[object, int] = {}
    return np.array([seen.setdefault(x, len(seen)) for x in labels.tolist()], dtype=np.int64)


class Hierarchy:
    """A validated taxonomy over a finite set of leaves.

    ``labels[j]`` holds, for each leaf in depth-first order, the label of its ancestor at
    level ``j`` (level 0 = the leaf itself, level ``height`` = the root).
    """

    def __init__(self, rows: Sequence[Sequence[object]], name: str = "hierarchy") -> None:
        self.name = name
        if len(rows) == 0:
            raise HierarchyError(f"{name}: hierarchy is empty")
        depth = len(rows[0])
        for i, row in enumerate(rows):
            if len(row) != depth:
                raise HierarchyError(
                    f"{name}: row {i + 1} ({row[0]!r}) has {len(row)} levels, row 1 has {depth}"
                    " (all rows must have equal depth)"
                )
        if depth < 1:
            raise HierarchyError(f"{name}: rows are empty")
        grid = np.array([[str(x).strip() for x in row] for row in rows], dtype=object)
        tops = sorted(set(grid[:, -1].tolist()))
        if depth == 1 or len(tops) > 1:
            raise HierarchyError(
                f"{name}: the last level must be a single root such as '*', found "
                f"{', '.join(map(repr, tops[:3]))}{' ...' if len(tops) > 3 else ''}"
            )
        # first-appearance code of each label, per level
        first = [_first_codes(grid[:, j]) for j in range(depth)]
        leaf_counts = np.bincount(first[0])
        if (leaf_counts > 1).any():
            dup = grid[int(np.argmax(first[0] == int(np.argmax(leaf_counts > 1)))), 0]
            raise HierarchyError(f"{name}: leaf {dup!r} appears in more than one row")
        for j in range(depth - 1):
            # one parent per node: scatter each row's parent to its node, read it back
            parent = np.empty(int(first[j].max()) + 1, dtype=np.int64)
            parent[first[j]] = first[j + 1]
            if not np.array_equal(parent[first[j]], first[j + 1]):
                pairs = np.unique(np.stack([first[j], first[j + 1]], axis=1), axis=0)
                child = int(pairs[np.flatnonzero(np.diff(pairs[:, 0]) == 0)[0], 0])
                parents = sorted(set(grid[first[j] == child, j + 1].tolist()))
                raise HierarchyError(
                    f"{name}: node {grid[int(np.argmax(first[j] == child)), j]!r} at level "
                    f"{j} has two parents, {parents[0]!r} and {parents[1]!r}"
                )
        # Depth-first order: sort leaves by the first-appearance rank of each ancestor, root down.
        keys = [first[j] for j in range(depth - 1, -1, -1)]
        order = np.lexsort(keys[::-1])
        grid = grid[order]
        self.labels: list[np.ndarray] = [grid[:, j] for j in range(depth)]
        self.height = depth - 1
        self._leaf_index = {leaf: i for i, leaf in enumerate(self.labels[0])}
        # node id per leaf at each level, numbered in depth-first order
        self.node_ids: list[np.ndarray] = []
        for j in range(depth):
            col = self.labels[j]
            change = np.ones(len(col), dtype=bool)
            change[1:] = col[1:] != col[:-1]
            self.node_ids.append(np.cumsum(change).astype(np.int32) - 1)
        self._node_labels: dict[int, np.ndarray] = {}

    def leaf_array(self) -> object:
        """The leaves as an arrow string array (for a hash lookup of arrow text in them;
        built once)."""
        found = self.__dict__.get("_leaf_array")
        if found is None:
            import pyarrow as pa

            found = self.__dict__["_leaf_array"] = pa.array(self.labels[0].tolist(), pa.string())
        return found

    # -- shape -----------------------------------------------------------------------------
    @property
    def leaves(self) -> np.ndarray:
        """Leaf labels in depth-first order (leaf index = position)."""
        return self.labels[0]

    def __len__(self) -> int:
        return len(self.labels[0])

    def __repr__(self) -> str:
        return f"Hierarchy({self.name!r}, leaves={len(self)}, height={self.height})"

    def rows(self) -> list[list[str]]:
        """The hierarchy as ARX rows, leaves in depth-first order."""
        return [list(r) for r in zip(*self.labels, strict=True)]

    def node_labels(self, level: int) -> np.ndarray:
        """Labels of the nodes at ``level``, indexed by node id (computed once per level:
        a DP release asks for them on every call; the array is shared, never write to it)."""
        found = self._node_labels.get(level)
        if found is None:
            col = self.labels[level]
            starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
            found = self._node_labels[level] = col[starts]
            found.flags.writeable = False
        return found

    def coverage(self, level: int) -> np.ndarray:
        """Number of leaves under each node of ``level`` (paper 001 Definition 6)."""
        return np.bincount(self.node_ids[level])

    # -- lookups ---------------------------------------------------------------------------
    def leaf_index(self, values: Iterable[object], column: str | None = None) -> np.ndarray:
        """Leaf indices of ``values``; a value that is not a leaf raises a one-line error."""
        out = []
        for v in values:
            key = format_value(v)
            idx = self._leaf_index.get(key)
            if idx is None:
                where = f"column {column!r}: " if column else ""
                raise HierarchyError(f"{where}value {key!r} is not a leaf of {self.name}")
            out.append(idx)
        return np.asarray(out, dtype=np.int32)

    def contains(self, value: object) -> bool:
        """Whether ``value`` is a leaf."""
        return format_value(value) in self._leaf_index

    def lca_level(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Level of the lowest common ancestor of leaves ``lo`` and ``hi`` (vectorized).

        With depth-first leaf order this is the LCA of every leaf between them.
        """
        lo = np.asarray(lo)
        hi = np.asarray(hi)
        level = np.full(lo.shape, self.height, dtype=np.int32)
        for j in range(self.height - 1, -1, -1):
            same = self.node_ids[j][lo] == self.node_ids[j][hi]
            level[same] = j
        return level

    def lca_label(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Label of the lowest common ancestor of leaves ``lo`` and ``hi`` (vectorized)."""
        lo = np.asarray(lo)
        level = self.lca_level(lo, hi)
        table = np.stack(self.labels)  # [levels, leaves]
        return table[level, lo]

    # -- I/O -------------------------------------------------------------------------------
    @classmethod
    def read_csv(cls, path: str | Path, sep: str = ";") -> Hierarchy:
        """Read an ARX-format hierarchy (``leaf;level1;...;*``, no header)."""
        path = regular_file(path, "hierarchy file", HierarchyError)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise HierarchyError(f"hierarchy {path}: not UTF-8 text") from None
        rows = [line.split(sep) for line in text.splitlines() if line.strip()]
        if rows and all(len(r) == 1 for r in rows) and any("," in r[0] for r in rows):
            raise HierarchyError(
                f"hierarchy {path}: no {sep!r} found; ARX hierarchies are ';'-separated"
            )
        return cls(rows, name=path.name)

    def write_csv(self, path: str | Path, sep: str = ";") -> None:
        """Write the hierarchy in the ARX format."""
        lines = [sep.join(r) for r in self.rows()]
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")

    # -- builders --------------------------------------------------------------------------
    @classmethod
    def flat(
        cls, values: Iterable[object], name: str = "flat", *, keep_order: bool = False
    ) -> Hierarchy:
        """Every distinct value directly under the root ``*`` (sorted, or in the given order
        with ``keep_order``). Built directly: a flat tree needs no validation."""
        if keep_order:
            leaves = list(dict.fromkeys(format_value(v) for v in values))
        else:
            leaves = sorted({format_value(v) for v in values})
        if not leaves:
            raise HierarchyError(f"{name}: hierarchy is empty")
        h = cls.__new__(cls)
        h.name = name
        h.height = 1
        h.labels = [np.array(leaves, dtype=object), np.full(len(leaves), ROOT, dtype=object)]
        h._leaf_index = {leaf: i for i, leaf in enumerate(leaves)}
        h.node_ids = [np.arange(len(leaves), dtype=np.int32), np.zeros(len(leaves), np.int32)]
        h._node_labels = {}
        return h

    @classmethod
    def intervals(
        cls, values: Iterable[float], widths: Sequence[int], name: str = "intervals"
    ) -> Hierarchy:
        """Interval hierarchy for a numeric column: nested bins of the given widths, then ``*``.

        Bins are aligned to multiples of the width: with widths (5, 10, 20) the value 37 sits in
        ``[35-39]``, ``[30-39]``, ``[20-39]``. Each width must divide the next, so every bin has
        one parent. Integer data get inclusive labels ``[lo-hi]``; other data ``[lo-hi)``.
        """
        widths = [int(w) for w in widths]
        if not widths or any(w <= 0 for w in widths):
            raise HierarchyError(f"{name}: widths must be positive, got {widths}")
        for a, b in itertools.pairwise(widths):
            if b % a:
                raise HierarchyError(f"{name}: width {b} is not a multiple of {a}")
        arr = np.unique(np.asarray(list(values), dtype=float))
        if arr.size == 0:
            raise HierarchyError(f"{name}: no values to build intervals from")
        integral = bool(np.all(arr == np.floor(arr)))
        rows = []
        for v in arr:
            row = [format_value(v)]
            for w in widths:
                lo = math.floor(v / w) * w
                if integral:
                    row.append(f"[{int(lo)}-{int(lo + w - 1)}]")
                else:
                    row.append(f"[{format_value(float(lo))}-{format_value(float(lo + w))})")
            row.append(ROOT)
            rows.append(row)
        return cls(rows, name=name)

    @classmethod
    def bounded(cls, lo: int, hi: int, width: int, name: str = "bounded") -> Hierarchy:
        """The public interval hierarchy of the integers ``lo..hi``: bins of ``width``
        starting at ``lo``, then of 2, 4, 8, ... times ``width`` until one bin would hold every
        value, then ``*``; labels ``[a-b]`` clipped to ``hi``. Built from the schema's
        ``bounds`` and ``bins`` alone (never the data), so a DP release may publish its nodes.

        >>> Hierarchy.bounded(17, 30, 5).rows()[0]
        ['17', '[17-21]', '[17-26]', '*']
        """
        lo, hi, width = int(lo), int(hi), int(width)
        if width < 1 or lo > hi:
            raise HierarchyError(f"{name}: needs lo <= hi and width >= 1, got {lo}, {hi}, {width}")
        if hi - lo + 1 > 1_000_000:
            raise HierarchyError(
                f"{name}: {hi - lo + 1:,} values is too many leaves (at most "
                "1,000,000); give a hierarchy file"
            )
        values = np.arange(lo, hi + 1, dtype=np.int64)
        widths = []
        w = width
        while w < hi - lo + 1:
            widths.append(w)
            w *= 2
        columns = [values.astype(str).astype(object)]
        for w in widths:
            start = lo + (values - lo) // w * w
            end = np.minimum(start + w - 1, hi)
            columns.append(
                np.array([f"[{a}-{b}]" for a, b in zip(start, end, strict=True)], object)
            )
        columns.append(np.full(len(values), ROOT, dtype=object))
        return cls([list(r) for r in zip(*columns, strict=True)], name=name)
