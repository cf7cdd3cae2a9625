"""Noise for count vectors, drawn by OpenDP (paper 004's DP mechanisms,
``docs/theory/composition.md#dp-mechanisms``).

A histogram over a public cell domain is one vector query. Its L1 sensitivity depends on the
neighbour notion (paper 004's Definition 10 does not fix it; we take substitution, as the paper's
fixed-size databases imply, offer add/remove as an option and record the notion in every release:
``docs/theory/composition.md#err-neighbours``): under *substitution* (the paper's ``D in 𝒟^n``: one
person's record changes, ``n`` fixed) one count goes down by one and another up by one, so
``Δ = 2``; under *add/remove* one count moves by one, ``Δ = 1``.

Every random draw is OpenDP's (``docs/theory/choices.md#opendp``: never hand-written noise; OpenDP
draws from a secure generator and cannot be seeded). The noise scale is ``Δ/ε``, nudged up by a few
ulps when OpenDP's conservative floating-point privacy map would report more than ``ε``: the map
OpenDP reports for ``d_in = Δ`` (``measurement.map(Δ)``) is what a release records and what the
fail-closed check compares with the target, never our own arithmetic.

Post-processing (:func:`post_process`: round to integers) takes only the noisy vector, so it
keeps the guarantee (``docs/theory/composition.md#dp-mechanisms``; a tested property:
post-processing never reads the raw data, ``docs/theory/composition.md#properties``). It does
not clamp at 0: a clamped count is biased upward where the true count is small (a sum of many
small cells grows by about the noise's mean absolute value per cell), while the rounded noisy
count is unbiased and may be negative. Each count's interval at a stated level is
:mod:`kerckhoffs.dp.accuracy`'s.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from kerckhoffs.dp import opendp_core
from kerckhoffs.dp.accuracy import CLAMPED, ESTIMATORS
from kerckhoffs.dp.loss import Measure
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed


class Neighbours(StrEnum):
    """Which databases are neighbours: what one person may change while the release's loss
    stays within its epsilon.

    ``substitution``: one person's whole record changes, ``n`` fixed (paper 004's
    ``D in 𝒟^n``). ``add-remove``: one person's record is added or removed, so ``n`` itself
    is protected. ``sensitive-value``: one person's sensitive value changes while their QI
    cell and ``n`` stay fixed; the literature calls DP under this relation *label
    differential privacy* (Chaudhuri and Hsu, "Sample complexity bounds for differentially
    private learning", COLT 2011; Ghazi et al., "Deep learning with label differential
    privacy", NeurIPS 2021). It is what ``dp-rr`` with ``perturb=sa`` meets: it publishes
    every QI cell's total exactly, so it is not DP under the other two
    (:func:`implied_loss` says which notion implies which).
    """

    SUBSTITUTION = "substitution"
    ADD_REMOVE = "add-remove"
    SENSITIVE_VALUE = "sensitive-value"


STANDARD_NEIGHBOURS = (Neighbours.SUBSTITUTION, Neighbours.ADD_REMOVE)
"""The notions under which a release is differentially private in the usual sense (what
``dp=EPS`` and a privacy budget count); ``sensitive-value`` is weaker."""


def implied_loss(
    loss: tuple[float, float], recorded: Neighbours | str, wanted: Neighbours | str
) -> tuple[float, float] | None:
    """The ``(epsilon, delta)`` a release that is ``loss``-DP under ``recorded`` neighbours
    has under ``wanted`` ones, or None when the one implies nothing about the other.

    * the same notion: ``loss``;
    * a change of one sensitive value is a special substitution: substitution at ``(ε, δ)``
      gives sensitive-value at ``(ε, δ)``;
    * a substitution is a removal then an addition (group privacy for two steps:
      ``P[M(D) ∈ S] <= e^ε (e^ε P[M(D') ∈ S] + δ) + δ``): add/remove at ``(ε, δ)`` gives
      substitution, and so sensitive-value, at ``(2ε, (1 + e^ε) δ)``;
    * substitution says nothing about add/remove (the release may publish ``n``), and
      sensitive-value nothing about either (dp-rr perturb=sa publishes the QI cell totals).

    Saturates instead of overflowing: ``delta`` is at most 1 and 0 stays 0.

    >>> implied_loss((1.0, 0.0), "add-remove", "sensitive-value")
    (2.0, 0.0)
    >>> implied_loss((1.0, 0.0), "sensitive-value", "substitution") is None
    True
    """
    have, want = parse_neighbours(recorded), parse_neighbours(wanted)
    eps, delta = float(loss[0]), float(loss[1])
    if have == want or (have, want) == (Neighbours.SUBSTITUTION, Neighbours.SENSITIVE_VALUE):
        return eps, delta
    if have == Neighbours.ADD_REMOVE and want != Neighbours.ADD_REMOVE:
        grown = 0.0 if delta == 0 else min(1.0, delta * (1.0 + math.exp(min(eps, 700.0))))
        return 2 * eps, grown
    return None


class Mechanism(StrEnum):
    """The noise added to every count: OpenDP's continuous vector Laplace (on the counts as
    floats) or its discrete Laplace, a.k.a. the two-sided geometric mechanism (on integers;
    ``docs/theory/composition.md#dp-mechanisms``)."""

    LAPLACE = "laplace"
    GEOMETRIC = "geometric"
    GAUSSIAN = "gaussian"
    """OpenDP's discrete Gaussian on the integer counts, (epsilon, delta)-DP
    (``docs/theory/composition.md#dp-mechanisms``; Dwork-Roth 2014, not in the paper): L2
    sensitivity, zCDP converted to (epsilon, delta) by OpenDP (:func:`gaussian_measurement`)."""
    RANDOMIZED_RESPONSE = "randomized-response"
    """k-ary randomized response per record (``docs/theory/composition.md#dp-mechanisms``;
    :mod:`kerckhoffs.dp.randomized_response`)."""


def count_neighbours(neighbours: Neighbours | str) -> Neighbours:
    """``neighbours`` parsed, refusing ``sensitive-value``: a noisy count table is made DP
    under substitution or add/remove (both protect the whole record); the weaker notion is
    only what ``dp-rr`` with ``perturb=sa`` meets."""
    nb = parse_neighbours(neighbours)
    if nb not in STANDARD_NEIGHBOURS:
        raise ParameterError(
            f"neighbours {nb.value} (a change of one record's sensitive value only) is what "
            "dp-rr with perturb=sa meets; noisy counts are made DP under substitution or "
            "add-remove"
        )
    return nb


def l2_histogram_sensitivity(neighbours: Neighbours | str) -> float:
    """L2 sensitivity of a histogram: substitution moves one unit out of a cell and one into
    another, ``sqrt(1 + 1) = sqrt 2``; add/remove moves one cell by one, 1."""
    return math.sqrt(2.0) if count_neighbours(neighbours) == Neighbours.SUBSTITUTION else 1.0


def histogram_sensitivity(neighbours: Neighbours | str) -> int:
    """L1 sensitivity of a histogram whose cells partition the domain: 2 under substitution,
    1 under add/remove (paper 004; Dwork and Roth 2014, section 3.3)."""
    return 2 if count_neighbours(neighbours) == Neighbours.SUBSTITUTION else 1


def parse_neighbours(value: Neighbours | str) -> Neighbours:
    """``value`` as :class:`Neighbours` (``add_remove``, ``add/remove`` and ``label`` for
    ``sensitive-value`` accepted); an unknown name is a one-line ParameterError."""
    text = str(value).strip().lower().replace("_", "-").replace("/", "-")
    if text == "label":
        text = Neighbours.SENSITIVE_VALUE.value
    try:
        return Neighbours(text)
    except ValueError:
        known = ", ".join(n.value for n in Neighbours)
        raise ParameterError(f"neighbours must be one of {known}, got {value!r}") from None


def parse_mechanism(value: Mechanism | str) -> Mechanism:
    """``value`` as :class:`Mechanism`; an unknown name is a one-line ParameterError."""
    try:
        return Mechanism(str(value).strip().lower())
    except ValueError:
        known = ", ".join(m.value for m in Mechanism)
        raise ParameterError(f"mechanism must be one of {known}, got {value!r}") from None


@functools.cache
def opendp_version() -> str:
    """The installed OpenDP version (recorded in every DP release; read once, ~1 ms)."""
    from importlib.metadata import version

    return version("opendp")


CLAMP_AND_ROUND = "clamped at 0 and rounded (sees only the noisy counts)"
"""The post-processing of a noisy count vector in releases written before the counts were
published unbiased (what a ``release.json`` without ``estimator`` read back means)."""
ROUND = (
    "rounded to integers, not clamped: the noisy count is unbiased and may be negative "
    "(sees only the noisy counts)"
)
"""The post-processing of a noisy count vector (Laplace, geometric, Gaussian)."""


@dataclass(frozen=True)
class NoiseSpec:
    """What a DP count release records about its noise: mechanism, neighbour notion, L1
    sensitivity ``Δ``, scale ``b``, the requested ``epsilon`` and ``delta``, the privacy loss
    OpenDP's map reports for ``d_in = Δ`` (``privacy_map``) and the OpenDP version."""

    mechanism: Mechanism
    neighbours: Neighbours
    sensitivity: int | float
    scale: float
    epsilon: float
    delta: float
    privacy_map: float
    opendp: str
    cells: int
    parts: tuple[dict[str, Any], ...] = ()
    """The components of a composed release (the private choice of levels, one entry per
    marginal; basic composition, ``docs/theory/composition.md#dp-composition``:
    ``privacy_map`` is the sum of theirs), or extra
    parameters of one mechanism (Gaussian: its zCDP rho; randomized response: its keep
    probability). Empty for a single Laplace/geometric count vector."""
    norm: str = "l1"
    """Which norm :attr:`sensitivity` is in: ``l1`` (Laplace, geometric), ``l2`` (Gaussian),
    ``records`` (randomized response: one person changes one record)."""
    post_processing: str = ROUND
    """What was done to the noisy output before publication (it sees only that output, so it
    costs no privacy): said in release.json so a reader knows what the counts are."""
    estimator: str = "unbiased"
    """Which estimator of the true counts the published ``count`` column is
    (:data:`kerckhoffs.dp.accuracy.ESTIMATORS`): ``unbiased`` (the rounded noisy count, may be
    negative), ``clamped`` (releases written before: clamped at 0, biased upward for small
    counts) or ``responses`` (dp-rr: counts of randomized responses)."""
    accuracy: dict[str, Any] | None = None
    """The stated interval of every count (:mod:`kerckhoffs.dp.accuracy`): its level, its
    half-widths and how they were computed; None for releases written before."""
    measure: Measure = Measure.PURE
    """The measure the guarantee was proved under (:class:`~kerckhoffs.dp.loss.Measure`):
    pure for Laplace, geometric, randomized response and noisy max; zero-concentrated for
    the Gaussian, whose ``(epsilon, delta)`` is OpenDP's conversion of :attr:`rho`."""
    rho: float | None = None
    """The zCDP rho OpenDP's map reports at the release's sensitivity (zCDP releases only):
    what a privacy ledger composes (Bun and Steinke, TCC 2016, Lemma 2.3)."""
    contributions: int = 1
    """The most rows one person contributes: the privacy map was computed at ``d_in`` of
    that many rows (:mod:`kerckhoffs.dp.contributions`), so the loss is per person."""

    def __post_init__(self) -> None:
        if self.measure == Measure.ZCDP and not (
            self.rho is not None and math.isfinite(self.rho)
        ):  # a rho beyond a float says nothing: its (epsilon, delta) is what holds
            object.__setattr__(self, "measure", Measure.APPROXIMATE)
            object.__setattr__(self, "rho", None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record (what ``release.json`` holds under ``"dp"``)."""
        return (
            {
                "mechanism": self.mechanism.value,
                "neighbours": self.neighbours.value,
                "sensitivity": self.sensitivity,
                "scale": self.scale,
                "epsilon": self.epsilon,
                "delta": self.delta,
                "privacy_map": self.privacy_map,
                "opendp": self.opendp,
                "cells": self.cells,
                "sensitivity_norm": self.norm,
                "post_processing": self.post_processing,
                "estimator": self.estimator,
                "measure": self.measure.value,
                "contributions": self.contributions,
            }
            | ({"rho": self.rho} if self.rho is not None else {})
            | ({"parts": [dict(p) for p in self.parts]} if self.parts else {})
            | ({"accuracy": dict(self.accuracy)} if self.accuracy is not None else {})
        )

    @classmethod
    def from_dict(cls, data: Any, where: str = "release.json") -> NoiseSpec:
        """The record :meth:`to_dict` wrote; a missing or mistyped field is a one-line
        ParameterError naming it.

        A randomized-response release whose responses do not randomize the whole cell (no
        part with ``"perturb": "cell"``; ``dp-rr`` writes ``"sa"`` for a release that
        randomizes the sensitive value only) is read under ``sensitive-value`` neighbours,
        whatever it recorded: older releases recorded ``substitution`` for it, which it
        does not meet (its QI cell totals are exact)."""
        if not isinstance(data, dict):
            raise ParameterError(f"{where}: field 'dp' is missing or not an object")

        def num(key: str) -> float:
            v = data.get(key)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ParameterError(f"{where}: field 'dp.{key}' is missing or not a number")
            return float(v)

        sens = num("sensitivity")
        parts = data.get("parts", [])
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            raise ParameterError(f"{where}: field 'dp.parts' is not a list of objects")
        mech = parse_mechanism(data.get("mechanism", ""))
        nb = parse_neighbours(data.get("neighbours", ""))
        if mech == Mechanism.RANDOMIZED_RESPONSE and not any(
            p.get("perturb") == "cell" for p in parts
        ):
            nb = Neighbours.SENSITIVE_VALUE
        estimator = str(data.get("estimator", CLAMPED))
        if estimator not in ESTIMATORS:
            raise ParameterError(
                f"{where}: field 'dp.estimator' must be one of {', '.join(ESTIMATORS)}, "
                f"got {estimator!r}"
            )
        accuracy = data.get("accuracy")
        if accuracy is not None and not isinstance(accuracy, dict):
            raise ParameterError(f"{where}: field 'dp.accuracy' is not an object")
        measure, rho, contributions = _accounting_fields(data, num("delta"), where)
        return cls(
            mech,
            nb,
            int(sens) if sens.is_integer() else sens,
            num("scale"),
            num("epsilon"),
            num("delta"),
            num("privacy_map"),
            str(data.get("opendp", "unknown")),
            int(num("cells")),
            tuple(parts),
            str(data.get("sensitivity_norm", "l1")),
            str(data.get("post_processing", CLAMP_AND_ROUND)),
            estimator,
            accuracy,
            measure,
            rho,
            contributions,
        )


def _accounting_fields(
    data: dict[str, Any], delta: float, where: str
) -> tuple[Measure, float | None, int]:
    """``measure``, ``rho`` and ``contributions`` of a ``release.json`` ``"dp"`` record. A
    file written before they were recorded reads as one row per person, pure when its delta
    is 0 and otherwise approximate (its ``(epsilon, delta)`` composes by basic composition,
    which holds whatever the mechanism)."""
    raw = data.get("measure")
    if raw is None:
        measure = Measure.PURE if delta == 0 else Measure.APPROXIMATE
    else:
        try:
            measure = Measure(str(raw))
        except ValueError:
            known = ", ".join(m.value for m in Measure)
            raise ParameterError(
                f"{where}: field 'dp.measure' {raw!r} is not one of {known}"
            ) from None
    rho = data.get("rho")
    if measure == Measure.ZCDP:
        if isinstance(rho, bool) or not isinstance(rho, int | float) or not 0 <= rho < math.inf:
            raise ParameterError(f"{where}: field 'dp.rho' is missing or not a number >= 0")
        rho = float(rho)
    else:
        rho = None
    n = data.get("contributions", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ParameterError(f"{where}: field 'dp.contributions' must be an integer >= 1")
    return measure, rho, n


def as_float(value: Any) -> float:
    """``float(value)``, with an integer beyond a float (``10**400``) as ``inf`` of its sign
    instead of an OverflowError (a text such as ``"1e400"`` already reads as ``inf``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def shown_number(value: Any) -> str:
    """``value`` for an error line: its repr, but an integer of more than 16 digits as
    ``about 10^N`` and a text of more than 40 characters cut (a 400-digit epsilon is not worth
    400 characters, and Python refuses to print an integer of more than 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**16:
        sign = "-" if value < 0 else ""
        return f"{sign}about 10^{math.floor(math.log10(abs(value)))}"
    if isinstance(value, str) and len(value) > 40:
        return f"{value[:24]!r}… ({len(value):,} characters)"
    return repr(value)


def check_budget(epsilon: float, delta: float = 0.0) -> tuple[float, float]:
    """``(epsilon, delta)`` as floats; a non-positive or non-finite epsilon, or a delta
    outside ``[0, 1)``, is a one-line ParameterError."""
    try:
        eps, dlt = as_float(epsilon), as_float(delta)
    except (TypeError, ValueError):
        shown = f"{shown_number(epsilon)}, {shown_number(delta)}"
        raise ParameterError(f"epsilon and delta must be numbers, got {shown}") from None
    if eps == math.inf:
        raise ParameterError(
            f"epsilon {shown_number(epsilon)} is too large (beyond the largest float, about "
            "1.8e308, it is not a finite number)"
        )
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(
            f"epsilon must be a positive finite number, got {shown_number(epsilon)}"
        )
    if not (math.isfinite(dlt) and 0 <= dlt < 1):
        raise ParameterError(f"delta must be in [0, 1), got {shown_number(delta)}")
    return eps, dlt


MAX_SCALE = 2.0**52
"""Largest noise scale a count release is built with (about 4.5e15). Beyond it a noisy count
says nothing (its noise dwarfs any table a machine holds) and a sample no longer fits the
integer a count is stored in, so an epsilon that small is refused in one line
(:func:`refuse_scale`) rather than published as overflowed numbers."""


def refuse_scale(scale: float, epsilon: float, what: str) -> None:
    """A one-line ParameterError when ``scale`` exceeds :data:`MAX_SCALE` (or is not finite):
    ``epsilon`` is too small for ``what``."""
    if not (math.isfinite(scale) and scale <= MAX_SCALE):
        raise ParameterError(
            f"epsilon {epsilon:g} is too small for {what}: it needs a noise scale above 2^52 "
            f"({MAX_SCALE:.2g}), where a noisy count says nothing and no longer fits an integer; "
            "use a larger epsilon"
        )


def count_measurement(
    cells: int,
    epsilon: float,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
    contributions: int = 1,
) -> tuple[Any, NoiseSpec]:
    """The OpenDP measurement adding noise to a count vector of ``cells`` cells, and its
    :class:`NoiseSpec`. ``contributions``: the most rows one person has in the counts
    (:mod:`kerckhoffs.dp.contributions`); the sensitivity is that many rows' (``2N`` under
    substitution, ``N`` under add/remove), so the loss is per person.

    Scale ``b = Δ/ε``; if OpenDP's map at ``d_in = Δ`` exceeds ``ε`` by floating-point
    rounding, ``b`` moves up one ulp at a time until it does not. A map still above ``ε``
    (never expected) raises :class:`~kerckhoffs.errors.PrivacyCheckFailed`: fail closed.
    """
    eps, dlt = check_budget(epsilon, delta)
    mech = parse_mechanism(mechanism)
    nb = count_neighbours(neighbours)
    if cells < 1:
        raise ParameterError("the cell domain is empty")
    rows = check_contributions(contributions)
    if mech == Mechanism.GAUSSIAN:
        return gaussian_measurement(cells, eps, dlt, nb, rows)
    if mech == Mechanism.RANDOMIZED_RESPONSE:
        raise ParameterError("randomized-response perturbs records, not counts: use dp-rr")
    sens = histogram_sensitivity(nb) * rows
    integer = mech == Mechanism.GEOMETRIC
    scale = sens / eps
    refuse_scale(scale, eps, f"{mech.value} noise")
    for _ in range(64):
        meas, loss = _laplace(integer, int(cells), scale, sens)
        if loss <= eps:
            break
        scale = float(np.nextafter(scale, np.inf))
    else:  # pragma: no cover (OpenDP's map is within a few ulps of Δ/b)
        raise PrivacyCheckFailed(f"OpenDP's privacy map {loss} stays above epsilon {eps}")
    spec = NoiseSpec(
        mech, nb, sens, scale, eps, dlt, loss, opendp_version(), cells, contributions=rows
    )
    return meas, spec


def with_pure_part(rho: float | None, epsilon: float) -> float | None:
    """The zCDP rho of a zCDP release (``rho``; None for a pure one, which stays None) composed
    with a pure ``epsilon``-DP step: an epsilon-DP mechanism is ``epsilon²/2``-zCDP and zCDP
    composes by adding rho (Bun and Steinke, TCC 2016, Prop. 1.4 and Lemma 2.3)."""
    if rho is None:
        return None
    eps = float(epsilon)
    return rho + (eps * eps / 2 if eps < 1e150 else math.inf)


def check_contributions(value: object) -> int:
    """``value`` as a number of rows per person (an integer >= 1); else one-line
    ParameterError."""
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdigit()):
        raise ParameterError(f"contributions {value!r}: expected a whole number of rows >= 1")
    rows = int(text)
    if rows < 1:
        raise ParameterError(f"contributions {value!r}: expected a whole number of rows >= 1")
    return rows


@functools.lru_cache(maxsize=256)
def _laplace(integer: bool, cells: int, scale: float, sensitivity: int) -> tuple[Any, float]:
    """OpenDP's vector Laplace on ``cells`` counts (discrete on integers, continuous on
    floats) at ``scale``, and its privacy map at ``d_in = sensitivity``.

    Remembered by its arguments (about 1 ms a build): an OpenDP measurement is immutable and
    draws fresh noise on every call, so reusing one reuses the mechanism, never its noise.
    The key holds everything the measurement depends on, so a different sensitivity or scale
    builds a different one."""
    dp = opendp_core.core()

    dp.enable_features("contrib")
    if integer:
        space = (dp.vector_domain(dp.atom_domain(T="i64"), size=cells), dp.l1_distance(T="i64"))
        d_in: int | float = sensitivity
    else:
        space = (
            dp.vector_domain(dp.atom_domain(T="f64", nan=False), size=cells),
            dp.l1_distance(T="f64"),
        )
        d_in = float(sensitivity)
    meas = dp.m.make_laplace(*space, scale=scale)
    return meas, float(meas.map(d_in))


def gaussian_measurement(
    cells: int,
    epsilon: float,
    delta: float,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    contributions: int = 1,
) -> tuple[Any, NoiseSpec]:
    """OpenDP's discrete Gaussian on a count vector of ``cells`` cells, made
    ``(epsilon, delta)``-DP (``docs/theory/composition.md#dp-mechanisms``; Dwork-Roth 2014).

    The L2 sensitivity is ``sqrt 2`` under substitution, 1 under add/remove
    (:func:`l2_histogram_sensitivity`), times ``contributions`` (a person's ``N`` rows may
    all leave one cell for another: ``sqrt(N² + N²)``). OpenDP's Gaussian is zCDP
    (``rho = Δ2²/(2σ²)``, recorded as the release's :attr:`NoiseSpec.rho`);
    ``make_zCDP_to_approxDP`` + ``make_fix_delta`` turn it into the ``(epsilon', delta)``
    its map reports. The smallest scale ``σ`` with ``epsilon' <= epsilon`` is found by
    bisection on OpenDP's map (tighter than Dwork-Roth's ``Δ2·sqrt(2 ln(1.25/δ))/ε``, which
    also needs ``ε < 1``; :func:`_gaussian_scale`). ``delta`` 0 is a one-line ParameterError:
    the Gaussian mechanism is never pure DP. At a very large epsilon (about 70,000 and up)
    OpenDP cannot compute the loss of a scale that small: the release gets the smallest scale
    it can account for and records that scale's smaller loss; an epsilon so small that the
    scale would pass :data:`MAX_SCALE` is a one-line ParameterError.
    """
    eps, dlt = check_budget(epsilon, delta)
    nb = count_neighbours(neighbours)
    if dlt == 0:
        raise ParameterError(
            "mechanism gaussian needs delta > 0 (it is (epsilon, delta)-DP): give the model "
            "as dp=EPS,DELTA, e.g. --model dp=1,1e-6"
        )
    if cells < 1:
        raise ParameterError("the cell domain is empty")
    rows = check_contributions(contributions)
    d_in = l2_histogram_sensitivity(nb) * rows
    sigma = _gaussian_scale(d_in, eps, dlt)
    zcdp, meas, loss = _gaussian(int(cells), sigma, dlt, d_in)
    if loss > eps:  # pragma: no cover (the bisection's upper end always satisfies it)
        raise PrivacyCheckFailed(f"OpenDP's privacy map {loss} stays above epsilon {eps}")
    rho = float(zcdp.map(d_in))
    hi = sigma
    spec = NoiseSpec(
        Mechanism.GAUSSIAN,
        nb,
        d_in,
        hi,
        eps,
        dlt,
        loss,
        opendp_version(),
        cells,
        ({"name": "gaussian", "rho": rho, "delta": dlt},),
        "l2",
        measure=Measure.ZCDP,
        rho=rho,
        contributions=rows,
    )
    return meas, spec


def _build_gaussian(cells: int, sigma: float, delta: float, d_in: float) -> tuple[Any, Any, float]:
    """OpenDP's discrete Gaussian on ``cells`` counts at scale ``sigma`` (zCDP), the same
    turned into ``(epsilon, delta)``-DP, and that epsilon at ``d_in``."""
    dp = opendp_core.core()

    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T="i64"), size=cells), dp.l2_distance(T="f64"))
    zcdp = dp.m.make_gaussian(*space, scale=sigma)
    approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta)
    return zcdp, approx, float(approx.map(d_in)[0])


_gaussian = functools.lru_cache(maxsize=64)(_build_gaussian)
""":func:`_build_gaussian` remembered by its arguments (as :func:`_laplace`)."""


GAUSSIAN_MAX_LOSS = 50_000.0
"""Largest epsilon the Gaussian's scale is searched for. OpenDP's conversion from zCDP
overflows (its map fails) once the zCDP rho passes about 70,000, and epsilon is at least rho,
so a target up to this is always computable; a larger target gets this loss's scale, and the
release records this smaller loss (a loss of e^50000 protects nothing either way, but a
command asked for it should not crash). Each overflowing OpenDP call also costs about 0.1 s
(it captures a backtrace), which a search near the limit would pay dozens of times."""


def _gaussian_loss(sigma: float, delta: float, d_in: float) -> float:
    """OpenDP's ``epsilon'`` at ``d_in`` for the Gaussian at ``sigma`` fixed at ``delta``, or
    ``inf`` where OpenDP's map overflows: its conversion from zCDP exponentiates the loss,
    so below some scale (about 0.004 for ``d_in = sqrt 2``) the loss is beyond a float. Only
    a scale search reads this, and an overflow there only pushes the scale up (more noise):
    the scale chosen always has a finite map OpenDP computed."""
    from opendp.mod import OpenDPException

    try:
        return _build_gaussian(1, sigma, delta, d_in)[2]
    except OpenDPException as exc:
        if getattr(exc, "variant", "") == "Overflow":
            return math.inf
        raise


@functools.lru_cache(maxsize=64)
def _gaussian_scale(d_in: float, epsilon: float, delta: float) -> float:
    """The smallest scale (to float resolution) whose ``(epsilon', delta)`` from OpenDP's
    map at ``d_in`` has ``epsilon' <= epsilon`` (the map does not depend on the number of
    cells, so a one-cell measurement is searched; remembered by its arguments).

    Starts from Dwork-Roth's ``Δ2·sqrt(2 ln(1.25/δ))/ε``, or ``Δ2/sqrt(2ε)`` (zCDP rho equal
    to epsilon) when larger, at most :data:`MAX_SCALE`; brackets the answer by steps that
    square each time (a handful of OpenDP builds even when the start is far off), narrows the
    bracket geometrically to a factor 2, then bisects to float resolution (about 55 builds in
    all, 0.2 s). An epsilon above :data:`GAUSSIAN_MAX_LOSS` gets that loss's scale (the
    release records the smaller loss); one that needs a scale above :data:`MAX_SCALE` is a
    one-line ParameterError."""

    epsilon = min(epsilon, GAUSSIAN_MAX_LOSS)

    def fits(sigma: float) -> bool:
        return _gaussian_loss(sigma, delta, d_in) <= epsilon

    classic = d_in * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    # at a large epsilon the classic bound is far too small (OpenDP's map overflows there);
    # the scale whose zCDP rho is epsilon is just too small (epsilon' >= rho) and computable
    start = min(max(classic, d_in / math.sqrt(2 * epsilon), 1e-300), MAX_SCALE)
    factor = 2.0
    if fits(start):
        hi = start
        while True:  # down until a scale is too small
            lo = max(hi / factor, 1e-300)
            if not fits(lo):
                break
            if lo == 1e-300:  # pragma: no cover (the map overflows long before)
                return lo
            hi, factor = lo, factor * factor
    else:
        lo = start
        while True:  # up until a scale fits
            if lo >= MAX_SCALE:
                refuse_scale(math.inf, epsilon, "the Gaussian mechanism")
            hi = min(lo * factor, MAX_SCALE)
            if fits(hi):
                break
            lo, factor = hi, factor * factor
    while hi > 2 * lo:  # invariant: lo does not fit, hi does
        mid = math.sqrt(lo) * math.sqrt(hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def add_noise(counts: np.ndarray, measurement: Any, spec: NoiseSpec) -> np.ndarray:
    """OpenDP's noisy version of the integer ``counts`` (int64 for the geometric mechanism,
    float64 for Laplace): the only call that reads the true counts."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (spec.cells,):
        raise ValueError(f"expected {spec.cells} counts, got shape {counts.shape}")
    if spec.mechanism in (Mechanism.GEOMETRIC, Mechanism.GAUSSIAN):
        return np.asarray(measurement(counts), dtype=np.int64)
    return np.asarray(measurement(counts.astype(np.float64)), dtype=np.float64)


def post_process(noisy: np.ndarray) -> np.ndarray:
    """Round to integers, without clamping (``docs/theory/composition.md#dp-mechanisms``): a
    function of the noisy output only, so the release stays ``ε``-DP (a tested property:
    post-processing never reads the raw data).

    The noise is symmetric about 0 and ``rint`` is odd (``rint(-x) = -rint(x)``), so the
    rounded count ``c + rint(Z)`` has mean ``c``: the published count is unbiased and may be
    negative. Clamping at 0 would bias every small count upward (a sum of many empty cells
    would grow with their number); a consumer that needs non-negative numbers clamps for
    itself."""
    return np.rint(np.asarray(noisy, dtype=np.float64)).astype(np.int64)


def consistent_totals(noisy: Sequence[np.ndarray], variances: Sequence[float]) -> list[np.ndarray]:
    """Post-process several noisy count tables of the same people so that every table sums
    to the same total (consistency projections are post-processing, DP is kept;
    ``docs/theory/composition.md#dp-mechanisms``).

    The common total is the inverse-variance weighted mean of the tables' noisy sums (each
    sum is an unbiased estimate of the number of people; ``variances[j]`` is the variance of
    table ``j``'s sum). Each table is clamped at 0, scaled to that total and rounded by
    largest remainders, so its integer cells add up to it exactly. Reads only the noisy
    output.
    """
    sums = np.array([float(np.sum(v)) for v in noisy])
    w = 1.0 / np.maximum(np.asarray(variances, dtype=np.float64), 1e-12)
    total = max(round(float(np.sum(w * sums) / np.sum(w))), 0)
    out = []
    for v in noisy:
        c = np.clip(np.asarray(v, dtype=np.float64), 0, None)
        mass = float(c.sum())
        share = c / mass if mass > 0 else np.full(c.size, 1.0 / max(c.size, 1))
        exact = share * total
        cells = np.floor(exact).astype(np.int64)
        short = total - int(cells.sum())
        if short > 0:  # the largest remainders get the missing units (ties: the lower cell)
            order = np.argsort(-(exact - cells), kind="stable")[:short]
            cells[order] += 1
        out.append(cells)
    return out


__all__ = [
    "MAX_SCALE",
    "ROUND",
    "STANDARD_NEIGHBOURS",
    "Mechanism",
    "Neighbours",
    "NoiseSpec",
    "add_noise",
    "as_float",
    "check_budget",
    "check_contributions",
    "consistent_totals",
    "count_measurement",
    "count_neighbours",
    "gaussian_measurement",
    "histogram_sensitivity",
    "implied_loss",
    "l2_histogram_sensitivity",
    "opendp_version",
    "parse_mechanism",
    "parse_neighbours",
    "post_process",
    "refuse_scale",
    "shown_number",
    "with_pure_part",
]
