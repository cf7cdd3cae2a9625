"""Verifying m-privacy of one group (paper 003 section III; ``docs/theory/m-privacy.md``:
``#brute-force``, ``#direct``, ``#bottom-up``, ``#top-down``, ``#binary-verification``,
``#adaptive``, ``#exhaustive``).

Every verifier decides layer ``m_eff = min(m, n_G - 1)`` of the group's coalition lattice
and returns the verdict with its oracle-call count (the paper's cost measure):

- :func:`brute`: every coalition of size ``0..m_eff`` (the test oracle,
  ``docs/theory/m-privacy.md#brute-force``); for a
  constraint that is not EG-monotonic, :func:`exhaustive`.
- :func:`direct`: the ``C(n_G, m_eff)`` m-coalitions in provider-id order (section III.B).
- :func:`bottom_up`: layers ``0..m_eff``, strongest coalition first; stops at a breach.
- :func:`top_down`: layers ``n_G - 1`` down to ``m_eff``, weakest first; a safe coalition
  prunes its sub-coalitions (downward pruning). Coalitions that contain no unresolved
  m-coalition are skipped too (checking them could not resolve anything).
- :func:`binary`: Algorithm 1 as corrected (``docs/theory/m-privacy.md#binary-verification``; its
  lines 6-7 are inverted in the paper, ``docs/theory/m-privacy.md#err-binary-inverted``: a *safe*
  top coalition prunes its subsets and the search goes on; a breaching one starts the binary search
  between it and its strongest unresolved m-subset).
- :func:`adaptive`: binary for weak groups, top-down for robust ones (section III.E).
- :func:`exact`: the closed forms of :mod:`kerckhoffs.mprivacy.exact` (no oracle calls).

The pruning verifiers need an EG-monotonic C (Definition 2.3) and refuse any other.
Coalition power is the fitness (Eq. 1, alpha = 0.3) of the records the coalition contributes;
ties go to the higher raw score, then to the provider ranks
(``docs/theory/m-privacy.md#adaptive-ordering``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.mprivacy.constraints import Constraint
from kerckhoffs.mprivacy.fitness import (
    counting_fitness,
    fitness_batch,
    fitness_batch_counts,
    is_counting,
)
from kerckhoffs.mprivacy.group import GroupStats, Oracle
from kerckhoffs.mprivacy.lattice import CoalitionVerdicts, layer_masks

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


_INT64_MAX = np.iinfo(np.int64).max

SMALL = 16
"""Up to this many coalitions are ranked in Python (a numpy call costs more than the work)."""


@lru_cache(maxsize=64)
def _rankable_in_python(constraint: Constraint) -> bool:
    """A counting constraint (:func:`is_counting`) with thresholds of at least 1 (so no
    division by zero in Python floats)."""
    return is_counting(constraint) and all(
        getattr(p, "k", 1) >= 1 and getattr(p, "l", 1) >= 1 for p in constraint.parts
    )


@lru_cache(maxsize=64)
def _bound_fitness(
    constraint: Constraint, alpha: float
) -> Callable[[int, int], tuple[float, float]]:
    """:func:`counting_fitness`, bound once per (constraint, alpha)."""
    return counting_fitness(constraint, alpha)


@lru_cache(maxsize=64)
def _powers(n: int) -> np.ndarray:
    """``1 << i`` for ``i < n`` (int64)."""
    out = np.int64(1) << np.arange(n, dtype=np.int64)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=8)
def _bit_rows(width: int) -> np.ndarray:
    """The ``2^width x width`` 0/1 matrix whose row ``b`` holds the bits of ``b``."""
    every = np.arange(1 << width, dtype=np.int64)
    out = (every[:, None] >> np.arange(width, dtype=np.int64)) & 1
    out.flags.writeable = False
    return out


class _Lattice:
    """The group's providers ranked by ascending power (Algorithm 1 line 2) and coalition
    power by mask; bit ``i`` of a mask is the i-th weakest provider.

    A coalition's records count, SA histogram (or, for a counting constraint, the bitmask of
    its SA values) and bit-reversed mask are sums over its members. Up to :data:`SMALL`
    coalitions of a counting constraint are ranked in Python from per-provider ints; more
    are read from tables over each byte of the mask (built on first use), so ranking a
    layer costs a few table look-ups per coalition instead of a coalition x provider
    product. Every path computes the same floats and sorts by the same keys: (score, raw
    score, bit-reversed mask).
    """

    def __init__(
        self,
        stats: GroupStats,
        constraint: Constraint,
        alpha: float,
        own: list[tuple[float, float]] | None = None,
    ) -> None:
        self.stats, self.constraint, self.alpha = stats, constraint, alpha
        n = self.n = stats.n_providers
        self._counting = _rankable_in_python(constraint) and stats.h.shape[1] <= 62
        if self._counting:
            c_list = stats.c.tolist()
            self._fit = _bound_fitness(constraint, alpha)
            if own is None:
                distinct = np.count_nonzero(stats.h, axis=1).tolist()
                pairs = [self._fit(x, d) for x, d in zip(c_list, distinct, strict=True)]
            else:
                pairs = own
            self.order = sorted(range(n), key=lambda i: (pairs[i][0], pairs[i][1], i))
            self._c = [c_list[p] for p in self.order]
            self._held = stats.h > 0
            self._holders: list[int] | None = None  # built on the first Python ranking
            self._solo: list[int] = []
            self._n_records = stats.N
            self._full = (1 << n) - 1
        else:
            pairs = _provider_fitness(stats, constraint, alpha) if own is None else own
            self.order = sorted(range(n), key=lambda i: (pairs[i][0], pairs[i][1], i))
        self._pairs = [(1 << i, p) for i, p in enumerate(self.order)]
        self._tables: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] | None = None
        self._positions: dict[int, np.ndarray] = {}

    def local(self, mask: int) -> list[int]:
        """The members of ``mask`` as the group's provider indices."""
        return [p for b, p in self._pairs if mask & b]

    def _key_small(self, mask: int) -> tuple[float, float, int]:
        """(score, raw score, bit-reversed mask) of one coalition, in Python: the records
        count over its members (or the complement's, whichever is fewer), the SA values
        whose holders meet it, the reversed bit string."""
        n = self.n
        holders = self._holders
        if holders is None:  # SA value -> bitmask of its holders; values held by one alone
            bit_of = np.empty(n, dtype=np.int64)  # provider -> its bit in the lattice
            bit_of[self.order] = _powers(n)
            holders = self._holders = [x for x in (self._held.T @ bit_of).tolist() if x]
            self._solo = [0] * n
            for x in holders:
                if x.bit_count() == 1:
                    self._solo[x.bit_length() - 1] += 1
        rest = self._full & ~mask
        if rest.bit_count() == 1:  # a top coalition: all providers but one
            i = rest.bit_length() - 1
            score, raw = self._fit(self._n_records - self._c[i], len(holders) - self._solo[i])
            return score, raw, self._full ^ (1 << (n - 1 - i))
        else:
            big = mask.bit_count() > n // 2
            x = rest if big else mask
            count = 0
            while x:
                low = x & -x
                count += self._c[low.bit_length() - 1]
                x ^= low
            if big:
                count = self._n_records - count
            distinct = 0
            for value_holders in holders:
                if value_holders & mask:
                    distinct += 1
        score, raw = self._fit(count, distinct)
        return score, raw, int(format(mask, f"0{n}b")[::-1], 2)

    def _byte_tables(self) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        if self._tables is None:
            s, n = self.stats, self.n
            order = np.asarray(self.order, dtype=np.int64)
            c, h = s.c[order], s.h[order]
            if self._counting:  # SA values present, as a bitmask
                h = (h > 0).astype(np.int64) @ (np.int64(1) << np.arange(h.shape[1]))
            rev = np.int64(1) << (n - 1 - np.arange(n, dtype=np.int64))
            self._tables = []
            for lo in range(0, n, 8):
                rows = _bit_rows(min(8, n - lo))
                part = h[lo : lo + 8]
                if self._counting:  # OR of the members' bitmasks
                    second = np.bitwise_or.reduce(rows * part[None, :], axis=1)
                else:
                    second = rows @ part
                self._tables.append((lo, rows @ c[lo : lo + 8], second, rows @ rev[lo : lo + 8]))
        return self._tables

    def keys(self, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fitness score, raw score, bit-reversed mask) of each coalition of ``masks``: a
        coalition x provider product for a one-off few hundred, byte tables beyond."""
        if self._tables is None and masks.size <= 512:
            s, n = self.stats, self.n
            order = np.asarray(self.order, dtype=np.int64)
            member = (masks[:, None] >> np.arange(n, dtype=np.int64)) & 1
            counts = member @ s.c[order]
            hists = member @ s.h[order]
            rev = member @ _powers(n)[::-1]
            if self._counting:
                distinct = np.count_nonzero(hists, axis=1)
                score, raw = fitness_batch_counts(self.constraint, counts, distinct, self.alpha)
            else:
                score, raw = fitness_batch(self.constraint, counts, hists, self.alpha)
            return score, raw, rev
        counts, second, rev = self._table_sums(masks)
        if self._counting:
            distinct = np.bitwise_count(second).astype(np.int64)
            score, raw = fitness_batch_counts(self.constraint, counts, distinct, self.alpha)
        else:
            score, raw = fitness_batch(self.constraint, counts, second, self.alpha)
        return score, raw, rev

    def _table_sums(self, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(records count, SA histogram or value bitmask, bit-reversed mask) of each
        coalition of ``masks``, from the byte tables."""
        counts = second = rev = None
        for lo, t_count, t_second, t_rev in self._byte_tables():
            byte = (masks >> lo) & 255 if lo else masks & 255
            if counts is None:
                counts, second, rev = t_count[byte], t_second[byte], t_rev[byte]
            elif self._counting:
                counts, rev = counts + t_count[byte], rev + t_rev[byte]
                second = second | t_second[byte]
            else:
                counts, rev = counts + t_count[byte], rev + t_rev[byte]
                second = second + t_second[byte]
        if counts is None or second is None or rev is None:
            raise InternalError("verify: no provider byte was counted")
        return counts, second, rev

    def ranked(self, masks: np.ndarray, descending: bool) -> list[int]:
        """``masks`` by power (ascending, or descending), ties by the member ranks
        (lexicographic on the ascending rank lists, which is the bit-reversed mask
        descending)."""
        if len(masks) <= 1:
            return [int(x) for x in masks]
        if self._counting and len(masks) <= SMALL:
            keyed = []
            for x in np.asarray(masks).tolist():
                s, r, b = self._key_small(x)
                keyed.append((-s, -r, -b, x) if descending else (s, r, -b, x))
            keyed.sort()  # the reversed masks differ, so the masks themselves never compare
            return [t[3] for t in keyed]
        masks = np.asarray(masks, dtype=np.int64)
        score, raw, rev = self.keys(masks)
        sign = -1.0 if descending else 1.0
        out: list[int] = masks[np.lexsort((-rev, sign * raw, sign * score))].tolist()
        return out

    def strongest(self, size: int, chosen: np.ndarray) -> int:
        """The first of ``ranked(layer_masks(n, size)[chosen], descending=True)`` (``chosen``
        a non-empty boolean selection): in Python when few, else the lowest position in the
        whole layer ranked once (cached per layer, :meth:`_strength_ranks`)."""
        layer = layer_masks(self.n, size)
        pos = self._positions.get(size)
        if pos is None and self._counting and np.count_nonzero(chosen) <= SMALL:
            return self.ranked(layer[chosen], descending=True)[0]
        if pos is None:
            pos = self._strength_ranks(layer)
            self._positions[size] = pos
        return int(layer[np.argmin(np.where(chosen, pos, _INT64_MAX))])

    def _strength_ranks(self, layer: np.ndarray) -> np.ndarray:
        """An int key per coalition of ``layer``, smallest for the strongest, ordered as
        ``ranked(layer, descending=True)``: the dense ranks of the negated score and raw
        score and the complemented reversed mask, packed into one int64 (two ``unique``
        calls instead of a three-key sort; for a counting constraint one ``unique`` of the
        (count, distinct) pairs, whose few scores are then ranked alone); the sort's
        positions if that could overflow."""
        n, size = self.n, layer.size
        if self._counting:  # the score is a function of (count, distinct): rank those pairs
            counts, sets, rev = self._table_sums(layer)
            pair = (counts << 6) | np.bitwise_count(sets).astype(np.int64)
            uniq, inv = np.unique(pair, return_inverse=True)
            if uniq.size < (1 << (62 - n)):
                s, r = fitness_batch_counts(self.constraint, uniq >> 6, uniq & 63, self.alpha)
                o = np.lexsort((-r, -s))
                so, ro = s[o], r[o]
                step = np.ones(o.size, dtype=np.int64)
                step[0] = 0
                step[1:] = (so[1:] != so[:-1]) | (ro[1:] != ro[:-1])
                dense = np.empty(o.size, dtype=np.int64)
                dense[o] = np.cumsum(step)
                return (dense[inv.ravel()] << n) | (((1 << n) - 1) ^ rev)
        score, raw, rev = self.keys(layer)
        if size * size < (1 << (62 - self.n)) and not (
            np.isnan(score).any() or np.isnan(raw).any()
        ):
            by_score = np.unique(-score, return_inverse=True)[1].astype(np.int64)
            by_raw = np.unique(-raw, return_inverse=True)[1].astype(np.int64)
            return ((by_score * size + by_raw) << self.n) | (((1 << self.n) - 1) ^ rev)
        pos = np.empty(size, dtype=np.int64)
        pos[np.lexsort((-rev, -raw, -score))] = np.arange(size)
        return pos


def _provider_fitness(
    stats: GroupStats, constraint: Constraint, alpha: float
) -> list[tuple[float, float]]:
    """(score, raw score) of each provider's own records in the group, as
    :func:`fitness_batch` gives them (in Python for a counting constraint)."""
    if _rankable_in_python(constraint):
        fit = _bound_fitness(constraint, alpha)
        distinct = np.count_nonzero(stats.h, axis=1).tolist()
        return [fit(x, d) for x, d in zip(stats.c.tolist(), distinct, strict=True)]
    score, raw = fitness_batch(constraint, stats.c, stats.h, alpha)
    return list(zip(score.tolist(), raw.tolist(), strict=True))


def _require_monotone(constraint: Constraint, name: str) -> None:
    if not constraint.eg_monotonic:
        raise ParameterError(
            f"the {name} verifier prunes, which needs an EG-monotonic constraint (k, "
            "distinct-l and their conjunction); use the exact or exhaustive verifier"
        )


def brute(stats: GroupStats, m: int, constraint: Constraint) -> VerifyResult:
    """Every coalition of ``0..m_eff`` providers
    (``docs/theory/m-privacy.md#brute-force``): the reference verifier."""
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
    """Definition 2.1 literally, for any histogram constraint
    (``docs/theory/m-privacy.md#exhaustive``): for every
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
        for mask in lat.ranked(layer_masks(lat.n, size), descending=True):
            if oracle.breaches(lat.local(mask)):
                return VerifyResult(False, oracle.calls, "bottom-up")
    return VerifyResult(True, oracle.calls, "bottom-up")


def top_down(
    stats: GroupStats,
    m: int,
    constraint: Constraint,
    alpha: float = ALPHA_VERIFY,
    own: list[tuple[float, float]] | None = None,
) -> VerifyResult:
    """Layers ``n_G - 1`` down to ``m_eff``, weakest coalition first; a safe coalition
    resolves all its m-subsets (downward pruning, III.D).

    A layer checks, in ascending power, the coalitions that contain an m-coalition still
    unresolved when the layer starts (:meth:`CoalitionVerdicts.covering`); that also drops every
    sub-coalition of a coalition found safe above (all its m-subsets are resolved).
    ``own``: the providers' (score, raw score), when the caller has them."""
    _require_monotone(constraint, "top-down")
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "top-down")
    lat = _Lattice(stats, constraint, alpha, own)
    kb = CoalitionVerdicts(lat.n, me)
    for size in range(lat.n - 1, me - 1, -1):
        if size == me:
            masks = kb.unresolved
        elif kb.safe:
            masks = kb.covering(size)
        else:  # nothing resolved yet: every coalition of the layer covers an m-coalition
            masks = layer_masks(lat.n, size)
        for mask in lat.ranked(masks, descending=False):
            if oracle.breaches(lat.local(mask)):
                if size == me:
                    return VerifyResult(False, oracle.calls, "top-down")
            else:
                kb.mark_safe(mask)
                if kb.done:
                    return VerifyResult(True, oracle.calls, "top-down")
    return VerifyResult(True, oracle.calls, "top-down")


def binary(
    stats: GroupStats,
    m: int,
    constraint: Constraint,
    alpha: float = ALPHA_VERIFY,
    own: list[tuple[float, float]] | None = None,
) -> VerifyResult:
    """Algorithm 1 as corrected (``docs/theory/m-privacy.md#binary-verification``,
    ``#err-binary-inverted``): for each top coalition with an unresolved
    m-subset, a safe one prunes its subsets; a breaching one is bisected against its
    strongest unresolved m-subset (weakest members added first) down to a safe / breaching
    pair one provider apart, which prunes both ways. ``own``: the providers' (score, raw
    score), when the caller has them."""
    _require_monotone(constraint, "binary")
    oracle = Oracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "binary")
    lat = _Lattice(stats, constraint, alpha, own)
    n = lat.n
    full = (1 << n) - 1
    supers = [full & ~(1 << i) for i in range(n - 1, -1, -1)]
    if me == n - 1:
        for s in supers:
            if oracle.breaches(lat.local(s)):
                return VerifyResult(False, oracle.calls, "binary")
        return VerifyResult(True, oracle.calls, "binary")
    kb = CoalitionVerdicts(n, me)
    cache: dict[int, bool] = {}

    def status(mask: int) -> bool:
        # Every mask asked here contains an unresolved m-coalition (the top chosen for it,
        # the strongest unresolved m-subset, the coalitions between them), so none is ever
        # known safe: only the known-breach test can spare an oracle call. A cached answer
        # is the oracle's, so looking it up first changes nothing.
        out = cache.get(mask)
        if out is None:
            if kb.known_breach(mask):
                return True
            out = cache[mask] = oracle.breaches(lat.local(mask))
        return out

    at = 0  # a top coalition with no unresolved m-subset never gets one back
    while not kb.done:
        while not kb.any_unresolved_in(supers[at]):
            at += 1
        top = supers[at]
        if not status(top):
            kb.mark_safe(top)
            continue
        kb.mark_breach(top)
        sub = lat.strongest(me, kb.unresolved_mask_in(top))
        if status(sub):
            return VerifyResult(False, oracle.calls, "binary")
        lo, hi = sub, top
        size_lo, size_hi = me, n - 1
        while size_hi - size_lo >= 2:
            half = (size_hi + size_lo) // 2
            extra = hi & ~lo
            mid = lo
            for _ in range(half - size_lo):  # the weakest (lowest) bits first
                low = extra & -extra
                mid |= low
                extra ^= low
            if status(mid):
                hi, size_hi = mid, half
            else:
                lo, size_lo = mid, half
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
    own = None
    if mode == "fitness":
        own = _provider_fitness(stats, constraint, alpha)
        value = float(np.array([s for s, _ in own]).mean())  # as average_provider_fitness
        limit = FITNESS_THRESHOLD if threshold is None else threshold
    elif mode == "records_per_provider":
        value = stats.N / stats.n_providers
        limit = RECORDS_THRESHOLD if threshold is None else threshold
    else:
        raise ParameterError(f"adaptive mode is 'fitness' or 'records_per_provider', got {mode!r}")
    use = binary if value < limit else top_down
    return use(stats, m, constraint, alpha, own)


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
