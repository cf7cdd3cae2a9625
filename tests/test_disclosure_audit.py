"""Issue 13: ``audit`` finds the running example's gastritis leak from the release files
(paper 002, spec ``exclusive.md`` 4.1-4.7, 3.7): candidates by QI values, the ``sequence``
algorithm and the disclosure-set attack on a release read back with a population."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from cli_runner import run_cli
from kerckhoffs import api
from kerckhoffs.algorithms.sequence import sequence as sequence_algorithm
from kerckhoffs.attacks.disclosure_set import disclosure_set_attack
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.disclosure import (
    PAPER_CHK,
    ValueSequence,
    read_sequence,
    read_sequence_by_values,
    read_value_sequence,
)
from kerckhoffs.errors import InputError, NothingReleased, ParameterError
from kerckhoffs.models import parse_model
from kerckhoffs.release import Release

EX = Path(__file__).resolve().parents[1] / "examples" / "disclosure"
BY_AGE = EX / "sequence_by_age.toml"
SCHEMA = EX / "schema.toml"
PEOPLE = EX / "people.csv"
NAMES = ["Alice", "Bob", "Clark", "Diana", "Ellen", "Fen", "George", "Henry", "Ian", "Jason"]
AGES = [21, 27, 31, 36, 43, 49, 52, 58, 63, 67]
G0 = ["flu", "tracheitis", "pneumonia", "tracheitis", "gastritis", "gastritis", "cancer",
      "enteritis", "cancer", "heart disease"]  # fmt: skip
# spec 4.3 Table 6: G_b, where the exclusive strategy releases g3 (DS_e3 = 68, max 11/17)
GB = ["flu", "pneumonia", "tracheitis", "tracheitis", "gastritis", "gastritis", "cancer",
      "cancer", "enteritis", "heart disease"]  # fmt: skip


def _table(conditions: list[str]) -> Table:
    df = pd.DataFrame({"name": NAMES, "age": AGES, "condition": conditions})
    return Table.encode(df, Schema.from_toml(SCHEMA))


def _csv(tmp_path: Path, conditions: list[str]) -> Path:
    f = tmp_path / "t.csv"
    pd.DataFrame({"name": NAMES, "age": AGES, "condition": conditions}).to_csv(f, index=False)
    return f


def _anonymize(monkeypatch, capsys, data: Path, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli(
        monkeypatch, capsys, "anonymize", str(data), "--schema", str(SCHEMA), "-a", "sequence",
        "-O", f"sequence={BY_AGE}", "--model", "recursive-cl=2,2", *extra, "--out", str(out),
    )  # fmt: skip


# -- candidates by QI values ----------------------------------------------------------------------
def test_by_age_equals_table2_partitions() -> None:
    """sequence_by_age.toml on table1.csv is sequence.toml's Table 2 (hand-written files)."""
    table = Table.from_csv(EX / "table1.csv", Schema.from_toml(SCHEMA))
    by_values = read_sequence_by_values(BY_AGE, table)
    by_rows = read_sequence(EX / "sequence.toml", 10)
    assert by_values.names == by_rows.names == ("g1", "g2", "g3")
    for a, b in zip(by_values, by_rows, strict=True):
        assert a.tolist() == b.tolist()
    # the same candidates on a population frame (people.csv: names and ages only)
    people = pd.read_csv(PEOPLE)
    assert list(people.columns) == ["name", "age"]
    assert read_sequence_by_values(BY_AGE, people)[1].tolist() == [0, 0, 1, 1, 1, 2, 2, 2, 3, 3]


def test_value_sequence_cells_and_round_trip() -> None:
    vs = read_value_sequence(BY_AGE)
    labels, per_group = vs.groups(1, pd.DataFrame({"age": [44, 45, 20, 69]}))
    assert labels.tolist() == [1, 2, 0, 3]
    assert vs.cells(1, per_group, ["age", "sex"]).to_dict("list") == {
        "age": ["[20-29]", "[30-44]", "[45-59]", "[60-69]"],
        "sex": ["*"] * 4,
    }
    again = ValueSequence.from_data(json.loads(json.dumps(vs.to_data())))
    assert again == vs
    cat = ValueSequence.from_data([{"name": "s", "sex": [["F"], ["M", "X"]]}])
    lab, pg = cat.groups(0, pd.DataFrame({"sex": ["M", "F", "X"]}))
    assert lab.tolist() == [1, 0, 1]
    assert cat.cells(0, pg, ["sex"])["sex"].tolist() == ["F", "{M,X}"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"age": [[20, 30], [30, 40]]}, "overlap at 30"),
        ({"age": [[40, 30]]}, "lo > hi"),
        ({"age": [["a"], [1, 2]]}, "numeric range"),
        ({"sex": [["F"], ["F", "M"]]}, "more than one set"),
        ({"age": [[0, 99]], "groups": [[0]]}, "row positions"),
    ],
)
def test_bad_value_entries(entry: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ValueSequence.from_data([entry])


def test_value_outside_every_bin_and_wrong_reader(tmp_path: Path) -> None:
    vs = read_value_sequence(BY_AGE)
    with pytest.raises(InputError, match=r"age '75' \(row 1\) is in none of its bins"):
        vs.on(pd.DataFrame({"age": [21, 75]}))
    with pytest.raises(InputError, match="read_sequence_by_values"):
        read_sequence(BY_AGE, 10)


# -- the sequence algorithm -----------------------------------------------------------------------
def test_naive_releases_g2_and_audit_names_ellen_and_fen(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "R"
    code, _, err = _anonymize(monkeypatch, capsys, EX / "table1.csv", out)
    assert code == 0, err
    meta = json.loads((out / "release.json").read_text())
    params = meta["provenance"]["parameters"]
    assert params["released"] == "g2" and params["released_index"] == 1
    assert params["disclosure"] == "naive"
    assert params["sequence"][1] == {"name": "g2", "age": [[20, 29], [30, 44], [45, 59], [60, 69]]}
    text = (out / "release.csv").read_text()
    assert "[30-44]" in text and "[45-59]" in text and "Ellen" not in text and "43" not in text
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "audit", "--release", str(out), "--knowledge", str(PEOPLE),
        "--schema", str(SCHEMA),
    )  # fmt: skip
    assert code == 1
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("UNSAFE by disclosure-set")
    assert "Ellen and Fen (rows 4 and 5) hold gastritis with share 1" in last


def test_attack_from_files_vectors(tmp_path: Path) -> None:
    """Spec 4.4: G_0 at g2: |PER| = 144, DS = 16 tables, E and F certainly c4."""
    rel = sequence_algorithm(_table(G0), [parse_model("recursive-cl=2,2")], sequence=str(BY_AGE))
    rel.write(tmp_path / "R", rel.provenance.models())
    back = Release.from_published(tmp_path / "R", Schema.from_toml(SCHEMA))
    people = pd.read_csv(PEOPLE)
    res = disclosure_set_attack(back, population=people, names=people["name"].to_numpy())
    assert res.details["per_size"] == 144 and res.details["disclosure_size"] == 16
    hit = res.tuples[res.tuples["breached"]]
    assert hit["person"].tolist() == ["Ellen", "Fen"]
    assert hit["sa_value"].tolist() == ["gastritis"] * 2 and hit["posterior"].tolist() == [1, 1]
    # the people in another order: the same verdicts, laid on their rows
    shuffled = people.iloc[::-1].reset_index(drop=True)
    res2 = disclosure_set_attack(back, population=shuffled)
    assert res2.tuples[res2.tuples["breached"]]["row"].tolist() == [4, 5]
    assert "Rows 4 and 5 hold gastritis" in (res2.finding or "")
    # a population that is not the released one is refused in one line
    with pytest.raises(ParameterError, match="does not match the release"):
        disclosure_set_attack(back, population=people.iloc[1:].reset_index(drop=True))
    # without a population the audit says what it needs
    skipped = dict(api.audit(back).skipped)
    assert "people.csv" in skipped["disclosure-set"]


def test_exclusive_releases_nothing_on_the_running_example(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "R"
    code, _, err = _anonymize(
        monkeypatch, capsys, EX / "table1.csv", out, "-O", "disclosure=exclusive"
    )
    assert code == 1 and "releases nothing" in err and err.strip().count("\n") == 0
    assert not out.exists()
    with pytest.raises(NothingReleased, match="reaches 1"):
        sequence_algorithm(
            _table(G0), [parse_model("recursive-cl=2,2")], sequence=BY_AGE, disclosure="inclusive"
        )


def test_gb_exclusive_releases_g3_and_naive_g3_is_safe(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spec 4.7: on G_b every strategy but inclusive releases g3; DS_e3 = 68, max 11/17."""
    data = _csv(tmp_path, GB)
    code, _, err = _anonymize(
        monkeypatch, capsys, data, tmp_path / "E", "-O", "disclosure=exclusive"
    )
    assert code == 0, err
    meta = json.loads((tmp_path / "E" / "release.json").read_text())
    assert meta["provenance"]["parameters"]["released"] == "g3"
    code, _, err = _anonymize(monkeypatch, capsys, data, tmp_path / "N")
    assert code == 0, err
    report = api.audit(tmp_path / "N", knowledge=PEOPLE, schema=SCHEMA)
    res = next(r for r in report.results if r.attack == "disclosure-set")
    assert res.safe and res.details["disclosure_size"] == 68
    assert res.details["max_share"] == "11/17"
    with pytest.raises(NothingReleased):
        sequence_algorithm(
            _table(GB), [parse_model("recursive-cl=2,2")], sequence=BY_AGE, disclosure="inclusive"
        )


def test_sequence_refusals() -> None:
    t = _table(G0)
    with pytest.raises(ParameterError, match="sequence=FILE"):
        sequence_algorithm(t, [parse_model("l=2")])
    with pytest.raises(ParameterError, match="cannot enforce"):
        sequence_algorithm(t, [parse_model("k=2")], sequence=BY_AGE)
    with pytest.raises(ParameterError, match="no candidate of 3 satisfies"):
        sequence_algorithm(t, [parse_model("distinct-l=5")], sequence=BY_AGE)


# -- property: the files say as much as the table -------------------------------------------------
@settings(max_examples=examples(25), deadline=None)
@given(st.permutations(G0))
def test_from_files_equals_in_process(conditions: list[str]) -> None:
    """For any arrangement of G_0's values that the naive publisher releases, the attack on
    the read-back release (people placed by age, SA laid in any order) finds the same
    per-person shares as the attack on the secret table itself (row-based candidates)."""
    table = _table(conditions)
    try:
        rel = sequence_algorithm(table, [parse_model("recursive-cl=2,2")], sequence=BY_AGE)
    except ParameterError:
        return  # no candidate passes: nothing to attack
    frames = rel.frames()
    back = Release.from_frames(frames, rel.metadata(rel.check(rel.provenance.models())))
    people = pd.DataFrame({"name": NAMES, "age": AGES}).sample(frac=1, random_state=1)
    files = disclosure_set_attack(back, population=people.reset_index(drop=True))
    inside = disclosure_set_attack(rel, read_sequence(EX / "sequence.toml", 10), PAPER_CHK)
    order = people.index.to_numpy()  # person i of the shuffled population is table row order[i]
    got = files.tuples.set_index(order).sort_index()
    assert np.allclose(got["posterior"].to_numpy(), inside.tuples["posterior"].to_numpy())
    assert got["breached"].tolist() == inside.tuples["breached"].tolist()
    assert files.details["disclosure_size"] == inside.details["disclosure_size"]
