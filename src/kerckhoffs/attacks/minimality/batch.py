"""The minimality attack's credibility engine for every generalized EC of a table at once.

The exact engines of :mod:`kerckhoffs.attacks.minimality.credibility` work one EC at a time in
rational
arithmetic; a release of Adult has about a thousand generalized ECs. This module evaluates the
closed form of paper 001's credibility (``docs/theory/minimality.md#attack-closed-form``) for all of
them together in float64 numpy, with the same per-class slots ``g`` and thresholds ``tau`` (a class
violates when it receives more than ``tau`` sensitive tuples), and returns ``E[Y_i | some class of
the EC violates]`` for each class ``i``.

How (all counts are polynomials in ``z`` truncated at the EC's degree ``n_s``):

1. **Triples.** A set of classes is described by ``(M, U, N)``: the ways to place ``x``
   sensitive tuples in it with no constraint, with no class violating, and with at least one
   violating (the DP's ``m``, ``u``, ``n`` of Algorithm 2). Two disjoint sets combine as
   ``M = M_1 M_2``, ``U = U_1 U_2``, ``N = N_1 M_2 + U_1 N_2``: every term is non-negative, so
   nothing cancels (the closed form's ``prod H - prod F`` would lose all precision when
   violations are rare).
2. **Exchangeable classes.** Classes that cannot violate (``tau + 1 > min(g, n_s)``, the DP's
   ``C'``) form one pool ``(1 + z)^N``; classes with equal ``(g, tau)`` are exchangeable
   (an edge case of ``docs/theory/minimality.md#attack-edge-cases``: equal classes get equal
   credibility), so each distinct pair is one *factor* raised to its multiplicity by
   repeated squaring. An EC of thousands of small classes has only a few factors.
3. **Leave one out.** Prefix and suffix products over each EC's factors give, for each factor,
   the triple of every other class; ``E_i B = [z^n_s](DG_i M_others + DF_i N_others)``, with
   ``DG_i``, ``DF_i`` the ``r``-weighted violating / non-violating parts of class ``i`` alone
   (the closed form of ``docs/theory/minimality.md#attack-closed-form`` rewritten without
   subtraction), and ``B = N_all[n_s]``.
4. **Scale.** Coefficients are ``C(g, r)`` with ``g`` up to the table size: each is computed
   as a logarithm, ``z`` is replaced by ``t z`` with ``t = n_s / (n_P - n_s)`` (the result is a
   ratio of two coefficients of the same degree, so it does not change) which puts the mass
   near degree ``n_s``, and every product is renormalized with its log-scale kept aside.
   Products are batched (a Toeplitz view and one ``einsum`` per step for all ECs of similar
   degree; degrees are bucketed by powers of two).

The Python loops run over factor ranks and exponent bits: each step multiplies the running
product of *every* EC by its next factor (inherently sequential, never per row or per EC). An
EC whose ``B`` underflows (a violation less likely than about 1e-300) falls back to the exact
closed form. :func:`expected_batch` is tested against the exact engines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from kerckhoffs.errors import ParameterError

__all__ = ["BatchInference", "expected_batch"]


@dataclass(frozen=True, eq=False)
class BatchInference:
    """Result of :func:`expected_batch`.

    ``expected[i]``: ``E[Y_i | knowledge]`` for item (class in EC) ``i``; the no-exclusion
    value ``g_i n_s / n_P`` where the EC allows no inference. ``no_inference[e]``: no class
    of EC ``e`` can violate (the edge case of ``docs/theory/minimality.md#attack-edge-cases``).
    ``log_assignments[e]``: natural log of ``B`` (``-inf`` when no inference). ``exact_fallbacks``:
    ECs recomputed exactly after underflow.
    """

    expected: np.ndarray
    no_inference: np.ndarray
    log_assignments: np.ndarray
    exact_fallbacks: int = 0


@dataclass
class _Triple:
    """``(M, U, N)`` mantissas [rows, D] and their log-scale [rows]."""

    m: np.ndarray
    u: np.ndarray
    n: np.ndarray
    ls: np.ndarray

    def take(self, idx: np.ndarray) -> _Triple:
        return _Triple(self.m[idx], self.u[idx], self.n[idx], self.ls[idx])

    def put(self, idx: np.ndarray, other: _Triple) -> None:
        self.m[idx] = other.m
        self.u[idx] = other.u
        self.n[idx] = other.n
        self.ls[idx] = other.ls

    @classmethod
    def identity(cls, rows: int, d: int) -> _Triple:
        m = np.zeros((rows, d))
        m[:, 0] = 1.0
        return cls(m, m.copy(), np.zeros((rows, d)), np.zeros(rows))

    @classmethod
    def empty(cls, rows: int, d: int) -> _Triple:
        return cls(np.zeros((rows, d)), np.zeros((rows, d)), np.zeros((rows, d)), np.zeros(rows))


class _Conv:
    """Truncated batched polynomial products for one degree bucket (``D`` coefficients).

    Small ``D``: ``a @ T(b)`` with ``T(b)[i, k] = b[k - i]`` a Toeplitz *view* of the padded
    ``b`` (no copy), one ``einsum`` for all rows. Large ``D`` (few rows: only ECs with hundreds
    of sensitive tuples get there): ``np.convolve`` row by row, which is faster there.
    """

    LOOP_FROM = 256

    def __init__(self, d: int) -> None:
        self.d = d

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = self.d
        if a.shape[0] == 0:
            return np.zeros_like(a)
        if d >= self.LOOP_FROM:
            return np.stack([np.convolve(x, y)[:d] for x, y in zip(a, b, strict=True)])
        padded = np.concatenate([np.zeros((b.shape[0], d - 1)), b], axis=1)
        toeplitz = sliding_window_view(padded, d, axis=1)[:, ::-1, :]
        return np.einsum("ti,tik->tk", a, toeplitz)

    def combine(self, a: _Triple, b: _Triple, mask: np.ndarray) -> _Triple:
        """The triple of the union of two disjoint sets of classes, renormalized."""
        m = self.mul(a.m, b.m) * mask
        n = (self.mul(a.n, b.m) + self.mul(a.u, b.n)) * mask
        u = self.mul(a.u, b.u) * mask
        scale = m.max(axis=1) if m.shape[0] else np.zeros(0)
        scale = np.where(scale > 0, scale, 1.0)
        inv = (1.0 / scale)[:, None]
        return _Triple(m * inv, u * inv, n * inv, a.ls + b.ls + np.log(scale))


def _log_binomials(g: np.ndarray, d: int) -> np.ndarray:
    """``log C(g, r)`` for ``r < d`` (``-inf`` for ``r > g``), [len(g), d]."""
    r = np.arange(d, dtype=np.float64)
    gg = g.astype(np.float64)[:, None]
    ok = r[None, 1:] <= gg
    terms = np.where(
        ok, np.log(np.maximum(gg - r[None, 1:] + 1.0, 1.0)) - np.log(r[None, 1:]), -np.inf
    )
    out = np.zeros((g.shape[0], d))
    out[:, 1:] = np.cumsum(terms, axis=1)
    return out


def expected_batch(
    ec: np.ndarray, slots: np.ndarray, thresholds: np.ndarray, n_s: np.ndarray
) -> BatchInference:
    """``E[Y_i | some class of its EC violates]`` for every item ``i`` (a class inside an EC).

    ``ec[i]`` is the item's EC (``0..len(n_s)-1``), ``slots[i]`` its tuples in the EC (``g``),
    ``thresholds[i]`` the most sensitive tuples it may receive without violating (``tau``;
    ``-1``: it always violates), ``n_s[e]`` the sensitive tuples published in EC ``e``. See
    the module docstring for the method; edge cases as
    ``docs/theory/minimality.md#attack-edge-cases``: ``n_s = 0`` gives 0, an EC whose classes cannot
    violate gives the no-exclusion value (flagged), an EC made of sensitive tuples only gives ``g``.
    """
    ec = np.asarray(ec, dtype=np.int64)
    g = np.asarray(slots, dtype=np.int64)
    tau = np.maximum(np.asarray(thresholds, dtype=np.int64), -1)
    ns = np.asarray(n_s, dtype=np.int64)
    n_ec = ns.shape[0]
    if not (ec.shape == g.shape == tau.shape):
        raise ParameterError("expected_batch: ec, slots and thresholds need one entry per item")
    if ec.size and (ec.min() < 0 or ec.max() >= n_ec):
        raise ParameterError("expected_batch: an item names an EC outside 0..len(n_s)-1")
    if (g < 0).any():
        raise ParameterError("expected_batch: slots must be non-negative")
    n_p = np.bincount(ec, weights=g, minlength=n_ec).astype(np.int64)
    if ((ns < 0) | (ns > n_p)).any():
        e = int(np.flatnonzero((ns < 0) | (ns > n_p))[0])
        raise ParameterError(f"EC {e}: {int(ns[e])} sensitive tuples in {int(n_p[e])} slots")
    s_item = ns[ec]
    may = tau + 1 <= np.minimum(g, s_item)
    ec_may = np.bincount(ec, weights=may, minlength=n_ec) > 0
    out = np.where(n_p[ec] > 0, g * s_item / np.maximum(n_p[ec], 1), 0.0).astype(np.float64)
    log_b = np.full(n_ec, -np.inf)
    active = ec_may & (ns > 0) & (ns < n_p)
    full = ns == n_p
    out[full[ec]] = g[full[ec]]
    log_b[ec_may & ((ns == 0) | full)] = 0.0  # the one assignment, which violates
    fallbacks = 0
    if active.any():
        act_item = active[ec]
        d_of = np.maximum(8, 1 << np.ceil(np.log2(ns + 1)).astype(np.int64))
        for d in np.unique(d_of[active]).tolist():
            in_bucket = act_item & (d_of[ec] == d)
            items = np.flatnonzero(in_bucket)
            e_res, lb, bad = _bucket(ec[items], g[items], tau[items], ns, n_p, may[items], int(d))
            out[items] = e_res
            log_b[np.unique(ec[items])] = lb[np.unique(ec[items])]
            for e in bad:
                fallbacks += 1
                sel = items[ec[items] == e]
                out[sel], log_b[e] = _exact(g[sel], tau[sel], int(ns[e]))
    return BatchInference(out, ~ec_may, log_b, fallbacks)


def _exact(g: np.ndarray, tau: np.ndarray, n_s: int) -> tuple[np.ndarray, float]:
    from kerckhoffs.attacks.minimality.credibility import expected_closed_form

    res = expected_closed_form(g.tolist(), tau.tolist(), n_s)
    lb = float(np.log(float(res.assignments))) if res.assignments else -np.inf
    return np.array([float(x) for x in res.expected]), lb


def _product_tree(
    conv: _Conv, blocks: _Triple, slot: np.ndarray, n_ec: int, width: int, mask_ec: np.ndarray
) -> tuple[_Triple, _Triple]:
    """Products of each EC's factors (``top``, one row per EC) and, for every slot, the product
    of all the *other* factors of its EC (``leaf``, ``n_ec * width`` rows), by a binary product
    tree: ``log2(width)`` batched combines up, as many down (a complement is the parent's
    complement times the sibling). ``slot[i]`` = ``ec * width + rank`` of ``blocks`` row ``i``;
    empty slots hold the identity."""
    d = conv.d
    level = _Triple.identity(n_ec * width, d)
    level.put(slot, blocks)
    levels = [level]
    w = width
    while w > 1:
        rows = np.arange(level.ls.shape[0])
        level = conv.combine(
            level.take(rows[0::2]), level.take(rows[1::2]), mask_ec[rows[0::2] // w]
        )
        levels.append(level)
        w //= 2
    comp = _Triple.identity(n_ec, d)
    w = 1
    for lvl in levels[-2::-1]:
        w *= 2
        rows = np.arange(lvl.ls.shape[0])
        comp = conv.combine(comp.take(rows // 2), lvl.take(rows ^ 1), mask_ec[rows // w])
    return levels[-1], comp


def _bucket(
    ec: np.ndarray,
    g: np.ndarray,
    tau: np.ndarray,
    ns_all: np.ndarray,
    np_all: np.ndarray,
    may: np.ndarray,
    d: int,
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The engine on the items of the ECs whose degree bound is ``d`` (module docstring)."""
    conv = _Conv(d)
    n_ec = ns_all.shape[0]
    # factors: one pool of the classes that cannot violate per EC, one per distinct (g, tau)
    pool_slots = np.bincount(ec[~may], weights=g[~may], minlength=n_ec).astype(np.int64)
    pool_ecs = np.flatnonzero(pool_slots > 0)
    key = np.stack([ec[may], g[may], tau[may]], axis=1)
    types, type_of, mult = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    type_of = np.asarray(type_of).reshape(-1)
    f_ec = np.concatenate([pool_ecs, types[:, 0]])
    f_g = np.concatenate([pool_slots[pool_ecs], types[:, 1]])
    f_tau = np.concatenate([np.full(pool_ecs.size, np.iinfo(np.int32).max), types[:, 2]])
    f_k = np.concatenate([np.ones(pool_ecs.size, dtype=np.int64), mult])
    f_pool = np.arange(f_ec.size) < pool_ecs.size
    order = np.lexsort((~f_pool, f_ec))  # by EC, pool first
    f_ec, f_g, f_tau, f_k, f_pool = (a[order] for a in (f_ec, f_g, f_tau, f_k, f_pool))
    where = np.empty(order.size, dtype=np.int64)
    where[order] = np.arange(order.size)
    n_f = f_ec.size
    first = np.r_[True, f_ec[1:] != f_ec[:-1]]
    starts = np.flatnonzero(first)
    rank = np.arange(n_f) - np.repeat(starts, np.diff(np.r_[starts, n_f]))

    s_f = ns_all[f_ec]
    r = np.arange(d)
    mask = (r[None, :] <= s_f[:, None]).astype(np.float64)
    log_t = np.log(s_f) - np.log(np_all[f_ec] - s_f)
    lc = _log_binomials(f_g, d) + r[None, :] * log_t[:, None]
    lc = np.where(mask > 0, lc, -np.inf)
    ls1 = lc.max(axis=1)
    mant = np.exp(lc - ls1[:, None])
    viol = r[None, :] > f_tau[:, None]
    single = _Triple(mant, np.where(viol, 0.0, mant), np.where(viol, mant, 0.0), ls1)
    dg = r[None, :] * single.n
    df = r[None, :] * single.u

    # single^(k-1) by repeated squaring, then the factor's block single^k
    power = _Triple.identity(n_f, d)
    base = _Triple(single.m.copy(), single.u.copy(), single.n.copy(), single.ls.copy())
    e_left = f_k - 1
    while (e_left > 0).any():
        rows = np.flatnonzero(e_left & 1)
        if rows.size:
            power.put(rows, conv.combine(power.take(rows), base.take(rows), mask[rows]))
        e_left >>= 1
        rows = np.flatnonzero(e_left > 0)
        if rows.size:
            base.put(rows, conv.combine(base.take(rows), base.take(rows), mask[rows]))
    block = conv.combine(power, single, mask)

    # every other factor of the EC, by a product tree per group of ECs with similar counts
    e_loc = np.unique(f_ec, return_inverse=True)[1].reshape(-1)
    n_loc = int(e_loc.max()) + 1
    counts = np.bincount(e_loc, minlength=n_loc)
    width = 1 << np.ceil(np.log2(counts)).astype(np.int64)
    s_loc = np.zeros(n_loc, dtype=np.int64)
    s_loc[e_loc] = s_f
    mask_loc = (r[None, :] <= s_loc[:, None]).astype(np.float64)
    others = _Triple.empty(n_f, d)
    top_m = np.zeros(n_loc)  # B's mantissa (coefficient n_s of the N of all factors)
    top_ls = np.zeros(n_loc)
    for w in np.unique(width).tolist():
        es = np.flatnonzero(width == w)
        sub = np.full(n_loc, -1, dtype=np.int64)
        sub[es] = np.arange(es.size)
        fs = np.flatnonzero(sub[e_loc] >= 0)
        slot = sub[e_loc[fs]] * w + rank[fs]
        top, leaf = _product_tree(conv, block.take(fs), slot, es.size, int(w), mask_loc[es])
        others.put(fs, leaf.take(slot))
        top_m[es] = top.n[np.arange(es.size), s_loc[es]]
        top_ls[es] = top.ls
    b_ec = np.unique(f_ec)
    log_b = np.full(n_ec, -np.inf)
    log_t_ec = np.zeros(n_loc)
    log_t_ec[e_loc] = log_t
    with np.errstate(divide="ignore"):
        log_b[b_ec] = np.log(top_m) + top_ls - s_loc * log_t_ec  # undo z -> t z
    bad_ec = b_ec[~(top_m > 0) | ~np.isfinite(top_m)]

    # leave one class of each factor out: the others are the other factors and k - 1 copies
    a = conv.combine(others, power, mask)
    rev = s_f[:, None] - r[None, :]
    ok = rev >= 0
    revc = np.where(ok, rev, 0)
    am = np.where(ok, np.take_along_axis(a.m, revc, axis=1), 0.0)
    an = np.where(ok, np.take_along_axis(a.n, revc, axis=1), 0.0)
    num = (dg * am + df * an).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        e_f = num / top_m[e_loc] * np.exp(a.ls + ls1 - top_ls[e_loc])
    e_f = np.where(np.isfinite(e_f), e_f, 0.0)

    # back to items: a type's classes share its value; the pool shares in proportion to slots
    res = np.empty(ec.size)
    m_idx = np.flatnonzero(may)
    res[m_idx] = e_f[where[pool_ecs.size + type_of]]
    p_idx = np.flatnonzero(~may)
    if p_idx.size:
        pool_pos = np.full(n_ec, -1, dtype=np.int64)
        pool_pos[pool_ecs] = where[np.arange(pool_ecs.size)]
        pe = ec[p_idx]
        res[p_idx] = e_f[pool_pos[pe]] * g[p_idx] / np.maximum(pool_slots[pe], 1)
    return res, log_b, sorted(set(bad_ec.tolist()))
