"""Judging an intersection attack's breaches against chance, for releases whose value sets
are not anyone's exact values: DP count tables read through a threshold
(:mod:`kerckhoffs.attacks.composition.dp_intersection`) and synthetic rows
(:mod:`kerckhoffs.attacks.composition.intersection` on a ``synthetic`` release). A breach
there names a value; it discloses something only where such breaches are right more often
than guesses of the same values by their population frequencies (paper 004's point that DP
composes, measured rather than assumed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kerckhoffs.attacks.result import AttackResult

FALSE_ALARM = 1 / 30_000
"""How unlikely the correct breaches must be under guessing for the thresholded attack to
count as disclosing anything: a release that tells nothing is called UNSAFE at most once in
30,000 audits."""

EXACT_TERMS = 20_000
"""Up to this many claimed breaches the chance of the correct ones is computed exactly; above,
it is bounded (:func:`chance_tail`)."""


def _binomial_law(n: int, q: float, size: int) -> np.ndarray:
    """``Pr[B = k]`` for ``k < size`` (and ``k <= n``), ``B ~ Binomial(n, q)``."""
    k = np.arange(min(n, size - 1) + 1)
    if q <= 0.0:
        return (k == 0).astype(np.float64)
    if q >= 1.0:
        return (k == n).astype(np.float64)
    from kerckhoffs.dp.tester import binomial_log_pmf

    return np.exp(binomial_log_pmf(n, q)[: k.size])  # (log space: no underflow for large n)


def chance_tail(p: np.ndarray, c: int) -> float:
    """``Pr[X >= c]`` for ``X`` the number of right guesses when claim ``i`` is right with
    probability ``p[i]``, independently (the Poisson-binomial law).

    Exact for up to :data:`EXACT_TERMS` claims: the chances are value frequencies, so they
    take few distinct values; ``X`` is a sum of one binomial per distinct chance, whose law
    below ``c`` is the convolution of theirs. Above, the Chernoff bound ``min_t e^(-tc)
    prod(1 - p_i + p_i e^t)``, never below the exact value, so the false-alarm rate stays
    within :data:`FALSE_ALARM` either way. (The normal approximation used before is far too
    light in the tail when few breaches are claimed: 2 right of 2 claims with chances 0.1
    passed "4 standard deviations above the mean" although guessing does it once in 100, and
    the README's DP audit said UNSAFE about one run in 20.)
    """
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    if c <= 0:
        return 1.0
    if c > p.size:
        return 0.0
    if p.size <= EXACT_TERMS:
        chances, claims = np.unique(p, return_counts=True)
        law = np.ones(1, dtype=np.float64)  # Pr[X = j], j < c, over the chances so far
        for q, m in zip(chances, claims, strict=True):
            law = np.convolve(law, _binomial_law(int(m), float(q), c))[:c]
        return float(min(1.0, max(0.0, 1.0 - law.sum())))
    c -= int((p >= 1.0).sum())  # the claims that are always right, and those never right
    p = p[(p > 0.0) & (p < 1.0)]
    if c <= 0:
        return 1.0
    if c >= p.size:
        return float(np.exp(np.log(p).sum())) if c == p.size else 0.0
    if c <= p.sum():
        return 1.0
    log_odds_against = np.log1p(-p) - np.log(p)

    def tilted_mean(t: float) -> float:  # sum of p e^t / (1 - p + p e^t), without overflow
        return float((1.0 / (1.0 + np.exp(log_odds_against - t))).sum())

    lo, hi = 0.0, 1.0
    while tilted_mean(hi) < c:  # finite: c is below the number of claims
        lo, hi = hi, hi * 2.0
    for _ in range(100):  # the t where the tilted mean is c minimizes the bound
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if tilted_mean(mid) < c else (lo, mid)
    return float(min(1.0, np.exp(-hi * c + np.log1p(p * np.expm1(hi)).sum())))


def against_chance(result: AttackResult) -> None:
    """Calibrate the breaches against chance (the targets' true values known).

    A value set read from noisy counts, or from synthetic rows, is not evidence: the single
    value it names is often wrong, so the posterior 1 that Algorithm 1 gives a singleton means
    nothing here. What the adversary really achieves is the share of breaches that name the
    right value; guessing each breached person's value from the population's value frequencies
    gets ``E`` of them right on average. With ``C`` correct breaches the attack discloses
    something only when guessing gets at least ``C`` right with probability below
    :data:`FALSE_ALARM` (:func:`chance_tail`); then each breach's posterior is the precision
    ``C / N`` and the correct ones are reported as breached. Otherwise nothing is breached, and
    the details say so ("nothing beyond chance").
    """
    t = result.tuples
    claimed = t["breached"].to_numpy(dtype=bool)
    n = int(claimed.sum())
    truth = t["true_value"].astype(str).to_numpy()
    named = t["sa_value"].astype(str).to_numpy()
    freq = pd.Series(truth).value_counts(normalize=True)
    p = freq.reindex(named[claimed]).fillna(0.0).to_numpy(dtype=float)
    expected = float(p.sum())
    correct = claimed & (named == truth)
    c = int(correct.sum())
    tail = chance_tail(p, c)
    beyond = c > 0 and tail < FALSE_ALARM
    precision = c / n if n else 0.0
    posterior = t["posterior"].to_numpy(dtype=float).copy()
    posterior[claimed] = precision
    t["posterior"] = posterior
    t["breached"] = correct if beyond else np.zeros(len(t), dtype=bool)
    result.details |= {
        "claimed_breaches": n,
        "chance_correct": round(expected, 2),
        "chance_of_as_many": float(f"{tail:.3g}"),
        "beyond_chance": bool(beyond),
    }
    if not beyond:
        result.details["verdict_note"] = (
            f"the thresholded intersection names one value for {n:,} people; {c:,} are "
            f"right, against {expected:.1f} expected by guessing from the value frequencies "
            f"(as many or more with probability {tail:.2g}): nothing beyond chance"
        )


__all__ = ["EXACT_TERMS", "FALSE_ALARM", "against_chance", "chance_tail"]
