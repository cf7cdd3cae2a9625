"""How far a published noisy count may be from the true one: an interval at a stated level
for every count of a DP release (``docs/theory/composition.md#dp-mechanisms``).

**Noisy counts** (dp-histogram, dp-marginals). A published count is ``c + Z``: the true count
plus one noise draw, rounded (the geometric and discrete Gaussian draws are integers already;
the continuous Laplace draw is rounded to the nearest integer, which keeps it symmetric, so
the count stays unbiased). Its interval is ``[count - h, count + h]`` with the integer
half-width ``h`` from OpenDP's accuracy functions (``opendp.accuracy``), which give an
``a`` with ``P(|Z| >= a) <= alpha`` for ``alpha = 1 - level``:

* geometric (discrete Laplace, ``discrete_laplacian_scale_to_accuracy``) and discrete
  Gaussian (``discrete_gaussian_scale_to_accuracy``): ``Z`` is an integer, so
  ``|Z| > floor(a)`` implies ``|Z| >= a`` and ``h = floor(a)`` keeps the guarantee;
* Laplace (``laplacian_scale_to_accuracy``), rounded: ``|rint Z| > h`` implies
  ``|Z| > h + 1/2``, so ``h = ceil(a - 1/2)`` (the smallest integer with ``h + 1/2 >= a``).

So each interval covers its true count with probability at least ``level``, cell by cell
(not all cells at once: for a simultaneous statement split ``alpha`` over the cells). The
half-width depends only on the mechanism, its scale and the level, all public, so stating
it costs no privacy.

**Randomized response** (dp-rr). The published count of a cell is of *responses*, not of
records. What it estimates is the number of records in the cell, by the unbiased
``(obs - N q)/(p - q)`` (Warner 1965; ``N`` the responses the cell's value was drawn among:
all of them for ``perturb=cell``, the QI cell's for ``perturb=sa``; ``p`` and ``q`` the keep
and each-other probabilities). ``obs`` is a sum of ``N`` independent Bernoulli draws (``p``
for the cell's own records, ``q`` for the others), so Hoeffding's inequality (Hoeffding,
"Probability inequalities for sums of bounded random variables", JASA 1963) gives
``P(|obs - E obs| >= t) <= 2 exp(-2 t^2 / N)``, and the estimate's half-width is
``sqrt(N ln(2/alpha) / 2) / (p - q)``. It is sound for any true counts and conservative
(its coverage is well above ``level``), computed from the published counts and the
recorded keep probability only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kerckhoffs.errors import ParameterError

ACCURACY_LEVEL = 0.95
"""The default level of every stated interval."""

UNBIASED = "unbiased"
"""Estimator of a noisy count published as drawn (rounded): mean equal to the true count,
may be negative."""
CLAMPED = "clamped"
"""Estimator of releases written before the counts were published unbiased: clamped at 0 and
rounded (biased upward for small counts); what a ``release.json`` without ``estimator``
means."""
RESPONSES = "responses"
"""dp-rr: the counts are of randomized responses; the count of records they estimate is
:func:`rr_intervals`'s ``estimate``."""
ESTIMATORS = (UNBIASED, CLAMPED, RESPONSES)

_METHODS = {
    "geometric": ("discrete_laplacian_scale_to_accuracy", "floor"),
    "gaussian": ("discrete_gaussian_scale_to_accuracy", "floor"),
    "laplace": ("laplacian_scale_to_accuracy", "ceil(a - 1/2), the count being rounded"),
}


def check_level(level: float) -> float:
    """``level`` as a float in (0, 1); anything else is a one-line ParameterError."""
    try:
        lv = float(level)
    except (TypeError, ValueError):
        raise ParameterError(f"accuracy level must be a number in (0, 1), got {level!r}") from None
    if not (0 < lv < 1):
        raise ParameterError(f"accuracy level must be a number in (0, 1), got {level!r}")
    return lv


def half_width(mechanism: str, scale: float, level: float = ACCURACY_LEVEL) -> int:
    """The integer ``h`` with ``P(|published count - true count| > h) <= 1 - level`` for one
    count noised by ``mechanism`` (``geometric``, ``laplace`` or ``gaussian``) at ``scale``
    (module docstring; OpenDP's accuracy function, floored or rounded).

    >>> half_width("geometric", 20.0)
    60
    """
    import opendp.accuracy

    lv = check_level(level)
    name = str(mechanism)
    if name not in _METHODS:
        raise ParameterError(f"no accuracy for mechanism {name!r} (noisy counts only)")
    a = float(getattr(opendp.accuracy, _METHODS[name][0])(float(scale), 1.0 - lv))
    h = math.ceil(a - 0.5) if name == "laplace" else math.floor(a)
    return max(h, 0)


def count_accuracy(
    mechanism: str, scales: list[float], cells: list[int], level: float = ACCURACY_LEVEL
) -> dict[str, Any]:
    """The ``accuracy`` record of a noisy count release (what ``release.json`` holds under
    ``dp.accuracy``): the level, one half-width per run of cells noised at one scale
    (``cells[i]`` cells at ``scales[i]``, in the published order) and how it was computed."""
    lv = check_level(level)
    fn, rounding = _METHODS[str(mechanism)]
    return {
        "level": lv,
        "of": "count",
        "half_width": [half_width(mechanism, s, lv) for s in scales],
        "cells": [int(c) for c in cells],
        "method": (
            f"OpenDP {fn}(scale, 1 - level), {rounding}: each count is within half_width of "
            "its true count with probability at least level, cell by cell"
        ),
    }


def rr_accuracy(level: float = ACCURACY_LEVEL) -> dict[str, Any]:
    """The ``accuracy`` record of a dp-rr release: the interval is for the estimated number
    of records per cell, computed from the published counts (:func:`rr_intervals`)."""
    return {
        "level": check_level(level),
        "of": "estimate",
        "method": (
            "Hoeffding: estimate = (count - N q)/(p - q) of the records in the cell, "
            "half-width sqrt(N ln(2/(1 - level))/2)/(p - q), N the responses of its group; "
            "sound and conservative"
        ),
    }


def cell_half_widths(accuracy: dict[str, Any], cells: int) -> np.ndarray:
    """float64 [cells]: each published cell's half-width from an ``accuracy`` record of
    :func:`count_accuracy` (a record whose runs do not add up to ``cells`` is a one-line
    ParameterError)."""
    widths = accuracy.get("half_width")
    runs = accuracy.get("cells")
    if not isinstance(widths, list) or not isinstance(runs, list) or len(widths) != len(runs):
        raise ParameterError("dp.accuracy: half_width and cells must be lists of one length")
    try:
        w = np.asarray(widths, dtype=np.float64)
        r = np.asarray(runs, dtype=np.int64)
    except (TypeError, ValueError):
        raise ParameterError("dp.accuracy: half_width and cells must be numbers") from None
    if int(r.sum()) != cells or (r < 0).any() or not (np.isfinite(w) & (w >= 0)).all():
        raise ParameterError(f"dp.accuracy: its runs do not describe the {cells:,} cells")
    return np.repeat(w, r)


def rr_intervals(
    counts: np.ndarray, k: int, keep: float, level: float = ACCURACY_LEVEL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, lower, upper)``, float64 [cells]: the unbiased estimate of the number of
    records in each cell from the published response ``counts`` (groups of ``k`` cells whose
    responses were drawn among each other, in order) at keep probability ``keep``, and its
    Hoeffding interval at ``level`` (module docstring). Post-processing of published counts
    only."""
    lv = check_level(level)
    obs = np.asarray(counts, dtype=np.float64).reshape(-1, k)
    q = (1.0 - keep) / (k - 1)
    if not keep > q:
        raise ParameterError(f"keep probability {keep} must exceed 1/k")
    n = obs.sum(axis=1, keepdims=True)
    est = (obs - n * q) / (keep - q)
    h = np.sqrt(n * math.log(2.0 / (1.0 - lv)) / 2.0) / (keep - q)
    h = np.broadcast_to(h, obs.shape)
    return est.reshape(-1), (est - h).reshape(-1), (est + h).reshape(-1)


__all__ = [
    "ACCURACY_LEVEL",
    "CLAMPED",
    "ESTIMATORS",
    "RESPONSES",
    "UNBIASED",
    "cell_half_widths",
    "check_level",
    "count_accuracy",
    "half_width",
    "rr_accuracy",
    "rr_intervals",
]
