"""Full-domain generalization over the hierarchy lattice (Samarati 2001; LeFevre, DeWitt and
Ramakrishnan 2005, "Incognito").

Every quasi-identifier is generalized to *one level* of its hierarchy for the whole table
(global recoding, spec ``minimality.md`` 2.3). A **lattice node** is a level vector
``(l_1, ..., l_d)`` with ``0 <= l_j <= height_j``; node ``a`` generalizes node ``b`` when
``a >= b`` in every coordinate. The bottom ``(0, ..., 0)`` publishes the data as is, the top
publishes every QI at its root (one group). Numeric QIs need a hierarchy or ``widths`` in the
schema; a numeric QI without one is refused with one line naming the column.

**Node evaluation.** Each row's code is mapped to its node id at the node's level
(``col.hierarchy.node_ids[level][col.leaves(codes)]``); rows with equal node-id vectors form a
group; the per-group SA histogram is one ``bincount`` and the privacy models read it
(:mod:`kerckhoffs.models`). The search does this on *frequency sets* rather than rows: the
table's distinct (node vector, SA) cells with their counts, computed once, or better the
frequency set of an evaluated node below (a child, one level lower on one QI: Incognito's
"rollup"), mapped up to the node's levels and re-aggregated with the same code
(:class:`_Evaluator`). :func:`evaluate_node` runs it on the rows themselves (one cell per row),
the reference the tests compare against.

**Monotone models (generalization property, spec 2.6).** If a node satisfies the model, so
does every generalization of it, because a generalization only *merges* groups and each
accepted model survives merging two satisfying groups ``A`` and ``B``:

- :class:`~kerckhoffs.models.KAnonymity`: ``|A u B| >= |A| >= k``;
- :class:`~kerckhoffs.models.LDiversity` (frequency, subset-aware) and the per-group part of
  :class:`~kerckhoffs.models.MConfidentiality`: the bounded count is sub-additive
  (``c(A u B) <= c(A) + c(B)``; the sensitive count of a set is additive, a maximum is
  sub-additive), so ``l * c(A u B) <= |A| + |B|`` and
  ``c(A u B) <= floor(|A|/m) + floor(|B|/m) <= floor(|A u B|/m)``;
- :class:`~kerckhoffs.models.AlphaKAnonymity`: both parts of the previous two items;
- :class:`~kerckhoffs.models.DistinctLDiversity`: the union holds every value of ``A``;
- :class:`~kerckhoffs.models.EntropyLDiversity`: entropy is concave, so the mixture's entropy is
  at least the weighted mean of ``H(A)`` and ``H(B)`` (Machanavajjhala et al. 2006).

Other models (t-closeness, recursive (c, l)) are refused. Monotonicity is what makes the
pruning sound: a node above a satisfying node satisfies and is not evaluated, a node below a
violating node violates and is not evaluated.

**Strategies.** All return the same minimal nodes (except ``"samarati"``, below) and so the
same published node; they differ in how many nodes they evaluate.

- ``"incognito"``: bottom-up breadth-first by height with *predictive tagging* (LeFevre et
  al. 2005, section 3): nodes are visited by height, inside a height in lexicographic order of
  their level vector; a node above a satisfying node is tagged satisfying without evaluation;
  every other node is evaluated, from the frequency set of a child.
- ``"two-way"`` (default): the same bottom-up frontier plus a top-down one, which tags every
  specialization of a violating node as violating (the contrapositive of the generalization
  property); at each step the frontier whose next height has fewer untagged nodes advances.
  On Adult with k = 5 the minimal nodes sit near the top of the lattice (no suppression: every
  rare value must be generalized away), so bottom-up alone evaluates 15,269 of the 15,360
  nodes and two-way about 450.
- ``"samarati"``: Samarati's binary search on the height for the lowest height holding a
  satisfying node (sound because, for a monotone predicate, a satisfying node at height ``h``
  has a satisfying parent at ``h + 1``), then every node of that height is evaluated; the
  minimal nodes it returns are the satisfying nodes of that height only, and its choice is
  the best of those. Refused with ``suppression > 0``.
- ``"naive"``: the reference, every node evaluated from the table's frequency set, no pruning.

Tagging never makes the minimal set wrong, whatever the predicate: a node is minimal iff it
satisfies and no node below it does, and the search keeps only evaluated satisfying nodes
with no evaluated satisfying node below them. A tag "satisfying" only ever marks nodes strictly
above a satisfying node (not minimal); a tag "violating" relies on monotonicity, and is only
used where it holds (below).

**Choice of the node** among the minimal nodes, by ``metric``:

- ``"loss"`` (default): paper 001 Definition 7 information loss (spec 2.9),
  ``Dist = (1/|T|) sum_t sum_A w_A (coverage(t*.A) - 1) / (base(A) - 1)`` with ``w_A = 1/|QID|``,
  ``coverage`` the number of the column's domain values under the published node (every
  hierarchy leaf for a categorical QI, every value present for a numeric one, spec 5.4) and
  ``base`` the domain size; a suppressed row counts 1 (every attribute at the root).
- ``"discernibility"`` (Bayardo and Agrawal 2005): ``sum_G |G|^2``, a suppressed row ``|T|``.
- ``"height"``: ``sum_j l_j``.

Ties go to the lexicographically lowest level vector. Losses are compared exactly (integer
numerators), never as rounded floats. Without suppression each metric is monotone along the
lattice, so the chosen node is also the first satisfying node of
:func:`generalization_sequence` (all nodes by ascending metric, ties lexicographic): the
algorithm is paper 002's *naive* algorithm over that sequence, which is what the
inclusive/exclusive strategies of spec ``exclusive.md`` 2.7-2.8 and the attack by mechanism of
spec ``minimality.md`` 3.6 (Incognito-like, Tables XVI-XVIII) take as the known mechanism.

**Suppression** (``suppression=f``, a fraction of the rows, default 0): a node may leave up to
``floor(f * |T|)`` rows in groups that violate a model; those rows are *suppressed*. A release
is a partition of every row, so the suppressed rows are published as **one group of their own
whose QI cells are the roots** (``*``) and whose SA values are published like any other
group's; the independent check of :meth:`Release.write` then sees that group like any other, so
it must satisfy the models too. A node whose suppressed group violates a model (e.g. 3 outliers
under k = 5; with frequency l-diversity on a sensitive subset in ``set`` mode this is every
node with outliers, since each violating group holds more than ``1/l`` sensitive rows and so
does their union) does **not** satisfy: suppression never publishes a group that fails the
model. This predicate is not monotone: a generalization may leave fewer outliers, too few to
form a valid group, and for the models other than k-anonymity and distinct l-diversity it may
even leave *more* violating rows (an l-diverse group merged with a violating one can violate).
So with suppression the Samarati search is refused, violating nodes tag their specializations
only under k-anonymity / distinct l-diversity alone (where the number of violating rows cannot
grow upward), and the searches still return exactly the minimal nodes (above). With suppression
the loss is not monotone either (a suppressed row costs 1), so the chosen node is the best
*minimal* node, as the minimality principle (spec 2.6) describes the algorithms paper 001
attacks, not necessarily the best satisfying node.

**Feasibility.** The top node (the whole table as one group) is checked first: if it fails a
model, no node can satisfy it (the union of satisfying groups satisfies a monotone model, and
the suppressed group is one more such group), and a one-line
:class:`~kerckhoffs.errors.ParameterError` names the model.

**Published cells.** The release carries its cells (:func:`full_domain_cells`): each group
publishes the label of its node at the chosen level (``[35-39]``, ``university``,
``Person``), not the lowest common ancestor of the rows it happens to hold, so the file is the
full-domain table of
spec 4.12 (Table XVIII(a) publishes ``Person`` for a group of women only). The provenance
records the chosen level vector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.registry import refuse_others, register
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError, SchemaError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity, EntropyLDiversity, LDiversity
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme

MONOTONE_MODELS: tuple[type[PrivacyModel], ...] = (
    KAnonymity,
    LDiversity,
    DistinctLDiversity,
    EntropyLDiversity,
    AlphaKAnonymity,
    MConfidentiality,
)
"""The models the lattice search accepts: monotone under generalization (module docstring)."""

METRICS = ("loss", "discernibility", "height")
STRATEGIES = ("two-way", "incognito", "samarati", "naive")
MAX_NODES = 10_000_000
"""Largest lattice the search accepts (the node arrays are built in memory)."""

Node = tuple[int, ...]


# -- the lattice --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Column:
    """One QI's levels: code -> node id maps, parent maps, coverage, labels."""

    name: str
    height: int
    node_of_code: tuple[np.ndarray, ...]  # per level: int32 [domain size]
    parent: tuple[np.ndarray, ...]  # per level < height: node id -> node id one level up
    coverage: tuple[np.ndarray, ...]  # per level: domain values under each node
    labels: tuple[np.ndarray, ...]  # per level: ancestor label of each hierarchy leaf
    base: int  # domain size (paper 001's base(T_A))


def _column_levels(table: Table, j: int) -> _Column:
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
    return _Column(
        col.name, h.height, node_of_code, tuple(parent), coverage, tuple(h.labels), col.size
    )


@dataclass(frozen=True, eq=False)
class Lattice:
    """The generalization lattice of a table: one hierarchy level per quasi-identifier.

    Nodes are numbered in mixed radix, first QI most significant, so node order is the
    lexicographic order of level vectors (:meth:`index`, :meth:`node`).
    """

    table: Table
    columns: tuple[_Column, ...]

    @classmethod
    def of(cls, table: Table) -> Lattice:
        """The lattice of ``table``; a QI without a hierarchy is refused with one line."""
        cols = tuple(_column_levels(table, j) for j in range(table.d))
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

    @property
    def heights(self) -> Node:
        """Height of each QI's hierarchy (its largest level)."""
        return tuple(c.height for c in self.columns)

    @property
    def size(self) -> int:
        """Number of nodes."""
        return math.prod(h + 1 for h in self.heights)

    @cached_property
    def strides(self) -> np.ndarray:
        """Index step of one level on each QI."""
        radix = [h + 1 for h in self.heights]
        return np.array([math.prod(radix[j + 1 :]) for j in range(len(radix))], dtype=np.int64)

    @property
    def top(self) -> Node:
        """The node publishing every QI at its root."""
        return self.heights

    @cached_property
    def levels(self) -> np.ndarray:
        """Level vector of every node, int32 [size, d], in index order."""
        grids = np.indices([h + 1 for h in self.heights], dtype=np.int32)
        return grids.reshape(len(self.heights), -1).T.copy()

    @cached_property
    def node_heights(self) -> np.ndarray:
        """Height (sum of levels) of every node."""
        return self.levels.sum(axis=1)

    def index(self, node: Node) -> int:
        """Index of a level vector."""
        node = self.check_node(node)
        return int(np.dot(node, self.strides))

    def node(self, index: int) -> Node:
        """Level vector of an index."""
        return self._nodes[index]

    @cached_property
    def _nodes(self) -> list[Node]:
        return [tuple(r) for r in self.levels.tolist()]

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
        """Node indices of each height, each in lexicographic order."""
        h = self.node_heights
        order = np.argsort(h, kind="stable")
        bounds = np.searchsorted(h[order], np.arange(sum(self.heights) + 2))
        return [order[bounds[i] : bounds[i + 1]] for i in range(sum(self.heights) + 1)]

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

    # -- information loss (paper 001 Definition 7) -------------------------------------------
    @cached_property
    def _loss_lcm(self) -> int:
        return math.lcm(*(max(c.base - 1, 1) for c in self.columns))

    def _loss_numerators(
        self, cols: tuple[np.ndarray, ...], count: np.ndarray, node: Node
    ) -> list[int]:
        """Per QI, ``sum over cells of count * (coverage - 1)`` (exact integers)."""
        out = []
        for j, (c, lvl) in enumerate(zip(self.columns, node, strict=True)):
            if c.base <= 1 or lvl == 0:
                out.append(0)
                continue
            cov = c.coverage[lvl][cols[j]] - 1
            out.append(int(np.dot(cov, count)))
        return out

    def _loss_key(self, numerators: list[int], suppressed: int) -> int:
        """``loss * |T| * d * lcm`` as an exact integer (orders nodes by loss)."""
        lcm = self._loss_lcm
        d = len(self.columns)
        total = sum(
            s * (lcm // (c.base - 1))
            for s, c in zip(numerators, self.columns, strict=True)
            if c.base > 1
        )
        return total + suppressed * d * lcm

    def _loss_value(self, key: int) -> float:
        return float(Fraction(key, self.table.n * len(self.columns) * self._loss_lcm))

    def column_loss_numerators(self) -> list[list[int]]:
        """Per QI and level, ``sum over rows of (coverage - 1)`` (exact integers)."""
        out = []
        for j, c in enumerate(self.columns):
            freq = np.bincount(self.table.qi[:, j], minlength=c.base).astype(np.int64)
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
    """Paper 001 Definition 7 information loss of ``table`` published at ``node`` (spec 2.9).

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
    return lat._loss_value(lat._loss_key(lat._loss_numerators(tuple(cols.T), keep, node), n_sup))


# -- frequency sets and node evaluation ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Freq:
    """A frequency set: distinct (node-id vector, SA) cells of the table at node ``levels``
    with their row counts (``count=None``: one row per cell, the table itself)."""

    levels: Node
    cols: tuple[np.ndarray, ...]  # per QI: int32 [m] node ids at levels[j]
    sa: np.ndarray  # int32 [m]
    count: np.ndarray | None  # int64 [m]

    @property
    def size(self) -> int:
        return int(self.sa.size)

    @cached_property
    def weights(self) -> np.ndarray | None:
        """``count`` as float64, the weights ``np.bincount`` wants (converted once)."""
        return None if self.count is None else self.count.astype(np.float64)


@dataclass(frozen=True)
class NodeResult:
    """What the search learnt about one node.

    ``evaluated`` is False for a node *tagged* from an evaluated one (predictive tagging):
    satisfying because a specialization of it satisfies, or violating because a
    generalization of it leaves more violating rows than the suppression limit; its other
    fields are then unknown (-1 / nan). ``violating`` counts the rows in groups that fail a
    model (for a satisfying node: the rows it suppresses). ``loss`` is the metric value of an
    evaluated satisfying node.
    """

    levels: Node
    satisfied: bool
    evaluated: bool = True
    groups: int = -1
    violating: int = -1
    loss: float = math.nan


@dataclass(frozen=True, eq=False)
class _Grouped:
    """A source's cells grouped at ``node``: ``gid`` per cell, ``hist`` [groups, n_sa]."""

    node: Node
    cols: tuple[np.ndarray, ...]
    gid: np.ndarray
    hist: np.ndarray

    @cached_property
    def sizes(self) -> np.ndarray:
        return self.hist.sum(axis=1)

    def group_cols(self) -> tuple[np.ndarray, ...]:
        """Each group's node id on each QI."""
        out = []
        for c in self.cols:
            g = np.empty(self.hist.shape[0], dtype=np.int32)
            g[self.gid] = c
            out.append(g)
        return tuple(out)

    def freq(self) -> _Freq:
        """The node's own frequency set (its non-empty (group, SA) cells)."""
        g_nz, s_nz = np.nonzero(self.hist)
        return _Freq(
            self.node,
            tuple(g[g_nz] for g in self.group_cols()),
            s_nz.astype(np.int32),
            self.hist[g_nz, s_nz],
        )


CACHE_CELLS = 4_000_000
"""Most cells the search keeps in frequency sets of evaluated nodes (beyond the table's)."""
KEY_LIMIT = 2**62
"""Group keys are mixed-radix int64 below this domain size, else rows are factorized."""
DENSE_FACTOR, DENSE_SLACK = 4, 4096
"""A key domain up to ``DENSE_FACTOR * cells + DENSE_SLACK`` is ranked densely (no hashing)."""


class _Evaluator:
    """Judges lattice nodes from the frequency set of a more specific evaluated node.

    A node ``x`` is evaluated from any kept frequency set at a node ``y <= x`` (the table's
    own distinct cells at the bottom always qualify): each cell's node id on QI ``j`` is mapped
    from level ``y_j`` up to ``x_j``, the cells are grouped on the mapped vector (a mixed-radix
    int64 key made dense when its domain is small, else factorized), and one ``bincount``
    gives the per-group SA histogram the models read. From the rows themselves
    (:func:`evaluate_node`) the same code runs with one cell per row.
    """

    def __init__(
        self,
        lattice: Lattice,
        models: list[PrivacyModel],
        limit: int,
        metric: str,
    ) -> None:
        t = lattice.table
        self.lattice = lattice
        self.models = models
        self.limit = limit
        self.metric = metric
        self.sensitive = np.asarray(t.sensitive, dtype=bool)
        self.mode = t.schema.sensitive_mode
        self.sa_kind = t.sa_column.kind
        self.n_sa = t.n_sa
        self.keys: dict[int, int] = {}  # node index -> exact metric key (satisfying nodes)
        self.kept: dict[int, _Freq] = {}
        self._kept_cells = 0
        self._kept_height = 0
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self._base_cols: dict[tuple[int, int], np.ndarray] = {}
        self.rows = _Freq(
            (0,) * t.d,
            tuple(c.node_of_code[0][t.qi[:, j]] for j, c in enumerate(lattice.columns)),
            t.sa,
            None,
        )
        self.base = self._group(self.rows, (0,) * t.d).freq()
        self.evaluations = 0

    # -- grouping --------------------------------------------------------------------------
    def _map(self, j: int, a: int, b: int) -> np.ndarray:
        """Node ids of QI ``j`` at level ``a`` -> their ancestors at level ``b``."""
        key = (j, a, b)
        if key not in self._maps:
            parents = self.lattice.columns[j].parent
            m = parents[a]
            for lvl in range(a + 1, b):
                m = parents[lvl][m]
            self._maps[key] = m
        return self._maps[key]

    def _group(self, src: _Freq, node: Node) -> _Grouped:
        """Group ``src``'s cells at ``node``: group id per cell and per-group SA histogram."""
        if src is getattr(self, "base", None):
            cols = tuple(self._base_col(j, lvl) for j, lvl in enumerate(node))
        else:
            cols = tuple(
                c if a == b else self._map(j, a, b)[c]
                for j, (c, a, b) in enumerate(zip(src.cols, src.levels, node, strict=True))
            )
        lat = self.lattice
        radix = [lat.columns[j].coverage[lvl].size for j, lvl in enumerate(node)]
        domain = math.prod(radix)
        m = src.size
        if domain < KEY_LIMIT:
            key = np.zeros(m, dtype=np.int64)
            for c, r in zip(cols, radix, strict=True):
                if r > 1:  # a QI at a level with one node (its root) adds nothing
                    key *= r
                    key += c
            if domain <= DENSE_FACTOR * m + DENSE_SLACK:
                present = np.zeros(domain, dtype=bool)
                present[key] = True
                rank = np.cumsum(present, dtype=np.int64)
                gid = rank[key] - 1
                n_groups = int(rank[-1])
            else:
                gid, uniq = pd.factorize(key, sort=False)
                n_groups = len(uniq)
        else:
            gid = Partition.from_columns(np.stack(cols, axis=1)).group
            n_groups = int(gid.max()) + 1
        flat = gid.astype(np.int64, copy=False) * self.n_sa + src.sa
        counts = np.bincount(flat, weights=src.weights, minlength=n_groups * self.n_sa)
        return _Grouped(node, cols, gid, counts.astype(np.int64).reshape(n_groups, self.n_sa))

    def _base_col(self, j: int, level: int) -> np.ndarray:
        """The table's cells' node ids on QI ``j`` at ``level`` (computed once, int64)."""
        key = (j, level)
        if key not in self._base_cols:
            c = self.base.cols[j]
            c = c if level == 0 else self._map(j, 0, level)[c]
            self._base_cols[key] = c.astype(np.int64)  # adds to the int64 key without casts
        return self._base_cols[key]

    def _source(self, index: int) -> _Freq:
        """The smallest kept frequency set at a node below ``index`` (else the table's):
        a kept child if there is one, else any kept node below (kept nodes all have one
        height, so only a node at least two heights above them needs the scan)."""
        best = self.base
        node = self.lattice.node(index)
        for j, stride in enumerate(self.lattice.strides.tolist()):
            f = self.kept.get(index - stride) if node[j] > 0 else None
            if f is not None and f.size < best.size:
                best = f
        if best is self.base and self.kept and sum(node) >= self._kept_height + 2:
            ids = np.fromiter(self.kept, dtype=np.int64, count=len(self.kept))
            below = (self.lattice.levels[ids] <= self.lattice.levels[index]).all(axis=1)
            for i in ids[below].tolist():
                f = self.kept[i]
                if f.size < best.size:
                    best = f
        return best

    def keep(self, index: int, grouped: _Grouped) -> None:
        """Keep a node's frequency set as a source for nodes above it, if it is much smaller
        than the table's and within the budget (the caller keeps one height at a time)."""
        cells = int(np.count_nonzero(grouped.hist))
        if cells < 0.5 * self.base.size and self._kept_cells + cells <= CACHE_CELLS:
            freq = grouped.freq()
            self.kept[index] = freq
            self._kept_cells += freq.size
            self._kept_height = sum(freq.levels)

    def forget(self, indices: list[int]) -> None:
        for i in indices:
            f = self.kept.pop(i, None)
            if f is not None:
                self._kept_cells -= f.size

    # -- judging ---------------------------------------------------------------------------
    def ok_groups(self, counts: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
        """Groups (rows of ``counts``) that satisfy every model."""
        cache = {} if sizes is None else {"sizes": sizes}
        hist = GroupHistogram(counts, self.sensitive, self.mode, self.sa_kind, cache)
        ok = np.ones(counts.shape[0], dtype=bool)
        for m in self.models:
            ok &= m.evaluate(hist).group_ok
        return ok

    def evaluate(self, index: int, src: _Freq | None = None) -> tuple[NodeResult, _Grouped]:
        """Judge node ``index`` (with suppression) and compute its metric if it satisfies."""
        lat = self.lattice
        node = lat.node(index)
        grouped = self._group(src or self._source(index), node)
        hist, sizes = grouped.hist, grouped.sizes
        self.evaluations += 1
        ok = self.ok_groups(hist, sizes)
        violating = int(sizes[~ok].sum())
        if violating == 0:
            satisfied = True
        elif violating > self.limit:
            satisfied = False
        else:
            satisfied = bool(self.ok_groups(hist[~ok].sum(axis=0, keepdims=True))[0])
        loss = math.nan
        if satisfied:
            if self.metric == "loss":
                kept = np.where(ok, sizes, 0)
                numerators = lat._loss_numerators(grouped.group_cols(), kept, node)
                key = lat._loss_key(numerators, violating)
                loss = lat._loss_value(key)
            elif self.metric == "discernibility":
                key = int(np.dot(sizes[ok], sizes[ok])) + violating * lat.table.n
                loss = float(key)
            else:
                key = sum(node)
                loss = float(key)
            self.keys[index] = key
        return NodeResult(node, satisfied, True, int(sizes.size), violating, loss), grouped


# -- the search -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LatticeSearch:
    """The outcome of a lattice search.

    ``visits`` lists the nodes in the order the algorithm visited them (tagged nodes
    included, with ``evaluated=False``); ``minimal`` the minimal satisfying nodes found, in
    lexicographic order (for ``"samarati"``: those of the lowest satisfying height);
    ``chosen`` the published node; ``losses`` the metric value of each minimal node.
    """

    lattice: Lattice
    strategy: str
    metric: str
    suppression: float
    visits: tuple[NodeResult, ...]
    minimal: tuple[Node, ...]
    losses: dict[Node, float]
    chosen: Node

    @property
    def evaluated(self) -> int:
        """Number of nodes evaluated (not tagged)."""
        return sum(v.evaluated for v in self.visits)

    @property
    def chosen_result(self) -> NodeResult:
        """The visit that evaluated the chosen node."""
        return next(v for v in self.visits if v.levels == self.chosen and v.evaluated)


def _evaluator(
    table: Table, models: list[PrivacyModel], suppression: float, metric: str, name: str
) -> _Evaluator:
    refuse_others(models, MONOTONE_MODELS, name)
    if not models:
        raise ParameterError(f"{name} needs a privacy model, e.g. k=5 or l=2")
    if metric not in METRICS:
        raise ParameterError(f"{name}: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    try:
        suppression = float(suppression)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}: suppression must be a fraction in [0, 1)") from None
    if not 0.0 <= suppression < 1.0:
        raise ParameterError(
            f"{name}: suppression must be a fraction of the rows in [0, 1), got "
            f"{format_number(suppression)}"
        )
    limit = math.floor(suppression * table.n + 1e-9)
    return _Evaluator(Lattice.of(table), list(models), limit, metric)


def _check_feasible(ev: _Evaluator, name: str) -> None:
    """Refuse models no node can satisfy: the top node (one group) is the last hope."""
    t = ev.lattice.table
    hist = GroupHistogram.from_codes(
        np.zeros(t.n, dtype=np.int64), t.sa, 1, t.n_sa, ev.sensitive, ev.mode, ev.sa_kind
    )
    for m in ev.models:
        m.validate(hist, repr(t.sa_name))
    for m in ev.models:
        r = m.evaluate(hist)
        if not r.satisfied:
            raise ParameterError(
                f"{name}: {m.name} ({m.parameter}) cannot be met even with every quasi-identifier "
                f"at its root (the whole table as one group achieves "
                f"{format_number(r.achieved)})"
            )


def _above(lat: Lattice, mask: np.ndarray, layers: list[np.ndarray], strict: bool) -> np.ndarray:
    """Nodes above (``>=``, or ``>`` with ``strict``) some node of ``mask``."""
    out = np.zeros(lat.size, dtype=bool) if strict else mask.copy()
    levels = lat.levels
    for nodes in layers[1:]:
        for j, stride in enumerate(lat.strides.tolist()):
            can = nodes[levels[nodes, j] > 0]
            child = can - stride
            out[can] |= out[child] | mask[child]
    return out


def _sweep(ev: _Evaluator, two_way: bool) -> tuple[list[NodeResult], list[int]]:
    """Bottom-up by height with predictive tagging (Incognito); with ``two_way`` also a
    top-down frontier tagging the specializations of violating nodes, the two frontiers
    advancing on the side with fewer untagged nodes next (module docstring)."""
    lat = ev.lattice
    # "violating" tags need monotone violation: always without suppression; with it, only if
    # the violating rows cannot grow upward (every model holds on a superset of a good group)
    tag_down = ev.limit == 0 or all(
        isinstance(m, KAnonymity | DistinctLDiversity) for m in ev.models
    )
    two_way = two_way and tag_down  # without those tags a top-down frontier prunes nothing
    levels = lat.levels
    strides = lat.strides.tolist()
    heights = lat.heights
    layers = lat.by_height()
    up = np.zeros(lat.size, dtype=bool)  # >= an evaluated satisfying node
    down = np.zeros(lat.size, dtype=bool)  # <= a node with too many violating rows
    qsat = np.zeros(lat.size, dtype=bool)
    visits: list[NodeResult] = []
    lo, hi = 0, len(layers) - 1
    last_kept: list[int] = []
    while lo <= hi:
        if two_way and lo < hi:
            n_lo = int(np.count_nonzero(~(up[layers[lo]] | down[layers[lo]])))
            n_hi = int(np.count_nonzero(~(up[layers[hi]] | down[layers[hi]])))
            bottom = n_lo <= n_hi
        else:
            bottom = True
        nodes = layers[lo] if bottom else layers[hi]
        new_up = new_down = False
        kept: list[int] = []
        for idx in nodes.tolist():
            if up[idx] or down[idx]:
                visits.append(NodeResult(lat.node(idx), bool(up[idx]), evaluated=False))
                continue
            res, grouped = ev.evaluate(idx)
            visits.append(res)
            if res.satisfied:
                up[idx] = qsat[idx] = new_up = True
            else:
                if tag_down and res.violating > ev.limit:
                    down[idx] = new_down = True
                if bottom:
                    ev.keep(idx, grouped)
                    kept.append(idx)
        if bottom:
            ev.forget(last_kept)
            last_kept = kept
            lo += 1
            if new_up:  # carry the new tags through the unvisited heights
                for h in range(lo, hi + 1):
                    for j, stride in enumerate(strides):
                        can = layers[h][levels[layers[h], j] > 0]
                        up[can] |= up[can - stride]
        else:
            hi -= 1
            if new_down:
                for h in range(hi, lo - 1, -1):
                    for j, stride in enumerate(strides):
                        can = layers[h][levels[layers[h], j] < heights[j]]
                        down[can] |= down[can + stride]
    ev.forget(last_kept)
    minimal = np.flatnonzero(qsat & ~_above(lat, qsat, layers, strict=True))
    return visits, minimal.tolist()


def _samarati(ev: _Evaluator) -> tuple[list[NodeResult], list[int]]:
    layers = ev.lattice.by_height()
    done: dict[int, NodeResult] = {}
    visits: list[NodeResult] = []

    def judge(idx: int) -> NodeResult:
        if idx not in done:
            done[idx] = ev.evaluate(idx)[0]
            visits.append(done[idx])
        return done[idx]

    lo, hi = 0, len(layers) - 1  # the top satisfies (checked before the search)
    while lo < hi:
        mid = (lo + hi) // 2
        if any(judge(i).satisfied for i in layers[mid].tolist()):
            hi = mid
        else:
            lo = mid + 1
    minimal = [i for i in layers[lo].tolist() if judge(i).satisfied]
    return visits, minimal


def _naive(ev: _Evaluator) -> tuple[list[NodeResult], list[int]]:
    lat = ev.lattice
    visits = [ev.evaluate(i, ev.base)[0] for i in range(lat.size)]
    sat = np.array([v.satisfied for v in visits], dtype=bool)
    layers = lat.by_height()
    return visits, np.flatnonzero(sat & ~_above(lat, sat, layers, strict=True)).tolist()


def search_lattice(
    table: Table,
    models: list[PrivacyModel],
    *,
    suppression: float = 0.0,
    metric: str = "loss",
    strategy: str = "two-way",
    name: str = "lattice",
) -> LatticeSearch:
    """Search the lattice of ``table`` for the minimal nodes satisfying every model and choose
    one by ``metric`` (see the module docstring for strategies, metrics and suppression).

    Raises :class:`~kerckhoffs.errors.ParameterError` (one line) for models that are not
    monotone, unknown options, or models that even the top node cannot satisfy.
    """
    if strategy not in STRATEGIES:
        raise ParameterError(
            f"{name}: strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}"
        )
    ev = _evaluator(table, models, suppression, metric, name)
    if strategy == "samarati" and ev.limit > 0:
        raise ParameterError(
            f"{name}: strategy 'samarati' needs suppression=0 (its binary search needs a "
            "monotone predicate); use strategy 'two-way' or 'incognito'"
        )
    _check_feasible(ev, name)
    if strategy in ("two-way", "incognito"):
        visits, minimal = _sweep(ev, two_way=strategy == "two-way")
    elif strategy == "samarati":
        visits, minimal = _samarati(ev)
    else:
        visits, minimal = _naive(ev)
    lat = ev.lattice
    chosen = min(minimal, key=lambda i: (ev.keys[i], i))
    evaluated = {v.levels: v for v in visits if v.evaluated}
    return LatticeSearch(
        lat,
        strategy,
        metric,
        float(suppression),
        tuple(visits),
        tuple(lat.node(i) for i in minimal),
        {lat.node(i): evaluated[lat.node(i)].loss for i in minimal},
        lat.node(chosen),
    )


def evaluate_node(
    table: Table,
    models: list[PrivacyModel],
    node: Node | dict[str, int],
    *,
    suppression: float = 0.0,
    metric: str = "loss",
) -> NodeResult:
    """Judge one node from the rows (the reference the search's frequency sets must match):
    does it satisfy every model, suppressing at most ``floor(suppression * |T|)`` rows whose
    suppressed group satisfies the models too?"""
    ev = _evaluator(table, models, suppression, metric, "lattice")
    idx = ev.lattice.index(ev.lattice.check_node(node))
    return ev.evaluate(idx, ev.rows)[0]


def minimal_nodes(table: Table, models: list[PrivacyModel], **options: Any) -> list[Node]:
    """The minimal satisfying nodes (no satisfying specialization), lexicographic order."""
    return list(search_lattice(table, models, **options).minimal)


def visiting_order(table: Table, models: list[PrivacyModel], **options: Any) -> list[NodeResult]:
    """Every node the search visits, in the algorithm's order (tagged ones included)."""
    return list(search_lattice(table, models, **options).visits)


def chosen_node(table: Table, models: list[PrivacyModel], **options: Any) -> Node:
    """The node the algorithm publishes."""
    return search_lattice(table, models, **options).chosen


def generalization_sequence(table: Table, metric: str = "loss") -> list[Node]:
    """Every lattice node in ascending ``metric`` (no suppression), ties lexicographic.

    This is the ordered list of generalization functions ``g_1, g_2, ...`` of paper 002
    (spec ``exclusive.md`` 2.2) and Zhang's phase 1 (spec ``minimality.md`` 3.6 item 3): the
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
        per = lat.column_loss_numerators()
        lcm = lat._loss_lcm
        mult = [lcm // (c.base - 1) if c.base > 1 else 0 for c in lat.columns]
        tables = [[s * m for s in col] for col, m in zip(per, mult, strict=True)]
        keys = [sum(tables[j][lvl] for j, lvl in enumerate(row)) for row in levels.tolist()]
    else:
        keys = []
        for i in range(lat.size):
            sizes = lat.partition(lat.node(i)).sizes.astype(np.int64)
            keys.append(int(np.dot(sizes, sizes)))
    order = sorted(range(lat.size), key=lambda i: (keys[i], i))
    return [lat.node(i) for i in order]


# -- the release ----------------------------------------------------------------------------------
def full_domain_cells(
    table: Table, partition: Partition, levels: Node, suppressed_group: int = -1
) -> pd.DataFrame:
    """Each group's cells at ``levels``: the label of its node at the chosen level of every QI
    (``suppressed_group``, -1 if none, publishes every QI's root)."""
    first = partition.order()[partition.starts()]
    data = {}
    for j, col in enumerate(table.qi_columns):
        h = col.hierarchy
        assert h is not None
        cells = np.asarray(h.labels[levels[j]], dtype=object)[col.leaves(table.qi[first, j])]
        if suppressed_group >= 0:
            cells[suppressed_group] = h.labels[h.height][0]
        data[col.name] = pd.array(cells.astype(str), dtype="str")
    return pd.DataFrame(data)


def release_at(
    table: Table,
    node: Node | dict[str, int],
    models: list[PrivacyModel] | None = None,
    *,
    suppression: float = 0.0,
    provenance: Provenance | None = None,
) -> Release:
    """The release of ``table`` at one lattice node. With ``models``, rows of groups that
    violate them form the suppressed group (it is not checked here: see
    :func:`search_lattice` for which nodes may be published)."""
    lat = Lattice.of(table)
    node = lat.check_node(node)
    part = lat.partition(node)
    sup_group = -1
    if models:
        ev = _evaluator(table, models, suppression, "loss", "lattice")
        hist = GroupHistogram.from_codes(
            part.group, table.sa, part.n_groups, table.n_sa, ev.sensitive, ev.mode, ev.sa_kind
        )
        bad = ~ev.ok_groups(hist.counts)
        rows = bad[part.group]
        if rows.any():
            labels = part.group.astype(np.int64)
            labels[rows] = -1
            part = Partition.from_labels(labels)
            sup_group = int(part.group[int(np.argmax(rows))])
    return Release(
        table,
        part,
        Scheme.GENERALIZATION,
        table.sa,
        provenance or Provenance("lattice", {"levels": dict(zip(lat.names, node, strict=True))}),
        cells=full_domain_cells(table, part, node, sup_group),
    )


@register(
    "lattice",
    minimal=True,
    summary="full-domain generalization over the hierarchy lattice (Samarati, Incognito): "
    "the minimal satisfying node of least information loss",
    models=tuple(m.__name__ for m in MONOTONE_MODELS),
    options={
        "suppression": "fraction of rows that may be suppressed (default 0); they form one "
        "group with every QI at its root, which must satisfy the models too",
        "metric": "loss (paper 001 Definition 7, default) | discernibility | height",
        "strategy": "two-way (default: bottom-up and top-down tagging) | incognito (bottom-up) "
        "| samarati (binary search on height) | naive (every node); same result but samarati",
    },
)
def lattice(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    suppression: float = 0.0,
    metric: str = "loss",
    strategy: str = "two-way",
) -> Release:
    """Full-domain generalization: publish the minimal lattice node of least ``metric``.

    Accepts the monotone models :data:`MONOTONE_MODELS` (any combination; all must hold).
    Raises :class:`~kerckhoffs.errors.ParameterError` with one line for other models,
    parameters no node can meet, or bad options; a numeric QI without a hierarchy raises
    :class:`~kerckhoffs.errors.SchemaError` naming it. Deterministic: ``seed`` is
    not used. The provenance records the chosen level vector (``levels``), the suppressed
    rows and the metric value.
    """
    found = search_lattice(table, models, suppression=suppression, metric=metric, strategy=strategy)
    lat = found.lattice
    res = found.chosen_result
    params: dict[str, Any] = {"models": [m.to_dict() for m in models]}
    params.update(
        levels=dict(zip(lat.names, found.chosen, strict=True)),
        metric=metric,
        metric_value=res.loss,
        strategy=strategy,
        suppression=float(suppression),
        suppressed_rows=res.violating,
        minimal_nodes=len(found.minimal),
        evaluated_nodes=found.evaluated,
    )
    return release_at(
        table,
        found.chosen,
        models if res.violating else None,
        suppression=suppression,
        provenance=Provenance("lattice", params),
    )


__all__ = [
    "METRICS",
    "MONOTONE_MODELS",
    "STRATEGIES",
    "Lattice",
    "LatticeSearch",
    "NodeResult",
    "chosen_node",
    "full_domain_cells",
    "generalization_sequence",
    "information_loss",
    "lattice",
    "minimal_nodes",
    "release_at",
    "search_lattice",
    "visiting_order",
]
