"""MDAV microaggregation (spec composition.md 3.5, P7): hand-checked examples, a plain-Python
reference of the pseudo-code on generic points, and hypothesis properties."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
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
    """The spec's pseudo-code, one point at a time: ties by lowest row id; the centroid is the
    exact mean rounded once to float64."""
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

    def mean(rows: list[int]) -> np.ndarray:  # the exact mean, rounded once
        return np.array(
            [float(sum(map(Fraction, x[rows, j])) / len(rows)) for j in range(x.shape[1])]
        )

    while len(remaining) >= 3 * k:
        c = mean(remaining)
        r = farthest(c)
        group_around(r)
        group_around(farthest(x[r]))
    if len(remaining) >= 2 * k:
        group_around(farthest(mean(remaining)))
    if remaining:
        groups.append(set(remaining))
    return groups


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 80), d=st.integers(1, 4), k=st.integers(2, 7))
def test_matches_reference_on_generic_points(seed: int, n: int, d: int, k: int) -> None:
    # k >= 2: with k = 1 the last step picks one of two points equidistant from their mean
    x = np.random.default_rng(seed).random((n, d))
    g = mdav_groups(x, k)
    got = [set(np.flatnonzero(g == i).tolist()) for i in range(int(g.max()) + 1)]
    assert got == reference_mdav(x, k)


CITY = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"]], "city")


@settings(max_examples=examples(60), deadline=None)
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


def grid_points(seed: int) -> tuple[np.ndarray, int]:
    """Few distinct values per column: many duplicated points and many exact distance ties."""
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(1, 150)), int(rng.integers(1, 4)), int(rng.integers(2, 8))
    return rng.integers(0, int(rng.integers(1, 6)), (n, d)).astype(np.float64), k


@settings(max_examples=examples(80), deadline=None)
@given(seed=st.integers(0, 100_000))
def test_matches_reference_with_duplicates_and_ties(seed: int) -> None:
    # MDAV computes distances once per distinct point; the spec's tie rule (lowest row id)
    # must still pick single rows out of duplicated points and out of distinct points at the
    # same distance, and two points tied exactly in distance to the centroid
    x, k = grid_points(seed)
    g = mdav_groups(x, k)
    got = [set(np.flatnonzero(g == i).tolist()) for i in range(int(g.max()) + 1)]
    assert got == reference_mdav(x, k)


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), d=st.integers(1, 3), k=st.integers(2, 6))
def test_matches_reference_on_generic_duplicated_points(seed: int, n: int, d: int, k: int) -> None:
    # each column's few values mapped to random reals: duplicated points, and exact ties in
    # distance to the centroid whenever the points left are symmetric (two types, equal counts)
    rng = np.random.default_rng(seed)
    values = rng.random((d, 4))
    codes = rng.integers(0, 4, (n, d))
    x = values[np.arange(d), codes]
    g = mdav_groups(x, k)
    got = [set(np.flatnonzero(g == i).tolist()) for i in range(int(g.max()) + 1)]
    assert got == reference_mdav(x, k)


def test_ties_between_distinct_points_go_by_row_id() -> None:
    # k = 3, 7 points: |R| < 3k, >= 2k, so one group around the point farthest from the
    # centroid (9 5/7, 1/7): (12, 0), row 3, squared distance 5.24. Its nearest are (11, 0)
    # (row 6, distance 1), then (10, 1) and (10, -1) tie at 5: row 1 before row 5
    x = np.array([[9, 0], [10, 1], [8, 0], [12, 0], [8, 1], [10, -1], [11, 0]], dtype=float)
    assert mdav_groups(x, 3).tolist() == [1, 0, 1, 0, 1, 1, 0]


def test_exact_centroid_tie_goes_by_row_id() -> None:
    # k = 2, four points: 0.25 (rows 0, 2) and 0.75 (rows 1, 3). The centroid is 0.5, exactly
    # between them, and both squared distances are 1/16: the lowest row id wins, so row 0 is the
    # farthest and takes its duplicate, row 2; the rest is the last group
    x = np.array([[0.25], [0.75], [0.25], [0.75]])
    assert mdav_groups(x, 2).tolist() == [0, 1, 0, 1]
    assert mdav_groups(x[::-1].copy(), 2).tolist() == [0, 1, 0, 1]  # rows 0, 2 are 0.75 now


@pytest.mark.parametrize("seed", range(5))
def test_exact_centroid_over_wide_magnitudes(seed: int) -> None:
    # the exact running sum spans magnitudes from subnormal to 1e150 (no float sum could)
    rng = np.random.default_rng(seed)
    x = rng.choice([1e150, -1e150, 1e-150, 0.0, -0.0, 5.5, 3.0, 5e-324], size=(60, 2))
    g = mdav_groups(x, 3)
    got = [set(np.flatnonzero(g == i).tolist()) for i in range(int(g.max()) + 1)]
    assert got == reference_mdav(x, 3)
