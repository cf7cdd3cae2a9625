"""`kerckhoffs audit-algorithm`: the random-worlds auditor on random small tables."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from kerckhoffs.cli.app import app, main

runner = CliRunner()


def test_audit_algorithm_finds_mondrian_violations() -> None:
    res = runner.invoke(
        app, ["audit-algorithm", "mondrian", "--rows", "6", "--trials", "8", "--seed", "1"]
    )
    assert res.exit_code == 1, res.output
    assert "of 8 audited tables violate" in res.output
    assert "smallest violating table" in res.output and "smart" in res.output


def test_audit_algorithm_passes_mondrian_plus() -> None:
    res = runner.invoke(
        app,
        [
            "audit-algorithm",
            "mondrian+",
            "--rows",
            "6",
            "--trials",
            "8",
            "--seed",
            "1",
            "--model",
            "l=2",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "mondrian+ (l=2): 0 of 8 audited tables violate" in " ".join(res.output.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [(["nosuch", "--trials", "1"], "unknown algorithm"), (["mondrian", "--rows", "40"], "--rows")],
)
def test_audit_algorithm_bad_input(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", "audit-algorithm", *args])
    with pytest.raises(SystemExit) as excinfo:
        main()
    err = capsys.readouterr().err
    assert excinfo.value.code == 2
    assert err.startswith("error:") and message in err and len(err.strip().splitlines()) == 1
