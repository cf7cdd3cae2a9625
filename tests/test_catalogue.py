"""The catalogue of bad inputs and faults: whatever goes wrong, the command line
ends with exit code 2 and exactly one ``error:`` line naming the file, column, value or row;
no traceback; and no file or directory left behind, deleted or changed.

Each fault runs ``kerckhoffs`` in-process on a copy of one workspace (demo data, its schema and
hierarchies, a valid release, attack findings, a foreign folder) and compares a snapshot of the
whole workspace (every path with its bytes' SHA-256) before and after. The bad inputs of the
foundation (``test_bad_input.CASES``: missing files, wrong delimiters, malformed schemas and
hierarchies, ...) run through the same harness at the end.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import test_bad_input
from catalogue import ANON, Fault, Setup, args, assert_one_error_line, snapshot
from cli_runner import run_cli
from kerckhoffs.datasets import generate_hospital

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "demo"
SEED_TEXT = "918273645"


# -- the workspace ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """data.csv (300 generated patients), the demo schema with its hierarchies, a valid
    release ``rel`` and a second one ``rel2``, attack findings ``found``, a foreign folder
    ``home`` (a user's files) and a knowledge file."""
    from kerckhoffs.cli import run

    ws = tmp_path_factory.mktemp("workspace")
    generate_hospital(300, 0).to_csv(ws / "data.csv", index=False)
    shutil.copytree(EXAMPLES, ws / "demo")
    home = ws / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export PS1='$ '\n")
    (home / "thesis.tex").write_text("\\chapter{Results}\n")
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        for name, alg in (("rel", "mondrian"), ("rel2", "mondrian")):
            assert run(["anonymize", "data.csv", "-s", "demo/schema.toml", "-a", alg,
                        "-m", "k=3", "-o", name]) == 0  # fmt: skip
        attack = ["attack", "intersection", "-r", "rel", "--other", "rel2", "-k", "data.csv"]
        assert run([*attack, "--schema", "demo/schema.toml", "-o", "found"]) in (0, 1)
    finally:
        os.chdir(cwd)
    (ws / "know.toml").write_text(
        '[population]\nfile = "data.csv"\nid = "patient_id"\n\n'
        '[[not_having]]\nid = "P999999"\nvalue = "Flu"\n'
    )
    return ws


@pytest.fixture
def ws(pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the workspace, as the current directory."""
    target = tmp_path / "ws"
    shutil.copytree(pristine, target, symlinks=True)
    monkeypatch.chdir(target)
    return target


def _edit_csv_group(ws: Path) -> list[str]:
    lines = (ws / "rel" / "release.csv").read_text().splitlines()
    first = lines[1].split(",", 1)
    lines[1] = "99999," + first[1]  # one row moved to a group of its own
    (ws / "rel" / "release.csv").write_text("\n".join(lines) + "\n")
    return ["check", "rel", "-m", "k=3"]


def _delete_csv_rows(ws: Path) -> list[str]:
    lines = (ws / "rel" / "release.csv").read_text().splitlines()
    (ws / "rel" / "release.csv").write_text("\n".join(lines[:-5]) + "\n")
    return ["check", "rel", "-m", "k=3"]


def _flip_parquet(ws: Path) -> list[str]:
    f = ws / "rel" / "release.parquet"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x01
    f.write_bytes(bytes(data))
    return ["check", "rel", "-m", "k=3"]


def _edit_meta(ws: Path) -> list[str]:
    f = ws / "rel" / "release.json"
    meta = json.loads(f.read_text())
    meta["groups"] += 1
    f.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return ["check", "rel", "-m", "k=3"]


def _truncate_meta(cmd: list[str], name: str = "rel") -> Setup:
    def setup(ws: Path) -> list[str]:
        f = ws / name / "release.json"
        f.write_bytes(f.read_bytes()[:100])
        return cmd

    return setup


def _garbage_meta(ws: Path) -> list[str]:
    (ws / "rel" / "release.json").write_text("this is not json\n")
    return ["audit", "-r", "rel", "--schema", "demo/schema.toml"]


def _meta_without_quasi(ws: Path) -> list[str]:
    f = ws / "rel" / "release.json"
    meta = json.loads(f.read_text())
    del meta["quasi"]
    f.write_text(json.dumps(meta))
    return ["check", "rel", "-m", "k=3", "--no-verify"]


def _meta_future(ws: Path) -> list[str]:
    f = ws / "rel" / "release.json"
    meta = json.loads(f.read_text())
    meta["format_version"] = 99
    f.write_text(json.dumps(meta))
    return ["check", "rel", "-m", "k=3"]


def _remove_csv(ws: Path) -> list[str]:
    (ws / "rel" / "release.csv").unlink()
    return ["check", "rel", "-m", "k=3"]


def _no_meta(ws: Path) -> list[str]:
    (ws / "rel" / "release.json").unlink()
    return ["check", "rel", "-m", "k=3"]


def _foreign_file_in_release(ws: Path) -> list[str]:
    (ws / "rel" / "notes.txt").write_text("my notes\n")
    return [*ANON, "-o", "rel", "--overwrite"]


def _symlink_out(ws: Path) -> list[str]:
    (ws / "link").symlink_to(ws / "rel", target_is_directory=True)
    return [*ANON, "-o", "link", "--overwrite"]


def _file_out(ws: Path) -> list[str]:
    (ws / "out.txt").write_text("keep me\n")
    return [*ANON, "-o", "out.txt", "--overwrite"]


def _value_replaced(row: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        lines = (ws / "data.csv").read_text().splitlines()
        cells = lines[2].split(",")
        cells[1] = row  # age of data row 2
        lines[2] = ",".join(cells)
        (ws / "data.csv").write_text("\n".join(lines) + "\n")
        return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=1"]

    return setup


def _duplicate_header(ws: Path) -> list[str]:
    text = (ws / "data.csv").read_text()
    (ws / "data.csv").write_text(text.replace("nationality", "age", 1))
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=1"]


def _huge_value(ws: Path) -> list[str]:
    lines = (ws / "data.csv").read_text().splitlines()
    cells = lines[3].split(",")
    cells[4] = "X" * 200_000  # nationality of data row 3: not in its hierarchy
    lines[3] = ",".join(cells)
    (ws / "data.csv").write_text("\n".join(lines) + "\n")
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=1"]


def _na_is_a_value(ws: Path) -> list[str]:
    """'NA' is a value (not missing), so under missing = "drop" it is not dropped silently:
    the hierarchy of nationality lacks it."""
    text = (ws / "demo" / "schema.toml").read_text()
    (ws / "demo" / "schema.toml").write_text('missing = "drop"\n' + text)
    lines = (ws / "data.csv").read_text().splitlines()
    cells = lines[4].split(",")
    cells[4] = "NA"
    lines[4] = ",".join(cells)
    (ws / "data.csv").write_text("\n".join(lines) + "\n")
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=1"]


def _count_role_input(ws: Path) -> list[str]:
    text = (ws / "demo" / "schema.toml").read_text()
    (ws / "demo" / "schema.toml").write_text(text + '\n[columns.n]\nrole = "count"\n')
    return [*ANON, "-o", "x"]


def _prepare_into_source(ws: Path) -> list[str]:
    raw = ws / "raw"
    raw.mkdir()
    (raw / "adult.csv").write_text("mine\n")
    return ["datasets", "prepare", "adult", "--from", "raw", "--out", "raw/adult.csv",
            "--overwrite"]  # fmt: skip


def _reproduce_unwritable(ws: Path) -> list[str]:
    (ws / "fake-data" / "adult").mkdir(parents=True)
    return ["reproduce", "asap-fig9", "--data", "fake-data", "--out", "/proc/kerckhoffs-x"]


# fmt: off
FAULTS = [
    # 1. --overwrite never deletes what kerckhoffs did not write, nor the inputs
    Fault("overwrite-input-folder", lambda ws: [*ANON, "-o", str(ws), "--overwrite"],
          ("--out", "data.csv")),
    Fault("overwrite-dot", args(*ANON, "-o", ".", "--overwrite"), ("--out .",)),
    Fault("overwrite-home-like", args(*ANON, "-o", "home", "--overwrite"),
          ("home", "not a kerckhoffs release")),
    Fault("overwrite-hierarchy-folder", args(*ANON, "-o", "demo/hierarchies", "--overwrite"),
          ("demo/hierarchies",)),
    Fault("overwrite-schema-folder", args(*ANON, "-o", "demo", "--overwrite"), ("demo",)),
    Fault("overwrite-release-with-foreign-file", _foreign_file_in_release,
          ("rel", "notes.txt")),
    Fault("existing-release-without-overwrite", args(*ANON, "-o", "rel"),
          ("rel", "already exists", "--overwrite")),
    Fault("out-is-a-file", _file_out, ("out.txt", "not a directory")),
    Fault("out-is-a-symlink", _symlink_out, ("link", "symbolic link")),
    Fault("attack-over-release", args("attack", "intersection", "-r", "rel", "--other",
          "rel2", "-k", "data.csv", "--schema", "demo/schema.toml", "-o", "rel2",
          "--overwrite"), ("rel2",)),
    Fault("attack-over-foreign-folder", args("attack", "intersection", "-r", "rel",
          "--other", "rel2", "-k", "data.csv", "--schema", "demo/schema.toml", "-o", "home",
          "--overwrite"), ("home",)),
    Fault("prepare-over-directory", args("datasets", "prepare", "demo", "--rows", "20",
          "--out", "home", "--overwrite"), ("home", "directory")),
    Fault("prepare-over-its-source", _prepare_into_source, ("raw/adult.csv", "input")),
    Fault("demo-over-foreign-folder", args("demo", "--rows", "100", "--out", "home"),
          ("home",)),
    # 2. a tampered release is refused
    Fault("tampered-csv-group", _edit_csv_group, ("release.csv", "changed")),
    Fault("tampered-csv-deleted-rows", _delete_csv_rows, ("release.csv", "changed")),
    Fault("tampered-parquet", _flip_parquet, ("release.parquet", "changed")),
    Fault("tampered-release-json", _edit_meta, ("release.json", "changed")),
    Fault("release-file-missing", _remove_csv, ("release.csv", "missing")),
    Fault("release-dir-without-json", _no_meta, ("rel", "release.json")),
    Fault("release-json-future-format", _meta_future, ("release.json", "99")),
    Fault("release-json-field-missing", _meta_without_quasi, ("release.json", "'quasi'")),
    # 5. damaged metadata: check, audit, attack, --other
    Fault("truncated-json-check", _truncate_meta(["check", "rel", "-m", "k=3"]),
          ("release.json", "not valid JSON")),
    Fault("non-json-audit", _garbage_meta, ("release.json", "not valid JSON")),
    Fault("truncated-json-attack", _truncate_meta(["attack", "intersection", "-r", "rel",
          "--other", "rel2", "-k", "data.csv", "--schema", "demo/schema.toml", "-o", "x"]),
          ("release.json", "not valid JSON")),
    Fault("truncated-json-other", _truncate_meta(["audit", "-r", "rel", "--other", "rel2",
          "-k", "data.csv", "--schema", "demo/schema.toml"], name="rel2"),
          ("rel2", "release.json", "not valid JSON")),
    # 5. unwritable --out, found before the computation
    Fault("anonymize-out-proc", args(*ANON, "-o", "/proc/kerckhoffs-x"), ("/proc",)),
    Fault("anonymize-out-under-file", args(*ANON, "-o", "data.csv/x"),
          ("data.csv", "not a directory")),
    Fault("anonymize-out-dev-full", args(*ANON, "-o", "/dev/full/x"),
          ("/dev/full", "not a directory")),
    Fault("attack-out-proc", args("attack", "intersection", "-r", "rel", "--other", "rel2",
          "-k", "data.csv", "--schema", "demo/schema.toml", "-o", "/proc/kerckhoffs-x"),
          ("/proc",)),
    Fault("prepare-out-proc", args("datasets", "prepare", "demo", "--rows", "20", "--out",
          "/proc/kerckhoffs-x.csv"), ("/proc",)),
    Fault("prepare-out-dev-full", args("datasets", "prepare", "demo", "--rows", "20", "--out",
          "/dev/full/x.csv"), ("/dev/full", "not a directory")),
    Fault("reproduce-out-proc", _reproduce_unwritable, ("/proc/kerckhoffs-x",)),
    # 5. values and options
    Fault("numeric-inf", _value_replaced("inf"), ("'age'", "data row 2", "'inf'")),
    Fault("numeric-1e400", _value_replaced("1e400"), ("'age'", "data row 2", "finite")),
    Fault("numeric-23-digits", _value_replaced("12345678901234567890123"),
          ("'age'", "data row 2", "'12345678901234567890123'", "64 bits")),
    Fault("duplicated-column", _duplicate_header, ("data.csv", "'age'", "twice")),
    Fault("huge-value-cut", _huge_value, ("'nationality'", "data row 3", "200,000 chars")),
    Fault("na-is-a-value", _na_is_a_value, ("'nationality'", "'NA'", "data row 4")),
    Fault("unknown-algorithm-option", args(*ANON, "-o", "x", "-O", "frob=1"),
          ("--option frob=1", "mondrian", "'frob'", "cuts", "median")),
    Fault("option-without-value", args(*ANON, "-o", "x", "-O", "frob"), ("'frob'", "KEY=VALUE")),
    Fault("unknown-format", args(*ANON, "-o", "x", "--format", "xlsx"), ("'xlsx'",)),
    Fault("unknown-scheme", args(*ANON, "-o", "x", "--scheme", "dp"), ("'dp'",)),
    Fault("unknown-algorithm", args("anonymize", "data.csv", "-s", "demo/schema.toml", "-a",
          "nope", "-m", "k=3", "-o", "x"), ("'nope'",)),
    Fault("negative-seed", args(*ANON, "-o", "x", "--seed", "-1"), ("--seed", "-1")),
    Fault("missing-model", args("check", "data.csv", "-s", "demo/schema.toml"),
          ("--model",)),
    Fault("unknown-flag", args("check", "data.csv", "--frob"), ("--frob",)),
    Fault("unknown-command", args("anonymise"), ("anonymise",)),
    Fault("model-infinite", args("check", "data.csv", "-s", "demo/schema.toml", "-m", "k=inf"),
          ("k=inf",)),
    Fault("model-nan", args("check", "data.csv", "-s", "demo/schema.toml", "-m", "l=nan"),
          ("l=nan",)),
    Fault("fail-closed", args(*ANON[:-1], "k=301", "-o", "x"), ("k=301",)),
    Fault("count-role-in-anonymize", _count_role_input, ("'n'", "count")),
    # 6. knowledge and audits
    Fault("not-having-unknown-id", args("audit", "-r", "rel", "--other", "rel2", "-k",
          "know.toml", "--schema", "demo/schema.toml"), ("know.toml", "'P999999'")),
    Fault("knowledge-missing", args("audit", "-r", "rel", "-k", "nope.toml"), ("nope.toml",)),
    Fault("release-missing", args("audit", "-r", "nope"), ("nope",)),
    Fault("unknown-attack", args("attack", "frob", "-r", "rel", "-o", "x"), ("'frob'",)),
    Fault("audit-algorithm-trials-0", args("audit-algorithm", "mondrian", "--trials", "0"),
          ("--trials", "0")),
    Fault("audit-algorithm-sa-values-0", args("audit-algorithm", "mondrian", "--sa-values",
          "0"), ("--sa-values", "0")),
    Fault("audit-algorithm-sa-values-huge", args("audit-algorithm", "mondrian",
          "--sa-values", "100000"), ("--sa-values", "100000")),
    Fault("audit-algorithm-seed-negative", args("audit-algorithm", "mondrian", "--seed", "-1"),
          ("--seed", "-1")),
    Fault("audit-algorithm-unknown-option", args("audit-algorithm", "mondrian", "-O",
          "frob=1"), ("'frob'",)),
    Fault("published-without-schema", args("check", "rel/release.csv", "--published", "-m",
          "k=2"), ("--schema",)),
]
# fmt: on

AREAS = sorted(p.stem for p in Path(__file__).parent.glob("faults_*.py"))
"""The modules adding faults of one area each (``tests/faults_*.py``, a list ``FAULTS``)."""
ALL_FAULTS = FAULTS + [f for area in AREAS for f in importlib.import_module(area).FAULTS]


@pytest.mark.parametrize("fault", ALL_FAULTS, ids=[f.id for f in ALL_FAULTS])
def test_fault(
    fault: Fault, ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = fault.setup(ws)
    before = snapshot(ws)
    with watchdog(fault.id):
        code, out, err = run_cli(monkeypatch, capsys, *argv)
    if fault.codes == (2,):
        assert_one_error_line(code, out, err, fault.keys)
    else:
        assert_no_false_verdict(code, out, err, fault)
    assert snapshot(ws) == before, "the workspace changed"


HANG = 120
"""Seconds after which a fault's command counts as hung (the slowest takes about 2 s): a
hang (a FIFO opened for reading, say) fails its case instead of stopping the whole run."""


class Hung(BaseException):
    """A fault's command ran past :data:`HANG` seconds (a BaseException, so that no
    ``except Exception`` or ``except OSError`` of the command turns it into an error line)."""


@contextlib.contextmanager
def watchdog(fault_id: str) -> Iterator[None]:
    """Raise in the main thread when the command runs past :data:`HANG` seconds (SIGALRM
    interrupts a blocking open or read: its handler raises, so the call is not retried)."""

    def hung(signum: int, frame: object) -> None:
        raise Hung(f"fault {fault_id!r}: the command ran past {HANG} s (a hang)")

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def assert_no_false_verdict(code: int, out: str, err: str, fault: Fault) -> None:
    """A command that could not reach a verdict: an allowed exit code, no traceback, no
    "internal error", every key said, and no line claiming SAFE or ok."""
    text = out + err
    assert "Traceback" not in text and "internal error" not in text, text[-3000:]
    assert code in fault.codes, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err}"
    flat = " ".join(text.split())
    for key in fault.keys:
        assert key in flat, f"{key!r} not said in {text[-2000:]!r}"
    for line in text.splitlines():
        words = line.replace(":", " ").split()
        assert "SAFE" not in words and "ok" not in words, f"a verdict claimed: {line!r}"


def test_fault_ids_are_unique() -> None:
    ids = [f.id for f in ALL_FAULTS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_catalogue_size() -> None:
    """At least 120 faults, with the foundation's bad inputs."""
    assert len(ALL_FAULTS) + len(test_bad_input.CASES) >= 120


@pytest.mark.parametrize("case", test_bad_input.CASES, ids=[c.id for c in test_bad_input.CASES])
def test_foundation_bad_input(
    case: test_bad_input.Case,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, schema = test_bad_input._build(tmp_path, case)
    before = snapshot(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, *test_bad_input._check_args(data, schema, case))
    assert_one_error_line(code, out, err, case.keys)
    assert snapshot(tmp_path) == before


# -- a long error value is cut, not echoed whole ------------------------------------------------
def test_long_value_is_cut(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _huge_value(ws)
    code, out, err = run_cli(monkeypatch, capsys, *argv)
    line = assert_one_error_line(code, out, err, ())
    assert len(line) < 400 and "X" * 79 + "…" in line


# -- two writers, one --out ----------------------------------------------------------------------
def test_a_held_lock_refuses_a_second_writer(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process holds the claim on ``out``: this one fails at once with one line and
    writes nothing; once the holder is gone the same command succeeds."""
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            from kerckhoffs.data.output import output_directory
            with output_directory("out"):
                print("held", flush=True)
                sys.stdin.readline()
        """)],
        cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = snapshot(ws)
        code, out, err = run_cli(monkeypatch, capsys, *ANON, "-o", "out")
        assert_one_error_line(code, out, err, ("out", "another kerckhoffs process"))
        assert snapshot(ws) == before
    finally:
        holder.communicate("\n", timeout=30)
    assert not (ws / "out").exists() and not (ws / ".out.kerckhoffs-lock").exists()
    code, _, err = run_cli(monkeypatch, capsys, *ANON, "-o", "out")
    assert code == 0, err


@pytest.mark.slow
def test_two_concurrent_writers(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ``anonymize --out same`` started together: exactly one succeeds, the other fails
    with one error line, and the release left is whole (it verifies and passes its check).
    Two interpreters started cold on 20,000 rows (about 3 s of CPU): the slow suite's; the
    default suite's sibling is the held claim above (the same lock, refused the same way)."""
    big = ws / "big.csv"
    generate_hospital(20_000, 1).to_csv(big, index=False)
    cmd = [sys.executable, "-m", "kerckhoffs.cli", "anonymize", "big.csv", "-s",
           "demo/schema.toml", "-a", "mondrian", "-m", "k=5", "-o", "same"]  # fmt: skip
    procs = [
        subprocess.Popen(cmd, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[0] == 2)
    assert_one_error_line(2, loser[1], loser[2], ("same",))
    code, _, err = run_cli(monkeypatch, capsys, "check", "same", "-m", "k=5")
    assert code == 0, err
    assert sorted(p.name for p in ws.iterdir() if p.name.startswith(".")) == []


# -- file modes follow the umask ----------------------------------------------------------------
def test_outputs_respect_the_umask(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = os.umask(0o022)
    try:
        code, _, err = run_cli(monkeypatch, capsys, *ANON, "-o", "new/rel")
        assert code == 0, err
        code, _, err = run_cli(
            monkeypatch, capsys, "datasets", "prepare", "demo", "--rows", "20", "--out", "d.csv"
        )
        assert code == 0, err
    finally:
        os.umask(old)
    assert (ws / "new" / "rel").stat().st_mode & 0o777 == 0o755
    assert (ws / "new" / "rel" / "release.json").stat().st_mode & 0o777 == 0o644
    assert (ws / "d.csv").stat().st_mode & 0o777 == 0o644


# -- what --include-other publishes --------------------------------------------------------------
def test_include_other_publishes_other_columns(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    df = pd.read_csv(ws / "data.csv", dtype=str)
    df["ward"] = [f"W{i % 7}" for i in range(len(df))]
    df.to_csv(ws / "data.csv", index=False)
    code, out, err = run_cli(monkeypatch, capsys, *ANON, "-o", "with", "--include-other")
    assert code == 0, err
    assert "--include-other publishes ward unchanged" in " ".join(out.split())
    pub = pd.read_csv(ws / "with" / "release.csv")
    assert sorted(pub["ward"]) == sorted(df["ward"])
    code, _, err = run_cli(monkeypatch, capsys, *ANON, "-o", "without")
    assert code == 0, err
    assert "ward" not in pd.read_csv(ws / "without" / "release.csv").columns
    assert SEED_TEXT not in (ws / "with" / "release.json").read_text()
