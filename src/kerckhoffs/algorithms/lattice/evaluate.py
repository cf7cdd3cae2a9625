"""Judging one lattice node: frequency sets, grouping and the privacy models' verdict.

**Node evaluation.** Each row's code is mapped to its node id at the node's level; rows with
equal node-id vectors form a group; the per-group SA histogram is one ``bincount`` and the
privacy models read it (:mod:`kerckhoffs.models`). The search does this on *frequency sets*
rather than rows: the table's distinct (node vector, SA) cells with their counts, computed
once, or better the frequency set of an evaluated node below (a child, one level lower on one
QI: Incognito's "rollup", LeFevre et al. 2005 section 3), mapped up to the node's levels and
re-aggregated with the same code (:class:`Evaluator`). A top-down layer has no evaluated node
below it; it rolls up from an *anchor*, the frequency set of the meet of its nodes, computed
once (:meth:`Evaluator.prepare`). Any source below the node gives the same groups (only their
numbering differs), so the verdict, group count, violating rows and loss do not depend on it.
:func:`~kerckhoffs.algorithms.lattice.search.evaluate_node` runs it on the rows themselves (one
cell per row), the reference the tests compare against.

**Cost per node** (``docs/theory/choices.md#performance``): a node's groups come from a mixed-radix
key over the QIs that are not at their root (a QI at its root maps every cell to node 0 and is
skipped), ranked densely when its domain is small, else hashed; one ``bincount`` gives the
histogram. Rolled up from a frequency set, the key is a sum over those QIs of ``W_j[c_j]``, with
``W_j`` the QI's map from the source's level to the node's times the product of the later radixes
(a table of a few entries): one gather and one add per QI, and the cells' node ids at the node
are gathered only if something reads them (a kept frequency set, an anchor). The loss of a node
that suppresses nothing is not computed from its groups at all: every row is published at the
node's levels, so paper 001's Definition 7 sum over groups is the sum over rows, a per-QI,
per-level constant (:meth:`.LossScale.node_key`). Group columns (for a kept frequency set, or the
loss with suppressed rows) are gathered from one cell per group.

**Monotone models (generalization property, ``docs/theory/minimality.md#minimality-principle``).**
If a node satisfies the model, so does every generalization of it, because a generalization only
*merges* groups and each accepted model survives merging two satisfying groups ``A`` and ``B``:

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
pruning of the search sound.

**Suppression** (``suppression=f``, a fraction of the rows, default 0): a node may leave up to
``floor(f * |T|)`` rows in groups that violate a model; those rows are *suppressed* and form
one group of their own, which must satisfy the models too (:meth:`Evaluator.evaluate`; the
package docstring says why and what it does to monotonicity).

**Feasibility.** The top node (the whole table as one group) is checked first
(:func:`check_feasible`): if it fails a model, no node can satisfy it (the union of satisfying
groups satisfies a monotone model, and the suppressed group is one more such group), and a
one-line :class:`~kerckhoffs.errors.ParameterError` names the model.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.registry import refuse_others
from kerckhoffs.data.lattice import Lattice, Node
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.metrics.lattice_loss import METRICS, LossScale
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity, EntropyLDiversity, LDiversity
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.release import Partition
from kerckhoffs.tolerance import TOLERANCE

MONOTONE_MODELS: tuple[type[PrivacyModel], ...] = (
    KAnonymity,
    LDiversity,
    DistinctLDiversity,
    EntropyLDiversity,
    AlphaKAnonymity,
    MConfidentiality,
)
"""The models the lattice search accepts: monotone under generalization (module docstring)."""


@dataclass(frozen=True, eq=False)
class FrequencySet:
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
class SAPairs:
    """A grouping's distinct (group, SA) pairs, when a dense (group x SA) histogram would be
    much larger than the cells: ``cell`` one cell of each pair, ``gid``/``sa`` its group and
    SA value, ``count`` its rows."""

    cell: np.ndarray
    gid: np.ndarray
    sa: np.ndarray
    count: np.ndarray


@dataclass(frozen=True, eq=False)
class Grouped:
    """A source's cells grouped at ``node``: ``gid`` per cell, ``hist`` [groups, n_sa].

    On the dense path the group ids are not needed to judge the node (the histogram comes
    from one ``bincount`` of the keys), so they are kept as ``key`` and ``present`` (which key
    values occur) and ranked only when read (a kept frequency set, the loss with suppressed
    rows): groups are numbered by ascending key either way. With ``pairs`` (many groups, a
    wide SA, models that read only group sizes and distinct SA values) the histogram is not
    built unless something reads it."""

    node: Node
    made: tuple[np.ndarray, ...] | Callable[[], tuple[np.ndarray, ...]]
    ids: np.ndarray | None
    dense: np.ndarray | None
    key: np.ndarray | None = None
    present: np.ndarray | None = None
    pairs: SAPairs | None = None
    n_groups: int = 0
    n_sa: int = 1

    @cached_property
    def cols(self) -> tuple[np.ndarray, ...]:
        """Each cell's node id on each QI. Gathered when first read (``made`` a function):
        judging a node needs only its group key, and most judged nodes are never kept."""
        made = self.made
        return made() if callable(made) else made

    @cached_property
    def hist(self) -> np.ndarray:
        """The (group x SA) histogram."""
        if self.dense is not None:
            return self.dense
        assert self.pairs is not None
        p = self.pairs
        flat = np.zeros(self.n_groups * self.n_sa, dtype=np.int64)
        flat[p.gid * self.n_sa + p.sa] = p.count
        return flat.reshape(self.n_groups, self.n_sa)

    @cached_property
    def gid(self) -> np.ndarray:
        """Each cell's group (0 .. groups - 1)."""
        if self.ids is not None:
            return self.ids
        assert self.key is not None and self.present is not None
        rank = np.cumsum(self.present, dtype=np.int64)
        return rank[self.key] - 1

    @cached_property
    def sizes(self) -> np.ndarray:
        if self.pairs is not None:
            p = self.pairs
            return np.bincount(p.gid, weights=p.count, minlength=self.n_groups).astype(np.int64)
        return self.hist.sum(axis=1)

    @cached_property
    def distinct(self) -> np.ndarray:
        """Distinct SA values per group."""
        if self.pairs is not None:
            return np.bincount(self.pairs.gid, minlength=self.n_groups)
        return np.count_nonzero(self.hist, axis=1)

    @property
    def cells(self) -> int:
        """Cells of the node's frequency set (non-empty (group, SA) pairs)."""
        if self.pairs is not None:
            return int(self.pairs.cell.size)
        return int(np.count_nonzero(self.hist))

    def sa_counts(self, groups: np.ndarray) -> np.ndarray:
        """The SA histogram of the union of ``groups`` (bool per group), shape [1, n_sa]."""
        if self.pairs is not None:
            p = self.pairs
            pick = groups[p.gid]
            counts = np.bincount(p.sa[pick], weights=p.count[pick], minlength=self.n_sa)
            return counts.astype(np.int64).reshape(1, -1)
        return self.hist[groups].sum(axis=0, keepdims=True)

    @cached_property
    def first(self) -> np.ndarray:
        """One cell of each group (all cells of a group share its node ids): one scatter of
        the cells instead of one per QI, then gathers of the (few) groups."""
        out = np.empty(self.sizes.size, dtype=np.int64)
        out[self.gid] = np.arange(self.gid.size, dtype=np.int64)
        return out

    def group_cols(self) -> tuple[np.ndarray, ...]:
        """Each group's node id on each QI."""
        first = self.first
        return tuple(c[first] for c in self.cols)

    def freq(self) -> FrequencySet:
        """The node's own frequency set (its non-empty (group, SA) cells)."""
        if self.pairs is not None:
            p = self.pairs
            return FrequencySet(
                self.node, tuple(c[p.cell] for c in self.cols), p.sa.astype(np.int32), p.count
            )
        flat = self.hist.reshape(-1)
        nz = np.flatnonzero(flat)  # row-major: by group, then SA (as np.nonzero, one array)
        g_nz, s_nz = np.divmod(nz, self.hist.shape[1])
        cell = self.first[g_nz]
        return FrequencySet(
            self.node,
            tuple(c[cell] for c in self.cols),
            s_nz.astype(np.int32),
            flat[nz],
        )


CACHE_CELLS = 4_000_000
"""Most cells the search keeps in frequency sets of evaluated nodes (beyond the table's)."""
KEY_LIMIT = 2**62
"""Group keys are mixed-radix int64 below this domain size, else rows are factorized."""
ANCHOR_SHARE = 0.5
"""An anchor (:meth:`Evaluator.prepare`) is kept if it has fewer cells than this share of the
frequency set it is computed from."""
MAX_ANCHORS = 4
"""Most anchors kept at once (the most recent ones)."""
DENSE_FACTOR, DENSE_SLACK = 4, 4096
"""A key domain up to ``DENSE_FACTOR * cells + DENSE_SLACK`` is ranked densely (no hashing)."""
SPARSE_FACTOR = 2
"""A (group x SA) histogram of more than ``SPARSE_FACTOR * cells`` entries is replaced by the
distinct (group, SA) pairs when the models read only group sizes and distinct SA values (on
Census-Income with 47 occupations the bottom node's histogram has 2.6M entries for 100,280
cells)."""
PAIR_MODELS = (KAnonymity, DistinctLDiversity)
"""Models judged from (group, SA) pairs: group sizes and distinct SA values per group."""


class Evaluator:
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
        self.loss = LossScale(lattice)
        self.sensitive = np.asarray(t.sensitive, dtype=bool)
        self.mode = t.schema.sensitive_mode
        self.sa_kind = t.sa_column.kind
        # k-anonymity alone reads group sizes only: cells are the distinct QI vectors, the SA
        # left out (one SA value), so frequency sets hold up to n_sa times fewer cells
        self.sa_blind = all(type(m) is KAnonymity for m in models)
        self.n_sa = 1 if self.sa_blind else t.n_sa
        self.sparse_ok = self.n_sa > 1 and all(type(m) in PAIR_MODELS for m in models)
        self.keys: dict[int, int] = {}  # node index -> exact metric key (satisfying nodes)
        self.kept: dict[int, FrequencySet] = {}
        self.anchors: dict[int, FrequencySet] = {}  # node index -> frequency set
        self._strides = lattice.strides.tolist()
        self._radix = [[cov.size for cov in c.coverage] for c in lattice.columns]
        # k-anonymity alone: a group is good when it has k rows (no histogram read)
        self._k = models[0].k if len(models) == 1 and type(models[0]) is KAnonymity else 0
        self._kept_cells = 0
        self._kept_height = 0
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self._weights: dict[tuple[int, int, int, int], np.ndarray] = {}
        self._base_cols: dict[tuple[int, int], np.ndarray] = {}
        self.rows = FrequencySet(
            (0,) * t.d,
            tuple(
                _leaf_nodes(c.node_of_code[0], t.qi[:, j]) for j, c in enumerate(lattice.columns)
            ),
            np.zeros(t.n, dtype=np.int32) if self.sa_blind else t.sa,
            None,
        )
        self.base = self._distinct_cells(self.rows)
        self.evaluations = 0

    def _distinct_cells(self, rows: FrequencySet) -> FrequencySet:
        """The table's frequency set: its distinct (leaf vector, SA) cells and their counts.

        One key per row over the QIs *and* the SA, ranked (densely when its domain is small,
        else factorized), one ``bincount`` of the ranks: no (group x SA) histogram, which on a
        table of many distinct QI vectors and a wide SA (Census-Income: 100,280 vectors, 47
        occupations) is tens of times larger than the cells it holds."""
        radix = [c.coverage[0].size for c in self.lattice.columns]
        domain = math.prod(radix) * self.n_sa
        if domain >= KEY_LIMIT:  # too wide for an int64 key: group, then read off the cells
            return self._group(rows, (0,) * len(radix)).freq()
        m = rows.size
        key = np.zeros(m, dtype=np.int64)
        for c, r in zip(rows.cols, radix, strict=True):
            if r > 1:
                key *= r
                key += c
        if self.n_sa > 1:
            key *= self.n_sa
            key += rows.sa
        cell, cells = _rank(key, domain)
        count = np.bincount(cell, minlength=cells)
        one = np.empty(cells, dtype=np.int64)
        one[cell] = np.arange(m, dtype=np.int64)  # a row of each cell (all share its values)
        return FrequencySet(
            rows.levels, tuple(c[one] for c in rows.cols), rows.sa[one].astype(np.int32), count
        )

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

    def _group(self, src: FrequencySet, node: Node) -> Grouped:
        """Group ``src``'s cells at ``node``: group id per cell and per-group SA histogram."""
        sizes = self._radix
        radix = [sizes[j][lvl] for j, lvl in enumerate(node)]
        cols: tuple[np.ndarray, ...] | Callable[[], tuple[np.ndarray, ...]]
        if src is getattr(self, "base", None):
            # a QI at its root (one node) maps every cell to node 0: no gather needed
            zero = np.zeros(src.size if 1 in radix else 0, dtype=np.int32)
            cols = tuple(
                zero if r == 1 else self._base_col(j, lvl)
                for j, (lvl, r) in enumerate(zip(node, radix, strict=True))
            )
        else:  # the node ids are gathered only if read; the key needs one gather per QI
            cols = functools.partial(self._rolled_up, src, node, radix)
        domain = math.prod(radix)
        m = src.size
        if self.sa_blind and src.count is not None and src.levels == node:
            # without the SA a frequency set's cells are distinct QI vectors: each its own group
            # (numbered as factorizing them would, in order of appearance)
            hist = src.count.astype(np.int64).reshape(m, 1)
            return Grouped(node, cols, np.arange(m, dtype=np.int64), hist)
        if domain < KEY_LIMIT:
            if callable(cols):
                key = self._weighted_key(src, node, radix)
            else:
                key = _mixed_radix(cols, radix, m)
            if domain * self.n_sa <= DENSE_FACTOR * m + DENSE_SLACK:
                # one bincount over (key, SA) gives the histogram; groups ranked when read
                flat = key * self.n_sa + src.sa if self.n_sa > 1 else key
                per_key = np.bincount(flat, weights=src.weights, minlength=domain * self.n_sa)
                per_key = per_key.astype(np.int64).reshape(domain, self.n_sa)
                present = np.asarray(per_key.any(axis=1) if self.n_sa > 1 else per_key[:, 0] > 0)
                return Grouped(node, cols, None, per_key[present], key, present)
            gid, n_groups = _rank(key, domain)
        else:
            cols = cols() if callable(cols) else cols
            gid = Partition.from_columns(np.stack(cols, axis=1)).group
            n_groups = int(gid.max()) + 1
        gid = gid.astype(np.int64, copy=False)
        if self.sparse_ok and n_groups * self.n_sa > SPARSE_FACTOR * m:
            return self._pairs(src, node, cols, gid, n_groups)
        flat = gid * self.n_sa + src.sa
        counts = np.bincount(flat, weights=src.weights, minlength=n_groups * self.n_sa)
        return Grouped(node, cols, gid, counts.astype(np.int64).reshape(n_groups, self.n_sa))

    def _rolled_up(self, src: FrequencySet, node: Node, radix: list[int]) -> tuple[np.ndarray, ...]:
        """``src``'s cells' node ids at ``node``'s levels (a QI at its root: all node 0)."""
        zero = np.zeros(src.size if 1 in radix else 0, dtype=np.int32)
        return tuple(
            c if a == b else (zero if r == 1 else self._map(j, a, b)[c])
            for j, (c, a, b, r) in enumerate(zip(src.cols, src.levels, node, radix, strict=True))
        )

    def _weighted_key(self, src: FrequencySet, node: Node, radix: list[int]) -> np.ndarray:
        """:func:`_mixed_radix` of ``src``'s cells at ``node``, as a sum over the QIs of
        ``W_j[c_j]``, ``W_j`` QI ``j``'s map from the source's level to the node's times the
        product of the later radixes (a table of a few entries): one gather and one add per
        QI over the cells, no multiply and no node-id column."""
        key = None
        mult = 1
        for j in range(len(radix) - 1, -1, -1):
            r = radix[j]
            if r == 1:
                continue
            a, b = src.levels[j], node[j]
            w_key = (j, a, b, mult)
            w = self._weights.get(w_key)
            if w is None:
                ids = np.arange(r, dtype=np.int64) if a == b else self._map(j, a, b)
                w = self._weights[w_key] = ids.astype(np.int64) * mult
            if key is None:
                key = w[src.cols[j]]
            else:
                key += w[src.cols[j]]
            mult *= r
        return np.zeros(src.size, dtype=np.int64) if key is None else key

    def _pairs(
        self,
        src: FrequencySet,
        node: Node,
        cols: tuple[np.ndarray, ...] | Callable[[], tuple[np.ndarray, ...]],
        gid: np.ndarray,
        n_groups: int,
    ) -> Grouped:
        """Grouped with its distinct (group, SA) pairs instead of the dense histogram. A
        frequency set judged at its own levels already holds distinct pairs (one per cell)."""
        m = src.size
        if src.count is not None and src.levels == node:
            cell = np.arange(m, dtype=np.int64)
            count = src.count.astype(np.int64, copy=False)
        else:
            pair, uniq = pd.factorize(gid * self.n_sa + src.sa, sort=False)
            cell = np.empty(len(uniq), dtype=np.int64)
            cell[pair] = np.arange(m, dtype=np.int64)
            count = np.bincount(pair, weights=src.weights, minlength=len(uniq)).astype(np.int64)
        pairs = SAPairs(cell, gid[cell], src.sa[cell], count)
        return Grouped(node, cols, gid, None, pairs=pairs, n_groups=n_groups, n_sa=self.n_sa)

    def _base_col(self, j: int, level: int) -> np.ndarray:
        """The table's cells' node ids on QI ``j`` at ``level`` (computed once, int64)."""
        key = (j, level)
        if key not in self._base_cols:
            c = self.base.cols[j]
            c = c if level == 0 else self._map(j, 0, level)[c]
            self._base_cols[key] = c.astype(np.int64)  # adds to the int64 key without casts
        return self._base_cols[key]

    def _source(self, index: int) -> FrequencySet:
        """The smallest kept frequency set at a node below ``index`` (else the table's):
        a kept child if there is one, else an anchor below, else any kept node below (kept
        nodes all have one height, so only a node at least two heights above them needs that
        scan)."""
        best = self.base
        node = self.lattice.node(index)
        for j, stride in enumerate(self._strides):
            f = self.kept.get(index - stride) if node[j] > 0 else None
            if f is not None and f.size < best.size:
                best = f
        for f in self.anchors.values():
            if f.size < best.size and all(a <= b for a, b in zip(f.levels, node, strict=True)):
                best = f
        if best is self.base and self.kept and sum(node) >= self._kept_height + 2:
            ids = np.fromiter(self.kept, dtype=np.int64, count=len(self.kept))
            below = (self.lattice.levels[ids] <= self.lattice.levels[index]).all(axis=1)
            for i in ids[below].tolist():
                f = self.kept[i]
                if f.size < best.size:
                    best = f
        return best

    def prepare(self, indices: list[int]) -> None:
        """Before evaluating ``indices`` (a top-down layer, which has no evaluated node below
        it to roll up from): compute the frequency set of their meet (every QI at the least
        level among them, a node below each of them) once, from the smallest source below
        it, and keep it as an *anchor* they roll up from, if it has fewer than
        ``ANCHOR_SHARE`` of that source's cells. Near the top of the lattice the meet's
        frequency set has a few thousand cells where the table's has tens of thousands (on
        ARX's Adult with k = 5, 94 of the 111 nodes evaluated roll up from an anchor)."""
        if len(indices) < 2:
            return
        lat = self.lattice
        meet = lat.levels[np.asarray(indices, dtype=np.int64)].min(axis=0)
        z = int(np.dot(meet, lat.strides))
        node = lat.node(z)
        if z in self.anchors:
            return
        src = self._source(z)
        if src.levels == node:
            return
        grouped = self._group(src, node)
        cells = grouped.cells
        if cells >= ANCHOR_SHARE * src.size or self._kept_cells + cells > CACHE_CELLS:
            return
        freq = grouped.freq()
        self.anchors[z] = freq
        self._kept_cells += freq.size
        if len(self.anchors) > MAX_ANCHORS:
            self._kept_cells -= self.anchors.pop(next(iter(self.anchors))).size

    def release_anchors(self) -> None:
        """Drop the anchors (end of a search)."""
        for f in self.anchors.values():
            self._kept_cells -= f.size
        self.anchors.clear()

    def keep(self, index: int, grouped: Grouped) -> None:
        """Keep a node's frequency set as a source for nodes above it, if it is much smaller
        than the table's and within the budget (the caller keeps one height at a time)."""
        cells = grouped.cells
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
        if sizes is None:
            sizes = counts.sum(axis=1)
        hist: GroupHistogram | None = None
        ok = np.ones(counts.shape[0], dtype=bool)
        for m in self.models:
            if type(m) is KAnonymity:  # its group_ok, without the rest of its report
                ok &= sizes >= m.k
                continue
            if hist is None:
                hist = GroupHistogram(
                    counts, self.sensitive, self.mode, self.sa_kind, {"sizes": sizes}
                )
            ok &= m.evaluate(hist).group_ok
        return ok

    def ok_pairs(self, grouped: Grouped) -> np.ndarray:
        """:meth:`ok_groups` for a grouping kept as (group, SA) pairs (``PAIR_MODELS`` only):
        k-anonymity reads the group sizes, distinct l-diversity the distinct SA values."""
        ok = np.ones(grouped.n_groups, dtype=bool)
        for m in self.models:
            if type(m) is KAnonymity:
                ok &= grouped.sizes >= m.k
            else:
                assert isinstance(m, DistinctLDiversity)
                ok &= grouped.distinct >= m.l
        return ok

    def evaluate(self, index: int, src: FrequencySet | None = None) -> tuple[NodeResult, Grouped]:
        """Judge node ``index`` (with suppression) and compute its metric if it satisfies."""
        lat = self.lattice
        node = lat.node(index)
        grouped = self._group(src or self._source(index), node)
        sizes = grouped.sizes
        self.evaluations += 1
        if self._k:
            ok = sizes >= self._k
        elif grouped.pairs is not None:
            ok = self.ok_pairs(grouped)
        else:
            ok = self.ok_groups(grouped.hist, sizes)
        violating = int(sizes[~ok].sum())
        if violating == 0:
            satisfied = True
        elif violating > self.limit:
            satisfied = False
        else:
            satisfied = bool(self.ok_groups(grouped.sa_counts(~ok))[0])
        loss = math.nan
        if satisfied:
            if self.metric == "loss":
                if violating == 0:  # every row kept: the loss is the table's at these levels
                    key = self.loss.node_key(node)
                else:
                    kept = np.where(ok, sizes, 0)
                    numerators = self.loss.numerators(grouped.group_cols(), kept, node)
                    key = self.loss.key(numerators, violating)
                loss = self.loss.value(key)
            elif self.metric == "discernibility":
                key = int(np.dot(sizes[ok], sizes[ok])) + violating * lat.table.n
                loss = float(key)
            else:
                key = sum(node)
                loss = float(key)
            self.keys[index] = key
        return NodeResult(node, satisfied, True, int(sizes.size), violating, loss), grouped


def _mixed_radix(cols: tuple[np.ndarray, ...], radix: list[int], m: int) -> np.ndarray:
    """The int64 key ``(...(c_1 * r_2 + c_2) * r_3 + ...)`` of ``m`` cells, skipping the QIs
    at a level with one node (their roots: they add nothing)."""
    key = None
    for c, r in zip(cols, radix, strict=True):
        if r > 1:
            if key is None:
                key = c.astype(np.int64)  # a copy: the key is built in place
            else:
                key *= r
                key += c
    return np.zeros(m, dtype=np.int64) if key is None else key


def _rank(key: np.ndarray, domain: int) -> tuple[np.ndarray, int]:
    """Number the distinct values of ``key`` (all in ``[0, domain)``): densely by ascending
    value when the domain is small next to the keys (no hashing), else by first appearance
    (factorized). Returns each key's number and how many there are."""
    if domain <= DENSE_FACTOR * key.size + DENSE_SLACK:
        present = np.zeros(domain, dtype=bool)
        present[key] = True
        rank = np.cumsum(present, dtype=np.int64)
        return rank[key] - 1, int(rank[-1])
    ids, uniq = pd.factorize(key, sort=False)
    return ids, len(uniq)


def _leaf_nodes(node_of_code: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The level-0 node ids of ``codes`` (the codes themselves when the map is the identity,
    as for every hierarchy whose leaves are the column's domain in order: no gather)."""
    if np.array_equal(node_of_code, np.arange(node_of_code.size)):
        return codes
    return node_of_code[codes]


def evaluator(
    table: Table, models: list[PrivacyModel], suppression: float, metric: str, name: str
) -> Evaluator:
    """An evaluator of ``table``'s lattice for ``models``, the options validated (one-line
    :class:`~kerckhoffs.errors.ParameterError` naming ``name``, the algorithm, otherwise)."""
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
    limit = math.floor(suppression * table.n + TOLERANCE)
    return Evaluator(Lattice.of(table), list(models), limit, metric)


def check_feasible(ev: Evaluator, name: str) -> None:
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


__all__ = [
    "ANCHOR_SHARE",
    "CACHE_CELLS",
    "DENSE_FACTOR",
    "DENSE_SLACK",
    "KEY_LIMIT",
    "MAX_ANCHORS",
    "MONOTONE_MODELS",
    "Evaluator",
    "FrequencySet",
    "Grouped",
    "NodeResult",
    "check_feasible",
    "evaluator",
]
