"""The partition of a table's rows into groups (a group id per row), and the two sorting
helpers every release layout uses (:func:`stable_order`, :func:`mix64`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError
from kerckhoffs.models.histogram import GroupHistogram


@dataclass(frozen=True, eq=False)
class Partition:
    """Group id per row; ids are ``0..n_groups-1`` and every id has at least one row.

    Anything else is refused with a one-line ``ValueError`` naming the first id with no row
    (or a negative id): a gap would be an empty group, which every per-group statistic would
    count (``Partition([0, 0, 7, 7])`` would have six empty groups and k = 0).
    :meth:`from_labels` takes arbitrary labels; :meth:`canonical` orders ids by first
    appearance.
    """

    group: np.ndarray
    _order: list[np.ndarray] = field(default_factory=list, init=False, repr=False, compare=False)
    """:meth:`order`, once computed (a release sorts its rows by group for its cells, its
    published numbering and its row order)."""

    def __post_init__(self) -> None:
        g = np.asarray(self.group)
        if g.ndim != 1:
            raise ValueError("a partition is one group id per row")
        n = g.shape[0]
        if n:
            if g.dtype.kind not in "iub":
                raise ValueError(f"group ids must be integers, got dtype {g.dtype}")
            lo, hi = int(g.min()), int(g.max())
            if lo < 0:
                raise ValueError(
                    f"group id {lo} is negative: ids must be 0..n_groups-1 "
                    "(Partition.from_labels relabels arbitrary labels)"
                )
            # n rows use at most n ids, so an id >= n leaves one of 0..n-1 unused: counting
            # the ids below n finds it without a bincount as long as the largest id
            used = np.bincount(g if hi < n else g[g < n], minlength=min(hi + 1, n))
            missing = np.flatnonzero(used == 0)
            if missing.size:
                raise ValueError(
                    f"group ids must be 0..n_groups-1 with every id used: id {missing[0]} has "
                    f"no row (largest id {hi}; Partition.from_labels relabels arbitrary labels)"
                )
        object.__setattr__(self, "group", g.astype(np.int32, copy=False))

    @classmethod
    def from_labels(cls, labels: np.ndarray | list) -> Partition:
        """Canonical partition from any hashable labels (relabelled by first appearance)."""
        codes, _ = pd.factorize(np.asarray(labels), sort=False)
        if (codes < 0).any():
            raise ValueError("group labels must not be missing")
        return cls(codes.astype(np.int32))

    @classmethod
    def from_columns(cls, codes: np.ndarray) -> Partition:
        """Rows with identical code vectors (an int array [n, d]) form one group.

        Columns are folded into one int64 key (mixed radix, re-compressed by factorize
        whenever the next column could overflow), so this is a few factorizes of int64 arrays;
        the key is updated in place (one int64 array of temporaries, however many columns:
        Mondrian folds 10M-row tables with it). Group ids are in order of first appearance.
        """
        codes = np.asarray(codes)
        if codes.ndim == 1:
            codes = codes[:, None]
        n = codes.shape[0]
        key = np.zeros(n, dtype=np.int64)
        span = 1
        for j in range(codes.shape[1]):
            col = codes[:, j]
            radix = int(col.max()) + 1 if n else 1
            if span * radix >= 2**62:
                folded, uniques = pd.factorize(key)
                key = folded.astype(np.int64, copy=False)
                span = max(len(uniques), 1)
            key *= radix
            key += col
            span *= radix
        return cls(pd.factorize(key)[0].astype(np.int32))

    @classmethod
    def by_qi(cls, table: Table) -> Partition:
        """Each distinct QI vector is a group: the table published as it is."""
        return cls.from_columns(table.qi)

    @classmethod
    def by_levels(cls, table: Table, levels: dict[str, int]) -> Partition:
        """Groups of a full-domain generalization: each QI cut at a hierarchy level.

        ``levels`` maps QI names to a level (0 = leaf; missing names stay at 0). Numeric QIs
        need a hierarchy (or ``widths``) in the schema to be cut above level 0.
        """
        unknown = sorted(set(levels) - set(table.qi_names))
        if unknown:
            raise InputError(f"no quasi-identifier {unknown[0]!r} (have {table.qi_names})")
        cols = []
        for j, col in enumerate(table.qi_columns):
            level = int(levels.get(col.name, 0))
            if level == 0:
                cols.append(table.qi[:, j])
                continue
            if col.hierarchy is None:
                raise InputError(f"column {col.name!r} has no hierarchy to generalize with")
            if not 0 <= level <= col.hierarchy.height:
                raise InputError(
                    f"column {col.name!r}: level {level} outside 0..{col.hierarchy.height}"
                )
            node = col.hierarchy.node_ids[level]
            cols.append(node[col.leaves(table.qi[:, j])])
        return cls.from_columns(np.stack(cols, axis=1))

    @classmethod
    def single(cls, n: int) -> Partition:
        """Every row in one group."""
        return cls(np.zeros(n, dtype=np.int32))

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.group.shape[0])

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return int(self.group.max()) + 1 if self.n else 0

    @property
    def sizes(self) -> np.ndarray:
        """Rows per group."""
        return np.bincount(self.group, minlength=self.n_groups)

    def order(self) -> np.ndarray:
        """Row indices sorted by group (stable), with :meth:`starts` the group boundaries
        (computed once; read-only)."""
        if not self._order:
            order = stable_order(self.group)
            order.flags.writeable = False
            self._order.append(order)
        return self._order[0]

    def starts(self) -> np.ndarray:
        """Offset of each group's first row in :meth:`order`."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def groups(self) -> list[np.ndarray]:
        """The row indices of each group (a list; for tests and small tables)."""
        return np.split(self.order(), np.cumsum(self.sizes)[:-1])

    def canonical(self) -> Partition:
        """The same partition with ids relabelled by first appearance."""
        return Partition.from_labels(self.group)

    def same_as(self, other: Partition) -> bool:
        """Whether both put the same rows together (ids may differ)."""
        return self.n == other.n and np.array_equal(self.canonical().group, other.canonical().group)


def group_histogram(table: Table, partition: Partition, sa: np.ndarray) -> GroupHistogram:
    """Per-group counts of the SA codes ``sa`` (one per row of ``table``) under
    ``partition``: the one count matrix every model reads."""
    return GroupHistogram.from_codes(
        partition.group,
        sa,
        partition.n_groups,
        table.n_sa,
        table.sensitive,
        table.schema.sensitive_mode,
        table.sa_column.kind,
        table.provider,
        0 if table.provider_values is None else len(table.provider_values),
    )


def group_bounds(table: Table, partition: Partition) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest code of each QI in each group: two int32 [groups, d]."""
    order = partition.order()
    starts = partition.starts()
    sorted_qi = table.qi[order]
    lo = np.minimum.reduceat(sorted_qi, starts, axis=0)
    hi = np.maximum.reduceat(sorted_qi, starts, axis=0)
    return lo, hi


def tightest_cells(table: Table, partition: Partition) -> pd.DataFrame:
    """Each group's tightest published QI cells, one row per group: the ``[lo-hi]`` interval
    of a numeric column (the value when lo = hi), the lowest common hierarchy node of a
    categorical one."""
    lo, hi = group_bounds(table, partition)
    return pd.DataFrame(
        {
            col.name: pd.array(col.generalize(lo[:, j], hi[:, j]), dtype="str")
            for j, col in enumerate(table.qi_columns)
        }
    )


def stable_order(*keys: np.ndarray) -> np.ndarray:
    """Row indices sorted by the non-negative integer ``keys`` (the first is the primary
    one), ties kept in row order: exactly ``np.lexsort(keys[::-1])``.

    When the keys and the row index fit together in 63 bits they are packed into one int64
    per row and sorted once (numpy's SIMD sort; about 6x faster than a stable argsort or
    lexsort of 1M rows, ``docs/theory/choices.md#performance``); otherwise lexsort.
    """
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    bits = [int(k.max()).bit_length() for k in keys]
    index_bits = (n - 1).bit_length()
    if sum(bits) + index_bits > 63 or any(int(k.min()) < 0 for k in keys):
        return np.lexsort(keys[::-1])
    packed = np.zeros(n, dtype=np.int64)
    for k, b in zip(keys, bits, strict=True):
        packed <<= b
        packed |= k.astype(np.int64, copy=False)
    packed <<= index_bits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    packed &= (1 << index_bits) - 1
    return packed.astype(np.intp, copy=False)


def mix64(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing function (splitmix64's finalizer), elementwise on uint64 (wraps)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


__all__ = [
    "Partition",
    "group_bounds",
    "group_histogram",
    "mix64",
    "stable_order",
    "tightest_cells",
]
