"""`kerckhoffs audit` and `kerckhoffs attack` on releases written to disk: Hilb leaks, Hilb++
strict does not, overlapping Mondrian releases breach."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs.cli import main
from kerckhoffs.datasets import generate_hospital

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"


run = run_cli


@pytest.fixture(scope="module")
def hospital(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("hospital")
    df = generate_hospital(1200, 0)
    df.to_csv(d / "h.csv", index=False)
    df.iloc[:800].to_csv(d / "a.csv", index=False)
    df.iloc[400:].to_csv(d / "b.csv", index=False)
    df.drop(columns=["disease"]).to_csv(d / "voters.csv", index=False)
    return d


def anonymize(monkeypatch, capsys, src: Path, out: Path, *args: str) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        monkeypatch, capsys, "anonymize", str(src), "-s", str(SCHEMA), "-o", str(out), *args
    )
    assert code == 0, err


def last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


def test_audit_hilb_unsafe_and_hilb_plus_plus_strict_safe(
    hospital, tmp_path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    for name in ("hilb", "hilb++strict"):
        rel = tmp_path / name
        anonymize(
            monkeypatch, capsys, hospital / "h.csv", rel, "-a", name, "-m", "l=3",
            "--scheme", "bucketization",
        )  # fmt: skip
        code, stdout, _ = run(
            monkeypatch, capsys, "audit", "--release", str(rel), "--schema", str(SCHEMA)
        )
        verdict = last_line(stdout)
        if name == "hilb":
            assert code == 1
            assert verdict.startswith("UNSAFE: ") and "rows disclosed by hilb-order" in verdict
            assert int(verdict.split()[1].replace(",", "")) > 0
        else:
            assert code == 0
            assert verdict.startswith("SAFE: ") and "hilb-order" in verdict


def test_audit_overlapping_mondrian_releases_breach(
    hospital, tmp_path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    for part in ("a", "b"):
        anonymize(
            monkeypatch, capsys, hospital / f"{part}.csv", tmp_path / part, "-a", "mondrian",
            "-m", "k=2",
        )  # fmt: skip
    code, stdout, _ = run(
        monkeypatch, capsys, "audit", "--release", str(tmp_path / "a"),
        "--other", str(tmp_path / "b"), "--knowledge", str(hospital / "voters.csv"),
        "--schema", str(SCHEMA),
    )  # fmt: skip
    assert code == 1
    verdict = last_line(stdout)
    assert verdict.startswith("UNSAFE: ") and "rows disclosed by intersection" in verdict
    # voters.csv lists all 1,200 people; cells of a or b cover all but a few of the others
    assert verdict.endswith("targets not located in some release")
    # alone, the same release has no attack that applies to it: no verdict, so not exit 0
    code, stdout, _ = run(monkeypatch, capsys, "audit", "--release", str(tmp_path / "a"))
    assert code == 1 and last_line(stdout).startswith("NO VERDICT")


def test_attack_writes_tuples_and_summary(  # type: ignore[no-untyped-def]
    hospital, tmp_path, monkeypatch, capsys
) -> None:
    rel = tmp_path / "hilb"
    anonymize(
        monkeypatch, capsys, hospital / "h.csv", rel, "-a", "hilb", "-m", "l=3",
        "--scheme", "bucketization",
    )  # fmt: skip
    out = tmp_path / "attack"
    args = ["attack", "hilb-order", "-r", str(rel), "--schema", str(SCHEMA), "-o", str(out)]
    code, stdout, _ = run(monkeypatch, capsys, *args)
    assert code == 1 and last_line(stdout).startswith("UNSAFE: ")
    tuples = pd.read_csv(out / "tuples.csv")
    assert list(tuples.columns[:4]) == ["row", "sa_value", "posterior", "breached"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["compromised"] == tuples.loc[tuples["breached"], "row"].nunique() > 0
    assert summary["verdict"] == last_line(stdout)
    # an existing output is not replaced without --overwrite
    code, _, err = run(monkeypatch, capsys, *args)
    assert code == 2 and err.startswith(f"error: --out {out} already exists")
    assert "--overwrite" in err


def test_attack_refuses_what_does_not_apply_and_bad_input(
    hospital, tmp_path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    rel = tmp_path / "m"
    anonymize(monkeypatch, capsys, hospital / "h.csv", rel, "-a", "mondrian", "-m", "k=5")
    code, _, err = run(
        monkeypatch, capsys, "attack", "hilb-order", "-r", str(rel), "-o", str(tmp_path / "o")
    )
    assert code == 2 and err.count("\n") == 1 and "does not apply" in err
    assert not (tmp_path / "o").exists()
    code, _, err = run(
        monkeypatch, capsys, "attack", "nope", "-r", str(rel), "-o", str(tmp_path / "o")
    )
    assert code == 2 and "unknown attack 'nope'" in err
    code, _, err = run(monkeypatch, capsys, "audit", "--release", str(tmp_path / "missing"))
    assert code == 2 and "release not found" in err
    bad = tmp_path / "k.toml"
    bad.write_text("[[rule]]\nvalue = 'x'\n")
    code, _, err = run(monkeypatch, capsys, "audit", "-r", str(rel), "--knowledge", str(bad))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_audit_list_names_every_attack(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", "audit", "--list"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert int(exc.value.code or 0) == 0
    text = capsys.readouterr().out
    for name in ("minimality", "hilb-order", "negative-association", "intersection"):
        assert name in text


def test_safe_verdict_never_claims_a_posterior_below_a_bound_it_exceeds() -> None:
    from kerckhoffs.attacks.result import AttackResult, tuple_table

    rows = tuple_table([0, 1], ["one of A|B", "C"], [0.45, 0.2], [False, False])
    res = AttackResult("toy", rows, n_rows=2, bound=1 / 3)
    assert res.safe and "<=" not in res.verdict() and "not for a single value" in res.verdict()
    low = AttackResult("toy", tuple_table([0], ["C"], [0.2], [False]), n_rows=1, bound=1 / 3)
    assert "max posterior 0.2 <= bound 0.333" in low.verdict()
    hit = AttackResult("toy", tuple_table([0, 0], ["C", "D"], [1.0, 0.9], [True, True]), 3)
    assert hit.verdict() == "UNSAFE: 1 of 3 rows disclosed by toy"
