"""Baseline: the Mondrian engine as it was before issue 15 (stably split sorted orders).

A verbatim copy of ``kerckhoffs.algorithms.mondrian.mondrian_groups`` at commit b4b9aba (renamed
``mondrian_groups_sorted``): every active group is a segment of d + 1 orders sorted by (group,
code, row id), split stably at each depth. Kept as the reference that the counting engine must
reproduce exactly (``tests/test_mondrian_counting.py``) and as the "today" side of
``benchmarks/bench_mondrian_counting.py``. Not part of the package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian import (
    CUTS,
    MEDIANS,
    CutRule,
    CutStats,
    as_rule,
)
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Partition


def bounded_reducer(table: Table) -> tuple[np.ufunc, np.ndarray | None]:
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.all():
        return np.maximum, None
    if table.schema.sensitive_mode == SensitiveMode.SET:
        return np.add, sens
    return np.maximum, sens


def _code_sort(codes: np.ndarray, size: int, dtype: type) -> np.ndarray:
    """Stable argsort of small non-negative codes (radix sort through uint16 when it fits)."""
    if size <= np.iinfo(np.uint16).max:
        return np.argsort(codes.astype(np.uint16), kind="stable").astype(dtype)
    return np.argsort(codes, kind="stable").astype(dtype)


def _exclusive_cumsum(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.size, dtype=np.int64)
    np.cumsum(x[:-1], out=out[1:])
    return out


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of some segments, concatenated."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offset = np.asarray(starts, dtype=np.int64) - _exclusive_cumsum(lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(offset, lengths)


def _search(
    code_at: Callable[[np.ndarray], np.ndarray],
    lo: np.ndarray,
    hi: np.ndarray,
    value: np.ndarray,
    above: bool,
) -> np.ndarray:
    """Per segment, the first position in ``[lo, hi)`` whose code is ``> value`` (``above``)
    or ``>= value``, ``hi`` if none: a binary search run for all segments at once (codes are
    sorted inside each segment), dropping the segments that are done."""
    lo = lo.copy()
    hi = hi.copy()
    act = np.flatnonzero(lo < hi)
    while act.size:
        a, b = lo[act], hi[act]
        mid = (a + b) >> 1
        c = code_at(mid)
        before = c <= value[act] if above else c < value[act]
        lo[act] = np.where(before, mid + 1, a)
        hi[act] = np.where(before, b, mid)
        act = act[lo[act] < hi[act]]
    return lo


def mondrian_groups_sorted(
    table: Table,
    rule: CutRule | Callable[[CutStats], np.ndarray],
    *,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> np.ndarray:
    """Group id per row of Mondrian's partition of ``table`` under the cut ``rule``.

    The engine behind :func:`mondrian` (and Mondrian+ / MASK, which pass their own rules).
    No precondition is checked here: a table whose root violates the rule's model comes back
    as one group. Group ids are in order of first appearance in the rows.

    How (module docstring): every active group is a segment ``[start, start + size)`` of
    ``perms[j]``, the active row ids sorted by (group, code of QI ``j``, row id), for every
    ``j`` (and ``perms[d]`` sorted by (group, SA, row id) when the rule reads the SA). At
    each depth, for all groups at once: ranges and medians are gathers at segment positions;
    ``|L|`` is a binary search inside the segments; the rule is evaluated dimension by
    dimension in each group's order of normalized range, the halves' SA counts coming from
    one ``bincount`` over the (group, SA) pairs of the smaller half of the groups still
    undecided. Finished groups are dropped; each split group is split stably in every
    ``perms[j]`` (a cumulative sum gives each row its rank within its half), so the orders
    stay sorted without sorting again.

    ``sa_log`` (:mod:`~kerckhoffs.algorithms.sa_reads`) records the SA statistics the rule
    reads: ``c(G)`` of every group with a candidate cut (rules reading the group's SA) and
    ``c(L)``, ``c(R)`` of every candidate evaluated (rules reading the halves). Not touched
    when ``None``.
    """
    if median not in MEDIANS:
        raise ParameterError(
            f"mondrian: median must be one of {', '.join(MEDIANS)}, got {median!r}"
        )
    if cuts not in CUTS:
        raise ParameterError(f"mondrian: cuts must be one of {', '.join(CUTS)}, got {cuts!r}")
    rule = as_rule(rule)
    lower = median == "lower"
    strict = cuts == "strict"
    n, d = table.n, table.d
    # (typed Any: the index width is chosen at run time, which numpy's stubs cannot follow)
    idx: Any = np.int32 if n < np.iinfo(np.int32).max else np.int64
    qi = table.qi
    sa = table.sa
    widths = np.array([max(c.size - 1, 0) for c in table.qi_columns], dtype=np.float64)
    need_pairs = rule.reads_group_sa or rule.reads_halves_sa
    halves_sa = rule.reads_halves_sa
    reducer, sens_mask = bounded_reducer(table)
    n_sa_hist = max(table.n_sa, 1)

    perms = [_code_sort(qi[:, j], table.qi_columns[j].size, idx) for j in range(d)]
    if need_pairs:
        perms.append(_code_sort(sa, max(table.n_sa, 1), idx))
    out = np.full(n, -1, dtype=np.int64)
    next_id = 0
    sizes = np.array([n], dtype=np.int64)
    is_left = np.zeros(n, dtype=bool)
    pair_of_row = np.zeros(n, dtype=idx) if halves_sa else None

    while sizes.size:
        n_groups = sizes.size
        n_act = int(sizes.sum())
        starts = _exclusive_cumsum(sizes)
        ends = starts + sizes
        every = np.arange(n_groups)

        # SA statistics of the groups, from the (group, SA) pairs of the SA order
        bounded = pair_tot = pair_first = pair_count = pair_w = pair_sa = None
        if need_pairs:
            s_sorted = sa[perms[d]]
            change = np.empty(n_act, dtype=bool)
            change[0] = True
            np.not_equal(s_sorted[1:], s_sorted[:-1], out=change[1:])
            change[starts[1:]] = True
            pair_start = np.flatnonzero(change)
            pair_tot = np.diff(np.append(pair_start, n_act))
            pair_pos = np.cumsum(change, dtype=idx)
            pair_pos -= 1
            pair_first = pair_pos[starts].astype(np.int64)
            pair_count = np.diff(np.append(pair_first, pair_start.size))
            if sens_mask is not None:
                pair_w = sens_mask[s_sorted[pair_start]]
            bounded = _reduce(pair_tot, pair_w, reducer, pair_first)
            if rule.reads_halves_hist:
                pair_sa = s_sorted[pair_start].astype(np.int64)
            if pair_of_row is not None:
                pair_of_row[perms[d]] = pair_pos
            del s_sorted, change, pair_pos

        # candidate cuts: normalized range and |L| of every group on every dimension
        norm = np.zeros((n_groups, d), dtype=np.float64)
        n_left = np.empty((n_groups, d), dtype=np.int64)
        for j in range(d):
            col, p = qi[:, j], perms[j]

            def code_at(pos: np.ndarray, col: np.ndarray = col, p: np.ndarray = p) -> np.ndarray:
                return col[p[pos]]

            spread = code_at(ends - 1) - code_at(starts)
            if widths[j] > 0:
                norm[:, j] = spread / widths[j]
            nl = sizes.copy()  # |L| = |G|: not a cut
            g = np.flatnonzero(spread > 0)
            if strict:
                s, e, m = starts[g], ends[g], sizes[g]
                if lower:  # L = {t <= v}, v the value at sorted position ceil(m/2) - 1
                    med = s + (m + 1) // 2 - 1
                    nl[g] = _search(code_at, med + 1, e, code_at(med), True) - s
                else:  # L = {t < v}, v the value at sorted position floor(m/2)
                    med = s + m // 2
                    nl[g] = _search(code_at, s, med, code_at(med), False) - s
            else:
                nl[g] = (sizes[g] + 1) // 2 if lower else sizes[g] // 2
            n_left[:, j] = nl
        cand = (n_left > 0) & (n_left < sizes[:, None])

        # allowed cuts
        allowed = np.zeros((n_groups, d), dtype=bool)
        if sa_log is not None and rule.reads_group_sa:
            _log_groups(sa_log, perms[0], starts, sizes, np.flatnonzero(cand.any(axis=1)))
        if not halves_sa:
            gi, ji = np.nonzero(cand)
            if gi.size:
                stats = CutStats(
                    sizes[gi], n_left[gi, ji], None if bounded is None else bounded[gi]
                )
                allowed[gi, ji] = rule.allowed(stats)
        else:
            # try each group's dimensions in its order, reading halves only when needed
            assert pair_of_row is not None and pair_tot is not None and bounded is not None
            assert pair_first is not None and pair_count is not None
            order = np.argsort(-np.where(cand, norm, -1.0), axis=1, kind="stable")
            n_cand = cand.sum(axis=1)
            undecided = n_cand > 0
            for r in range(d):
                todo = np.flatnonzero(undecided & (n_cand > r))
                if not todo.size:
                    break
                dims = order[todo, r]
                for j in range(d):
                    g = todo[dims == j]
                    if not g.size:
                        continue
                    nl, m = n_left[g, j], sizes[g]
                    small_left = nl <= m - nl
                    length = np.where(small_left, nl, m - nl)
                    pos = _ranges(np.where(small_left, starts[g], starts[g] + nl), length)
                    pid = pair_of_row[perms[j][pos]].astype(np.int64)
                    pf, pc = pair_first[g], pair_count[g]
                    local_first = _exclusive_cumsum(pc)
                    pid -= np.repeat(pf - local_first, length)
                    cnt = np.bincount(pid, minlength=int(pc.sum()))
                    pairs = _ranges(pf, pc)
                    w = None if pair_w is None else pair_w[pairs]
                    b_small = _reduce(cnt, w, reducer, local_first)
                    b_other = _reduce(pair_tot[pairs] - cnt, w, reducer, local_first)
                    h_left = h_right = None
                    if pair_sa is not None:  # full histograms of the halves
                        cand_of_pair = np.repeat(np.arange(g.size), pc)
                        small = np.zeros((g.size, n_sa_hist), dtype=np.int64)
                        small[cand_of_pair, pair_sa[pairs]] = cnt
                        other = np.zeros_like(small)
                        other[cand_of_pair, pair_sa[pairs]] = pair_tot[pairs] - cnt
                        h_left = np.where(small_left[:, None], small, other)
                        h_right = np.where(small_left[:, None], other, small)
                    stats = CutStats(
                        m,
                        nl,
                        bounded[g],
                        np.where(small_left, b_small, b_other),
                        np.where(small_left, b_other, b_small),
                        h_left,
                        h_right,
                    )
                    if sa_log is not None:
                        _log_halves(sa_log, perms[j], starts[g], m, nl)
                    ok = np.asarray(rule.allowed(stats), dtype=bool)
                    allowed[g[ok], j] = True
                    undecided[g[ok]] = False

        # first allowed dimension in order of decreasing normalized range (ties: lower index)
        best = np.argmax(np.where(allowed, norm, -1.0), axis=1)
        split = allowed[every, best]
        nl_best = n_left[every, best]

        # finished groups leave with their final ids
        if not split.all():
            done = np.flatnonzero(~split)
            pos = _ranges(starts[done], sizes[done])
            out[perms[0][pos]] = np.repeat(next_id + np.arange(done.size), sizes[done])
            next_id += done.size
            if not split.any():
                break
            keep = _ranges(starts[split], sizes[split])
            perms = [p[keep] for p in perms]
            sizes, nl_best, best = sizes[split], nl_best[split], best[split]
            starts = _exclusive_cumsum(sizes)
            n_act = int(sizes.sum())

        # which rows go left: the first |L| positions of the group in its chosen dimension
        for j in range(d):
            g = np.flatnonzero(best == j)
            if not g.size:
                continue
            pos = _ranges(starts[g], sizes[g])
            rank = pos - np.repeat(starts[g], sizes[g])
            is_left[perms[j][pos]] = rank < np.repeat(nl_best[g], sizes[g])

        # split every order stably: L keeps the group's start, R starts |L| further
        start_m1 = np.repeat((starts - 1).astype(idx), sizes)
        right_base = np.arange(n_act, dtype=idx)
        right_base += np.repeat(nl_best.astype(idx), sizes)
        has_prev = starts > 0
        for i, p in enumerate(perms):
            left = is_left[p]
            lefts = np.cumsum(left, dtype=idx)  # lefts in [0, pos]
            before = np.zeros(sizes.size, dtype=idx)
            before[has_prev] = lefts[starts[has_prev] - 1]
            lefts -= np.repeat(before, sizes)  # lefts in [start, pos]
            dest = np.where(left, start_m1 + lefts, right_base - lefts)
            new_p = np.empty_like(p)
            new_p[dest] = p
            perms[i] = new_p
        new_sizes = np.empty(2 * sizes.size, dtype=np.int64)
        new_sizes[0::2] = nl_best
        new_sizes[1::2] = sizes - nl_best
        sizes = new_sizes

    assert (out >= 0).all()
    return Partition.from_labels(out).group


def _log_groups(
    sa_log: SAReadLog, perm: np.ndarray, starts: np.ndarray, sizes: np.ndarray, g: np.ndarray
) -> None:
    """Record that ``c(G)`` was read for the groups ``g`` (segments of ``perm``)."""
    pos = _ranges(starts[g], sizes[g])
    sa_log.record(perm[pos], np.repeat(g, sizes[g]), "S_max of the group being cut")


def _log_halves(
    sa_log: SAReadLog, perm: np.ndarray, starts: np.ndarray, sizes: np.ndarray, nl: np.ndarray
) -> None:
    """Record that ``c(L)`` and ``c(R)`` were read for candidate cuts (groups are segments of
    ``perm``, the order of the cut dimension; ``L`` = the first ``nl`` positions)."""
    pos = _ranges(starts, sizes)
    rank = pos - np.repeat(starts, sizes)
    half = 2 * np.repeat(np.arange(sizes.size), sizes) + (rank >= np.repeat(nl, sizes))
    sa_log.record(perm[pos], half, "S_max of the candidate halves")


def _reduce(
    counts: np.ndarray, weight: np.ndarray | None, reducer: np.ufunc, first: np.ndarray
) -> np.ndarray:
    """Per-group bounded count from per-pair counts (pairs sorted by group)."""
    if weight is not None:
        counts = counts * weight
    return reducer.reduceat(counts, first)
