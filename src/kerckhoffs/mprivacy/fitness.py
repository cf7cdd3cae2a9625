"""The privacy fitness score (paper 003 Definition 3.1, Equation 1).

``raw(S) = sum_i w_i F_i(S)`` with ``F_i >= 1`` iff component ``C_i`` holds; for the paper's
``C = k-anonymity and l-diversity``, ``raw = (1 - alpha) |S| / k + alpha distinct(S) / l``.
A score must be ``>= 1`` only if C holds, so a violating set is clamped to
``min(raw, 1 - eps)``: the paper prints ``max``, which would give every set a score of at
least ``1 - eps`` (``min`` is our resolution: ``docs/theory/m-privacy.md#fitness``,
``#err-fitness-clamp``). The verifiers rank
coalitions by it (``alpha = 0.3``), the anonymizer rates splits by it (``alpha = 0.8``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kerckhoffs.mprivacy.constraints import Constraint, DistinctL, KAnon

EPSILON = 1e-6
"""The clamp's epsilon: a violating set scores at most ``1 - EPSILON``."""


def weights_for(n_parts: int, alpha: float) -> tuple[float, ...]:
    """Eq. 1's weights: ``(1 - alpha, alpha)`` for two components (alpha weights the
    second, the diversity term), ``(1,)`` for one, equal weights beyond."""
    if n_parts == 1:
        return (1.0,)
    if n_parts == 2:
        return (1.0 - alpha, alpha)
    return tuple([1.0 / n_parts] * n_parts)


def raw_score(
    constraint: Constraint,
    count: int,
    hist: np.ndarray,
    alpha: float = 0.3,
    weights: Sequence[float] | None = None,
) -> float:
    """Eq. 1 before the clamp: the weighted sum of the components' fitness ratios."""
    parts = constraint.parts
    w = weights_for(len(parts), alpha) if weights is None else tuple(weights)
    return float(sum(wi * c.ratio(count, hist) for wi, c in zip(w, parts, strict=True)))


def fitness(
    constraint: Constraint,
    count: int,
    hist: np.ndarray,
    alpha: float = 0.3,
    eps: float = EPSILON,
    weights: Sequence[float] | None = None,
) -> float:
    """Eq. 1 with the clamp: the raw score if C holds, else ``min(raw, 1 - eps)``."""
    raw = raw_score(constraint, count, hist, alpha, weights)
    return raw if constraint.check(count, hist) else min(raw, 1.0 - eps)


def fitness_batch(
    constraint: Constraint,
    counts: np.ndarray,
    hists: np.ndarray,
    alpha: float = 0.3,
    eps: float = EPSILON,
) -> tuple[np.ndarray, np.ndarray]:
    """(clamped score, raw score) of many record sets (``hists`` is sets x values)."""
    parts = constraint.parts
    w = weights_for(len(parts), alpha)
    raw = sum(wi * c.ratio_batch(counts, hists) for wi, c in zip(w, parts, strict=True))
    raw = np.asarray(raw, dtype=float)
    ok = constraint.check_batch(counts, hists)
    return np.where(ok, raw, np.minimum(raw, 1.0 - eps)), raw


def is_counting(constraint: Constraint) -> bool:
    """Whether C is k-anonymity, distinct l-diversity or a conjunction of them: then a record
    set's check and fitness depend only on its size and its number of distinct SA values."""
    return all(type(p) in (KAnon, DistinctL) for p in constraint.parts)


def fitness_batch_counts(
    constraint: Constraint,
    counts: np.ndarray,
    distinct: np.ndarray,
    alpha: float = 0.3,
    eps: float = EPSILON,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fitness_batch` for a counting constraint (:func:`is_counting`) from the sets'
    sizes and distinct-value counts alone, without histograms; the same floats, since each
    part's ratio is the same quotient and the parts are summed in the same order. The
    verifiers rank coalitions by it (``docs/theory/m-privacy.md#adaptive-ordering``)."""
    parts = constraint.parts
    w = weights_for(len(parts), alpha)
    counts = np.asarray(counts, dtype=np.int64)
    distinct = np.asarray(distinct, dtype=np.int64)
    if len(parts) == 2 and isinstance(parts[0], KAnon) and isinstance(parts[1], DistinctL):
        k, l = parts[0].k, parts[1].l  # noqa: E741  (the paper's C: fewest numpy calls)
        raw2 = w[0] * (counts / k) + w[1] * (distinct / l)
        ok2 = (counts >= k) & (distinct >= l)
        return np.where(ok2, raw2, np.minimum(raw2, 1.0 - eps)), raw2
    total = sum(
        wi * (counts / p.k if isinstance(p, KAnon) else distinct / p.l)  # type: ignore[attr-defined,misc]
        for wi, p in zip(w, parts, strict=True)
    )
    raw = np.asarray(total, dtype=float)
    ok = np.ones(counts.shape, dtype=bool)
    for p in parts:
        ok &= counts >= p.k if isinstance(p, KAnon) else distinct >= p.l  # type: ignore[attr-defined]
    return np.where(ok, raw, np.minimum(raw, 1.0 - eps)), raw


def fitness_counts(
    constraint: Constraint,
    count: int,
    distinct: int,
    alpha: float = 0.3,
    eps: float = EPSILON,
    weights: Sequence[float] | None = None,
) -> tuple[float, float]:
    """(clamped score, raw score) of one record set for a counting constraint
    (:func:`is_counting`) from its size and number of distinct SA values, in Python floats:
    the same operations in the same order as :func:`fitness_batch_counts`, hence the same
    values (IEEE division, product and sum are exactly rounded either way). The verifiers
    rank a handful of coalitions with it, where a numpy call costs more than the work;
    ``weights`` are :func:`weights_for`'s, when the caller has them."""
    parts = constraint.parts
    w = weights_for(len(parts), alpha) if weights is None else weights
    raw = 0.0
    ok = True
    for i, (wi, p) in enumerate(zip(w, parts, strict=True)):
        if isinstance(p, KAnon):
            term, ok = wi * (count / p.k), ok and count >= p.k
        else:
            term, ok = wi * (distinct / p.l), ok and distinct >= p.l  # type: ignore[attr-defined]
        raw = term if i == 0 else raw + term
    return (raw if ok else min(raw, 1.0 - eps)), raw


def counting_fitness(
    constraint: Constraint, alpha: float = 0.3, eps: float = EPSILON
) -> Callable[[int, int], tuple[float, float]]:
    """:func:`fitness_counts` with the constraint's thresholds and weights bound once:
    ``f(count, distinct) -> (score, raw)``, the same floats (same operations, same order)
    at a fraction of the cost per call; the verifiers call it per coalition they rank."""
    parts = constraint.parts
    w = weights_for(len(parts), alpha)
    terms = [
        (wi, isinstance(p, KAnon), p.k if isinstance(p, KAnon) else p.l)  # type: ignore[attr-defined]
        for wi, p in zip(w, parts, strict=True)
    ]
    cap = 1.0 - eps
    if len(terms) == 2 and terms[0][1] and not terms[1][1]:  # k-anonymity and distinct l
        (w0, _, k), (w1, _, l) = terms  # noqa: E741

        def k_and_l(count: int, distinct: int) -> tuple[float, float]:
            raw = w0 * (count / k) + w1 * (distinct / l)
            return (raw if count >= k and distinct >= l else min(raw, cap)), raw

        return k_and_l

    def general(count: int, distinct: int) -> tuple[float, float]:
        return fitness_counts(constraint, count, distinct, alpha, eps, w)

    return general
