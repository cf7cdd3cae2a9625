"""The DP algorithms (paper 004's safe alternative; ``docs/theory/composition.md#dp-mechanisms``),
every random draw OpenDP's: ``dp-histogram`` (a noisy count table over a public cell domain,
:mod:`kerckhoffs.dp.counts`), ``dp-marginals`` (several count tables under one budget,
:mod:`kerckhoffs.dp.marginals`), ``dp-rr`` (k-ary randomized response per record, published as the
count table of responses, :mod:`kerckhoffs.dp.randomized_response`).
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.algorithms.registry import refuse_others, register
from kerckhoffs.data.table import Table
from kerckhoffs.dp.contributions import CONTRIBUTION_OPTIONS
from kerckhoffs.dp.counts import MAX_CELLS, DPRelease, dp_histogram
from kerckhoffs.dp.marginals import dp_marginals
from kerckhoffs.dp.mechanisms import check_contributions
from kerckhoffs.dp.randomized_response import dp_rr
from kerckhoffs.dp.select import AUTO_MAX_CELLS, SELECTION
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.differential_privacy import (
    DifferentialPrivacy,
    DPTarget,
    LabelDifferentialPrivacy,
)
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Provenance, Scheme

NAME = "dp-histogram"


def _levels(levels: str | dict[str, int] | None, level: str | None) -> str | dict[str, int] | None:
    """``levels``, also accepted as ``level`` (``-O level=age:4,zip:1``); not both."""
    if level is not None and levels is not None:
        raise ParameterError("give levels= or level=, not both")
    return levels if level is None else level


@register(
    NAME,
    algorithm_safe=True,
    summary="DP histogram: noisy counts of every cell of a public domain (OpenDP; paper 004)",
    models=("DifferentialPrivacy",),
    schemes=(Scheme.DP,),
    randomized=True,
    seedable=False,
    options={
        "mechanism": "geometric (default; discrete Laplace) | laplace (continuous, rounded) | "
        "gaussian (discrete Gaussian, needs dp=EPS,DELTA with DELTA > 0)",
        "level": "the same as levels (either one)",
        "levels": "auto (default: chosen with DP, a greedy top-down OpenDP noisy max within "
        f"{AUTO_MAX_CELLS:,} cells, charged to the budget; auto,NAME:LEVEL pins some) | "
        "NAME:LEVEL,... the hierarchy level of each QI (missing names: 0) | leaves (every QI "
        "at level 0); a level below the root needs a public domain in the schema (hierarchy, "
        "bounds and bins, or values)",
        "selection": "with levels chosen with DP: the fraction of epsilon spent choosing "
        "(default 0.1)",
        "with_sa": "false (default) | true: cross the cells with the sensitive attribute",
        "neighbours": "substitution (default; sensitivity 2) | add-remove (sensitivity 1)",
        "max_cells": f"largest cell domain built (default {MAX_CELLS:,})",
        **CONTRIBUTION_OPTIONS,
    },
)
def dp_histogram_algorithm(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    mechanism: str = "geometric",
    levels: str | dict[str, int] | None = None,
    level: str | None = None,
    with_sa: bool | str = False,
    neighbours: str = "substitution",
    max_cells: int = MAX_CELLS,
    selection: float | str = 0.1,
    contributions: int | str = 1,
    persons: np.ndarray | None = None,
) -> DPRelease:
    """Reads epsilon from :class:`~kerckhoffs.models.DifferentialPrivacy` (``dp=EPS``; a
    delta is met with delta 0 by Laplace and geometric noise, which are pure epsilon-DP, and
    spent by ``mechanism=gaussian``, which needs it > 0). ``seed`` is refused:
    OpenDP draws every noise value from a secure generator that cannot be seeded."""
    target = _target(models, seed, NAME)
    sa = _flag(with_sa, "with_sa")
    release = dp_histogram(
        table,
        target.epsilon,
        levels=_levels(levels, level),
        with_sa=sa,
        mechanism=mechanism,
        neighbours=neighbours,
        max_cells=int(max_cells),
        models=models,
        delta=target.delta if str(mechanism).strip().lower() == "gaussian" else 0.0,
        selection=_fraction(selection),
        contributions=check_contributions(contributions),
        persons=persons,
    )
    params = {
        "mechanism": release.noise.mechanism.value,
        "levels": {a["name"]: a["level"] for a in release.axes},
        "levels_chosen_with_dp": any(p.get("name") == SELECTION for p in release.noise.parts),
        "with_sa": sa,
        "neighbours": release.noise.neighbours.value,
        "models": [m.to_dict() for m in models],
    }
    release = release.with_provenance(Provenance(NAME, params))
    return release


def _fraction(value: float | str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"selection must be a number in (0, 1), got {value!r}") from None


def _flag(value: bool | str, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "1"}:
        return True
    if text in {"false", "no", "0"}:
        return False
    raise ParameterError(f"{name} must be true or false, got {value!r}")


def _target(
    models: list[PrivacyModel],
    seed: Seed,
    name: str,
    allowed: tuple[type[DPTarget], ...] = (DifferentialPrivacy,),
) -> DPTarget:
    """The DP target of an unseedable DP algorithm (a seed, other models and a second DP
    target refused). A count table is DP under substitution or add-remove, so only
    ``dp=EPS`` is its target (label-dp is refused with the reason)."""
    if seed is not None:
        raise ParameterError(
            f"{name} cannot be seeded: OpenDP draws its noise from a secure generator"
        )
    for m in models:
        if isinstance(m, LabelDifferentialPrivacy) and LabelDifferentialPrivacy not in allowed:
            raise ParameterError(
                f"{name} is DP under substitution or add-remove, which implies label DP: ask "
                f"for it with dp=EPS (label-dp={format_number(m.epsilon)} is what dp-rr with "
                "perturb=sa meets)"
            )
    refuse_others(models, allowed, name)
    found = [m for m in models if isinstance(m, DPTarget)]
    if len(found) > 1:
        raise ParameterError(f"{name}: give one DP target (dp=EPS or label-dp=EPS), got two")
    if not found:
        raise ParameterError(f"{name} needs a dp=EPS model, e.g. --model dp=1")
    return found[0]


MARGINALS = "dp-marginals"


@register(
    MARGINALS,
    algorithm_safe=True,
    summary="DP marginals: noisy count tables of several attribute sets under one budget "
    "(OpenDP; paper 004)",
    models=("DifferentialPrivacy",),
    schemes=(Scheme.DP,),
    randomized=True,
    seedable=False,
    options={
        "marginals": "the attribute sets, e.g. age+sex;zip+disease (QIs and the SA)",
        "weights": "split epsilon proportionally, e.g. 1,2 (default: equally)",
        "mechanism": "geometric (default) | laplace | gaussian (needs dp=EPS,DELTA)",
        "level": "the same as levels (either one)",
        "levels": "NAME:LEVEL,... hierarchy level of each attribute (default 0, the leaves); "
        "the level must come from a hierarchy file or be the root",
        "neighbours": "substitution (default; sensitivity 2 per marginal) | add-remove (1)",
        "max_cells": f"largest total number of cells (default {MAX_CELLS:,})",
        **CONTRIBUTION_OPTIONS,
    },
)
def dp_marginals_algorithm(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    marginals: str = "",
    weights: str | None = None,
    mechanism: str = "geometric",
    levels: str | dict[str, int] | None = None,
    level: str | None = None,
    neighbours: str = "substitution",
    max_cells: int = MAX_CELLS,
    contributions: int | str = 1,
    persons: np.ndarray | None = None,
) -> DPRelease:
    """Reads epsilon (and a Gaussian's delta) from ``dp=EPS[,DELTA]``; the shares of the
    marginals add up to it (basic composition). ``seed`` is refused (OpenDP)."""
    target = _target(models, seed, MARGINALS)
    if not marginals:
        raise ParameterError(f"{MARGINALS} needs -O marginals=NAME+NAME;NAME..., e.g. age+sex;zip")
    release = dp_marginals(
        table,
        target.epsilon,
        marginals,
        levels=_levels(levels, level),
        weights=weights,
        mechanism=mechanism,
        neighbours=neighbours,
        max_cells=int(max_cells),
        models=models,
        delta=target.delta if str(mechanism).strip().lower() == "gaussian" else 0.0,
        contributions=check_contributions(contributions),
        persons=persons,
    )
    params = {
        "marginals": [p["attributes"] for p in release.noise.parts],
        "epsilons": [p["epsilon"] for p in release.noise.parts],
        "mechanism": release.noise.mechanism.value,
        "levels": {a["name"]: a["level"] for a in release.axes},
        "neighbours": release.noise.neighbours.value,
        "models": [m.to_dict() for m in models],
    }
    release = release.with_provenance(Provenance(MARGINALS, params))
    return release


RR = "dp-rr"


@register(
    RR,
    algorithm_safe=True,
    summary="DP randomized response: each record's cell (or SA value) kept w.p. "
    "e^eps/(e^eps+k-1), else another uniformly; the count table of responses per public cell "
    "(paper 004)",
    models=("DifferentialPrivacy", "LabelDifferentialPrivacy"),
    schemes=(Scheme.DP,),
    randomized=True,
    seedable=False,
    perturbs_sa=True,
    options={
        "level": "the same as levels (either one)",
        "levels": "NAME:LEVEL,... hierarchy level of each QI and of the SA (default 0, the "
        "leaves); the level must come from a hierarchy file or be the root",
        "perturb": "cell (default: randomize the whole QI cell x SA value: DP under "
        "substitution, --model dp=EPS) | sa (randomize the SA value only, QI cell totals "
        "published exactly: DP only for a change of one sensitive value, --model label-dp=EPS)",
        "neighbours": "the notion of the perturb mode (default): substitution for cell, "
        "sensitive-value for sa (add-remove is refused: one response per record reveals n)",
        "max_cells": f"largest cell domain built (default {MAX_CELLS:,})",
    },
)
def dp_rr_algorithm(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    levels: str | dict[str, int] | None = None,
    level: str | None = None,
    perturb: str = "cell",
    neighbours: str | None = None,
    max_cells: int = MAX_CELLS,
) -> DPRelease:
    """Reads epsilon from ``dp=EPS`` or ``label-dp=EPS`` (randomized response is pure
    epsilon-DP: a delta is met with delta 0). ``dp=EPS`` asks DP under substitution, which
    ``perturb=sa`` does not meet: refused before any work, naming ``label-dp``. ``seed`` is
    refused: every bit comes from OpenDP's secure generator
    (:mod:`kerckhoffs.dp.randomized_response`)."""
    target = _target(models, seed, RR, (DifferentialPrivacy, LabelDifferentialPrivacy))
    mode = str(perturb).strip().lower()
    if isinstance(target, DifferentialPrivacy) and mode == "sa":
        raise ParameterError(
            f"{RR} with perturb=sa publishes every QI cell's total exactly: it is DP only for "
            f"a change of one record's sensitive value (label DP), not the dp="
            f"{format_number(target.epsilon)} asked (DP under substitution or add-remove); use "
            f"perturb=cell, or --model label-dp={format_number(target.epsilon)}"
        )
    release = dp_rr(
        table,
        target.epsilon,
        levels=_levels(levels, level),
        perturb=perturb,
        neighbours=neighbours,
        max_cells=int(max_cells),
        models=models,
    )
    part = release.noise.parts[0]
    params = {
        "perturb": part["perturb"],
        "categories": part["categories"],
        "keep_probability": part["keep_probability"],
        "levels": {a["name"]: a["level"] for a in release.axes},
        "neighbours": release.noise.neighbours.value,
        "models": [m.to_dict() for m in models],
    }
    release = release.with_provenance(Provenance(RR, params))
    return release


dp_target = _target
"""The DP target of an unseedable DP algorithm (``dp-synthetic`` reads its target so)."""
levels_option = _levels
"""``levels``, also accepted as ``level`` (shared with ``dp-synthetic``)."""
