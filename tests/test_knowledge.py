"""External knowledge as data: loading from TOML and CSV, one-line errors
naming the key or row of every malformed item, and the not-having filter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs.attacks.knowledge import (
    DistributionRule,
    Knowledge,
    NotHaving,
    not_having_mask,
    read_population,
)
from kerckhoffs.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCHEMA = ROOT / "examples" / "demo" / "schema.toml"

VOTERS = "pid,age,zip,sex\nP1,34,02134,F\nP2,71,13020,M\nP3,25,02139,F\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "voters.csv").write_text(VOTERS)
    (tmp_path / "h2").mkdir()
    (tmp_path / "h3").mkdir()
    return tmp_path


FULL = """
releases = ["h2", "h3"]

[population]
file = "voters.csv"
id = "pid"

[[not_having]]
id = "P2"
value = "HIV"

[[not_having]]
id = "P3"
value = 7

[[rule]]
value = "PhD"
share = 0.1
where = { age = { max = 25 }, sex = ["F"] }

[[rule]]
value = "Flu"
share = 1
where = { zip = "02134" }
"""


def test_full_toml(folder: Path) -> None:
    (folder / "k.toml").write_text(FULL)
    k = Knowledge.from_path(folder / "k.toml")
    assert k.population is not None
    assert k.population["id"].tolist() == ["P1", "P2", "P3"]
    assert k.population["zip"].tolist() == ["02134", "13020", "02139"]  # leading zeros kept
    assert k.population["age"].tolist() == [34, 71, 25]
    assert k.not_having == [NotHaving("P2", "HIV"), NotHaving("P3", "7")]
    assert k.rules == [
        DistributionRule({"age": {"max": 25}, "sex": ["F"]}, "PhD", 0.1),
        DistributionRule({"zip": ["02134"]}, "Flu", 1.0),
    ]
    assert k.releases == [folder / "h2", folder / "h3"]
    assert k.schema is None


def test_schema_and_csv(folder: Path) -> None:
    (folder / "k.toml").write_text(f'[population]\nfile = "voters.csv"\nschema = "{DEMO_SCHEMA}"\n')
    k = Knowledge.from_toml(folder / "k.toml")
    assert k.schema == DEMO_SCHEMA and k.load_schema() is not None
    assert k.population is not None and k.population["zip"].tolist()[0] == "02134"
    csv = Knowledge.from_path(folder / "voters.csv")
    assert csv.population is not None and len(csv.population) == 3
    assert csv.not_having == [] and csv.releases == []
    with pytest.raises(InputError, match=r"must be a \.toml file or a population table"):
        Knowledge.from_path(folder / "k.json")


MALFORMED = [
    ("colour = 1", "unknown key 'colour'"),
    ("[population]\nfiles = 'x.csv'", "population: unknown key 'files'"),
    ("[population]\nid = 'pid'", "population: missing key 'file'"),
    ("[population]\nfile = 'nope.csv'", "population: file 'nope.csv' not found"),
    ("[population]\nfile = 'voters.csv'\nid = 'who'", "id column 'who' is not in voters.csv"),
    ("[population]\nfile = 3", "population: file must be a non-empty string"),
    ("population = 'voters.csv'", "population must be a table"),
    ("[[not_having]]\nid = 'P1'", r"not_having\[0\]: missing key 'value'"),
    ("[[not_having]]\nid = 1\nvalue = 'x'\n[[not_having]]\nvalue = 'x'", r"not_having\[1\]"),
    ("[[not_having]]\nid = true\nvalue = 'x'", r"not_having\[0\]: id must be"),
    ("[[not_having]]\nid = 1\nvalue = [1]", r"not_having\[0\]: value must be"),
    ("[[not_having]]\nid = 1\nvalue = 'x'\nwho = 2", r"not_having\[0\]: unknown key 'who'"),
    ("not_having = 3", "not_having must be an array of tables"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5", r"rule\[0\]: missing key 'where'"),
    ("[[rule]]\nvalue = 'x'\nshare = 'ten'\nwhere = {a = 1}", r"rule\[0\]: share must be"),
    ("[[rule]]\nvalue = 'x'\nshare = 1.5\nwhere = {a = 1}", r"rule\[0\]: share must be"),
    ("[[rule]]\nvalue = 'x'\nshare = true\nwhere = {a = 1}", r"rule\[0\]: share must be"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {}", r"rule\[0\]: where must be"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = 3", r"rule\[0\]: where must be"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {a = []}", r"rule\[0\]: where.a: a list"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {a = {lo = 1}}", r"where.a: a range.*'lo'"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {a = {min = 'x'}}", "where.a: min must be"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {a = {min = 5, max = 1}}", "min 5 is above"),
    ("[[rule]]\nvalue = 'x'\nshare = 0.5\nwhere = {a = {}}", "where.a: a range takes"),
    ("[[rule]]\nvalue = {}\nshare = 0.5\nwhere = {a = 1}", r"rule\[0\]: value must be"),
    ("releases = 'h2'", "releases must be a list of paths"),
    ("releases = ['h2', 'gone']", r"releases\[1\]: 'gone' not found"),
    ("releases = [", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_items_are_one_line(folder: Path, text: str, message: str) -> None:
    (folder / "k.toml").write_text(text + "\n")
    with pytest.raises(InputError, match=message) as exc:
        Knowledge.from_toml(folder / "k.toml")
    assert "\n" not in str(exc.value)
    assert str(exc.value).startswith("k.toml") or "k.toml" in str(exc.value)


def test_missing_file_and_duplicate_ids(folder: Path) -> None:
    with pytest.raises(InputError, match="knowledge file not found"):
        Knowledge.from_toml(folder / "absent.toml")
    (folder / "dup.csv").write_text("id,age\nA,1\nB,2\nA,3\n")
    (folder / "k.toml").write_text(
        '[population]\nfile = "dup.csv"\n[[not_having]]\nid = "A"\nvalue = "x"\n'
    )
    with pytest.raises(InputError, match=r"id 'A' appears more than once \(rows 0 and 2\)"):
        Knowledge.from_toml(folder / "k.toml")


def test_read_population_types(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("a;b;c;d\n1;01;x;2.5\n2;10;y;\n")
    df = read_population(tmp_path / "p.csv")
    assert df["a"].tolist() == [1, 2]
    assert df["b"].tolist() == ["01", "10"]  # a leading zero keeps the column as text
    assert df["c"].tolist() == ["x", "y"]
    assert df["d"].iloc[0] == 2.5 and pd.isna(df["d"].iloc[1])


# -- the not-having filter ---------------------------------------------------------------------
def test_not_having_mask() -> None:
    values = ["Flu", "HIV", "Cancer"]
    said = [NotHaving("b", "HIV"), NotHaving("a", "Flu"), NotHaving("a", "Measles")]
    mask, ignored = not_having_mask(said, values, 3, ids=np.array(["a", "b", "c"]))
    assert mask.tolist() == [[True, False, False], [False, True, False], [False] * 3]
    assert ignored == 1
    # numeric ids and positions
    mask, _ = not_having_mask([NotHaving(20, "Cancer")], values, 2, ids=np.array([10, 20]))
    assert mask.tolist() == [[False] * 3, [False, False, True]]
    mask, _ = not_having_mask([NotHaving(1, "Cancer"), NotHaving("0", "Flu")], values, 2)
    assert mask.tolist() == [[True, False, False], [False, False, True]]
    with pytest.raises(InputError, match=r"id 5 is not a target position 0\.\.1"):
        not_having_mask([NotHaving(5, "Flu")], values, 2)
    with pytest.raises(InputError, match="id 'z' is not a population id"):
        not_having_mask([NotHaving("z", "Flu")], values, 2, ids=["a", "b"])
    empty, ignored = not_having_mask([], values, 2)
    assert not empty.any() and ignored == 0


def test_knowledge_not_having_mask(folder: Path) -> None:
    (folder / "k.toml").write_text(FULL)
    k = Knowledge.from_toml(folder / "k.toml")
    mask, ignored = k.not_having_mask(["HIV", "7"])
    assert mask.tolist() == [[False, False], [True, False], [False, True]]
    assert ignored == 0
    with pytest.raises(InputError, match="need a population"):
        Knowledge(not_having=[NotHaving(0, "x")]).not_having_mask(["x"])
