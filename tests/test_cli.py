"""The ``kerckhoffs`` command line on good input: help, demo, datasets prepare, check.

Commands run in-process (``kerckhoffs.cli.main`` with a patched ``sys.argv``). The rich console
is widened so table rows are not wrapped and can be matched line by line.
"""

from __future__ import annotations

import csv
import itertools
import re
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs import __version__
from kerckhoffs.cli import app as cli
from kerckhoffs.cli import demo as cli_demo
from kerckhoffs.cli import main
from kerckhoffs.cli import output as cli_output
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import generate_hospital, hospital_schema
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Partition, Provenance, Release
from warm_cli import WarmCli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

DEMO_SCHEMA = """\
[columns.patient_id]
role = "identifier"

[columns.age]
role = "quasi"
kind = "numeric"

[columns.sex]
role = "quasi"
kind = "categorical"

[columns.zip]
role = "quasi"
kind = "categorical"

[columns.disease]
role = "sensitive"
"""


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render rich output 250 columns wide so table rows stay on one line (in every module that
    prints to stdout: the commands and the shared printers of cli_output)."""
    wide = cli_output.OutputConsole(width=250)
    for module in (cli, cli_demo, cli_output):
        monkeypatch.setattr(module, "out", wide)


def _table_row(out: str, model: str) -> list[str]:
    """The cells of the results-table row of ``model``."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 2 and cells[1] == model:
            return cells[1:-1]
    raise AssertionError(f"no results row for {model!r} in:\n{out}")


# -- help -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["check", "--help"],
        ["demo", "--help"],
        ["datasets", "prepare", "--help"],
        ["datasets", "--help"],
    ],
    ids=["root", "check", "demo", "datasets-prepare", "datasets"],
)
def test_help_exits_0(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "Usage" in out
    assert "Traceback" not in out + err


def test_help_lists_commands_and_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run_cli(monkeypatch, capsys, "--help")
    for command in ("check", "demo", "datasets"):
        assert command in out
    _, out, _ = run_cli(monkeypatch, capsys, "check", "--help")
    for option in ("--model", "--schema", "--sep", "--worst"):
        assert option in out


def test_version(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "--version")
    assert code == 0
    assert out.strip() == f"kerckhoffs {__version__}"


# -- demo -------------------------------------------------------------------------------------
def test_demo_writes_release_and_is_deterministic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for name in ("first", "second"):
        target = tmp_path / name
        code, out, err = run_cli(
            monkeypatch, capsys, "demo", "--rows", "500", "--seed", "1", "--out", target
        )
        assert code == 0, err
        assert err == ""
        for section in (
            "1. the table as it stands",
            "2. full-domain generalization at fixed levels",
            "3. read the release back from its files and check it independently",
            "7. two hospitals, one release",
            "8. the adversary knows the algorithm",
            "9. two overlapping releases: k-anonymity vs differential privacy",
        ):
            assert section in out, f"missing section {section!r}"
        assert "500 patients" in out
        insiders = out[out.index("7. two hospitals") :].splitlines()
        row = {line.split("│")[1].strip(): line for line in insiders if line.startswith("│ ")}
        assert "patients" in row["mondrian"]  # one hospital reads the other's patients
        assert all("nobody" in row[n] for n in ("mondrian-mprivacy", "provider-aware"))
        composed = out[out.index("9. two overlapping releases") :]
        assert "Mondrian, k = 5" in composed and "DP histogram, epsilon = 1" in composed
        assert sorted(p.name for p in target.iterdir()) == [
            "release.csv",
            "release.json",
            "release.parquet",
        ]
        assert f"in {target}" in out
        outputs.append(target)
    first, second = outputs
    assert (first / "release.csv").read_bytes() == (second / "release.csv").read_bytes()
    assert (first / "release.json").read_bytes() == (second / "release.json").read_bytes()
    # the written release is 5-anonymous and 3-diverse when read back independently
    back = Release.from_published(first)
    assert back.table.n == 500
    assert all(r.satisfied for r in back.check([KAnonymity(5), LDiversity(3)]))
    pd.testing.assert_frame_equal(
        pd.read_csv(first / "release.csv"),
        pd.read_parquet(first / "release.parquet"),
        check_dtype=False,
    )


# -- datasets prepare demo, then check --------------------------------------------------------
def test_prepare_demo_then_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    csv_file = tmp_path / "F.csv"
    schema_file = tmp_path / "S.toml"
    schema_file.write_text(DEMO_SCHEMA)
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "datasets",
        "prepare",
        "demo",
        "--rows",
        "300",
        "--seed",
        "3",
        "--out",
        csv_file,
    )
    assert code == 0, err
    assert "wrote 300 rows" in out
    with open(csv_file, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 300
    assert list(rows[0]) == ["patient_id", "age", "sex", "zip", "nationality", "disease"]
    # the file is the generator's table
    expected = generate_hospital(300, 3)
    assert [r["zip"] for r in rows] == expected["zip"].tolist()
    leading_zero = sorted({r["zip"] for r in rows if r["zip"].startswith("0")})
    assert leading_zero, "the demo should contain zip codes with a leading zero"
    assert all(len(r["zip"]) == 5 for r in rows)

    code, out, err = run_cli(
        monkeypatch, capsys, "check", csv_file, "--schema", schema_file, "--model", "k=1"
    )
    assert code == 0, err
    assert err == ""
    assert "300 rows" in out
    assert "QIs age, sex, zip; SA disease" in out
    assert _table_row(out, "k-anonymity")[-1] == "ok"

    # zips keep their leading zeros through the encoding ...
    table = Table.from_csv(csv_file, Schema.from_toml(schema_file))
    zip_labels = set(table.qi_columns[table.qi_names.index("zip")].labels.tolist())
    assert set(leading_zero) <= zip_labels
    assert all(len(z) == 5 for z in zip_labels)
    # ... and in what check prints
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "check",
        csv_file,
        "--schema",
        schema_file,
        "--model",
        "k=2",
        "--worst",
        "300",
    )
    assert code == 1
    printed = set(re.findall(r"zip=(\d+)", out))
    assert printed and all(len(z) == 5 for z in printed)
    assert any(z.startswith("0") for z in printed)


# -- check: violations ------------------------------------------------------------------------
SMALL = "age,zip,disease\n30,02134,flu\n30,02134,hiv\n31,02135,flu\n31,02135,flu\n32,02139,cold\n"
SMALL_SCHEMA = """\
[columns.age]
role = "quasi"
kind = "numeric"

[columns.zip]
role = "quasi"
kind = "categorical"

[columns.disease]
role = "sensitive"
"""


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    """5 rows, groups {30,02134} x2 (flu, hiv), {31,02135} x2 (flu, flu), {32,02139} x1."""
    data = tmp_path / "small.csv"
    data.write_text(SMALL)
    schema = tmp_path / "small.toml"
    schema.write_text(SMALL_SCHEMA)
    return data, schema


def test_check_violated_k_exits_1_with_worst_groups(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = small
    code, out, err = run_cli(
        monkeypatch, capsys, "check", data, "--schema", schema, "--model", "k=2"
    )
    assert code == 1
    assert err == ""
    assert "5 rows, 3 groups" in out
    _, required, achieved, violating, verdict = _table_row(out, "k-anonymity")
    assert required == "k=2"
    assert achieved == "1 (1 row(s) unique on their QIs)"
    assert violating == "1 of 3"
    assert verdict == "violated"
    assert "worst groups for k-anonymity" in out
    worst = [line.strip() for line in out.splitlines() if line.strip().startswith("group ")]
    assert worst[0] == "group 2: 1 row(s), measure 1 | age=32, zip=02139 | disease: cold×1"
    assert len(worst) == 3  # every group listed (default --worst 5), worst first
    assert "age=30, zip=02134" in worst[1] and "measure 2" in worst[1]


def test_check_several_models_only_violated_ones_listed(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = small
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "check",
        data,
        "--schema",
        schema,
        "--model",
        "k=1",
        "--model",
        "distinct-l=2",
        "--worst",
        "1",
    )
    assert code == 1
    assert _table_row(out, "k-anonymity")[2:] == [
        "1 (1 row(s) unique on their QIs)",
        "0 of 3",
        "ok",
    ]
    _, required, achieved, violating, verdict = _table_row(out, "distinct l-diversity")
    assert (required, achieved, violating, verdict) == ("l=2", "1", "2 of 3", "violated")
    assert "worst groups for k-anonymity" not in out
    assert "worst groups for distinct l-diversity" in out
    worst = [line.strip() for line in out.splitlines() if line.strip().startswith("group ")]
    assert worst == ["group 1: 2 row(s), measure 1 | age=31, zip=02135 | disease: flu×2"]


def test_check_satisfied_exits_0(
    small: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, schema = small
    code, out, err = run_cli(
        monkeypatch, capsys, "check", data, "--schema", schema, "-m", "k=1", "-m", "l=1"
    )
    assert code == 0, err
    assert "worst groups" not in out
    assert _table_row(out, "l-diversity")[-1] == "ok"


def test_check_reports_dropped_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    data.write_text(SMALL + "33,,flu\n")
    schema = tmp_path / "s.toml"
    schema.write_text('missing = "drop"\n' + SMALL_SCHEMA)
    code, out, err = run_cli(
        monkeypatch, capsys, "check", data, "--schema", schema, "--model", "k=1"
    )
    assert code == 0, err
    assert "note: column 'zip': dropped 1 row(s) with missing values" in out
    assert "5 rows" in out


# -- check on a release directory -------------------------------------------------------------
def test_check_release_directory_without_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = Table.encode(generate_hospital(400, 5), hospital_schema())
    levels = {"age": 3, "zip": 3, "nationality": 2}
    release = Release(
        table,
        Partition.by_levels(table, levels),
        provenance=Provenance("fixed-levels", {"levels": levels}),
    )
    target = tmp_path / "rel"
    results = release.write(target, [KAnonymity(2)])
    k = int(results[0].achieved)
    assert k >= 2

    code, out, err = run_cli(monkeypatch, capsys, "check", target, "--model", f"k={k}")
    assert code == 0, err
    assert f"release {target} (fixed-levels, generalization)" in out
    assert f"400 rows, {release.partition.n_groups} groups" in out
    assert _table_row(out, "k-anonymity")[2].startswith(f"{k} (")

    code, out, err = run_cli(monkeypatch, capsys, "check", target, "--model", f"k={k + 1}")
    assert code == 1, err
    assert _table_row(out, "k-anonymity")[2].startswith(f"{k} (")
    assert "worst groups for k-anonymity" in out
    assert re.search(rf"group \d+: {k} row\(s\), measure {k} \| age=\[", out)


# -- the Done-when item: adult ----------------------------------------------------------------
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_adult_prepare_and_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = DATA / "adult"
    if not source.is_dir():
        pytest.skip(f"real data not available: {source}")
    adult = tmp_path / "adult.csv"
    code, out, err = run_cli(
        monkeypatch, capsys, "datasets", "prepare", "adult", "--from", source, "--out", adult
    )
    assert code == 0, err
    assert "wrote 45,222 rows" in out
    with open(adult, newline="") as fh:
        assert sum(1 for _ in fh) == 45_222 + 1  # header + rows

    schema = ROOT / "examples" / "adult" / "schema.toml"
    code, out, err = run_cli(
        monkeypatch, capsys, "check", adult, "--schema", schema, "--model", "k=2"
    )
    assert code == 1, err
    assert err == ""
    _, required, achieved, _, verdict = _table_row(out, "k-anonymity")
    assert required == "k=2"
    assert verdict == "violated"
    match = re.fullmatch(r"1 \(([\d,]+) row\(s\) unique on their QIs\)", achieved)
    assert match, achieved
    reported = int(match.group(1).replace(",", ""))

    # independently: rows whose 8-QI combination occurs exactly once
    raw = tomllib.loads(schema.read_text())
    qis = [name for name, c in raw["columns"].items() if c["role"] == "quasi"]
    assert len(qis) == 8
    df = pd.read_csv(adult, dtype=str, skipinitialspace=True)
    assert len(df) == 45_222
    sizes = df.groupby(qis, sort=False).size()
    assert reported == int((sizes == 1).sum())
    assert f"45,222 rows, {len(sizes):,} groups" in out
    assert "worst groups for k-anonymity" in out


def test_outputs_are_never_clobbered(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """demo --out and datasets prepare --out refuse to replace what is there."""
    import sys

    def run(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["kerckhoffs", *args])
        with pytest.raises(SystemExit) as exc:
            main()
        return int(exc.value.code or 0)

    keep = tmp_path / "mine" / "thesis.txt"
    keep.parent.mkdir()
    keep.write_text("precious")
    assert run("demo", "--rows", "200", "--out", str(keep.parent)) == 2
    assert keep.read_text() == "precious"
    f = tmp_path / "d.csv"
    assert run("datasets", "prepare", "demo", "--rows", "20", "--out", str(f)) == 0
    first = f.read_bytes()
    assert run("datasets", "prepare", "demo", "--rows", "30", "--out", str(f)) == 2
    assert f.read_bytes() == first
    assert run("datasets", "prepare", "demo", "--rows", "30", "--out", str(f), "--overwrite") == 0
    assert f.read_bytes() != first
    capsys.readouterr()


def test_check_a_table_generalized_by_another_tool(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """--published groups rows by their published cells instead of hierarchy look-ups."""

    data = tmp_path / "foreign.csv"
    data.write_text(
        "zip;age;disease\n130**;[20-29];flu\n130**;[20-29];HIV\n148**;[30-39];flu\n"
        "148**;[30-39];cancer\n"
    )
    schema = tmp_path / "s.toml"
    schema.write_text(
        '[columns.zip]\nrole = "quasi"\n[columns.age]\nrole = "quasi"\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "kerckhoffs",
            "check",
            str(data),
            "--schema",
            str(schema),
            "--published",
            "-m",
            "l=2",
            "-m",
            "k=2",
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 0
    assert "published table" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [["algorithms"], ["audit", "--list"], ["reproduce", "--list"], ["demo", "--rows", "300"]],
)
def test_tables_wrap_at_80_columns_instead_of_cutting_words(
    args: list[str], warm_cli: WarmCli, tmp_path: Path
) -> None:
    """Without a terminal rich assumes 80 columns: cells fold between words, no word is cut
    with an ellipsis ("algorit…", "NOT algorithm-sa…") and no line is longer than 80 (the
    commands run in processes of their own whose output is a file and whose environment sets
    no width: the ``warm_cli`` fixture). Every name listed is whole on one line, so it can be
    copied into the next command."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks import register_all
    from kerckhoffs.attacks.registry import ATTACKS
    from kerckhoffs.experiments import all_experiments

    done = warm_cli.run(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    register_all()
    names = {
        "algorithms": sorted(REGISTRY),
        "audit": sorted(ATTACKS),
        "reproduce": [e.name for e in all_experiments()],
    }.get(args[0], [])
    for name in names:
        assert re.search(rf"(^|[\s│])({re.escape(name)})( \*)?($|[\s│])", done.stdout, re.M), name
    if args == ["algorithms"]:
        assert "(NOT algorithm-safe)" in " ".join(done.stdout.replace("│", " ").split())
        assert len(done.stdout.splitlines()) < 3 * len(REGISTRY) + 10  # not 200 lines tall


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (
            RuntimeError("boom"),
            "error: internal error (RuntimeError: boom); this is a bug in kerckhoffs, please "
            "report it (KERCKHOFFS_TRACEBACK=1 shows the traceback)",
        ),
        (
            MemoryError(),
            "error: out of memory: this machine could not hold the computation; run it where "
            "more memory is free, or on a smaller input",
        ),
        (  # what threading raises when no memory is left for a thread's stack
            RuntimeError("can't start new thread"),
            "error: out of memory: this machine could not hold the computation; run it where "
            "more memory is free, or on a smaller input",
        ),
    ],
)
def test_unexpected_failures_are_one_line_exit_3(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: BaseException,
    message: str,
) -> None:
    """A bug or an exhausted machine ends in one ``error:`` line and exit 3, never a
    traceback; running out of memory is not called a bug."""

    def command() -> object:
        def fail(**_: object) -> None:
            raise raised

        return fail

    monkeypatch.delenv("KERCKHOFFS_TRACEBACK", raising=False)
    monkeypatch.setattr(cli, "_command", command)
    assert cli.run(["check", "x.csv"]) == 3
    out, err = capsys.readouterr()
    assert (out, err) == ("", message + "\n")


@pytest.mark.parametrize(
    "command",
    ["anonymize", "check", "audit", "attack", "budget", "disclosure", "reproduce", "demo"],
)
def test_help_prose_fills_its_lines_at_80_columns(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command's description is wrapped at the width, not at its docstring's line breaks:
    no line of it ends where the next line's first word would still have fitted."""
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.run([command, "--help"]) == 0
    text = capsys.readouterr().out
    prose = text[: text.index("╭")].splitlines()
    for line, nxt in itertools.pairwise(prose):
        words = nxt.split()
        if line.strip() and words and not nxt.startswith(("  -", "  *")):
            assert len(line.rstrip()) + 1 + len(words[0]) > 79, (line, nxt)
