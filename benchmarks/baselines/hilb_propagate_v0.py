"""The Hilb attack's count propagation as it was before dirty segments (kept as the
benchmark's baseline): every round recomputes the bounds of every type and every group, then
the tight-cell constraints. Same rounds and bounds as the current version (asserted by the
benchmark and, against a transcription, by the tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kerckhoffs.attacks.hilb.align import _misfit


def _propagate(
    et: np.ndarray,
    eg: np.ndarray,
    ct: np.ndarray,
    sizes: np.ndarray,
    constraints: list[Any],
    max_rounds: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Bounds on every count (module docstring), and the number of rounds run. Sums run over
    contiguous segments: pairs come sorted by type, and one permutation sorts them by group."""
    n_groups = sizes.size
    g_counts = np.bincount(eg, minlength=n_groups)
    if (g_counts == 0).any():
        raise _misfit("a group whose cells cover no individual")
    t_counts = np.bincount(et, minlength=ct.size)  # et is sorted, every type has pairs
    by_group = np.argsort(eg, kind="stable")
    g_starts = np.cumsum(g_counts) - g_counts
    t_starts = np.cumsum(t_counts) - t_counts
    lo = np.zeros(et.size, dtype=np.int32)
    hi = np.minimum(ct[et], sizes[eg]).astype(np.int32)
    rounds = 0
    while rounds < max_rounds:  # a loop over rounds of propagation
        rounds += 1
        changed = 0
        for side in (0, 1):
            # per type, the sum over its groups is its count; per group, the sum over its
            # types is its size: each pair is at most what the others' lows leave, at least
            # what the others' highs leave
            if side == 0:
                cap, starts, counts, lo_s, hi_s = ct, t_starts, t_counts, lo, hi
            else:
                cap, starts, counts = sizes, g_starts, g_counts
                lo_s, hi_s = lo[by_group], hi[by_group]
            s_lo = np.add.reduceat(lo_s, starts, dtype=np.int64)
            s_hi = np.add.reduceat(hi_s, starts, dtype=np.int64)
            if (s_lo > cap).any() or (s_hi < cap).any():
                raise _misfit("the groups' sizes")
            new_hi = np.minimum(hi_s, np.repeat((cap - s_lo).astype(np.int32), counts) + lo_s)
            new_lo = np.maximum(lo_s, np.repeat((cap - s_hi).astype(np.int32), counts) + hi_s)
            changed += int(np.count_nonzero(new_hi != hi_s)) + int(np.count_nonzero(new_lo != lo_s))
            if side == 0:
                lo, hi = new_lo, new_hi
            else:
                lo[by_group], hi[by_group] = new_lo, new_hi
        before = lo.copy() if constraints else lo
        for c in constraints:
            c.tighten(lo, hi)
        if constraints:
            changed += int(np.count_nonzero(before != lo))
        if (lo > hi).any():
            raise _misfit("the groups' sizes and cells")
        if not changed:
            break
    return lo.astype(np.int64), hi.astype(np.int64), rounds
