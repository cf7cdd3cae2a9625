"""Reading a release another tool published: one table file, and the schema saying which
columns are quasi-identifiers, which is sensitive and which counts individuals.

Why a module of its own: other tools do not all publish one line per individual. anonypyx
(and AnonyPy before it) publish one line per equivalence class and sensitive value, with a
``count`` column saying how many individuals the line stands for::

    age,race,disease,count
    19-33,"Black,White",flu,2
    19-33,"Black,White",cancer,1

Read one individual per line, that class holds 2 rows instead of 3, and a class whose
individuals share one sensitive value looks like a class of one: k = 1, silently. The
schema names such a column with role ``count`` (:class:`~kerckhoffs.data.schema.Role`), and
:func:`read_external` repeats each line that many times, so every check and attack sees one
row per individual. A column literally named ``count`` that the schema does not mention is
refused rather than guessed: reading it either way without being told could be wrong.

The published cells themselves (``19-33``, ``Black,White``) are read where they are used, by
:mod:`kerckhoffs.attacks.locate`; here the quasi-identifier columns are only kept as text, so
that a cell such as zip ``02139`` keeps its leading zero.

Example::

    >>> from kerckhoffs.data.schema import Schema
    >>> schema = Schema.from_dict({"columns": {
    ...     "age": {"role": "quasi"}, "race": {"role": "quasi"},
    ...     "disease": {"role": "sensitive"}, "count": {"role": "count"}}})
    >>> df, meta = read_external(Path("anonypyx_release.csv"), schema)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.io import read_table
from kerckhoffs.data.schema import Kind, Schema
from kerckhoffs.errors import InputError

COUNT_NAMES = frozenset({"count"})
"""Column names (compared case-insensitively) that must be declared in the schema when
present: they usually count individuals (anonypyx, AnonyPy)."""
MAX_ROWS = np.iinfo(np.int32).max
"""The most individuals a table with a count column may expand to (row ids beyond this do
not fit the partition's group ids; far beyond what one machine holds anyway)."""
SCHEME = "generalization"
"""The scheme of a single published table (``Scheme.GENERALIZATION`` of
:mod:`kerckhoffs.release`, which imports this module)."""


def read_external(
    path: Path, schema: Schema, sep: str | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read another tool's published table into one row per individual and the metadata
    :meth:`Release.from_frames <kerckhoffs.release.Release.from_frames>` needs.

    ``path`` is a CSV (delimiter ``sep``, sniffed when None) or Parquet file; ``schema``
    names the quasi-identifiers, the sensitive column and, optionally, a ``count`` column,
    whose lines are repeated that many times (:func:`expand_counts`) and which is then
    dropped. The quasi-identifier columns are read as text (published cells are strings);
    only empty cells and the schema's ``na_values`` are missing.
    Raises :class:`~kerckhoffs.errors.InputError` (one line naming the file) for an unreadable
    file, a bad count, or an undeclared column named ``count``.
    """
    path = Path(path)
    names = [c.name for c in schema.quasi]
    df = read_table(path, sep=sep, text_columns=names, na_values=schema.na_values)
    count = schema.count
    if count is not None:
        df = expand_counts(df, count.name, str(path))
    else:
        declared = {c.name for c in schema.columns}
        guess = [c for c in df.columns if c.lower() in COUNT_NAMES and c not in declared]
        if guess:
            raise InputError(
                f"{path}: column {guess[0]!r} may say how many individuals each line stands "
                f'for; declare it in the schema: role = "count" to count them, or role = '
                '"other" to read one individual per line'
            )
    sensitive = schema.sensitive
    meta: dict[str, Any] = {
        "scheme": SCHEME,
        "quasi": [{"name": c.name, "kind": Kind.CATEGORICAL.value} for c in schema.quasi],
        "sensitive": {
            "name": sensitive.name,
            "kind": (sensitive.kind or Kind.CATEGORICAL).value,
        },
        "sensitive_values": sorted(schema.sensitive_values)
        if schema.sensitive_values is not None
        else None,
        "sensitive_mode": schema.sensitive_mode.value,
        "provenance": {"algorithm": f"external ({path.name})"},
    }
    return df, meta


def expand_counts(df: pd.DataFrame, column: str, source: str) -> pd.DataFrame:
    """``df`` with line ``i`` repeated ``df[column][i]`` times and ``column`` dropped (one
    ``np.repeat`` of the line indices).

    Every count must be a positive integer (``2`` or ``2.0``); otherwise, or when the column
    is missing, an :class:`~kerckhoffs.errors.InputError` names ``source``, the column and the
    first bad data row (1-based, the header not counted).
    """
    if column not in df.columns:
        raise InputError(f"{source}: the count column {column!r} named in the schema is missing")
    raw = df[column]
    if pd.api.types.is_bool_dtype(raw):
        raise InputError(f"{source}: column {column!r} holds booleans, not counts")
    num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(num) | (num < 1) | (num != np.floor(num))
    if bad.any():
        row = int(np.argmax(bad))
        value = raw.iloc[row]
        value = value.item() if isinstance(value, np.generic) else value
        shown = "is missing" if pd.isna(value) else f"{value!r} is not a positive integer"
        raise InputError(f"{source}: column {column!r}, data row {row + 1}: count {shown}")
    total = float(num.sum())
    if total > MAX_ROWS:
        raise InputError(
            f"{source}: column {column!r} counts {total:,.0f} individuals, more than "
            f"{MAX_ROWS:,} (is it a count?)"
        )
    lines = np.repeat(np.arange(len(df)), num.astype(np.int64))
    return df.drop(columns=column).iloc[lines].reset_index(drop=True)


__all__ = ["COUNT_NAMES", "MAX_ROWS", "expand_counts", "read_external"]
