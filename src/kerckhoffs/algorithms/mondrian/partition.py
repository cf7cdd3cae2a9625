"""Mondrian's partitioner: the recursion run level by level, every cut decided by counting.

All groups of one depth are cut at once (:mod:`kerckhoffs.algorithms.mondrian.counting` holds
the counting step a level is made of). Rows never need sorting: under strict cuts, rows with
equal QI codes always travel together, so duplicate rows are first folded into weighted units
(the histograms are weighted), which bounds every level's work by the number of distinct rows.
Relaxed cuts send the rows equal to the median left in row order (a stable sort of only those
tie rows). Nothing loops over rows or groups in Python; the loops are over depths, dimensions
and rounds of fallback dimensions. The previous engine, which kept d + 1 sorted orders and split
them stably at each depth, is kept as the reference the partitions are tested against
(``benchmarks/baselines/mondrian_v0.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian import counting
from kerckhoffs.algorithms.mondrian.counting import (
    MedianCuts,
    OtherMedians,
    PairCells,
    allowed_by_counts,
    cut_candidates,
    halves_stats,
    level_histogram,
    median_cuts,
    tie_ranks,
)
from kerckhoffs.algorithms.mondrian.cuts import CUTS, MEDIANS, CutRule, CutStats, as_rule
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.histogram import BoundedCount
from kerckhoffs.randomness import deterministic_stage
from kerckhoffs.release import Partition
from kerckhoffs.segments import exclusive_cumsum, segment_ranges


def _fold_units(qi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Equal rows of ``qi`` (codes ``[n, d]``) collapsed into units
    (:meth:`~kerckhoffs.release.Partition.from_columns`).

    Returns ``(unit of each row, first row of each unit)``, units numbered by first
    appearance, or None when every row is distinct.
    """
    n = qi.shape[0]
    unit: np.ndarray = Partition.from_columns(qi).group
    if int(unit.max()) + 1 == n:
        return None
    unit = unit.astype(np.int64, copy=False)
    # ids come in order of first appearance: a unit starts where the running max grows
    top = np.maximum.accumulate(unit)
    grows = np.empty(n, dtype=bool)
    grows[0] = True
    np.not_equal(top[1:], top[:-1], out=grows[1:])
    del top
    return unit, np.flatnonzero(grows)


class _Units:
    """How rows map to the QI units of the recursion, for the SA-read log (rows)."""

    def __init__(self, row_unit: np.ndarray | None, sa_log: SAReadLog | None) -> None:
        self.row_unit = row_unit
        self.sa_log = sa_log

    def record(self, units: np.ndarray, set_ids: np.ndarray, what: str) -> None:
        """Log an SA read on sets of units (expanded to their rows)."""
        if self.sa_log is None:
            raise InternalError("mondrian: an SA read recorded without a log")
        if self.row_unit is None:
            self.sa_log.record(units, set_ids, what)
            return
        of_unit = np.full(int(self.row_unit.max()) + 1, -1, dtype=np.int64)
        of_unit[units] = set_ids
        of_row = of_unit[self.row_unit]
        rows = np.flatnonzero(of_row >= 0)
        self.sa_log.record(rows, of_row[rows], what)


@deterministic_stage
def mondrian_groups(
    table: Table,
    rule: CutRule | Callable[[CutStats], np.ndarray],
    *,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
    collapse: bool = True,
    start: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    values: bool = False,
) -> np.ndarray:
    """Group id per row of Mondrian's partition of ``table`` under the cut ``rule``.

    The engine behind :func:`mondrian` (and Mondrian+ / MASK, which pass their own rules).
    No precondition is checked here: a table whose root violates the rule's model comes back
    as one group. Group ids are in order of first appearance in the rows.

    How (module docstring; "Mondrian by counting",
    ``docs/theory/choices.md#performance``): the recursion runs level by
    level, and each level is three steps, each a pure function of arrays so that a level can
    be computed on chunks of the table and summed (what a distributed run does):

    1. *histograms* (:func:`level_histogram`): from the codes of the active units and their
       group ids, one ``bincount`` over ``(group, QI, code)`` cells, the QIs' code domains
       side by side (one QI at a time for large inputs), and one over ``group * n_sa + SA``
       when the rule reads the SA;
    2. *cuts* (:func:`median_cuts`, then the rule): from the (summed) histograms, every
       group's normalized ranges, medians and ``|L|``; the rule is evaluated in rounds, round
       ``r`` trying each undecided group's ``r``-th dimension in order of normalized range
       (all candidates of a round in one call: rules are elementwise). When it reads the
       halves' SA, their counts are one more ``bincount`` over the (group, SA) cells of the
       left rows of the round's candidates (the right half is the group minus the left);
    3. *map*: finished groups leave; a split group ``g`` (the ``r``-th split one) sends its
       rows to ``2r`` (left) or ``2r + 1``, the same numbering as the sorted-orders engine of
       earlier versions (``benchmarks/baselines/mondrian_v0.py``), so the partition and the
       ``sa_log`` records are identical to it.

    Units: under strict cuts rows with equal QI codes always stay together, so with
    ``collapse`` (default) they are folded into one weighted QI unit first (one
    ``factorize`` of the folded QI codes), and rows with equal QI and SA codes into one
    weighted SA unit of it; the histograms are then weighted ``bincount`` s and the
    partition is the same (``collapse=False`` runs on rows, for tests). Relaxed cuts split
    rows equal to the median by row id and always run on rows. Memory: a few arrays of the
    active units; a dense histogram is used while it has at most
    ``max(DENSE_BINS, DENSE_BINS_PER_UNIT * keys)`` bins, else its keys are sorted.

    ``sa_log`` (:mod:`~kerckhoffs.algorithms.sa_reads`) records the SA statistics the rule
    reads: ``c(G)`` of every group with a candidate cut (rules reading the group's SA) and
    ``c(L)``, ``c(R)`` of every candidate evaluated (rules reading the halves). Not touched
    when ``None``.

    ``start`` (int, ``0 .. m - 1``, every id used): the group each row is in already; the
    recursion continues from those groups instead of the whole table, each as the in-memory
    recursion would continue it (the decisions of a group read only its own rows). A
    distributed run cuts the top levels on its partitions and finishes the subtrees here
    (:mod:`kerckhoffs.engines.dask_mondrian`).

    ``weights`` (strict cuts only; positive ints): the rows each row stands for. The result is
    the partition of the table with row ``i`` repeated ``weights[i]`` times, one id per row
    (strict cuts never separate equal rows): a distributed run ships a group's distinct rows
    with their counts instead of the rows themselves.

    ``values`` (strict cuts; ``mondrian(categorical_cuts="values")``): a categorical QI's
    normalized range is its group's distinct values over the code domain's width, and its
    cut sends the first ``max(floor(m / 2), 1)`` of its ``m`` distinct codes left; a
    numeric QI is cut at ``median``. When that cut of a dimension is not allowed, the other
    median of its rows (a categorical QI: the median not named by ``median``, a numeric QI
    likewise) is tried before the next dimension. Utility on Adult k = 10 (tool-neutral NCP
    and discernibility, ``benchmarks/bench_mondrian.py``) is that of anonypyx and of the
    hierarchy cuts, at the level-wise engine's speed.
    """
    if median not in MEDIANS:
        raise ParameterError(
            f"mondrian: median must be one of {', '.join(MEDIANS)}, got {median!r}"
        )
    if cuts not in CUTS:
        raise ParameterError(f"mondrian: cuts must be one of {', '.join(CUTS)}, got {cuts!r}")
    if values and cuts != "strict":
        raise ParameterError(
            "mondrian: categorical_cuts='values' needs strict cuts (relaxed cuts split rows "
            "equal to the median; use categorical_cuts='median')"
        )
    if table.n == 0:
        return np.zeros(0, dtype=np.int32)
    run = _Recursion(
        table,
        as_rule(rule),
        lower=median == "lower",
        strict=cuts == "strict",
        sa_log=sa_log,
        weights=weights,
        values=values,
    )
    run.fold(collapse, start)
    run.encode()
    run.sa_units()
    run.begin(start)
    while run.sizes.size and run.level():
        pass
    return run.final_ids()


class _Recursion:
    """The state of one run of :func:`mondrian_groups` and its steps.

    The units: QI units (the recursion's) are rows, or under strict cuts the distinct QI tuples
    with their row counts. SA units (the SA pairs' histograms, rules reading the SA) are the
    distinct (QI unit, SA) pairs with their row counts, ordered by QI unit (``qof``: their QI
    unit; None when they are the QI units themselves). ``uid`` / ``gid`` are the active units
    and their group at this level, ``sizes`` the rows of each group, ``out`` the final id of
    the units whose group is finished.
    """

    row_unit: np.ndarray | None
    first_row: np.ndarray | None
    q_weight: np.ndarray | None
    qof: np.ndarray | None
    sa_u: np.ndarray | None
    ws: np.ndarray | None
    wf: np.ndarray | None
    wf_cols: np.ndarray | None
    key_buffer: np.ndarray | None

    def __init__(
        self,
        table: Table,
        rule: CutRule,
        *,
        lower: bool,
        strict: bool,
        sa_log: SAReadLog | None,
        weights: np.ndarray | None,
        values: bool = False,
    ) -> None:
        self.table, self.rule, self.lower, self.strict = table, rule, lower, strict
        self.values = values
        self.sa_log = sa_log
        self.n, self.d = table.n, table.d
        self.row_weight = None  # the rows each row stands for (None: one)
        if weights is not None:
            if not strict:
                raise ParameterError(
                    "mondrian: weights need strict cuts (relaxed cuts split equal rows by row "
                    "order)"
                )
            self.row_weight = np.asarray(weights, dtype=np.int64)
            if self.row_weight.shape != (self.n,) or (self.row_weight < 1).any():
                raise ParameterError("mondrian: weights need one positive count per row")
        cols = table.qi_columns
        self.widths = np.array([max(c.size - 1, 0) for c in cols], dtype=np.float64)
        self.domains = [max(c.size, 1) for c in cols]
        # candidate cuts per group: one per QI, or (values) two per QI, interleaved
        self.categorical = np.array([c.kind != Kind.NUMERIC for c in cols], dtype=bool)
        self.cand_dim = np.repeat(np.arange(self.d), 2 if values else 1)
        self.need_pairs = rule.reads_group_sa or rule.reads_halves_sa
        self.halves_sa = rule.reads_halves_sa
        self.bounded_count = BoundedCount.of(table.sensitive, table.schema.sensitive_mode)
        self.n_sa = max(table.n_sa, 1)

    # -- set-up --------------------------------------------------------------------------------
    def fold(self, collapse: bool, start: np.ndarray | None) -> None:
        """The QI units: under strict cuts (with ``collapse``) rows with equal QI codes travel
        together, within their starting group, so they are folded into one weighted unit."""
        table = self.table
        self.row_unit = self.first_row = None  # row -> QI unit, QI unit -> its first row
        self.q_weight = self.row_weight
        if collapse and self.strict:
            by_qi = _fold_units(table.qi if start is None else np.column_stack([start, table.qi]))
            if by_qi is not None:
                self.row_unit, self.first_row = by_qi
                q_weight = np.bincount(
                    self.row_unit, weights=self.row_weight, minlength=self.first_row.size
                )
                self.q_weight = q_weight.astype(np.int64)
        self.units = _Units(self.row_unit, self.sa_log)
        self.n_units = self.n if self.first_row is None else self.first_row.size

    def encode(self) -> None:
        """The QIs' cells side by side: QI j's code + ``offsets[j]`` (one histogram for all
        QIs), in a Fortran-ordered array (column j: ``codes[:, j]``)."""
        d, table = self.d, self.table
        qi_cols = [table.qi[:, j] for j in range(d)]
        self.offsets = np.zeros(d, dtype=np.int64)
        np.cumsum(self.domains[:-1], out=self.offsets[1:])
        self.width = int(sum(self.domains))
        self.code_type = np.min_scalar_type(self.width - 1)
        self.codes = np.empty((self.n_units, d), dtype=self.code_type, order="F")
        for j in range(d):
            self.codes[:, j] = qi_cols[j] if self.first_row is None else qi_cols[j][self.first_row]
            self.codes[:, j] += self.code_type.type(self.offsets[j])
        self.wf = None if self.q_weight is None else self.q_weight.astype(np.float64)
        self.by_column = self.n_units * d > counting.COLUMN_KEYS
        self.dim_type: Any = np.int8 if self.cand_dim.size < 127 else np.int32
        self.alive = np.ones(d, dtype=bool)  # QIs with more than one value in some active group
        self.wf_cols, self.wf_cols_n = None, 0  # the weights repeated for the live QIs, how many
        self.key_buffer = np.empty(self.n_units, dtype=np.int64) if self.by_column else None

    def sa_units(self) -> None:
        """The SA units, for rules that read the SA: one per row, per QI unit (one SA value
        each), or per distinct (QI unit, SA) pair."""
        table, n_sa = self.table, self.n_sa
        sa_type = np.min_scalar_type(n_sa - 1)
        self.qof = self.sa_u = self.ws = None  # SA units: QI unit, SA code, rows
        self.s_count = self.s_start = np.zeros(0, dtype=np.int64)  # per QI unit, first one
        if not self.need_pairs:
            return
        if self.row_unit is None or self.first_row is None:
            self.sa_u = table.sa.astype(sa_type)
            return
        pair = level_histogram(self.row_unit, table.sa, self.n_units, n_sa, self.row_weight)
        if pair.key.size == self.n_units:  # one SA value per QI unit
            self.sa_u = table.sa[self.first_row].astype(sa_type)
        else:
            self.qof = pair.key // n_sa
            self.sa_u = (pair.key - self.qof * n_sa).astype(sa_type)
            self.ws = pair.count.astype(np.float64)
            self.s_count = np.bincount(self.qof, minlength=self.n_units)
            self.s_start = exclusive_cumsum(self.s_count)

    def begin(self, start: np.ndarray | None) -> None:
        """Every unit active, in group 0 or in its ``start`` group."""
        n = self.n
        self.uid = np.arange(self.n_units, dtype=np.int64)  # the active units
        self.gid = np.zeros(self.n_units, dtype=np.int64)  # their group at this level
        total = n if self.row_weight is None else self.row_weight.sum()
        self.sizes = np.array([total], dtype=np.int64)  # rows per group
        if start is not None:
            start = np.asarray(start, dtype=np.int64)
            self.gid = start.copy() if self.first_row is None else start[self.first_row]
            self.sizes = np.bincount(start, weights=self.row_weight).astype(np.int64)
            if start.size != n or not self.sizes.all():
                raise ParameterError(
                    "mondrian: start needs a group id per row, every id 0..m-1 used"
                )
        self.out = np.full(self.n_units, -1, dtype=np.int64)
        self.next_id = 0
        self.left_u = np.zeros(self.n_units, dtype=bool)  # whether the unit goes left

    # -- one level -----------------------------------------------------------------------------
    def level(self) -> bool:
        """One level: histograms, candidate cuts, the rule, then the map. False once every
        group is finished."""
        sizes = self.sizes
        n_groups = sizes.size
        every = np.arange(n_groups)
        pairs, bounded = self.pair_cells(n_groups)
        live, first, other = self.medians(n_groups)
        self.alive &= (first.spread > 0).any(axis=0)
        norm, value, ties, cand, n_left = cut_candidates(
            live, first, other, sizes, self.widths, self.offsets, self.categorical, self.lower
        )
        if self.sa_log is not None and self.rule.reads_group_sa:
            has_cand = np.asarray(cand.any(axis=1))
            pos = np.flatnonzero(has_cand[self.gid])
            self.units.record(self.uid[pos], self.gid[pos], "S_max of the group being cut")
        if not self.halves_sa:
            allowed = allowed_by_counts(self.rule, cand, sizes, n_left, bounded)
        else:
            allowed = self.allowed_by_halves(pairs, bounded, cand, norm, n_left, value, ties)
            # a group's last evaluated candidate is its allowed one: left_u holds its halves

        # first allowed dimension in order of decreasing normalized range (ties: lower index)
        best = np.argmax(np.where(allowed, norm, -1.0), axis=1)
        split = allowed[every, best]
        nl_best = n_left[every, best]
        if not self.halves_sa:
            gid = self.gid
            sub = np.arange(gid.size) if split.all() else np.flatnonzero(split[gid])
            best_of = np.where(split, best, -1).astype(self.dim_type)
            self.mark_left(sub, best_of, value[every, best], ties[every, best])
        if not split.all() and not self.drop_finished(split):
            return False
        self.next_level(split, nl_best)
        return True

    def pair_cells(self, n_groups: int) -> tuple[PairCells | None, np.ndarray | None]:
        """The level's (group, SA) cells and every group's bounded count ``c(G)``, for rules
        that read the SA (else None, None)."""
        if not self.need_pairs:
            return None, None
        if self.sa_u is None:
            raise InternalError("mondrian: a rule reading the SA has no SA units")
        n_sa = self.n_sa
        gid_s = self.gid if self.qof is None else np.repeat(self.gid, self.s_count)
        w_s = self.wf if self.qof is None else self.ws
        hist = level_histogram(
            gid_s, self.sa_u, n_groups, n_sa, w_s, unit_cells=self.halves_sa, buffer=self.key_buffer
        )
        first = np.searchsorted(hist.key, np.arange(n_groups) * n_sa)
        count = np.diff(np.append(first, hist.key.size))
        sa = hist.key % n_sa
        return PairCells(hist, first, count, sa), self.bounded_count.of_cells(hist.count, sa, first)

    def medians(self, n_groups: int) -> tuple[list[int], MedianCuts, OtherMedians | None]:
        """The live QIs (a QI with one value in every group keeps one value in their
        subgroups: skipped) and every group's median cut on every QI (spread, median, rows
        below it, ``|L|``; ``values``: a categorical QI's cut by its distinct values, and the
        other median of the rows with the distinct values, else None), from one histogram of
        all live QIs or, for large inputs, one per QI."""
        d, sizes = self.d, self.sizes
        live = [j for j in range(d) if self.alive[j]]
        spread = np.zeros((n_groups, d), dtype=np.int64)
        med_code = np.zeros((n_groups, d), dtype=np.int64)
        below = np.zeros((n_groups, d), dtype=np.int64)
        n_left = np.repeat(sizes[:, None], d, axis=1)  # |L| = |G|: no cut
        domains, offsets = self.domains, self.offsets
        if not self.by_column and live:
            if len(live) != self.wf_cols_n and self.wf is not None:
                self.wf_cols, self.wf_cols_n = np.tile(self.wf, len(live)), len(live)
            hist = level_histogram(
                self.gid, self.codes, n_groups, self.width, self.wf_cols, columns=live
            )
            hists = [(hist, live, [domains[j] for j in live], offsets[live])]
        else:  # large inputs: one column at a time
            hists = [
                (
                    level_histogram(
                        self.gid,
                        self.codes[:, j],
                        n_groups,
                        domains[j],
                        self.wf,
                        first_cell=int(offsets[j]),
                        buffer=self.key_buffer,
                    ),
                    [j],
                    domains[j : j + 1],
                    np.zeros(1, dtype=np.int64),
                )
                for j in live
            ]
        first = MedianCuts(spread, med_code, below, n_left)
        if not live:
            other = OtherMedians(med_code, n_left, np.ones((n_groups, d), dtype=np.int64))
            return live, first, other if self.values else None
        by_values = self.categorical if self.values else None
        part = self.cuts_of(hists, self.lower, by_values)
        spread[:, live] = np.hstack([c.spread for c in part])
        med_code[:, live] = np.hstack([c.value for c in part])
        below[:, live] = np.hstack([c.below for c in part])
        n_left[:, live] = np.hstack([c.left for c in part])
        if not self.values:
            return live, first, None
        # the other median of the rows, and the distinct values
        alt = self.cuts_of(hists, not self.lower, None)
        other = OtherMedians(med_code.copy(), n_left.copy(), np.ones((n_groups, d), np.int64))
        other.code[:, live] = np.hstack([c.value for c in alt])
        other.left[:, live] = np.hstack([c.left for c in alt])
        other.n_values[:, live] = np.hstack([c.n_values for c in part])  # type: ignore[misc]
        return live, first, other

    def cuts_of(
        self, hists: list[Any], lower: bool, by_values: np.ndarray | None
    ) -> list[counting.MedianCuts]:
        """The median cuts (:func:`median_cuts`) of every histogram of :meth:`medians`."""
        return [
            median_cuts(
                hist,
                self.sizes,
                doms,
                lower,
                self.strict,
                offsets=offs,
                by_values=None if by_values is None else by_values[cols],
            )
            for hist, cols, doms, offs in hists
        ]

    def allowed_by_halves(
        self,
        pairs: PairCells | None,
        bounded: np.ndarray | None,
        cand: np.ndarray,
        norm: np.ndarray,
        n_left: np.ndarray,
        value: np.ndarray,
        ties: np.ndarray,
    ) -> np.ndarray:
        """Per (group, QI), whether the rule allows the cut, for rules reading the halves' SA:
        in rounds, round ``r`` trying each undecided group's ``r``-th dimension in order of
        normalized range; the halves' SA counts are one ``bincount`` over the (group, SA) cells
        of the left rows of the round's candidates (the right half is the group minus the
        left)."""
        if pairs is None or bounded is None or pairs.hist.unit_cell is None:
            raise InternalError("mondrian: a rule reading the halves has no SA cells")
        unit_cell = pairs.hist.unit_cell
        n_groups, d = cand.shape
        every = np.arange(n_groups)
        gid = self.gid
        allowed = np.zeros((n_groups, d), dtype=bool)
        order = np.argsort(-np.where(cand, norm, -1.0), axis=1, kind="stable")
        n_cand = cand.sum(axis=1)
        undecided = n_cand > 0
        slot = np.full(n_groups, -1, dtype=np.int64)
        dim_of = np.empty(n_groups, dtype=self.dim_type)
        sub = np.arange(gid.size) if undecided.all() else np.flatnonzero(undecided[gid])
        w_left = self.wf if self.qof is None else self.ws
        for r in range(d):
            todo = np.flatnonzero(undecided & (n_cand > r))
            if not todo.size:
                break
            dims = order[todo, r]
            # the left rows of every candidate of this round: one gather of their codes
            dim_of.fill(-1)
            dim_of[todo] = dims
            if r:  # only the units of groups with a candidate in this round
                sub = sub[dim_of[gid[sub]] >= 0]
            on, left = self.mark_left(sub, dim_of, value[every, dim_of], ties[every, dim_of])
            lpos = sub[on & left]
            if self.qof is not None:  # the SA units of the left QI units: their segments
                lpos = segment_ranges(self.s_start[lpos], self.s_count[lpos])
            cnt_all = np.bincount(
                unit_cell[lpos],
                weights=None if w_left is None else w_left[lpos],
                minlength=pairs.hist.key.size,
            )
            # the round's candidates (one per group in todo) evaluated at once
            stats = halves_stats(
                self.rule, pairs, todo, self.sizes[todo], n_left[todo, dims], bounded[todo],
                cnt_all, self.bounded_count, self.n_sa,
            )  # fmt: skip
            if self.sa_log is not None:
                self.record_halves(todo, dims, sub, dim_of, slot)
            ok = np.asarray(self.rule.allowed(stats), dtype=bool)
            allowed[todo[ok], dims[ok]] = True
            undecided[todo[ok]] = False
        return allowed

    def record_halves(
        self,
        todo: np.ndarray,
        dims: np.ndarray,
        sub: np.ndarray,
        dim_of: np.ndarray,
        slot: np.ndarray,
    ) -> None:
        """Log the halves' SA reads of one round: one record per dimension, its candidates
        numbered in it (``slot``: scratch, all -1 on entry and exit)."""
        gid, left_u = self.gid, self.left_u
        for j in range(self.cand_dim.size):
            g = todo[dims == j]
            if g.size:
                pos = sub[dim_of[gid[sub]] == j]
                slot[g] = np.arange(g.size)
                half = 2 * slot[gid[pos]] + ~left_u[pos]
                slot[g] = -1
                self.units.record(self.uid[pos], half, "S_max of the candidate halves")

    def mark_left(
        self, sub: np.ndarray, dim_of: np.ndarray, value: np.ndarray, ties: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Set ``left_u`` of the active units ``sub`` whose group ``g`` is cut on
        ``dim_of[g] >= 0`` at median ``value[g]`` (``ties[g]`` rows equal to it go left
        under relaxed cuts); returns the mask of ``sub`` in such groups and the left flags."""
        grp = self.gid[sub]
        dim = dim_of[grp]  # small ints
        on = dim >= 0
        flat = dim.astype(np.int64)
        np.maximum(flat, 0, out=flat)
        if self.values:  # candidate column -> its QI
            flat = self.cand_dim[flat]
        flat *= self.gid.size
        flat += sub
        c = self.codes.ravel(order="F")[flat]  # (codes is F-ordered: a view)
        del flat
        v = value.astype(self.code_type)[grp]
        if self.strict:
            left = c <= v if self.lower or self.values else c < v
        else:
            left = c < v
            tie = np.flatnonzero(on & (c == v))
            if tie.size:
                left[tie] = tie_ranks(grp[tie]) < ties[grp[tie]]
        self.left_u[sub] = left
        return on, left

    # -- the map -------------------------------------------------------------------------------
    def drop_finished(self, split: np.ndarray) -> bool:
        """Finished groups (not ``split``) leave with their final ids, and their units with
        them; False when no group is left."""
        gid = self.gid
        done = ~split
        fin_id = np.cumsum(done) - 1 + self.next_id
        gone = done[gid]
        self.out[self.uid[gone]] = fin_id[gid[gone]]
        self.next_id += int(done.sum())
        if not split.any():
            return False
        keep = np.flatnonzero(~gone)
        if self.qof is not None:  # the SA units follow their QI units
            if self.sa_u is None:
                raise InternalError("mondrian: SA pairs without SA units")
            keep_s = np.flatnonzero(~gone[self.qof])
            new_index = np.cumsum(~gone) - 1
            self.qof = new_index[self.qof[keep_s]]
            self.s_count = self.s_count[keep]
            self.s_start = exclusive_cumsum(self.s_count)
            self.sa_u = self.sa_u[keep_s]
            if self.ws is not None:
                self.ws = self.ws[keep_s]
        elif self.sa_u is not None:
            self.sa_u = self.sa_u[keep]
        self.uid, self.gid, self.left_u = self.uid[keep], gid[keep], self.left_u[keep]
        kept = np.empty((keep.size, self.d), dtype=self.code_type, order="F")
        for j in range(self.d):
            np.take(self.codes[:, j], keep, out=kept[:, j])
        self.codes = kept
        if self.wf is not None:
            self.wf = self.wf[keep]
            self.wf_cols_n = 0  # (repeated again at the next histogram)
        return True

    def next_level(self, split: np.ndarray, nl_best: np.ndarray) -> None:
        """The ``r``-th split group's halves become groups ``2r`` (left) and ``2r + 1``, the
        numbering of the sorted-orders engine of earlier versions, so the partition and the
        ``sa_log`` records are identical to it."""
        rank = np.cumsum(split) - 1
        gid = 2 * rank[self.gid]
        gid += ~self.left_u
        self.gid = gid
        new_sizes = np.empty(2 * int(split.sum()), dtype=np.int64)
        new_sizes[0::2] = nl_best[split]
        new_sizes[1::2] = self.sizes[split] - nl_best[split]
        self.sizes = new_sizes

    def final_ids(self) -> np.ndarray:
        """Group id per row, ids in order of first appearance in the rows (units are
        numbered that way)."""
        out, next_id, n_units = self.out, self.next_id, self.n_units
        if (out < 0).any():
            raise InternalError("mondrian: a unit was left without a group")
        first_unit = np.full(next_id, n_units, dtype=np.int64)
        np.minimum.at(first_unit, out, np.arange(n_units, dtype=np.int64))
        relabel = np.empty(next_id, dtype=np.int32)
        relabel[np.argsort(first_unit)] = np.arange(next_id, dtype=np.int32)
        return relabel[out] if self.row_unit is None else relabel[out][self.row_unit]
