"""Algorithm 7's line 5 when the order of the groups is only partly known, and the vectorized
searches the walk runs over Hilb's order (paper 000, Jin, Zhang, Das, Algorithm 7, section
8.3.1; the walk is :mod:`kerckhoffs.attacks.hilb.walk`).

Line 5 keeps walking while the rows left after a group are at least ``l`` times ``S_max`` of
the rows left with it. When a release is read from files, each group's first ``Q_T`` is known
only to lie in a range (:mod:`kerckhoffs.attacks.hilb.align`); :func:`line5_cut` gives the
lowest first ``Q_T`` from which some group may fail line 5, so the groups below it are
deterministic. :func:`smax_suffix` and :class:`RangeMax` are the O(n log n) searches the walk's
line 5 and line 6 read.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RangeMax", "line5_cut", "line5_cut_by_groups", "line5_cut_by_sets", "smax_suffix"]

_BLOCK = 16  # values per block of the range-maximum table


def line5_cut(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int:
    """The lowest ``Q_T`` key ``q`` such that a group emitted before a group of first key ``q``
    may have failed line 5, when group ``f``'s first key is only known to lie in ``[low[f],
    high[f]]``: groups of first key below the cut are deterministic. The larger of two sound
    cuts (:func:`line5_cut_by_sets`, and :func:`line5_cut_by_groups` when it applies)."""
    cut = line5_cut_by_sets(low, high, group, bucket, l)
    by_groups = line5_cut_by_groups(low, high, group, bucket, l)
    return cut if by_groups is None else max(cut, by_groups)


def line5_cut_by_sets(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int:
    """If ``f`` was emitted before a group of key ``q``, its first key ``x`` lies in ``[low[f],
    min(high[f], q)]``; the tuples remaining after it include the groups certainly after it
    (``low > x``, at least those with ``low > min(high[f], q)``) and lie in the groups not
    certainly before it (``high >= low[f]``), so line 5 holds at ``f`` when the rows of the
    first set are at least ``l`` times ``S_max`` of the second. The rows side shrinks as ``q``
    grows: ``f`` passes up to a largest ``q`` (``thr``), and may fail from ``max(low[f], thr +
    1)`` on, if ``high[f] > thr``; the cut is the least of these."""
    n_groups = low.shape[0]
    sizes = np.bincount(group, minlength=n_groups)
    by_low = np.argsort(low, kind="stable")
    low_sorted = low[by_low]
    rows_from = np.cumsum(sizes[by_low][::-1])[::-1]  # rows of groups by_low[k:], decreasing
    by_high = np.argsort(high, kind="stable")
    rank = np.empty(n_groups, dtype=np.int64)
    rank[by_high] = np.arange(n_groups)
    smax_from = np.r_[smax_suffix(bucket, rank[group], n_groups), 0]
    need = l * smax_from[np.searchsorted(high[by_high], low, side="left")]
    # the last k with rows_from[k] >= need; f passes while {low > x} covers by_low[k:]
    k = np.searchsorted(-rows_from, -need, side="right") - 1
    top = np.iinfo(np.int64).max
    thr = np.where(k >= 0, low_sorted[np.maximum(k, 0)] - 1, -1)
    may_fail = high > thr
    start = np.where(may_fail, np.maximum(low, thr + 1), top)
    return int(start.min()) if n_groups else top


def line5_cut_by_groups(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int | None:
    """The cut when every group is ``l``-eligible on its own (``l`` times its most frequent
    bucket's count at most its size, as in every l-diverse release); ``None`` otherwise.

    Line 5 at ``f`` reads, for every bucket ``b``: ``n - |f| - l * total_b + sum over the
    groups B emitted before f of d_b(g) >= 0``, with ``d_b(g) = l * count_b(g) - |g|``. Every
    ``d_b(g) <= 0`` here, so the left side is least when ``B`` holds every group that may
    precede ``f``: those whose lowest first key is at most ``f``'s first key ``x``, and ``x <=
    min(high[f], q)`` when ``f`` is emitted before a group of key ``q``. In groups sorted by
    ``low``, that is a prefix, and line 5 holds for every ``B`` inside the prefix of ``k``
    groups when the remaining rows (the suffix, with ``f`` if ``f`` lies in the prefix) minus
    ``|f|`` are at least ``l`` times the suffix's ``S_max`` (plus ``f``'s largest count when
    ``f`` lies in the prefix). That holds up to a largest ``k`` (a longer prefix only lowers
    it), found for all groups at once by bisection; ``f`` may fail once the prefix reaches the
    next group's ``low`` ``L``: from ``q = max(low[f], L)`` if ``high[f] >= L``.

    The per-group sums make this far tighter than :func:`line5_cut_by_sets` where the first
    keys are uncertain: on Adult's Hilb release at ``l = 3`` read from files, 11,098 groups lie
    below this cut against 170, and the first group failing line 5 on the true alignment has
    the key right after it."""
    n_groups = low.shape[0]
    if n_groups == 0:
        return None
    sizes = np.bincount(group, minlength=n_groups)
    n_b = int(bucket.max()) + 1
    keys, counts = np.unique(group * n_b + bucket, return_counts=True)
    cmax = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(cmax, keys // n_b, counts)
    if (l * cmax > sizes).any():
        return None
    by_low = np.argsort(low, kind="stable")
    low_sorted = low[by_low]
    rank = np.empty(n_groups, dtype=np.int64)
    rank[by_low] = np.arange(n_groups)
    rows_from = np.r_[np.cumsum(sizes[by_low][::-1])[::-1], 0]  # rows of ranks >= k
    smax_from = np.r_[smax_suffix(bucket, rank[group], n_groups), 0]

    def holds(k: np.ndarray) -> np.ndarray:  # line 5 at each f with the prefix of k groups
        f_after = k <= rank
        return np.where(
            f_after,
            rows_from[k] - sizes >= l * smax_from[k],
            rows_from[k] >= l * (smax_from[k] + cmax),
        )

    zero = np.zeros(n_groups, dtype=np.int64)
    ok0 = holds(zero)
    lo = np.where(ok0, 0, -1)  # holds at lo (or lo = -1), fails at hi (n_groups + 1: never)
    hi = np.where(ok0, n_groups + 1, 0)
    while True:  # bisection, for all groups at once (about log2 of the group count rounds)
        active = hi - lo > 1
        if not active.any():
            break
        mid = (lo + hi) // 2
        ok = holds(np.clip(mid, 0, n_groups))
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    top = np.iinfo(np.int64).max
    fails = lo < n_groups
    edge = np.where(lo < 0, low, low_sorted[np.clip(lo, 0, n_groups - 1)])
    start = np.where(fails & (high >= edge), np.maximum(low, edge), top)
    return int(start.min())


def smax_suffix(bucket: np.ndarray, rank: np.ndarray, n_ranks: int) -> np.ndarray:
    """Per rank ``r``: the largest count of one bucket among the rows of ranks ``>= r`` (one
    sort of (bucket, rank); a bucket's count at or after a rank, maximized from the end)."""
    n_b = int(bucket.max()) + 1
    ks = np.sort(bucket * n_ranks + rank)
    bucket_end = np.cumsum(np.bincount(bucket, minlength=n_b))
    run = np.r_[True, ks[1:] != ks[:-1]]
    first_of_run = np.flatnonzero(run)[np.cumsum(run) - 1]
    left = bucket_end[ks // n_ranks] - first_of_run  # rows of the bucket at ranks >= this
    gmax = np.zeros(n_ranks, dtype=np.int64)
    np.maximum.at(gmax, ks % n_ranks, left)
    return np.maximum.accumulate(gmax[::-1])[::-1]


class RangeMax:
    """Range-maximum searches over an int array, vectorized over queries: a sparse table of
    the maxima of blocks of ``_BLOCK`` values (memory ``n / _BLOCK * log n``), plus direct
    scans of the partial blocks at the ends of a range."""

    def __init__(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=np.int64)
        self.n = v.shape[0]
        nb = max(1, -(-self.n // _BLOCK))
        self.v = np.full(nb * _BLOCK, np.iinfo(np.int64).min, dtype=np.int64)
        self.v[: self.n] = v
        self.levels = [self.v.reshape(nb, _BLOCK).max(axis=1)]
        s = 1
        while (1 << s) <= nb:
            prev = self.levels[-1]
            half = 1 << (s - 1)
            self.levels.append(np.maximum(prev[:-half], prev[half:]))
            s += 1

    def _scan(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray, first: bool) -> np.ndarray:
        """First (or last) index in ``[lo, hi)`` with value above ``t``; ranges span at most one
        block; ``hi`` (or ``lo - 1``) when none."""
        idx = lo[:, None] + np.arange(_BLOCK)[None, :]
        inside = idx < hi[:, None]
        above = inside & (self.v[np.minimum(idx, self.v.shape[0] - 1)] > t[:, None])
        found = above.any(axis=1)
        if first:
            at = lo + np.argmax(above, axis=1)
            return np.where(found, at, hi)
        at = lo + _BLOCK - 1 - np.argmax(above[:, ::-1], axis=1)
        return np.where(found, at, lo - 1)

    def first_above(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query, the first index ``i`` in ``[lo, hi)`` with ``values[i] > t``, else ``hi``."""
        lo, hi, t = (np.asarray(a, dtype=np.int64) for a in (lo, hi, t))
        hi = np.maximum(hi, lo)
        head_end = np.minimum(hi, (lo // _BLOCK + 1) * _BLOCK)
        out = self._scan(lo, head_end, t, True)
        todo = np.flatnonzero(out >= head_end)  # not in the head block
        out[todo] = hi[todo]
        b0 = head_end[todo] // _BLOCK
        b1 = hi[todo] // _BLOCK  # full blocks b0 .. b1 - 1
        cur = b0.copy()
        tt = t[todo]
        for s in range(len(self.levels) - 1, -1, -1):  # skip blocks whose maximum is <= t
            step = 1 << s
            can = cur + step <= b1
            lvl = self.levels[s]
            can[can] &= lvl[cur[can]] <= tt[can]
            cur[can] += step
        blk = cur < b1
        lo2 = np.where(blk, cur * _BLOCK, np.maximum(b1 * _BLOCK, head_end[todo]))
        hi2 = np.where(blk, cur * _BLOCK + _BLOCK, hi[todo])
        out[todo] = self._scan(lo2, np.minimum(hi2, hi[todo]), tt, True)
        out[todo] = np.where(out[todo] >= np.minimum(hi2, hi[todo]), hi[todo], out[todo])
        return out

    def last_above(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query, the last index ``i`` in ``[lo, hi)`` with ``values[i] > t``, else
        ``lo - 1``."""
        lo, hi, t = (np.asarray(a, dtype=np.int64) for a in (lo, hi, t))
        hi = np.maximum(hi, lo)
        tail_start = np.maximum(lo, ((hi - 1) // _BLOCK) * _BLOCK)
        out = self._scan(tail_start, hi, t, False)
        todo = np.flatnonzero(out < tail_start)  # not in the tail block
        out[todo] = lo[todo] - 1
        b0 = -(-lo[todo] // _BLOCK)  # full blocks b0 .. b1 - 1
        b1 = tail_start[todo] // _BLOCK
        cur = b1.copy()
        tt = t[todo]
        for s in range(len(self.levels) - 1, -1, -1):
            step = 1 << s
            can = cur - step >= b0
            lvl = self.levels[s]
            can[can] &= lvl[cur[can] - step] <= tt[can]
            cur[can] -= step
        blk = cur > b0
        lo2 = np.where(blk, (cur - 1) * _BLOCK, lo[todo])
        hi2 = np.where(blk, cur * _BLOCK, np.minimum(b0 * _BLOCK, tail_start[todo]))
        res = self._scan(lo2, hi2, tt, False)
        out[todo] = np.where(res < lo2, lo[todo] - 1, res)
        return out
