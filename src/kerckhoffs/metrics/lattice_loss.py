"""The measures that choose the published node among the minimal ones, computed exactly.

- ``"loss"`` (default): paper 001 Definition 7 information loss
  (``docs/theory/minimality.md#information-loss``),
  ``Dist = (1/|T|) sum_t sum_A w_A (coverage(t*.A) - 1) / (base(A) - 1)`` with ``w_A = 1/|QID|``,
  ``coverage`` the number of the column's domain values under the published node (every hierarchy
  leaf for a categorical QI, every value present for a numeric one, as in the hierarchies we propose
  for paper 001's experiments: ``docs/theory/minimality.md#experiments``) and ``base`` the domain
  size; a suppressed row counts 1 (every attribute at the root).
- ``"discernibility"`` (Bayardo and Agrawal 2005): ``sum_G |G|^2``, a suppressed row ``|T|``.
- ``"height"``: ``sum_j l_j``.

Ties go to the lexicographically lowest level vector. Losses are compared exactly (integer
numerators over one common denominator, :class:`LossScale`), never as rounded floats. Without
suppression each metric is monotone along the lattice, so the chosen node is also the first
satisfying node of :func:`generalization_sequence` (all nodes by ascending metric, ties
lexicographic): the algorithm is paper 002's *naive* algorithm over that sequence, which is what the
inclusive/exclusive strategies of paper 002 (``docs/theory/disclosure-sets.md#inclusive``,
``#exclusive``) and the attack by mechanism of paper 001
(``docs/theory/minimality.md#attack-by-mechanism``; Incognito-like, Tables XVI-XVIII) take as the
known mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from kerckhoffs.data.lattice import Lattice, Node
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError

METRICS = ("loss", "discernibility", "height")


@dataclass(frozen=True, eq=False)
class LossScale:
    """Paper 001 Definition 7 information loss of a lattice's nodes as exact integers.

    A node's *key* is ``loss * |T| * d * lcm`` with ``lcm`` the least common multiple of every
    ``base(A) - 1``: an integer, so keys order nodes exactly; :meth:`value` divides once.
    """

    lattice: Lattice

    @cached_property
    def lcm(self) -> int:
        """Least common multiple of every QI's ``base - 1`` (1 for a one-value domain)."""
        return math.lcm(*(max(c.base - 1, 1) for c in self.lattice.columns))

    def numerators(self, cols: tuple[np.ndarray, ...], count: np.ndarray, node: Node) -> list[int]:
        """Per QI, ``sum over cells of count * (coverage - 1)`` (exact integers); ``cols`` are
        the cells' node ids at ``node``'s levels."""
        out = []
        for j, (c, lvl) in enumerate(zip(self.lattice.columns, node, strict=True)):
            if c.base <= 1 or lvl == 0:
                out.append(0)
                continue
            cov = c.coverage[lvl][cols[j]] - 1
            out.append(int(np.dot(cov, count)))
        return out

    def key(self, numerators: list[int], suppressed: int) -> int:
        """``loss * |T| * d * lcm`` as an exact integer (orders nodes by loss)."""
        lcm = self.lcm
        columns = self.lattice.columns
        total = sum(
            s * (lcm // (c.base - 1))
            for s, c in zip(numerators, columns, strict=True)
            if c.base > 1
        )
        return total + suppressed * len(columns) * lcm

    @cached_property
    def level_keys(self) -> list[list[int]]:
        """Per QI and level, its share of :meth:`key` when no row is suppressed
        (:meth:`column_numerators` times ``lcm / (base - 1)``)."""
        out = []
        for c, per in zip(self.lattice.columns, self.column_numerators(), strict=True):
            mult = self.lcm // (c.base - 1) if c.base > 1 else 0
            out.append([s * mult for s in per])
        return out

    def node_key(self, node: Node) -> int:
        """:meth:`key` of ``node`` with no row suppressed: every row is published at the
        node's levels, so the sum over groups is the sum over rows, known per QI and level
        without grouping (the same exact integer)."""
        return sum(keys[lvl] for keys, lvl in zip(self.level_keys, node, strict=True))

    def value(self, key: int) -> float:
        """The loss of a key, rounded once to a float."""
        lat = self.lattice
        return float(Fraction(key, lat.table.n * len(lat.columns) * self.lcm))

    def column_numerators(self) -> list[list[int]]:
        """Per QI and level, ``sum over rows of (coverage - 1)`` (exact integers)."""
        lat = self.lattice
        out = []
        for j, c in enumerate(lat.columns):
            freq = np.bincount(lat.table.qi[:, j], minlength=c.base).astype(np.int64)
            out.append(
                [
                    int(np.dot(c.coverage[lvl][c.node_of_code[lvl]] - 1, freq))
                    for lvl in range(c.height + 1)
                ]
            )
        return out


def information_loss(
    table: Table, node: Node | dict[str, int], suppressed: np.ndarray | None = None
) -> float:
    """Paper 001 Definition 7 information loss of ``table`` published at ``node``
    (``docs/theory/minimality.md#information-loss``).

    ``Dist = (1/|T|) sum_t sum_A (1/|QID|) (coverage(t*.A) - 1) / (base(A) - 1)`` (an
    attribute with ``base = 1`` contributes 0). ``suppressed`` (bool per row) marks rows
    published at the root, which count 1. Exact up to the final division.
    """
    lat = Lattice.of(table)
    node = lat.check_node(node)
    cols = lat.row_nodes(node)
    keep = np.ones(table.n, dtype=np.int64)
    n_sup = 0
    if suppressed is not None:
        suppressed = np.asarray(suppressed, dtype=bool)
        keep[suppressed] = 0
        n_sup = int(suppressed.sum())
    scale = LossScale(lat)
    return scale.value(scale.key(scale.numerators(tuple(cols.T), keep, node), n_sup))


def generalization_sequence(table: Table, metric: str = "loss") -> list[Node]:
    """Every lattice node in ascending ``metric`` (no suppression), ties lexicographic.

    This is the ordered list of generalization functions ``g_1, g_2, ...`` of paper 002
    (``docs/theory/disclosure-sets.md#generalizations``) and Zhang's phase 1 of the attack by
    mechanism (``docs/theory/minimality.md#attack-by-mechanism``): the
    lattice algorithm publishes its first node satisfying the models (module docstring).
    ``"discernibility"`` groups the table at every node (the cost of a full scan).
    """
    if metric not in METRICS:
        raise ParameterError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    lat = Lattice.of(table)
    levels = lat.levels
    if metric == "height":
        keys = [int(x) for x in lat.node_heights]
    elif metric == "loss":
        tables = LossScale(lat).level_keys
        keys = [sum(tables[j][lvl] for j, lvl in enumerate(row)) for row in levels.tolist()]
    else:
        keys = []
        for i in range(lat.size):
            sizes = lat.partition(lat.node(i)).sizes.astype(np.int64)
            keys.append(int(np.dot(sizes, sizes)))
    order = sorted(range(lat.size), key=lambda i: (keys[i], i))
    return [lat.node(i) for i in order]


__all__ = ["METRICS", "LossScale", "generalization_sequence", "information_loss"]
