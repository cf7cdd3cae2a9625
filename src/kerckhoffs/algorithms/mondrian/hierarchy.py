"""Mondrian with categorical QIs cut along their hierarchy (``categorical_cuts="hierarchy"``).

The default engine (:func:`kerckhoffs.algorithms.mondrian.partition.mondrian_groups`) cuts a
categorical QI like a numeric one, at the median of its hierarchy-ordered codes, and a group
publishes the lowest common hierarchy node of its codes. Two groups can then publish the same
or nested categorical cells (a cut inside the children of a node leaves both halves under that
node), so a person's published cell does not tell which group holds them. LeFevre, DeWitt and
Ramakrishnan's Mondrian (2006, section 4, categorical attributes) and paper 004's
locatability assumption cut a categorical QI *along the hierarchy*: a group whose values lie
under the node ``v`` (their lowest common ancestor) is split into one part per child of ``v``
that holds rows, so every part publishes a node at or below a different child and the
published cells of the final groups never overlap.

Rules. The dimensions are tried in order of decreasing normalized range, ties to the lower
column index, as in the default engine; a categorical QI's range here is the number of leaves
under the group's lowest common node, less one, over the number of leaves less one (what the
group would publish). Numeric QIs are cut at the median exactly as the default engine does
(``median``, ``cuts``). A hierarchy split is allowed when every part passes the cut rule as the
left half against the rest of the group; for the monotone models the rules implement (k,
frequency, entropy and look-ahead l-diversity, t-closeness: a union of parts that satisfy
them satisfies them) that is the same as every part satisfying the model. The first allowed
dimension is taken; a group with none is published whole.

Speed: a loop over groups (not rows), each step a few numpy calls over the group's rows (one
min/max over all QIs; LCA levels from a leaf-pair table; SA histograms only for rules that read
them). Census stand-in subset of 37.6k rows, k = 5: 0.46 s against 1.2 s before those three
changes in the same run, still several times slower than the level-wise default engine,
which is fine for the experiments that compare the two cut rules (paper 004 Figs 1-2, paper
000 Fig. 10).
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.algorithms.mondrian.cuts import CUTS, MEDIANS, CutRule, CutStats, as_rule
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.histogram import BoundedCount
from kerckhoffs.release import Partition

CATEGORICAL_CUTS = ("values", "median", "hierarchy")


def hierarchy_cut_groups(
    table: Table,
    rule: object,
    *,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> np.ndarray:
    """Group id per row of Mondrian's partition of ``table`` under the cut ``rule``, with
    categorical QIs split into their hierarchy children (module docstring). Group ids are in
    order of first appearance in the rows."""
    if median not in MEDIANS:
        raise ParameterError(f"mondrian: median must be one of {', '.join(MEDIANS)}")
    if cuts not in CUTS:
        raise ParameterError(f"mondrian: cuts must be one of {', '.join(CUTS)}")
    if sa_log is not None:
        raise ParameterError(
            "mondrian: categorical_cuts='hierarchy' does not record SA reads (an information-flow "
            "audit runs the default cuts)"
        )
    cutter = _HierarchyCuts(table, as_rule(rule), median, cuts)  # type: ignore[arg-type]
    out = np.full(table.n, -1, dtype=np.int64)
    next_id = 0
    stack = [np.arange(table.n)]
    while stack:
        rows = stack.pop()
        parts = cutter.first_allowed_cut(rows)
        if parts is None:
            out[rows] = next_id
            next_id += 1
        else:
            stack.extend(reversed(parts))
    return Partition.from_labels(out).group


class _HierarchyCuts:
    """The cuts of one run of :func:`hierarchy_cut_groups`: per hierarchical column the leaf
    of each code, the LCA level of each pair of leaves and the leaves a node covers (by level,
    by node id), looked up with Python ints per group."""

    def __init__(self, table: Table, rule: CutRule, median: str, cuts: str) -> None:
        self.table, self.rule, self.median, self.cuts = table, rule, median, cuts
        self.n_sa = max(table.n_sa, 1)
        self.qi, self.sa = table.qi, table.sa
        cols = self.cols = table.qi_columns
        self.widths = np.array([max(c.size - 1, 0) for c in cols], dtype=np.float64)
        self.leaf_width = np.array(
            [max(len(c.hierarchy.leaves) - 1, 0) if c.hierarchy is not None else 0 for c in cols],
            dtype=np.float64,
        )
        hier = [c.kind == Kind.CATEGORICAL and c.hierarchy is not None for c in cols]
        self.leaf_of = {
            j: cols[j].leaves(np.arange(cols[j].size)) for j in range(len(cols)) if hier[j]
        }
        self.lca = {j: _LcaLevel(self.hierarchy(j)) for j in self.leaf_of}
        self.cover = {
            j: [h.coverage(lv) for lv in range(h.height + 1)]
            for j, h in ((j, self.hierarchy(j)) for j in self.leaf_of)
        }
        self.reads_sa = rule.reads_group_sa or rule.reads_halves_sa or rule.reads_halves_hist
        self.bounded = BoundedCount.of(table.sensitive, table.schema.sensitive_mode)

    def hierarchy(self, j: int) -> Hierarchy:
        """The hierarchy of hierarchical column ``j``."""
        h = self.cols[j].hierarchy
        if h is None:
            raise InternalError(f"mondrian: column {j} has no hierarchy to cut along")
        return h

    def first_allowed_cut(self, rows: np.ndarray) -> list[np.ndarray] | None:
        """The parts of ``rows`` by the first allowed dimension in order of decreasing
        normalized range (ties: lower column index), or None (published whole)."""
        norm, lo, hi = self.spans(rows)
        for j in np.argsort(-norm, kind="stable").tolist():
            if norm[j] <= 0:
                break
            if j in self.leaf_of:
                parts = self.hierarchy_cut(rows, j, int(lo[j]), int(hi[j]))
            else:
                parts = self.numeric_cut(rows, j)
            if parts is None:
                continue
            if bool(np.all(self.rule.allowed(self.stats_for(rows, parts)))):
                return parts
        return None

    def stats_for(self, rows: np.ndarray, parts: list[np.ndarray]) -> CutStats:
        """Each part as the left half against the rest of ``rows``; the SA statistics only
        when the rule reads them (a k-anonymity cut never touches the SA)."""
        size = np.full(len(parts), rows.size, dtype=np.int64)
        left_size = np.array([p.size for p in parts], dtype=np.int64)
        if not self.reads_sa:
            return CutStats(size, left_size)
        sa, n_sa = self.sa, self.n_sa
        whole = np.bincount(sa[rows], minlength=n_sa)
        left = np.stack([np.bincount(sa[p], minlength=n_sa) for p in parts])
        right = whole[None, :] - left
        return CutStats(
            size,
            left_size,
            np.repeat(self.bounded.of_histograms(whole[None, :]), len(parts)),
            self.bounded.of_histograms(left),
            self.bounded.of_histograms(right),
            left,
            right,
        )

    def numeric_cut(self, rows: np.ndarray, j: int) -> list[np.ndarray] | None:
        """``rows`` cut at the median of column ``j``, as the default engine cuts."""
        codes = self.qi[rows, j]
        order = np.argsort(codes, kind="stable")  # rows are in row-id order: ties by row id
        m = rows.size
        if self.cuts == "relaxed":
            n_left = (m + 1) // 2 if self.median == "lower" else m // 2
        else:
            s = codes[order]
            if self.median == "lower":
                n_left = int(np.searchsorted(s, s[(m + 1) // 2 - 1], side="right"))
            else:
                n_left = int(np.searchsorted(s, s[m // 2], side="left"))
        if n_left <= 0 or n_left >= m:
            return None
        is_left = np.zeros(m, dtype=bool)
        is_left[order[:n_left]] = True
        return [rows[is_left], rows[~is_left]]

    def hierarchy_cut(self, rows: np.ndarray, j: int, lo: int, hi: int) -> list[np.ndarray] | None:
        """Split ``rows`` into the children of the LCA of their leaves on column ``j`` (``lo``,
        ``hi``: the rows' lowest and highest leaf)."""
        h = self.hierarchy(j)
        level = self.lca[j][lo, hi]
        child = h.node_ids[level - 1][self.leaf_of[j][self.qi[rows, j]]]
        first = int(h.node_ids[level - 1][lo])
        counts = np.bincount(child - first)
        if np.count_nonzero(counts) < 2:  # pragma: no cover - the LCA has leaves under two children
            return None
        order = np.argsort(child, kind="stable")
        bounds = np.cumsum(counts[counts > 0])[:-1]
        return list(np.split(rows[order], bounds))

    def spans(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each QI's normalized range over ``rows``, and its lowest and highest code (for
        hierarchical columns, leaf)."""
        codes = self.qi[rows]
        lo, hi = codes.min(axis=0), codes.max(axis=0)
        norm = np.zeros(self.table.d)
        for j in np.flatnonzero(lo < hi).tolist():
            if j in self.leaf_of:
                a, b = int(self.leaf_of[j][lo[j]]), int(self.leaf_of[j][hi[j]])
                lo[j], hi[j] = a, b
                if self.leaf_width[j] > 0:
                    level = self.lca[j][a, b]
                    node = self.hierarchy(j).node_ids[level][a]
                    covered = int(self.cover[j][level][node])
                    norm[j] = (covered - 1) / self.leaf_width[j]
            elif self.widths[j] > 0:
                norm[j] = (hi[j] - lo[j]) / self.widths[j]
        return norm, lo, hi


class _LcaLevel:
    """``lca[a, b]``: the level of the lowest common ancestor of leaves ``a`` and ``b``, from a
    table of every pair when the hierarchy has at most :data:`LCA_TABLE_LEAVES` leaves."""

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self.table: np.ndarray | None = None
        n = len(h)
        if n <= LCA_TABLE_LEAVES:
            a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
            self.table = h.lca_level(a.ravel(), b.ravel()).reshape(n, n)

    def __getitem__(self, pair: tuple[int, int]) -> int:
        if self.table is not None:
            return int(self.table[pair])
        return int(self.h.lca_level(np.array([pair[0]]), np.array([pair[1]]))[0])


LCA_TABLE_LEAVES = 2048
"""Largest hierarchy whose leaf-pair LCA table is built (2048^2 int32 = 16 MB)."""


__all__: list[str] = ["CATEGORICAL_CUTS", "hierarchy_cut_groups"]
