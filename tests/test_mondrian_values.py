"""Mondrian's default ``categorical_cuts="values"``: hand vectors (partitions, tool-neutral NCP
and discernibility as literal numbers), and a hypothesis property that every default partition
satisfies k and l, checked by an independent groupby oracle."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.models import KAnonymity, LDiversity
from partition_sets import T, groups_of


def neutral(df: pd.DataFrame, group: np.ndarray, numeric: list[str], cat: list[str]) -> tuple:
    """Tool-neutral NCP (numeric: group range / domain range; categorical: distinct values in
    the group / distinct values in the table, 0 for one value; mean over QIs and rows) and
    discernibility / n, from the definitions with pandas (independent of the engine)."""
    g = df.assign(_g=group).groupby("_g")
    pen = []
    for q in numeric:
        span = g[q].transform("max") - g[q].transform("min")
        pen.append(span / (df[q].max() - df[q].min()))
    for q in cat:
        k = g[q].transform("nunique")
        pen.append(np.where(k == 1, 0.0, k / df[q].nunique()))
    ncp = float(np.mean(np.column_stack(pen)))
    sizes = np.bincount(group)
    return ncp, float((sizes.astype(float) ** 2).sum() / len(df))


def test_categorical_values_halving_by_hand() -> None:
    # c: a a a a b c d d (codes in label order a < b < c < d), k = 2. Root: 4 distinct
    # values, the first floor(4/2) = 2 go left: {a, b} (5 rows) | {c, d} (3). {a, b}: values
    # cut {a} | {b} leaves 1 row; the other (upper) median of a a a a b is a: {< a} is empty.
    # {c, d, d}: {c} | {d, d} leaves 1 row; upper median d: {< d} = {c}, 1 row. Both stay.
    df = pd.DataFrame({"c": list("aaaabcdd"), "s": list("xyxyxyxy")})
    table = Table.encode(df, Schema.build({"c": {"kind": "categorical"}}, "s"))
    rel = mondrian(table, [KAnonymity(2)])
    assert groups_of(rel) == {T(1, 2, 3, 4, 5), T(6, 7, 8)}
    assert neutral(df, rel.partition.group, [], ["c"]) == (0.5, 4.25)  # (5*.5+3*.5)/8, 34/8
    # the cut of earlier versions: row median a: {a}x4 | {b, c, d, d}, then c: {b, c} | {d, d}
    old = mondrian(table, [KAnonymity(2)], categorical_cuts="median")
    assert groups_of(old) == {T(1, 2, 3, 4), T(5, 6), T(7, 8)}
    assert neutral(df, old.partition.group, [], ["c"]) == (0.125, 3.0)


def test_numeric_other_median_fallback_by_hand() -> None:
    # x: 1 1 1 2 2 2 2 2, k = 3: the lower median is 2 and {<= 2} is the whole group (no cut);
    # the other median (upper, position 4: 2) cuts {< 2} = {1, 1, 1} | {2 x 5}.
    df = pd.DataFrame({"x": [1, 1, 1, 2, 2, 2, 2, 2], "s": list("xyxyxyxy")})
    table = Table.encode(df, Schema.build({"x": {"kind": "numeric"}}, "s"))
    rel = mondrian(table, [KAnonymity(3)])
    assert groups_of(rel) == {T(1, 2, 3), T(4, 5, 6, 7, 8)}
    assert neutral(df, rel.partition.group, ["x"], []) == (0.0, 4.25)
    old = mondrian(table, [KAnonymity(3)], categorical_cuts="median")
    assert old.partition.n_groups == 1
    assert neutral(df, old.partition.group, ["x"], []) == (1.0, 8.0)


@st.composite
def tables(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 60))
    cols = {
        "n0": draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)),
        "c0": draw(st.lists(st.sampled_from("abcdefg"), min_size=n, max_size=n)),
        "c1": draw(st.lists(st.sampled_from("pqr"), min_size=n, max_size=n)),
        "s": draw(st.lists(st.sampled_from("uvwxyz"), min_size=n, max_size=n)),
    }
    return pd.DataFrame(cols)


@settings(max_examples=examples(60), deadline=None)
@given(
    tables(),
    st.integers(1, 6),
    st.sampled_from([None, 1.5, 2.0]),
    st.sampled_from(["lower", "upper"]),
)
def test_default_partition_satisfies_k_and_l(
    df: pd.DataFrame,
    k: int,
    l: float | None,  # noqa: E741
    median: str,
) -> None:
    schema = Schema.build(
        {"n0": {"kind": "numeric"}, "c0": {"kind": "categorical"}, "c1": {"kind": "categorical"}},
        "s",
    )
    table = Table.encode(df, schema)
    models = [KAnonymity(k)] + ([LDiversity(l)] if l is not None else [])
    counts = df["s"].value_counts()
    if len(df) < k or (l is not None and len(df) < l * counts.max() - 1e-9):
        return  # the whole table cannot satisfy the models: refused (tested in test_mondrian)
    rel = mondrian(table, models, median=median)
    group = rel.partition.group
    assert rel.provenance.parameters["categorical_cuts"] == "values"
    # oracle: plain groupby over the published groups
    by = df.assign(_g=group).groupby("_g")
    assert (by.size() >= k).all()
    if l is not None:  # frequency l-diversity: |G| >= l * S_max(G)
        top = by["s"].agg(lambda s: s.value_counts().max())
        assert (by.size() + 1e-9 >= l * top).all()
    assert group.shape == (len(df),) and set(np.unique(group)) == set(range(group.max() + 1))
