"""The encoding's shortcuts against oracles written from the definition.

A categorical QI's code is the index of its value among the hierarchy's leaves (depth-first
order); a numeric QI's code is the rank of its value among the sorted distinct values present.
The encoder looks arrow-backed text up in the leaves directly, looks a categorical's categories
up, and ranks small-range integers by counting; the oracle here uses ``list.index`` and
``sorted(set(...))``. Every input dtype (arrow text, Python objects, categorical), with and
without missing values, must give the oracle's codes, and a value that is not a leaf the same
one-line error naming it and its first row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Hierarchy, Schema, Table
from kerckhoffs.data.hierarchy import _first_codes
from kerckhoffs.data.table import _ranks
from kerckhoffs.errors import HierarchyError

DTYPES = ["str", "object", "category"]


def hierarchy(n_leaves: int) -> Hierarchy:
    """Leaves ``v0..`` under two middle nodes, listed out of depth-first order (so that leaf
    index and file order differ), plus the missing label ``?``."""
    rows = [[f"v{i}", f"m{i % 2}", "*"] for i in range(n_leaves)] + [["?", "m0", "*"]]
    return Hierarchy(rows, "h")


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_leaves=st.integers(1, 6),
    picks=st.lists(st.integers(0, 6), min_size=1, max_size=30),
    holes=st.lists(st.booleans(), min_size=30, max_size=30),
    dtype=st.sampled_from(DTYPES),
    missing=st.sampled_from(["category", "error"]),
)
def test_leaf_codes_match_the_leaf_index(
    n_leaves: int, picks: list[int], holes: list[bool], dtype: str, missing: str
) -> None:
    h = hierarchy(n_leaves)
    values: list[str | None] = [f"v{p}" for p in picks]  # v{n_leaves}.. are not leaves
    if missing == "category":
        values = [None if hole else v for v, hole in zip(values, holes, strict=False)]
    df = pd.DataFrame({"q": pd.Series(values, dtype=dtype), "s": ["a"] * len(values)})
    schema = Schema.build({"q": {"hierarchy": h, "kind": "categorical", "missing": missing}}, "s")
    leaves = list(h.leaves)
    filled = ["?" if v is None else v for v in values]
    bad = [v for v in filled if v not in leaves]
    if bad:  # the first value that is not a leaf, and its first row (1-based)
        row = filled.index(bad[0]) + 1
        with pytest.raises(HierarchyError, match=rf"value '{bad[0]}' \(data row {row}\)"):
            Table.encode(df, schema)
        return
    table = Table.encode(df, schema)
    assert table.qi[:, 0].tolist() == [leaves.index(v) for v in filled]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_gives_the_same_table(dtype: str) -> None:
    """The shortcuts and the general path agree on a table with missing text."""
    h = hierarchy(4)
    raw = ["v3", None, "v0", "v2", None, "v3", "v1"]
    schema = Schema.build(
        {"q": {"hierarchy": h, "kind": "categorical", "missing": "category"}}, "s"
    )
    t = Table.encode(pd.DataFrame({"q": pd.Series(raw, dtype=dtype), "s": list("abababa")}), schema)
    leaves = list(h.leaves)
    assert t.qi[:, 0].tolist() == [leaves.index("?" if v is None else v) for v in raw]
    assert t.sa.tolist() == [0, 1, 0, 1, 0, 1, 0]


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=40),
    st.integers(-(2**40), 2**40),
    st.sampled_from([np.int64, np.int32, np.float64]),
)
def test_ranks_are_positions_among_the_sorted_distinct_values(
    xs: list[int], shift: int, dtype: type
) -> None:
    """Small-range integers (counted), wide ones and floats (factorized): the same ranks."""
    x = (np.array(xs, dtype=np.int64) % 50 + (shift if dtype is np.int64 else 0)).astype(dtype)
    if len(xs) % 3 == 0:
        x = np.array(xs, dtype=np.int64).astype(dtype)  # a wide range
    codes, values = _ranks(x)
    distinct = sorted(set(x.tolist()))
    assert values.tolist() == distinct
    assert values.dtype == x.dtype
    assert codes.tolist() == [distinct.index(v) for v in x.tolist()]


@given(st.lists(st.sampled_from(["a", "b", "c", "d", "a "]), min_size=1, max_size=30))
def test_first_codes_number_labels_by_first_appearance(labels: list[str]) -> None:
    arr = np.array(labels, dtype=object)
    seen: list[str] = []
    for v in labels:
        if v not in seen:
            seen.append(v)
    assert _first_codes(arr).tolist() == [seen.index(v) for v in labels]
    assert _first_codes(arr).tolist() == pd.factorize(arr)[0].tolist()


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30), st.booleans())
def test_integer_categories_without_hierarchy_rank_in_numeric_order(
    xs: list[int], narrow: bool
) -> None:
    """An integer column declared categorical, without a hierarchy: the flat hierarchy over
    its values in numeric order, each code its value's rank."""
    values = [x % 7 - 3 for x in xs] if narrow else xs
    df = pd.DataFrame({"q": np.array(values, dtype=np.int64), "s": ["a"] * len(values)})
    table = Table.encode(df, Schema.build({"q": {"kind": "categorical"}}, "s"))
    distinct = sorted(set(values))
    col = table.qi_columns[0]
    assert col.hierarchy is not None
    assert list(col.hierarchy.leaves) == [str(v) for v in distinct]
    assert col.values.tolist() == [str(v) for v in distinct]
    assert table.qi[:, 0].tolist() == [distinct.index(v) for v in values]


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from(["b", "a", "Z", "é", "a b", "10", "9"]), min_size=1, max_size=30),
    st.sampled_from(["sorted", "shuffled", "unused", "str", "object"]),
)
def test_text_without_hierarchy_codes_are_ranks_among_sorted_values(
    values: list[str], form: str
) -> None:
    """A text column declared categorical, without a hierarchy: the flat hierarchy over its
    values sorted, each code its value's index there, whatever the input's form (a categorical
    with every category used, as a CSV is read, looks its categories up, sorted or not; an
    unused category, arrow text and Python objects take the general path)."""
    distinct = sorted(set(values))
    if form in ("str", "object"):
        q = pd.Series(values, dtype=form)
    else:
        cats = distinct[::-1] if form == "shuffled" else distinct
        cats = [*cats, "zz-unused"] if form == "unused" else cats
        q = pd.Series(pd.Categorical(values, categories=cats))
    df = pd.DataFrame({"q": q, "s": ["a"] * len(values)})
    table = Table.encode(df, Schema.build({"q": {"kind": "categorical"}}, "s"))
    col = table.qi_columns[0]
    assert col.hierarchy is not None
    assert list(col.hierarchy.leaves) == distinct
    assert table.qi[:, 0].tolist() == [distinct.index(v) for v in values]
