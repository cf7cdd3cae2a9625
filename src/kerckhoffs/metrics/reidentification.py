"""Re-identification risk of a release under the prosecutor, journalist and marketer models.

These are the record-linkage risks statistics offices and ARX report (K. El Emam,
*Guide to the De-Identification of Personal Health Information*, CRC Press 2013, ch. 17-18;
F. Dankar and K. El Emam, "A method for evaluating marketer re-identification risk",
EDBT/ICDT Workshops 2010). An adversary links a person they know to the release through the
quasi-identifiers; the chance of picking the right record is one over the number of records
the person could be. With ``f_j`` the size of released group ``j`` (the records published
with the same QI cells), ``n = sum f_j`` and, when a *population* is given, ``F_j`` the number
of population records whose QI values the group's published cells cover:

- **prosecutor** (the adversary knows the person is in the release): a record's risk is
  ``1 / f_j``. *Highest* ``1 / min f_j``; *average* (the expected share of records an
  adversary re-identifies when trying every one) ``groups / n``; *at risk* the share of
  records whose risk is above the threshold; *sample uniques* the share in groups of one.
- **journalist** (the adversary does not know who is in the release and links from a larger
  population): a record's risk is ``1 / F_j``. *Highest* ``1 / min F_j``; *at risk* as above
  with ``F_j``; *average* ``max(groups / sum F_j, sum (f_j / F_j) / n)``, the two estimators
  ARX takes the larger of; *population uniques* the share of records whose group covers one
  population record.
- **marketer** (the adversary re-identifies as many records as possible, no one in
  particular): ``sum (f_j / F_j) / n``; without a population ``F_j = f_j`` and it is
  ``groups / n``.

These are ARX's definitions as its risk summary computes them (class RiskModelSampleSummary
of ARX 3.x, read for the formulas only), with one difference in what counts as a population
class: ARX generalizes the population with the release's transformation and counts equal
tuples; we count the population records each group's *published cells* cover, which is the
same number for global recoding and also defined for Mondrian's multi-dimensional cells and
for local recoding, where one population record may be covered by several groups (it then
counts in each ``F_j``, as each group's adversary sees it). A population that does not
contain a released person (``F_j < f_j``) is not a population of the release: refused.

Differentially private count tables and synthetic rows publish no group of real records, so
none of these risks is defined on them (their guarantee is their epsilon).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.release import Release, Scheme

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


def population_counts(
    release: Release, population: pd.DataFrame, schema: Schema | None = None
) -> np.ndarray:
    """``F_j``: how many population records each group's published cells cover (the
    locator by region, :func:`kerckhoffs.attacks.locate.locate`, which reads each column's
    kind and hierarchy from ``schema`` when given, else from the release)."""
    from kerckhoffs.attacks.locate import locate

    where = locate(release, population, schema)
    return np.bincount(where.candidates, minlength=release.partition.n_groups)


def reidentification_risk(
    release: Release,
    population: pd.DataFrame | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    schema: Schema | None = None,
) -> ReidentificationRisk:
    """The prosecutor, marketer and (with ``population``) journalist risks of ``release``.

        ``population``: a table holding every released person among others (original QI values,
        by column name), e.g. the register the sample was drawn from. ``threshold``: a record is
        *at risk* when its risk is above it (ARX's default 0.2). ``schema``: the columns' kinds and
    hierarchies, for a release read back from files whose cells are hierarchy labels.

    The groups are the release's own (the ones its privacy models are checked on). Where two
    groups' cells overlap (Mondrian's median cuts of a categorical QI, local recoding), a
    prosecutor who knows the target is in the release may still hesitate between the covering
    groups' records, so ``1 / f_j`` is an upper bound of that adversary's chance there.

        >>> import kerckhoffs as kh
        >>> from kerckhoffs.datasets import generate_hospital
        >>> df = generate_hospital(600, seed=0)
        >>> rel = kh.anonymize(df, quasi=["age", "zip"], sensitive="disease",
        ...                    algorithm="mondrian", models=["k=5"])
        >>> reidentification_risk(rel).prosecutor_highest <= 0.2
        True
    """
    if release.scheme in (Scheme.DP, Scheme.SYNTHETIC):
        raise ParameterError(
            "re-identification risk: a differentially private release publishes no group of "
            "real records, so prosecutor, journalist and marketer risk are not defined on it "
            "(its guarantee is its epsilon)"
        )
    sizes = release.partition.sizes
    if population is None:
        return risk_from_sizes(sizes, threshold=threshold)
    if not isinstance(population, pd.DataFrame):
        raise ParameterError("the population must be a pandas DataFrame of QI values")
    counts = population_counts(release, population, schema)
    return risk_from_sizes(sizes, counts, threshold=threshold, population_rows=len(population))


__all__ = [
    "DEFAULT_THRESHOLD",
    "ReidentificationRisk",
    "group_risks",
    "population_counts",
    "reidentification_risk",
    "risk_from_sizes",
]
