"""`kerckhoffs anonymize` and `kerckhoffs algorithms`, driven through a stand-in algorithm so
the command's own behaviour (independent check, fail closed, options, schemes) is tested apart
from any real anonymizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import run_cli
from kerckhoffs import Partition, Provenance, Release, Scheme
from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo
from kerckhoffs.datasets import generate_hospital


def one_group(table, models, *, seed=None, split=1, **options):  # type: ignore[no-untyped-def]
    """Stand-in: rows cut into ``split`` contiguous blocks (one group when split = 1)."""
    group = (Partition.single(table.n).group + (range(table.n) if split > 1 else 0)) % split
    return Release(table, Partition(group), provenance=Provenance("one-group", {"split": split}))


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    info = AlgorithmInfo(
        "one-group",
        one_group,
        "test stand-in",
        ("KAnonymity",),
        (Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
        randomized=True,
        options={"split": "contiguous blocks to cut the rows into (default 1)"},
    )
    monkeypatch.setitem(REGISTRY, "one-group", info)


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "h.csv"
    generate_hospital(200, 0).to_csv(f, index=False)
    s = tmp_path / "s.toml"
    s.write_text(
        '[columns.patient_id]\nrole = "identifier"\n[columns.age]\nrole = "quasi"\n'
        '[columns.sex]\nrole = "quasi"\n[columns.disease]\nrole = "sensitive"\n'
    )
    return f, s


run = run_cli


def test_anonymize_writes_after_the_check(stand_in, data, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f, s = data
    out = tmp_path / "rel"
    code, stdout, _ = run(
        monkeypatch,
        capsys,
        "anonymize",
        str(f),
        "-s",
        str(s),
        "-a",
        "one-group",
        "-m",
        "k=50",
        "-o",
        str(out),
    )
    assert code == 0 and "independent check passed" in " ".join(stdout.split())
    meta = json.loads((out / "release.json").read_text())
    assert meta["provenance"] == {
        "algorithm": "one-group",
        "parameters": {"split": 1},
        "version": meta["provenance"]["version"],
    }
    assert "patient_id" not in (out / "release.csv").read_text().splitlines()[0]


def test_anonymize_fails_closed(stand_in, data, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f, s = data
    out = tmp_path / "rel"
    code, _, err = run(
        monkeypatch,
        capsys,
        "anonymize",
        str(f),
        "-s",
        str(s),
        "-a",
        "one-group",
        "-m",
        "k=150",
        "-O",
        "split=2",
        "-o",
        str(out),
    )
    assert code == 2 and err.startswith("error: release not written: k-anonymity")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "s.toml"]


def test_anonymize_scheme_and_errors(stand_in, data, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f, s = data
    out = tmp_path / "b"
    code, _, err = run(
        monkeypatch,
        capsys,
        "anonymize",
        str(f),
        "-s",
        str(s),
        "-a",
        "one-group",
        "-m",
        "k=2",
        "-o",
        str(out),
        "--scheme",
        "bucketization",
        "--seed",
        "7",
    )
    assert code == 0 and (out / "qit.csv").is_file() and (out / "st.csv").is_file()
    assert "warning: --seed" in err and "secret" in err  # a given seed is for tests only
    assert "seed" not in (out / "release.json").read_text()  # and never published
    for args, needle in [
        (["-a", "nope", "-m", "k=2", "-o", str(tmp_path / "x")], "unknown algorithm 'nope'"),
        (["-a", "one-group", "-m", "k=2", "-o", str(out)], "already exists"),
        (["-a", "one-group", "-m", "k=500", "-o", str(tmp_path / "y")], "larger than the table"),
        (["-a", "one-group", "-m", "k=2", "-o", str(tmp_path / "z"), "-O", "split"], "KEY=VALUE"),
        (["-a", "one-group", "-m", "k=2", "-o", str(tmp_path / "w"), "--scheme", "dp"], "not 'dp'"),
    ]:
        code, _, err = run(monkeypatch, capsys, "anonymize", str(f), "-s", str(s), *args)
        assert code == 2 and needle in err and err.count("\n") == 1, err


def test_algorithms_lists_the_registry(stand_in, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    code, stdout, _ = run(monkeypatch, capsys, "algorithms")
    assert code == 0 and "one-group" in stdout
