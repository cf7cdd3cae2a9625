"""Exact semantic (Bayesian) privacy on tiny domains: what an adversary with *any* prior learns from
a mechanism's output, with and without one person's data (paper 004, Ganta, Kasiviswanathan, Smith,
KDD 2008, section 4; ``docs/theory/composition.md#semantic-privacy``, ``#theorems``,
``#semantic-checker``, ``#worked-examples``).

Differential privacy (Def. 10) is a statement about the mechanism alone. The paper's Bayesian
reading (Defs. 12, 13) is a statement about every adversary: whatever the prior ``b`` over
databases ``D`` in ``domain^n`` (the side information, a composition attack's other releases
included), the posterior after seeing transcript ``t`` is about the same whether or not person
``i``'s data was used. This module computes that exactly, with :class:`fractions.Fraction`:

* **Game 0** (the real world): ``b_0[D | t] = Pr[A(D) = t] b[D] / sum_D' Pr[A(D') = t] b[D']``
  (Eq. 1).
* **Game i** (person ``i``'s data not used): the mechanism runs on ``D_{-i}``, ``D`` with
  position ``i`` replaced by a fixed default value ``⊥`` ("any value in the domain will do";
  the caller fixes it), while the prior stays on ``D``:
  ``b_i[D | t] = Pr[A(D_{-i}) = t] b[D] / sum_D' Pr[A(D'_{-i}) = t] b[D']``. This is the
  corrected form of the paper's formula, printed garbled in its section 4: the likelihood
  without ``i`` times the prior, normalized (``docs/theory/composition.md#err-posterior``).
* **Statistical distance** ``SD(P, Q) = 1/2 sum |P(D) - Q(D)|`` between the two posteriors over
  databases, per transcript and per person; the mechanism is ``eps``-semantically private for this
  prior when the worst SD is at most ``eps`` (Def. 12). When a posterior is undefined (the
  transcript has probability 0 in that game) the pair counts as a violation with SD 1 (the paper's
  Definition 12 leaves this case undefined; our resolution,
  ``docs/theory/composition.md#err-undefined-posterior``). For Def. 13,
  :meth:`SemanticReport.bad_mass` gives the probability, over ``D ~ b`` and ``t ~ A(D)``, that some
  person's SD exceeds a threshold.

The bounds it is checked against (paper 004's theorems, ``docs/theory/composition.md#theorems``):
Proposition 14 (Dwork-McSherry), ``eps``-DP implies ``(e^eps - 1)``-semantic privacy
(:func:`proposition14_bound`; our tighter derived bound ``tanh(eps)`` is :func:`tanh_bound`);
Theorem 15, ``(eps, delta)``-DP implies
``(e^{3 eps} - 1 + 2 sqrt(delta), n (sqrt(delta) + 2 delta / (eps e^eps)))``-semantic privacy
(:func:`theorem15_bound`; the paper hides the constant of the failure probability, ours is
explicit, ``docs/theory/composition.md#err-constant``).

Exact mechanisms (each a function ``database -> {transcript: probability}``), parametrized by
``e^eps`` as a rational number so that ``eps = ln 3`` is exact (``exp_eps=3``):
:func:`randomized_response` (k-ary, per record), :func:`geometric_count` (two-sided geometric
noise on a count, ``alpha = e^-eps``, clamped to ``[0, n]``: post-processing that loses no
posterior information), :func:`random_record` (the total-variation counterexample: publishes
one uniformly chosen record with its identity; neighbours are ``1/n`` apart in TV yet a person
is fully disclosed) and :func:`with_verbatim` (an ``(eps, delta)``-DP mechanism: with
probability ``delta`` publish the whole database). A mechanism may also be given as a table
``{database: {transcript: probability}}``. Probabilities must be exact (``int`` or
``Fraction``).

Neighbours are substitution neighbours (same ``n``, one position differs; paper 004's Definition 10
with our reading of its neighbour notion, ``docs/theory/composition.md#err-neighbours``):
:func:`neighbour_ratio` is the exact ``e^eps`` of a mechanism (the worst pointwise likelihood ratio
between neighbours, ``inf`` when unbounded) and :func:`neighbour_tv` the worst total variation
between neighbours.

Cost: every database of the prior's support times every transcript times ``n + 1`` games, in
exact arithmetic. It is a test oracle for ``n`` up to about 4 and domains of 2-3 values, not a
tool for real tables; above :data:`MAX_WORK` posterior entries it refuses.

>>> from fractions import Fraction
>>> rr = randomized_response(3, (0, 1))           # eps = ln 3: keep each bit w.p. 3/4
>>> report = semantic_privacy(rr, uniform_prior((0, 1), 2), default=0)
>>> report.sd[((1, 1), 1)]
Fraction(1, 4)
>>> report.worst_sd <= proposition14_bound(3)
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational, Real
from typing import TypeAlias, TypeVar

import numpy as np

from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.randomness import generator

__all__ = [
    "MAX_WORK",
    "Database",
    "Mechanism",
    "SemanticReport",
    "geometric_count",
    "geometric_pmf",
    "neighbour_ratio",
    "neighbour_tv",
    "posterior",
    "product_prior",
    "proposition14_bound",
    "random_record",
    "randomized_response",
    "semantic_privacy",
    "statistical_distance",
    "tanh_bound",
    "theorem15_bound",
    "uniform_prior",
    "with_verbatim",
    "worst_over_priors",
]

Database: TypeAlias = tuple[Hashable, ...]
"""A database: one value per person, position ``i - 1`` holding person ``i``'s value."""

Probability: TypeAlias = int | Fraction
Distribution: TypeAlias = Mapping[Hashable, Probability]
Mechanism: TypeAlias = Callable[[Database], Distribution] | Mapping[Database, Distribution]
"""A mechanism's exact conditional distribution ``Pr[A(D) = t]``: a function of the database
returning ``{transcript: probability}`` (transcripts of probability 0 may be left out), or the
same as a table ``{database: {transcript: probability}}``."""

K = TypeVar("K", bound=Hashable)

MAX_WORK = 2_000_000
"""Most (database, transcript, game) posterior entries :func:`semantic_privacy` computes."""


# -- priors and distances --------------------------------------------------------------------------
def _exact(p: object, what: str) -> Fraction:
    if isinstance(p, bool) or not isinstance(p, Rational):
        raise ParameterError(f"{what} must be an exact int or Fraction, got {p!r}")
    q = Fraction(p)
    if q < 0:
        raise ParameterError(f"{what} is negative: {q}")
    return q


def product_prior(marginals: Sequence[Distribution]) -> dict[Database, Fraction]:
    """The product prior over ``n`` people's independent values: ``b[D] = prod_i b_i[D[i]]``.

    ``marginals[i - 1]`` is person ``i``'s distribution over the domain. Databases of prior
    probability 0 are left out.

    >>> product_prior([{0: Fraction(1, 2), 1: Fraction(1, 2)}, {1: 1}])
    {(0, 1): Fraction(1, 2), (1, 1): Fraction(1, 2)}
    """
    if not marginals:
        raise ParameterError("a prior needs at least one person (n >= 1)")
    people: list[list[tuple[Hashable, Fraction]]] = []
    for i, marginal in enumerate(marginals, start=1):
        values = [(v, _exact(p, f"person {i}'s prior of {v!r}")) for v, p in marginal.items()]
        if sum(p for _, p in values) != 1:
            raise ParameterError(f"person {i}'s prior sums to {sum(p for _, p in values)}, not 1")
        people.append([(v, p) for v, p in values if p > 0])
    prior: dict[Database, Fraction] = {}
    for combo in itertools.product(*people):
        prior[tuple(v for v, _ in combo)] = math.prod((p for _, p in combo), start=Fraction(1))
    return prior


def uniform_prior(domain: Sequence[Hashable], n: int) -> dict[Database, Fraction]:
    """The uniform prior on ``domain^n`` (the prior of the DP test vectors,
    ``docs/theory/composition.md#worked-examples``)."""
    if not domain:
        raise ParameterError("the domain is empty")
    return product_prior([dict.fromkeys(domain, Fraction(1, len(domain)))] * n)


def statistical_distance(p: Mapping[K, Fraction], q: Mapping[K, Fraction]) -> Fraction:
    """``SD(P, Q) = max_S |P(S) - Q(S)| = 1/2 sum_x |P(x) - Q(x)|``, exactly
    (``docs/theory/composition.md#semantic-privacy``).

    >>> statistical_distance({0: Fraction(1, 2), 1: Fraction(1, 2)}, {0: Fraction(1)})
    Fraction(1, 2)
    """
    keys = set(p) | set(q)
    return sum((abs(p.get(x, Fraction(0)) - q.get(x, Fraction(0))) for x in keys), Fraction(0)) / 2


def _check_prior(
    prior: Mapping[Database, Probability],
) -> tuple[int, list[tuple[Database, Fraction]]]:
    support = [(tuple(d), _exact(p, f"the prior of {d!r}")) for d, p in prior.items()]
    if sum(p for _, p in support) != 1:
        raise ParameterError(f"the prior sums to {sum(p for _, p in support)}, not 1")
    support = [(d, p) for d, p in support if p > 0]
    sizes = {len(d) for d, _ in support}
    if len(sizes) != 1 or 0 in sizes:
        raise ParameterError("the prior's databases must all hold the same number n >= 1 of people")
    return sizes.pop(), support


class _Exact:
    """A mechanism's distributions, validated (exact, non-negative, summing to 1) and cached."""

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism
        self.cache: dict[Database, dict[Hashable, Fraction]] = {}

    def __call__(self, database: Database) -> dict[Hashable, Fraction]:
        hit = self.cache.get(database)
        if hit is not None:
            return hit
        if isinstance(self.mechanism, Mapping):
            if database not in self.mechanism:
                raise ParameterError(f"the mechanism's table has no row for database {database!r}")
            raw = self.mechanism[database]
        else:
            raw = self.mechanism(database)
        dist = {t: _exact(p, f"Pr[A({database!r}) = {t!r}]") for t, p in raw.items()}
        if sum(dist.values()) != 1:
            raise ParameterError(
                f"the mechanism's distribution on {database!r} sums to {sum(dist.values())}, not 1"
            )
        self.cache[database] = {t: p for t, p in dist.items() if p > 0}
        return self.cache[database]


def _replaced(database: Database, person: int, default: Hashable) -> Database:
    """``D_{-i}``: person ``i``'s value (1-based) replaced by the default; ``D`` for game 0."""
    if person == 0:
        return database
    return (*database[: person - 1], default, *database[person:])


def _normalize(weights: Mapping[Database, Fraction]) -> dict[Database, Fraction] | None:
    total = sum(weights.values(), Fraction(0))
    if total == 0:
        return None
    return {d: w / total for d, w in weights.items() if w > 0}


def posterior(
    mechanism: Mechanism,
    prior: Mapping[Database, Probability],
    transcript: Hashable,
    game: int = 0,
    default: Hashable = 0,
) -> dict[Database, Fraction] | None:
    """The adversary's posterior over databases after seeing ``transcript`` in game ``game``.

    Game 0 is the real world (paper 004, Eq. 1; ``docs/theory/composition.md#semantic-privacy``);
    game ``i`` (1..n) the world where the mechanism ran on ``D_{-i}``, person ``i``'s value
    replaced by ``default``, the prior still on ``D`` (the corrected Game-i posterior: the paper
    prints it garbled; ours is the likelihood without ``i`` times the prior, normalized,
    ``docs/theory/composition.md#err-posterior``). ``None`` when the transcript has probability 0
    in that game (the posterior is undefined; the checker counts it as SD 1).
    Databases of posterior probability 0 are left out.
    """
    n, support = _check_prior(prior)
    if not 0 <= game <= n:
        raise ParameterError(f"game must be 0 (real world) or a person 1..{n}, got {game}")
    dist = _Exact(mechanism)
    weights = {
        d: b * dist(_replaced(d, game, default)).get(transcript, Fraction(0)) for d, b in support
    }
    return _normalize(weights)


# -- the checker -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SemanticReport:
    """Exact semantic privacy of one mechanism under one prior
    (``docs/theory/composition.md#semantic-checker``).

    ``sd[(t, i)]`` is ``SD(b_0[. | t], b_i[. | t])`` for every transcript ``t`` possible in some
    game and every person ``i`` in 1..n; 1 when either posterior is undefined (those pairs are
    also in ``undefined``). ``transcript_probability[t]`` is ``Pr[A(D) = t]`` with ``D ~ b`` in
    the real world. ``worst_sd`` is the maximum over all pairs (Def. 12's quantity for this
    prior), reached at ``worst`` (the first such pair in transcript order).
    """

    n: int
    default: Hashable
    transcript_probability: dict[Hashable, Fraction]
    sd: dict[tuple[Hashable, int], Fraction]
    undefined: frozenset[tuple[Hashable, int]]
    worst_sd: Fraction
    worst: tuple[Hashable, int]

    def bad_mass(self, threshold: Fraction | float) -> Fraction:
        """Def. 13's failure probability: ``Pr_{D ~ b, t ~ A(D)}[some i has SD > threshold]``,
        where a pair whose posterior is undefined (in :attr:`undefined`) is a violation at
        every threshold, 1 and above included: the adversary's belief after ``t`` has no
        counterpart in that game, so no distance bounds the change (its SD is recorded as 1
        only as a number to rank it by).

        Comparisons are exact (a float threshold is compared by its exact binary value). A
        threshold that is not a number (NaN, a text) is a one-line ParameterError: NaN compares
        false with everything, so it would count only the undefined pairs and return a
        probability that answers no question.
        """
        if isinstance(threshold, bool) or not isinstance(threshold, Real):
            raise ParameterError(f"bad_mass: the threshold must be a number, got {threshold!r}")
        if threshold != threshold:  # NaN, whatever its type
            raise ParameterError("bad_mass: the threshold is NaN; give a number (an SD in [0, 1])")
        bad = {t for (t, i), s in self.sd.items() if s > threshold or (t, i) in self.undefined}
        return sum((self.transcript_probability.get(t, Fraction(0)) for t in bad), Fraction(0))


def semantic_privacy(
    mechanism: Mechanism, prior: Mapping[Database, Probability], default: Hashable = 0
) -> SemanticReport:
    """Every posterior pair's statistical distance, exactly (the checker of
    ``docs/theory/composition.md#semantic-checker``).

    For each transcript ``t`` that has positive probability in some game (the real world or a
    world with one person's value replaced by ``default``) and each person ``i``, the SD
    between the real-world posterior and the Game-i posterior over the prior's databases (an
    undefined posterior counts as SD 1, our resolution of Definition 12's gap,
    ``docs/theory/composition.md#err-undefined-posterior``). The worst case over ``t`` and ``i`` is
    Def. 12's quantity for this prior; :meth:`SemanticReport.bad_mass` gives Def. 13's.
    """
    n, support = _check_prior(prior)
    dist = _Exact(mechanism)
    # weights[game][t][D] = b[D] * Pr[A(D_{-game}) = t]
    weights: list[dict[Hashable, dict[Database, Fraction]]] = []
    for game in range(n + 1):
        per_t: dict[Hashable, dict[Database, Fraction]] = {}
        for d, b in support:
            for t, p in dist(_replaced(d, game, default)).items():
                per_t.setdefault(t, {})[d] = b * p
        weights.append(per_t)
    transcripts = list(dict.fromkeys(t for per_t in weights for t in per_t))
    if len(support) * len(transcripts) * (n + 1) > MAX_WORK:
        raise ParameterError(
            f"{len(support)} databases x {len(transcripts)} transcripts x {n + 1} games is too "
            f"large for the exact checker (at most {MAX_WORK})"
        )
    real = {t: sum(w.values(), Fraction(0)) for t, w in weights[0].items()}
    sd: dict[tuple[Hashable, int], Fraction] = {}
    undefined: set[tuple[Hashable, int]] = set()
    worst: tuple[Fraction, tuple[Hashable, int]] | None = None
    for t in transcripts:
        b0 = _normalize(weights[0].get(t, {}))
        for i in range(1, n + 1):
            bi = _normalize(weights[i].get(t, {}))
            if b0 is None or bi is None:
                s = Fraction(1)
                undefined.add((t, i))
            else:
                s = statistical_distance(b0, bi)
            sd[(t, i)] = s
            if worst is None or s > worst[0]:
                worst = (s, (t, i))
    if worst is None:  # a mechanism's distribution is never empty: it sums to 1
        raise InternalError("no (output, neighbour) pair was compared")
    return SemanticReport(
        n=n,
        default=default,
        transcript_probability=real,
        sd=sd,
        undefined=frozenset(undefined),
        worst_sd=worst[0],
        worst=worst[1],
    )


def worst_over_priors(
    mechanism: Mechanism,
    domain: Sequence[Hashable],
    n: int,
    trials: int = 200,
    default: Hashable = 0,
    seed: int | np.random.Generator | None = None,
) -> tuple[Fraction, dict[Database, Fraction]]:
    """The largest worst SD found over random priors on ``domain^n``: a lower estimate of the
    mechanism's semantic-privacy level ``sup_b worst_sd`` (Def. 12 quantifies over all priors),
    for comparing with Proposition 14's and Theorem 15's bounds (experiment X3).

    The uniform prior is tried first; then ``trials`` random priors with integer weights in
    0..1000 cubed (so near point masses and zero-mass databases occur), exact Fractions. Returns
    the worst SD and the prior that reached it. ``seed`` is for experiments
    (``docs/theory/choices.md#secret-randomness``).
    """
    if trials < 0:
        raise ParameterError(f"trials must be non-negative, got {trials}")
    rng = generator(seed)
    databases = list(itertools.product(domain, repeat=n))
    best_prior = uniform_prior(domain, n)
    best = semantic_privacy(mechanism, best_prior, default=default).worst_sd
    for _ in range(trials):
        weights = rng.integers(0, 1001, size=len(databases)) ** 3
        if not weights.any():
            continue
        total = int(weights.sum())
        prior = {d: Fraction(int(w), total) for d, w in zip(databases, weights, strict=True) if w}
        worst = semantic_privacy(mechanism, prior, default=default).worst_sd
        if worst > best:
            best, best_prior = worst, prior
    return best, best_prior


# -- differential privacy of an exact mechanism ----------------------------------------------------
def _neighbours(domain: Sequence[Hashable], n: int) -> Iterable[tuple[Database, Database]]:
    """Every ordered pair of substitution neighbours in ``domain^n`` (our reading of paper 004's
    neighbours, ``docs/theory/composition.md#err-neighbours``)."""
    for d in itertools.product(domain, repeat=n):
        for i in range(n):
            for v in domain:
                if v != d[i]:
                    yield d, (*d[:i], v, *d[i + 1 :])


def neighbour_ratio(mechanism: Mechanism, domain: Sequence[Hashable], n: int) -> Fraction | float:
    """The mechanism's exact ``e^eps`` (Def. 10 on a finite output space): the largest
    ``Pr[A(D1) = t] / Pr[A(D2) = t]`` over substitution neighbours and transcripts; ``math.inf``
    when some transcript is possible on one neighbour and impossible on the other."""
    dist = _Exact(mechanism)
    worst: Fraction = Fraction(1)
    for d1, d2 in _neighbours(domain, n):
        p1, p2 = dist(d1), dist(d2)
        for t, p in p1.items():
            q = p2.get(t, Fraction(0))
            if q == 0:
                return math.inf
            worst = max(worst, p / q)
    return worst


def neighbour_tv(mechanism: Mechanism, domain: Sequence[Hashable], n: int) -> Fraction:
    """The largest total-variation distance between the output distributions of substitution
    neighbours: the additive measure the paper shows is *not* enough (paper 004's negative
    example, ``docs/theory/composition.md#theorems``)."""
    dist = _Exact(mechanism)
    return max(
        (statistical_distance(dist(d1), dist(d2)) for d1, d2 in _neighbours(domain, n)),
        default=Fraction(0),
    )


# -- exact mechanisms ------------------------------------------------------------------------------
def _exp_eps(exp_eps: Probability) -> Fraction:
    x = _exact(exp_eps, "e^eps")
    if x < 1:
        raise ParameterError(f"e^eps must be at least 1 (eps >= 0), got {x}")
    return x


def randomized_response(
    exp_eps: Probability, domain: Sequence[Hashable]
) -> Callable[[Database], dict[Database, Fraction]]:
    """k-ary randomized response on every record (local ``eps``-DP per record;
    ``docs/theory/composition.md#dp-mechanisms``).

    Each person's value is reported truthfully with probability ``p = e^eps / (e^eps + m - 1)``
    and as each of the ``m - 1`` other domain values with probability ``q = 1 / (e^eps + m - 1)``,
    independently; the transcript is the tuple of reported values. ``exp_eps=3`` on a binary
    domain keeps each bit with probability 3/4 (a DP test vector,
    ``docs/theory/composition.md#worked-examples``).
    """
    x = _exp_eps(exp_eps)
    values = tuple(dict.fromkeys(domain))
    if len(values) < 2:
        raise ParameterError("randomized response needs a domain of at least 2 values")
    keep = x / (x + len(values) - 1)
    other = 1 / (x + len(values) - 1)

    def distribution(database: Database) -> dict[Database, Fraction]:
        per_person = [[(r, keep if r == v else other) for r in values] for v in database]
        out: dict[Database, Fraction] = {}
        for combo in itertools.product(*per_person):
            out[tuple(r for r, _ in combo)] = math.prod((p for _, p in combo), start=Fraction(1))
        return out

    return distribution


def geometric_pmf(alpha: Probability, z: int) -> Fraction:
    """Two-sided geometric (discrete Laplace) noise: ``Pr[Z = z] = (1 - alpha)/(1 + alpha) *
    alpha^|z|``, with ``alpha = e^{-eps / sensitivity}``
    (``docs/theory/composition.md#dp-mechanisms``).

    >>> [geometric_pmf(Fraction(1, 2), z) for z in (0, 1, -2)]
    [Fraction(1, 3), Fraction(1, 6), Fraction(1, 12)]
    """
    a = _exact(alpha, "alpha")
    if not 0 < a < 1:
        raise ParameterError(f"alpha must lie in (0, 1), got {a}")
    return (1 - a) / (1 + a) * a ** abs(z)


def geometric_count(
    exp_eps: Probability, n: int, counted: Iterable[Hashable] = (1,)
) -> Callable[[Database], dict[int, Fraction]]:
    """The geometric mechanism on a count (sensitivity 1 under either neighbour notion):
    ``c(D) + Z``, ``c(D)`` the number of people whose value is in ``counted``, ``Z`` two-sided
    geometric with ``alpha = 1 / e^eps``; the output is clamped to ``[0, n]``.

    Clamping is post-processing, so the mechanism stays ``eps``-DP, and it loses nothing the
    checker measures: for ``t >= n`` every game's likelihood is ``alpha^(t - n)`` times its value
    at ``t = n`` (all counts are at most ``n``), so the posteriors are those of ``t = n`` (and
    likewise below 0). The clamped ends carry the tails' mass,
    ``Pr[Z <= -c] = alpha^c / (1 + alpha)``.
    """
    x = _exp_eps(exp_eps)
    if x == 1:
        raise ParameterError("the geometric mechanism needs eps > 0 (e^eps > 1)")
    if n < 1:
        raise ParameterError(f"n must be at least 1, got {n}")
    alpha = 1 / x
    members = frozenset(counted)

    def distribution(database: Database) -> dict[int, Fraction]:
        if len(database) != n:
            raise ParameterError(
                f"geometric_count was built for n = {n}, got {len(database)} people"
            )
        c = sum(v in members for v in database)
        out = {t: geometric_pmf(alpha, t - c) for t in range(1, n)}
        out[0] = alpha**c / (1 + alpha)
        out[n] = alpha ** (n - c) / (1 + alpha)
        return out

    return distribution


def random_record() -> Callable[[Database], dict[tuple[int, Hashable], Fraction]]:
    """The total-variation counterexample (``docs/theory/composition.md#theorems``,
    ``#worked-examples``): pick a person ``j`` uniformly and
    publish ``(j, D[j])``, the record *with its identity* (``j`` 1-based). Neighbours' output
    distributions are only ``1/n`` apart in total variation, yet no ``eps`` makes it DP and the
    published person's value is disclosed whatever the prior."""

    def distribution(database: Database) -> dict[tuple[int, Hashable], Fraction]:
        n = len(database)
        return {(j, v): Fraction(1, n) for j, v in enumerate(database, start=1)}

    return distribution


def with_verbatim(
    mechanism: Mechanism, delta: Probability
) -> Callable[[Database], dict[tuple[str, Hashable], Fraction]]:
    """An ``(eps, delta)``-DP mechanism from an ``eps``-DP one (used by the tested property that
    Theorem 15 holds on an (eps, delta)-DP mechanism, ``docs/theory/composition.md#properties``):
    with probability
    ``delta`` publish the whole database verbatim (transcript ``("verbatim", D)``), otherwise
    the mechanism's transcript ``("mechanism", t)``. For any output set ``S``,
    ``Pr[A(D1) in S] <= (1 - delta) e^eps Pr[M(D2) in S] + delta <= e^eps Pr[A(D2) in S] + delta``.
    """
    d = _exact(delta, "delta")
    if d >= 1:
        raise ParameterError(f"delta must be below 1, got {d}")
    dist = _Exact(mechanism)

    def distribution(database: Database) -> dict[tuple[str, Hashable], Fraction]:
        out: dict[tuple[str, Hashable], Fraction] = {
            ("mechanism", t): (1 - d) * p for t, p in dist(database).items()
        }
        if d > 0:
            out[("verbatim", database)] = d
        return out

    return distribution


# -- the paper's bounds ----------------------------------------------------------------------------
def proposition14_bound(exp_eps: Probability) -> Fraction:
    """Proposition 14 (Dwork-McSherry; ``docs/theory/composition.md#theorems``): ``eps``-DP
    implies ``(e^eps - 1)``-semantic privacy. ``exp_eps=3`` (``eps = ln 3``) gives 2."""
    return _exp_eps(exp_eps) - 1


def tanh_bound(exp_eps: Probability) -> Fraction:
    """Our tighter derived bound for ``eps``-DP (``docs/theory/composition.md#theorems``):
    both the likelihood ratio and the normalizer ratio lie in ``[e^-eps, e^eps]``, so the
    posteriors' pointwise ratio lies in ``[e^-2eps, e^2eps]`` and
    ``SD <= tanh(eps) = (e^2eps - 1)/(e^2eps + 1)``. ``exp_eps=3`` gives 4/5."""
    x = _exp_eps(exp_eps)
    return (x * x - 1) / (x * x + 1)


def theorem15_bound(exp_eps: Probability, delta: Probability, n: int) -> tuple[float, float]:
    """Theorem 15 (``docs/theory/composition.md#theorems``): ``(eps, delta)``-DP implies
    ``(eps', delta')``-semantic privacy with ``eps' = e^{3 eps} - 1 + 2 sqrt(delta)`` and, with an
    explicit constant where the paper hides it (``docs/theory/composition.md#err-constant``;
    Lemma 18 and a union bound over the ``n`` people),
    ``delta' = n (sqrt(delta) + 2 delta / (eps e^eps))``; ``delta'`` is ``inf`` for ``eps = 0``
    and ``delta > 0``. Floats: the square root and logarithm are irrational in general."""
    x = _exp_eps(exp_eps)
    d = _exact(delta, "delta")
    if n < 1:
        raise ParameterError(f"n must be at least 1, got {n}")
    eps_prime = float(x**3 - 1) + 2 * math.sqrt(d)
    if d == 0:
        return eps_prime, 0.0
    eps = math.log(x)
    delta_prime = math.inf if eps == 0 else n * (math.sqrt(d) + 2 * float(d) / (eps * float(x)))
    return eps_prime, delta_prime
