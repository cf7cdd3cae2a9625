"""Reading tables from CSV and Parquet, and writing files so no partial output is left.

Reading detects the delimiter from the header line (``,``, ``;``, tab or ``|``) unless one is
given, and turns the usual failures (missing file, empty file, wrong delimiter, ragged rows)
into one-line :class:`~kerckhoffs.errors.InputError` messages; running out of memory while
parsing stays a ``MemoryError`` (the machine, not the file, is at fault).

Every file a user names is opened through :func:`regular_file` (or :func:`read_regular`,
:func:`load_toml`, :func:`load_json`): a FIFO, a device such as ``/dev/zero``, a socket or a
directory is refused with one line instead of hanging or reading without end, and JSON or
TOML is bounded in size, nesting and integer width, so no ``RecursionError`` or
``OverflowError`` escapes from what a user (or an adversary who edits a release) wrote.

Writing (:func:`write_csv`) renders a DataFrame through pyarrow into exactly the bytes pandas'
``to_csv(index=False)`` writes (measured in our performance work,
``docs/theory/choices.md#performance``: pandas' writer was a quarter of a 1M-row ``anonymize``;
pyarrow's is about 15x faster), so releases keep their bytes and digests.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import functools
import io
import json
import os
import re
import stat
import tempfile
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kerckhoffs.errors import SEP_HINT, InputError, KerckhoffsError, input_error

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

# numpy and pandas are imported by the functions that read or write tables: the schema (and so
# every command's start, `kerckhoffs --help` included) needs only the TOML and file checks here

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
        except MemoryError:
            raise
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
    return regular_file(path, "data file")


# -- a user's file: a regular file, of bounded size and nesting --------------------------------
MAX_TEXT_BYTES = 64 * 1024 * 1024
"""The largest JSON or TOML file read whole (``release.json``, a schema, a knowledge file):
far above what kerckhoffs writes or a person types. A larger one is refused unparsed."""
MAX_NESTING = 64
"""The deepest nesting of arrays and objects (tables) accepted in a JSON or TOML file: ours
nest about six deep. Deeper input would reach Python's recursion limit in the parser or in
any code that walks it (``repr`` in an error message), so it is refused with one line."""
MAX_INTEGER = 2**63
"""Integers in a JSON or TOML file must be smaller than this in magnitude (they are counts,
levels, widths, budgets: int64 holds them). A 400-digit integer cannot become a float
(``OverflowError``) and one of 4,300 digits cannot even be parsed by Python."""


def _file_kind(mode: int) -> str:
    """What a ``stat`` mode names, for an error line."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def regular_file(
    path: str | Path, what: str = "file", error: type[KerckhoffsError] = InputError
) -> Path:
    """``path`` if it names a regular file (symbolic links followed); else one ``error`` line
    naming it: ``{what} not found: PATH``, or what it is instead (a directory, a FIFO, a
    device such as ``/dev/zero``, a socket).

    Every file a user names is checked with this before it is opened: reading a FIFO blocks
    until some other process writes to it, and ``/dev/zero`` or ``/dev/urandom`` never end, so
    a command given one would hang or fill the memory instead of failing."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise error(f"{path}: the {what} is {_file_kind(mode)}, not a regular file")
    return path


def read_regular(
    path: str | Path,
    what: str = "file",
    limit: int = MAX_TEXT_BYTES,
    error: type[KerckhoffsError] = InputError,
) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`regular_file`), at most ``limit``
    of them: a larger file is one ``error`` line. The file is opened without blocking and
    checked again on the open descriptor, so a path swapped for a FIFO after the first check
    cannot make the read hang either."""
    path = regular_file(path, what, error)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{path}: the {what} is {_file_kind(mode)}, not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise error(
            f"{path}: the {what} is larger than {limit / 2**20:,.0f} MiB; refusing to parse it"
        )
    return data


def check_structure(
    value: Any, where: str | Path, error: type[KerckhoffsError] = InputError
) -> None:
    """Refuse parsed JSON or TOML nested deeper than :data:`MAX_NESTING` or holding an integer
    of :data:`MAX_INTEGER` or more in magnitude (one ``error`` line naming ``where``). The walk
    keeps its own stack: it never recurses, whatever the depth."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_NESTING:
                raise error(
                    f"{where}: arrays or tables nested more than {MAX_NESTING} deep; refusing it"
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) >= MAX_INTEGER:
            raise error(f"{where}: {_too_large(str(item))}")


def _too_large(digits: str) -> str:
    """What is wrong with an integer too large to hold (its first digits and length)."""
    shown = digits if len(digits) <= 24 else f"{digits[:20]}… ({len(digits.lstrip('-')):,} digits)"
    return f"the integer {shown} is too large (at most 2^63 - 1)"


def load_json(raw: bytes, where: str | Path, error: type[KerckhoffsError] = InputError) -> Any:
    """Parse the bytes of a JSON file (one ``error`` line naming ``where`` when they are not
    UTF-8 JSON, when an integer is too large or the nesting too deep: see
    :func:`check_structure`; ``RecursionError`` never escapes)."""

    def bounded_int(text: str) -> int:
        if len(text.lstrip("-")) > 19 or abs(int(text)) >= MAX_INTEGER:
            raise error(f"{where}: {_too_large(text)}")
        return int(text)

    try:
        value = json.loads(raw.decode("utf-8"), parse_int=bounded_int)
    except UnicodeDecodeError:
        raise error(f"{where}: not UTF-8 text (damaged, or not a JSON file)") from None
    except json.JSONDecodeError as exc:
        raise error(
            f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "the file is damaged or truncated"
        ) from None
    except RecursionError:
        raise error(
            f"{where}: arrays or objects nested more than {MAX_NESTING} deep; refusing it"
        ) from None
    check_structure(value, where, error)
    return value


_TOML_STRING = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.S
)
"""TOML's strings (multi-line and one-line, basic and literal) and comments, left to right."""
_DOTTED_KEY = re.compile(
    rf"(?<![A-Za-z0-9_-])(?:(?:[A-Za-z0-9_-]++|\"\")\s*+\.\s*+){{{MAX_NESTING}}}"
)
"""A key of more than :data:`MAX_NESTING` dotted parts (in text whose strings are ``""``):
possessive and anchored at the start of a part, so the search is linear in the text."""


def _blank_string(match: re.Match[str]) -> str:
    """A string becomes ``""`` (a quoted key part still counts), a comment nothing."""
    return "" if match.group(0).startswith("#") else '""'


def load_toml(
    path: str | Path, what: str = "TOML file", error: type[KerckhoffsError] = InputError
) -> dict[str, Any]:
    """Read and parse a TOML file the user named: a regular file (:func:`read_regular`), UTF-8,
    valid TOML, nested at most :data:`MAX_NESTING` deep with integers of 64 bits; anything
    else is one ``error`` line naming the file (``RecursionError`` never escapes)."""
    path = Path(path)
    raw = read_regular(path, what, error=error)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text (is it a TOML file?)") from None
    if _DOTTED_KEY.search(_TOML_STRING.sub(_blank_string, text)):
        # tomllib's time grows with the square of a dotted key's length (20,000 parts: 10 s)
        raise error(f"{path}: a key dotted more than {MAX_NESTING} deep; refusing it")
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise error(
            f"{path}: arrays or tables nested more than {MAX_NESTING} deep; refusing it"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        text = " ".join(str(exc).split())
        raise error(f"{path}: not valid TOML ({text[:200]})") from None
    except ValueError as exc:  # an integer of more than 4,300 digits: Python will not convert it
        text = " ".join(str(exc).split(";")[0].split())
        raise error(f"{path}: a value Python cannot read ({text[:200]})") from None
    check_structure(value, path, error)
    return value


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
                f"{path}: the header has no {used!r} delimiter but contains {others[0]!r}; ",
                SEP_HINT,
                repr(others[0]),
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

    ``sep=None`` sniffs the delimiter. ``text_columns`` are read as text, so codes such as zip
    ``02134`` keep their leading zeros. A file whose header splits into a single column while it
    contains another delimiter is reported as a delimiter mismatch. Only empty cells (and the texts
    in ``na_values``) are missing: ``NA``, ``null`` and pandas' other default missing markers are
    values. A header that names a column twice is refused (pandas would silently rename the second
    one ``NAME.1``). ``columns``: read only these (those of them the file has; the others are never
    parsed, so a wide file costs the memory of the columns used:
    ``docs/theory/choices.md#performance``). ``category_columns`` (text columns) come back as pandas
    categoricals of their text (a CSV is then read in chunks of :data:`CHUNK_ROWS` rows, each
    chunk's text turned into codes at once, so a column's text is never held whole).
    """
    import pandas as pd

    path = _existing(path)
    wanted_columns = None if columns is None else {c.strip() for c in columns}
    if _is_parquet(path):
        try:
            if wanted_columns is None:
                df = pd.read_parquet(path)
            else:
                present = [n for n in read_columns(path) if n in wanted_columns]
                df = pd.read_parquet(path, columns=present)
        except (InputError, MemoryError):  # pyarrow's ArrowMemoryError is a MemoryError
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
        na_list = ["", *na_values]
        options: dict[str, Any] = {
            "sep": used,
            "encoding": "utf-8-sig",
            "skipinitialspace": True,
            "dtype": dtype or None,
            "keep_default_na": False,
            "na_values": na_list,
        }
        categories = {c.strip() for c in category_columns} & {n.strip() for n in names}
        df = None
        if categories and wanted_columns is not None:
            from kerckhoffs.data.csv_arrow import read_dictionary_columns

            df = read_dictionary_columns(path, used, names, wanted_columns, categories, na_list)
        if df is None and (categories or wanted_columns is not None):
            df = _read_chunked(path, options, wanted_columns, categories)
        if df is None:
            df = pd.read_csv(path, **options)
            if wanted_columns is not None:
                df.columns = [str(c).strip() for c in df.columns]
                df = df[[c for c in df.columns if c in wanted_columns]]
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, OSError) as exc:
        if out_of_memory(exc):
            raise MemoryError(f"{path}: out of memory while parsing the CSV") from None
        if isinstance(exc, OSError):
            raise
        raise InputError(f"{path}: malformed CSV ({str(exc).strip().splitlines()[-1]})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start} of a read block)") from None
    df.columns = [str(c).strip() for c in df.columns]
    return df


def out_of_memory(exc: BaseException) -> bool:
    """Whether a reader's exception means the machine ran out of memory, not that the file is
    bad: a ``MemoryError``, pandas' C tokenizer's ``ParserError`` ("C error: out of memory",
    its words for a failed allocation) or ``ENOMEM`` (mapping the file into memory failed)."""
    import pandas as pd

    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOMEM
    return isinstance(exc, pd.errors.ParserError) and "out of memory" in str(exc).lower()


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
    import pandas as pd
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
    top of them (``docs/theory/choices.md#performance``: the 3M-row ``anonymize``
    peak)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` (None elsewhere), looked up once: ``find_library`` runs
    ``ldconfig`` in a child process, a few ms each time."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return getattr(libc, "malloc_trim", None)
    except OSError:
        return None


def _unique_names(path: Path, names: list[str]) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise InputError(
                f"{path}: column {name!r} appears twice in the header (columns {seen[name] + 1} "
                f"and {i + 1}); rename one"
            )
        seen[name] = i


TEMPORARY_MARK = ".kerckhoffs-tmp-"
"""What the name of :func:`atomic_file`'s temporary file holds after ``.TARGET``: a file named
``.TARGET.kerckhoffs-tmp-XXXXXXXX`` beside ``TARGET`` is one of ours
(:func:`remove_stale_temporaries`)."""


def umask() -> int:
    """The process's file-creation mask (read without changing it for good)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_file(target: str | Path, *, private: bool = False) -> Iterator[Path]:
    """Yield a temporary file path that is renamed to ``target`` only if the block succeeds.

    A file it replaces keeps its mode (a file the user made 0600 stays 0600); a new file gets
    the mode the user's umask gives (``mkstemp`` alone makes it 0600), or 0600 when
    ``private`` (a file naming people or providers: readable by its owner only). On any
    failure, the rename included, the temporary file is removed.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600 if private else 0o666 & ~umask()
    fd, name = tempfile.mkstemp(prefix=f".{target.name}{TEMPORARY_MARK}", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_stale_temporaries(target: str | Path) -> int:
    """Remove the temporary files :func:`atomic_file` left beside ``target`` when a process
    writing it was killed; how many were removed. Call it only while holding a lock that every
    writer of ``target`` holds (the ledger's): then no such file belongs to a live writer."""
    target = Path(target)
    prefix = f".{target.name}{TEMPORARY_MARK}"
    removed = 0
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += 1
    return removed


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
    import numpy as np
    import pandas as pd
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
        if value_type is not None and pa.types.is_large_string(value_type):
            # the same text; pyarrow's CSV writer renders dictionary<string> about a fifth
            # faster than dictionary<large_string> (pandas' str categories)
            with contextlib.suppress(pa.ArrowInvalid):  # over 2 GiB of categories: as they are
                return pa.DictionaryArray.from_arrays(arr.indices, arr.dictionary.cast(pa.string()))
            return arr
        if value_type is not None and pa.types.is_string(value_type):
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
    import numpy as np
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
