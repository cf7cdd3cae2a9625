"""The generalization lattice of a table: nodes, levels and the groups of a node.

Every quasi-identifier is generalized to *one level* of its hierarchy for the whole table
(global recoding, ``docs/theory/minimality.md#recoding``). A **lattice node** is a level vector
``(l_1, ..., l_d)`` with ``0 <= l_j <= height_j``; node ``a`` generalizes node ``b`` when
``a >= b`` in every coordinate. The bottom ``(0, ..., 0)`` publishes the data as is, the top
publishes every QI at its root (one group). Numeric QIs need a hierarchy or ``widths`` in the
schema; a numeric QI without one is refused with one line naming the column.

A row's code maps to its node id at a level through
``col.hierarchy.node_ids[level][col.leaves(codes)]``; rows with equal node-id vectors form a
group (:meth:`Lattice.partition`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError, SchemaError
from kerckhoffs.release import Partition

MAX_NODES = 10_000_000
"""Largest lattice the search accepts (the node arrays are built in memory)."""

Node = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class ColumnLevels:
    """One QI's levels: code -> node id maps, parent maps, coverage, labels."""

    name: str
    height: int
    node_of_code: tuple[np.ndarray, ...]  # per level: int32 [domain size]
    parent: tuple[np.ndarray, ...]  # per level < height: node id -> node id one level up
    coverage: tuple[np.ndarray, ...]  # per level: domain values under each node
    labels: tuple[np.ndarray, ...]  # per level: ancestor label of each hierarchy leaf
    base: int  # domain size (paper 001's base(T_A))


def column_levels(table: Table, j: int) -> ColumnLevels:
    """The levels of QI ``j``; a QI without a hierarchy is refused with one line."""
    col = table.qi_columns[j]
    h = col.hierarchy
    if h is None:
        raise SchemaError(
            f"column {col.name!r} is numeric without a hierarchy: full-domain generalization "
            "needs one (give it a hierarchy file or widths = [...] in the schema)"
        )
    leaves = col.leaves(np.arange(col.size))
    node_of_code = tuple(h.node_ids[lvl][leaves].astype(np.int32) for lvl in range(h.height + 1))
    parent = []
    for lvl in range(h.height):
        pm = np.zeros(int(h.node_ids[lvl].max()) + 1, dtype=np.int32)
        pm[h.node_ids[lvl]] = h.node_ids[lvl + 1]
        parent.append(pm)
    coverage = tuple(
        np.bincount(node_of_code[lvl], minlength=int(h.node_ids[lvl].max()) + 1).astype(np.int64)
        for lvl in range(h.height + 1)
    )
    return ColumnLevels(
        col.name, h.height, node_of_code, tuple(parent), coverage, tuple(h.labels), col.size
    )


class LatticeShape:
    """The node arrays of a lattice with given heights: level vectors, heights, strides, the
    nodes of each height, the level-vector tuples. They depend on the heights alone, so they
    are built once per shape (:func:`lattice_shape`) rather than once per search (15,360 tuples
    on Adult); the arrays are read-only."""

    def __init__(self, heights: Node) -> None:
        self.heights = heights
        radix = [h + 1 for h in heights]
        self.strides = np.array(
            [math.prod(radix[j + 1 :]) for j in range(len(radix))], dtype=np.int64
        )
        grids = np.indices(radix, dtype=np.int32)
        self.levels = grids.reshape(len(heights), -1).T.copy()
        self.node_heights = self.levels.sum(axis=1)
        order = np.argsort(self.node_heights, kind="stable")
        bounds = np.searchsorted(self.node_heights[order], np.arange(sum(heights) + 2))
        self.layers = [order[bounds[i] : bounds[i + 1]] for i in range(sum(heights) + 1)]
        for a in (self.strides, self.levels, self.node_heights, *self.layers):
            a.flags.writeable = False

    @cached_property
    def nodes(self) -> list[Node]:
        """The level vector of every node as a tuple, in index order."""
        return [tuple(r) for r in self.levels.tolist()]


SHAPE_CACHE_NODES = 1_000_000
"""Lattice shapes up to this many nodes are kept between searches (:func:`lattice_shape`);
larger ones (up to :data:`MAX_NODES`, hundreds of MB of tuples) are built per lattice."""


@lru_cache(maxsize=16)
def _cached_shape(heights: Node) -> LatticeShape:
    return LatticeShape(heights)


def lattice_shape(heights: Node) -> LatticeShape:
    """The :class:`LatticeShape` of ``heights``, cached up to :data:`SHAPE_CACHE_NODES`."""
    heights = tuple(heights)
    if math.prod(h + 1 for h in heights) > SHAPE_CACHE_NODES:
        return LatticeShape(heights)
    return _cached_shape(heights)


@dataclass(frozen=True, eq=False)
class Lattice:
    """The generalization lattice of a table: one hierarchy level per quasi-identifier.

    Nodes are numbered in mixed radix, first QI most significant, so node order is the
    lexicographic order of level vectors (:meth:`index`, :meth:`node`).
    """

    table: Table
    columns: tuple[ColumnLevels, ...]

    @classmethod
    def of(cls, table: Table) -> Lattice:
        """The lattice of ``table``; a QI without a hierarchy is refused with one line."""
        cols = tuple(column_levels(table, j) for j in range(table.d))
        size = math.prod(c.height + 1 for c in cols)
        if size > MAX_NODES:
            raise ParameterError(
                f"lattice: {size:,} nodes (levels {[c.height + 1 for c in cols]}) is more than "
                f"{MAX_NODES:,}; use fewer quasi-identifiers or shallower hierarchies"
            )
        return cls(table, cols)

    # -- shape ------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """Quasi-identifier names, in level-vector order."""
        return [c.name for c in self.columns]

    @cached_property
    def heights(self) -> Node:
        """Height of each QI's hierarchy (its largest level)."""
        return tuple(c.height for c in self.columns)

    @property
    def size(self) -> int:
        """Number of nodes."""
        return math.prod(h + 1 for h in self.heights)

    @cached_property
    def shape(self) -> LatticeShape:
        """The node arrays of this lattice's heights (shared by every lattice of that shape)."""
        return lattice_shape(self.heights)

    @property
    def strides(self) -> np.ndarray:
        """Index step of one level on each QI."""
        return self.shape.strides

    @property
    def top(self) -> Node:
        """The node publishing every QI at its root."""
        return self.heights

    @property
    def levels(self) -> np.ndarray:
        """Level vector of every node, int32 [size, d], in index order."""
        return self.shape.levels

    @property
    def node_heights(self) -> np.ndarray:
        """Height (sum of levels) of every node."""
        return self.shape.node_heights

    def index(self, node: Node) -> int:
        """Index of a level vector."""
        node = self.check_node(node)
        return int(np.dot(node, self.strides))

    def node(self, index: int) -> Node:
        """Level vector of an index."""
        return self.shape.nodes[index]

    def check_node(self, node: Node | dict[str, int]) -> Node:
        """A level vector (from a tuple or a name -> level mapping), validated."""
        if isinstance(node, dict):
            unknown = sorted(set(node) - set(self.names))
            if unknown:
                raise ParameterError(f"no quasi-identifier {unknown[0]!r} (have {self.names})")
            node = tuple(int(node.get(n, 0)) for n in self.names)
        node = tuple(int(x) for x in node)
        if len(node) != len(self.columns):
            raise ParameterError(f"a lattice node has {len(self.columns)} levels, got {node}")
        for c, lvl in zip(self.columns, node, strict=True):
            if not 0 <= lvl <= c.height:
                raise ParameterError(f"column {c.name!r}: level {lvl} outside 0..{c.height}")
        return node

    def by_height(self) -> list[np.ndarray]:
        """Node indices of each height, each in lexicographic order (read-only arrays)."""
        return list(self.shape.layers)  # a new list: callers may reorder it

    # -- rows -------------------------------------------------------------------------------
    def row_nodes(self, node: Node) -> np.ndarray:
        """Each row's node id on each QI at ``node``'s levels: int32 [n, d]."""
        node = self.check_node(node)
        t = self.table
        out = np.empty((t.n, t.d), dtype=np.int32, order="F")
        for j, (c, lvl) in enumerate(zip(self.columns, node, strict=True)):
            out[:, j] = c.node_of_code[lvl][t.qi[:, j]]
        return out

    def partition(self, node: Node) -> Partition:
        """The groups of ``node`` (rows with equal generalized QI vectors)."""
        return Partition.from_columns(self.row_nodes(node))


def above(lat: Lattice, mask: np.ndarray, layers: list[np.ndarray], strict: bool) -> np.ndarray:
    """Nodes above (``>=``, or ``>`` with ``strict``) some node of ``mask``; ``layers`` is
    :meth:`Lattice.by_height`."""
    out = np.zeros(lat.size, dtype=bool) if strict else mask.copy()
    levels = lat.levels
    for nodes in layers[1:]:
        for j, stride in enumerate(lat.strides.tolist()):
            can = nodes[levels[nodes, j] > 0]
            child = can - stride
            out[can] |= out[child] | mask[child]
    return out


__all__ = [
    "MAX_NODES",
    "SHAPE_CACHE_NODES",
    "ColumnLevels",
    "Lattice",
    "LatticeShape",
    "Node",
    "above",
    "column_levels",
    "lattice_shape",
]
