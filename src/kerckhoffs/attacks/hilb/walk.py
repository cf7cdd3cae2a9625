"""Algorithm 7's walk over Hilb's order (paper 000, Jin, Zhang, Das, section 8.3.1):
deterministic groups (line 5), vulnerable groups (lines 6-7), the union rule's compromised
tuples and the skip inferences the posteriors read. The rules, and what an alignment by cells
leaves open, are in :mod:`kerckhoffs.attacks.hilb.order`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from kerckhoffs.attacks.hilb.align import Alignment
from kerckhoffs.attacks.hilb.inputs import ATTACK
from kerckhoffs.attacks.hilb.line5 import RangeMax, line5_cut, smax_suffix
from kerckhoffs.errors import ParameterError

__all__ = ["Algorithm7", "Uncertain", "uncertain_bounds", "walk"]


@dataclass(frozen=True, eq=False)
class Algorithm7:
    """What Algorithm 7 finds on one release (group ids are the release's partition ids).

    ``order``: the groups by their lowest row in Hilbert order (the attack's order);
    ``deterministic``: how many leading groups of ``order`` pass line 5 (the walk stops at
    ``order[deterministic]``); ``vulnerable``: bool per group (line 7); ``union``: bool per row,
    the compromised tuples of the union rule (``docs/theory/asap.md#err-hilb-attack-loop``). The
    inferences the posteriors use (each skipped row with the first and the last deterministic group
    skipping it, each deterministic group with its first skipped row; distinct): ``pair_group``
    (``G1``), ``pair_row`` (the skipped row ``u``) and ``pair_prefix`` (``k``, members of ``G1``
    before ``u``). ``positions``: each row's rank in ``(Q_T, row id)`` order; ``l`` the diversity
    parameter; ``ties`` the tie rule used; ``certain``: per row, whether its group is certain
    (an alignment's settled rows; ``None``: every row). A ``G1`` with rows whose individual is
    not known has its certain rows as its first members (those before ``u``).
    """

    l: int  # noqa: E741
    ties: str
    order: np.ndarray
    deterministic: int
    vulnerable: np.ndarray
    union: np.ndarray
    pair_group: np.ndarray
    pair_row: np.ndarray
    pair_prefix: np.ndarray
    positions: np.ndarray
    certain: np.ndarray | None = None

    @property
    def vulnerable_groups(self) -> np.ndarray:
        """The vulnerable groups' ids, in the attack's order."""
        return self.order[self.vulnerable[self.order]]

    @property
    def compromised(self) -> int:
        """Tuples compromised by the union rule (paper 000 Figure 9's measure)."""
        return int(self.union.sum())


@dataclass(frozen=True, eq=False)
class Uncertain:
    """What an alignment leaves open (:mod:`kerckhoffs.attacks.hilb.align`), for
    :func:`walk` with ``ties="unordered"``; keys are dense ranks of ``Q_T``.

    ``group_key`` and ``group_sure``: the lowest and the highest ``Q_T`` each group's first
    member can have (the lowest ``Q_T`` it may hold, the lowest it certainly holds);
    ``group_resolved``: its members' ``Q_T`` are all known; ``group_open_min``: the lowest
    ``Q_T`` of the individuals it may hold whose count in it is not fixed (the maximum int64
    for a resolved group); ``row_key``: per row, the lowest ``group_key`` of the groups it can
    be in; ``row_settled``: per row, its group is certain.
    """

    group_key: np.ndarray
    group_sure: np.ndarray
    group_resolved: np.ndarray
    group_open_min: np.ndarray
    row_key: np.ndarray
    row_settled: np.ndarray


def uncertain_bounds(alignment: Alignment, group: np.ndarray, qrank: np.ndarray) -> Uncertain:
    """The bounds :func:`walk` needs from an alignment: each group's lowest possible
    first ``Q_T`` (its settled rows and the types it may hold), whether that is certain (a
    settled row, or a type it holds for sure, has it), whether all its members are known, and
    each row's lowest possible group key."""
    n_groups = int(group.max()) + 1 if group.size else 0
    n_types = int(alignment.type_settled.shape[0])
    top = np.iinfo(np.int64).max
    q_type = np.zeros(n_types, dtype=np.int64)
    q_type[alignment.row_type] = qrank  # one Q_T per type (identical QI vectors)
    settled = alignment.settled
    o_type, o_group = alignment.open_type, alignment.open_group
    low = np.full(n_groups, top, dtype=np.int64)  # lowest Q_T a member can have
    np.minimum.at(low, group[settled], qrank[settled])
    sure = low.copy()  # an upper bound on its first Q_T: a member it certainly has, ...
    np.minimum.at(low, o_group, q_type[o_type])
    forced = alignment.open_lo > 0
    np.minimum.at(sure, o_group[forced], q_type[o_type[forced]])
    # ... or the lowest of its open members when they are the highest its open counts allow
    need = np.bincount(group, minlength=n_groups) - np.bincount(group[settled], minlength=n_groups)
    q_open = q_type[o_type]
    srt = np.lexsort((-q_open, o_group))
    g_s, hi_s = o_group[srt], alignment.open_hi[srt]
    cum = np.cumsum(hi_s)
    cum -= np.r_[0, cum][np.searchsorted(g_s, g_s, side="left")]  # within each group
    hit = np.flatnonzero(cum >= need[g_s])
    if hit.size:
        g_hit, at = np.unique(g_s[hit], return_index=True)
        sure[g_hit] = np.minimum(sure[g_hit], q_open[srt][hit[at]])
    resolved = np.bincount(o_group, minlength=n_groups) == 0
    open_min = np.full(n_groups, top, dtype=np.int64)
    np.minimum.at(open_min, o_group, q_open)
    type_low = np.full(n_types, top, dtype=np.int64)
    np.minimum.at(type_low, o_type, low[o_group])
    row_key = np.where(settled, low[group], type_low[alignment.row_type])
    return Uncertain(low, sure, resolved, open_min, row_key, settled)


def walk(
    pos: np.ndarray,
    qrank: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
    ties: str,
    unc: Uncertain | None = None,
) -> Algorithm7:
    n = int(group.shape[0])
    group = group.astype(np.int64)
    n_groups = int(group.max()) + 1 if n else 0
    empty = np.empty(0, dtype=np.int64)
    if n == 0:
        return Algorithm7(
            l, ties, empty, 0, np.zeros(0, bool), np.zeros(0, bool), empty, empty, empty, pos
        )
    unordered = ties == "unordered"
    if unc is not None and not unordered:
        raise ParameterError(
            f"{ATTACK}: a population aligned by cells has no row order; use ties=unordered"
        )
    order = np.empty(n, dtype=np.int64)  # row at each position
    order[pos] = np.arange(n, dtype=np.int64)
    sizes = np.bincount(group, minlength=n_groups)
    first = np.full(n_groups, n, dtype=np.int64)
    np.minimum.at(first, group, pos)
    last = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(last, group, pos)
    if unc is None:
        attack_order = np.argsort(first, kind="stable")  # line 2: by lowest (Q_T, row id)
    else:  # by the lowest Q_T its first member can have (exact for the groups walked)
        attack_order = np.lexsort((first, unc.group_key))
    rank = np.empty(n_groups, dtype=np.int64)
    rank[attack_order] = np.arange(n_groups)
    j_by_pos = rank[group[order]]
    sz = sizes[attack_order]

    qrank_by_pos = qrank[order]
    stop, low_q, row_key_by_pos = _line5_stop(
        group,
        bucket,
        l,
        rank,
        order,
        attack_order,
        first,
        j_by_pos,
        sz,
        qrank_by_pos,
        unordered,
        unc,
    )

    # skips: the row at position p is skipped by rank i < stop iff i < limit(p) and p < end_i
    # (limit: the ranks certainly emitted before p's group, whose first rows all precede p)
    start = first[attack_order[:stop]] + 1
    end = last[attack_order[:stop]]
    if unordered:  # strictly below the group's largest Q_T; only an earlier class skips
        tie_start = np.flatnonzero(np.r_[True, qrank_by_pos[1:] != qrank_by_pos[:-1]])
        end = tie_start[qrank_by_pos[end]]
        limit = np.minimum(np.searchsorted(low_q, row_key_by_pos, side="left"), stop)
    else:
        limit = np.minimum(j_by_pos, stop)
    if unc is not None:
        start, end = _aligned_ranges(unc, attack_order[:stop], qrank_by_pos, start, end)
    reach = np.maximum.accumulate(end) if stop else np.zeros(0, dtype=np.int64)
    skip_lo = np.searchsorted(reach, np.arange(n), side="right")  # the first rank skipping p
    skipped = np.flatnonzero(skip_lo < limit)
    # line 6: the first skipped row of each deterministic group (G~ is non-empty iff it exists)
    first_skip = RangeMax(limit).first_above(start, end, np.arange(stop))
    has_skip = first_skip < end
    vul_rank = np.zeros(n_groups, dtype=bool)
    vul_rank[:stop] = has_skip & (sz[:stop] + 1 < 2 * l)  # line 7
    vulnerable = np.zeros(n_groups, dtype=bool)
    vulnerable[attack_order] = vul_rank
    # union rule: the vulnerable groups and the groups of the rows they skip
    vreach = np.maximum.accumulate(np.where(vul_rank[:stop], end, -1)) if stop else reach
    p_all = np.arange(n)
    by_vul = np.zeros(n, dtype=bool)
    has_lim = limit > 0
    by_vul[has_lim] = vreach[limit[has_lim] - 1] > p_all[has_lim]
    if unc is not None:  # a skipped row of an uncertain group names no group
        settled_by_pos = unc.row_settled[order]
        by_vul &= settled_by_pos
        skipped = skipped[settled_by_pos[skipped]]
        first_skip = RangeMax(np.where(settled_by_pos, limit, -1)).first_above(
            start, end, np.arange(stop)
        )
    hit = vulnerable.copy()
    hit[group[order[by_vul]]] = True

    pair_i, pair_row, k = _inferences(
        order,
        skip_lo,
        skipped,
        limit,
        end,
        first_skip,
        stop,
        j_by_pos,
        qrank_by_pos,
        unordered,
        unc,
    )
    return Algorithm7(
        l,
        ties,
        attack_order,
        stop,
        vulnerable,
        hit[group],
        attack_order[pair_i],
        pair_row,
        k.astype(np.int64),
        pos,
        None if unc is None else unc.row_settled,
    )


def _line5_stop(
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
    rank: np.ndarray,
    order: np.ndarray,
    attack_order: np.ndarray,
    first: np.ndarray,
    j_by_pos: np.ndarray,
    sz: np.ndarray,
    qrank_by_pos: np.ndarray,
    unordered: bool,
    unc: Uncertain | None,
) -> tuple[int, np.ndarray, np.ndarray]:
    """Line 5 of :func:`walk`: how many leading groups of the attack's order are deterministic.
    With ``ties="unordered"`` also each group's lowest ``Q_T`` key in that order and each
    position's row key (the classes the skips read; empty arrays otherwise)."""
    n = int(group.shape[0])
    n_groups = int(rank.shape[0])
    low_q = row_key_by_pos = np.empty(0, dtype=np.int64)
    # line 5: S_max of the rows of the groups at or after each rank (published buckets)
    smax_from = smax_suffix(bucket, rank[group], n_groups)
    remaining = n - (np.cumsum(sz) - sz)
    if unordered:  # classes of groups sharing their lowest Q_T, in an unknown order
        if unc is None:
            low_q = qrank_by_pos[first[attack_order]]
            row_key_by_pos = low_q[j_by_pos]
        else:
            low_q = unc.group_key[attack_order]
            row_key_by_pos = unc.row_key[order]
        if unc is None:
            new_class = np.r_[True, low_q[1:] != low_q[:-1]]
            starts = np.flatnonzero(new_class)
            cls_end = np.r_[starts[1:], n_groups][np.cumsum(new_class) - 1]
            cls_start = starts[np.cumsum(new_class) - 1]
            # line 5 whatever the order inside the class: fewest rows left, largest S_max
            ok = np.r_[remaining, 0][cls_end] >= l * smax_from[cls_start]
            stop = int(np.argmin(ok)) if not ok.all() else n_groups
        else:  # deterministic: below the first Q_T from which some group may fail line 5
            cut = line5_cut(unc.group_key, unc.group_sure, group, bucket, l)
            stop = int(np.searchsorted(low_q, cut, side="left"))
    else:
        ok = remaining - sz >= l * smax_from
        stop = int(np.argmin(ok)) if not ok.all() else n_groups
    return stop, low_q, row_key_by_pos


def _inferences(
    order: np.ndarray,
    skip_lo: np.ndarray,
    skipped: np.ndarray,
    limit: np.ndarray,
    end: np.ndarray,
    first_skip: np.ndarray,
    stop: int,
    j_by_pos: np.ndarray,
    qrank_by_pos: np.ndarray,
    unordered: bool,
    unc: Uncertain | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The skip inferences of :func:`walk` the posteriors read, as (rank of ``G1`` in the
    attack's order, skipped row ``u``, ``k`` members of ``G1`` before ``u``)."""
    n = int(order.shape[0])
    # the inferences used for posteriors: each skipped row with its first and its last
    # skipper, and each deterministic group with its first skipped row (rows of certain groups)
    first_skipper = skip_lo[skipped]
    last_skipper = RangeMax(end).last_above(first_skipper, limit[skipped], skipped)
    det = np.flatnonzero(first_skip < end)
    pair = np.sort(
        np.concatenate(
            [first_skipper * n + skipped, last_skipper * n + skipped, det * n + first_skip[det]]
        )
    )
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if pair.size else pair
    pair_i, pair_p = pair // n, pair % n
    pair_row = order[pair_p]
    # k: members of G1 before u (row order) / with Q_T at most u's (unordered); with an
    # alignment, its settled rows (its other members come after u, see ``end`` in walk)
    in_det = j_by_pos < stop
    if unc is not None:
        in_det &= unc.row_settled[order]
    mem_key = np.flatnonzero(in_det)  # positions of deterministic rows, ascending
    mem_rank = j_by_pos[mem_key]
    srt = np.argsort(mem_rank, kind="stable")
    mem_rank, mem_key = mem_rank[srt], mem_key[srt]
    side: Literal["left", "right"]
    if unordered:
        mem_key, u_key, side = qrank_by_pos[mem_key], qrank_by_pos[pair_p], "right"
    else:
        u_key, side = pair_p, "left"
    flat = mem_rank * (n + 1) + mem_key  # ascending: by rank, then key
    mem_start = np.concatenate([[0], np.cumsum(np.bincount(mem_rank, minlength=stop))])
    k = np.searchsorted(flat, pair_i * (n + 1) + u_key, side=side) - mem_start[pair_i]
    return pair_i, pair_row, k


def _aligned_ranges(
    unc: Uncertain,
    det_g: np.ndarray,
    qrank_by_pos: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The ranges of positions the deterministic groups ``det_g`` of :func:`walk` search for
    skipped rows, under an alignment.

    A group whose members are not all known still skips the rows below every member it may
    hold beyond its settled rows, when its first member is known (so is its place in the
    order): those rows lie inside its range (an unknown member comes after them) and its
    members before them are its settled rows, so ``k`` is exact. Any other unresolved group
    infers nothing (it may still be deterministic, which is all the walk past it needs). Rows
    from its known first ``Q_T`` on are searched (its laid-out rows may not be its members)."""
    first_known = unc.group_key[det_g] == unc.group_sure[det_g]
    below_open = np.searchsorted(qrank_by_pos, unc.group_open_min[det_g], side="left")
    resolved = unc.group_resolved[det_g]
    end = np.where(resolved, end, np.where(first_known, below_open, -1))
    key_start = np.searchsorted(qrank_by_pos, unc.group_key[det_g], side="left") + 1
    start = np.where(resolved, start, key_start)
    return start, end
