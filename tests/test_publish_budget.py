"""Publishing against a privacy budget from Python (:func:`kerckhoffs.publish`), the one
transaction ``kerckhoffs anonymize --ledger`` runs too: charged, refused over budget, left
out over budget, and nothing charged when the write fails.

Hand vectors. 40 generated patients, one row each, except that patient P000002 also owns
row 3 (two visits). Each release is DP at epsilon 0.25 (delta 0) under substitution
neighbours on a substitution ledger, so by group privacy a person with k rows pays
k x 0.25 per release (Dwork and Roth 2014, Theorem 2.2; ``kerckhoffs.dp.composition``):

- after release 1: everyone 0.25, P000002 0.5;
- after release 2: everyone 0.5, P000002 1.0 (exactly the budget of 1: allowed);
- release 3 would take P000002 to 1.5 > 1: refused with ``over_budget="refuse"``; with the
  default ``leave-out`` P000002 is left out and charged nothing, everyone else reaches 0.75.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import kerckhoffs as kh
from kerckhoffs.datasets import generate_hospital, hospital_schema
from kerckhoffs.dp.composition import BudgetExceeded
from kerckhoffs.dp.ledger import Ledger

LEVELS = {"levels": "age:4,sex:1,zip:1,nationality:1"}
EPS = 0.25


@pytest.fixture
def data() -> pd.DataFrame:
    df = generate_hospital(40, seed=0)
    df.loc[3, "patient_id"] = "P000002"  # a second visit of patient P000002
    return df


def _publish(data: pd.DataFrame, tmp_path: Path, name: str, **kw: object) -> kh.Publication:
    return kh.publish(
        data, tmp_path / name, tmp_path / "ledger.json", schema=hospital_schema(),
        algorithm="dp-histogram", models=[f"dp={EPS}"], budget=1, options=LEVELS, **kw,
    )  # fmt: skip


def _spent(tmp_path: Path) -> pd.Series:
    return Ledger.load(tmp_path / "ledger.json").spent()["epsilon"]


def test_each_release_is_charged_by_group_privacy(data: pd.DataFrame, tmp_path: Path) -> None:
    first = _publish(data, tmp_path, "r1")
    assert first.created and first.neighbours == "substitution"
    assert first.entry.epsilon == pytest.approx(EPS, rel=1e-6)
    assert (tmp_path / "r1" / "release.json").is_file()
    spent = _spent(tmp_path)
    assert len(spent) == 39  # 40 rows, 39 people
    assert spent["P000002"] == pytest.approx(2 * EPS, rel=1e-6)
    assert spent.drop("P000002").to_numpy() == pytest.approx([EPS] * 38, rel=1e-6)
    second = _publish(data, tmp_path, "r2")
    assert not second.created
    spent = _spent(tmp_path)
    assert spent["P000002"] == pytest.approx(1.0, rel=1e-6)  # exactly the budget: allowed
    assert spent.drop("P000002").to_numpy() == pytest.approx([0.5] * 38, rel=1e-6)


def test_over_budget_refused_or_left_out(data: pd.DataFrame, tmp_path: Path) -> None:
    _publish(data, tmp_path, "r1")
    _publish(data, tmp_path, "r2")
    before = (tmp_path / "ledger.json").read_bytes()
    with pytest.raises(BudgetExceeded, match=r"1 person\(s\) over the budget"):
        _publish(data, tmp_path, "r3", over_budget="refuse")
    assert not (tmp_path / "r3").exists()
    assert (tmp_path / "ledger.json").read_bytes() == before  # nothing recorded
    third = _publish(data, tmp_path, "r3")  # leave-out: P000002 sits this one out
    spent = _spent(tmp_path)
    assert spent["P000002"] == pytest.approx(1.0, rel=1e-6)
    assert spent.drop("P000002").to_numpy() == pytest.approx([0.75] * 38, rel=1e-6)
    assert third.entry.members.size == 38  # one row each; P000002's two rows left out


def test_a_failed_write_charges_nothing(
    data: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write fails after the release was staged and before the charge is recorded: the
    ledger is as it was, no release is published, and the lock is free for the next run."""
    _publish(data, tmp_path, "r1")
    before = (tmp_path / "ledger.json").read_bytes()

    def disk_full(out_dir: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("kerckhoffs.dp.publish.release_digest", disk_full)
    with pytest.raises(OSError, match="No space left"):
        _publish(data, tmp_path, "r2")
    assert (tmp_path / "ledger.json").read_bytes() == before
    assert not (tmp_path / "r2").exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".r2")]  # no staging left
    monkeypatch.undo()
    _publish(data, tmp_path, "r2")  # the lock was released
    assert _spent(tmp_path)["P000002"] == pytest.approx(1.0, rel=1e-6)


def test_the_command_line_calls_the_same_function(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``anonymize --ledger`` runs :func:`kerckhoffs.dp.publish.publish` (no transaction of
    its own): a call is seen with the command's arguments."""
    import kerckhoffs.dp.publish as publish_module
    from kerckhoffs.cli import run

    seen: list[dict[str, object]] = []

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs)
        raise BudgetExceeded("spied")

    monkeypatch.setattr(publish_module, "publish", spy)
    csv = tmp_path / "d.csv"
    generate_hospital(30, seed=0).to_csv(csv, index=False)
    schema = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"
    code = run(["anonymize", str(csv), "-s", str(schema), "-a", "dp-histogram", "-m",
                "dp=0.5", "-o", str(tmp_path / "rel"), "--ledger", str(tmp_path / "l.json"),
                "--budget", "2", "-O", "levels=age:4,sex:1,zip:1,nationality:1"])  # fmt: skip
    assert code == 2
    assert len(seen) == 1 and seen[0]["budget"] == "2" and seen[0]["algorithm"] == "dp-histogram"
