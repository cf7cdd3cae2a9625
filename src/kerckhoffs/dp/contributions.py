"""Contribution bounding: at most ``N`` rows per person, so that a DP release's privacy map
is computed for a whole person rather than one row.

A person may have several rows (several visits, several jobs). A count table made DP for one
row protects such a person only by *group privacy* after the fact: ``k`` rows cost ``k``
times the epsilon (Dwork and Roth, "The Algorithmic Foundations of Differential Privacy",
2014, Thm. 2.2), and nobody knows ``k`` in advance. Bounding the contributions instead
(Wilson et al., "Differentially Private SQL with Bounded User Contribution", PoPETs 2020;
Tumult Analytics' ``MaxRowsPerID``) keeps at most ``N`` rows of each person and computes the
map at ``d_in = N`` rows: one person then moves at most ``N`` units of each count table
(``2N`` in L1 under substitution, ``N`` under add/remove; ``N·sqrt 2`` and ``N`` in L2), and the
release's epsilon is per person.

**The rule.** Each person keeps their first ``N`` rows in input order. Which of a person's
rows are kept is a function of that person's rows alone, so a neighbour (one person's rows
changed) changes only that person's kept rows, and the bound holds. The rows left out are
never counted, printed or published: their number would tell how many people have more than
``N`` rows. People are named by the schema's identifier column (role ``identifier``): without
one, ``N > 1`` is refused (nothing says which rows are one person's), and ``N = 1`` is the
usual one-row-per-person release.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.dp.mechanisms import check_contributions
from kerckhoffs.errors import ParameterError

CONTRIBUTION_OPTIONS = {
    "contributions": "N: keep at most N rows per person and make the release DP for a whole "
    "person's rows (default 1; N > 1 needs the identifier column: anonymize --ledger)",
    "persons": "each row's person (set by --ledger / kh.publish from the identifier column)",
}
"""The options of an algorithm that bounds each person's rows: :func:`kerckhoffs.publish`
passes ``persons`` (each table row's id, from the ledger's identifier column) to every
algorithm that declares it."""


def first_rows(persons: np.ndarray, bound: int) -> np.ndarray:
    """For each row, whether it is among its person's first ``bound`` rows (input order).

    One stable sort of the persons' codes: a row's rank within its person is its position in
    the sorted order minus where its person starts.

    >>> first_rows(np.array(["a", "b", "a", "a", "b"]), 2).tolist()
    [True, True, True, False, True]
    """
    ids = np.asarray(persons, dtype=object)
    if ids.size == 0:
        return np.zeros(0, dtype=bool)
    codes, _ = pd.factorize(ids)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sizes = np.diff(np.r_[starts, ids.size])
    rank = np.arange(ids.size) - np.repeat(starts, sizes)
    keep = np.empty(ids.size, dtype=bool)
    keep[order] = rank < bound
    return keep


def bound_contributions(
    table: Table, persons: np.ndarray | None, contributions: Any = 1
) -> tuple[Table, int]:
    """The table with at most ``contributions`` rows per person (``persons``: the person of
    each table row, from the identifier column), and that bound as an int, the ``d_in`` in
    rows the privacy map is to be computed at (module docstring).

    ``contributions`` 1 without ``persons`` returns the table as it is: one row, one person.
    ``N > 1`` without ``persons`` is a one-line ParameterError. A ``persons`` array of the
    wrong length, or with a missing id, is one too."""
    bound = check_contributions(contributions)
    if persons is None:
        if bound > 1:
            raise ParameterError(
                f"contributions={bound} needs each row's person: an identifier column and "
                "--ledger (kh.publish; persons= in Python)"
            )
        return table, 1
    ids = pd.Series(np.asarray(persons, dtype=object))
    if len(ids) != table.n:
        raise ParameterError(f"persons: {len(ids):,} ids given for a table of {table.n:,} rows")
    if ids.isna().any():
        first = int(np.argmax(ids.isna().to_numpy())) + 1
        raise ParameterError(f"persons: row {first} has no identifier")
    keep = first_rows(ids.astype(str).to_numpy(dtype=object), bound)
    if keep.all():
        return table, bound
    return without_rows(table, ~keep), bound


def without_rows(table: Table, drop: np.ndarray) -> Table:
    """``table`` without the rows where ``drop`` is true (same code domains)."""
    keep = np.flatnonzero(~np.asarray(drop, dtype=bool))
    return dataclasses.replace(
        table,
        qi=np.asfortranarray(table.qi[keep]),
        sa=table.sa[keep],
        provider=None if table.provider is None else table.provider[keep],
        row_ids=None if table.row_ids is None else table.row_ids[keep],
        index=None if table.index is None else table.index[keep],
        other=None if table.other is None else table.other.iloc[keep].reset_index(drop=True),
        notes=list(table.notes),
    )


def selection_per_person(choice: dict[str, Any], contributions: int) -> dict[str, Any]:
    """The record of a pure-DP step run at ``epsilon / N`` per row (the private choice of
    levels) restated per person of ``N`` rows: by group privacy its map at ``N`` rows is ``N``
    times its map at one (Dwork and Roth 2014, Thm. 2.2)."""
    if contributions == 1:
        return choice
    return choice | {
        "privacy_map": float(np.nextafter(float(choice["privacy_map"]) * contributions, np.inf)),
        "epsilon": float(choice["epsilon"]) * contributions,
        "contributions": contributions,
    }


__all__ = [
    "CONTRIBUTION_OPTIONS",
    "bound_contributions",
    "first_rows",
    "selection_per_person",
    "without_rows",
]
