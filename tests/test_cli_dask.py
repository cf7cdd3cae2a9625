"""``kerckhoffs anonymize --engine dask`` and ``check --engine dask`` on a local cluster of
this machine: the release is written only when its parts pass, is read back by the in-memory
tools, and the table check prints the in-memory check's numbers. Bad input is one error line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs import Schema, Table
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Partition, Release

pytest.importorskip("distributed")

SCHEMA = """
[columns]
age = { role = "quasi", kind = "numeric" }
zip = { role = "quasi", kind = "numeric" }
disease = { role = "sensitive" }
"""


def data(tmp_path: Path, n: int = 600) -> tuple[Path, Path, pd.DataFrame]:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "zip": rng.integers(100, 130, n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer"], n),
        }
    )
    folder = tmp_path / "data"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n), 3)):
        df.iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA)
    return folder, schema, df


def test_anonymize_and_check_on_dask(
    dask_client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The session's cluster by its address (``--scheduler``) for the release and the checks.
    (A local cluster of the command's own, ``--workers``, is what the README's Dask command
    starts, run by tests/test_readme.py: a second one here would cost 4 s of the default
    suite's CPU.)"""
    folder, schema, df = data(tmp_path)
    out = tmp_path / "release"
    code, stdout, err = run_cli(
        monkeypatch, capsys, "anonymize", folder / "*.parquet", "-s", schema, "-a", "mondrian",
        "-m", "k=5", "-m", "l=2", "-o", out, "--engine", "dask", "--scheduler",
        dask_client.scheduler.address,
    )  # fmt: skip
    assert code == 0, err
    assert "wrote" in stdout
    back = Release.from_published(out)  # the parts, verified against release.json
    assert back.table.n == len(df)
    assert all(x.satisfied for x in back.check())
    assert back.provenance.parameters["k"] == 5 and back.provenance.parameters["l"] == 2
    code, stdout, err = run_cli(
        monkeypatch, capsys, "check", folder, "-s", schema, "-m", "k=2", "-m", "l=2",
        "--engine", "dask", "--scheduler", dask_client.scheduler.address,
    )  # fmt: skip
    table = Table.encode(df, Schema.from_toml(schema))
    expected = Release(table, Partition.by_qi(table)).check([KAnonymity(2), LDiversity(2)])
    assert code == (0 if all(x.satisfied for x in expected) else 1), err
    assert f"{table.n:,} rows, {expected[0].group_ok.size:,} groups" in stdout
    # the release, from its parts on the workers: the in-memory reader's verdict
    code, stdout, err = run_cli(
        monkeypatch, capsys, "check", out, "-m", "k=6", "--engine", "dask", "--scheduler",
        dask_client.scheduler.address,
    )  # fmt: skip
    in_memory = back.check([KAnonymity(6)])[0]
    assert code == (0 if in_memory.satisfied else 1), err
    assert f"checked on Dask): {len(df):,} rows, {in_memory.group_ok.size:,} groups" in stdout
    code, _, err = run_cli(
        monkeypatch, capsys, "check", out, "-s", schema, "-m", "k=2", "--engine", "dask",
    )  # fmt: skip
    assert code == 2 and "--schema: a release says what its columns are" in err


PROVIDER_SCHEMA = SCHEMA + 'site = { role = "provider" }\n'


def published_groups(folder: Path) -> list[tuple[tuple[str, ...], ...]]:
    """Each group of a release as the sorted tuple of its published rows (cells and SA), the
    groups sorted: what two releases of the same partition share whatever their group ids."""
    frame = pd.read_parquet(sorted(folder.glob("release*.parquet")))
    rows = frame.drop(columns="group").astype(str).apply(tuple, axis=1)
    return sorted(tuple(sorted(g)) for _, g in rows.groupby(frame["group"]))


def test_provider_aware_on_dask_publishes_the_in_memory_release(
    dask_client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Paper 003's coordinator with one site per provider on the workers: the same groups and
    cells as the in-memory run, checked (m-privacy from the partitions' providers) and sealed."""
    folder, schema, df = data(tmp_path)
    rng = np.random.default_rng(8)
    sites = rng.choice(["north", "south", "east"], len(df), p=[0.5, 0.3, 0.2])
    for f in folder.glob("*.parquet"):
        f.unlink()
    df = df.assign(site=sites)
    for i, rows in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    schema.write_text(PROVIDER_SCHEMA)
    df.to_csv(tmp_path / "all.csv", index=False)
    args = ["-s", schema, "-a", "provider-aware", "-m", "m-privacy=1", "-m", "k=6"]
    code, _, err = run_cli(monkeypatch, capsys, "anonymize", tmp_path / "all.csv", *args,
                           "-o", tmp_path / "direct")  # fmt: skip
    assert code == 0, err
    dask = ["--engine", "dask", "--scheduler", dask_client.scheduler.address]
    code, stdout, err = run_cli(monkeypatch, capsys, "anonymize", folder, *args, "-o",
                                tmp_path / "dask", *dask)  # fmt: skip
    assert code == 0, err
    assert "3 providers on 2 worker(s) answered" in stdout
    assert published_groups(tmp_path / "dask") == published_groups(tmp_path / "direct")
    assert len(published_groups(tmp_path / "dask")) > 5
    back = Release.from_published(tmp_path / "dask")
    assert "site" not in pd.read_parquet(tmp_path / "dask" / "release-00000.parquet").columns
    assert back.provenance.parameters["m"] == 1 and back.provenance.parameters["k"] == 6
    # the m-privacy verdict is published, not the m achieved (read from provider counts)
    checks = back.published_metadata["checks"]
    assert [c["achieved"] is None for c in checks] == [c["model"] == "m-privacy" for c in checks]
    assert all(c["satisfied"] for c in checks)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "hilb", "-m", "l=2"], "the Dask engine runs mondrian, mondrian+, provider-aware"),
        (
            ["-a", "mondrian", "-m", "k=5", "--seed", "1"],
            "--seed: not available with --engine dask",
        ),
        (
            ["-a", "mondrian", "-m", "k=5", "-O", "categorical_cuts=hierarchy"],
            "takes median and cuts",
        ),
        (["-a", "mondrian", "-m", "m-privacy=1", "-m", "k=5"], "mondrian cannot enforce m-privacy"),
        (["-a", "provider-aware", "-m", "k=5"], "provider-aware needs an m-privacy model"),
        (["-a", "provider-aware", "-m", "k=5", "-O", "frob=1"], "no option 'frob'"),
    ],
)
def test_refusals(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    folder, schema, _ = data(tmp_path, 60)
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", folder, "-s", schema, "-o", tmp_path / "o",
        "--engine", "dask", *args,
    )  # fmt: skip
    assert code == 2
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], err
    assert not (tmp_path / "o").exists()


def test_no_parquet_and_engine_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, schema, _ = data(tmp_path, 60)
    code, _, err = run_cli(
        monkeypatch, capsys, "check", tmp_path / "nothing-*.parquet", "-s", schema, "-m", "k=2",
        "--engine", "dask",
    )  # fmt: skip
    assert code == 2 and "no Parquet file there" in err
    code, _, err = run_cli(
        monkeypatch, capsys, "check", tmp_path / "x.csv", "-s", schema, "-m", "k=2",
        "--workers", "2",
    )  # fmt: skip
    assert code == 2 and "--workers: only with --engine dask" in err
    code, _, err = run_cli(
        monkeypatch, capsys, "check", tmp_path / "x.csv", "-s", schema, "-m", "k=2",
        "--engine", "spark",
    )  # fmt: skip
    assert code == 2 and "--engine 'spark': choose memory or dask" in err


def test_a_file_that_is_not_parquet(
    dask_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Read by kerckhoffs (row groups, text columns as categoricals): a damaged file is one
    error line naming it, exit 2, nothing written."""
    _, schema, _ = data(tmp_path, 60)
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", bad, "-s", schema, "-a", "mondrian", "-m", "k=2",
        "-o", tmp_path / "o", "--engine", "dask", "--scheduler", dask_client.scheduler.address,
    )  # fmt: skip
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert code == 2 and len(lines) == 1 and "bad.parquet: not a readable Parquet file" in lines[0]
    assert "Traceback" not in err and not (tmp_path / "o").exists()


# -- bad Parquet input: one line naming the file and its row, no worker traceback -------------
def _compute_failed(client: Any) -> int:
    """How many "Compute Failed" records (a task that raised, logged with its traceback on
    the worker's stderr) the workers keep in their recent logs."""
    logs = client.get_worker_logs(n=1000)
    return sum("Compute Failed" in msg for records in logs.values() for _, msg in records)


def test_bad_rows_name_the_file_and_its_row_without_a_worker_traceback(
    dask_client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A file of 60 rows split into partitions of 20 (row groups of 20): a bad value in its
    45th row is named as row 45 of that file (not "partition 3 ... data row 5"); the task
    that found it does not fail (a failed task logs a traceback block on the worker's
    stderr, which a local cluster shares with the command). Relative paths: the workers'
    working directory is not the command's."""
    from kerckhoffs.engines import dask_table

    folder, _, df = data(tmp_path, 120)
    for f in folder.glob("*.parquet"):
        f.unlink()
    good, bad = df.iloc[:60], df.iloc[60:].astype({"age": "str"}).reset_index(drop=True)
    bad.loc[44, "age"] = "old"
    good.to_parquet(folder / "a.parquet", row_group_size=20)
    bad.to_parquet(folder / "b.parquet", row_group_size=20)
    monkeypatch.setattr(dask_table, "PART_ROWS", 20)
    monkeypatch.chdir(tmp_path)
    before = _compute_failed(dask_client)
    code, _, err = run_cli(
        monkeypatch, capsys, "check", "data", "-s", "schema.toml", "-m", "k=2", "--engine",
        "dask", "--scheduler", dask_client.scheduler.address,
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert err == "error: data/b.parquet: column 'age' is numeric but data row 45 holds 'old'\n"
    assert _compute_failed(dask_client) == before


def test_empty_files_among_full_ones(
    dask_client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An empty file, and a file whose every row is dropped for a missing value, beside full
    ones: the table is the full files' rows (the in-memory check's numbers), with a note."""
    folder, schema, df = data(tmp_path, 90)
    schema.write_text('missing = "drop"\n' + SCHEMA)
    df.head(0).to_parquet(folder / "part-3.parquet")
    gone = df.head(5).astype({"disease": "str"})
    gone["disease"] = None
    gone.to_parquet(folder / "part-4.parquet")
    address = dask_client.scheduler.address
    code, out, err = run_cli(
        monkeypatch, capsys, "check", folder, "-s", schema, "-m", "k=2", "--engine", "dask",
        "--scheduler", address,
    )  # fmt: skip
    table = Table.encode(df, Schema.from_toml(schema))
    expected = Release(table, Partition.by_qi(table)).check([KAnonymity(2)])[0]
    assert code == (0 if expected.satisfied else 1), err
    assert f"{len(df):,} rows, {expected.group_ok.size:,} groups" in " ".join(out.split())
    assert "part-4.parquet: all 5 row(s) dropped for missing values" in " ".join(out.split())
