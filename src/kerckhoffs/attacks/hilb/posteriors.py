"""The per-tuple posteriors of the Hilbert-order attack (paper 000, Jin, Zhang, Das, Algorithm
7, section 8.3.1): for each inference of the walk, the exact random-worlds posterior of an
adversary who conditions on it (the formulas are in :mod:`kerckhoffs.attacks.hilb.order`'s
docstring), vectorized over inferences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerckhoffs.attacks.hilb.inputs import ATTACK
from kerckhoffs.attacks.hilb.walk import Algorithm7
from kerckhoffs.errors import InputError

__all__ = ["Hist", "Posteriors", "argmax_at", "index_of", "pair_posteriors"]

_DENSE = 20_000_000  # largest groups x buckets histogram kept dense


class Hist:
    """Count of bucket ``b`` in group ``g`` (dense when small, else sorted sparse keys), and
    each group's (bucket, count) entries. Bucket ``n_b`` is a dummy that every group lacks
    (the padding of member matrices)."""

    def __init__(self, group: np.ndarray, bucket: np.ndarray, n_groups: int, n_b: int) -> None:
        self.stride = n_b + 1
        key = group * self.stride + bucket
        if n_groups * self.stride <= _DENSE:
            self.dense: np.ndarray | None = np.bincount(
                key, minlength=n_groups * self.stride
            ).astype(np.int32)
            self.keys = np.flatnonzero(self.dense)
            self.counts = self.dense[self.keys]
        else:
            self.dense = None
            self.keys, self.counts = np.unique(key, return_counts=True)
        self.key_group = self.keys // self.stride
        per = np.bincount(self.key_group, minlength=n_groups)
        self.start = np.cumsum(per) - per
        self.per = per

    def __call__(self, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        key = g * self.stride + b
        if self.dense is not None:
            return self.dense[key]
        i = np.minimum(np.searchsorted(self.keys, key), self.keys.size - 1)
        return np.where(self.keys[i] == key, self.counts[i], 0)

    def entries(
        self, gs: np.ndarray, bounded_bucket: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bounded (bucket, count) entries of each group of ``gs``, concatenated, with
        the index in ``gs`` each belongs to."""
        start, per = self.start[gs], self.per[gs]
        idx = np.repeat(start, per) + (np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per))
        b = self.keys[idx] % self.stride
        keep = bounded_bucket[b]
        owner = np.repeat(np.arange(gs.shape[0]), per)
        return b[keep], self.counts[idx][keep], owner[keep]


def argmax_at(size: int, idx: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target ``t``: the largest of ``values[idx == t]`` (-1 if none) and one index
    attaining it (-1 if none)."""
    best = np.full(size, -1.0)
    np.maximum.at(best, idx, values)
    arg = np.full(size, -1, dtype=np.int64)
    hit = np.flatnonzero(values == best[idx])
    arg[idx[hit]] = hit
    return best, arg


def index_of(ids: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``ids`` (ints below ``size``), ascending, and each entry's index
    among them (``np.unique(..., return_inverse=True)`` by a mask, no sort)."""
    mark = np.zeros(size, dtype=bool)
    mark[ids] = True
    slot = np.cumsum(mark) - 1
    return np.flatnonzero(mark), slot[ids]


@dataclass
class Posteriors:
    value: np.ndarray  # bucket per row (-1: nothing derived)
    posterior: np.ndarray  # per row (0: nothing derived)
    via: np.ndarray  # G1 of the inference giving it (-1: none)


def _inconsistent(row: int, g1: int, g2: int) -> InputError:
    return InputError(
        f"{ATTACK}: row {row} lies inside group {g1}'s Hilbert range but its group {g2} shares "
        "no SA value with it: the release was not made by Hilb in this Hilbert order (QI codes, "
        "bits or row order differ)"
    )


def pair_posteriors(
    a7: Algorithm7, group: np.ndarray, bucket: np.ndarray, bounded_bucket: np.ndarray
) -> Posteriors:
    """The per-tuple posteriors of the module docstring, vectorized over inferences."""
    n = group.shape[0]
    out = Posteriors(np.full(n, -1, np.int64), np.zeros(n), np.full(n, -1, np.int64))
    n_pairs = a7.pair_row.shape[0]
    if n_pairs == 0:
        return out
    group = group.astype(np.int64)
    n_groups = int(group.max()) + 1
    n_b = int(bucket.max()) + 1
    sizes = np.bincount(group, minlength=n_groups)
    hist = Hist(group, bucket, n_groups, n_b)
    bounded = np.zeros(n_b + 1, dtype=bool)  # per bucket, with the dummy n_b
    bounded[:n_b] = bounded_bucket[:n_b]

    # members of each G1 in position order, as padded [G1s, width] matrices (dummy bucket n_b)
    _, pair_slot, s1_slot, mem_row, mem_b = _g1_members(a7, group, bucket, sizes, n_b)

    # per inference: the count in G2 of each value of G1
    u = a7.pair_row
    g1 = a7.pair_group
    g2 = group[u]
    s1 = s1_slot[pair_slot].astype(float)
    s2 = sizes[g2].astype(float)
    k = a7.pair_prefix.astype(float)
    mb = mem_b[pair_slot]
    m = hist(g2[:, None], mb)
    in_c = m > 0
    c2 = m.sum(axis=1).astype(float)
    if (c2 == 0).any():
        bad = int(np.argmax(c2 == 0))
        raise _inconsistent(int(u[bad]), int(g1[bad]), int(g2[bad]))
    every = np.arange(n_pairs)
    bnd = bounded[mb]
    cb = np.where(bnd, m, 0)
    mu = cb.max(axis=1).astype(float)  # largest bounded count in C
    x_u = mb[every, np.argmax(cb, axis=1)]
    out_b = bnd & ~in_c  # bounded values of G1 that G2 lacks
    has_out = out_b.any(axis=1)
    x_out = mb[every, np.argmax(out_b, axis=1)]
    lo_c = np.where(in_c & bnd, m, np.iinfo(np.int32).max)
    mlo = lo_c.min(axis=1).astype(float)
    x_lo = mb[every, np.argmin(lo_c, axis=1)]
    has_c = mu > 0

    f_u = np.where(has_c, mu / c2, 0.0)
    s1m = np.maximum(s1 - 1, 1)
    f_pre = np.where(
        has_c,
        (mu * (s1 - 1) + (c2 - mu) * (k - 1)) / (k * c2 * s1m),
        np.where(has_out, (k - 1) / (k * s1m), 0.0),
    )
    x_pre = np.where(has_c, x_u, x_out)
    f_suf = np.where(has_out, 1 / s1m, np.where(has_c, (c2 - mlo) / (c2 * s1m), 0.0))
    x_suf = np.where(has_out, x_out, x_lo)
    m_out = _outside_counts(hist, group, bucket, bounded, g2, g1, np.where(bnd, in_c, False))
    s2m = np.maximum(s2 - 1, 1)
    f_in = np.where(has_c, mu * (c2 - 1) / (c2 * s2m), 0.0)
    f_oth = np.where(s2 > 1, np.maximum(m_out / s2m, f_in), 0.0)

    found: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # row, p, x, via
    # u itself, one inference at a time
    best, arg = argmax_at(n, u, f_u)
    r = np.flatnonzero(arg >= 0)
    found.append((r, best[r], x_u[arg[r]], g1[arg[r]]))
    # u with every inference on it at once: its value is in G2 and in each G1 that skipped it
    # (given v(u), the G1s' arrangements are independent, each equally likely to hold it early)
    found.append(_combined(u, g1, mb, m, in_c, bounded, n, n_b))
    found.append(_member_roles(a7.pair_prefix, pair_slot, g1, mem_row, f_pre, x_pre, f_suf, x_suf))
    # the other members of G2: the best inference on the group whose u is another row
    b1, a1 = argmax_at(n_groups, g2, f_oth)
    u1 = np.where(a1 >= 0, u[np.maximum(a1, 0)], -1)
    other = np.flatnonzero(u != u1[g2])
    b2 = np.full(n_groups, -1.0)
    a2 = np.full(n_groups, -1, dtype=np.int64)
    if other.size:
        b2, a2o = argmax_at(n_groups, g2[other], f_oth[other])
        a2 = np.where(a2o >= 0, other[np.maximum(a2o, 0)], -1)
    use2 = np.arange(n) == u1[group]
    v_oth = np.where(use2, b2[group], b1[group])
    a_oth = np.where(use2, a2[group], a1[group])
    r = np.flatnonzero(a_oth >= 0)
    winners, which = index_of(a_oth[r], n_pairs)  # at most two per group
    x_oth = _other_values(hist, bounded, winners, g2, g1, m_out, f_in, x_u, s2m)[which]
    found.append((r, v_oth[r], x_oth, g1[a_oth[r]]))

    for rr, vv, xx, gg in found:  # each role names a row at most once
        take = vv > out.posterior[rr]
        out.posterior[rr[take]] = vv[take]
        out.value[rr[take]] = xx[take]
        out.via[rr[take]] = gg[take]
    return out


def _combined(
    u: np.ndarray,
    g1: np.ndarray,
    mb: np.ndarray,
    m: np.ndarray,
    in_c: np.ndarray,
    bounded: np.ndarray,
    n: int,
    n_b: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each skipped row's posterior given all inferences on it: ``Pr[x] ∝ m2(x)`` over the
    values of ``G2`` that every ``G1`` skipping it holds. Returns (rows, posterior, value, G1)."""
    by_u = np.argsort(u, kind="stable")
    us = u[by_u]
    starts = np.flatnonzero(np.r_[True, us[1:] != us[:-1]])
    first = by_u[starts]  # one inference per row: its C holds the intersection
    rows = us[starts]
    if n_b <= 63:  # sets of values as bit masks
        one = np.uint64(1)
        bits = np.zeros(u.shape[0], dtype=np.uint64)
        for t in range(mb.shape[1]):  # a loop over columns
            bits |= np.where(in_c[:, t], one << mb[:, t].astype(np.uint64), np.uint64(0))
        inter = np.bitwise_and.reduceat(bits[by_u], starts)
        mb0 = mb[first]
        cand = in_c[first] & ((inter[:, None] >> mb0.astype(np.uint64)) & one).astype(bool)
    else:  # count, per (row, value), the inferences whose C holds it
        pr, pt = np.nonzero(in_c)
        keys, cnt = np.unique(u[pr] * (n_b + 1) + mb[pr, pt], return_counts=True)
        n_inf = np.bincount(u, minlength=n)
        held = keys[cnt == n_inf[keys // (n_b + 1)]]
        mb0 = mb[first]
        cand = in_c[first] & np.isin(rows[:, None] * (n_b + 1) + mb0, held)
    mm = np.where(cand, m[first], 0)
    total = mm.sum(axis=1).astype(float)
    if (total == 0).any():
        bad = int(np.argmax(total == 0))
        raise _inconsistent(int(rows[bad]), int(g1[first[bad]]), -1)
    score = np.where(bounded[mb0], mm, 0)
    best = score.max(axis=1) / total
    x = mb0[np.arange(rows.size), np.argmax(score, axis=1)]
    keep = best > 0
    return rows[keep], best[keep], x[keep], g1[first[keep]]


def _outside_counts(
    hist: Hist,
    group: np.ndarray,
    bucket: np.ndarray,
    bounded: np.ndarray,
    g2: np.ndarray,
    g1: np.ndarray,
    bounded_in_c: np.ndarray,
) -> np.ndarray:
    """Per inference: the largest count in ``G2`` of a bounded value that ``G1`` lacks."""
    n_groups = hist.per.shape[0]
    n_bounded = np.bincount(group, weights=bounded[bucket], minlength=n_groups)
    repeats = np.bincount(hist.key_group, weights=hist.counts > 1, minlength=n_groups)
    # distinct G2: some bounded value outside G1 iff G2 has more bounded rows than C has
    out = np.where(n_bounded[g2] > bounded_in_c.sum(axis=1), 1.0, 0.0)
    slow = np.flatnonzero(repeats[g2] > 0)
    if slow.size:
        b, c, owner = hist.entries(g2[slow], bounded)
        cnt = np.where(hist(g1[slow][owner], b) > 0, 0, c)
        best = np.zeros(slow.size)
        np.maximum.at(best, owner, cnt.astype(float))
        out[slow] = best
    return out


def _other_values(
    hist: Hist,
    bounded: np.ndarray,
    pairs: np.ndarray,
    g2: np.ndarray,
    g1: np.ndarray,
    m_out: np.ndarray,
    f_in: np.ndarray,
    x_u: np.ndarray,
    s2m: np.ndarray,
) -> np.ndarray:
    """The value behind ``f_oth`` for the given inferences: the most frequent bounded value of
    ``G2`` outside ``G1``, or the best value of ``C``."""
    x = x_u[pairs].copy()
    sel = np.flatnonzero((m_out[pairs] > 0) & (m_out[pairs] / s2m[pairs] >= f_in[pairs]))
    if sel.size:
        p = pairs[sel]
        b, c, owner = hist.entries(g2[p], bounded)
        score = np.where(hist(g1[p][owner], b) > 0, -1.0, c.astype(float))
        _, arg = argmax_at(sel.size, owner, score)
        x[sel] = np.where(arg >= 0, b[np.maximum(arg, 0)], x[sel])
    return x


def _g1_members(
    a7: Algorithm7, group: np.ndarray, bucket: np.ndarray, sizes: np.ndarray, n_b: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The members of each inference's ``G1`` in position order, as padded ``[G1s, width]``
    matrices: (the ``G1`` ids, each inference's index among them, their sizes, member rows
    (-1: padding), member buckets (the dummy ``n_b``: padding)). A ``G1`` that repeats a value
    is refused: Hilb's greedy step never emits one."""
    n = group.shape[0]
    n_groups = sizes.shape[0]
    g1_ids, pair_slot = index_of(a7.pair_group, n_groups)
    slot_of_group = np.full(n_groups, -1, dtype=np.int64)
    slot_of_group[g1_ids] = np.arange(g1_ids.size)
    order = np.empty(n, dtype=np.int64)
    order[a7.positions] = np.arange(n)
    rows = order[slot_of_group[group[order]] >= 0]  # their rows in position order
    if a7.certain is not None:  # certain rows first (the uncertain ones come after every u)
        rows = rows[np.argsort(~a7.certain[rows], kind="stable")]
    rows = rows[np.argsort(slot_of_group[group[rows]], kind="stable")]
    s1_slot = sizes[g1_ids]
    width = int(s1_slot.max())
    col = np.arange(rows.size) - np.repeat(np.cumsum(s1_slot) - s1_slot, s1_slot)
    mem_row = np.full((g1_ids.size, width), -1, dtype=np.int64)
    mem_row[slot_of_group[group[rows]], col] = rows
    valid_slot = mem_row >= 0
    mem_b = np.where(valid_slot, bucket[np.maximum(mem_row, 0)], n_b)
    srt = np.sort(np.where(valid_slot, mem_b, -1 - np.arange(width)), axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if dup.any():
        g = int(g1_ids[int(np.argmax(dup))])
        raise InputError(
            f"{ATTACK}: group {g} passes line 5 but repeats an SA value, which Hilb's greedy step "
            "never does: the release was not made by Hilb in this Hilbert order"
        )
    return g1_ids, pair_slot, s1_slot, mem_row, mem_b


def _member_roles(
    prefix: np.ndarray,
    pair_slot: np.ndarray,
    g1: np.ndarray,
    mem_row: np.ndarray,
    f_pre: np.ndarray,
    x_pre: np.ndarray,
    f_suf: np.ndarray,
    x_suf: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The members of ``G1`` before ``u`` (``k`` = ``prefix`` of them) and after it: the member
    at column ``t`` takes ``f_pre`` of the inferences with ``k > t`` and ``f_suf`` of those with
    ``k <= t``, the best of them. Returns (rows, posterior, value, G1)."""
    n_slots, width = mem_row.shape
    valid_slot = mem_row >= 0
    cell = pair_slot * (width + 1) + prefix
    n_cells = n_slots * (width + 1)
    pre_v, pre_a = argmax_at(n_cells, cell, f_pre)
    suf_v, suf_a = argmax_at(n_cells, cell, f_suf)
    pre_v, pre_a = pre_v.reshape(-1, width + 1), pre_a.reshape(-1, width + 1)
    suf_v, suf_a = suf_v.reshape(-1, width + 1), suf_a.reshape(-1, width + 1)
    mem_v = np.full((n_slots, width), -1.0)
    mem_a = np.full((n_slots, width), -1, dtype=np.int64)
    mem_x = np.full((n_slots, width), -1, dtype=np.int64)
    run_v = np.full(n_slots, -1.0)  # best f_pre over k > t, scanning t downwards
    run_a = np.full(n_slots, -1, dtype=np.int64)
    for t in range(width - 1, -1, -1):  # a loop over columns (at most the largest G1)
        better = pre_v[:, t + 1] > run_v
        run_v = np.where(better, pre_v[:, t + 1], run_v)
        run_a = np.where(better, pre_a[:, t + 1], run_a)
        mem_v[:, t], mem_a[:, t] = run_v, run_a
        mem_x[:, t] = np.where(run_a >= 0, x_pre[np.maximum(run_a, 0)], -1)
    run_v = np.full(n_slots, -1.0)  # best f_suf over k <= t, scanning t upwards
    run_a = np.full(n_slots, -1, dtype=np.int64)
    for t in range(width):
        better = suf_v[:, t] > run_v
        run_v = np.where(better, suf_v[:, t], run_v)
        run_a = np.where(better, suf_a[:, t], run_a)
        take = run_v > mem_v[:, t]
        mem_v[:, t] = np.where(take, run_v, mem_v[:, t])
        mem_a[:, t] = np.where(take, run_a, mem_a[:, t])
        mem_x[:, t] = np.where(take, x_suf[np.maximum(run_a, 0)], mem_x[:, t])
    ok = valid_slot & (mem_a >= 0)
    return mem_row[ok], mem_v[ok], mem_x[ok], g1[mem_a[ok]]
