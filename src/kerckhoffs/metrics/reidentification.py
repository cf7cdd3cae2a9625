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

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Release, Scheme
from kerckhoffs.release.risk import (
    DEFAULT_THRESHOLD,
    ReidentificationRisk,
    group_risks,
    risk_from_sizes,
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
