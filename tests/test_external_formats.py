"""Releases made by other tools, read as they are published: anonypyx's set-valued cells
(``Black,White``) and ``count`` column, bracketed sets (``{'Black', 'White'}``), and what the
intersection attack says when some targets cannot be located (``not_located``).

The releases are built as :meth:`Release.from_published` builds one from another tool's file:
``read_external`` (data/external.py), then :meth:`Release.from_frames`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kerckhoffs import Column, Hierarchy, Kind, Release, Role, Schema
from kerckhoffs.attacks.composition import intersection_attack, run_intersection
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.locate import NOT_FOUND, locate, locate_all
from kerckhoffs.data.external import expand_counts, read_external
from kerckhoffs.errors import InputError, SchemaError
from kerckhoffs.models import KAnonymity

# anonypyx's human-readable generalisation: numeric "lo-hi", categorical values joined by
# commas (sorted), one line per (class, sensitive value) with its count
ANONYPYX = """age,race,disease,count
19-33,"Black,White",flu,2
19-33,"Black,White",cancer,1
19-33,Asian,flu,3
34-60,"Asian,Black,White",hiv,1
34-60,"Asian,Black,White",flu,2
"""
# another tool: closed intervals and printed Python sets, one line per individual
OTHER = """age,race,disease
[20-29],"{'Black', 'White'}",cancer
[20-29],"{'Black', 'White'}",hiv
[20-39],{Asian},flu
[20-39],{Asian},cancer
[30-49],"{'Black', 'White'}",flu
[30-49],"{'Black', 'White'}",hiv
"""
QUASI = {"age": {"role": "quasi", "kind": "numeric"}, "race": {"role": "quasi"}}
WITH_COUNT = Schema.from_dict(
    {"columns": QUASI | {"disease": {"role": "sensitive"}, "count": {"role": "count"}}}
)
PLAIN = Schema.from_dict({"columns": QUASI | {"disease": {"role": "sensitive"}}})
# targets: 0-2 and 4 are in both releases; 3 (age 70) in neither; 5 (age 50) only in ANONYPYX
POPULATION = pd.DataFrame(
    {
        "age": [25, 30, 40, 70, 20, 50],
        "race": ["White", "Asian", "Black", "White", "Black", "White"],
    }
)


def external(tmp: Path, name: str, text: str, schema: Schema) -> Release:
    """Another tool's table read back (what ``Release.from_published(path, schema)`` does)."""
    path = tmp / name
    path.write_text(text)
    df, meta = read_external(path, schema)
    return Release.from_frames({"release": df}, meta, schema)


@pytest.fixture
def releases(tmp_path: Path) -> list[Release]:
    return [
        external(tmp_path, "anonypyx.csv", ANONYPYX, WITH_COUNT),
        external(tmp_path, "other.csv", OTHER, PLAIN),
    ]


# -- set-valued cells are located ------------------------------------------------------------------
def test_anonypyx_cells_are_located(releases: list[Release]) -> None:
    anonypyx = releases[0]
    cells = anonypyx.generalized_cells()
    assert cells.to_numpy().tolist() == [
        ["19-33", "Black,White"],
        ["19-33", "Asian"],
        ["34-60", "Asian,Black,White"],
    ]
    loc_a, loc_b = locate_all(releases, POPULATION, PLAIN)
    assert loc_a.group.tolist() == [0, 1, 2, NOT_FOUND, 0, 2]
    assert loc_b.group.tolist() == [0, 1, 2, NOT_FOUND, 0, NOT_FOUND]
    assert (loc_a.unlocated, loc_b.unlocated, loc_a.ambiguous) == (1, 2, 0)
    assert loc_a.notes == () and loc_b.notes == ()
    # the kind of a column is read from the data when no schema is given
    assert locate(anonypyx, POPULATION).group.tolist() == [0, 1, 2, NOT_FOUND, 0, 2]


def test_count_column_gives_one_row_per_individual(releases: list[Release]) -> None:
    anonypyx = releases[0]
    assert anonypyx.table.n == 9
    assert anonypyx.partition.sizes.tolist() == [3, 3, 3]
    k = anonypyx.check([KAnonymity(3)])[0]
    assert k.satisfied and k.achieved == 3
    counts = anonypyx.histogram().counts
    labels = anonypyx.table.sa_column.labels.tolist()
    assert {lab: counts[:, i].tolist() for i, lab in enumerate(labels)} == {
        "cancer": [1, 0, 0],
        "flu": [2, 3, 2],
        "hiv": [0, 0, 1],
    }


def test_intersection_counts_targets_not_located(releases: list[Release]) -> None:
    """Targets 0 and 4 are breached ({flu, cancer} & {cancer, hiv}), 1 by A's homogeneous
    class; 3 is in no release and 5 in only one: both are reported as not located."""
    locs = locate_all(releases, POPULATION, PLAIN)
    res = intersection_attack(releases, locs)
    assert res.tuples.breached.tolist() == [True, True, False, False, True, False]
    assert res.tuples.n_values.tolist() == [1, 1, 2, 3, 1, 2]
    assert res.tuples.sa_value.tolist()[:2] == ["cancer", "flu"]
    assert res.not_located == 2 and res.details["unlocated"] == [1, 2]
    assert res.summary()["not_located"] == 2
    assert res.verdict() == (
        "UNSAFE: 3 of 6 rows disclosed by intersection; 2 of 6 targets not located in some release"
    )


def test_registered_attack_reports_targets_not_located(releases: list[Release]) -> None:
    res = run_intersection(releases, Knowledge(population=POPULATION), schema=PLAIN)
    assert res.compromised == 3 and res.not_located == 2
    assert res.verdict().endswith("; 2 of 6 targets not located in some release")
    # every target located: no coverage clause
    located = run_intersection(releases, Knowledge(population=POPULATION.iloc[[0, 2]]))
    assert located.not_located == 0
    assert located.verdict() == "UNSAFE: 1 of 2 rows disclosed by intersection"


# -- set formats -----------------------------------------------------------------------------------
def read_back(tmp: Path, cells: dict[str, list[str]], schema: Schema) -> Release:
    """One group per published line (each line its own SA value ``v0``, ``v1`` ...)."""
    n = len(next(iter(cells.values())))
    text = pd.DataFrame(cells | {"s": [f"v{i}" for i in range(n)]}).to_csv(index=False)
    return external(tmp, "r.csv", text, schema)


def candidates(release: Release, population: pd.DataFrame, schema: Schema) -> list[set[int]]:
    loc = locate(release, population, schema)
    return [set(loc.candidates_of(i).tolist()) for i in range(loc.n)]


RACE = Hierarchy(
    [["White", "W", "*"], ["Black", "NW", "*"], ["Asian", "NW", "*"], ["Other", "NW", "*"]], "race"
)


def test_set_members_may_be_hierarchy_nodes(tmp_path: Path) -> None:
    schema = Schema(
        (Column("race", Role.QUASI, Kind.CATEGORICAL, RACE), Column("s", Role.SENSITIVE))
    )
    rel = read_back(tmp_path, {"race": ["{White, NW}", "Black|Asian", "NW", "[Other]"]}, schema)
    pop = pd.DataFrame({"race": ["White", "Black", "Asian", "Other"]})
    assert candidates(rel, pop, schema) == [{0}, {0, 1, 2}, {0, 1, 2}, {0, 2, 3}]


def test_unknown_set_member_is_one_line_error(tmp_path: Path) -> None:
    schema = Schema(
        (Column("race", Role.QUASI, Kind.CATEGORICAL, RACE), Column("s", Role.SENSITIVE))
    )
    rel = read_back(tmp_path, {"race": ["White,Mars"]}, schema)
    with pytest.raises(InputError) as exc:
        locate(rel, pd.DataFrame({"race": ["White"]}), schema)
    assert str(exc.value) == (
        "column 'race': published cell 'White,Mars' (member 'Mars') is not a node of hierarchy race"
    )


def test_a_label_holding_a_comma_is_read_whole(tmp_path: Path) -> None:
    marital = Hierarchy.flat(["Married, spouse absent", "Divorced"], "marital")
    schema = Schema(
        (Column("m", Role.QUASI, Kind.CATEGORICAL, marital), Column("s", Role.SENSITIVE))
    )
    rel = read_back(tmp_path, {"m": ["Married, spouse absent", "Divorced"]}, schema)
    pop = pd.DataFrame({"m": ["Divorced", "Married, spouse absent"]})
    assert candidates(rel, pop, schema) == [{1}, {0}]
    plain = Schema.build({"m": {"kind": "categorical"}}, "s")  # no hierarchy: text values
    assert candidates(rel, pop, plain) == [{1}, {0}]


def test_numeric_sets_and_intervals(tmp_path: Path) -> None:
    """A bare ``25,30`` is anonypyx's set of two values (a column it treated as categorical);
    the comma form of an interval is bracketed (``[20, 30]``, ARX's ``[20, 30[``)."""
    schema = Schema.build({"age": {"kind": "numeric"}}, "s")
    rel = read_back(tmp_path, {"age": ["25,30", "{20-22, 40-49}", "[20, 30]", "[20, 30["]}, schema)
    pop = pd.DataFrame({"age": [25, 27, 30, 21, 45, 23]})
    assert candidates(rel, pop, schema) == [{0, 2, 3}, {2, 3}, {0, 2}, {1, 2, 3}, {1}, {2, 3}]


# -- the count column ------------------------------------------------------------------------------
def test_read_external_frame_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "anonypyx.csv"
    path.write_text(ANONYPYX.replace("19-33,Asian", "19-33,02139"))
    df, meta = read_external(path, WITH_COUNT)
    assert list(df.columns) == ["age", "race", "disease"]
    assert df.race.tolist()[:6] == ["Black,White"] * 3 + ["02139"] * 3  # text: zeros kept
    assert df.disease.tolist() == ["flu", "flu", "cancer", "flu", "flu", "flu", "hiv", "flu", "flu"]
    assert meta == {
        "scheme": "generalization",
        "quasi": [{"name": "age", "kind": "categorical"}, {"name": "race", "kind": "categorical"}],
        "sensitive": {"name": "disease", "kind": "categorical"},
        "sensitive_values": None,
        "sensitive_mode": "set",
        "provenance": {"algorithm": "external (anonypyx.csv)"},
    }


@pytest.mark.parametrize(
    ("count", "message"),
    [
        ("0", "data row 2: count 0 is not a positive integer"),
        ("-1", "data row 2: count -1 is not a positive integer"),
        ("1.5", "data row 2: count 1.5 is not a positive integer"),
        ("two", "data row 2: count 'two' is not a positive integer"),
        ("", "data row 2: count is missing"),
    ],
)
def test_bad_counts_are_one_line_errors(tmp_path: Path, count: str, message: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"age,race,disease,count\n20,White,flu,2\n20,White,hiv,{count}\n")
    with pytest.raises(InputError) as exc:
        read_external(path, WITH_COUNT)
    assert str(exc.value) == f"{path}: column 'count', {message}"


def test_count_column_must_be_declared_and_present(tmp_path: Path) -> None:
    path = tmp_path / "anonypyx.csv"
    path.write_text(ANONYPYX)
    with pytest.raises(InputError, match=r"column 'count' may say .* role = \"count\""):
        read_external(path, PLAIN)
    as_other = PLAIN.with_column(Column("count", Role.OTHER))
    assert len(read_external(path, as_other)[0]) == 5  # told: one individual per line
    path.write_text(OTHER)
    with pytest.raises(InputError) as exc:
        read_external(path, WITH_COUNT)
    assert str(exc.value) == f"{path}: the count column 'count' named in the schema is missing"


def test_expand_counts_repeats_lines() -> None:
    df = pd.DataFrame({"a": ["x", "y", "z"], "n": [2, 1, 3.0]})
    assert expand_counts(df, "n", "t").a.tolist() == ["x", "x", "y", "z", "z", "z"]
    with pytest.raises(InputError, match=r"^t: column 'n' holds booleans, not counts$"):
        expand_counts(df.assign(n=[True, True, False]), "n", "t")


def test_count_role_in_the_schema() -> None:
    assert WITH_COUNT.count == Column("count", Role.COUNT) and PLAIN.count is None
    two = r"^at most one count column, found 2 \('count', 'n'\)$"
    with pytest.raises(SchemaError, match=two):
        WITH_COUNT.with_column(Column("n", Role.COUNT))
    with pytest.raises(SchemaError, match=r"column 'n': a count column \(.*\) takes no kind"):
        Column("n", Role.COUNT, Kind.NUMERIC)
