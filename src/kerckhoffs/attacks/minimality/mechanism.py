"""Attacks by mechanism (paper 001 section 5.2;
``docs/theory/minimality.md#attack-by-mechanism``).

The minimality attack only uses *one* property of the anonymizer. An adversary who knows the
whole algorithm does better: among all original tables consistent with the release, keep those
that the algorithm would have turned into exactly this release, each equally likely, and read
the posteriors off the survivors. The paper's instances:

- **full-domain generalization** (Incognito-like; the project's ``lattice``): every lattice node
  cheaper than the published one must violate the requirement (Tables XVI-XVIII: the Male
  individual has HIV, although the pure minimality attack finds no breach there);
- **Mondrian** (kd-tree median cuts): every cut the heuristic would have tried before the one it
  took must have been non-allowable (Table XIX: both age-36 individuals have HIV);
- any other deterministic algorithm, e.g. a toy of Zhang et al.'s (Table XX), passed as a
  function with the algorithm signature.

This is exact and exponential: it enumerates the candidate tables of the *naive world* (every
arrangement of each published group's SA multiset over its rows, or of the whole frame when the
rows' groups are not known) and re-runs the algorithm on each. The enumeration and the re-runs
are the random-worlds auditor's (:func:`kerckhoffs.audits.random_worlds.random_worlds`);
this module turns its smart-world posteriors into credibilities of the sensitive sets and an
:class:`~kerckhoffs.attacks.result.AttackResult`. Small tables only (about 10 rows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kerckhoffs.attacks.minimality.attack import credibility_sets
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.audits.random_worlds import diversity_bound, random_worlds
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Release

__all__ = ["mechanism_attack"]

NAME = "mechanism"
EPS = 1e-12


def mechanism_attack(
    release: Release,
    algorithm: str | Callable[..., Release],
    models: list[PrivacyModel],
    *,
    options: dict[str, Any] | None = None,
    m: float | None = None,
    support: str = "groups",
    max_worlds: int = 100_000,
) -> AttackResult:
    """Attack ``release`` knowing the ``algorithm`` (a registered name or a function ``(table,
    models, *, seed, **options) -> Release``) and the ``models`` it was run with.

    Every candidate SA column consistent with the release (``support``: ``"groups"`` or
    ``"frame"``, see :func:`~kerckhoffs.audits.random_worlds.naive_worlds`) is run through the
    algorithm; the candidates that reproduce the release are equally likely. Each row gets the
    credibility of the sensitive set it is most credibly linked to (the schema's subset as one
    set in ``set`` mode, else each sensitive value), ``breached`` above ``1/m`` (``m``: default
    the models' l or m). ``details`` gives the naive and smart world counts and the largest
    posterior without the mechanism (``naive_max``).
    """
    table = release.table
    audit = random_worlds(
        algorithm,
        table,
        models,
        options=options,
        release=release,
        support=support,
        max_worlds=max_worlds,
    )
    if audit.smart_count == 0:
        raise ParameterError(
            "mechanism: no candidate table reproduces the release (wrong algorithm, models or "
            "options?)"
        )
    if m is None:
        m = diversity_bound(models)
    bound = 1.0 / m if m else None
    sets = credibility_sets(table, np.asarray(release.sa_published))
    n = table.n
    smart = np.zeros((max(len(sets), 1), n))
    naive = np.zeros((max(len(sets), 1), n))
    for si, (_, mask) in enumerate(sets):
        for r in range(n):
            smart[si, r] = float(sum(q for v, q in audit.smart[r].items() if mask[v]))
            naive[si, r] = float(sum(q for v, q in audit.naive[r].items() if mask[v]))
    best = np.argmax(smart, axis=0)
    cols = np.arange(n)
    posterior = smart[best, cols]
    labels = np.array([lab for lab, _ in sets] or [""], dtype=object)[best]
    breached = posterior > bound + EPS if bound is not None else np.zeros(n, dtype=bool)
    tuples = tuple_table(
        cols,
        labels,
        posterior,
        breached,
        naive=naive[best, cols],
        group=release.partition.group,
    )
    details = {
        "algorithm": algorithm
        if isinstance(algorithm, str)
        else getattr(algorithm, "__name__", "?"),
        "naive_worlds": audit.naive_count,
        "smart_worlds": audit.smart_count,
        "asap": audit.asap,
        "naive_max": float(naive.max()) if naive.size else 0.0,
        "runs": audit.runs,
    }
    return AttackResult(NAME, tuples, n, bound, details)
