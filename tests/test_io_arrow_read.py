"""The pyarrow CSV read path (text columns read as dictionaries) gives exactly the DataFrame,
and so the Table, that pandas' reader gives; the oracle is pandas' own path (the arrow path
switched off), on tricky files and on random ones."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kerckhoffs.data import csv_arrow
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.io import read_table
from kerckhoffs.data.schema import Column, Kind, MissingPolicy, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import KerckhoffsError

TEXT = ["zip", "sex", "dis"]
USED = ["age", *TEXT]


def _read(path: Path, arrow: bool, monkeypatch: pytest.MonkeyPatch, **kw: object) -> object:
    """read_table as Table.from_csv calls it, with the arrow path on or off; and whether the
    arrow path gave the result."""
    real = csv_arrow.read_dictionary_columns
    took = []

    def spy(*a: object, **k: object) -> pd.DataFrame | None:
        out = real(*a, **k) if arrow else None  # type: ignore[arg-type]
        took.append(out is not None)
        return out

    monkeypatch.setattr(csv_arrow, "read_dictionary_columns", spy)
    kw = {"text_columns": TEXT, "columns": USED, "category_columns": TEXT, **kw}
    try:
        df = read_table(path, **kw)  # type: ignore[arg-type]
    except KerckhoffsError as exc:
        return f"error: {exc}", any(took)
    return df, any(took)


def _same(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: object) -> bool:
    """Assert both paths agree (values, dtypes, categories, codes); whether arrow's was used."""
    fast, took = _read(path, True, monkeypatch, **kw)
    slow, _ = _read(path, False, monkeypatch, **kw)
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return bool(took)
    assert isinstance(fast, pd.DataFrame) and isinstance(slow, pd.DataFrame)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for c in fast.columns:
        assert fast[c].dtype == slow[c].dtype
        if isinstance(fast[c].dtype, pd.CategoricalDtype):
            assert list(fast[c].cat.categories) == list(slow[c].cat.categories)
            np.testing.assert_array_equal(fast[c].cat.codes, slow[c].cat.codes)
    return bool(took)


TRICKY: dict[str, tuple[bytes, bool | None]] = {
    # name: (bytes, the arrow path is expected to read it; None: either)
    "quoted": (
        b'age,zip,sex,dis,id\n30,"02134",F,"flu, mild",1\n41,02139,M,"say:""hi""",2\n',
        True,
    ),
    "newline_in_quotes": (b'age,zip,sex,dis,id\n30,02134,F,"two\nlines",1\n41,02139,M,x,2\n', True),
    "empty_and_missing": (
        b'age,zip,sex,dis,id\n30,02134,,flu,1\n41,,M,"",2\n52,02134,F,?,3\n',
        True,
    ),
    "bom_crlf": (
        b"\xef\xbb\xbfage,zip,sex,dis,id\r\n30,00501,F,flu\xc3\xa9,1\r\n4,02139,M,b,2\r\n",
        True,
    ),
    "leading_zeros": (b"age,zip,sex,dis,id\n7,007,F,0,1\n8,7,F,00,2\n9,0007,M,0,3\n", True),
    "semicolon": (b"age;zip;sex;dis;id\n30;02134;F;a,b;1\n41;02139;M;c;2\n", True),
    "blank_start": (b"age,zip,sex,dis,id\n30, 02134,F,flu,1\n41,02139,M,flu,2\n", False),
    "blank_quote": (b'age,zip,sex,dis,id\n30,02134,F, "a,b",1\n41,02139,M,c,2\n', False),
    "quote_inside": (b'age,zip,sex,dis,id\n30,02134,F,a"b,1\n41,02139,M,"ab"c,2\n', None),
    "signed_ints": (b"age,zip,sex,dis,id\n+5,02134,F,flu,1\n-0,02139,M,flu,2\n007,1,M,x,3\n", True),
    "hex_age": (b"age,zip,sex,dis,id\n0x10,02134,F,flu,1\n41,02139,M,flu,2\n", False),
    "huge_age": (b"age,zip,sex,dis,id\n9223372036854775808,02134,F,flu,1\n", False),
    "missing_age": (b"age,zip,sex,dis,id\n,02134,F,flu,1\n41,02139,M,flu,2\n", False),
    "float_age": (b"age,zip,sex,dis,id\n30.5,02134,F,flu,1\n41,02139,M,flu,2\n", False),
    "ragged": (b"age,zip,sex,dis,id\n30,02134,F,flu,1,9\n41,02139,M,flu,2\n", False),
    "short_row": (b"age,zip,sex,dis,id\n30,02134,F\n41,02139,M,flu,2\n", False),
    "header_only": (b"age,zip,sex,dis,id\n", False),
    "not_utf8": (b"age,zip,sex,dis,id\n30,02134,F,fl\xff,1\n", False),
    "all_missing": (b"age,zip,sex,dis,id\n30,02134,,flu,1\n41,02139,,flu,2\n", False),
}


UNDECLARED: dict[str, tuple[bytes, bool | None]] = {
    # a column read without a declared kind (a sensitive column): text only when pandas
    # surely reads it as text; name: (bytes, the arrow path is expected to read it)
    "text": (b"age,zip,sex,dis\n30,02134,F,<=50K\n41,02139,M,>50K\n", True),
    "words": (b"age,zip,sex,dis\n30,02134,F,Cough\n41,02139,M,cold \n", True),
    "booleans": (b"age,zip,sex,dis\n30,02134,F,True\n41,02139,M,false\n", False),
    "some_numbers": (b"age,zip,sex,dis\n30,02134,F,1\n41,02139,M,cough\n", False),
    "floats": (b"age,zip,sex,dis\n30,02134,F,1e5\n41,02139,M,-inf\n", False),
    "nan_word": (b"age,zip,sex,dis\n30,02134,F,nan\n41,02139,M,cough\n", False),
    "missing": (b"age,zip,sex,dis\n30,02134,F,\n41,02139,M,flu\n", False),
    "blank": (b"age,zip,sex,dis\n30,02134,F, cough\n41,02139,M,cough\n", False),
    "integers": (b"age,zip,sex,dis\n30,02134,F,7\n41,02139,M,-3\n", True),
}


UNDECLARED_READ = {"text_columns": ["zip", "sex"], "category_columns": ["zip", "sex"]}
"""How the UNDECLARED files are read: "dis" without a declared kind."""


@pytest.mark.parametrize(
    "name, files, read",
    [(n, TRICKY, {"na_values": ["?"]}) for n in sorted(TRICKY)]
    + [(n, UNDECLARED, UNDECLARED_READ) for n in sorted(UNDECLARED)],
)
def test_tricky_files_read_as_pandas_reads_them(
    name: str,
    files: dict[str, tuple[bytes, bool | None]],
    read: dict[str, object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, arrow = files[name]
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    took = _same(path, monkeypatch, **read)
    assert arrow is None or took is arrow


def test_the_encoded_table_is_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Table (codes, domains) from both paths, with missing = category and a hierarchy."""
    path = tmp_path / "t.csv"
    path.write_bytes(b'age,zip,sex,dis,id\n30,"02134",F,"b, c",1\n41,,M,a,2\n30,02139,F,a,3\n')
    zips = Hierarchy([["02134", "021*", "*"], ["02139", "021*", "*"], ["?", "?", "*"]])
    schema = Schema(
        columns=(
            Column("age", Role.QUASI, Kind.NUMERIC),
            Column("zip", Role.QUASI, Kind.CATEGORICAL, hierarchy=zips),
            Column("sex", Role.QUASI, Kind.CATEGORICAL),
            Column("dis", Role.SENSITIVE, Kind.CATEGORICAL),
            Column("id", Role.IDENTIFIER),
        ),
        missing=MissingPolicy.CATEGORY,
    )
    real = csv_arrow.read_dictionary_columns
    tables = []
    for arrow in (True, False):
        monkeypatch.setattr(
            csv_arrow, "read_dictionary_columns", real if arrow else (lambda *a, **k: None)
        )
        tables.append(Table.from_csv(path, schema))
    fast, slow = tables
    np.testing.assert_array_equal(fast.qi, slow.qi)
    np.testing.assert_array_equal(fast.sa, slow.sa)
    for a, b in zip(
        [*fast.qi_columns, fast.sa_column], [*slow.qi_columns, slow.sa_column], strict=True
    ):
        assert list(a.labels) == list(b.labels)


CELL = st.text(alphabet=["a", "B", "0", "7", " ", ",", '"', "\n", "é", "?", "<", "e"], max_size=4)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(st.tuples(st.integers(-5, 99), CELL, CELL, CELL), min_size=1, max_size=8),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_NONNUMERIC, csv.QUOTE_ALL]),
    crlf=st.booleans(),
    declared=st.booleans(),
)
def test_random_files_read_as_pandas_reads_them(
    rows: list[tuple[int, str, str, str]],
    quoting: int,
    crlf: bool,
    declared: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=quoting, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(["age", *TEXT])
    writer.writerows(rows)
    path = tmp_path / "r.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    text = TEXT if declared else TEXT[:2]  # "dis" undeclared: pandas infers its type
    _same(path, monkeypatch, na_values=["?"], text_columns=text, category_columns=text)


def test_out_of_memory_in_pyarrows_reader_is_out_of_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """pyarrow's reader failing to allocate is the machine's fault: exit 3, not an error in
    the file and not a silent fall back to pandas' reader."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from cli_runner import run_cli
    from kerckhoffs.datasets import generate_hospital

    data = tmp_path / "d.csv"
    generate_hospital(50, 1).to_csv(data, index=False)
    schema = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"

    def fail(*a: object, **k: object) -> None:
        raise pa.ArrowMemoryError("malloc of size 1073741824 failed")

    monkeypatch.setattr(pa_csv, "read_csv", fail)
    code, _, err = run_cli(monkeypatch, capsys, "check", data, "-s", schema, "-m", "k=2")
    assert code == 3 and err.startswith("error: out of memory"), err
