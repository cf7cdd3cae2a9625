"""Small vectorized helpers over segments and sorted runs of keys, shared by the algorithms,
the m-privacy provider back-ends and the Dask engines (a module of its own: importing it
registers no algorithm)."""

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


def exclusive_cumsum(x: np.ndarray) -> np.ndarray:
    """``[0, x0, x0 + x1, ...]`` without the total: the start of each segment of sizes ``x``."""
    out = np.zeros(x.size, dtype=np.int64)
    if x.size > 1:
        np.cumsum(x[:-1], out=out[1:])
    return out


def segment_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of some segments, concatenated."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offset = np.asarray(starts, dtype=np.int64) - exclusive_cumsum(lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(offset, lengths)


__all__ = ["exclusive_cumsum", "rank_within", "segment_ranges"]
