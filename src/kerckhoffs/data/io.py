"""Reading tables from CSV and Parquet, and writing files so no partial output is left.

Reading detects the delimiter from the header line (``,``, ``;``, tab or ``|``) unless one is
given, and turns the usual failures (missing file, empty file, wrong delimiter, ragged rows)
into one-line :class:`~kerckhoffs.errors.InputError` messages.

Writing (:func:`write_csv`) renders a DataFrame through pyarrow into exactly the bytes pandas'
``to_csv(index=False)`` writes (issue 15: pandas' writer was a quarter of a 1M-row
``anonymize``; pyarrow's is about 15x faster), so releases keep their bytes and digests.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from kerckhoffs.errors import InputError, input_error

if TYPE_CHECKING:
    import pyarrow as pa

DELIMITERS = (",", ";", "\t", "|")


def sniff_delimiter(header: str) -> str:
    """The delimiter that occurs most often in the header line (``,`` when none occurs)."""
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] > 0 else ","


def read_columns(path: str | Path, sep: str | None = None) -> list[str]:
    """The column names of a CSV (its header line, names stripped) or Parquet file, with the
    same one-line errors as :func:`read_table` for a file that cannot be a table."""
    path = _existing(path)
    if _is_parquet(path):
        import pyarrow.parquet as pq

        try:
            return [str(n) for n in pq.read_schema(path).names]
        except Exception as exc:  # pyarrow raises many types
            raise InputError(f"{path}: cannot read Parquet ({exc})") from None
    return [n.strip() for n in _header(path, _delimiter(path, sep))]


def _header(path: Path, used: str) -> list[str]:
    """The header line's names as written (a name given twice, spaces aside, is refused)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        names = next(csv.reader([fh.readline()], delimiter=used))
    _unique_names(path, [n.strip() for n in names])
    return names


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a data file")
    return path


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in {".parquet", ".pq"}


def _delimiter(path: Path, sep: str | None) -> str:
    """The delimiter to read ``path`` with (``sep``, or sniffed from the header line)."""
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
    return used


def read_table(
    path: str | Path,
    sep: str | None = None,
    text_columns: Iterable[str] = (),
    na_values: Iterable[str] = (),
    columns: Iterable[str] | None = None,
    category_columns: Iterable[str] = (),
) -> pd.DataFrame:
    """Read a CSV (with a header) or Parquet file into a DataFrame.

    ``sep=None`` sniffs the delimiter. ``text_columns`` are read as text, so codes such as
    zip ``02134`` keep their leading zeros. A file whose header splits into a single column while
    it contains another delimiter is reported as a delimiter mismatch. Only empty cells (and
    the texts in ``na_values``) are missing: ``NA``, ``null`` and pandas' other default
    missing markers are values. A header that names a column twice is refused (pandas would
    silently rename the second one ``NAME.1``). ``columns``: read only these (those of them
    the file has; the others are never parsed, so a wide file costs the memory of the
    columns used: issue 15). ``category_columns`` (text columns) come back as pandas
    categoricals of their text (a CSV is then read in chunks of :data:`CHUNK_ROWS` rows, each
    chunk's text turned into codes at once, so a column's text is never held whole).
    """
    path = _existing(path)
    wanted_columns = None if columns is None else {c.strip() for c in columns}
    if _is_parquet(path):
        try:
            if wanted_columns is None:
                df = pd.read_parquet(path)
            else:
                present = [n for n in read_columns(path) if n in wanted_columns]
                df = pd.read_parquet(path, columns=present)
        except InputError:
            raise
        except Exception as exc:  # pyarrow raises many types
            raise InputError(f"{path}: cannot read Parquet ({exc})") from None
        _unique_names(path, [str(c) for c in df.columns])
        return df
    used = _delimiter(path, sep)
    try:
        names = _header(path, used)
        wanted = {c.strip() for c in text_columns}
        dtype = {name: str for name in names if name.strip() in wanted}
        options = {
            "sep": used,
            "encoding": "utf-8-sig",
            "skipinitialspace": True,
            "dtype": dtype or None,
            "keep_default_na": False,
            "na_values": ["", *na_values],
        }
        categories = {c.strip() for c in category_columns} & {n.strip() for n in names}
        df = None
        if categories or wanted_columns is not None:
            df = _read_chunked(path, options, wanted_columns, categories)
        if df is None:
            df = pd.read_csv(path, **options)
            if wanted_columns is not None:
                df.columns = [str(c).strip() for c in df.columns]
                df = df[[c for c in df.columns if c in wanted_columns]]
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: file is empty") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"{path}: malformed CSV ({str(exc).strip().splitlines()[-1]})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start} of a read block)") from None
    df.columns = [str(c).strip() for c in df.columns]
    return df


CHUNK_ROWS = 500_000
"""Rows per chunk when text columns are read as categoricals."""


def _read_chunked(
    path: Path, options: dict[str, Any], keep: set[str] | None, categories: set[str]
) -> pd.DataFrame | None:
    """Read a CSV chunk by chunk, keeping only the ``keep`` columns (all when None) and
    turning the ``categories`` columns into categoricals as each chunk arrives (categories
    sorted, as ``factorize(sort=True)`` sorts the text).

    Every column is still parsed (pandas' ``usecols`` would stop reporting rows with too
    many fields). None when the kept columns' inferred dtypes differ between chunks (a
    column of numbers with a text or missing cell in some chunk): pandas then reads the
    whole file at once, so the result never depends on the chunking.
    """
    from pandas.api.types import union_categoricals

    parts = []
    with pd.read_csv(path, chunksize=CHUNK_ROWS, **options) as reader:
        for chunk in reader:
            chunk.columns = [str(c).strip() for c in chunk.columns]
            if keep is not None:
                chunk = chunk[[c for c in chunk.columns if c in keep]]
            for c in categories & set(chunk.columns):
                chunk[c] = chunk[c].astype("category")
            parts.append(chunk)
    if not parts:
        return None
    first = parts[0]
    if any(list(p.columns) != list(first.columns) for p in parts):
        return None
    data = {}
    for c in first.columns:
        if c in categories:
            try:
                joined = union_categoricals([p[c] for p in parts], sort_categories=True)
            except TypeError:  # a chunk with no text in the column has other categories
                return None
            data[c] = pd.Series(joined)
        elif any(p[c].dtype != first[c].dtype for p in parts):
            return None
        else:
            data[c] = pd.concat([p[c] for p in parts], ignore_index=True)
    return pd.DataFrame(data)


def read_parquet_texts_as_categories(
    path: str | Path, row_groups: list[int] | None = None
) -> pd.DataFrame:
    """A Parquet file (or some of its row groups) as pandas reads it, except that its text
    columns come from the file's dictionary pages as categoricals: the few distinct texts, then
    codes (a release's cells, a Dask partition's QIs; 2-3x faster to read and to encode than a
    million strings). pyarrow's errors are left to the caller, who knows what the file is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = [
        f.name
        for f in pq.read_schema(path)
        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]
    if row_groups is None:
        return pq.read_table(path, read_dictionary=text).to_pandas()
    return pq.ParquetFile(path, read_dictionary=text).read_row_groups(row_groups).to_pandas()


def release_memory() -> None:
    """Give memory freed by a large step back to the operating system: arrow's pool
    (``release_unused``) and the C heap (glibc's ``malloc_trim``; nothing elsewhere).

    Reading a CSV or writing a release frees hundreds of MB that the allocators would keep
    for the process, so the next step (Mondrian, the fail-closed check) would add its peak on
    top of them (issue 15: the 3M-row ``anonymize`` peak)."""
    import ctypes
    import ctypes.util

    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
    except OSError:
        trim = None
    if trim is not None:
        trim(0)


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


# -- writing CSV -------------------------------------------------------------------------------
class BinarySink(Protocol):
    """Where :func:`write_csv` can write besides a path: an open binary file, a hasher."""

    def write(self, data: bytes | memoryview, /) -> int: ...


def _quoted_chars() -> tuple[str, ...]:
    """The characters that make Python's ``csv`` writer (which pandas' ``to_csv`` drives with
    ``QUOTE_MINIMAL`` and line terminator ``\\n``) quote a field, probed on this Python: 3.11
    quotes ``,`` ``"`` and ``\\n`` but not ``\\r``; later versions may differ."""
    found = []
    for c in (",", '"', "\n", "\r"):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerow([f"a{c}b", "x"])
        if buf.getvalue().startswith('"'):
            found.append(c)
    return tuple(found)


QUOTED_CHARS = tuple(dict.fromkeys([*_quoted_chars(), "\r"]))
"""Characters whose presence makes a CSV field quoted (``"`` doubled inside): Python's, and
the carriage return always. Python 3.11's ``csv`` (so pandas' ``to_csv``) leaves a CR bare,
and every CSV reader, pandas' included, and every spreadsheet ends the row there: the rest of
the cell would be read back as a new row, and open in a spreadsheet as a new cell, a formula
if it starts with ``=`` (:mod:`kerckhoffs.data.csv_cells`)."""


def _pandas_csv(df: pd.DataFrame) -> bytes:
    """``df.to_csv(index=False)``, with every field that holds a carriage return quoted
    (:data:`QUOTED_CHARS`): pandas renders the rows ending in CRLF, which makes its ``csv``
    quote CRs too, and each CRLF outside quotes (a row's end) becomes ``\n``."""
    import re

    text = df.to_csv(index=False)
    if "\r" not in text:
        return text.encode("utf-8")
    crlf = df.to_csv(index=False, lineterminator="\r\n")
    tokens = re.finditer(r'"(?:[^"]|"")*"|\r\n|[^"\r]+|\r', crlf)
    return "".join("\n" if t[0] == "\r\n" else t[0] for t in tokens).encode("utf-8")


def _cell_text(column: pd.Series) -> pa.Array | None:
    """The column as an arrow array whose text rendering is exactly pandas' ``to_csv`` text of
    each cell (missing: null, written empty), or None for a dtype this writer does not render
    (pandas writes it then).

    pandas (``get_values_for_csv``) writes integers in decimal, numpy floats and booleans as
    ``ndarray.astype(str)`` (``0.1``, ``1e-05``, ``True``) and extension arrays (its ``str``
    dtype, nullable integers) and objects through ``str()``; arrow's integer and string
    columns render the same text, the rest is converted here with pandas' own expression.
    """
    import pyarrow as pa

    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return pa.array(column.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind in "fb":
        arr = column.to_numpy()
        text = arr.astype(str).astype(object)
        text[pd.isna(arr)] = None
        return pa.array(text, type=pa.large_string())
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        try:
            arr = pa.array(column.array, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        return arr if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) else None
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "iu":
        return pa.array(column.array, from_pandas=True)
    if isinstance(dtype, pd.CategoricalDtype):  # text categories: arrow dictionary<string>
        arr = pa.array(column.array)
        value_type = getattr(arr.type, "value_type", None)
        if value_type is not None and (
            pa.types.is_string(value_type) or pa.types.is_large_string(value_type)
        ):
            return arr
    return None


ARROW_UNQUOTED = (",", '"', "\n", "\r")
"""Characters ``pyarrow.csv.write_csv`` refuses to write unquoted (``quoting_style="none"``)."""


def _holds(arr: pa.Array, chars: tuple[str, ...]) -> bool:
    """Whether some cell of a string array may hold one of ``chars`` (checked on the raw value
    bytes, no per-row work; conservative for a sliced array)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return False
    data = arr.buffers()[2]
    if data is None:
        return False
    raw = data.to_pybytes()
    return any(c.encode() in raw for c in chars)


def _quoted(arr: pa.Array) -> pa.Array:
    """Each cell as the text pandas writes for it: quoted (``"`` doubled) when it holds one of
    :data:`QUOTED_CHARS`, missing cells empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    large = pa.large_string()
    text = pc.cast(arr, large)
    if _holds(text, QUOTED_CHARS):
        need = pc.match_substring_regex(text, "[" + "".join(QUOTED_CHARS) + "]")
        quote = pa.scalar('"', large)
        wrapped = pc.binary_join_element_wise(
            quote, pc.replace_substring(text, '"', '""'), quote, pa.scalar("", large)
        )
        text = pc.if_else(need, wrapped, text)
    return pc.fill_null(text, "")


def write_csv(df: pd.DataFrame, path: str | Path | BinarySink) -> None:
    """Write ``df`` to ``path`` (or a binary file object) as the exact bytes of
    ``df.to_csv(path, index=False)``, but that a field holding a carriage return is quoted
    (:data:`QUOTED_CHARS`).

    The header line is pandas' own; the rows are rendered by pyarrow: straight through
    ``pyarrow.csv.write_csv`` when no cell needs quoting (the usual release: numbers and
    hierarchy labels), otherwise by joining per-cell texts quoted as Python's ``csv`` module
    quotes them (``QUOTE_MINIMAL``). Frames pyarrow cannot render identically (a dtype such as
    datetime or categorical, a single column, no rows) are written by pandas.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    arrays = [_cell_text(df.iloc[:, j]) for j in range(df.shape[1])]
    if df.shape[1] < 2 or len(df) == 0 or any(a is None for a in arrays):
        data = _pandas_csv(df)  # pandas' own bytes (a CR quoted)
        if isinstance(path, str | Path):
            Path(path).write_bytes(data)
        else:
            path.write(data)
        return
    cells = [a for a in arrays if a is not None]
    header = df.head(0).to_csv(index=False).encode("utf-8")
    with contextlib.ExitStack() as stack:
        fh = stack.enter_context(open(path, "wb")) if isinstance(path, str | Path) else path
        fh.write(header)
        if not any(_holds(a, ARROW_UNQUOTED) for a in cells):
            names = [f"c{j}" for j in range(len(cells))]
            options = pa_csv.WriteOptions(include_header=False, quoting_style="none")
            pa_csv.write_csv(pa.Table.from_arrays(cells, names=names), fh, options)
            return
        import pyarrow.compute as pc

        large = pa.large_string()
        lines = pc.binary_join_element_wise(*[_quoted(a) for a in cells], pa.scalar(",", large))
        lines = pc.binary_join_element_wise(lines, pa.scalar("", large), pa.scalar("\n", large))
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
        start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
        fh.write(memoryview(lines.buffers()[2])[start:end])
