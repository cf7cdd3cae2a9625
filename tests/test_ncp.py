"""NCP (normalized certainty penalty) on a hand-computed release and against a per-group
Python oracle on random releases (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from hand_tables import LETTER, hand_table
from kerckhoffs import Partition, Release, Schema, Scheme, Table
from kerckhoffs.metrics import group_ncp, ncp, ncp_by_qi


# letter: a, b under X; c, d, e under Y (e is in the domain but not in the data)
def test_hand_computed_release() -> None:
    table = hand_table()
    # group 0 = rows 0, 1 (age 20-25, letters a, b -> X);
    # group 1 = rows 2, 3, 4 (age 30-40, letters a, c, d -> *); group 2 = row 5 (exact)
    rel = Release(table, Partition(np.array([0, 0, 1, 1, 1, 2])))
    pen = group_ncp(rel)
    # age domain 20..40 (width 20); letter domain 5 leaves; "one" has a single value
    np.testing.assert_allclose(pen[:, 0], [5 / 20, 10 / 20, 0])
    np.testing.assert_allclose(pen[:, 1], [(2 - 1) / 4, (5 - 1) / 4, 0])
    np.testing.assert_array_equal(pen[:, 2], [0, 0, 0])
    by_qi = ncp_by_qi(rel)
    assert by_qi["age"] == pytest.approx((2 * 0.25 + 3 * 0.5) / 6)
    assert by_qi["letter"] == pytest.approx((2 * 0.25 + 3 * 1.0) / 6)
    assert by_qi["one"] == 0.0
    assert ncp(rel) == pytest.approx(((2 / 6) + (3.5 / 6) + 0) / 3)
    assert list(rel.generalized_cells()["letter"]) == ["X", "*", "a"]


def test_extremes_and_bucketization() -> None:
    table = hand_table()
    assert ncp(Release(table, Partition.by_qi(table))) == 0.0
    single = Release(table, Partition.single(table.n))
    # one group: age [20-40] -> 1; letters a..d -> * (5 leaves) -> 1; "one" -> 0
    assert ncp_by_qi(single) == {"age": 1.0, "letter": 1.0, "one": 0.0}
    assert ncp(single) == pytest.approx(2 / 3)
    bucket = Release(table, Partition.single(table.n), Scheme.BUCKETIZATION)
    assert ncp(bucket) == 0.0


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_matches_per_group_oracle(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 30))
    ages = data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    letters = data.draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
    labels = data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    df = pd.DataFrame({"age": ages, "letter": letters, "s": ["v"] * n})
    quasi = {"age": {"kind": "numeric"}, "letter": {"kind": "categorical", "hierarchy": LETTER}}
    table = Table.encode(df, Schema.build(quasi, "s"))
    rel = Release(table, Partition.from_labels(labels))
    parents = {"a": "X", "b": "X", "c": "Y", "d": "Y", "e": "Y"}
    under = {"X": 2, "Y": 3, "*": 5}
    span = max(ages) - min(ages)
    total_age = total_letter = 0.0
    for g in set(labels):
        rows = [i for i in range(n) if labels[i] == g]
        a = [ages[i] for i in rows]
        age_pen = (max(a) - min(a)) / span if span else 0.0
        ls = {letters[i] for i in rows}
        if len(ls) == 1:
            letter_pen = 0.0
        else:
            ps = {parents[x] for x in ls}
            letter_pen = (under[ps.pop() if len(ps) == 1 else "*"] - 1) / 4
        total_age += len(rows) * age_pen
        total_letter += len(rows) * letter_pen
    by_qi = ncp_by_qi(rel)
    assert by_qi["age"] == pytest.approx(total_age / n)
    assert by_qi["letter"] == pytest.approx(total_letter / n)
    assert ncp(rel) == pytest.approx((total_age + total_letter) / (2 * n))
