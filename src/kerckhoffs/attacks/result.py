"""What every attack returns: a per-tuple table and a summary a non-expert can read.

An attack reports, for each tuple it says something about, the SA value the adversary infers,
the adversary's posterior for it, and whether that posterior breaches the promise of the
release's privacy model (``1/l``, ``1/m``, or a confidence the user gives); then a summary
(tuples compromised, maximum posterior, the bound) and a one-line verdict such as
``UNSAFE: 1,204 of 45,222 rows disclosed by hilb-order``.

A verdict is a claim, so SAFE is said only when the attack ran on all of its input. When it
could not place some targets, or could not use part of the knowledge it was given (a rule over
cells it cannot read), the verdict is INCOMPLETE and names what was left out: a clean SAFE
on part of the data would overstate what was tested.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.csv_cells import META_KEY, PREFIX, protect_formulas
from kerckhoffs.data.io import write_csv
from kerckhoffs.data.output import output_directory

TUPLE_COLUMNS = ("row", "sa_value", "posterior", "breached")


@dataclass
class AttackResult:
    """The outcome of one attack on one release (or set of releases).

    ``tuples`` has one row per tuple the attack considered, with at least the columns
    ``row`` (row index in the attacked table, int), ``sa_value`` (the SA value the adversary
    infers, as published text), ``posterior`` (the adversary's probability for that value,
    float in [0, 1]) and ``breached`` (bool: the posterior exceeds ``bound``, or the attack's
    own breach rule, e.g. a perfect breach of the intersection attack). An attack may add
    columns (``group``, ``release``, ``true_value`` ...). ``n_rows`` is the number of rows of
    the attacked population (the denominator of the verdict). ``bound`` is the posterior the
    release's model promises not to exceed (``None`` when it promises none). ``details``
    holds attack-specific figures (JSON-serialisable), e.g. the average credibility.

    ``not_located`` counts the rows of the population the attack could not place in the
    release (their published cells were not found, or could not be read): the verdict says so,
    since a clean SAFE or UNSAFE on part of the data would overstate what was tested.
    ``finding`` is a reason the release is unsafe that is not about particular rows (e.g. its
    metadata publishes the seed of a randomized algorithm); it makes the verdict UNSAFE.
    ``gaps`` says, one short phrase each, what else the attack could not use (e.g. "rule[0]
    not tested on 3 groups whose age cells could not be read"); with ``not_located`` they make
    a verdict without disclosure INCOMPLETE instead of SAFE.
    """

    attack: str
    tuples: pd.DataFrame
    n_rows: int
    bound: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    not_located: int = 0
    finding: str | None = None
    gaps: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    """What the verdict relies on besides the release's data and the knowledge, one phrase
    each (e.g. a check the release records, taken as true: an adversary who knows the
    metadata rules out the worlds it excludes); an audit's verdict line repeats them."""

    def __post_init__(self) -> None:
        missing = [c for c in TUPLE_COLUMNS if c not in self.tuples.columns]
        if missing:
            raise ValueError(f"attack {self.attack}: tuple table lacks columns {missing}")

    @property
    def compromised(self) -> int:
        """The number of distinct rows with at least one breached tuple."""
        t = self.tuples
        return int(t.loc[t["breached"].to_numpy(dtype=bool), "row"].nunique())

    @property
    def max_posterior(self) -> float:
        """The largest posterior over all tuples (0 when there are none)."""
        p = self.tuples["posterior"].to_numpy(dtype=float)
        return float(p.max()) if p.size else 0.0

    @property
    def disclosed(self) -> bool:
        """Some tuple breached, or a finding: the verdict is UNSAFE."""
        return self.compromised > 0 or self.finding is not None

    @property
    def complete(self) -> bool:
        """The attack placed every target and used all of its knowledge."""
        return not self.not_located and not self.gaps

    @property
    def safe(self) -> bool:
        """Nothing disclosed, and the attack ran on all of its input (the verdict is SAFE)."""
        return not self.disclosed and self.complete

    def summary(self) -> dict[str, Any]:
        """The headline figures, JSON-serialisable."""
        return {
            "attack": self.attack,
            "rows": int(self.n_rows),
            "tuples": len(self.tuples),
            "compromised": self.compromised,
            "max_posterior": self.max_posterior,
            "bound": self.bound,
            "not_located": int(self.not_located),
            "complete": self.complete,
            "gaps": list(self.gaps),
            "assumptions": list(self.assumptions),
            "finding": self.finding,
            **{k: _plain(v) for k, v in self.details.items()},
        }

    def verdict(self, *, claim: bool = True) -> str:
        """One line a non-expert can read, e.g. ``UNSAFE: 1,204 of 45,222 rows disclosed
        by hilb-order``, with what the attack could not cover (targets it could not locate,
        knowledge it could not use), if anything. ``claim=False`` drops the word SAFE from a
        safe result (one attack's line inside an audit, whose own verdict is the claim)."""
        return self._verdict(claim) + "".join(f"; {gap}" for gap in self.coverage())

    def coverage(self) -> list[str]:
        """What the attack could not cover, one phrase each (empty when it covered all)."""
        gaps = list(self.gaps)
        if self.not_located:
            where = self.details.get("not_located_in")
            tail = f" in {where}" if where else " (not attacked)"
            gaps.insert(0, f"{self.not_located:,} of {self.n_rows:,} targets not located{tail}")
        return gaps

    def _verdict(self, claim: bool = True) -> str:
        if self.finding is not None:
            rows = (
                f" ({self.compromised:,} of {self.n_rows:,} rows disclosed)"
                if self.compromised
                else ""
            )
            return f"UNSAFE by {self.attack}: {self.finding}{rows}"
        if not self.disclosed:
            top = self.max_posterior
            if not len(self.tuples) and "reason" in self.details:  # nothing to infer, and why
                extra = str(self.details["reason"])
            elif self.bound is None:
                extra = f"max posterior {top:.3g}"
            elif top <= self.bound + 1e-12:
                extra = f"max posterior {top:.3g} <= bound {self.bound:.3g}"
            else:  # e.g. a posterior for "one of several values", which the attack does not
                # count as disclosing any single value
                extra = (
                    f"max posterior {top:.3g} is above the bound {self.bound:.3g} but not for "
                    "a single value; see sa_value"
                )
            if not self.complete:  # never SAFE on part of the input
                scope = " for the targets it could place" if self.not_located else ""
                return f"INCOMPLETE: no row disclosed by {self.attack}{scope} ({extra})"
            return ("SAFE: " if claim else "") + f"no row disclosed by {self.attack} ({extra})"
        return f"UNSAFE: {self.compromised:,} of {self.n_rows:,} rows disclosed by {self.attack}"

    def to_pandas(self) -> pd.DataFrame:
        """What the adversary learns, one row per tuple considered (a copy of :attr:`tuples`:
        ``row``, ``sa_value``, ``posterior``, ``breached`` and the attack's own columns)."""
        return self.tuples.copy()

    def __repr__(self) -> str:
        return f"AttackResult({self.attack}: {self.verdict()})"

    def write(self, out: str | Path, overwrite: bool = False) -> Path:
        """Write ``tuples.csv`` and ``summary.json`` into directory ``out`` (atomically: on
        failure nothing is left behind; an existing ``out`` needs ``overwrite``). Text cells a
        spreadsheet would run as formulas get a leading ``'`` in the CSV, as in a release
        (:mod:`kerckhoffs.data.csv_cells`); ``summary.json`` says so."""
        with (
            output_directory(out, kind="attack", overwrite=overwrite) as claim,
            claim.staging() as tmp,
        ):
            # the SA values come from the release: a spreadsheet must not run one as a formula
            write_csv(protect_formulas(self.tuples), tmp / "tuples.csv")
            summary = self.summary() | {"verdict": self.verdict(), META_KEY: PREFIX}
            (tmp / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return Path(out)


def tuple_table(
    rows: np.ndarray,
    sa_value: np.ndarray | list[str],
    posterior: np.ndarray,
    breached: np.ndarray,
    **extra: np.ndarray | list[Any],
) -> pd.DataFrame:
    """Build an attack's tuple table from arrays (columns in the standard order)."""
    data: dict[str, Any] = {
        "row": np.asarray(rows, dtype=np.int64),
        "sa_value": np.asarray(sa_value, dtype=object),
        "posterior": np.asarray(posterior, dtype=float),
        "breached": np.asarray(breached, dtype=bool),
    }
    data.update({k: np.asarray(v) for k, v in extra.items()})
    return pd.DataFrame(data)


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v
