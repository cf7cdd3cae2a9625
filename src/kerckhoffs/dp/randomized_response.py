"""k-ary randomized response (spec ``composition.md`` 3.8 ``randomized_response``; Warner 1965,
paper 004 ref. [34]): the arithmetic of the mechanism and its unbiased frequency estimate.

Each record's value is kept with probability ``p = e^ε/(e^ε + k - 1)`` and otherwise replaced
by one of the ``k - 1`` other values, each with ``q = 1/(e^ε + k - 1)``; the ratio ``p/q`` is
exactly ``e^ε`` (P15), so each record is locally ε-DP. From ``N`` responses the frequency
estimate ``f̂_v = (obs_v/N - q)/(p - q)`` is unbiased.

Not yet here (see the dpmech report): the ``dp-rr`` algorithm. OpenDP's per-value
``make_randomized_response`` costs about 100 µs a call (3 s for 30,000 rows), too slow to call
per row; the planned vectorized sampler draws from OpenDP's discrete Laplace vectors.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from kerckhoffs.dp.mechanisms import check_budget
from kerckhoffs.errors import ParameterError


def keep_probability(epsilon: float, k: int) -> tuple[float, float]:
    """``(p, q)``: the probability of keeping the true value and of each other value."""
    eps, _ = check_budget(epsilon)
    if k < 2:
        raise ParameterError(f"randomized response needs at least 2 categories, got {k}")
    denom = math.exp(eps) + k - 1
    return math.exp(eps) / denom, 1 / denom


def opendp_privacy_map(epsilon: float, k: int) -> float:
    """The privacy loss OpenDP's ``make_randomized_response`` reports for ``k`` categories
    at keep probability :func:`keep_probability` (what a release would record)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    p, _ = keep_probability(epsilon, k)
    meas = dp.m.make_randomized_response(list(range(k)), p, T="i64")
    return float(meas.map(1))


def frequency_estimate(observed: np.ndarray, epsilon: float) -> np.ndarray:
    """Unbiased estimate of each category's frequency from the counts of responses
    ``observed`` (one per category, every category included): ``(obs/N - q)/(p - q)``.
    A function of the published responses only (post-processing); it may leave [0, 1]."""
    obs = np.asarray(observed, dtype=np.float64)
    n = obs.sum()
    if obs.ndim != 1 or obs.size < 2 or n <= 0:
        raise ParameterError("frequency_estimate needs counts of at least 2 categories, not all 0")
    p, q = keep_probability(epsilon, obs.size)
    return np.asarray((obs / n - q) / (p - q))


def expected_response(freq: list[Fraction], p: Fraction, q: Fraction) -> list[Fraction]:
    """Exact expected response frequencies ``p f_v + q (1 - f_v)`` (for exact tests)."""
    return [p * f + q * (1 - f) for f in freq]


__all__ = ["expected_response", "frequency_estimate", "keep_probability", "opendp_privacy_map"]
