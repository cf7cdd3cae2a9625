"""The intersection attack adapted to DP count tables (paper 004 Algorithm 1,
``docs/theory/composition.md#intersection-attack``, run against the DP releases of
``docs/theory/composition.md#dp-mechanisms``).

A DP release (scheme ``dp``, :class:`~kerckhoffs.dp.counts.DPRelease`) publishes a noisy
count for every cell of a public domain (QI nodes x SA values), not groups with their exact SA
values, so Algorithm 1 does not apply to it as it stands (the ``intersection`` attack refuses
it). The natural adversary reads a cell as *holding* its SA value when the cell's noisy count
reaches a threshold ``tau``: for a target located in QI cell ``c`` of release ``j`` (by the
target's QIs, :mod:`kerckhoffs.attacks.locate`), ``s_ij = {v : noisy(c, v) >= tau}``. The
sets are then intersected across releases exactly as Algorithm 1 does
(:func:`kerckhoffs.attacks.composition.intersection.attack_result`: ``S_i``, perfect and partial
breaches,
effective anonymity before and after, the same tuple table and details). A non-DP release in
the list (a k-anonymous table, say) contributes its exact value sets, as in Algorithm 1.

**The threshold.** ``tau`` (default :data:`DEFAULT_TAU` = 0.5): a published count is an
integer (dpcore clamps at 0 and rounds), so 0.5 reads "at least one person". With the noise
replaced by zero this is Algorithm 1 exactly (every cell with a person holds its value), which
is how the tests check the adaptation. ``tau_scale`` instead sets ``tau_j = tau_scale * b_j``
per release, ``b_j`` the noise scale its ``release.json`` records (public: the adversary knows
the mechanism, Kerckhoffs). A larger threshold drops noise-only cells and also real cells with
few people; no threshold makes the breach come back, because the noise on a cell is of the
order of ``b = Δ/ε`` whatever the cell's true count
(``docs/theory/composition.md#differential-privacy``,
``docs/theory/composition.md#dp-composition``): at small ``ε`` the sets are mostly noise, and a
"perfect breach" (``|S_i| = 1``) is then usually the wrong value. Given the targets' true values,
the result's ``correct_breach`` counts the breaches that name the right value (the number the
composition experiment plots).

Refused (``applies`` gives the reason, a direct call raises a one-line ParameterError): no
DP release among the releases (use ``intersection``), a DP release whose cells do not include
the SA (it says nothing about anyone's SA value) or count a generalized SA (its labels are
hierarchy nodes, not values), fewer than two releases, and a missing population.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.composition.chance import (
    FALSE_ALARM,
    chance_tail,
)
from kerckhoffs.attacks.composition.chance import (
    against_chance as _against_chance,
)
from kerckhoffs.attacks.composition.intersection import attack_result, meta_on_disk
from kerckhoffs.attacks.knowledge import Knowledge, NotHaving
from kerckhoffs.attacks.locate import Location, locate_all
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.release import Release, Scheme

NAME = "dp-intersection"
DEFAULT_TAU = 0.5
"""Default threshold: a cell whose (integer) noisy count is at least 1 holds its value."""


def _dp_reason(release: Release) -> str | None:
    """Why a DP release cannot be thresholded into value sets (None when it can)."""
    from kerckhoffs.dp.counts import DPRelease

    if not isinstance(release, DPRelease):
        return "a release of scheme dp is not a DP count table"
    sa = [a for a in release.axes if a.get("role") == "sensitive"]
    if not sa:
        return (
            "a DP release counts QI cells only (its SA is not in the cells): it tells nothing "
            "about anyone's SA value"
        )
    if int(sa[0].get("level", 0)) != 0:
        return "a DP release counts a generalized SA (level > 0): its cells hold no SA values"
    return None


def thresholds(
    releases: Sequence[Release], tau: float | None = None, tau_scale: float | None = None
) -> list[float | None]:
    """The threshold of each release (None for a non-DP release): ``tau`` for all, or
    ``tau_scale`` times each DP release's recorded noise scale (at least :data:`DEFAULT_TAU`,
    so a cell read as holding a value has a published count of at least 1); default
    :data:`DEFAULT_TAU`."""
    if tau is not None and tau_scale is not None:
        raise ParameterError(f"{NAME}: give tau or tau_scale, not both")
    if tau_scale is not None and (not math.isfinite(tau_scale) or tau_scale < 0):
        raise ParameterError(f"{NAME}: tau_scale must be a non-negative number, got {tau_scale}")
    t = DEFAULT_TAU if tau is None else float(tau)
    if not math.isfinite(t) or t <= 0:
        raise ParameterError(f"{NAME}: tau must be a positive number, got {tau}")
    out: list[float | None] = []
    for r in releases:
        if r.scheme != Scheme.DP:
            out.append(None)
        elif tau_scale is not None:
            scale = float(r.noise.scale)  # type: ignore[attr-defined]
            out.append(max(tau_scale * scale, DEFAULT_TAU))
        else:
            out.append(t)
    return out


def held_counts(release: Release, tau: float) -> np.ndarray:
    """int64 [cells, SA labels] of a DP release: a cell's noisy count where it reaches ``tau``
    (at least 1, so the value counts as held), 0 elsewhere. Cell ``g`` is group ``g`` of the
    release (one row of its cell table); its SA value is that row's SA code."""
    reason = _dp_reason(release)
    if reason is not None:
        raise ParameterError(f"{NAME}: {reason}")
    from kerckhoffs.dp.counts import COUNT, DPRelease

    if not isinstance(release, DPRelease):  # _dp_reason accepts only DP count tables
        raise InternalError(f"{NAME}: held_counts reached a release that is not a DP count table")
    noisy = pd.to_numeric(release.counts[COUNT]).to_numpy(dtype=np.float64)
    table = release.table
    out = np.zeros((table.n, table.sa_column.size), dtype=np.int64)
    keep = noisy >= tau
    out[np.arange(table.n), table.sa] = np.where(keep, np.maximum(np.ceil(noisy), 1), 0)
    return out


def dp_intersection_attack(
    releases: Sequence[Release],
    locations: Sequence[Location],
    *,
    tau: float | None = None,
    tau_scale: float | None = None,
    confidence: float = 1.0,
    not_having: Sequence[NotHaving] = (),
    ids: Sequence[Any] | np.ndarray | None = None,
    rows: np.ndarray | None = None,
    true_values: Sequence[Any] | np.ndarray | None = None,
    against_chance: bool = False,
) -> AttackResult:
    """Threshold every DP release's noisy counts at its ``tau`` (:func:`thresholds`), then
    Algorithm 1 over all releases (module docstring); the arguments and the result are those
    of :func:`~kerckhoffs.attacks.composition.intersection.intersection_attack`, plus
    ``details["tau"]`` (per release, None for a non-DP one) and ``details["noise_scale"]``.
    ``against_chance`` (with ``true_values``; what ``audit`` runs): a breach counts only as
    far as the correct ones beat guessing (:func:`_against_chance`).

    >>> # releases: DP count tables of overlapping populations (with_sa=True)
    >>> # dp_intersection_attack(releases, locate_all(releases, people, schema))
    """
    if not any(r.scheme == Scheme.DP for r in releases):
        raise ParameterError(f"{NAME}: no DP release among the releases; use intersection")
    taus = thresholds(releases, tau, tau_scale)
    counts = [None if t is None else held_counts(r, t) for r, t in zip(releases, taus, strict=True)]
    result = attack_result(
        releases,
        locations,
        name=NAME,
        group_counts=counts,
        confidence=confidence,
        not_having=not_having,
        ids=ids,
        rows=rows,
        true_values=true_values,
    )
    result.details["tau"] = taus
    result.details["noise_scale"] = [
        float(r.noise.scale) if r.scheme == Scheme.DP else None  # type: ignore[attr-defined]
        for r in releases
    ]
    if against_chance and true_values is not None:
        _against_chance(result)
    return result


# -- the registered attack ------------------------------------------------------------------------
def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if not releases:
        return "no release to attack"
    if len(releases) + len(knowledge.releases) < 2:
        return (
            "needs at least two releases of overlapping populations "
            "(the attacked one plus knowledge releases = [...])"
        )
    in_memory = [*releases, *(r for r in knowledge.releases if isinstance(r, Release))]
    metas = [meta_on_disk(p) for p in knowledge.releases if not isinstance(p, Release)]
    dp_on_disk = [m for m in metas if m is not None and m.get("scheme") == Scheme.DP.value]
    if not any(r.scheme == Scheme.DP for r in in_memory) and not dp_on_disk:
        return "no DP release among the releases (the intersection attack applies instead)"
    for r in in_memory:
        if r.scheme == Scheme.DP:
            reason = _dp_reason(r)
            if reason is not None:
                return reason
    for m in dp_on_disk:
        sa = m.get("sensitive") or {}
        if not sa.get("in_cells"):
            return (
                "a DP release counts QI cells only (its SA is not in the cells): it tells "
                "nothing about anyone's SA value"
            )
    names = {r.table.sa_name for r in in_memory}
    names |= {str((m.get("sensitive") or {}).get("name")) for m in metas if m is not None}
    if len(names) > 1:
        return f"the releases publish different sensitive attributes ({sorted(names)})"
    if knowledge.population is None:
        return (
            "needs the adversary's population of targets with their QIs "
            "(knowledge [population] file = ...)"
        )
    return None


@register_attack(
    NAME,
    summary="composition attack on DP count tables: threshold each release's noisy counts "
    "into value sets, intersect them across releases (paper 004 Algorithm 1)",
    applies=_applies,
    reads=("population", "not_having", "releases"),
)
def run_dp_intersection(
    releases: Sequence[Release], knowledge: Knowledge, **options: Any
) -> AttackResult:
    """Registry adapter: the attacked release, the other ``releases`` and
    ``knowledge.releases`` are thresholded and intersected for every individual of
    ``knowledge.population``, located by their QIs through the published cells.

    Options: ``tau`` (threshold on a noisy count, default 0.5) or ``tau_scale`` (a multiple
    of each DP release's noise scale), ``confidence`` (default 1: perfect breaches),
    ``schema`` (default ``knowledge.schema``: the hierarchies that say what a cell covers).
    A population column named like the SA gives ``truth_in_set`` and ``correct_breach``, and
    the breaches are then judged against chance (a value set read from noisy counts is not
    evidence of itself).
    """
    allowed = {"confidence", "schema", "tau", "tau_scale"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ParameterError(
            f"{NAME}: unknown option {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    reason = _applies(releases, knowledge)
    if reason is not None:
        raise ParameterError(f"{NAME}: {reason}")
    schema = options.get("schema", knowledge.schema)
    if schema is not None and not isinstance(schema, Schema):
        schema = Schema.from_toml(schema)
    every = list(releases) + knowledge.load_releases(schema)
    population = knowledge.population
    if population is None:  # _applies refuses knowledge without a population
        raise InternalError(f"{NAME}: no population after the attack was found to apply")
    locations = locate_all(every, population, schema)
    sa = every[0].table.sa_name
    tau = options.get("tau")
    tau_scale = options.get("tau_scale")
    return dp_intersection_attack(
        every,
        locations,
        tau=None if tau is None else float(tau),
        tau_scale=None if tau_scale is None else float(tau_scale),
        confidence=float(options.get("confidence", 1.0)),
        not_having=knowledge.not_having,
        ids=population["id"].to_numpy() if "id" in population.columns else None,
        true_values=population[sa].to_numpy() if sa in population.columns else None,
        against_chance=True,
    )


__all__ = [
    "DEFAULT_TAU",
    "FALSE_ALARM",
    "chance_tail",
    "dp_intersection_attack",
    "held_counts",
    "run_dp_intersection",
    "thresholds",
]
