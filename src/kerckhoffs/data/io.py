"""Reading tables from CSV and Parquet, and writing files so no partial output is left.

Reading detects the delimiter from the header line (``,``, ``;``, tab or ``|``) unless one is
given, and turns the usual failures (missing file, empty file, wrong delimiter, ragged rows)
into one-line :class:`~kerckhoffs.errors.InputError` messages.
"""

from __future__ import annotations

import contextlib
import csv
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from kerckhoffs.errors import InputError, input_error

DELIMITERS = (",", ";", "\t", "|")


def sniff_delimiter(header: str) -> str:
    """The delimiter that occurs most often in the header line (``,`` when none occurs)."""
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] > 0 else ","


def read_table(
    path: str | Path,
    sep: str | None = None,
    text_columns: Iterable[str] = (),
    na_values: Iterable[str] = (),
) -> pd.DataFrame:
    """Read a CSV (with a header) or Parquet file into a DataFrame.

    ``sep=None`` sniffs the delimiter. ``text_columns`` are read as text, so codes such as
    zip ``02134`` keep their leading zeros. A file whose header splits into a single column while
    it contains another delimiter is reported as a delimiter mismatch. Only empty cells (and
    the texts in ``na_values``) are missing: ``NA``, ``null`` and pandas' other default
    missing markers are values. A header that names a column twice is refused (pandas would
    silently rename the second one ``NAME.1``).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a data file")
    if path.suffix.lower() in {".parquet", ".pq"}:
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types
            raise InputError(f"{path}: cannot read Parquet ({exc})") from None
        _unique_names(path, [str(c) for c in df.columns])
        return df
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = fh.readline().rstrip("\r\n")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text (is it a CSV file?)") from None
    if not header.strip():
        raise InputError(f"{path}: file is empty (no header line)")
    used = sep or sniff_delimiter(header)
    if used not in header:
        others = [d for d in DELIMITERS if d != used and d in header]
        if others:
            raise input_error(
                f"{path}: the header has no {used!r} delimiter but contains {others[0]!r}; "
                f"use --sep {others[0]!r}"
            )
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            names = next(csv.reader([fh.readline()], delimiter=used))
        _unique_names(path, [n.strip() for n in names])
        wanted = {c.strip() for c in text_columns}
        dtype = {name: str for name in names if name.strip() in wanted}
        df = pd.read_csv(
            path,
            sep=used,
            encoding="utf-8-sig",
            skipinitialspace=True,
            dtype=dtype or None,
            keep_default_na=False,
            na_values=["", *na_values],
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: file is empty") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"{path}: malformed CSV ({str(exc).strip().splitlines()[-1]})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start} of a read block)") from None
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _unique_names(path: Path, names: list[str]) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise InputError(
                f"{path}: column {name!r} appears twice in the header (columns {seen[name] + 1} "
                f"and {i + 1}); rename one"
            )
        seen[name] = i


@contextlib.contextmanager
def atomic_file(target: str | Path) -> Iterator[Path]:
    """Yield a temporary file path that is renamed to ``target`` only if the block succeeds.

    The file gets the mode the user's umask gives (``mkstemp`` alone makes it 0600); on any
    failure, the rename included, the temporary file is removed.
    """
    from kerckhoffs.data.output import apply_umask

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        apply_umask(tmp, directory=False)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
