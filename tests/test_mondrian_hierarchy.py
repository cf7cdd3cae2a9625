"""Mondrian with categorical QIs cut along their hierarchy (LeFevre et al. 2006, section 4;
``categorical_cuts="hierarchy"``): hand vectors, disjoint published cells, the model held,
and the same partition as the default engine when no QI is categorical."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.algorithms.mondrian import KAnonymityCut, LDiversityCut, mondrian_groups
from kerckhoffs.algorithms.mondrian.hierarchy import hierarchy_cut_groups
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Kind, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.release import Partition

JOB = Hierarchy(
    [
        ["nurse", "care", "*"],
        ["doctor", "care", "*"],
        ["clerk", "office", "*"],
        ["lawyer", "office", "*"],
        ["cook", "food", "*"],
    ],
    "job",
)


def job_table(jobs: list[str], ages: list[int] | None = None) -> Table:
    data: dict[str, list] = {"job": jobs, "s": [f"s{i % 3}" for i in range(len(jobs))]}
    quasi: dict[str, dict] = {"job": {"kind": "categorical", "hierarchy": JOB}}
    if ages is not None:
        data["age"] = ages
        quasi["age"] = {"kind": "numeric"}
    return Table.encode(pd.DataFrame(data), Schema.build(quasi, "s"))


def groups_of(table: Table, group: np.ndarray) -> list[list[str]]:
    labels = table.decode_qi(0)
    return sorted(sorted(labels[group == g].tolist()) for g in np.unique(group))


def test_splits_into_the_children_of_the_common_node() -> None:
    # care 4, office 4, food 2: the root splits three ways only when every child holds k rows
    jobs = ["nurse", "nurse", "doctor", "doctor", "clerk", "clerk", "lawyer", "lawyer"]
    t = job_table([*jobs, "cook", "cook"])
    g = hierarchy_cut_groups(t, KAnonymityCut(2))
    assert groups_of(t, g) == [
        ["clerk", "clerk"], ["cook", "cook"], ["doctor", "doctor"], ["lawyer", "lawyer"],
        ["nurse", "nurse"],
    ]  # fmt: skip
    # k = 3: food (2 rows) cannot stand alone, so the root is not cut at all (the median cut
    # of the default engine would have cut it, publishing overlapping cells)
    g3 = hierarchy_cut_groups(t, KAnonymityCut(3))
    assert np.unique(g3).size == 1
    assert np.unique(mondrian_groups(t, KAnonymityCut(3))).size == 2
    # k = 4 on care + office: two parts of 4, not cut further (2 + 2 < 2k)
    t2 = job_table(jobs)
    assert groups_of(t2, hierarchy_cut_groups(t2, KAnonymityCut(4))) == [
        ["clerk", "clerk", "lawyer", "lawyer"],
        ["doctor", "doctor", "nurse", "nurse"],
    ]


def test_a_refused_hierarchy_split_falls_back_to_the_next_dimension() -> None:
    # job's common node is the root (5 leaves: range 4/4 = 1) and age spans its whole domain
    # (range 1/1 = 1): a tie, so job (column 0) is tried first. Its children hold 2 rows each
    # (care, office, food), fewer than k = 3: refused. Age's lower median is 20, so the cut
    # {20, 20, 20} | {21, 21, 21} is allowed and taken.
    t = job_table(["nurse", "clerk", "cook", "nurse", "clerk", "cook"],
                  [20, 20, 20, 21, 21, 21])  # fmt: skip
    g = hierarchy_cut_groups(t, KAnonymityCut(3))
    ages = t.decode_qi(1)
    assert sorted(sorted(ages[g == x].tolist()) for x in np.unique(g)) == [
        [20, 20, 20],
        [21, 21, 21],
    ]
    # with a seventh row aged 60 the lower median is 21 and the right half {60} too small:
    # nothing can be cut
    t7 = job_table(["nurse", "clerk", "cook", "nurse", "clerk", "cook", "nurse"],
                   [20, 20, 20, 21, 21, 21, 60])  # fmt: skip
    assert np.unique(hierarchy_cut_groups(t7, KAnonymityCut(3))).size == 1


def _disjoint(t: Table, group: np.ndarray) -> bool:
    """Every two groups' published cells are disjoint on at least one QI (numeric: the code
    intervals; categorical: the leaf sets under their lowest common nodes)."""
    cells = []
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        box = []
        for j, col in enumerate(t.qi_columns):
            lo, hi = int(t.qi[rows, j].min()), int(t.qi[rows, j].max())
            if col.kind == Kind.CATEGORICAL:
                h = col.hierarchy
                assert h is not None
                a, b = col.leaves(np.array([lo, hi]))
                lvl = int(h.lca_level(np.array([a]), np.array([b]))[0])
                node = h.node_ids[lvl][a]
                box.append(set(np.flatnonzero(h.node_ids[lvl] == node).tolist()))
            else:
                box.append(set(range(lo, hi + 1)))
        cells.append(box)
    return all(
        any(not (x & y) for x, y in zip(a, b, strict=True))
        for a, b in itertools.combinations(cells, 2)
    )


@st.composite
def tables(draw: st.DrawFn) -> Table:
    n = draw(st.integers(1, 40))
    d = draw(st.integers(1, 3))
    data: dict[str, list] = {}
    quasi: dict[str, dict] = {}
    for j in range(d):
        hi = draw(st.sampled_from([1, 3, 7, 11]))
        data[f"q{j}"] = draw(st.lists(st.integers(0, hi), min_size=n, max_size=n))
        if draw(st.booleans()):
            rows = [[str(v), f"b{v // 4}", f"c{v // 8}", "*"] for v in range(hi + 1)]
            quasi[f"q{j}"] = {"kind": "categorical", "hierarchy": Hierarchy(rows, f"q{j}")}
        else:
            quasi[f"q{j}"] = {"kind": "numeric"}
    data["s"] = [f"s{v}" for v in draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]
    return Table.encode(pd.DataFrame(data), Schema.build(quasi, "s"))


@settings(max_examples=examples(60), deadline=None)
@given(tables(), st.integers(1, 4), st.sampled_from([None, 2.0]))
def test_groups_hold_the_model_and_publish_disjoint_cells(
    t: Table, k: int, div: float | None
) -> None:
    rules = [KAnonymityCut(k)] + ([LDiversityCut(div)] if div else [])
    from kerckhoffs.algorithms.mondrian import AllCuts

    g = hierarchy_cut_groups(t, AllCuts(rules))
    sizes = np.bincount(g)
    if t.n >= k:
        assert sizes.min() >= k or sizes.size == 1
    assert _disjoint(t, g)
    if div and sizes.size > 1:  # every published group is frequency-l-diverse
        for x in range(sizes.size):
            counts = np.bincount(t.sa[g == x])
            assert counts.max() * div <= sizes[x] + 1e-9


@settings(max_examples=examples(60), deadline=None)
@given(tables(), st.integers(1, 4))
def test_numeric_only_tables_give_the_default_partition(t: Table, k: int) -> None:
    if any(c.kind == Kind.CATEGORICAL for c in t.qi_columns):
        return
    a = Partition(hierarchy_cut_groups(t, KAnonymityCut(k)))
    b = Partition(mondrian_groups(t, KAnonymityCut(k)))
    assert a.same_as(b)


def test_the_option_of_the_registered_mondrian() -> None:
    import pytest

    from kerckhoffs.algorithms import get
    from kerckhoffs.errors import ParameterError
    from kerckhoffs.models import KAnonymity

    jobs = ["nurse", "nurse", "doctor", "doctor", "clerk", "clerk", "lawyer", "lawyer"]
    t = job_table([*jobs, "cook", "cook"])
    rel = get("mondrian").run(t, [KAnonymity(3)], categorical_cuts="hierarchy")
    assert rel.partition.n_groups == 1 and rel.provenance.parameters["categorical_cuts"] == (
        "hierarchy"
    )
    median = get("mondrian").run(t, [KAnonymity(3)], categorical_cuts="median")
    assert median.partition.n_groups == 2
    assert "categorical_cuts" not in median.provenance.parameters  # older releases' bytes
    default = get("mondrian").run(t, [KAnonymity(3)])
    assert default.provenance.parameters["categorical_cuts"] == "values"
    relaxed = get("mondrian").run(t, [KAnonymity(3)], cuts="relaxed")
    assert "categorical_cuts" not in relaxed.provenance.parameters  # median under relaxed cuts
    with pytest.raises(ParameterError, match="needs strict cuts"):
        get("mondrian").run(t, [KAnonymity(3)], cuts="relaxed", categorical_cuts="values")
    match = "categorical_cuts must be one of values, median, hierarchy"
    with pytest.raises(ParameterError, match=match):
        get("mondrian").run(t, [KAnonymity(3)], categorical_cuts="children")


@settings(max_examples=examples(30), deadline=None)
@given(tables(), st.integers(1, 4))
def test_large_hierarchies_without_the_lca_table_give_the_same_groups(t: Table, k: int) -> None:
    # hierarchies above LCA_TABLE_LEAVES leaves look each LCA up in the hierarchy instead
    from kerckhoffs.algorithms.mondrian import hierarchy as mh

    with_table = hierarchy_cut_groups(t, KAnonymityCut(k))
    saved = mh.LCA_TABLE_LEAVES
    mh.LCA_TABLE_LEAVES = 0
    try:
        without = hierarchy_cut_groups(t, KAnonymityCut(k))
    finally:
        mh.LCA_TABLE_LEAVES = saved
    assert np.array_equal(with_table, without)
