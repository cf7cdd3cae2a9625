"""Mondrian on Dask by counting: the in-memory engine's level step with the rows on workers.

The in-memory engine (:func:`kerckhoffs.algorithms.mondrian.mondrian_groups`) runs the
recursion level by level, and each level is three pure steps: *histograms* of the open groups
(per (group, QI code) and per (group, SA)), *cuts* decided from the summed histograms
(:func:`~kerckhoffs.algorithms.mondrian.median_cuts` and the cut rule), and a *map* that moves
every row to its half. Here the rows stay in their partitions:

0. under strict cuts each partition folds its rows with equal QI and SA codes into one
   weighted unit (:class:`_Rows`), so every later pass counts units (on the resampled Census
   stand-in a 1M-row partition holds about 148k distinct rows: Mondrian 2.4 times faster at
   100M rows, ``benchmarks/bench_dask_scale.py``);
1. every partition returns its sparse (group, QI cell) and (group, SA) counts
   (:func:`~kerckhoffs.algorithms.mondrian.level_histogram`); the client sums them;
2. the client decides the cuts exactly as the in-memory engine: normalized ranges, medians,
   ``|L|``, the rule (rules that read the halves' SA, such as l-diversity, get the left
   halves' (group, SA) counts of each round of fallback dimensions from one more pass);
3. a map over the partitions assigns every row its new group (2r / 2r + 1 for the r-th split
   group) or its final id. Relaxed cuts send the first rows equal to the median left in row
   order across partitions: the client turns per-partition tie counts into allowances.

At the end the final ids are renumbered in order of each group's first row, as in memory, so
:func:`mondrian_dask` gives every row the same group id as ``mondrian_groups`` on the whole
table (tested). What crosses to the client per level: the histograms of the open groups and,
for the halves' rounds, their left (group, SA) counts; never a row.

**Finishing in memory.** A group that fits a worker needs no more distributed passes: at the
start of a level, the groups of at most ``finish_rows`` units (2M by default; under strict
cuts a unit is a partition's distinct (QI, SA) row with its count, so a group of 100M rows
with few distinct rows fits) are shuffled as units to buckets of about equal size (at most
one per partition), and each bucket runs the in-memory engine from them
(``mondrian_groups(start=..., weights=...)``: every group continued on its own rows, each unit
standing for its rows, as the level loop would). Larger groups go on level by level, so the
passes over the partitions stop once the groups fit a worker (about log2(units /
finish_rows) levels), and a group that stays large does not keep the others waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian import (
    CUTS,
    MEDIANS,
    CutRule,
    CutStats,
    LevelHistogram,
    MedianCuts,
    OtherMedians,
    PairCells,
    allowed_by_counts,
    as_rule,
    halves_stats,
    level_histogram,
    median_cuts,
    plus_rule_from_models,
    rule_from_models,
    tie_ranks,
)
from kerckhoffs.algorithms.mondrian.counting import cut_candidates
from kerckhoffs.data.schema import Kind
from kerckhoffs.engines.dask_check import whole_table
from kerckhoffs.engines.dask_table import DaskTable, Part, item, row_key
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.histogram import BoundedCount

__all__ = ["FINISH_ROWS", "DaskGroups", "mondrian_dask", "mondrian_dask_groups"]

FINISH_ROWS = 2_000_000
"""Open groups of at most this many units (distinct rows per partition under strict cuts) are
finished in memory on a worker (a few hundred MB of a worker's memory at most, for a handful
of QIs)."""


@dataclass
class _Rows:
    """One partition's rows during the recursion, as *units*: its QI codes and where each
    QI's cells start (``offsets``: a unit's cell on QI ``j`` is ``qi[:, j] + offsets[j]``), SA
    codes, the open group of every unit (-1 once finished) and its final id in order of
    finishing (-1 while open), both int32; ``start``: the position of the partition's first
    row in the table.

    Under strict cuts the rows with the same QI and SA codes always share a group, so a
    partition folds them into one unit (``weight``: the rows it stands for; ``inverse``: each
    row's unit; ``first``: each unit's first row in the partition) and every level counts
    units, not rows. Relaxed cuts send equal rows to both sides by row order: one unit per
    row there (``weight``, ``inverse`` and ``first`` None, ``qi`` the partition's own array)."""

    qi: np.ndarray
    offsets: np.ndarray
    sa: np.ndarray
    gid: np.ndarray
    out: np.ndarray
    start: int
    weight: np.ndarray | None = None
    inverse: np.ndarray | None = None
    first: np.ndarray | None = None


@dataclass(frozen=True)
class DaskGroups:
    """The partition Mondrian found: one future of int32 group ids per partition (ids in order
    of first appearance in the table's rows), and the number of groups and levels."""

    groups: list[Any]
    n_groups: int
    levels: int
    params: dict[str, Any] = field(default_factory=dict)
    """What the release records of the run (:func:`mondrian_dask`: the models' parameters,
    median and cuts, as the in-memory algorithm records them)."""


# -- on the workers ------------------------------------------------------------------------------
def _first_seen(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``key`` values in order of first appearance: each one's first position and
    every row's index among them. A hash table (pandas' ``factorize``), not a sort: about 4x
    faster than ``np.unique`` on a 1M-row partition, and the unit order does not matter (units
    are counted, and finished groups are numbered by their first row). Indices are given in
    order of first appearance, so a row is a first appearance exactly where its index exceeds
    every earlier one."""
    import pandas as pd

    inverse, _ = pd.factorize(key, sort=False, use_na_sentinel=False)
    seen = np.maximum.accumulate(inverse)
    new = np.empty(inverse.size, dtype=bool)
    new[:1] = True
    np.greater(seen[1:], seen[:-1], out=new[1:])
    return np.flatnonzero(new), inverse


def _start(part: Part, offsets: np.ndarray, start: int, fold: bool) -> _Rows:
    n = part.n
    if not fold or n == 0:
        gid, out = np.zeros(n, np.int32), np.full(n, -1, np.int32)
        return _Rows(part.qi, offsets, part.sa, gid, out, start)
    codes = np.column_stack([part.qi, part.sa]).astype(np.int64)
    size = (codes.max(axis=0) + 1).tolist()
    if float(np.prod([float(x) for x in size])) < 2.0**62:  # one mixed-radix key per row
        first, inverse = _first_seen(row_key(codes, size))
    else:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int32)
    weight = np.bincount(inverse, minlength=first.size).astype(np.int64)
    u = first.size
    return _Rows(
        part.qi[first], offsets, part.sa[first], np.zeros(u, np.int32), np.full(u, -1, np.int32),
        start, weight, inverse, first.astype(np.int64),
    )  # fmt: skip


def _level(
    rows: _Rows, n_groups: int, width: int, live: list[int], n_sa: int, need_pairs: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The partition's (group, QI cell) and (group, SA) counts of the open rows."""
    open_ = np.flatnonzero(rows.gid >= 0)
    g = rows.gid[open_].astype(np.int64)
    w = rows.weight[open_] if rows.weight is not None else None
    cells = rows.qi[open_].astype(np.int64) + rows.offsets if live else None
    h = level_histogram(g, cells, n_groups, width, w, columns=live) if cells is not None else None
    qk = h.key if h is not None else np.zeros(0, np.int64)
    qc = h.count if h is not None else np.zeros(0, np.int64)
    if not need_pairs:
        return qk, qc, None, None
    p = level_histogram(g, rows.sa[open_], n_groups, n_sa, w)
    return qk, qc, p.key, p.count


def _cut_codes(
    rows: _Rows, dim_of: np.ndarray, value: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The open rows in a group with a cut (``dim_of[g] >= 0``): their positions, groups,
    cells on the cut's QI and the group's median cell."""
    open_ = np.flatnonzero(rows.gid >= 0)
    g = rows.gid[open_]
    dim = dim_of[g]
    on = dim >= 0
    pos, g, dim = open_[on], g[on], dim[on].astype(np.int64)
    return pos, g, rows.qi[pos, dim] + rows.offsets[dim], value[g]


def _left(
    rows: _Rows,
    dim_of: np.ndarray,
    value: np.ndarray,
    allowance: np.ndarray | None,
    lower: bool,
    strict: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The open rows in a group with a cut and whether each goes left: ``code <= v`` (lower
    median, strict), ``< v`` (upper, strict), or under relaxed cuts ``< v`` plus the first
    ``allowance[g]`` rows equal to ``v`` in this partition."""
    pos, g, c, v = _cut_codes(rows, dim_of, value)
    if strict:
        left = c <= v if lower else c < v
    else:
        left = c < v
        tie = np.flatnonzero(c == v)
        if tie.size:
            if allowance is None:  # _allowances gives one per partition under relaxed cuts
                raise InternalError("relaxed cuts without the partition's tie allowances")
            left[tie] = tie_ranks(g[tie]) < allowance[g[tie]]
    return pos, left


def _ties(rows: _Rows, dim_of: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group with a cut, the partition's rows equal to the median (sparse)."""
    _, g, c, v = _cut_codes(rows, dim_of, value)
    return np.unique(g[c == v], return_counts=True)


def _left_pairs(
    rows: _Rows,
    dim_of: np.ndarray,
    value: np.ndarray,
    allowance: np.ndarray | None,
    lower: bool,
    strict: bool,
    n_sa: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The (group, SA) counts of the left halves of the candidate cuts (sparse)."""
    pos, left = _left(rows, dim_of, value, allowance, lower, strict)
    pos = pos[left]
    key = rows.gid[pos].astype(np.int64) * n_sa + rows.sa[pos]
    if rows.weight is None:
        return np.unique(key, return_counts=True)
    uniq, inv = np.unique(key, return_inverse=True)
    return uniq, np.bincount(inv.reshape(-1), weights=rows.weight[pos], minlength=uniq.size).astype(
        np.int64
    )


def _map(
    rows: _Rows,
    best_of: np.ndarray,
    value: np.ndarray,
    allowance: np.ndarray | None,
    lower: bool,
    strict: bool,
    fin_id: np.ndarray,
    rank: np.ndarray,
) -> _Rows:
    """Finished groups' rows take their final id; split groups' rows their half."""
    gid, out = rows.gid.copy(), rows.out.copy()
    open_ = np.flatnonzero(gid >= 0)
    g = gid[open_]
    done = best_of[g] < 0
    out[open_[done]] = fin_id[g[done]]
    gid[open_[done]] = -1
    pos, left = _left(rows, best_of, value, allowance, lower, strict)
    gid[pos] = 2 * rank[gid[pos]] + ~left
    return replace(rows, gid=gid, out=out)


def _first_rows(rows: _Rows, n_ids: int) -> np.ndarray:
    first = np.full(n_ids, np.iinfo(np.int64).max, dtype=np.int64)
    done = np.flatnonzero(rows.out >= 0)  # (units still open are finished in memory)
    row = done if rows.first is None else rows.first[done]  # a unit's first row
    np.minimum.at(first, rows.out[done], rows.start + row)
    return first


def _final(rows: _Rows, relabel: np.ndarray, back: list[Any], base: np.ndarray) -> np.ndarray:
    """The partition's final ids: groups finished on the partitions by their id, units
    finished in memory by what their bucket sent back (``(unit index in the partition, local
    id)``; bucket ``b``'s ids start at ``base[b]``), then every row its unit's."""
    out = rows.out.copy()
    for b, (index, local) in enumerate(back):
        out[index] = base[b] + local
    return relabel[out if rows.inverse is None else out[rows.inverse]]


def _open_units(rows: _Rows, n_groups: int) -> np.ndarray:
    """The partition's units in each open group (its distinct rows there, under strict cuts)."""
    return np.bincount(rows.gid[rows.gid >= 0], minlength=n_groups).astype(np.int64)


# -- finishing the subtrees in memory ------------------------------------------------------------
def _to_buckets(rows: _Rows, bucket_of: np.ndarray, n_buckets: int) -> list[tuple[np.ndarray, ...]]:
    """The partition's open units split by the bucket of their group: unit index in the
    partition, global position of its first row, raw QI codes, SA code, group and the rows it
    stands for (folded units keep their weight: a bucket holds a group's distinct rows, not
    its rows; an empty weight array when units are rows)."""
    open_ = np.flatnonzero(rows.gid >= 0)
    b = bucket_of[rows.gid[open_]]  # (-1: the group goes on level by level)
    sel = open_[b >= 0]
    order = np.argsort(b[b >= 0], kind="stable")
    sel = sel[order]
    cut = np.searchsorted(bucket_of[rows.gid[sel]], np.arange(n_buckets + 1))
    pos = rows.start + (sel if rows.first is None else rows.first[sel])
    qi, sa, g = rows.qi[sel], rows.sa[sel], rows.gid[sel]
    w = rows.weight[sel] if rows.weight is not None else np.zeros(0, dtype=np.int64)
    return [
        (sel[cut[i] : cut[i + 1]].astype(np.int32), pos[cut[i] : cut[i + 1]],
         qi[cut[i] : cut[i + 1]], sa[cut[i] : cut[i + 1]], g[cut[i] : cut[i + 1]],
         w[cut[i] : cut[i + 1]] if w.size else w)
        for i in range(n_buckets)
    ]  # fmt: skip


def _finish_bucket(
    pieces: list[Any],
    shell: Any,
    rule: CutRule,
    median: str,
    cuts: str,
    values: bool = False,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """One bucket's open groups finished by the in-memory engine (units in table order of
    their first rows, each with the rows it stands for; each group continued on its own:
    ``start``). Returns per partition (``pieces`` are in partition order) the ``(unit index
    in the partition, local id)`` of its units, and each local group's first row."""
    from dataclasses import replace

    from kerckhoffs.algorithms.mondrian import mondrian_groups

    pos = np.concatenate([p[1] for p in pieces])
    order = np.argsort(pos, kind="stable")
    pos = pos[order]
    qi = np.concatenate([p[2] for p in pieces])[order]
    sa = np.concatenate([p[3] for p in pieces])[order]
    g = np.concatenate([p[4] for p in pieces])[order]
    folded = any(p[5].size for p in pieces)
    weights = np.concatenate([p[5] for p in pieces])[order] if folded else None
    _, start = np.unique(g, return_inverse=True)
    table = replace(
        shell, qi=np.asfortranarray(qi, dtype=np.int32), sa=sa.astype(np.int32), provider=None,
        provider_values=None, row_ids=np.arange(pos.size, dtype=np.int64),
    )  # fmt: skip
    local = mondrian_groups(
        table, rule, median=median, cuts=cuts, start=start.reshape(-1), weights=weights,
        values=values,
    ).astype(np.int64)  # fmt: skip
    n_local = int(local.max()) + 1 if local.size else 0
    first = np.full(n_local, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, local, pos)
    back_local = np.empty_like(local)
    back_local[order] = local  # back in the order of the pieces: partition by partition
    cut = np.cumsum([0] + [p[0].size for p in pieces])
    back = [(p[0], back_local[cut[i] : cut[i + 1]].astype(np.int32)) for i, p in enumerate(pieces)]
    return back, first


def _for_partition(bucket: tuple[list[Any], np.ndarray], i: int) -> Any:
    return bucket[0][i]


def _drop(rows: _Rows, remap: np.ndarray) -> _Rows:
    """Renumber the open groups (``remap[g]``; -1: the group left for the in-memory finish,
    its rows no longer open here)."""
    gid = rows.gid.copy()
    open_ = np.flatnonzero(gid >= 0)
    gid[open_] = remap[gid[open_]]
    return replace(rows, gid=gid)


def _finish_in_memory(
    client: Any,
    rows: list[Any],
    sizes: np.ndarray,
    small: np.ndarray,
    shell: Any,
    rule: CutRule,
    median: str,
    cuts: str,
    values: bool,
) -> list[Any]:
    """Shuffle the units of the ``small`` open groups into buckets of consecutive groups with
    about equal unit counts (``sizes``; at most one bucket per partition) and finish each
    bucket with the in-memory engine."""
    n_buckets = max(1, min(len(rows), int(small.sum())))
    weight = np.where(small, sizes, 0)
    before = np.cumsum(weight) - weight
    bucket_of = (before * n_buckets // max(int(weight.sum()), 1)).astype(np.int64)
    bucket_of[~small] = -1
    b_f = client.scatter(bucket_of, broadcast=True, hash=False)
    pieces = [client.submit(_to_buckets, r, b_f, n_buckets, pure=False) for r in rows]
    out = []
    for b in range(n_buckets):
        mine = [client.submit(item, p, b, pure=False) for p in pieces]
        out.append(
            client.submit(_finish_bucket, mine, shell, rule, median, cuts, values, pure=False)
        )
    return out


# -- on the client -------------------------------------------------------------------------------
def _merged(pieces: Sequence[tuple[np.ndarray, np.ndarray]], width: int) -> LevelHistogram:
    """The sum of sparse histograms (keys sorted within each piece)."""
    keys = np.concatenate([k for k, _ in pieces])
    counts = np.concatenate([c for _, c in pieces])
    if not keys.size:
        return LevelHistogram(keys.astype(np.int64), counts.astype(np.int64), width)
    keys, inv = np.unique(keys, return_inverse=True)
    total = np.bincount(inv.reshape(-1), weights=counts, minlength=keys.size).astype(np.int64)
    return LevelHistogram(keys, total, width)


@dataclass(frozen=True)
class _Run:
    """What every level of one run reads: the cut rule, median and cut kind, the QIs' domains
    (``widths`` = domain size - 1, the normalized range's denominator; ``offsets``: where each
    QI's cells start in the (group, QI cell) histogram of ``width`` cells), the SA domain and
    how a (group, SA) count vector reduces to the bounded count (``bounded_count``);
    ``values``: ``categorical_cuts="values"`` (two candidate columns per QI,
    :func:`~kerckhoffs.algorithms.mondrian.values_candidates`), ``categorical`` the QIs cut
    by their distinct values."""

    rule: CutRule
    lower: bool
    strict: bool
    d: int
    n_sa: int
    widths: np.ndarray
    domains: list[int]
    offsets: np.ndarray
    width: int
    bounded_count: BoundedCount
    values: bool = False
    categorical: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def left_le(self) -> bool:
        """Whether a strict cut's left half is ``{cell <= value}`` (lower median, and every
        candidate of ``values``), else ``{cell < value}``."""
        return self.lower or self.values

    def qi_of(self, column: np.ndarray) -> np.ndarray:
        """The QI of each candidate column (``values``: two per QI), -1 kept."""
        if not self.values:
            return column
        return np.where(column >= 0, column // 2, -1)

    @property
    def need_pairs(self) -> bool:
        """The rule reads (group, SA) counts: the group's, or its halves'."""
        return bool(self.rule.reads_group_sa or self.rule.reads_halves_sa)


@dataclass(frozen=True)
class _Cuts:
    """One level's decision per (open group, QI): normalized range, median code, rows equal
    to it, rows going left, and whether the rule allows the cut."""

    norm: np.ndarray
    value: np.ndarray
    ties: np.ndarray
    n_left: np.ndarray
    allowed: np.ndarray


def mondrian_dask_groups(
    dt: DaskTable,
    rule: CutRule | Callable[[CutStats], np.ndarray],
    *,
    median: str = "lower",
    cuts: str = "strict",
    progress: Callable[[int, int], None] | None = None,
    finish_rows: int = FINISH_ROWS,
    values: bool = False,
) -> DaskGroups:
    """Mondrian's partition of ``dt`` under the cut ``rule``, computed on its workers (module
    docstring): the same group for every row as ``mondrian_groups`` on the whole table
    (``values``: as ``mondrian_groups(values=True)``, ``categorical_cuts="values"``).
    ``progress(level, open_groups)`` is called before each level. An open group of at most
    ``finish_rows`` units (its distinct rows per partition under strict cuts, its rows under
    relaxed cuts) is shuffled to a worker and finished there by the in-memory engine (0:
    never); the larger ones go on level by level."""
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
    rule = as_rule(rule)
    client = dt.client
    shell = dt.shell()
    run = _run_of(dt, rule, median, cuts, values)
    rows = [
        client.submit(_start, p, run.offsets, int(s), run.strict, pure=False)
        for p, s in zip(dt.parts, dt.starts, strict=True)
    ]
    sizes = np.array([dt.n], dtype=np.int64)
    alive = np.ones(run.d, dtype=bool)
    next_id = 0
    level = 0
    finished: list[Any] = []  # (bucket results, their group count) when finished in memory
    while sizes.size:
        if progress is not None:
            progress(level, sizes.size)
        units = sizes  # what a worker would hold of each group: its rows, or its units
        if finish_rows and run.strict and (sizes > finish_rows).any():  # (units <= rows)
            units = np.sum(
                client.gather(
                    [client.submit(_open_units, r, sizes.size, pure=False) for r in rows]
                ),
                axis=0,
            )
        small = units <= finish_rows if finish_rows else np.zeros(sizes.size, dtype=bool)
        if small.any():  # finished in memory on the workers; the larger ones go on here
            finished += _finish_in_memory(
                client, rows, units, small, shell, rule, median, cuts, run.values
            )
            if small.all():
                break
            remap = np.where(small, -1, np.cumsum(~small) - 1)
            remap_f = client.scatter(remap, broadcast=True, hash=False)
            rows = [client.submit(_drop, r, remap_f, pure=False) for r in rows]
            sizes = sizes[~small]
        cut, alive = _level_cuts(client, rows, sizes, alive, run)
        rows, sizes, next_id = _split(client, rows, sizes, cut, next_id, run)
        level += 1
    return _relabelled(client, rows, finished, next_id, level)


def _run_of(dt: DaskTable, rule: CutRule, median: str, cuts: str, values: bool) -> _Run:
    """The run's constants (:class:`_Run`) for ``dt``."""
    domains = [max(c.size, 1) for c in dt.qi_columns]
    offsets = np.zeros(dt.d, dtype=np.int64)
    np.cumsum(domains[:-1], out=offsets[1:])
    shell = dt.shell()
    return _Run(
        rule=rule,
        lower=median == "lower",
        strict=cuts == "strict",
        d=dt.d,
        n_sa=max(dt.n_sa, 1),
        widths=np.array([max(c.size - 1, 0) for c in dt.qi_columns], dtype=np.float64),
        domains=domains,
        offsets=offsets,
        width=int(sum(domains)),
        bounded_count=BoundedCount.of(shell.sensitive, shell.schema.sensitive_mode),
        values=values,
        categorical=np.array([c.kind != Kind.NUMERIC for c in dt.qi_columns], dtype=bool),
    )


def _level_cuts(
    client: Any, rows: list[Any], sizes: np.ndarray, alive: np.ndarray, run: _Run
) -> tuple[_Cuts, np.ndarray]:
    """Steps 1 and 2 of a level (module docstring): the open groups' summed histograms and
    the cuts decided from them, as the in-memory engine decides them. Returns the cuts and
    which QIs still have a spread in some group (``alive``, narrowed)."""
    n_groups, d = sizes.size, run.d
    live = [j for j in range(d) if alive[j]]
    got = client.gather(
        [
            client.submit(_level, r, n_groups, run.width, live, run.n_sa, run.need_pairs,
                          pure=False)
            for r in rows
        ]
    )  # fmt: skip
    pairs, bounded = _pair_cells(got, n_groups, run) if run.need_pairs else (None, None)
    first, other = _medians(got, sizes, live, run)
    alive = alive & (first.spread > 0).any(axis=0)
    norm, value, ties, cand, n_left = cut_candidates(
        live, first, other, sizes, run.widths, run.offsets, run.categorical, run.lower
    )
    if not run.rule.reads_halves_sa:
        allowed = allowed_by_counts(run.rule, cand, sizes, n_left, bounded)
    elif pairs is None or bounded is None:  # need_pairs holds whenever the halves are read
        raise InternalError("a rule reading the halves' SA counts got no (group, SA) counts")
    else:
        found = _Cuts(norm, value, ties, n_left, cand)
        allowed = _halves_allowed(client, rows, sizes, found, pairs, bounded, run)
    return _Cuts(norm, value, ties, n_left, allowed), alive


def _medians(
    got: list[Any], sizes: np.ndarray, live: list[int], run: _Run
) -> tuple[MedianCuts, OtherMedians | None]:
    """Every open group's median cut on every QI from the summed (group, QI cell) histogram
    (all QIs, the dead ones as no cut) and, under ``values``, the other median of the rows
    with the distinct values (else None), as the in-memory engine computes them."""
    n_groups, d = sizes.size, run.d
    spread = np.zeros((n_groups, d), dtype=np.int64)
    med_code = np.zeros((n_groups, d), dtype=np.int64)
    below = np.zeros((n_groups, d), dtype=np.int64)
    n_left = np.repeat(sizes[:, None], d, axis=1)
    first = MedianCuts(spread, med_code, below, n_left)
    other = None
    if run.values:
        other = OtherMedians(med_code.copy(), n_left.copy(), np.ones((n_groups, d), np.int64))
    if not live:
        return first, other
    hist = _merged([(g[0], g[1]) for g in got], run.width)
    doms, offs = [run.domains[j] for j in live], run.offsets[live]
    by_values = run.categorical[live] if run.values else None
    c = median_cuts(hist, sizes, doms, run.lower, run.strict, offsets=offs, by_values=by_values)
    spread[:, live], med_code[:, live] = c.spread, c.value
    below[:, live], n_left[:, live] = c.below, c.left
    if other is not None:
        alt = median_cuts(hist, sizes, doms, not run.lower, run.strict, offsets=offs)
        other.code[:, live], other.left[:, live] = alt.value, alt.left
        other.n_values[:, live] = c.n_values
    return first, other


def _pair_cells(got: list[Any], n_groups: int, run: _Run) -> tuple[PairCells, np.ndarray]:
    """The level's summed (group, SA) cells and each open group's bounded count."""
    hist = _merged([(g[2], g[3]) for g in got], run.n_sa)
    first = np.searchsorted(hist.key, np.arange(n_groups) * run.n_sa)
    count = np.diff(np.append(first, hist.key.size))
    sa = hist.key % run.n_sa
    bounded = run.bounded_count.of_cells(hist.count, sa, first)
    return PairCells(hist, first, count, sa), bounded


def _halves_allowed(
    client: Any,
    rows: list[Any],
    sizes: np.ndarray,
    cand: _Cuts,
    pairs: PairCells,
    bounded: np.ndarray,
    run: _Run,
) -> np.ndarray:
    """Which candidate cuts (``cand.allowed``) a rule reading the halves' SA counts allows:
    round ``r`` asks every undecided group's ``r``-th widest candidate QI, one more pass
    over the partitions for the left halves' (group, SA) counts, until each group has an
    allowed cut or none is left (as the in-memory engine's fallback dimensions)."""
    n_groups, d = cand.allowed.shape
    every = np.arange(n_groups)
    allowed = np.zeros((n_groups, d), dtype=bool)
    order = np.argsort(-np.where(cand.allowed, cand.norm, -1.0), axis=1, kind="stable")
    n_cand = cand.allowed.sum(axis=1)
    undecided = n_cand > 0
    for r in range(d):
        todo = np.flatnonzero(undecided & (n_cand > r))
        if not todo.size:
            break
        dims = order[todo, r]
        dim_of = np.full(n_groups, -1, dtype=np.int64)
        dim_of[todo] = dims
        value = cand.value[every, np.maximum(dim_of, 0)]
        allowances = _allowances(
            client, rows, dim_of, value, cand.ties[every, np.maximum(dim_of, 0)], run.strict
        )
        v_f, dim_f = client.scatter([value, run.qi_of(dim_of)], broadcast=True, hash=False)
        lefts = client.gather(
            [
                client.submit(
                    _left_pairs, rw, dim_f, v_f, a, run.left_le, run.strict, run.n_sa, pure=False
                )
                for rw, a in zip(rows, allowances, strict=True)
            ]
        )
        left_hist = _merged(lefts, run.n_sa)
        cnt_all = np.zeros(pairs.hist.key.size, dtype=np.int64)
        cnt_all[np.searchsorted(pairs.hist.key, left_hist.key)] = left_hist.count
        stats = halves_stats(
            run.rule, pairs, todo, sizes[todo], cand.n_left[todo, dims], bounded[todo], cnt_all,
            run.bounded_count, run.n_sa,
        )  # fmt: skip
        ok = np.asarray(run.rule.allowed(stats), dtype=bool)
        allowed[todo[ok], dims[ok]] = True
        undecided[todo[ok]] = False
    return allowed


def _split(
    client: Any, rows: list[Any], sizes: np.ndarray, cut: _Cuts, next_id: int, run: _Run
) -> tuple[list[Any], np.ndarray, int]:
    """Step 3 of a level: every open group cut on its widest allowed QI, the others finished
    (final ids from ``next_id`` on); the rows mapped to their halves on the workers. Returns
    the rows, the new open groups' sizes and the next final id."""
    every = np.arange(sizes.size)
    best = np.argmax(np.where(cut.allowed, cut.norm, -1.0), axis=1)
    split = cut.allowed[every, best]
    nl_best = cut.n_left[every, best]
    best_of = np.where(split, best, -1).astype(np.int64)
    done = ~split
    fin_id = np.cumsum(done) - 1 + next_id
    next_id += int(done.sum())
    rank = np.cumsum(split) - 1
    v_best = cut.value[every, best]
    allowances = _allowances(client, rows, best_of, v_best, cut.ties[every, best], run.strict)
    b_f, v_f, f_f, r_f = client.scatter(
        [run.qi_of(best_of), v_best, fin_id, rank], broadcast=True, hash=False
    )
    rows = [
        client.submit(_map, rw, b_f, v_f, a, run.left_le, run.strict, f_f, r_f, pure=False)
        for rw, a in zip(rows, allowances, strict=True)
    ]
    new_sizes = np.empty(2 * int(split.sum()), dtype=np.int64)
    new_sizes[0::2] = nl_best[split]
    new_sizes[1::2] = sizes[split] - nl_best[split]
    return rows, new_sizes, next_id


def _relabelled(
    client: Any, rows: list[Any], finished: list[Any], next_id: int, levels: int
) -> DaskGroups:
    """The final ids renumbered in order of each group's first row (as in memory): those
    finished level by level (``0 .. next_id - 1``) and those finished in memory, bucket by
    bucket (``next_id + ...``, first rows from the buckets)."""
    firsts = client.gather([client.submit(_first_rows, r, next_id, pure=False) for r in rows])
    first = np.minimum.reduce(firsts) if firsts else np.zeros(0, dtype=np.int64)
    bucket_firsts = client.gather([client.submit(item, b, 1, pure=False) for b in finished])
    base = np.concatenate([[next_id], next_id + np.cumsum([f.size for f in bucket_firsts])])
    total = int(base[-1])
    first = np.concatenate([first, *bucket_firsts])
    relabel = np.empty(total, dtype=np.int32)
    relabel[np.argsort(first, kind="stable")] = np.arange(total, dtype=np.int32)
    relabel_f = client.scatter(relabel, broadcast=True, hash=False)
    groups = []
    for i, r in enumerate(rows):
        back = [client.submit(_for_partition, b, i, pure=False) for b in finished]
        groups.append(client.submit(_final, r, relabel_f, back, base[:-1].copy(), pure=False))
    return DaskGroups(groups, total, levels)


def _allowances(
    client: Any,
    rows: list[Any],
    dim_of: np.ndarray,
    value: np.ndarray,
    ties: np.ndarray,
    strict: bool,
) -> list[Any]:
    """Under relaxed cuts, per partition and group, how many of its rows equal to the median
    go left: the group's ``ties`` minus those the earlier partitions hold (row order)."""
    if strict:
        return [None] * len(rows)
    dim_f, value_f = client.scatter([dim_of, value], broadcast=True, hash=False)
    counts = client.gather([client.submit(_ties, r, dim_f, value_f, pure=False) for r in rows])
    before = np.zeros(dim_of.size, dtype=np.int64)
    out = []
    for groups, n in counts:
        out.append(np.maximum(ties - before, 0))
        before[groups] += n
    return out


def mondrian_dask(
    dt: DaskTable,
    models: list[Any],
    *,
    plus: bool = False,
    median: str = "lower",
    cuts: str = "strict",
    categorical_cuts: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    finish_rows: int = FINISH_ROWS,
) -> DaskGroups:
    """Mondrian (``plus``: Mondrian+, the look-ahead variant of paper 000 Algorithm 1) for the
    models the in-memory algorithm takes (k-anonymity, l-diversity, entropy l-diversity,
    t-closeness; Mondrian+: l-diversity and k), with the same checks on the whole table
    (from its summed SA histogram) and the same partition. ``categorical_cuts``: ``values``
    (the default under strict cuts, as in memory) or ``median`` (the default under relaxed
    cuts, and Mondrian+'s only cut); ``hierarchy`` has no Dask engine and is refused."""
    if categorical_cuts is None:
        categorical_cuts = "values" if cuts == "strict" and not plus else "median"
    if categorical_cuts not in ("values", "median") or (plus and categorical_cuts != "median"):
        raise ParameterError(
            f"mondrian{'+' if plus else ''} on Dask: categorical_cuts={categorical_cuts} is not "
            "available (Mondrian: values or median; Mondrian+: median)"
        )
    whole = whole_table(dt)
    make = plus_rule_from_models if plus else rule_from_models
    rule, params = make(dt.shell(), list(models), "mondrian+" if plus else "mondrian", whole)
    found = mondrian_dask_groups(
        dt, rule, median=median, cuts=cuts, progress=progress, finish_rows=finish_rows,
        values=categorical_cuts == "values",
    )  # fmt: skip
    params = params | {"median": median, "cuts": cuts}
    if categorical_cuts != "median":  # as in memory: not recorded for the cut of older releases
        params["categorical_cuts"] = categorical_cuts
    return replace(found, params=params)
