"""MDAV grouping as it was before the type-folded version (kept as the benchmark's baseline):
row by row, a fresh masked centroid every round (numpy's pairwise sum over the compacted rows),
and the distance to ``r`` computed twice. Same spec and tie rule; the centroid's last bit
may differ, and with it a tie in distance to the centroid."""

from __future__ import annotations

import numpy as np


def _nearest(d: np.ndarray, first: int, k: int) -> np.ndarray:
    """Positions of ``first`` and the ``k - 1`` other points nearest to it (ties: lowest
    position, i.e. lowest row id since positions keep row order). Overwrites ``d[first]``."""
    d[first] = -1.0
    if k >= d.size:
        return np.arange(d.size)
    thr = np.partition(d, k - 1)[k - 1]
    below = np.flatnonzero(d < thr)
    at = np.flatnonzero(d == thr)[: k - below.size]
    return np.concatenate([below, at])


def _sq_dist(cols: np.ndarray, point: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance of every column of ``cols`` ([d, n]) to ``point`` ([d])."""
    out.fill(0.0)
    for j in range(cols.shape[0]):
        np.subtract(cols[j], point[j], out=tmp)
        np.multiply(tmp, tmp, out=tmp)
        out += tmp
    return out


def mdav_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Group id per row of ``x`` (float [n, d]) by MDAV; ids in order of formation.

    The points are kept transposed ([d, n], each coordinate contiguous) in row order, so
    ``argmax`` and the partial selection break ties by row id. Grouped points are masked out
    (distance -1 for the farthest search, +inf for the nearest) and the arrays are compacted
    once a quarter of them is dead, so each round costs a few passes over the live points.
    """
    n = x.shape[0]
    group = np.full(n, -1, dtype=np.int32)
    ids = np.arange(n)
    cols = np.ascontiguousarray(x.T, dtype=np.float64)
    alive = np.ones(n, dtype=np.float64)  # 1.0 live, 0.0 grouped (a weight for the centroid)
    n_alive = n
    buf_out = np.empty(n)
    buf_tmp = np.empty(n)
    cols_w = np.empty_like(cols)
    next_id = 0

    def dist(point: np.ndarray) -> np.ndarray:
        m = ids.size
        return _sq_dist(cols, point, buf_out[:m], buf_tmp[:m])

    def centroid() -> np.ndarray:
        # numpy's own (pairwise) sum, not a BLAS product: BLAS may split the sum over threads
        # differently from run to run and machine to machine, and the last bit of the centroid
        # decides ties in the farthest-point search
        return np.multiply(cols, alive, out=cols_w).sum(axis=1) / n_alive

    def farthest_from(point: np.ndarray) -> int:
        d = dist(point)
        d[alive == 0.0] = -1.0
        return int(np.argmax(d))

    def take(center: int) -> None:
        nonlocal next_id, ids, cols, cols_w, alive, n_alive
        d = dist(cols[:, center].copy())
        d[alive == 0.0] = np.inf
        sel = _nearest(d, center, k)
        group[ids[sel]] = next_id
        next_id += 1
        alive[sel] = 0.0
        n_alive -= sel.size
        if n_alive < 0.75 * ids.size:
            keep = alive > 0.0
            ids, cols, alive = ids[keep], np.ascontiguousarray(cols[:, keep]), alive[keep]
            cols_w = np.empty_like(cols)

    while n_alive >= 3 * k:
        r = farthest_from(centroid())
        r_point = cols[:, r].copy()
        take(r)
        take(farthest_from(r_point))
    if n_alive >= 2 * k:
        take(farthest_from(centroid()))
    rest = ids[alive > 0.0]
    if rest.size:
        group[rest] = next_id
    return group
