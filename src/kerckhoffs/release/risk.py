"""The prosecutor, journalist and marketer re-identification risks of a release's groups,
from their sizes (and, when a population is given, the population records each group covers):
the formulas of :mod:`kerckhoffs.metrics.reidentification`, whose docstring defines them (K. El
Emam, *Guide to the De-Identification of Personal Health Information*, CRC Press 2013, ch.
17-18). Here, beside the release, because they need numpy only: ``kerckhoffs check`` of a
release prints them without loading pandas."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from kerckhoffs.errors import InputError, ParameterError

DEFAULT_THRESHOLD = 0.2
"""ARX's default acceptable highest risk of a single record (its risk analysis uses 0.2: one
in five, the threshold El Emam's guide suggests for releases to the public)."""


@dataclass(frozen=True)
class ReidentificationRisk:
    """The prosecutor, journalist and marketer risks of one release (shares in [0, 1]).

    The journalist fields and ``population_uniques`` are ``None`` without a population;
    ``population_rows`` is the population's size then given.
    """

    threshold: float
    prosecutor_highest: float
    prosecutor_average: float
    prosecutor_at_risk: float
    sample_uniques: float
    marketer: float
    journalist_highest: float | None = None
    journalist_average: float | None = None
    journalist_at_risk: float | None = None
    population_uniques: float | None = None
    population_rows: int | None = None

    def to_dict(self) -> dict[str, float | int | None]:
        """The risks as a plain dict."""
        return dataclasses.asdict(self)


def group_risks(sizes: np.ndarray) -> np.ndarray:
    """Each group's prosecutor risk ``1 / f_j`` (for a plot of the risk distribution: weight
    each group by its size to count records)."""
    return 1.0 / np.asarray(sizes, dtype=np.float64)


def risk_from_sizes(
    sizes: np.ndarray,
    population_sizes: np.ndarray | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    population_rows: int | None = None,
) -> ReidentificationRisk:
    """The risks from the released groups' sizes ``f`` and, when given, the population
    counts ``F`` of the same groups (see the module docstring for each formula)."""
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"the risk threshold must be within [0, 1], got {threshold}")
    f = np.asarray(sizes, dtype=np.float64)
    if f.size == 0 or np.any(f < 1):
        raise ParameterError("re-identification risk needs at least one group of records")
    n = float(f.sum())
    prosecutor = 1.0 / f
    base = ReidentificationRisk(
        threshold=float(threshold),
        prosecutor_highest=float(prosecutor.max()),
        prosecutor_average=f.size / n,
        prosecutor_at_risk=float(f[prosecutor > threshold].sum()) / n,
        sample_uniques=float(f[f == 1].sum()) / n,
        marketer=f.size / n,
    )
    if population_sizes is None:
        return base
    big_f = np.asarray(population_sizes, dtype=np.float64)
    if big_f.shape != f.shape:
        raise ParameterError("one population count per released group is needed")
    short = np.flatnonzero(big_f < f)
    if short.size:
        j = int(short[0])
        raise InputError(
            f"the population is not a population of this release: group {j} holds "
            f"{int(f[j])} record(s) but its cells cover only {int(big_f[j])} population "
            "record(s) (give a table that contains every released person, and the schema whose "
            "hierarchies label the release's cells)"
        )
    journalist = 1.0 / big_f
    marketer = float((f / big_f).sum()) / n
    return dataclasses.replace(
        base,
        marketer=marketer,
        journalist_highest=float(journalist.max()),
        journalist_average=max(f.size / float(big_f.sum()), marketer),
        journalist_at_risk=float(f[journalist > threshold].sum()) / n,
        population_uniques=float(f[big_f == 1].sum()) / n,
        population_rows=population_rows,
    )


__all__ = ["DEFAULT_THRESHOLD", "ReidentificationRisk", "group_risks", "risk_from_sizes"]
