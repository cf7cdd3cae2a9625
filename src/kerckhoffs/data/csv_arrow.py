"""Reading the columns an encoding uses from a CSV with pyarrow's reader, text as dictionaries.

:func:`kerckhoffs.data.io.read_table` reads a table's text columns as pandas categoricals
(sorted categories, codes). pandas' reader builds one Python-free arrow string per cell for a
``str`` column and then factorizes it; pyarrow's reader (``auto_dict_encode``: each block's
cells turned into dictionary indices as they are parsed, on every core) gives the codes
directly, about 3x less CPU on a 1M-row file (``benchmarks/bench_cli_floor.py``).

This path gives exactly the DataFrame pandas' path gives, or None, and the caller then reads
the file with pandas, which also produces every error message a bad file deserves (a ragged
row, a wrong delimiter, bytes that are not UTF-8). None whenever the two readers could
disagree:

- a text value read that starts with a space or tab (pandas reads with
  ``skipinitialspace``; pyarrow keeps the blank), a space or tab before a quote anywhere (it
  changes how pandas splits the line), a single column, a file with no data row;
- a column read without a declared text kind that holds anything but decimal integers that
  int64 holds or text no number can be (every value with a character that no number or
  boolean holds, such as a sensitive ``<=50K``), or a missing cell (pandas infers floats,
  booleans and text by its own rules: its decimal parser is not arrow's, so floats are left
  to it; arrow's own type inference would read ``0x10`` as 16);
- any error pyarrow raises.

Quoted fields (``"a,b"``, ``""`` doubled, a line break inside quotes), a UTF-8 byte order
mark and CRLF line ends are read alike by both (tested on such files against pandas).
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TEXT_DTYPE = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' default ``str`` dtype: the dtype of the categories pandas' path gives."""


def _blank_before_quote(data: mmap.mmap, sep: str) -> bool:
    """Whether a space or tab stands right before a quote somewhere in the file: pandas
    (``skipinitialspace``) reads ``a, "b,c"`` as two fields, pyarrow as three. Conservative
    (also true inside a quoted field); one vectorized pass over the quotes."""
    raw = np.frombuffer(data, dtype=np.uint8)
    try:
        quotes = np.flatnonzero(raw[1:] == ord('"'))  # the byte before each quote
        blanks = [b for b in (ord(" "), ord("\t")) if b != ord(sep)]
        return bool(np.isin(raw[quotes], np.array(blanks, dtype=np.uint8)).any())
    finally:
        del raw  # the map cannot close while an array views it


def read_dictionary_columns(
    path: Path,
    sep: str,
    names: list[str],
    keep: set[str],
    categories: set[str],
    na_values: list[str],
) -> pd.DataFrame | None:
    """The ``keep`` columns of the CSV ``path`` (header ``names``, as written; ``keep`` and
    ``categories`` name them stripped) as pandas' path reads them: ``categories`` as
    categoricals of their text (categories sorted, as ``union_categoricals(...,
    sort_categories=True)`` sorts them), the others as int64; None when the two readers
    could disagree (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if len(names) < 2 or len(sep) != 1:
        return None
    wanted = [n for n in names if n.strip() in keep]
    try:
        with open(path, "rb") as fh:
            if fh.seek(0, 2) == 0:
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                quoted = data.find(b'"') >= 0
                # a blank before a quote changes how pandas splits the line; any other leading
                # blank only changes a value: a text value read is checked below, pyarrow
                # trims integers, and the columns not read do not matter
                if quoted and _blank_before_quote(data, sep):
                    return None
    except OSError:  # the file cannot be mapped: pandas' path says why (or runs out of memory)
        return None
    text_type = pa.dictionary(pa.int32(), pa.string())
    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pa_csv.ParseOptions(delimiter=sep, newlines_in_values=quoted),
            convert_options=pa_csv.ConvertOptions(
                include_columns=wanted,
                column_types={n: text_type for n in wanted},
                null_values=["", *na_values],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
                auto_dict_encode=False,
            ),
        )
    except MemoryError:
        raise
    except Exception:  # pyarrow raises many types; pandas' path names the fault
        return None
    if table.num_rows == 0:
        return None
    data_frame = {}
    for name in wanted:
        column = table.column(name).unify_dictionaries()  # one dictionary for all chunks
        if name.strip() in categories:
            if column.null_count == len(column):  # pandas' path reads it otherwise
                return None
            series = _categorical(column)
            if series is None:
                return None
            data_frame[name.strip()] = series
        else:
            values = _integers(column)
            if values is None:
                values = _texts(column)
            if values is None:
                return None
            data_frame[name.strip()] = pd.Series(values)
    return pd.DataFrame(data_frame)


_INTEGER = r"^[+-]?[0-9]+$"
"""What pandas' reader turns into an int64 cell (a leading blank is refused before)."""


def _integers(column: Any) -> np.ndarray | None:
    """A chunked dictionary<string> column (its dictionaries unified) as the int64 array
    pandas' reader makes of it, or None unless every cell is a decimal integer that int64 holds
    (no missing cell): pandas reads anything else (floats, ``0x10``, text, a missing cell) by
    its own rules. Only the distinct texts are parsed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count or column.num_chunks == 0:
        return None
    values = column.chunk(0).dictionary
    if not pc.all(pc.match_substring_regex(values, _INTEGER)).as_py():
        return None
    try:
        numbers = pc.cast(pc.replace_substring_regex(values, r"^\+", ""), pa.int64())
    except pa.ArrowInvalid:  # outside int64: pandas makes uint64 or floats of them
        return None
    indices = np.concatenate([c.indices.to_numpy() for c in column.chunks])
    return numbers.to_numpy()[indices]


_BLANK_START = r"^[ \t]"
"""A value pandas' reader (``skipinitialspace``) would read without its leading blank."""

_NOT_A_NUMBER = r"[^0-9+\-._xXeEiInNfFtTyYaArRuUlLsS \t]"
"""A character no number or boolean pandas' reader accepts can hold: digits, signs, points,
exponents, ``inf``/``infinity``/``nan`` and ``True``/``False`` in any case (``x`` and ``_``
too, to stay clear of hexadecimal and digit separators)."""


def _texts(column: Any) -> pd.Series | None:
    """A chunked dictionary<string> column (its dictionaries unified) read without a declared
    kind as the text column pandas' reader makes of it, or None unless pandas surely reads it
    as text: no missing cell and every distinct value holding a character no number or boolean
    can (pandas infers a column's type per block of rows, so one text value would not make the
    whole column text: every value must). A value read with a leading blank is refused (pandas
    strips it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count or column.num_chunks == 0:
        return None
    values = column.chunk(0).dictionary
    if not pc.all(pc.match_substring_regex(values, _NOT_A_NUMBER)).as_py():
        return None
    if pc.any(pc.match_substring_regex(values, _BLANK_START)).as_py():
        return None
    return pd.Series(pd.array(column.cast(pa.string()), dtype=TEXT_DTYPE))


def _categorical(chunked: Any) -> pd.Series | None:
    """A chunked dictionary<string> column (its dictionaries unified) as a pandas categorical
    with sorted categories (missing cells: code -1), without a string per row; None when a
    value read starts with a blank (pandas strips it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if chunked.num_chunks == 0:
        values = pa.array([], pa.string())
        indices = np.empty(0, dtype=np.int32)
    else:
        values = chunked.chunk(0).dictionary
        if pc.any(pc.match_substring_regex(values, _BLANK_START)).as_py():
            return None
        parts = [
            (c.indices.fill_null(-1) if c.null_count else c.indices).to_numpy()
            for c in chunked.chunks
        ]
        indices = np.concatenate(parts).astype(np.int32, copy=False)
    text = np.asarray(values.to_pylist(), dtype=object)
    order = np.argsort(text, kind="stable")
    # the codes in the smallest integer type that holds them (pandas' own choice for a
    # categorical's codes), each taken from a small table: one pass over the rows
    small = np.int8 if len(order) < 127 else np.int16 if len(order) < 32767 else np.int32
    rank: np.ndarray = np.empty(len(order) + 1, dtype=small)
    rank[order] = np.arange(len(order), dtype=small)
    rank[-1] = -1  # index -1 (missing) stays -1
    used = np.bincount(indices + 1 if chunked.null_count else indices, minlength=len(order) + 1)
    used = used[1:] if chunked.null_count else used[:-1]
    categories = pd.Index(text[order], dtype=TEXT_DTYPE)
    codes: np.ndarray = rank.take(indices)
    if not used.all():  # a dictionary value no row uses (pandas' categories are the used)
        keep = used[order] > 0
        new_rank = np.cumsum(keep, dtype=np.int32) - 1
        codes = np.where(codes >= 0, new_rank[np.maximum(codes, 0)], -1).astype(small)
        categories = categories[keep]
    dtype = pd.CategoricalDtype(categories, ordered=False)
    # codes are -1 or within the categories by construction: no validation pass
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype, validate=False))
