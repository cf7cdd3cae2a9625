"""k-ary randomized response (``docs/theory/composition.md#dp-mechanisms``; Warner 1965,
paper 004 ref. [34]): the arithmetic of the mechanism, a vectorized sampler drawing every bit
from OpenDP's secure generator, the ``dp-rr`` release and its unbiased frequency estimate.

Each record's value is kept with probability ``p = e^ε/(e^ε + k - 1)`` and otherwise replaced by one
of the ``k - 1`` other values, each with ``q = 1/(e^ε + k - 1)``; the ratio ``p/q`` is exactly
``e^ε`` (a tested property), so each record is locally ε-DP. From ``N`` responses the frequency
estimate ``f̂_v = (obs_v/N - q)/(p - q)`` is unbiased.

The sampler (:func:`randomize`). OpenDP's per-value ``make_randomized_response`` costs about
100 µs a call, its vector discrete Laplace about 7 µs a draw and its bit-vector randomized
response about 0.5 µs a bit (measured on this machine, OpenDP 0.16): 1M records would take
0.5-10 s. So the random *bits* come from OpenDP's cryptographically secure generator
(``opendp._data.fill_bytes``, the source of all OpenDP's samplers, the one OpenDP's own
numpy generator reads) as uniform 64-bit integers, about 10 ms per million, and the
mechanism is exact integer arithmetic on them, with no floating point anywhere a bit is used:

* *keep or replace*: replace iff ``U < T`` for ``U`` uniform on ``[0, 2^64)`` and the integer
  threshold ``T = ceil(2^64 (k-1)/(e^ε + k - 1))``, so ``P(replace) = T/2^64`` exactly and the
  realized keep probability is ``p' = 1 - T/2^64 <= p`` (rounding ``T`` up only lowers the
  privacy loss ``ln(p'(k-1)/(1-p'))``, which decreases in ``T``);
* *which other value*: ``(v + 1 + R) mod k`` for ``R`` uniform on ``{0, ..., k-2}``, a
  bijection onto the ``k - 1`` values other than ``v``. ``R = U mod m`` (``m = k - 1``) for a
  fresh ``U`` accepted iff ``U < L = m floor(2^64/m)``: each residue has exactly
  ``floor(2^64/m)`` accepted preimages, so given acceptance ``R`` is exactly uniform; a
  rejected record draws again (probability ``< m/2^64``; a loop over rounds, not rows).

The privacy loss recorded is OpenDP's: the map of ``make_randomized_response`` for ``k``
categories at the keep probability ``p'`` rounded *up* to a float (the map increases in
``p``), and the release fails closed if it exceeds the target. Without ``fill_bytes`` (a
future OpenDP), the uniform bits come from OpenDP's public ``make_randomized_response_bitvec``
with flip probability exactly 1/2 on an all-zero vector (exact fair bits, ~100x slower).
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.dp import opendp_core
from kerckhoffs.dp.accuracy import ACCURACY_LEVEL, RESPONSES, rr_accuracy
from kerckhoffs.dp.counts import (
    COUNT,
    MAX_CELLS,
    DPRelease,
    cell_domain,
    domain_cells,
    refuse_missing_drop,
)
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    NoiseSpec,
    check_budget,
    opendp_version,
    parse_neighbours,
)
from kerckhoffs.errors import InputError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Partition, Provenance, Scheme

TWO64 = 1 << 64
"""The resolution of a keep/replace decision: one uniform 64-bit integer per record."""
PERTURB = ("sa", "cell")
"""What one response randomizes: the record's SA value (its QI cell published as is) or its
whole cell (QI cell x SA value: local DP for the whole record)."""


def keep_probability(epsilon: float, k: int) -> tuple[float, float]:
    """``(p, q)``: the probability of keeping the true value and of each other value,
    ``e^eps / (e^eps + k - 1)`` and ``1 / (e^eps + k - 1)``, computed from ``e^-eps`` so that
    an epsilon of 710 or more (``e^eps`` beyond a float) gives ``p = 1``, not an overflow."""
    eps, _ = check_budget(epsilon)
    if k < 2:
        raise ParameterError(f"randomized response needs at least 2 categories, got {k}")
    other = math.exp(-eps)  # underflows to 0 for a huge epsilon, never overflows
    denom = 1 + (k - 1) * other
    return 1 / denom, other / denom


def opendp_privacy_map(epsilon: float, k: int) -> float:
    """The privacy loss OpenDP's ``make_randomized_response`` reports for ``k`` categories
    at keep probability :func:`keep_probability` (what a release would record)."""
    dp = opendp_core.core()

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


@functools.lru_cache(maxsize=256)
def _map_for(keep: float, k: int) -> float:
    """OpenDP's ``make_randomized_response`` privacy map for ``k`` categories at ``keep``
    (remembered by its arguments: about 0.5 ms a build, a pure function of them)."""
    dp = opendp_core.core()

    dp.enable_features("contrib")
    return float(dp.m.make_randomized_response(list(range(k)), keep, T="i64").map(1))


def replace_threshold(epsilon: float, k: int) -> tuple[int, float, float]:
    """``(T, keep, privacy_map)`` of the sampler for ``k`` categories at ``epsilon``.

    ``T``: replace iff a uniform 64-bit integer is ``< T`` (``P = T/2^64`` exactly);
    ``keep``: the realized keep probability ``1 - T/2^64`` rounded up to a float (never below
    the true one); ``privacy_map``: OpenDP's map at ``keep``, at most ``epsilon``. ``T`` starts
    at ``ceil(2^64 (1 - p))`` and grows (lowering the loss) until OpenDP's map is within
    ``epsilon`` (steps doubling from
    ``T/2^52``); an epsilon so large that ``keep`` rounds to 1 is a one-line ParameterError.
    """
    eps, _ = check_budget(epsilon)
    p, _ = keep_probability(eps, k)
    t = max(1, math.ceil(Fraction(1.0 - p) * TWO64))
    step = max(1, t >> 52)
    for _ in range(200):
        exact = Fraction(TWO64 - t, TWO64)
        keep = float(exact)
        if Fraction(keep) < exact:
            keep = float(np.nextafter(keep, 2.0))
        if keep >= 1.0:
            raise ParameterError(
                f"epsilon {eps:g} is too large for randomized response over {k} values "
                "(the keep probability rounds to 1)"
            )
        if Fraction(keep) * k <= 1:
            raise ParameterError(
                f"epsilon {eps:g} is too small for randomized response over {k} values (the "
                f"keep probability rounds to 1/{k}: every response would be uniform noise)"
            )
        loss = _map_for(keep, k)
        if loss <= eps:
            return t, keep, loss
        t, step = t + step, 2 * step  # the loss decreases in t
    raise PrivacyCheckFailed(  # pragma: no cover (a few steps always suffice)
        f"OpenDP's randomized-response map stays above epsilon {eps:g}"
    )


def opendp_uniform_u64(size: int) -> np.ndarray:
    """``size`` independent uniform 64-bit integers from OpenDP's secure generator.

    ``opendp._data.fill_bytes`` fills a numpy buffer from the generator all of OpenDP's
    samplers use (~10 ms per million); if a future OpenDP drops it, exact fair bits come
    from OpenDP's ``make_randomized_response_bitvec`` (each bit flipped with probability
    ``f/2 = 1/2`` on an all-zero input), much slower.
    """
    out = np.empty(int(size), dtype=np.uint64)
    if out.size == 0:
        return out
    try:
        from opendp._data import fill_bytes
    except ImportError:  # pragma: no cover (present in OpenDP 0.16)
        return _bitvec_u64(out.size)
    ptr = ctypes.cast(out.ctypes.data, ctypes.POINTER(ctypes.c_uint8))
    if not fill_bytes(ptr, out.nbytes):  # pragma: no cover
        raise PrivacyCheckFailed("OpenDP's secure generator failed to fill the buffer")
    return out


def _bitvec_u64(size: int) -> np.ndarray:
    """Uniform 64-bit integers from OpenDP's public bit-vector randomized response with flip
    probability 1/2 (exactly fair bits; the fallback of :func:`opendp_uniform_u64`)."""
    dp = opendp_core.core()

    dp.enable_features("contrib")
    meas = dp.m.make_randomized_response_bitvec(
        dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=1.0
    )
    raw = np.frombuffer(meas(bytes(8 * size)), dtype=np.uint8)[: 8 * size]
    return raw.copy().view(np.uint64)


def uniform_below(m: int, size: int) -> np.ndarray:
    """``size`` independent draws, exactly uniform on ``{0, ..., m-1}`` (int64): ``U mod m``
    for ``U`` uniform 64-bit accepted iff ``U < m floor(2^64/m)`` (every residue has the same
    number of accepted preimages); rejected ones draw again, a loop over rounds."""
    if m < 1:
        raise ParameterError(f"uniform_below needs m >= 1, got {m}")
    out = np.zeros(int(size), dtype=np.int64)
    if m == 1 or out.size == 0:
        return out
    limit = (TWO64 // m) * m
    mm = np.uint64(m)
    pending = np.arange(out.size)
    while pending.size:
        u = opendp_uniform_u64(pending.size)
        ok = np.ones(u.size, dtype=bool) if limit == TWO64 else u < np.uint64(limit)
        out[pending[ok]] = (u[ok] % mm).astype(np.int64)
        pending = pending[~ok]
    return out


def randomize(codes: np.ndarray, k: int, threshold: int) -> np.ndarray:
    """k-ary randomized response on integer ``codes`` in ``[0, k)``: each is replaced with
    probability ``threshold/2^64`` (:func:`replace_threshold`) by a uniformly chosen *other*
    value ``(v + 1 + R) mod k``, else kept. Every bit from OpenDP's generator; no row loop."""
    codes = np.asarray(codes, dtype=np.int64)
    if k < 2:
        raise ParameterError(f"randomized response needs at least 2 categories, got {k}")
    if not 1 <= threshold < TWO64:
        raise ParameterError(f"threshold must be in [1, 2^64), got {threshold}")
    if codes.size and (codes.min() < 0 or codes.max() >= k):
        raise InputError(f"randomized response: codes must lie in [0, {k})")
    replace = np.flatnonzero(opendp_uniform_u64(codes.size) < np.uint64(threshold))
    out = codes.copy()
    out[replace] = (codes[replace] + 1 + uniform_below(k - 1, replace.size)) % k
    return out


def frequency_estimates(counts: np.ndarray, keep: float) -> np.ndarray:
    """Per-group unbiased frequency estimates from a (groups x k) matrix of response counts
    at keep probability ``keep`` (``q = (1 - keep)/(k - 1)``): ``(obs/N - q)/(keep - q)`` row
    by row; a group with no responses is NaN. Post-processing of published counts only."""
    obs = np.asarray(counts, dtype=np.float64)
    if obs.ndim != 2 or obs.shape[1] < 2:
        raise ParameterError("frequency_estimates needs a (groups x k) matrix, k >= 2")
    k = obs.shape[1]
    q = (1.0 - keep) / (k - 1)
    if not keep > q:
        raise ParameterError(f"keep probability {keep} must exceed 1/k")
    n = obs.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((obs / n - q) / (keep - q))


def rr_neighbours(perturb: str, neighbours: Neighbours | str | None = None) -> Neighbours:
    """The neighbour notion ``dp-rr`` meets in mode ``perturb`` (``cell``: substitution;
    ``sa``: sensitive-value), checked against the one asked for (``None``: the mode's own).
    Add/remove is refused for both (one response per record publishes ``n``), substitution
    for ``sa`` (its QI cell totals are exact)."""
    meets = Neighbours.SENSITIVE_VALUE if perturb == "sa" else Neighbours.SUBSTITUTION
    if neighbours is None:
        return meets
    nb = parse_neighbours(neighbours)
    if nb == Neighbours.ADD_REMOVE:
        raise ParameterError(
            "dp-rr publishes one response per record, which reveals n: add-remove neighbours "
            "are not supported (use neighbours=substitution with perturb=cell)"
        )
    if meets == Neighbours.SENSITIVE_VALUE and nb != meets:
        raise ParameterError(
            "dp-rr with perturb=sa randomizes only each record's sensitive value and publishes "
            "every QI cell's total exactly: it is DP for a change of one sensitive value "
            "(neighbours=sensitive-value, label DP), not under substitution; use perturb=cell "
            "for substitution"
        )
    return meets


def dp_rr(
    table: Table,
    epsilon: float,
    *,
    levels: Mapping[str, int] | str | None = None,
    perturb: str = "cell",
    neighbours: Neighbours | str | None = None,
    max_cells: int = MAX_CELLS,
    models: Sequence[PrivacyModel] = (),
    provenance: Provenance | None = None,
    accuracy: float = ACCURACY_LEVEL,
) -> DPRelease:
    """The ``dp-rr`` release: k-ary randomized response per record, published as the count
    table of responses over every cell of the public domain (QI cells x SA values).

    The per-record mechanism is Warner's; a count per public cell is what the per-record
    responses over public cells reduce to, and it lets the frequency estimate be applied per
    QI cell (:func:`rr_estimates`). The two modes meet different neighbour notions, and the
    release records the one it meets (:attr:`NoiseSpec.neighbours`):

    * ``perturb="cell"`` (default) randomizes the whole cell (QI cell x SA value) over all
      ``k`` cells: local ε-DP for substituting one person's whole record, so ε-DP under
      ``substitution``;
    * ``perturb="sa"`` randomizes the SA value over its ``k`` nodes at its level and keeps
      each record's QI cell, so every QI cell's total is published exactly: ε-DP only for a
      change of one person's SA value (``sensitive-value`` neighbours, label DP), and no
      epsilon covers a change of their QI cell. ``neighbours="substitution"`` is refused
      with it.

    ``neighbours`` (default: the notion of the mode) may name the mode's notion, or
    ``sensitive-value`` with ``perturb="cell"`` (which meets the stronger substitution, and
    records that). Add/remove neighbours are refused: one response per record publishes
    ``n``. A schema dropping rows with missing values is refused
    (:func:`~kerckhoffs.dp.counts.refuse_missing_drop`). Fails closed if OpenDP's map exceeds
    ``epsilon``.

    The published ``count`` is of responses (``noise.estimator`` ``responses``); what it
    estimates, the number of records in each cell, is ``estimate_count`` of
    :meth:`DPRelease.to_pandas` and of the files, with its Hoeffding interval at level
    ``accuracy`` (``estimate_lower``/``estimate_upper``; :mod:`kerckhoffs.dp.accuracy`).
    """
    refuse_missing_drop(table, "dp-rr")
    eps, _ = check_budget(epsilon)
    mode = str(perturb).strip().lower()
    if mode not in PERTURB:
        raise ParameterError(f"perturb must be sa or cell, got {perturb!r}")
    meets = rr_neighbours(mode, neighbours)
    domain, key = cell_domain(table, levels, with_sa=True, max_cells=max_cells)
    k = domain.radix[-1] if mode == "sa" else domain.size
    if k < 2:
        raise ParameterError(
            f"randomized response needs at least 2 values to choose from; the {mode} domain "
            "has 1 (lower the sensitive attribute's level)"
        )
    threshold, keep, loss = replace_threshold(eps, k)
    if loss > eps:  # pragma: no cover (replace_threshold ensures it)
        raise PrivacyCheckFailed(f"OpenDP's privacy map {loss} exceeds epsilon {eps}")
    if mode == "sa":
        response = (key // k) * k + randomize(key % k, k, threshold)
    else:
        response = randomize(key, k, threshold)
    del key
    frame, cells_table = domain_cells(domain, table.d, table.sa_name)
    frame[COUNT] = np.bincount(response, minlength=domain.size).astype(np.int64)
    noise = NoiseSpec(
        Mechanism.RANDOMIZED_RESPONSE,
        meets,
        1,
        1.0 - keep,
        eps,
        0.0,
        loss,
        opendp_version(),
        domain.size,
        (
            {
                "name": "randomized response",
                "perturb": mode,
                "categories": k,
                "keep_probability": keep,
                "exact": "each record's QI cell" if mode == "sa" else "nothing",
            },
        ),
        "records",
        "none: the counts are those of the randomized records, as drawn",
        RESPONSES,
        rr_accuracy(accuracy),
    )
    n_q = table.d
    axes = [
        {
            "role": "quasi" if i < n_q else "sensitive",
            "name": name,
            "kind": domain.kinds[i].value,
            "level": domain.levels[i],
        }
        for i, name in enumerate(domain.names)
    ]
    release = DPRelease(
        cells_table,
        Partition(np.arange(domain.size, dtype=np.int32)),
        Scheme.DP,
        provenance=provenance or Provenance("dp-rr"),
        counts=frame,
        noise=noise,
        axes=axes,
    )
    release = release.with_models(models)
    return release


def rr_estimates(release: DPRelease) -> pd.DataFrame:
    """The published count table of a ``dp-rr`` release with a column ``estimate``: the
    unbiased frequency of each SA value within its QI cell (``perturb=sa``) or of each cell
    in the whole table (``perturb=cell``), from the published counts and the recorded keep
    probability only (post-processing). NaN in a QI cell with no responses."""
    part = next((p for p in release.noise.parts if "keep_probability" in p), None)
    if release.noise.mechanism != Mechanism.RANDOMIZED_RESPONSE or part is None:
        raise ParameterError("rr_estimates needs a dp-rr release")
    counts = release.counts[COUNT].to_numpy(dtype=np.int64)
    k = int(part["categories"])
    est = frequency_estimates(counts.reshape(-1, k), float(part["keep_probability"]))
    out = release.counts.copy()
    out["estimate"] = est.reshape(-1)
    return out


__all__ = [
    "PERTURB",
    "TWO64",
    "dp_rr",
    "expected_response",
    "frequency_estimate",
    "frequency_estimates",
    "keep_probability",
    "opendp_privacy_map",
    "opendp_uniform_u64",
    "randomize",
    "replace_threshold",
    "rr_estimates",
    "rr_neighbours",
    "uniform_below",
]
