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

_MAX_WIDTH = 2**60
"""Largest half-width read back (a scale is at most 2^52, so a stated width is far below;
a count plus it still fits an int64)."""

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


GAUSSIAN_EXACT_SCALE = 1e5
"""Largest discrete-Gaussian scale whose interval comes from OpenDP's exact accuracy function:
it sums the distribution, so its time grows with the scale (measured 0.05 s at 1e5, 0.5 s at
1e6, no answer in minutes at 2^52); above it the closed-form sub-Gaussian tail bound
(:func:`_tail_bound`, sound but about 39 % wider: 2.72 sigma against 1.96 at 95 %) is
used; such scales come only with epsilons far below any useful release."""


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
    alpha = 1.0 - lv
    if name == "gaussian" and float(scale) > GAUSSIAN_EXACT_SCALE:
        return max(math.floor(_tail_bound(name, float(scale), alpha)), 0)
    a = float(getattr(opendp.accuracy, _METHODS[name][0])(float(scale), alpha))
    if not math.isfinite(a):  # OpenDP overflows at a degenerate scale (about 1e-300)
        a = _tail_bound(name, float(scale), alpha)
    h = math.ceil(a - 0.5) if name == "laplace" else math.floor(a)
    return max(h, 0)


def _tail_bound(mechanism: str, scale: float, alpha: float) -> float:
    """An ``a`` with ``P(|Z| >= a) <= alpha`` from the tails' closed forms, for scales where
    OpenDP's accuracy function overflows: (discrete) Laplace ``P(|Z| >= t) <= 2 exp(-t/b)``,
    so ``a = b ln(2/alpha)``; discrete Gaussian, sub-Gaussian with variance proxy ``σ²``
    (Canonne, Kamath and Steinke, "The discrete Gaussian for differential privacy", NeurIPS
    2020), ``P(|Z| >= t) <= 2 exp(-t²/(2σ²))``, so ``a = σ sqrt(2 ln(2/alpha))``."""
    log = math.log(2.0 / alpha)
    return scale * (math.sqrt(2.0 * log) if mechanism == "gaussian" else log)


def count_accuracy(
    mechanism: str, scales: list[float], cells: list[int], level: float = ACCURACY_LEVEL
) -> dict[str, Any]:
    """The ``accuracy`` record of a noisy count release (what ``release.json`` holds under
    ``dp.accuracy``): the level, one half-width per run of cells noised at one scale
    (``cells[i]`` cells at ``scales[i]``, in the published order) and how it was computed."""
    lv = check_level(level)
    if str(mechanism) not in _METHODS:
        raise ParameterError(f"no accuracy for mechanism {mechanism!r} (noisy counts only)")
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
    """int64 [cells]: each published cell's half-width from an ``accuracy`` record of
    :func:`count_accuracy` (a record whose runs do not add up to ``cells`` is a one-line
    ParameterError)."""
    widths = accuracy.get("half_width")
    runs = accuracy.get("cells")
    if not isinstance(widths, list) or not isinstance(runs, list) or len(widths) != len(runs):
        raise ParameterError("dp.accuracy: half_width and cells must be lists of one length")
    if not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _MAX_WIDTH
        for v in [*widths, *runs]
    ):
        raise ParameterError("dp.accuracy: half_width and cells must be non-negative integers")
    if sum(runs) != cells:
        raise ParameterError(f"dp.accuracy: its runs do not describe the {cells:,} cells")
    return np.repeat(np.asarray(widths, dtype=np.int64), np.asarray(runs, dtype=np.int64))


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


def accuracy_line(estimator: str, accuracy: dict[str, Any] | None) -> str:
    """One line for the CLI: which estimator the counts are and their stated interval.

    >>> accuracy_line("unbiased", {"level": 0.95, "of": "count", "half_width": [6, 9]})
    'counts: unbiased (may be negative); 95% interval per count: ±6 to ±9'
    """
    if accuracy is None:
        return (
            "counts: clamped at 0 and rounded (biased upward for small counts; "
            "written before intervals were stated)"
            if estimator == CLAMPED
            else f"counts: {estimator}, no interval stated"
        )
    level = f"{100 * float(accuracy.get('level', ACCURACY_LEVEL)):g}%"
    if accuracy.get("of") == "estimate":
        return (
            "counts: of randomized responses; estimate_count estimates the records per cell, "
            f"with a {level} Hoeffding interval (estimate_lower, estimate_upper; conservative)"
        )
    widths = sorted({int(w) for w in accuracy.get("half_width", [])})
    span = f"±{widths[0]}" if len(widths) == 1 else f"±{widths[0]} to ±{widths[-1]}"
    return f"counts: {estimator} (may be negative); {level} interval per count: {span}"


__all__ = [
    "ACCURACY_LEVEL",
    "CLAMPED",
    "ESTIMATORS",
    "RESPONSES",
    "UNBIASED",
    "accuracy_line",
    "cell_half_widths",
    "check_level",
    "count_accuracy",
    "half_width",
    "rr_accuracy",
    "rr_intervals",
]
