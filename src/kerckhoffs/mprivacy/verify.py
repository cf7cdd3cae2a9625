"""Verifying m-privacy of one group (paper 003 section III; spec mprivacy.md 3.1-3.6, 3.9).

Every verifier decides layer ``m_eff = min(m, n_G - 1)`` of the group's coalition lattice
and returns the verdict with its oracle-call count (the paper's cost measure):

- :func:`brute`: every coalition of size ``0..m_eff`` (the test oracle, spec 3.1); for a
  constraint that is not EG-monotonic, :func:`exhaustive`.
- :func:`direct`: the ``C(n_G, m_eff)`` m-coalitions in provider-id order (section III.B).
- :func:`bottom_up`: layers ``0..m_eff``, strongest coalition first; stops at a breach.
- :func:`top_down`: layers ``n_G - 1`` down to ``m_eff``, weakest first; a safe coalition
  prunes its sub-coalitions (downward pruning). Coalitions that contain no unresolved
  m-coalition are skipped too (checking them could not resolve anything).
- :func:`binary`: Algorithm 1 as corrected (spec 3.5: its lines 6-7 are inverted in the
  paper: a *safe* top coalition prunes its subsets and the search goes on; a breaching one
  starts the binary search between it and its strongest unresolved m-subset).
- :func:`adaptive`: binary for weak groups, top-down for robust ones (section III.E).
- :func:`exact`: the closed forms of :mod:`kerckhoffs.mprivacy.exact` (no oracle calls).

The pruning verifiers need an EG-monotonic C (Definition 2.3) and refuse any other.
Coalition power is the fitness (Eq. 1, alpha = 0.3) of the records the coalition contributes;
ties go to the higher raw score, then to the provider ranks (spec 2.10).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.mprivacy.constraints import Constraint
from kerckhoffs.mprivacy.fitness import fitness_batch
from kerckhoffs.mprivacy.group import GroupStats, Oracle
from kerckhoffs.mprivacy.lattice import Knowledge, is_subset, layer_masks, members, popcount

ALPHA_VERIFY = 0.3
"""Eq. 1's weight for ordering coalitions in verification (paper Table II)."""

FITNESS_THRESHOLD = 0.85
RECORDS_THRESHOLD = 15.0
"""The adaptive selector's defaults (paper section V.A): binary below, top-down above."""


@dataclass(frozen=True)
class VerifyResult:
    """A verdict and its cost: ``calls`` oracle calls, ``strategy`` the verifier used."""

    private: bool
    calls: int
    strategy: str

    def __bool__(self) -> bool:
        return self.private


class _Lattice:
    """The group's providers ranked by ascending power (Algorithm 1 line 2) and coalition
    power by mask; bit ``i`` of a mask is the i-th weakest provider."""

    def __init__(self, stats: GroupStats, constraint: Constraint, alpha: float) -> None:
        self.stats, self.constraint, self.alpha = stats, constraint, alpha
        n = stats.n_providers
        score, raw = fitness_batch(constraint, stats.c, stats.h, alpha)
        self.order = sorted(range(n), key=lambda i: (score[i], raw[i], i))
        self.n = n

    def local(self, mask: int) -> list[int]:
        return [self.order[i] for i in members(int(mask))]

    def ranked(self, masks: np.ndarray, descending: bool) -> np.ndarray:
        """``masks`` by power (ascending, or descending), ties by the member ranks
        (lexicographic on the ascending rank lists, which is the bit-reversed mask
        descending)."""
        masks = np.asarray(masks, dtype=np.int64)
        if masks.size <= 1:
            return masks
        s = self.stats
        bits = np.arange(self.n, dtype=np.int64)
        member = (masks[:, None] >> bits) & 1
        counts = member @ s.c[self.order]
        score, raw = fitness_batch(self.constraint, counts, member @ s.h[self.order], self.alpha)
        reverse = member @ (np.int64(1) << (self.n - 1 - bits))
        sign = -1.0 if descending else 1.0
        return masks[np.lexsort((-reverse, sign * raw, sign * score))]

    def layer(self, size: int, descending: bool) -> np.ndarray:
        return self.ranked(layer_masks(self.n, size), descending)


def _require_monotone(constraint: Constraint, name: str) -> None:
    if not constraint.eg_monotonic:
        raise ParameterError(
            f"the {name} verifier prunes, which needs an EG-monotonic constraint (k, "
            "distinct-l and their conjunction); use the exact or exhaustive verifier"
        )


def brute(stats: GroupStats, m: int, constraint: Constraint) -> VerifyResult:
    """Every coalition of ``0..m_eff`` providers (spec 3.1): the reference verifier."""
    if not constraint.eg_monotonic:
        return exhaustive(stats, m, constraint)
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    for size in range(me + 1):
        for combo in itertools.combinations(range(stats.n_providers), size):
            if oracle.breaches(combo):
                return VerifyResult(False, oracle.calls, "brute")
    return VerifyResult(True, oracle.calls, "brute")


def exhaustive(stats: GroupStats, m: int, constraint: Constraint) -> VerifyResult:
    """Definition 2.1 literally, for any histogram constraint (spec 3.9): for every
    ``m_eff``-coalition I and every sub-multiset S of its records in the group, C holds on
    ``(G minus I's records) + S``. Exponential in the records: tiny groups only."""
    me = stats.m_eff(m)
    calls = 0
    for combo in itertools.combinations(range(stats.n_providers), me):
        count_i, hist_i = stats.coalition(combo)
        rem = stats.H - hist_i
        base = stats.N - count_i
        for keep in itertools.product(*(range(int(x) + 1) for x in hist_i)):
            kept = np.asarray(keep, dtype=rem.dtype)
            calls += 1
            if not constraint.check(base + int(kept.sum()), rem + kept):
                return VerifyResult(False, calls, "exhaustive")
    return VerifyResult(True, calls, "exhaustive")


def direct(stats: GroupStats, m: int, constraint: Constraint) -> VerifyResult:
    """All ``m_eff``-coalitions in provider-id order; false at the first breach (III.B)."""
    _require_monotone(constraint, "direct")
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    for combo in itertools.combinations(range(stats.n_providers), me):
        if oracle.breaches(combo):
            return VerifyResult(False, oracle.calls, "direct")
    return VerifyResult(True, oracle.calls, "direct")


def bottom_up(
    stats: GroupStats, m: int, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> VerifyResult:
    """Layers ``0..m_eff`` (the 0-adversary included), strongest coalition first; a breach
    anywhere there breaches some m-coalition above it (upward pruning, III.C)."""
    _require_monotone(constraint, "bottom-up")
    oracle = Oracle(stats, constraint)
    lat = _Lattice(stats, constraint, alpha)
    for size in range(stats.m_eff(m) + 1):
        for mask in lat.layer(size, descending=True).tolist():
            if oracle.breaches(lat.local(mask)):
                return VerifyResult(False, oracle.calls, "bottom-up")
    return VerifyResult(True, oracle.calls, "bottom-up")


def top_down(
    stats: GroupStats, m: int, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> VerifyResult:
    """Layers ``n_G - 1`` down to ``m_eff``, weakest coalition first; a safe coalition
    resolves all its m-subsets (downward pruning, III.D)."""
    _require_monotone(constraint, "top-down")
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "top-down")
    lat = _Lattice(stats, constraint, alpha)
    kb = Knowledge(lat.n, me)
    for size in range(lat.n - 1, me - 1, -1):
        masks = kb.unresolved if size == me else layer_masks(lat.n, size)
        if kb.safe:  # drop the sub-coalitions of what earlier layers found safe
            safe = np.array(kb.safe, dtype=np.int64)
            masks = masks[~((masks[:, None] & ~safe[None, :]) == 0).any(axis=1)]
        if size > me:  # only coalitions above some unresolved m-coalition can help
            sub = kb.unresolved
            masks = masks[((sub[None, :] & ~masks[:, None]) == 0).any(axis=1)]
        before = len(kb.safe)
        for mask in lat.ranked(masks, descending=False).tolist():
            if any(is_subset(mask, t) for t in kb.safe[before:]):
                continue
            if oracle.breaches(lat.local(mask)):
                if size == me:
                    return VerifyResult(False, oracle.calls, "top-down")
            else:
                kb.mark_safe(mask)
                if kb.done:
                    return VerifyResult(True, oracle.calls, "top-down")
    return VerifyResult(True, oracle.calls, "top-down")


def binary(
    stats: GroupStats, m: int, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> VerifyResult:
    """Algorithm 1 as corrected (spec 3.5): for each top coalition with an unresolved
    m-subset, a safe one prunes its subsets; a breaching one is bisected against its
    strongest unresolved m-subset (weakest members added first) down to a safe / breaching
    pair one provider apart, which prunes both ways."""
    _require_monotone(constraint, "binary")
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "binary")
    lat = _Lattice(stats, constraint, alpha)
    n = lat.n
    full = (1 << n) - 1
    supers = [full & ~(1 << i) for i in range(n - 1, -1, -1)]
    if me == n - 1:
        for s in supers:
            if oracle.breaches(lat.local(s)):
                return VerifyResult(False, oracle.calls, "binary")
        return VerifyResult(True, oracle.calls, "binary")
    kb = Knowledge(n, me)
    cache: dict[int, bool] = {}

    def status(mask: int) -> bool:
        if kb.known_safe(mask):
            return False
        if kb.known_breach(mask):
            return True
        if mask not in cache:
            cache[mask] = oracle.breaches(lat.local(mask))
        return cache[mask]

    at = 0  # a top coalition with no unresolved m-subset never gets one back
    while not kb.done:
        while not kb.any_unresolved_in(supers[at]):
            at += 1
        top = supers[at]
        if not status(top):
            kb.mark_safe(top)
            continue
        kb.mark_breach(top)
        sub = int(lat.ranked(kb.unresolved_in(top), descending=True)[0])
        if status(sub):
            return VerifyResult(False, oracle.calls, "binary")
        lo, hi = sub, top
        while popcount(hi) - popcount(lo) >= 2:
            extra = members(hi & ~lo)[: (popcount(hi) + popcount(lo)) // 2 - popcount(lo)]
            mid = lo | sum(1 << i for i in extra)
            if status(mid):
                hi = mid
            else:
                lo = mid
        kb.mark_safe(lo)
        kb.mark_breach(hi)
    return VerifyResult(True, oracle.calls, "binary")


def average_provider_fitness(
    stats: GroupStats, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> float:
    """Mean fitness of the providers' own records in the group (the selector's input)."""
    score, _ = fitness_batch(constraint, stats.c, stats.h, alpha)
    return float(score.mean())


def adaptive(
    stats: GroupStats,
    m: int,
    constraint: Constraint,
    alpha: float = ALPHA_VERIFY,
    mode: str = "fitness",
    threshold: float | None = None,
) -> VerifyResult:
    """Binary for weak groups, top-down for robust ones (section III.E): ``mode`` "fitness"
    compares the average provider fitness with ``threshold`` (default 0.85),
    "records_per_provider" compares ``|G| / n_G`` (default 15)."""
    if mode == "fitness":
        value = average_provider_fitness(stats, constraint, alpha)
        limit = FITNESS_THRESHOLD if threshold is None else threshold
    elif mode == "records_per_provider":
        value = stats.N / stats.n_providers
        limit = RECORDS_THRESHOLD if threshold is None else threshold
    else:
        raise ParameterError(f"adaptive mode is 'fitness' or 'records_per_provider', got {mode!r}")
    use = binary if value < limit else top_down
    return use(stats, m, constraint, alpha)


def exact(stats: GroupStats, m: int, constraint: Constraint) -> VerifyResult:
    """The closed forms of :mod:`kerckhoffs.mprivacy.exact` on this one group."""
    from kerckhoffs.mprivacy.exact import m_private_triples

    g = np.zeros(stats.h.size, dtype=np.int64)
    p = np.repeat(np.arange(stats.n_providers), stats.h.shape[1])
    s = np.tile(np.arange(stats.h.shape[1]), stats.n_providers)
    w = stats.h.ravel()
    keep = w > 0
    ok = m_private_triples(g[keep], p[keep], s[keep], w[keep], 1, stats.h.shape[1], m, constraint)
    return VerifyResult(bool(ok[0]), 0, "exact")


VERIFIERS: dict[str, Callable[..., VerifyResult]] = {
    "brute": brute,
    "exhaustive": exhaustive,
    "direct": direct,
    "bottom-up": bottom_up,
    "top-down": top_down,
    "binary": binary,
    "adaptive": adaptive,
    "exact": exact,
}
"""Every verifier by name."""


def verify(
    stats: GroupStats, m: int, constraint: Constraint, strategy: str = "adaptive"
) -> VerifyResult:
    """Whether the group is m-private w.r.t. ``constraint``, by ``strategy``."""
    fn = VERIFIERS.get(strategy)
    if fn is None:
        raise ParameterError(
            f"unknown m-privacy verifier {strategy!r} (known: {', '.join(VERIFIERS)})"
        )
    return fn(stats, m, constraint)
