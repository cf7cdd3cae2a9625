"""The providers' row lists of a published release (paper 003's collaborative setting).

Several data providers publish one table; m-privacy (paper 003, Definition 2.1) is about
what a coalition of them learns by removing its own rows from each published group, so
checking it needs to know which provider each published row came from. The release files
never say (publishing it would hand every reader the coalition's subtraction), so the
anonymizer can write it to a separate, private file: a CSV with a header and one line per
published row, ``row`` (its 0-based position in the release table, ``release.csv``) and
``provider`` (the provider's label). Any order of lines is accepted; every row must appear
exactly once. ``kerckhoffs check DIR --model m-privacy=M --providers FILE`` reads it.

Keep the file private: it is exactly what an insider coalition knows about its own rows, and
for the other providers' rows more than any of them knows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kerckhoffs.errors import input_error

COLUMNS = ("row", "provider")
"""The file's columns."""


def provider_rows_frame(providers: np.ndarray) -> pd.DataFrame:
    """The file's content for ``providers`` (one label per published row, in file order)."""
    return pd.DataFrame({"row": np.arange(len(providers)), "provider": providers})


def write_provider_rows(path: str | Path, providers: np.ndarray) -> None:
    """Write the providers' row lists (see the module docstring) to ``path`` as CSV."""
    provider_rows_frame(providers).to_csv(path, index=False)


def is_provider_rows_file(path: str | Path) -> bool:
    """Whether ``path`` starts with this format's header (what ``--overwrite`` may replace:
    never a file kerckhoffs did not write)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().strip() == ",".join(COLUMNS)
    except (OSError, UnicodeDecodeError):
        return False


def read_provider_rows(path: str | Path, n_rows: int) -> np.ndarray:
    """The provider label of each of a release's ``n_rows`` published rows, from the file at
    ``path``; a missing file, a missing column, a row number out of range, given twice or
    missing is a one-line :class:`~kerckhoffs.errors.InputError` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise input_error(f"{path}: no such providers file")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise input_error(f"{path}: not a providers CSV ({str(exc).splitlines()[0]})") from None
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise input_error(
            f"{path}: a providers file needs the columns row and provider (missing {missing[0]})"
        )
    rows = pd.to_numeric(df["row"], errors="coerce")
    bad = rows.isna() | (rows != rows.round()) | (rows < 0) | (rows >= n_rows)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise input_error(
            f"{path}: line {i + 2}: row {df['row'].iloc[i]!r} is not a row of the release "
            f"(0 to {n_rows - 1})"
        )
    r = rows.to_numpy().astype(np.int64)
    empty = df["provider"].astype(str).str.strip() == ""
    if empty.any():
        i = int(np.argmax(empty.to_numpy()))
        raise input_error(f"{path}: line {i + 2}: row {r[i]} has no provider")
    seen = np.bincount(r, minlength=n_rows)
    if (seen > 1).any():
        raise input_error(f"{path}: row {int(np.argmax(seen > 1))} is listed twice")
    if (seen == 0).any():
        raise input_error(
            f"{path}: row {int(np.argmax(seen == 0))} of the release has no provider "
            f"(the file lists {len(r):,} of {n_rows:,} rows)"
        )
    out = np.empty(n_rows, dtype=object)
    out[r] = df["provider"].to_numpy()
    return out


__all__ = [
    "COLUMNS",
    "is_provider_rows_file",
    "provider_rows_frame",
    "read_provider_rows",
    "write_provider_rows",
]
