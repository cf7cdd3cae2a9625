"""The one reader of published cells (kerckhoffs.data.cells): exact covers of every format,
and the same published cells read the same way by locate, the minimality attack and the
utility metrics (ours, ARX-style intervals, anonypyx-style sets; hand-made tables, covers
written by hand)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Table
from kerckhoffs.attacks.locate import locate
from kerckhoffs.attacks.minimality import Requirement, minimality_attack
from kerckhoffs.attacks.minimality.structure import cells_boxes, published_boxes
from kerckhoffs.data.cells import (
    code_cover,
    group_code_cover,
    node_cover,
    published_cover,
    read_cells,
)
from kerckhoffs.data.external import read_external
from kerckhoffs.errors import InputError
from kerckhoffs.metrics import group_cover

INF = math.inf
# depth-first leaves: White 0, Black 1, Asian 2, Other 3
RACE = Hierarchy(
    [["White", "W", "*"], ["Black", "NW", "*"], ["Asian", "NW", "*"], ["Other", "NW", "*"]], "race"
)
SCHEMA = Schema(
    (
        Column("age", Role.QUASI, Kind.NUMERIC),
        Column("race", Role.QUASI, Kind.CATEGORICAL, RACE),
        Column("disease", Role.SENSITIVE),
    )
)
# ages are codes 0..7; groups: rows 0-2, 3-5, 6-7
ORIGINAL = pd.DataFrame(
    {
        "age": [21, 24, 28, 33, 35, 38, 41, 45],
        "race": ["Black", "Asian", "Other", "White", "White", "Black", "White", "White"],
        "disease": ["flu", "hiv", "flu", "flu", "cancer", "flu", "flu", "hiv"],
    }
)
GROUP = np.array([0, 0, 0, 1, 1, 1, 2, 2])
STYLES = {
    "kerckhoffs": {"age": ["[21-28]", "[33-38]", "[41-45]"], "race": ["NW", "*", "White"]},
    "arx": {"age": ["[20, 30[", "[30, 40[", "[40, 50["], "race": ["NW", "*", "White"]},
    "anonypyx": {
        "age": ["21-28", "33,35,38", "41-45"],
        "race": ["Asian,Black,Other", "Black,White", "White"],
    },
}
# the code box of each group, written by hand: (age lo, race lo), (age hi, race hi)
COVERS = {
    "kerckhoffs": ([[0, 1], [3, 0], [6, 0]], [[2, 3], [5, 3], [7, 0]]),
    "arx": ([[0, 1], [3, 0], [6, 0]], [[2, 3], [5, 3], [7, 0]]),
    "anonypyx": ([[0, 1], [3, 0], [6, 0]], [[2, 3], [5, 1], [7, 0]]),
}
# people outside the table: who each style's cells cover (groups, by hand)
STRANGERS = pd.DataFrame({"age": [30, 34, 34, 29], "race": ["Asian", "Asian", "White", "Other"]})
LOCATED = {
    "kerckhoffs": [set(), {1}, {1}, set()],
    "arx": [{1}, {1}, {1}, {0}],
    "anonypyx": [set(), set(), set(), set()],
}


def in_process(style: str) -> Release:
    """The original table with the style's cells as the release's own cells."""
    table = Table.encode(ORIGINAL, SCHEMA)
    cells = pd.DataFrame(STYLES[style])
    return Release(table, Partition(GROUP), cells=cells[[*table.qi_names]])


def read_back(tmp: Path, style: str) -> Release:
    """The style's cells written as another tool's CSV (one line per row) and read back."""
    rows = {k: [v[g] for g in GROUP] for k, v in STYLES[style].items()}
    path = tmp / f"{style}.csv"
    pd.DataFrame(rows | {"disease": ORIGINAL.disease}).to_csv(path, index=False)
    df, meta = read_external(path, SCHEMA)
    return Release.from_frames({"release": df}, meta, SCHEMA)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_one_cover_for_locate_minimality_and_metrics(tmp_path: Path, style: str) -> None:
    lo, hi = (np.array(x) for x in COVERS[style])
    rel = in_process(style)
    for got in (group_cover(rel), published_boxes(rel)):  # metrics, minimality (own rows)
        assert got[0].tolist() == lo.tolist() and got[1].tolist() == hi.tolist()
    back = read_back(tmp_path, style)
    pop = Table.encode(ORIGINAL, SCHEMA)
    got = cells_boxes(back.generalized_cells(), pop.qi_columns)  # minimality via a population
    assert got[0].tolist() == lo.tolist() and got[1].tolist() == hi.tolist()
    for release in (rel, back):  # locate: each individual of the table is in its own group
        loc = locate(release, ORIGINAL, SCHEMA)
        assert loc.group.tolist() == GROUP.tolist()
        loc = locate(release, STRANGERS, SCHEMA)
        assert [set(loc.candidates_of(i).tolist()) for i in range(loc.n)] == LOCATED[style]
    # the attack runs on both and finds the same classes and generalized groups
    res = minimality_attack(back, Requirement(2.0), population=ORIGINAL, schema=SCHEMA)
    own = minimality_attack(rel, Requirement(2.0))
    assert res.details["classes"] == own.details["classes"] == 8
    assert res.details["generalized_groups"] == own.details["generalized_groups"] == 3
    assert res.tuples.posterior.tolist() == own.tuples.posterior.tolist()


def test_read_cells_numeric_formats() -> None:
    cells = ["[20-29]", "[20, 30[", "(20-30]", "<=18", ">40", "3*", "130**", "25", "*", "25,30"]
    cover = read_cells(cells, column="age", kind=Kind.NUMERIC)
    below_30 = math.nextafter(30.0, -INF)
    assert cover.runs == (
        [(20.0, 29.0)],
        [(20.0, below_30)],
        [(math.nextafter(20.0, INF), 30.0)],
        [(-INF, 18.0)],
        [(math.nextafter(40.0, INF), INF)],
        [(30.0, 39.0)],
        [(13000.0, 13099.0)],
        [(25.0, 25.0)],
        [(-INF, INF)],
        [(25.0, 25.0), (30.0, 30.0)],
    )
    assert cover.axis == "value" and cover.index.tolist() == list(range(10))


def test_read_cells_categorical_with_hierarchy() -> None:
    cells = ["NW", "White", "*", "{White, Other}", "Black|Asian", "NW", "A****"]
    cover = read_cells(cells, column="race", kind=Kind.CATEGORICAL, hierarchy=RACE)
    assert cover.axis == "leaf"
    assert cover.cells == ("NW", "White", "*", "{White, Other}", "Black|Asian", "A****")
    assert cover.runs == ([(1, 3)], [(0, 0)], [(-INF, INF)], [(0, 0), (3, 3)], [(1, 2)], [(2, 2)])
    assert cover.index.tolist() == [0, 1, 2, 3, 4, 0, 5]


def test_read_cells_kind_inferred_and_vocabulary() -> None:
    assert read_cells(["[1-2]", "5"], column="x", kind=None).kind == Kind.NUMERIC
    cover = read_cells(["b,c", "z", "a"], column="x", kind=None, vocabulary=["a", "b", "c"])
    assert cover.kind == Kind.CATEGORICAL and cover.axis == "vocabulary"
    assert cover.runs == ([(1, 2)], [], [(0, 0)])
    assert cover.unmatched == ("z",)


def test_unreadable_cells_are_one_line_errors() -> None:
    with pytest.raises(InputError) as exc:
        read_cells(["[1-2]", "young"], column="age", kind=Kind.NUMERIC)
    assert str(exc.value) == (
        "column 'age': published cell 'young' is not a number, an interval such as [20-29], "
        "a set such as {20, 25}, '*'"
    )
    with pytest.raises(InputError, match=r"^column 'race': published cell 'Mars' is not a node"):
        read_cells(["Mars"], column="race", kind=Kind.CATEGORICAL, hierarchy=RACE)
    col = Table.encode(ORIGINAL, SCHEMA).qi_columns[1]
    with pytest.raises(InputError) as exc:
        code_cover(["White,Other"], col).box()
    assert str(exc.value) == (
        "column 'race': published cell 'White,Other' covers values that are not one range"
    )


def test_code_cover_and_around_pick_the_node_holding_the_group() -> None:
    # a label two nodes share: "X" above A (leaves 0-1) and "X" under B (leaves 2-3)
    h = Hierarchy([["a1", "A", "X", "*"], ["a2", "A", "X", "*"], ["b1", "X", "B", "*"],
                   ["b2", "X", "B", "*"]], "shared")  # fmt: skip
    schema = Schema((Column("c", Role.QUASI, Kind.CATEGORICAL, h), Column("s", Role.SENSITIVE)))
    col = Table.encode(pd.DataFrame({"c": ["a1", "b2"], "s": ["x", "y"]}), schema).qi_columns[0]
    cc = code_cover(["X", "X", "A"], col)
    assert cc.indptr.tolist() == [0, 2, 3]  # "X" names one of two nodes, "A" one
    assert cc.lo.tolist() == [2, 0, 0] and cc.hi.tolist() == [3, 1, 1]
    assert [b.tolist() for b in cc.box()] == [[0, 0, 0], [3, 3, 1]]  # "X" covers the union
    lo, hi, found = cc.around(np.array([2, 0, 3]), np.array([3, 1, 3]))
    assert lo.tolist() == [2, 0, 3] and hi.tolist() == [3, 1, 3]
    assert found.tolist() == [True, True, False]  # "A" does not hold code 3


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=8))
def test_code_cover_inverts_generalize(pairs: list[tuple[int, int]]) -> None:
    """What ``EncodedColumn.generalize`` writes reads back to the cover computed without
    strings (``published_cover``), on a numeric and a categorical column."""
    table = Table.encode(
        pd.DataFrame({"age": [21, 24, 28, 33], "race": ["White", "Black", "Asian", "Other"],
                      "disease": ["a"] * 4}), SCHEMA)  # fmt: skip
    lo = np.array([min(p) for p in pairs])
    hi = np.array([max(p) for p in pairs])
    for col in table.qi_columns:
        cells = col.generalize(lo, hi)
        got = code_cover(np.asarray(cells, dtype=object), col).box()
        want = published_cover(col, lo, hi)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    # by hand: White is leaf 0, the NW node holds leaves 1-3
    want_lo = [a if a == b else (1 if a >= 1 else 0) for a, b in zip(lo, hi, strict=True)]
    want_hi = [a if a == b else 3 for a, b in zip(lo, hi, strict=True)]
    both = group_code_cover(table.qi_columns, np.stack([lo, lo], 1), np.stack([hi, hi], 1))
    assert both[0][:, 0].tolist() == lo.tolist() and both[1][:, 0].tolist() == hi.tolist()
    assert both[0][:, 1].tolist() == want_lo and both[1][:, 1].tolist() == want_hi
    assert node_cover(table.qi_columns[1], lo, hi)[0].tolist() == want_lo
