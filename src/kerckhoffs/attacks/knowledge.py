"""External knowledge as data, not code (issue 5 item 5; spec ``asap.md`` 1.5, ``minimality.md``
2.7, ``composition.md`` 2.7).

What an adversary brings besides the release:

* ``population``: the external table of quasi-identifiers (a voter list): one row per
  individual with the QI columns (original values) and an optional ``id`` column.
* ``not_having``: statements "individual ``id`` does not have SA value ``value``".
* ``rules``: SA distribution statements "among the people matching ``where``, at most
  ``share`` have ``value``" (paper 000 section 8.2.1: fewer than 10% of people aged <= 25 hold
  a Ph.D.).
* ``releases``: other releases of overlapping populations (directories written by
  :meth:`kerckhoffs.release.Release.write`), for composition attacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class NotHaving:
    """Individual ``id`` (population id, or row index when the population has no id column)
    does not have SA value ``value``."""

    id: Any
    value: str


@dataclass(frozen=True)
class DistributionRule:
    """At most ``share`` (a fraction in [0, 1]) of the people matching ``where`` have SA
    value ``value``. ``where`` maps a QI column name to a condition on it: a list of values
    (membership) or a pair ``[lo, hi]`` given as ``{"min": lo, "max": hi}`` (inclusive, numeric
    columns; either end may be absent)."""

    where: dict[str, Any]
    value: str
    share: float


@dataclass
class Knowledge:
    """Everything the adversary knows besides the attacked release."""

    population: pd.DataFrame | None = None
    not_having: list[NotHaving] = field(default_factory=list)
    rules: list[DistributionRule] = field(default_factory=list)
    releases: list[Path] = field(default_factory=list)
