"""Locating individuals in releases (paper 004 Get_equivalence_class; spec composition.md 3.3):
cell strings read back to ranges, the paper's Table 1 cells, locate_region == locate_oracle on
disjoint regions, every member covered by its own group's cells (in-process and read back
from files), Anatomy's exact match, and a brute-force cover check on random releases."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Table
from kerckhoffs.algorithms.registry import get
from kerckhoffs.attacks.locate import (
    AMBIGUOUS,
    NOT_FOUND,
    Location,
    locate,
    locate_rows,
)
from kerckhoffs.data.cells import numeric_cell as _numeric_cell
from kerckhoffs.data.cells import numeric_runs as _numeric_runs
from kerckhoffs.data.cells import set_members as _set_members
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import KAnonymity, LDiversity

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCHEMA = ROOT / "examples" / "demo" / "schema.toml"
INF = math.inf


# -- reading cells ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("*", (-INF, INF)),
        ("37", (37, 37)),
        ("-2.5", (-2.5, -2.5)),
        ("[20-29]", (20, 29)),
        ("[-5--1]", (-5, -1)),
        ("[1e-05-2]", (1e-05, 2)),
        ("[20, 30]", (20, 30)),
        ("20-29", (20, 29)),
        ("<=30", (-INF, 30)),
        ("≤30", (-INF, 30)),
        (">=40", (40, INF)),
        ("≥40", (40, INF)),
        ("3*", (30, 39)),
        ("130**", (13000, 13099)),
    ],
)
def test_numeric_cells(cell: str, expected: tuple[float, float]) -> None:
    assert _numeric_cell(cell, None) == expected


def test_open_ends_exclude_the_bound() -> None:
    lo, hi = _numeric_cell("[20-30)", None)  # type: ignore[misc]
    assert lo == 20 and hi < 30 and hi > 29.999
    lo, hi = _numeric_cell("[20, 30[", None)  # type: ignore[misc]  (ARX)
    assert hi < 30
    assert _numeric_cell("<30", None)[1] < 30  # type: ignore[index]
    assert _numeric_cell(">40", None)[0] > 40  # type: ignore[index]


def test_unreadable_numeric_cells() -> None:
    for cell in ("young", "[30-20]", "2020-01-05", "", "**", "20,30", "20, 30["):
        assert _numeric_cell(cell, None) is None
    young = Hierarchy([["18", "young", "*"], ["25", "young", "*"], ["60", "old", "*"]], "age")
    assert _numeric_cell("young", young) == (18, 25)


@pytest.mark.parametrize(
    ("cell", "members"),
    [
        ("Black,White", ["Black", "White"]),  # anonypyx, AnonyPy
        ("Asian, Black ,White", ["Asian", "Black", "White"]),
        ("{Black, White}", ["Black", "White"]),
        ("{'Black', 'White'}", ["Black", "White"]),  # a printed Python set
        ('["Black", "White"]', ["Black", "White"]),  # a printed list
        ("Black|White", ["Black", "White"]),
        ("[Black; White]", ["Black", "White"]),
        ("a|b,c", ["a|b", "c"]),  # one separator per cell: a comma first, then | then ;
        ("{White}", ["White"]),
        ("{}", []),
        ("{,}", []),
        ("White", None),
        ("130**", None),
        ("", None),
    ],
)
def test_set_members(cell: str, members: list[str] | None) -> None:
    assert _set_members(cell) == members


def test_numeric_sets() -> None:
    assert _numeric_runs("25,30", None) == [(25, 25), (30, 30)]
    assert _numeric_runs("{30, 25, 26}", None) == [(25, 25), (26, 26), (30, 30)]  # not joined
    assert _numeric_runs("{20-29, 25-40, 50}", None) == [(20, 40), (50, 50)]
    assert _numeric_runs("[20, 30]", None) == [(20, 30)]  # an interval, not a set
    assert _numeric_runs("{20, *}", None) == [(-INF, INF)]
    assert _numeric_runs("{20, young}", None) is None
    young = Hierarchy([["18", "young", "*"], ["25", "young", "*"], ["60", "old", "*"]], "age")
    assert _numeric_runs("{young, 60}", young) == [(18, 25), (60, 60)]


# -- the paper's Table 1 (spec 4.1), read as another tool's files ---------------------------------
def hospital(path: Path, ages: list[str], conditions: list[str]) -> Release:
    df = pd.DataFrame(
        {
            "zip": ["130**"] * 12,
            "age": ages,
            "nationality": ["*"] * 12,
            "condition": conditions,
        }
    )
    df.to_csv(path, index=False)
    return Release.from_published(path, Schema.build(["zip", "age", "nationality"], "condition"))


def test_table1_classes(tmp_path: Path) -> None:
    h1 = hospital(tmp_path / "h1.csv", ["<30"] * 4 + ["≥40"] * 4 + ["3*"] * 4, ["x"] * 12)
    h2 = hospital(tmp_path / "h2.csv", ["<35"] * 6 + ["≥35"] * 6, ["x"] * 12)
    pop = pd.DataFrame(
        {"zip": [13012, 13012, 13099, 13050, 14000], "age": [28, 32, 37, 45, 30]}
        | {"nationality": ["US", "FR", "US", "JP", "US"]}
    )
    cells1 = h1.generalized_cells()["age"].tolist()
    cells2 = h2.generalized_cells()["age"].tolist()
    l1, l2 = locate(h1, pop), locate(h2, pop)
    assert [cells1[g] if g >= 0 else None for g in l1.group] == ["<30", "3*", "3*", "≥40", None]
    assert [cells2[g] if g >= 0 else None for g in l2.group] == ["<35", "<35", "≥35", "≥35", None]
    assert l1.unlocated == 1 and l1.group[4] == NOT_FOUND  # zip 14000 is outside 130**


# -- disjoint regions: locate_region == locate_oracle (spec 3.3) ----------------------------------
def numeric_table(n: int, seed: int) -> Table:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 90, n),
            "income": np.round(rng.normal(0, 1000, n), 1),
            "disease": rng.choice(["a", "b", "c", "d"], n),
        }
    )
    return Table.encode(df, Schema.build({"age": {}, "income": {}}, "disease"))


def test_numeric_mondrian_regions_are_exact(tmp_path: Path) -> None:
    t = numeric_table(1500, 0)
    rel = get("mondrian").run(t, [KAnonymity(4)])
    pop = t.to_frame()
    oracle = locate_rows(rel, np.arange(t.n)).group
    assert np.array_equal(locate(rel, pop).group, oracle)
    rel.write(tmp_path / "r", [KAnonymity(4)])
    back = Release.from_published(tmp_path / "r")
    # files publish groups under ids ranked by their cells, not the input order
    assert np.array_equal(locate(back, pop).group, rel.published_numbering()[oracle])


# -- hierarchies: every member is covered by its own group's cells ---------------------------------
def test_demo_mondrian_covers_own_group(tmp_path: Path) -> None:
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(1500, 3)
    t = Table.encode(df, schema)
    rel = get("mondrian").run(t, [KAnonymity(5)])
    own = rel.partition.group
    inproc = locate(rel, df, schema)
    assert inproc.unlocated == 0
    assert _contains(inproc, own).all()
    # the same without a schema: an in-process release knows its columns
    assert np.array_equal(locate(rel, df).candidates, inproc.candidates)
    rel.write(tmp_path / "r", [KAnonymity(5)])
    back = Release.from_published(tmp_path / "r")
    with_schema = locate(back, df, schema)
    assert np.array_equal(with_schema.indptr, inproc.indptr)
    published = rel.published_numbering()[inproc.candidates]  # the files' group ids
    assert _per_row_sets(with_schema) == _per_row_sets(inproc, published)
    assert with_schema.notes == ()
    # read back without the schema, region labels such as 'Asia' cannot be read: noted
    no_schema = locate(back, df)
    assert any("nationality" in note for note in no_schema.notes)


def test_mondrian_on_hierarchy_codes_publishes_overlapping_cells() -> None:
    """Our Mondrian cuts categorical codes at the median, not along hierarchy children (spec
    3.4), so the LCA cells of two halves can overlap: the locator reports the ambiguity."""
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(1500, 3)
    rel = get("mondrian").run(Table.encode(df, schema), [KAnonymity(5)])
    loc = locate(rel, df, schema)
    assert loc.ambiguous > 0
    i = int(np.flatnonzero(loc.group == AMBIGUOUS)[0])
    assert loc.candidates_of(i).size == loc.n_matches[i] >= 2


# -- bucketized releases: exact QIs --------------------------------------------------------------
def test_anatomy_exact_match(tmp_path: Path) -> None:
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(800, 5)
    t = Table.encode(df, schema)
    rel = get("anatomy").run(t, [LDiversity(3)], seed=1)
    written = _written(rel, tmp_path, [LDiversity(3)])
    for r, own in ((rel, rel.partition.group), (written, rel.published_group())):
        loc = locate(r, df)
        assert loc.unlocated == 0
        assert _contains(loc, own).all()
    outsider = df.iloc[:1].assign(age=200)
    assert locate(rel, outsider).group.tolist() == [NOT_FOUND]


def _per_row_sets(loc: Location, candidates: np.ndarray | None = None) -> list[set[int]]:
    """Each target's candidate groups as a set (``candidates`` relabelled, if given)."""
    cand = loc.candidates if candidates is None else candidates
    return [set(cand[loc.indptr[i] : loc.indptr[i + 1]].tolist()) for i in range(loc.n)]


def _written(rel: Release, tmp: Path, models: list) -> Release:
    rel.write(tmp / "b", models)
    return Release.from_published(tmp / "b")


# -- brute force on random releases --------------------------------------------------------------
CITY = Hierarchy(
    [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"], ["c1", "C", "*"]],
    "city",
)
CITY_LEAVES = ["a1", "a2", "b1", "b2", "c1"]


def random_release(seed: int, n: int, n_groups: int) -> tuple[Table, Release, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 40, n),
            "city": rng.choice(CITY_LEAVES, n),
            "sex": rng.choice(["F", "M"], n),
            "disease": rng.choice(["d0", "d1", "d2"], n),
        }
    )
    schema = Schema(
        (
            Column("age", Role.QUASI, Kind.NUMERIC),
            Column("city", Role.QUASI, Kind.CATEGORICAL, CITY),
            Column("sex", Role.QUASI, Kind.CATEGORICAL),
            Column("disease", Role.SENSITIVE),
        )
    )
    t = Table.encode(df, schema)
    rel = Release(t, Partition.from_labels(rng.integers(0, n_groups, n)))
    # the population: the members plus outsiders (ages outside and inside the data's range)
    out = pd.DataFrame(
        {
            "age": rng.integers(15, 45, 10),
            "city": rng.choice(CITY_LEAVES, 10),
            "sex": rng.choice(["F", "M"], 10),
        }
    )
    pop = pd.concat([df.drop(columns="disease"), out], ignore_index=True)
    return t, rel, pop


def brute_cover(t: Table, rel: Release, pop: pd.DataFrame) -> list[set[int]]:
    """Per individual, the groups whose tightest cells cover them (a loop, for tests)."""
    lo, hi = rel.group_bounds()
    ages = t.qi_columns[0].values
    node = {"A": (0, 1), "B": (2, 3), "C": (4, 4)}
    sexes = t.qi_columns[2].labels.tolist()
    out = []
    for _, row in pop.iterrows():
        hits = set()
        for g in range(rel.partition.n_groups):
            ok = ages[lo[g, 0]] <= row["age"] <= ages[hi[g, 0]]
            a, b = int(lo[g, 1]), int(hi[g, 1])
            if a != b:  # the LCA of leaves a..b: a node or the root
                a, b = next((r for r in node.values() if r[0] <= a and b <= r[1]), (0, 4))
            ok &= a <= CITY_LEAVES.index(row["city"]) <= b
            sex = sexes.index(row["sex"]) if row["sex"] in sexes else -1
            ok &= lo[g, 2] != hi[g, 2] or lo[g, 2] == sex
            if ok:
                hits.add(g)
        out.append(hits)
    return out


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), n_groups=st.integers(1, 8))
def test_locate_matches_brute_force(seed: int, n: int, n_groups: int) -> None:
    t, rel, pop = random_release(seed, n, n_groups)
    expect = brute_cover(t, rel, pop)
    loc = locate(rel, pop)
    got = [set(loc.candidates_of(i).tolist()) for i in range(loc.n)]
    assert got == expect
    for i, hits in enumerate(expect):
        want = NOT_FOUND if not hits else (next(iter(hits)) if len(hits) == 1 else AMBIGUOUS)
        assert loc.group[i] == want
    # read back through the published cells, with the hierarchy from a schema
    frames = rel.frames()
    back = Release.from_frames(frames, rel.metadata())
    published = pd.factorize(frames["release"]["group"].to_numpy())[1]  # read id -> file id
    relabel = np.argsort(rel.published_numbering())[published]  # -> the partition's id
    loc2 = locate(back, pop, t.schema)
    got2 = [set(relabel[loc2.candidates_of(i)].tolist()) for i in range(loc2.n)]
    assert got2 == expect


# -- the Location type and errors ----------------------------------------------------------------
def test_location_from_pairs() -> None:
    loc = Location.from_pairs(4, np.array([2, 0, 2, 2]), np.array([5, 1, 3, 5]))
    assert loc.group.tolist() == [1, NOT_FOUND, AMBIGUOUS, NOT_FOUND]
    assert loc.candidates_of(2).tolist() == [3, 5]
    assert loc.n_matches.tolist() == [1, 0, 2, 0]
    assert (loc.unlocated, loc.ambiguous) == (2, 1)


def test_locate_rows() -> None:
    t = numeric_table(20, 1)
    rel = Release(t, Partition.from_labels(np.arange(20) // 5))
    assert locate_rows(rel, [0, 19, -1]).group.tolist() == [0, 3, NOT_FOUND]
    with pytest.raises(ParameterError, match="outside"):
        locate_rows(rel, [20])


def test_bad_populations() -> None:
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(300, 1)
    rel = get("mondrian").run(Table.encode(df, schema), [KAnonymity(5)])
    with pytest.raises(InputError, match="'zip'"):
        locate(rel, df.drop(columns="zip"))
    with pytest.raises(InputError, match=r"'age' has a missing value \(row 3\)"):
        locate(rel, df.assign(age=df.age.astype(float).where(df.index != 3)))
    with pytest.raises(InputError, match="'age' is numeric but row 0 holds 'old'"):
        locate(rel, df.assign(age=["old", *df.age.astype(str).tolist()[1:]]))
    with pytest.raises(InputError, match=r"'Atlantis' \(row 2\) is not a leaf"):
        locate(rel, df.assign(nationality=df.nationality.where(df.index != 2, "Atlantis")), schema)
    with pytest.raises(ParameterError):
        locate(rel, df.to_numpy())  # type: ignore[arg-type]
    assert locate(rel, df.iloc[:0]).n == 0


def test_unreadable_numeric_cell_is_one_line(tmp_path: Path) -> None:
    pd.DataFrame({"age": ["[20-29]", "young"], "s": ["a", "b"]}).to_csv(tmp_path / "r.csv")
    schema = Schema.build({"age": {"kind": "numeric"}}, "s")
    rel = Release.from_published(tmp_path / "r.csv", schema)
    with pytest.raises(InputError, match="column 'age': published cell 'young'") as exc:
        locate(rel, pd.DataFrame({"age": [25]}), schema)
    assert "\n" not in str(exc.value)


def test_masks_and_text_cells(tmp_path: Path) -> None:
    df = pd.DataFrame({"zip": ["021**", "0213*", "*"], "sex": ["F", "*", "M"], "s": list("abc")})
    df.to_csv(tmp_path / "r.csv", index=False)
    schema = Schema.build({"zip": {"kind": "categorical"}, "sex": {}}, "s")
    rel = Release.from_published(tmp_path / "r.csv", schema)
    pop = pd.DataFrame({"zip": ["02134", "02199", "99999"], "sex": ["F", "M", "M"]})
    loc = locate(rel, pop, schema)
    assert [set(loc.candidates_of(i).tolist()) for i in range(3)] == [{0, 1}, {2}, {2}]


def _contains(loc: Location, own: np.ndarray) -> np.ndarray:
    """Whether each individual's own group is among its candidates."""
    who = np.repeat(np.arange(loc.n), loc.n_matches)
    hit = np.zeros(loc.n, dtype=bool)
    hit[who[loc.candidates == own[who]]] = True
    return hit


def test_full_domain_lattice_cells_are_exact(tmp_path: Path) -> None:
    """Full-domain generalization publishes hierarchy labels at one level per QI ([20-29],
    1302*, Europe): regions are disjoint, so the locator finds exactly the oracle's group."""
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(1000, 2)
    rel = get("lattice").run(Table.encode(df, schema), [KAnonymity(5)])
    oracle = rel.partition.group
    assert np.array_equal(locate(rel, df, schema).group, oracle)
    back = _written(rel, tmp_path, [KAnonymity(5)])
    assert np.array_equal(locate(back, df, schema).group, rel.published_group())


def test_cells_covering_separate_ranges(tmp_path: Path) -> None:
    """A label two unrelated nodes share covers both leaf ranges, and a mask may match
    values that are not adjacent in code order: cells made of several ranges."""
    h = Hierarchy([["a", "X", "P", "*"], ["b", "Y", "X", "*"], ["c", "Z", "P", "*"]], "h")
    assert h.leaves.tolist() == ["a", "c", "b"]  # depth-first: the two X nodes are apart
    df = pd.DataFrame({"h": ["X", "Z", "*"], "code": ["*1", "AB", "*1"], "s": ["u", "v", "w"]})
    df.to_csv(tmp_path / "r.csv", index=False)
    schema = Schema(
        (
            Column("h", Role.QUASI, Kind.CATEGORICAL, h),
            Column("code", Role.QUASI, Kind.CATEGORICAL),
            Column("s", Role.SENSITIVE),
        )
    )
    rel = Release.from_published(tmp_path / "r.csv", schema)
    pop = pd.DataFrame({"h": ["a", "b", "c", "c"], "code": ["A1", "B1", "AB", "B1"]})
    loc = locate(rel, pop, schema)
    assert [set(loc.candidates_of(i).tolist()) for i in range(4)] == [{0, 2}, {0, 2}, {1}, {2}]


# -- missing QI values, read as the anonymizer read them -------------------------------------------
def _with_missing_city(tmp_path: Path) -> tuple[pd.DataFrame, Schema, Release, Release]:
    """A table whose categorical QI ``city`` has missing cells (every third row), anonymized by
    Mondrian (k = 3) under ``missing = "category"`` and read back from files."""
    rng = np.random.default_rng(7)
    n = 90
    city = rng.choice(["a", "b", "c", "d"], n).astype(object)
    city[::3] = None
    df = pd.DataFrame(
        {"age": rng.integers(20, 60, n), "city": city, "sa": rng.choice(["x", "y"], n)}
    )
    schema = Schema.build({"age": {}, "city": {"kind": "categorical", "missing": "category"}}, "sa")
    rel = get("mondrian").run(Table.encode(df, schema), [KAnonymity(3)])
    rel.write(tmp_path / "r", [KAnonymity(3)])
    return df, schema, rel, Release.from_published(tmp_path / "r", schema)


def test_missing_qi_values_are_located_under_the_category_policy(tmp_path: Path) -> None:
    """Table.encode publishes a missing ``category`` cell as "?": an individual whose value is
    missing in the population is located where that "?" went (no "missing value" refusal)."""
    df, schema, rel, back = _with_missing_city(tmp_path)
    assert "?" in set(back.table.to_frame()["city"])  # the release holds the label
    own = rel.published_numbering()[rel.partition.group]
    loc = locate(back, df, schema)
    assert loc.unlocated == 0 and _contains(loc, own).all()
    filled = locate(back, df.assign(city=df.city.fillna("?")), schema)
    assert _per_row_sets(loc) == _per_row_sets(filled)
    # a text population whose schema names "NA" as missing: the same people, the same groups
    as_text = df.assign(city=df.city.fillna("NA").astype("string"))
    schema_na = Schema.build(
        {"age": {}, "city": {"kind": "categorical", "missing": "category"}}, "sa", na_values=["NA"]
    )
    assert _per_row_sets(locate(back, as_text, schema_na)) == _per_row_sets(loc)


@pytest.mark.parametrize("policy", ["error", "drop"])
def test_missing_qi_values_are_refused_where_no_release_holds_them(
    tmp_path: Path, policy: str
) -> None:
    df, _, _, back = _with_missing_city(tmp_path)
    schema = Schema.build({"age": {}, "city": {"kind": "categorical", "missing": policy}}, "sa")
    with pytest.raises(
        InputError,
        match=rf"column 'city' has a missing value \(row 0\) and the schema says "
        rf'missing = "{policy}"',
    ):
        locate(back, df, schema)
