"""What verdict lines say: the sensitive subset a verdict was computed on, the rows published
in a group of one, models by the names users type, DP rows without groups, plurals, and the
audit's header and metadata reads on DP releases."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs.datasets import generate_hospital

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEMO = EXAMPLES / "demo" / "schema.toml"
SUBSET = ["Flu", "HIV"]


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide terminal: a table cell holds its whole text on one line."""
    from kerckhoffs.cli.output import out

    monkeypatch.setattr(out, "width", 250)


@pytest.fixture
def hospital(tmp_path: Path) -> tuple[Path, Path]:
    """300 generated patients and the demo schema with a sensitive subset (Flu, HIV)."""
    generate_hospital(300, seed=0).to_csv(tmp_path / "h.csv", index=False)
    text = DEMO.read_text().replace(
        'hierarchy = "hierarchies/', f'hierarchy = "{DEMO.parent}/hierarchies/'
    )
    (tmp_path / "subset.toml").write_text(
        f"sensitive_values = {SUBSET!r}\n".replace("'", '"') + text
    )
    return tmp_path / "h.csv", tmp_path / "subset.toml"


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_a_verdict_on_a_subset_names_it_and_groups_of_one_are_counted(
    hospital: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Mondrian at l=2 on the subset {Flu, HIV}: groups holding neither pass, down to one row.
    The l line names the subset (k, which reads every row, does not) and the output counts the
    rows published alone, counted here from the written file (the oracle)."""
    data, schema = hospital
    out = tmp_path / "rel"
    code, stdout, _ = run_cli(monkeypatch, capsys, "anonymize", data, "-s", schema, "-a",
                              "mondrian", "-m", "l=2", "-m", "k=1", "-o", out)  # fmt: skip
    assert code == 0
    sizes = pd.read_csv(out / "release.csv")["group"].value_counts()
    alone = int((sizes == 1).sum())
    assert alone > 0
    flat = _flat(stdout)
    assert "l=2 on {Flu, HIV}" in flat and "k=1 on" not in flat
    assert f"{alone:,} of 300 rows are published in a group of one" in flat
    code, stdout, _ = run_cli(monkeypatch, capsys, "check", out, "-m", "l=2")
    assert code == 0 and "l=2 on {Flu, HIV}" in _flat(stdout)
    assert f"{alone:,} of 300 rows are published in a group of one" in _flat(stdout)
    # k=2 publishes no group of one, and says nothing about it
    k2 = tmp_path / "k2"
    code, stdout, _ = run_cli(monkeypatch, capsys, "anonymize", data, "-s", schema, "-a",
                              "mondrian", "-m", "l=2", "-m", "k=2", "-o", k2)  # fmt: skip
    assert code == 0 and "group of one" not in stdout
    assert pd.read_csv(k2 / "release.csv")["group"].value_counts().min() >= 2


def test_an_audit_on_a_subset_names_it(
    hospital: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, schema = hospital
    for name in ("a", "b"):
        run_cli(monkeypatch, capsys, "anonymize", data, "-s", schema, "-a", "mondrian", "-m",
                "l=2", "-m", "k=3", "-o", tmp_path / name)  # fmt: skip
    _, stdout, _ = run_cli(monkeypatch, capsys, "audit", "-r", tmp_path / "a", "--other",
                           tmp_path / "b", "-k", data, "--schema", schema)  # fmt: skip
    assert "the release protects only the sensitive values {Flu, HIV}" in _flat(stdout)


def test_model_help_lists_every_model() -> None:
    from kerckhoffs.cli.output import MODEL_HELP
    from kerckhoffs.models.parse import SYNTAX

    for name in SYNTAX.values():
        assert re.search(rf"(^|[ :]){re.escape(name)}=", MODEL_HELP), name
    assert "dp=1" in MODEL_HELP and "m-privacy=2" in MODEL_HELP


def test_refusals_name_models_as_typed(
    hospital: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, _ = hospital
    code, _, err = run_cli(monkeypatch, capsys, "anonymize", data, "-s", DEMO, "-a", "anatomy",
                           "-m", "k=3", "-o", tmp_path / "x")  # fmt: skip
    assert code == 2 and "it enforces: l" in err and "LDiversity" not in err
    code, _, err = run_cli(monkeypatch, capsys, "check", data, "-s", DEMO, "-m", "frob=1")
    assert code == 2 and all(name in err for name in ("m-privacy", "dp"))


def test_dp_lines_have_no_groups_and_its_metadata_is_read(
    hospital: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, _ = hospital
    out = tmp_path / "dp"
    code, _, _ = run_cli(monkeypatch, capsys, "anonymize", data, "-s", DEMO, "-a",
                         "dp-histogram", "-m", "dp=1", "-O",
                         "levels=age:4,sex:1,zip:1,nationality:1", "-o", out)  # fmt: skip
    assert code == 0
    code, stdout, _ = run_cli(monkeypatch, capsys, "check", out, "-m", "dp=1")
    assert code == 0 and "release-wide" in stdout and "0 of 1" not in stdout
    code, stdout, _ = run_cli(monkeypatch, capsys, "audit", "-r", out)
    header = _flat(stdout.split("\n\n")[0].split("disclosure-set")[0])
    assert "models=dp=1" in header and "levels=age:4," in header
    assert "{" not in header and "[" not in header and "'" not in header  # no Python objects
    assert "not read from files" not in stdout
    assert "seed-replay: not run: the metadata publishes no seed" in _flat(stdout)


def test_one_is_singular(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    generate_hospital(1, seed=0).to_csv(tmp_path / "one.csv", index=False)
    code, stdout, _ = run_cli(monkeypatch, capsys, "check", tmp_path / "one.csv", "-s", DEMO,
                              "-m", "k=1")  # fmt: skip
    assert code == 0 and "1 row, 1 group," in _flat(stdout)
    assert "1 rows" not in stdout and "1 groups" not in stdout


def test_the_demo_shows_what_the_look_ahead_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """Section 5 of the demo on its default data (2,000 patients). The oracle is Mondrian+'s
    rule (paper 000 Algorithm 1): a cut is made only if each part could hold l * S_max rows.
    At l = 3, 3 * S_max is above half the table, so no cut: the demo must say so, with the
    numbers. At l = 2 the first median cut passes, so the look-ahead column shows more than
    one group, and the two safe variants are no longer the same random triples."""
    import io

    from rich.console import Console

    from kerckhoffs.cli import demo as cli_demo
    from kerckhoffs.data.table import Table
    from kerckhoffs.datasets import hospital_schema

    df = generate_hospital(2000, seed=0)
    smax = int(df["disease"].value_counts().max())
    top = str(df["disease"].value_counts().idxmax())
    assert 3 * smax > 2000 // 2 and 2 * smax <= 2000 // 2
    buffer = io.StringIO()
    monkeypatch.setattr(cli_demo, "out", Console(file=buffer, width=250))
    monkeypatch.setattr(cli_demo, "_demo_attacks", lambda table, seed: None)
    cli_demo._demo_information_flow(Table.encode(df, hospital_schema()), 0)
    text = buffer.getvalue()
    rows = {
        cells[0]: cells
        for line in text.splitlines()
        if line.startswith("│")
        for cells in [[c.strip() for c in line.strip("│").split("│")]]
    }
    assert int(rows["mondrian++"][1].replace(",", "")) > 1  # look-ahead groups
    assert int(rows["hilb++strict"][1].replace(",", "")) > 1
    assert rows["mondrian++"][2:5] != rows["hilb++strict"][2:5]  # groups, NCP, query error
    flat = " ".join(text.split())
    assert (
        f"At l = 3 (section 4) the look-ahead makes no cut at all on this table: {top}, its most "
        f"frequent disease, is held by {smax} of 2,000 patients, and each part of a cut would "
        f"have to hold 3 x {smax} = {3 * smax:,} rows, more than half the table."
    ) in flat
    assert "On this data safety costs query error (mondrian++ " in flat
