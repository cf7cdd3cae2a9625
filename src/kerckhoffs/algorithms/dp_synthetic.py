"""``dp-synthetic``: DP synthetic microdata from OpenDP's MST or AIM contingency tables
(:mod:`kerckhoffs.dp.synthetic`; MST: McKenna, Miklau and Sheldon, Journal of Privacy and
Confidentiality 2021; AIM: McKenna et al., VLDB 2022), over the public domain the schema's
hierarchies give."""

from __future__ import annotations

import numpy as np

from kerckhoffs.algorithms.dp import dp_target, levels_option
from kerckhoffs.algorithms.registry import register
from kerckhoffs.data.table import Table
from kerckhoffs.dp.contributions import CONTRIBUTION_OPTIONS, bound_contributions
from kerckhoffs.dp.synthetic import dp_synthetic
from kerckhoffs.dp.synthetic_mbi import DEFAULT_ITERS
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Provenance, Scheme, SyntheticRelease

NAME = "dp-synthetic"


@register(
    NAME,
    algorithm_safe=True,
    summary="DP synthetic rows: a graphical model fitted to noisy marginals chosen by MST "
    "(or AIM), rounded to rows (OpenDP; every QI and the SA over public hierarchy nodes)",
    models=("DifferentialPrivacy",),
    schemes=(Scheme.SYNTHETIC,),
    randomized=True,
    seedable=False,
    options={
        "method": "mst (default) | aim (adaptive; much slower: not for Adult-size tables)",
        "level": "the same as levels (either one)",
        "levels": "NAME:LEVEL,... hierarchy level of each column (default: leaves, numeric "
        "columns at level 1 of their hierarchy file); the level must come from a hierarchy "
        "file or be the root",
        "neighbours": "substitution (default) | add-remove",
        **CONTRIBUTION_OPTIONS,
        "iters": f"mirror-descent iterations of the model fit (default {DEFAULT_ITERS})",
    },
)
def dp_synthetic_algorithm(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    method: str = "mst",
    levels: str | dict[str, int] | None = None,
    level: str | None = None,
    neighbours: str = "substitution",
    contributions: int | str = 1,
    persons: np.ndarray | None = None,
    iters: int = DEFAULT_ITERS,
) -> SyntheticRelease:
    """Reads ``(epsilon, delta)`` from ``dp=EPS[,DELTA]``: delta 0 gives pure epsilon-DP,
    delta > 0 zCDP converted to it. ``seed`` is refused (OpenDP's noise cannot be seeded);
    label-dp is refused (the release is DP under substitution or add-remove)."""
    target = dp_target(models, seed, NAME)
    # at most N rows per person (their first N), so OpenDP's map at N rows is per person
    table, rows = bound_contributions(table, persons, contributions)
    release = dp_synthetic(
        table,
        target.epsilon,
        delta=target.delta,
        method=method,
        levels=levels_option(levels, level),
        neighbours=neighbours,
        contributions=rows,
        iters=iters,
        models=models,
    )
    params = {
        "method": release.method,
        "levels": {a["name"]: a["level"] for a in release.axes},
        "neighbours": release.noise.neighbours.value,
        "contributions": release.contributions,
        "iters": release.iters,
        "models": [m.to_dict() for m in models],
    }
    return release.with_provenance(Provenance(NAME, params))
