"""Sums of SA mass spread uniformly over boxes: the evaluation engine behind the query
workload of :mod:`kerckhoffs.metrics.query_error`.

Every estimate (and ``Act``) of a COUNT query is ``sum_b m_b(R_S) prod_A |R_A & box_b(A)| /
|box_b(A)|`` over *boxes* (a published cell, or a single QI point) carrying SA mass
(:class:`Mass`). Queries are grouped by their set of QI columns; for each set the boxes are
projected onto those columns (equal projections merged, their SA masses added) and evaluated
(:func:`evaluate`) by whichever of three methods has the least estimated time: the summed-area
*cube*, blocked *dense* query x box products, or per-query *sparse* bitsets (the module
docstring of :mod:`kerckhoffs.metrics.query_error` says when each wins). No loop runs over rows
or boxes; the loops are over query column sets, query blocks, or (sparse) queries.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Partition

Method = Literal["auto", "cube", "dense", "sparse"]
#: Largest summed-area array (cells, float64) the cube method builds.
MAX_CUBE_CELLS = 1 << 24
#: Largest per-box SA table (boxes x SA values, float64) of one query column set.
MAX_MASS_CELLS = 1 << 27
#: Elements of one queries x boxes block of the dense method.
DENSE_BLOCK = 1 << 20


@dataclass(frozen=True, eq=False)
class Mass:
    """Boxes ``[lo, hi]`` (int32 [B, d], inclusive code ranges) carrying SA mass: triplets
    (``box``, ``sa``, ``weight``) spread uniformly over their box."""

    lo: np.ndarray
    hi: np.ndarray
    box: np.ndarray
    sa: np.ndarray
    weight: np.ndarray

    def point_columns(self) -> np.ndarray:
        """Whether every box is a single value on each column."""
        return np.all(self.lo == self.hi, axis=0)


def distinct_points(qi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Point id per row (distinct QI vectors) and the QI vector of each point."""
    pid = Partition.from_columns(qi).group if qi.shape[1] else np.zeros(qi.shape[0], np.int32)
    n_points = int(pid.max()) + 1 if pid.size else 0
    first = np.full(n_points, qi.shape[0], dtype=np.int64)
    np.minimum.at(first, pid, np.arange(qi.shape[0]))
    pts = np.asarray(qi[first], dtype=np.int32)
    return pid.astype(np.int64), pts


def aggregate(point: np.ndarray, sa: np.ndarray, weight: np.ndarray, n_sa: int) -> tuple:
    """Sum weights of equal (point, sa) pairs; returns the nonzero triplets."""
    key = point * n_sa + sa
    uniq, inv = np.unique(key, return_inverse=True)
    w = np.bincount(inv, weights=weight, minlength=uniq.size)
    return uniq // n_sa, (uniq % n_sa).astype(np.int64), w


def original_mass(table: Table) -> Mass:
    """The original table as points with their SA counts (what ``Act`` counts)."""
    pid, pts = distinct_points(table.qi)
    box, sa, w = aggregate(pid, table.sa.astype(np.int64), np.ones(table.n), table.n_sa)
    return Mass(pts, pts, box, sa, w)


def expand_rows(
    nnz_ptr: np.ndarray, nnz_count: np.ndarray, owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each item owned by group ``owner[i]``, the positions of that group's nonzero SA
    cells (CSR expansion without a Python loop); returns (item index, position)."""
    reps = nnz_count[owner]
    item = np.repeat(np.arange(owner.size), reps)
    offsets = np.cumsum(reps) - reps
    pos = np.arange(int(reps.sum())) - np.repeat(offsets, reps) + np.repeat(nnz_ptr[owner], reps)
    return item, pos


def check_method(method: str) -> None:
    if method not in ("auto", "cube", "dense", "sparse"):
        raise ParameterError(f"method must be auto, cube, dense or sparse, got {method!r}")


def _combos(columns: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Queries grouped by their QI column set: (columns, query indices)."""
    q = columns.shape[0]
    if columns.shape[1] == 0:
        return [((), np.arange(q))] if q else []
    uniq, inv = np.unique(columns, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(uniq.shape[0] + 1))
    return [
        (tuple(int(c) for c in uniq[u]), order[bounds[u] : bounds[u + 1]])
        for u in range(uniq.shape[0])
    ]


@dataclass(frozen=True, eq=False)
class _Projected:
    """The boxes of a :class:`Mass` projected onto one query column set, equal projections
    merged: ``lo``, ``hi`` int32 [B', qd] and their SA mass ``mass`` float64 [B', |D_S|]."""

    lo: np.ndarray
    hi: np.ndarray
    mass: np.ndarray

    @property
    def n(self) -> int:
        return int(self.lo.shape[0])


def _project(mass: Mass, cols: tuple[int, ...], n_sa: int, points: bool) -> _Projected:
    """Merge the boxes equal on ``cols`` (a hash factorize of their bounds, one bincount of the
    SA mass; no sort)."""
    c = list(cols)
    p_lo = mass.lo[:, c]
    p_hi = p_lo if points else mass.hi[:, c]
    if not c:
        box_id = np.zeros(mass.lo.shape[0], dtype=np.int64)
    else:
        key = p_lo if points else np.hstack([p_lo, p_hi])
        box_id = Partition.from_columns(key).group.astype(np.int64)
    n_b = int(box_id.max()) + 1 if box_id.size else 0
    if n_b * n_sa > MAX_MASS_CELLS:
        raise ParameterError(
            f"{n_b:,} distinct cells x {n_sa:,} SA values exceed the query estimator's "
            f"{MAX_MASS_CELLS:,}-entry SA table; use fewer query dimensions or a coarser SA"
        )
    first = np.empty(n_b, dtype=np.int64)
    first[box_id[::-1]] = np.arange(box_id.size - 1, -1, -1)
    m = np.bincount(box_id[mass.box] * n_sa + mass.sa, mass.weight, minlength=n_b * n_sa)
    return _Projected(p_lo[first], p_hi[first], m.reshape(n_b, n_sa))


#: Calibrated seconds per unit of work (2-core machine under load): summed-area cells x
#: passes, scattered corners, dense query x box x column operations, and the sparse method's
#: per-query overhead, per box scanned and per overlapping box and box-shaped column.
_CUBE_CELL, _CUBE_SCATTER = 2.7e-9, 1.4e-8
_DENSE_OP = 1.65e-9
_SPARSE_QUERY, _SPARSE_BOX, _SPARSE_HIT = 5.6e-5, 2.5e-9, 1.3e-8


def evaluate(
    mass: Mass,
    columns: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    sa_lo: np.ndarray,
    sa_hi: np.ndarray,
    sizes: Sequence[int],
    n_sa: int,
    method: Method,
) -> np.ndarray:
    """``sum_b m_b(R_S) prod_A |R_A & box_b(A)| / |box_b(A)|`` for every query.

    Per QI column set: boxes projected and merged, then the evaluation with the least
    estimated time (or the one ``method`` forces)."""
    out = np.zeros(columns.shape[0], dtype=np.float64)
    point_cols = mass.point_columns()
    for cols, idx in _combos(columns):
        qd = len(cols)
        q_lo, q_hi = lo[idx], hi[idx]
        cells = math.prod(sizes[c] + 1 for c in cols) * (n_sa + 1)
        points = bool(np.all(point_cols[list(cols)])) if qd else True
        proj = _project(mass, cols, n_sa, points)
        nnz = int(np.count_nonzero(proj.mass))
        boxy = sum(1 for k in range(qd) if np.any(proj.lo[:, k] != proj.hi[:, k]))
        # share of boxes a query's predicates all meet, from the first few queries
        probe = slice(0, 32)
        meet = np.ones((min(32, idx.size), proj.n), dtype=bool)
        for k in range(qd):
            meet &= proj.lo[None, :, k] <= q_hi[probe, k, None]
            meet &= proj.hi[None, :, k] >= q_lo[probe, k, None]
        share = float(meet.mean()) if meet.size else 1.0
        passes = qd + 1 if points else 2 * qd + 1
        cost = {
            "cube": _CUBE_CELL * cells * passes + _CUBE_SCATTER * nnz * (1 if points else 2**qd),
            "dense": _DENSE_OP * idx.size * proj.n * (3 + 5 * qd),
            "sparse": idx.size
            * (_SPARSE_QUERY + proj.n * (_SPARSE_BOX + _SPARSE_HIT * share * (1 + boxy))),
        }
        if cells > MAX_CUBE_CELLS:
            del cost["cube"]
        chosen = min(cost, key=cost.__getitem__) if method == "auto" else method
        args = (proj, sizes, cols, q_lo, q_hi, sa_lo[idx], sa_hi[idx])
        out[idx] = {"cube": _cube, "dense": _dense, "sparse": _sparse}[chosen](*args)
    return out


def _cumsum(cube: np.ndarray, axis: int) -> None:
    """In-place cumulative sum along ``axis``: slab by slab (contiguous adds) for the leading
    axes, where ``np.cumsum`` walks strided 1-D lanes several times slower."""
    length = cube.shape[axis]
    post = math.prod(cube.shape[axis + 1 :])
    if post < 8 and length > 8:
        np.cumsum(cube, axis=axis, out=cube)
        return
    v = cube.reshape(math.prod(cube.shape[:axis]), length, post)
    for i in range(1, length):
        np.add(v[:, i], v[:, i - 1], out=v[:, i])


def _cube(
    proj: _Projected,
    sizes: Sequence[int],
    cols: tuple[int, ...],
    lo: np.ndarray,
    hi: np.ndarray,
    sa_lo: np.ndarray,
    sa_hi: np.ndarray,
) -> np.ndarray:
    """Summed-area table over (projected QI domain x SA), queries by inclusion-exclusion."""
    qd = len(cols)
    n_sa = proj.mass.shape[1]
    shape = [sizes[c] + 1 for c in cols] + [n_sa + 1]
    strides = np.ones(qd + 1, dtype=np.int64)
    for k in range(qd - 1, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    cells = int(strides[0] * shape[0])
    box, sa = np.nonzero(proj.mass)
    weight = proj.mass[box, sa]
    points = bool(np.all(proj.lo == proj.hi))
    flats, weights = [], []
    # a point puts its mass at (v + 1) on every axis, and one cumulative sum per axis gives
    # the summed-area table; a box's uniform density is a difference array, +1/w at lo + 1
    # and -1/w at hi + 2 (dropped past the end), which needs two cumulative sums per QI axis
    for bits in range(1 if points else 2**qd):
        flat_box = np.zeros(proj.n, dtype=np.int64)
        coef = np.ones(proj.n, dtype=np.float64)
        valid = np.ones(proj.n, dtype=bool)
        for k, c in enumerate(cols):
            lo_c = proj.lo[:, k].astype(np.int64)
            hi_c = proj.hi[:, k].astype(np.int64)
            if points:
                flat_box += (lo_c + 1) * strides[k]
                continue
            inv_w = 1.0 / (hi_c - lo_c + 1)
            if bits >> k & 1:
                flat_box += (hi_c + 2) * strides[k]
                coef *= -inv_w
                valid &= hi_c + 2 <= sizes[c]
            else:
                flat_box += (lo_c + 1) * strides[k]
                coef *= inv_w
        keep = valid[box]
        flats.append(flat_box[box[keep]] + sa[keep] + 1)
        weights.append(coef[box[keep]] * weight[keep])
    cube = np.bincount(np.concatenate(flats), np.concatenate(weights), minlength=cells)
    cube = cube.reshape(shape)
    for k in range(qd):
        _cumsum(cube, k)
        if not points:
            _cumsum(cube, k)
    _cumsum(cube, qd)
    flat_cube = cube.reshape(-1)
    n_q = sa_lo.shape[0]
    total = np.zeros(n_q, dtype=np.float64)
    for bits in range(2 ** (qd + 1)):
        flat = np.zeros(n_q, dtype=np.int64)
        sign = 1.0
        for k in range(qd + 1):
            lower, upper = (lo[:, k], hi[:, k]) if k < qd else (sa_lo, sa_hi)
            if bits >> k & 1:
                flat += (upper.astype(np.int64) + 1) * strides[k]
            else:
                flat += lower.astype(np.int64) * strides[k]
                sign = -sign
        total += sign * flat_cube[flat]
    return total


def _sa_cum(proj: _Projected) -> np.ndarray:
    """Cumulative SA counts of each box, SA-major: float64 [|D_S| + 1, B']."""
    cum = np.zeros((proj.mass.shape[1] + 1, proj.n), dtype=np.float64)
    np.cumsum(proj.mass.T, axis=0, out=cum[1:])
    return cum


def _dense(
    proj: _Projected,
    sizes: Sequence[int],
    cols: tuple[int, ...],
    lo: np.ndarray,
    hi: np.ndarray,
    sa_lo: np.ndarray,
    sa_hi: np.ndarray,
) -> np.ndarray:
    """Blocks of queries x boxes: overlap lengths per column times cumulative SA counts."""
    qd = len(cols)
    out = np.zeros(sa_lo.shape[0], dtype=np.float64)
    if proj.n == 0:
        return out
    b_lo = np.ascontiguousarray(proj.lo.T)  # [qd, B']
    b_hi1 = np.ascontiguousarray(proj.hi.T) + 1
    inv_vol = 1.0 / np.prod((b_hi1 - b_lo).astype(np.float64), axis=0)
    cum = _sa_cum(proj)
    block = max(1, DENSE_BLOCK // proj.n)
    for a in range(0, out.size, block):
        z = slice(a, a + block)
        acc = cum[sa_hi[z] + 1] - cum[sa_lo[z]]
        for k in range(qd):
            ov = np.minimum(b_hi1[k], hi[z, k, None] + 1) - np.maximum(b_lo[k], lo[z, k, None])
            np.maximum(ov, 0, out=ov)
            acc *= ov
        out[z] = np.einsum("qb,b->q", acc, inv_vol)  # no BLAS threads (2 shared cores)
    return out


def _sparse(
    proj: _Projected,
    sizes: Sequence[int],
    cols: tuple[int, ...],
    lo: np.ndarray,
    hi: np.ndarray,
    sa_lo: np.ndarray,
    sa_hi: np.ndarray,
) -> np.ndarray:
    """Query by query over the boxes that meet every predicate of the query.

    Per column ``k`` and value ``v`` two bitsets over the boxes: ``lo_le[k][v]`` (boxes
    starting at or before ``v``) and ``hi_ge[k][v]`` (boxes ending at or after ``v``); a box
    meets ``[a, b]`` iff it is in ``lo_le[k][b] & hi_ge[k][a]``. The AND over the predicates
    leaves the boxes with a nonzero product, and only those are read. For many query
    dimensions (paper 001's default ``qd = |QID|``), when the summed-area table is too large
    and most boxes miss a query, this keeps the cost near ``(boxes / 8 + matches)`` per
    query. The loop is over queries, never over rows or boxes.
    """
    qd = len(cols)
    out = np.zeros(sa_lo.shape[0], dtype=np.float64)
    cum = _sa_cum(proj)
    if qd == 0 or proj.n == 0:
        return cum[sa_hi + 1].sum(axis=1) - cum[sa_lo].sum(axis=1) if proj.n else out
    n_b = proj.n
    pad = (-n_b) % 64
    b_lo = np.ascontiguousarray(proj.lo.T)
    b_hi1 = np.ascontiguousarray(proj.hi.T) + 1  # exclusive ends
    inv_w = 1.0 / (b_hi1 - b_lo).astype(np.float64)
    bits = []
    for k, c in enumerate(cols):
        values = np.arange(sizes[c], dtype=np.int32)[:, None]
        lo_p = np.pad(b_lo[k], (0, pad), constant_values=np.iinfo(np.int32).max)
        hi_p = np.pad(b_hi1[k], (0, pad), constant_values=-1)
        lo_le = np.packbits(lo_p[None, :] <= values, axis=1).view(np.uint64)
        hi_ge = np.packbits(hi_p[None, :] > values, axis=1).view(np.uint64)
        bits.append((lo_le, hi_ge))
    boxy = [k for k in range(qd) if np.any(b_hi1[k] - b_lo[k] != 1)]
    sel = np.empty_like(bits[0][0][0])
    q_lo, q_hi = lo.tolist(), hi.tolist()
    s_lo, s_hi1 = sa_lo.tolist(), (sa_hi + 1).tolist()
    for i in range(out.size):
        a, b = q_lo[i], q_hi[i]
        np.bitwise_and(bits[0][0][b[0]], bits[0][1][a[0]], out=sel)
        for k in range(1, qd):
            sel &= bits[k][0][b[k]]
            sel &= bits[k][1][a[k]]
        idx = np.flatnonzero(np.unpackbits(sel.view(np.uint8), count=n_b).view(bool))
        val = cum[s_hi1[i]].take(idx) - cum[s_lo[i]].take(idx)
        for k in boxy:
            ov = np.minimum(b_hi1[k].take(idx), b[k] + 1)
            ov -= np.maximum(b_lo[k].take(idx), a[k])
            val *= ov
            val *= inv_w[k].take(idx)
        out[i] = val.sum()
    return out
