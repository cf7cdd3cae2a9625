"""Every bad input (missing file, wrong delimiter, unknown value, ...), at the Python API and at
the command line.

The project's rule: a bad input is one :class:`~kerckhoffs.errors.KerckhoffsError` whose
message names the culprit (column, value, row, parameter); the CLI prints it as ONE line on
stderr starting with ``error:``, exits 2, shows no traceback and leaves no output behind.

Each case builds a tiny table in ``tmp_path`` (10 rows: QIs age numeric, zip categorical with
an ARX hierarchy, sex categorical; SA disease with 3 values), breaks one thing, and checks both
levels. "Data row N" is 1-based and does not count the header line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from kerckhoffs.cli import main
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import (
    HierarchyError,
    InputError,
    KerckhoffsError,
    ParameterError,
    PrivacyCheckFailed,
    SchemaError,
)
from kerckhoffs.models import KAnonymity, parse_model
from kerckhoffs.release import Partition, Provenance, Release

# -- the tiny, valid baseline -------------------------------------------------------------------
HEADER = "age,zip,sex,disease"
ROWS = [
    "34,02134,F,flu",
    "35,02134,F,hiv",
    "36,02135,M,cold",
    "41,02139,M,flu",
    "42,02139,F,hiv",
    "47,02138,M,cold",  # data row 6: the first 02138
    "51,02134,F,flu",
    "55,02135,M,hiv",
    "58,02138,F,cold",
    "60,02139,M,flu",
]
DATA = "\n".join([HEADER, *ROWS]) + "\n"
ZIP_H = "02134;0213*;*\n02135;0213*;*\n02138;0213*;*\n02139;0213*;*\n"
SCHEMA = """\
[columns.age]
role = "quasi"
kind = "numeric"

[columns.zip]
role = "quasi"
kind = "categorical"
hierarchy = "zip.csv"

[columns.sex]
role = "quasi"
kind = "categorical"

[columns.disease]
role = "sensitive"
"""


def _rows(replace: dict[int, str]) -> str:
    """The baseline data with 1-based data rows replaced."""
    rows = [replace.get(i + 1, r) for i, r in enumerate(ROWS)]
    return "\n".join([HEADER, *rows]) + "\n"


@dataclass
class Case:
    """One bad input: files that differ from the baseline, the call, and what must be named."""

    id: str
    error: type[KerckhoffsError]
    keys: tuple[str, ...]
    files: dict[str, str | bytes | None] = field(default_factory=dict)
    data: str = "data.csv"
    schema: str = "schema.toml"
    models: tuple[str, ...] = ("k=1",)
    sep: str | None = None


CASES = [
    # 1. missing files
    Case("missing-data-file", InputError, ("nope.csv", "not found"), data="nope.csv"),
    Case("missing-schema-file", SchemaError, ("nope.toml", "not found"), schema="nope.toml"),
    Case(
        "missing-hierarchy-file",
        HierarchyError,
        ("'zip'", "zip.csv", "not found"),
        files={"zip.csv": None},
    ),
    # 2. wrong delimiter, both ways
    Case(
        "semicolon-file-read-with-comma",
        InputError,
        ("data.csv", "','", "';'", "--sep"),
        files={"data.csv": DATA.replace(",", ";")},
        sep=",",
    ),
    Case(
        "comma-file-read-with-semicolon",
        InputError,
        ("data.csv", "';'", "','", "--sep"),
        sep=";",
    ),
    # 3. schema column the data lacks
    Case(
        "schema-column-not-in-data",
        SchemaError,
        ("'income'", "not in the data"),
        files={"schema.toml": SCHEMA + '\n[columns.income]\nrole = "quasi"\n'},
    ),
    # 4. a data value the hierarchy lacks: column, value and (first) data row
    Case(
        "value-missing-from-hierarchy",
        HierarchyError,
        ("'zip'", "'02138'", "data row 6"),
        files={"zip.csv": ZIP_H.replace("02138;0213*;*\n", "")},
    ),
    Case(
        "sa-value-missing-from-hierarchy",
        HierarchyError,
        ("'disease'", "'cold'", "data row 3"),
        files={
            "schema.toml": SCHEMA + 'hierarchy = "disease.csv"\n',
            "disease.csv": "flu;infection;*\nhiv;infection;*\n",
        },
    ),
    # 5. text in a numeric column
    Case(
        "text-in-numeric-column",
        InputError,
        ("'age'", "data row 4", "'forty-one'"),
        files={"data.csv": _rows({4: "forty-one,02139,M,flu"})},
    ),
    # 6. empty table, empty file
    Case("header-only", InputError, ("no rows",), files={"data.csv": HEADER + "\n"}),
    Case("zero-byte-file", InputError, ("data.csv", "empty"), files={"data.csv": b""}),
    # 7. k above the table size
    Case("k-above-table-size", ParameterError, ("k=100", "10 rows"), models=("k=100",)),
    # 8. l above the SA domain (3 distinct diseases), all three forms
    Case("l-above-sa-domain", ParameterError, ("l=5", "disease", "(3)"), models=("l=5",)),
    Case(
        "distinct-l-above-sa-domain",
        ParameterError,
        ("l=5", "disease", "(3)"),
        models=("distinct-l=5",),
    ),
    Case(
        "entropy-l-above-sa-domain",
        ParameterError,
        ("entropy l=5", "disease", "(3)"),
        models=("entropy-l=5",),
    ),
    # 9. malformed model specs
    Case("model-not-a-number", ParameterError, ("k=abc", "'abc'"), models=("k=abc",)),
    Case("model-unknown-name", ParameterError, ("'q'", "q=3"), models=("q=3",)),
    Case("model-no-value", ParameterError, ("'k'", "NAME=VALUE"), models=("k",)),
    Case("model-k-not-integer", ParameterError, ("k=2.5", "integer"), models=("k=2.5",)),
    Case("model-k-zero", ParameterError, ("k must be a positive integer",), models=("k=0",)),
    # 9. malformed schemas
    Case(
        "schema-toml-syntax-error",
        SchemaError,
        ("schema.toml", "not valid TOML"),
        files={"schema.toml": SCHEMA + "\n[columns.oops\nrole = \n"},
    ),
    Case(
        "schema-unknown-top-level-key",
        SchemaError,
        ("unknown key", "'sensitve_values'"),
        files={"schema.toml": 'sensitve_values = ["hiv"]\n' + SCHEMA},
    ),
    Case(
        "schema-unknown-column-key",
        SchemaError,
        ("'sex'", "unknown key", "'kidn'"),
        files={
            "schema.toml": SCHEMA.replace(
                'kind = "categorical"\n\n[columns.disease]',
                'kidn = "categorical"\n\n[columns.disease]',
            )
        },
    ),
    Case(
        "schema-unknown-role",
        SchemaError,
        ("'age'", "role", "'quasai'"),
        files={"schema.toml": SCHEMA.replace('role = "quasi"', 'role = "quasai"', 1)},
    ),
    Case(
        "schema-unknown-kind",
        SchemaError,
        ("'age'", "kind", "'numerical'"),
        files={"schema.toml": SCHEMA.replace('"numeric"', '"numerical"')},
    ),
    Case(
        "schema-column-without-role",
        SchemaError,
        ("'disease'", "no role"),
        files={"schema.toml": SCHEMA.replace('role = "sensitive"', 'kind = "categorical"')},
    ),
    Case(
        "schema-without-sensitive",
        SchemaError,
        ("exactly one sensitive", "found 0"),
        files={"schema.toml": SCHEMA.replace('role = "sensitive"', 'role = "other"')},
    ),
    Case(
        "schema-unknown-missing-policy",
        SchemaError,
        ("missing", "'ignore'"),
        files={"schema.toml": 'missing = "ignore"\n' + SCHEMA},
    ),
    # 9. malformed hierarchies
    Case(
        "hierarchy-unequal-depth",
        HierarchyError,
        ("'zip'", "row 3", "'02138'", "equal depth"),
        files={"zip.csv": ZIP_H.replace("02138;0213*;*", "02138;0213*;021**;*")},
    ),
    Case(
        "hierarchy-two-parents",
        HierarchyError,
        ("'zip'", "'0213*'", "two parents"),
        files={
            "zip.csv": "02134;0213*;021**;*\n02135;0213*;021**;*\n"
            "02138;0213*;02x**;*\n02139;0213*;021**;*\n"
        },
    ),
    Case(
        "hierarchy-duplicate-leaf",
        HierarchyError,
        ("'zip'", "'02135'", "more than one row"),
        files={"zip.csv": ZIP_H + "02135;0213*;*\n"},
    ),
    Case(
        "hierarchy-two-roots",
        HierarchyError,
        ("'zip'", "single root"),
        files={"zip.csv": ZIP_H.replace("02139;0213*;*", "02139;0213*;top")},
    ),
    Case(
        "hierarchy-comma-separated",
        HierarchyError,
        ("'zip'", "';'"),
        files={"zip.csv": ZIP_H.replace(";", ",")},
    ),
    # 9. missing values under the default policy "error": column and count
    Case(
        "missing-values-policy-error",
        InputError,
        ("'disease'", "2 row(s)", "data row 3"),
        files={"data.csv": _rows({3: "36,02135,M,", 7: "51,02134,F,"})},
    ),
    Case(
        "missing-qi-value-policy-error",
        InputError,
        ("'age'", "1 row(s)", "data row 5"),
        files={"data.csv": _rows({5: ",02139,F,hiv"})},
    ),
    # 9. a misspelt sensitive value
    Case(
        "misspelt-sensitive-value",
        SchemaError,
        ("'hvi'", "'disease'"),
        files={"schema.toml": 'sensitive_values = ["hvi"]\n' + SCHEMA},
    ),
    # more unreadable inputs
    Case(
        "ragged-csv-row",
        InputError,
        ("data.csv", "malformed CSV"),
        files={"data.csv": _rows({2: "35,02134,F,hiv,extra,fields"})},
    ),
    Case(
        "not-utf8-header",
        InputError,
        ("data.csv", "UTF-8"),
        files={"data.csv": ("\u00e2ge,zip,sex,disease\n" + "\n".join(ROWS)).encode("latin-1")},
    ),
    Case(
        "directory-as-data",
        InputError,
        ("adir", "directory"),
        data="adir",
        files={"adir/placeholder.txt": ""},
    ),
    Case(
        "garbage-parquet",
        InputError,
        ("data.parquet", "Parquet"),
        data="data.parquet",
        files={"data.parquet": DATA},
    ),
]


def _build(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    files: dict[str, str | bytes | None] = {
        "data.csv": DATA,
        "schema.toml": SCHEMA,
        "zip.csv": ZIP_H,
        **case.files,
    }
    for name, content in files.items():
        if content is None:
            continue
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return tmp_path / case.data, tmp_path / case.schema


def _api_check(data: Path, schema: Path, models: tuple[str, ...], sep: str | None) -> None:
    """What ``kerckhoffs check`` does, through the public Python API."""
    parsed = [parse_model(m) for m in models]
    table = Table.from_csv(data, Schema.from_toml(schema), sep=sep)
    hist = Release(table, Partition.by_qi(table), provenance=Provenance("none")).histogram()
    for m in parsed:
        m.validate(hist, repr(table.sa_name))


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: object
) -> tuple[int, str, str]:
    """Run ``kerckhoffs ARGS`` in-process; return (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", *map(str, args)])
    with pytest.raises(SystemExit) as excinfo:
        main()
    out, err = capsys.readouterr()
    code = excinfo.value.code
    return (0 if code is None else int(code)), out, err


def assert_error_line(code: int, out: str, err: str, keys: tuple[str, ...]) -> str:
    """Exit 2 and exactly one ``error:`` line on stderr naming every key."""
    assert "Traceback" not in err and "Traceback" not in out, err
    assert code == 2, f"exit {code}\nstdout: {out}\nstderr: {err}"
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
    line = lines[0]
    assert line.startswith("error:") and line[len("error:") :].strip(), line
    for key in keys:
        assert key in line, f"{key!r} not named in {line!r}"
    return line


def _check_args(data: Path, schema: Path, case: Case) -> list[object]:
    args: list[object] = ["check", data, "--schema", schema]
    for m in case.models:
        args += ["--model", m]
    if case.sep is not None:
        args += ["--sep", case.sep]
    return args


# -- the baseline is fine, so each case fails for its one reason ---------------------------------
def test_baseline_is_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = Case("baseline", KerckhoffsError, (), models=("k=1", "l=1", "distinct-l=1"))
    data, schema = _build(tmp_path, base)
    _api_check(data, schema, base.models, None)
    code, out, err = run_cli(monkeypatch, capsys, *_check_args(data, schema, base))
    assert code == 0, err
    assert err == ""
    assert "10 rows" in out


def test_semicolon_file_is_sniffed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = Case("sniffed", KerckhoffsError, (), files={"data.csv": DATA.replace(",", ";")})
    data, schema = _build(tmp_path, base)
    _api_check(data, schema, base.models, None)
    code, _, err = run_cli(monkeypatch, capsys, *_check_args(data, schema, base))
    assert code == 0, err


# -- every case, at both levels -----------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_api_raises_named_error(tmp_path: Path, case: Case) -> None:
    data, schema = _build(tmp_path, case)
    with pytest.raises(case.error) as excinfo:
        _api_check(data, schema, case.models, case.sep)
    message = str(excinfo.value)
    assert "\n" not in message, message
    for key in case.keys:
        key = API_SPELLING.get(key, key)  # the library names keyword arguments, not flags
        assert key in message, f"{key!r} not named in {message!r}"
    assert "--" not in message, f"a library error names a command-line flag: {message!r}"


API_SPELLING = {"--sep": "sep="}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_one_error_line_exit_2(
    tmp_path: Path, case: Case, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = _build(tmp_path, case)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, out, err = run_cli(monkeypatch, capsys, *_check_args(data, schema, case))
    assert_error_line(code, out, err, case.keys)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_check_data_file_without_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = _build(tmp_path, Case("x", KerckhoffsError, ()))
    code, out, err = run_cli(monkeypatch, capsys, "check", data, "--model", "k=2")
    assert_error_line(code, out, err, ("--schema",))


# -- specific API entry points ------------------------------------------------------------------
def test_hierarchy_api_errors(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError, match="equal depth"):
        Hierarchy([["a", "x", "*"], ["b", "*"]], name="h")
    with pytest.raises(HierarchyError, match=r"'x' at level 1 has two parents, 'p' and 'q'"):
        Hierarchy([["a", "x", "p", "*"], ["b", "x", "q", "*"]], name="h")
    with pytest.raises(HierarchyError, match="leaf 'a' appears in more than one row"):
        Hierarchy([["a", "*"], ["b", "*"], ["a", "*"]], name="h")
    with pytest.raises(HierarchyError, match="hierarchy file not found"):
        Hierarchy.read_csv(tmp_path / "none.csv")
    h = Hierarchy([["a", "*"], ["b", "*"]], name="h")
    with pytest.raises(HierarchyError, match=r"column 'c': value 'z' is not a leaf of h"):
        h.leaf_index(["a", "z"], column="c")


def test_data_row_counts_rows_dropped_for_missing_values(tmp_path: Path) -> None:
    """Under missing = "drop", the data row named is still the row of the file."""
    case = Case(
        "drop",
        HierarchyError,
        (),
        files={
            "schema.toml": 'missing = "drop"\n' + SCHEMA,
            "data.csv": _rows({1: ",02134,F,flu", 2: "35,,F,hiv"}),
            "zip.csv": ZIP_H.replace("02138;0213*;*\n", ""),
        },
    )
    data, schema = _build(tmp_path, case)
    with pytest.raises(HierarchyError, match=r"'02138' \(data row 6\)"):
        _api_check(data, schema, ("k=1",), None)
    case.files["data.csv"] = _rows({1: ",02134,F,flu", 6: "forty-seven,02134,M,cold"})
    case.files["zip.csv"] = ZIP_H
    data, schema = _build(tmp_path, case)
    with pytest.raises(InputError, match=r"'age' is numeric but data row 6 holds 'forty-seven'"):
        _api_check(data, schema, ("k=1",), None)


# -- inputs that once crashed with a traceback (regressions) -------------------------------------
NON_UTF8_LATE = ("\n".join([HEADER, *(ROWS * 1000), "34,02134,F,fl\u00e9"]) + "\n").encode(
    "latin-1"
)

CRASHES = [
    pytest.param(
        Case(
            "non-utf8-after-first-buffer",
            InputError,
            ("data.csv", "UTF-8"),
            files={"data.csv": NON_UTF8_LATE},
        ),
        id="non-utf8-after-first-buffer",
    ),
    pytest.param(
        Case(
            "schema-widths-not-a-list",
            SchemaError,
            ("'age'", "widths"),
            files={"schema.toml": SCHEMA.replace('kind = "numeric"', "widths = 5", 1)},
        ),
        id="schema-widths-not-a-list",
    ),
    pytest.param(
        Case(
            "schema-widths-not-numbers",
            SchemaError,
            ("'age'", "widths"),
            files={"schema.toml": SCHEMA.replace('kind = "numeric"', 'widths = ["a"]', 1)},
        ),
        id="schema-widths-not-numbers",
    ),
    pytest.param(
        Case(
            "schema-hierarchy-not-a-path",
            SchemaError,
            ("'zip'", "hierarchy"),
            files={"schema.toml": SCHEMA.replace('"zip.csv"', "5")},
        ),
        id="schema-hierarchy-not-a-path",
    ),
]


@pytest.mark.parametrize("case", CRASHES)
def test_cli_crashing_inputs(
    tmp_path: Path, case: Case, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = _build(tmp_path, case)
    try:
        code, out, err = run_cli(monkeypatch, capsys, *_check_args(data, schema, case))
    except Exception as exc:  # the traceback the rule forbids
        pytest.fail(f"uncaught {type(exc).__name__}: {exc}")
    assert_error_line(code, out, err, case.keys)


# -- 10. no output left behind ------------------------------------------------------------------
def test_prepare_adult_from_nonexistent_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "OUT.csv"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "datasets",
        "prepare",
        "adult",
        "--from",
        "/nonexistent",
        "--out",
        out_file,
    )
    assert_error_line(code, out, err, ("/nonexistent",))
    assert not out_file.exists()
    assert list(tmp_path.iterdir()) == []


def test_prepare_adult_from_incomplete_dir_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "raw"
    src.mkdir()
    (src / "adult.data").write_text("39, State-gov\n")
    out_file = tmp_path / "out" / "OUT.csv"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "datasets",
        "prepare",
        "adult",
        "--from",
        src,
        "--out",
        out_file,
    )
    assert_error_line(code, out, err, ("adult",))
    assert not out_file.exists()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["adult.data", "raw"]


@pytest.mark.parametrize(
    ("args", "keys"),
    [
        (["datasets", "prepare", "nosuch", "--from", "."], ("'nosuch'",)),
        (["datasets", "prepare", "adult"], ("--from",)),
        (["datasets", "prepare", "demo", "--rows", "0"], ("rows", "0")),
        (["datasets", "prepare", "demo", "--seed", "-1"], ("seed", "-1")),
    ],
    ids=["unknown-dataset", "no-from", "zero-rows", "negative-seed"],
)
def test_prepare_bad_arguments_leave_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    keys: tuple[str, ...],
) -> None:
    out_file = tmp_path / "OUT.csv"
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", out_file)
    assert_error_line(code, out, err, keys)
    assert list(tmp_path.iterdir()) == []


def test_prepare_non_csv_out_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "OUT.json"
    code, out, err = run_cli(
        monkeypatch, capsys, "datasets", "prepare", "demo", "--rows", "20", "--out", out_file
    )
    assert_error_line(code, out, err, ("OUT.json", ".csv or .parquet"))
    assert list(tmp_path.iterdir()) == []


def test_demo_bad_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "demo", "--rows", "0", "--out", tmp_path / "d")
    assert_error_line(code, out, err, ("rows",))
    assert list(tmp_path.iterdir()) == []


def _unique_release() -> Release:
    """Every row its own group: k = 1."""
    df = pd.DataFrame(
        {
            "age": [30, 31, 32, 33, 34, 35],
            "sex": ["F", "M", "F", "M", "F", "M"],
            "disease": ["flu", "hiv", "cold", "flu", "hiv", "cold"],
        }
    )
    table = Table.encode(df, Schema.build(["age", "sex"], "disease"))
    return Release(table, Partition.by_qi(table), provenance=Provenance("none"))


def _leftovers(parent: Path, name: str) -> list[str]:
    """``name`` itself and the temporary ``.name.*`` directories of atomic writes."""
    return sorted(
        p.name for p in parent.iterdir() if p.name == name or p.name.startswith(f".{name}.")
    )


def test_release_write_failing_model_leaves_nothing(tmp_path: Path) -> None:
    release = _unique_release()
    target = tmp_path / "rel"
    with pytest.raises(PrivacyCheckFailed, match=r"k=5") as excinfo:
        release.write(target, [KAnonymity(5)])
    assert "not written" in str(excinfo.value)
    assert not target.exists()
    assert _leftovers(tmp_path, "rel") == []
    assert list(tmp_path.iterdir()) == []


def test_release_write_failing_model_keeps_previous_release(tmp_path: Path) -> None:
    """overwrite=True replaces an old release only when the new one passes."""
    release = _unique_release()
    target = tmp_path / "rel"
    release.write(target, [KAnonymity(1)])
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    with pytest.raises(PrivacyCheckFailed):
        release.write(target, [KAnonymity(2)], overwrite=True)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert _leftovers(tmp_path, "rel") == ["rel"]


def test_release_write_without_model_refuses(tmp_path: Path) -> None:
    with pytest.raises(PrivacyCheckFailed, match="without a privacy model"):
        _unique_release().write(tmp_path / "rel", [])
    assert list(tmp_path.iterdir()) == []


def test_release_write_existing_target_refused(tmp_path: Path) -> None:
    target = tmp_path / "rel"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="already exists"):
        _unique_release().write(target, [KAnonymity(1)])
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    assert _leftovers(tmp_path, "rel") == ["rel"]


def test_release_write_crash_midway_leaves_no_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while the files are being written removes the temporary directory."""

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", boom)
    with pytest.raises(OSError, match="disk full"):
        _unique_release().write(tmp_path / "rel", [KAnonymity(1)])
    assert list(tmp_path.iterdir()) == []
