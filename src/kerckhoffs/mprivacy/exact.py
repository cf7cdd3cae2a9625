"""The exact m-privacy verifier over a whole partition, vectorized (paper 003 section II,
``docs/theory/m-privacy.md#per-group`` and ``#verifier-machinery``; closed forms derived here,
beyond the paper).

Input: the nonzero ``(group, provider, SA value) -> count`` triples of a partition. Per
group, ``m_eff = min(m, n_G - 1)``; m-privacy w.r.t. a conjunction is the conjunction of
m-privacy w.r.t. each component, and each component has a closed form:

- k-anonymity: the worst coalition is the ``m_eff`` providers with the most records, so
  ``N - (sum of the m_eff largest c_p) >= k``.
- distinct l-diversity: a value vanishes only when every provider holding it is in the
  coalition, so only values held by at most ``m_eff`` providers can vanish; the group breaches
  iff some ``distinct - l + 1`` of them have at most ``m_eff`` holders between them (the
  coalition is the union of their holder sets). That is a minimum-union problem (NP-hard in
  general), so: shortcuts first, vectorized over groups (all those providers fit in one
  coalition; the values with the fewest holders fit; no provider holds two such values, so
  unions are sums: paper 003's one provider per user); then every ``m_eff``-coalition of
  the providers holding such values as bitmasks, batched over groups of one shape, when they
  are at most 62 and the coalitions few (:data:`MAX_COMBINATIONS`); else a depth-first search
  over unions of holder sets with a bound that cuts hopeless branches
  (:func:`_union_search`), any number of providers. The search may be given a budget of
  steps per group: a group it cannot settle is reported *undecided* and never passes.
- frequency l-diversity, ``|S| >= l * S_max(S)`` (not EG-monotonic, so Definition 2.1 lets the
  coalition put back any part S of its own records): for a coalition I with remainder R, the
  worst S is empty or all of I's records of one value v (adding records of v raises
  ``l * count_v`` by ``l >= 1`` per record and the size by 1; adding other values only helps),
  and the empty case is implied. So the group is m-private iff for every value v,
  ``N - l * H_v >= (sum of the m_eff largest c_p - h_p[v])``: the condition
  ``|R| + h_I[v] >= l * H_v`` maximized over I.

**Requested m, achieved m.** :func:`decide_triples` decides one m per group. The achieved m
(:func:`achieved_triples`) grows from what is known by doubling steps while the group stays
m-private, then bisects: the cheap small coalitions are searched first, since the distinct-l
search grows with m; with a budget it stops where the search would cost too much and says
which values are lower bounds (:class:`Achieved`).

Nothing loops over rows in Python; the loops run over SA values' columns in one sort, over
distinct (providers, m_eff) shapes of the bitmask search, and over the groups the union search
must settle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.mprivacy.constraints import Constraint, DistinctL, FrequencyL, KAnon
from kerckhoffs.tolerance import TOLERANCE

MAX_CELLS = 4_000_000
"""Work-array budget (elements) of one batch of the distinct-l coalition search."""


class _Pairs:
    """The (group, provider) pairs of a partition with their per-value counts."""

    def __init__(
        self, g: np.ndarray, p: np.ndarray, s: np.ndarray, w: np.ndarray, n_groups: int, n_sa: int
    ) -> None:
        g = np.asarray(g, dtype=np.int64)
        p = np.asarray(p, dtype=np.int64)
        s = np.asarray(s, dtype=np.int64)
        w = np.asarray(w, dtype=np.int64)
        pairs, inv = np.unique(np.stack([g, p]), axis=1, return_inverse=True)
        inv = inv.reshape(-1)
        self.group = pairs[0]
        self.n_groups, self.n_sa = n_groups, n_sa
        self.h = np.zeros((self.group.size, n_sa), dtype=np.int64)
        np.add.at(self.h, (inv, s), w)
        self.c = self.h.sum(axis=1)
        self.n_g = np.bincount(self.group, minlength=n_groups)
        self.H = np.zeros((n_groups, n_sa), dtype=np.int64)
        np.add.at(self.H, (g, s), w)
        self.N = self.H.sum(axis=1)
        self.start = np.concatenate([[0], np.cumsum(self.n_g)[:-1]])

    def m_eff(self, m: np.ndarray) -> np.ndarray:
        return np.minimum(m, np.maximum(self.n_g - 1, 0))

    def top_sum(self, values: np.ndarray, m_eff: np.ndarray) -> np.ndarray:
        """Per group (and column), the sum of the ``m_eff`` largest ``values`` (pairs x K)."""
        vals = values.reshape(values.shape[0], -1)
        out = np.zeros((self.n_groups, vals.shape[1]), dtype=np.int64)
        if vals.shape[0] == 0:
            return out
        top = int(vals.max()) + 1
        key = self.group[:, None] * top + (top - 1 - vals)
        srt = np.take_along_axis(vals, np.argsort(key, axis=0, kind="stable"), axis=0)
        rank = np.arange(vals.shape[0]) - self.start[self.group]
        kept = np.where((rank < m_eff[self.group])[:, None], srt, 0)
        present = self.n_g > 0
        out[present] = np.add.reduceat(kept, self.start[present], axis=0)
        return out


def _k_ok(pairs: _Pairs, me: np.ndarray, k: int) -> np.ndarray:
    return pairs.N - pairs.top_sum(pairs.c, me)[:, 0] >= k


def _frequency_ok(pairs: _Pairs, me: np.ndarray, l: float) -> np.ndarray:  # noqa: E741
    worst = pairs.top_sum(pairs.c[:, None] - pairs.h, me)
    ok = pairs.N[:, None] + TOLERANCE >= l * pairs.H + worst
    return ok.all(axis=1) & (pairs.N > 0)


def _distinct_ok(
    pairs: _Pairs,
    me: np.ndarray,
    l: int,  # noqa: E741
    budget: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (m-private w.r.t. distinct l-diversity, undecided). A value vanishes when all
    its holders are in the coalition, so the group breaches iff some ``need = distinct - l + 1``
    values held by at most ``m_eff`` providers each have, together, at most ``m_eff``
    holders (the union of their holder sets is the coalition). Settled without search when
    (in this order) the group already fails or has fewer such values than ``need``; all their
    holders fit in one coalition; the ``need`` of them with the fewest holders have at most
    ``m_eff`` holders between them; or no provider holds two of them (then a union is a sum,
    and the fewest-holders choice is the best one). Paper 003's setting of one provider per
    user (every record its own provider) is that last case. The rest is a search: over all
    ``m_eff``-coalitions of the providers holding such values (bitmasks, batched over groups
    of one shape) when few, else a depth-first search over unions of holder sets
    (:func:`_union_search`), within ``budget`` steps per group (None: no limit); a group it
    cannot finish is *undecided* (reported; counted as not m-private by the callers)."""
    held = pairs.h > 0
    holders = np.zeros((pairs.n_groups, pairs.n_sa), dtype=np.int64)
    np.add.at(holders, pairs.group, held.astype(np.int64))
    need = np.count_nonzero(pairs.H, axis=1) - l + 1
    vuln = (holders > 0) & (holders <= me[:, None])
    n_vuln = vuln.sum(axis=1)
    ok = need >= 1
    open_ = ok & (n_vuln >= need)
    undecided = np.zeros(pairs.n_groups, dtype=bool)
    if not open_.any():
        return ok, undecided
    # providers holding a vanishable value, numbered within their group
    vuln_held = held & vuln[pairs.group]
    rel = vuln_held.any(axis=1)
    n_rel = np.bincount(pairs.group[rel], minlength=pairs.n_groups)
    breach = open_ & (n_rel <= me)  # they all fit in one coalition
    # the need values with the fewest holders
    fewest = np.sort(np.where(vuln, holders, np.iinfo(np.int64).max // 4), axis=1)
    at = np.clip(need - 1, 0, pairs.n_sa - 1)
    cheapest = np.take_along_axis(np.cumsum(fewest, axis=1), at[:, None], axis=1)[:, 0]
    breach |= open_ & (cheapest <= me)
    open_ &= ~breach
    # no provider holds two vanishable values: unions are sums, the cheapest choice decides
    per_provider = vuln_held.sum(axis=1)
    shared = np.bincount(pairs.group[per_provider > 1], minlength=pairs.n_groups) > 0
    open_ &= shared
    ok &= ~breach
    search = np.flatnonzero(open_)
    if not search.size:
        return ok, undecided
    # the search: bitmasks over the group's relevant providers
    small = (n_rel[search] <= 62) & np.array(
        [
            math.comb(int(r), int(k)) <= MAX_COMBINATIONS
            for r, k in zip(n_rel[search], me[search], strict=True)
        ],
        dtype=bool,
    )
    if small.any():
        ok[search[small]] &= _combination_search(pairs, me, need, vuln, rel, n_rel, search[small])
    for g in search[~small].tolist():
        verdict = _union_search(_holder_sets(pairs, g, vuln), int(need[g]), int(me[g]), budget)
        if verdict is None:
            undecided[g] = True
            ok[g] = False
        else:
            ok[g] &= verdict
    return ok, undecided


MAX_COMBINATIONS = 200_000
"""Most ``m_eff``-coalitions the bitmask search enumerates for one group."""
SEARCH_BUDGET = 2_000_000
"""Steps of the union search per group (a step: one holder set looked at) when a check must
stay cheap: a second or so of Python at most (see :func:`decide_triples`)."""


def _holder_sets(pairs: _Pairs, g: int, vuln: np.ndarray) -> list[int]:
    """Group ``g``'s vanishable values as bitmasks (Python ints) over its providers."""
    lo, hi = int(pairs.start[g]), int(pairs.start[g] + pairs.n_g[g])
    h = pairs.h[lo:hi] > 0  # the group's providers x values
    cols = np.flatnonzero(vuln[g])
    out = []
    for v in cols.tolist():
        mask = 0
        for i in np.flatnonzero(h[:, v]).tolist():
            mask |= 1 << i
        out.append(mask)
    return out


def _union_search(masks: list[int], need: int, me: int, budget: int | None) -> bool | None:
    """Whether no union of at most ``me`` providers contains ``need`` of the holder sets
    ``masks`` (True: m-private); None when ``budget`` steps (one per set looked at) did not
    settle it. Depth first over unions, adding sets in a fixed order, so each union is
    reached once per increasing sequence of its sets; a union's vanished values are the sets
    inside it. A branch is cut when no way of adding ``room = me - |union|`` providers can
    reach ``need``: a set that vanishes later has its missing holders (``extra``, at most
    ``room`` of them) among the added providers, so sharing each such set's 1 among its
    missing holders, the added providers carry at most the sum of the ``room`` largest
    shares."""
    masks = sorted(masks, key=lambda x: (x.bit_count(), x))
    steps = 0
    stack = [(0, 0)]  # (first set that may be added, union)
    while stack:
        start, union = stack.pop()
        steps += len(masks)
        if budget is not None and steps > budget:
            return None
        room = me - union.bit_count()
        inside = 0
        share: dict[int, float] = {}
        nxt = []
        for j, x in enumerate(masks):
            extra = x & ~union
            if not extra:
                inside += 1
                continue
            cost = extra.bit_count()
            if cost > room:
                continue
            if j >= start:
                nxt.append(j)
            while extra:
                low = extra & -extra
                share[low] = share.get(low, 0.0) + 1.0 / cost
                extra ^= low
        if inside >= need:
            return False
        reach = sum(sorted(share.values(), reverse=True)[:room])
        if inside + math.floor(reach + TOLERANCE) >= need:
            stack.extend((j + 1, union | masks[j]) for j in reversed(nxt))
    return True


def _combination_search(
    pairs: _Pairs,
    me: np.ndarray,
    need: np.ndarray,
    vuln: np.ndarray,
    rel: np.ndarray,
    n_rel: np.ndarray,
    groups: np.ndarray,
) -> np.ndarray:
    """For ``groups`` (at most 62 relevant providers, few coalitions): whether no coalition of
    ``m_eff`` of their relevant providers makes ``need`` values vanish; every coalition as a
    bitmask, batched over the groups of one (providers, m_eff) shape."""
    held = pairs.h > 0
    rel_start = np.concatenate([[0], np.cumsum(n_rel)[:-1]])
    local = np.cumsum(rel) - 1 - rel_start[pairs.group]
    masks = np.zeros((pairs.n_groups, pairs.n_sa), dtype=np.uint64)
    gi, si = np.nonzero(held & rel[:, None] & vuln[pairs.group])
    np.add.at(
        masks,
        (pairs.group[gi], si),
        np.left_shift(np.uint64(1), local[gi].astype(np.uint64)),
    )
    masks[~vuln] = np.uint64(1) << np.uint64(63)  # never inside a coalition of <= 62 bits
    out = np.ones(groups.size, dtype=bool)
    shapes = np.stack([n_rel[groups], me[groups]], axis=1)
    for r, size in np.unique(shapes, axis=0):
        pick = np.flatnonzero((shapes[:, 0] == r) & (shapes[:, 1] == size))
        batch = groups[pick]
        combos = np.array(
            [sum(1 << i for i in c) for c in combinations(range(int(r)), int(size))],
            dtype=np.uint64,
        )
        outside = ~combos
        cstep = max(1, MAX_CELLS // pairs.n_sa)
        bstep = max(1, MAX_CELLS // (min(combos.size, cstep) * pairs.n_sa))
        for b0 in range(0, batch.size, bstep):
            b = batch[b0 : b0 + bstep]
            res = np.ones(b.size, dtype=bool)
            for c0 in range(0, combos.size, cstep):
                o = outside[c0 : c0 + cstep]
                killed = ((masks[b][:, None, :] & o[None, :, None]) == 0).sum(axis=2)
                res &= killed.max(axis=1) < need[b]
            out[pick[b0 : b0 + bstep]] = res
    return out


@dataclass(frozen=True, eq=False)
class Decision:
    """Per group: ``ok`` (m-private; False where undecided: not proven is not private) and
    ``undecided`` (the coalition search ran out of its budget before settling it)."""

    ok: np.ndarray
    undecided: np.ndarray


def decide_triples(
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n_groups: int,
    n_sa: int,
    m: int | np.ndarray,
    constraint: Constraint,
    budget: int | None = None,
) -> Decision:
    """Per group, whether it is m-private w.r.t. ``constraint``, from the triples
    ``(g[i], p[i], s[i])`` holding ``w[i]`` records; ``m`` may differ per group. ``budget``
    bounds the steps of the distinct-l search per group (None: exact whatever it costs);
    a group it cannot settle is undecided, and not ok."""
    pairs = _Pairs(g, p, s, w, n_groups, n_sa)
    return _private(pairs, _per_group(m, n_groups), constraint, budget)


def m_private_triples(
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n_groups: int,
    n_sa: int,
    m: int | np.ndarray,
    constraint: Constraint,
    budget: int | None = None,
) -> np.ndarray:
    """:func:`decide_triples`' ``ok``: per group, m-private (an undecided group is not)."""
    return decide_triples(g, p, s, w, n_groups, n_sa, m, constraint, budget).ok


def _per_group(m: int | np.ndarray, n_groups: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(m, dtype=np.int64), (n_groups,)).copy()


def _private(pairs: _Pairs, m: np.ndarray, constraint: Constraint, budget: int | None) -> Decision:
    if (m < 0).any():
        raise ParameterError("m must be at least 0")
    me = pairs.m_eff(m)
    fails = pairs.N == 0  # proven not m-private
    open_ = np.zeros(pairs.n_groups, dtype=bool)  # some part could not settle it
    for part in constraint.parts:
        if isinstance(part, KAnon):
            fails |= ~_k_ok(pairs, me, part.k)
        elif isinstance(part, DistinctL):
            part_ok, part_open = _distinct_ok(pairs, me, part.l, budget)
            fails |= ~part_ok & ~part_open
            open_ |= part_open
        elif isinstance(part, FrequencyL):
            fails |= ~_frequency_ok(pairs, me, part.l)
        else:
            raise ParameterError(
                f"the exact m-privacy verifier has no closed form for {type(part).__name__}; "
                "it takes k, l and distinct-l"
            )
    undecided = open_ & ~fails
    return Decision(~fails & ~undecided, undecided)


@dataclass(frozen=True, eq=False)
class Achieved:
    """Per group: ``m``, the largest m it is m-private for (-1 when it violates the
    constraint itself, ``n_providers - 1`` when no coalition of its providers breaks it), and
    ``exact``: False where the search for larger coalitions ran out of budget, so ``m`` is
    only a lower bound (the group is m-private for it, perhaps for more)."""

    m: np.ndarray
    exact: np.ndarray


def _achieved(
    pairs: _Pairs,
    n_providers: int,
    constraint: Constraint,
    budget: int | None,
    known: tuple[np.ndarray, Decision] | None = None,
) -> Achieved:
    """The achieved m of every group: from what is known (``known``: a decision at some m
    per group), m grows by doubling steps while the group stays m-private (cheap m first:
    the coalition search grows with m), then bisects between the largest m that holds and
    the smallest that fails. A group whose search runs out of budget keeps its largest m
    proven, marked inexact."""
    cap = np.maximum(pairs.n_g - 1, 0)
    lo = np.full(pairs.n_groups, -1, dtype=np.int64)  # largest m proven private
    hi = cap + 1  # smallest m proven not private (cap + 1: none yet)
    exact = np.ones(pairs.n_groups, dtype=bool)
    if known is not None:
        at, decision = known
        at = np.minimum(_per_group(at, pairs.n_groups), cap)
        lo = np.where(decision.ok, at, lo)
        hi = np.where(~decision.ok & ~decision.undecided, at, hi)
        exact &= ~decision.undecided
    step = np.ones(pairs.n_groups, dtype=np.int64)
    while True:
        open_ = exact & (hi - lo > 1)
        if not open_.any():
            break
        probe = np.where(hi > cap, np.minimum(lo + step, cap), (lo + hi) // 2)
        probe = np.where(open_, np.maximum(probe, 0), 0)
        d = _private(pairs, probe, constraint, budget)
        grow = open_ & d.ok
        fail = open_ & ~d.ok & ~d.undecided
        lo = np.where(grow, probe, lo)
        hi = np.where(fail, probe, hi)
        exact &= ~(open_ & d.undecided)
        step = np.where(grow, 2 * step, step)
    top = (lo >= cap) & (lo >= 0)
    return Achieved(np.where(top, max(n_providers - 1, 0), lo), exact | top)


def _triples(
    group: np.ndarray, provider: np.ndarray, sa: np.ndarray, n_providers: int, n_sa: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    key = (np.asarray(group, dtype=np.int64) * n_providers + provider) * n_sa + sa
    uniq, counts = np.unique(key, return_counts=True)
    return uniq // (n_providers * n_sa), uniq // n_sa % n_providers, uniq % n_sa, counts


def m_private_groups(
    group: np.ndarray,
    provider: np.ndarray,
    sa: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    m: int | np.ndarray,
    constraint: Constraint,
) -> np.ndarray:
    """Per group, whether it is m-private w.r.t. ``constraint`` (rows given by their group
    id, provider code and SA code). ``m`` is one value or one per group.

    >>> import numpy as np
    >>> from kerckhoffs.mprivacy.constraints import KAnon
    >>> m_private_groups(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 1, 0, 1]),
    ...                  np.zeros(5, int), 2, 2, 1, 1, KAnon(2)).tolist()
    [False, False]
    """
    g, p, s, w = _triples(group, provider, sa, n_providers, n_sa)
    return m_private_triples(g, p, s, w, n_groups, n_sa, m, constraint)


def achieved_m(
    group: np.ndarray,
    provider: np.ndarray,
    sa: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    constraint: Constraint,
) -> np.ndarray:
    """Per group, the largest m for which it is m-private: -1 when it violates the
    constraint itself, ``n_providers - 1`` (the largest meaningful m) when no coalition of
    its providers breaks it, else a value below its ``n_G - 1``. Exact, whatever the search
    costs (:func:`achieved_triples` with a ``budget`` stops early and says where)."""
    g, p, s, w = _triples(group, provider, sa, n_providers, n_sa)
    return achieved_triples(g, p, s, w, n_groups, n_providers, n_sa, constraint).m


def achieved_triples(
    g: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n_groups: int,
    n_providers: int,
    n_sa: int,
    constraint: Constraint,
    budget: int | None = None,
    known: tuple[int | np.ndarray, Decision] | None = None,
) -> Achieved:
    """:func:`achieved_m` from nonzero ``(group, provider, value) -> count`` triples, with
    the search bounded by ``budget`` steps per group and probe (None: exact) and starting
    from ``known`` (an m and the :class:`Decision` of every group at it)."""
    pairs = _Pairs(g, p, s, w, n_groups, n_sa)
    start = None
    if known is not None:
        start = (_per_group(known[0], n_groups), known[1])
    return _achieved(pairs, n_providers, constraint, budget, start)
