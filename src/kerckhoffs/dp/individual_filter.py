"""Leaving people out of a DP computation without it showing: an individual privacy filter
(Feldman and Zrnic 2021, "Individual Privacy Accounting via a Rényi Filter", NeurIPS).

A budget refusal of the whole release tells whether an exhausted person is in the data (the
release appears without them, not with them). An individual filter instead drops each
person whose total would exceed the budget from *this* computation, a decision that depends
only on that person's own history and rows, so the release is as DP for everyone else as
before and says nothing about the people dropped, whose loss in it is 0 (Feldman and
Zrnic, Section 3: the filter stops each individual, not the analysis).

How a person is left out depends on the release's neighbour notion:

* **add-remove** (the number of rows is private): their rows are removed (:func:`without_rows`).
  The output is then the mechanism run on a neighbouring table, whatever their rows held.
* **substitution** (the number of rows is public, and a release may publish it): removing
  rows would change it. Each of their rows is replaced by a record drawn at random from the
  public domain (:func:`with_public_records`), independently of anyone's data, every draw
  from OpenDP's secure generator: the number of rows is kept and the replaced row says
  nothing of its person. For the others, the release is a mixture, over the random records,
  of releases that are each DP for them, hence DP for them.

The public domain of a column is its hierarchy's leaves when the schema gives a hierarchy
file; a column without one has no public level but its root (a DP count table puts all of
its values into one cell, :func:`kerckhoffs.dp.counts.cell_domain`), so its replaced code is
a fixed one, which no DP release can tell from another.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import EncodedColumn, Table, encode_column, sensitive_flags
from kerckhoffs.dp.contributions import without_rows
from kerckhoffs.dp.randomized_response import uniform_below


def with_public_records(table: Table, replace: np.ndarray) -> Table:
    """``table`` with each row where ``replace`` is true replaced by a record drawn at random
    from the public domain (module docstring): every column's value uniform over its
    hierarchy file's leaves, independently, drawn by OpenDP; a fixed code for a column with
    no hierarchy file; provider code 0 and no other-column values."""
    rows = np.flatnonzero(np.asarray(replace, dtype=bool))
    if rows.size == 0:
        return table
    row_ids = table.row_ids if table.row_ids is not None else np.arange(table.n, dtype=np.int64)
    qi = np.array(table.qi, order="F", copy=True)
    qi_columns = list(table.qi_columns)
    for j, enc in enumerate(table.qi_columns):
        codes, qi_columns[j] = _public_codes(table, enc, qi[:, j].copy(), rows, row_ids)
        qi[:, j] = codes
    sa, sa_column = _public_codes(table, table.sa_column, table.sa.copy(), rows, row_ids)
    sensitive = (
        table.sensitive
        if sa_column is table.sa_column
        else sensitive_flags(table.schema, sa_column)
    )
    provider = None
    if table.provider is not None:
        provider = table.provider.copy()
        provider[rows] = 0
    other = None
    if table.other is not None:
        other = table.other.copy()
        other.iloc[rows] = pd.NA
    return dataclasses.replace(
        table,
        qi=qi,
        sa=sa.astype(np.int32, copy=False),
        qi_columns=tuple(qi_columns),
        sa_column=sa_column,
        sensitive=sensitive,
        provider=provider,
        other=other,
        notes=list(table.notes),
    )


def _public_codes(
    table: Table, enc: EncodedColumn, codes: np.ndarray, rows: np.ndarray, row_ids: np.ndarray
) -> tuple[np.ndarray, EncodedColumn]:
    """The column's codes with ``rows`` replaced by public random values, and its (possibly
    re-encoded) domain."""
    column = table.schema.column(enc.name)
    if column.hierarchy is None or enc.hierarchy is None:
        codes[rows] = 0  # only the root is public: every value falls in the same cell
        return codes, enc
    leaves = np.asarray(enc.hierarchy.leaves)
    if enc.kind == Kind.CATEGORICAL and enc.leaf_of_code is None:
        codes[rows] = uniform_below(len(leaves), rows.size)  # its codes are the leaves
        return codes, enc
    # a numeric column with a hierarchy file: its codes are the ranks of the values present,
    # so a leaf no row holds has none; encode the column again with the drawn leaves' values.
    # The leaves drawn from: those a number stands for (a function of the hierarchy only)
    parsed = pd.to_numeric(pd.Series(leaves), errors="coerce")
    usable = np.array(  # a loop over the hierarchy's leaves, not rows
        [
            not pd.isna(v) and format_value(v) == str(leaf)
            for v, leaf in zip(parsed, leaves, strict=True)
        ]
    )
    if not usable.any():
        codes[rows] = 0
        return codes, enc
    candidates = parsed[usable].to_numpy()
    drawn = candidates[uniform_below(candidates.size, rows.size)]
    values = pd.Series(enc.values[codes])
    values = values.astype(np.result_type(values.dtype, drawn.dtype))
    values.iloc[rows] = drawn
    new_codes, new_enc = encode_column(column, values, table.schema, row_ids)
    return new_codes, new_enc


__all__ = ["with_public_records", "without_rows"]
