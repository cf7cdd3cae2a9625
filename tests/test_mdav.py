"""MDAV microaggregation (spec composition.md 3.5, P7): hand-checked examples, a plain-Python
reference of the pseudo-code on generic points, and hypothesis properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerckhoffs import Column, Hierarchy, Kind, Partition, Role, Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.mdav import mdav, mdav_centroids, mdav_encode, mdav_groups
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, LDiversity


def numeric_table(points: list[tuple[int, ...]]) -> Table:
    d = len(points[0])
    df = pd.DataFrame(points, columns=[f"x{j}" for j in range(d)])
    df["s"] = [f"v{i % 3}" for i in range(len(points))]
    cols = tuple(Column(f"x{j}", Role.QUASI, Kind.NUMERIC) for j in range(d))
    return Table.encode(df, Schema((*cols, Column("s", Role.SENSITIVE))))


def test_one_dimension_by_hand() -> None:
    # values 0 1 3 10 11 15, k = 2 (z-scoring is affine in one dimension: same order).
    # |R| = 6 >= 3k: centroid 6.67, farthest 15, with its nearest 11 -> {15, 11};
    # farthest from 15 in {0, 1, 3, 10} is 0, with its nearest 1 -> {0, 1};
    # |R| = 2 < 2k: the rest {3, 10} is the last group.
    table = numeric_table([(0,), (1,), (3,), (10,), (11,), (15,)])
    rel = mdav(table, [KAnonymity(2)])
    assert rel.partition.same_as(Partition.from_labels([1, 1, 2, 2, 0, 0]))
    assert mdav_groups(mdav_encode(table), 2).tolist() == [1, 1, 2, 2, 0, 0]
    assert rel.generalized_cells()["x0"].tolist() == ["[0-1]", "[3-10]", "[11-15]"]


def test_three_clusters_by_hand() -> None:
    # three tight clusters of three points far apart, k = 3: one group per cluster
    a = [(0, 0), (0, 1), (1, 0)]
    b = [(10, 10), (10, 11), (11, 10)]
    c = [(0, 10), (1, 10), (0, 11)]
    table = numeric_table(a + b + c)
    rel = mdav(table, [KAnonymity(3)])
    assert rel.partition.same_as(Partition.from_labels([0] * 3 + [1] * 3 + [2] * 3))


def test_single_group_and_refusals() -> None:
    table = numeric_table([(i,) for i in range(5)])
    rel = mdav(table, [KAnonymity(3)])  # 5 rows < 2k: one group
    assert rel.partition.n_groups == 1
    assert get("mdav").run is mdav
    with pytest.raises(ParameterError, match="larger than the table"):
        mdav(table, [KAnonymity(6)])
    with pytest.raises(ParameterError, match="cannot enforce l-diversity"):
        mdav(table, [KAnonymity(2), LDiversity(2)])
    with pytest.raises(ParameterError, match="needs k-anonymity"):
        mdav(table, [])


def reference_mdav(x: np.ndarray, k: int) -> list[set[int]]:
    """The spec's pseudo-code, one point at a time (ties cannot occur on generic points)."""
    remaining = list(range(len(x)))
    groups: list[set[int]] = []

    def dist(i: int, p: np.ndarray) -> float:
        return float(sum((x[i, j] - p[j]) ** 2 for j in range(x.shape[1])))

    def group_around(r: int) -> set[int]:
        near = sorted(remaining, key=lambda i: (dist(i, x[r]), i))[:k]
        assert r in near
        for i in near:
            remaining.remove(i)
        groups.append(set(near))
        return set(near)

    def farthest(p: np.ndarray) -> int:
        return max(remaining, key=lambda i: (dist(i, p), -i))

    while len(remaining) >= 3 * k:
        c = x[remaining].mean(axis=0)
        r = farthest(c)
        group_around(r)
        group_around(farthest(x[r]))
    if len(remaining) >= 2 * k:
        group_around(farthest(x[remaining].mean(axis=0)))
    if remaining:
        groups.append(set(remaining))
    return groups


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 80), d=st.integers(1, 4), k=st.integers(2, 7))
def test_matches_reference_on_generic_points(seed: int, n: int, d: int, k: int) -> None:
    # k >= 2: with k = 1 the last step picks one of two points equidistant from their mean
    x = np.random.default_rng(seed).random((n, d))
    g = mdav_groups(x, k)
    got = [set(np.flatnonzero(g == i).tolist()) for i in range(int(g.max()) + 1)]
    assert got == reference_mdav(x, k)


CITY = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"]], "city")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), k=st.integers(1, 9))
def test_properties(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 30, n),
            "city": rng.choice(["a1", "a2", "b1"], n),
            "zip": rng.integers(0, 3, n),
            "s": rng.choice(["x", "y", "z"], n),
        }
    )
    schema = Schema(
        (
            Column("age", Role.QUASI, Kind.NUMERIC),
            Column("city", Role.QUASI, Kind.CATEGORICAL, CITY),
            Column("zip", Role.QUASI, Kind.NUMERIC),
            Column("s", Role.SENSITIVE),
        )
    )
    table = Table.encode(df, schema)
    if k > n:
        with pytest.raises(ParameterError):
            mdav(table, [KAnonymity(k)])
        return
    rel = mdav(table, [KAnonymity(k)])
    sizes = rel.partition.sizes
    assert sizes.sum() == n and (sizes >= k).all()
    assert (sizes <= 2 * k - 1).all()
    assert (sizes != k).sum() <= 1  # only the last group formed may exceed k
    assert rel.check([KAnonymity(k)])[0].satisfied
    assert rel.sa_published is table.sa
    again = mdav(table, [KAnonymity(k)])
    assert np.array_equal(again.partition.group, rel.partition.group)
    assert again.frames()["release"].equals(rel.frames()["release"])
    # P7: the centroid is the group mean of the encoded QIs
    x = mdav_encode(table)
    cents = mdav_centroids(rel)
    for gid, rows in enumerate(rel.partition.groups()):
        np.testing.assert_allclose(cents[gid], x[rows].mean(axis=0), atol=1e-12)
