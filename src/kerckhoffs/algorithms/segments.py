"""Small vectorized helpers over sorted runs of keys, shared by the algorithms."""

from __future__ import annotations

import numpy as np


def rank_within(sorted_keys: np.ndarray) -> np.ndarray:
    """Position of each element inside its run of equal keys (keys already sorted).

    ``[3, 3, 5, 7, 7, 7] -> [0, 1, 0, 0, 1, 2]``: the k-th row of a group, the k-th value drawn
    from a bucket, without a Python loop.
    """
    n = sorted_keys.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    return np.arange(n) - first
