"""Partition refuses group ids that are not exactly ``0..n_groups-1`` (empty phantom groups)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kerckhoffs import Partition, Release, Table
from kerckhoffs.datasets import generate_hospital, hospital_schema
from kerckhoffs.models import KAnonymity


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([0, 0, 7, 7], "id 1 has no row (largest id 7"),
        ([1, 1, 2], "id 0 has no row (largest id 2"),
        ([0, 2, 2, 3], "id 1 has no row (largest id 3"),
        ([0, -1, 1], "group id -1 is negative"),
        ([-3, -5], "group id -5 is negative"),
        # an id far above the row count: found without counting up to it
        (np.array([0, 5_000_000_000, 1], dtype=np.int64), "id 2 has no row (largest id 5000000000"),
        (np.array([0.0, 1.0]), "group ids must be integers, got dtype float64"),
    ],
)
def test_ids_with_gaps_or_negatives_are_refused_in_one_line(ids: object, message: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        Partition(np.asarray(ids))
    text = str(excinfo.value)
    assert message in text
    assert "\n" not in text
    if "no row" in message or "negative" in message:
        assert "Partition.from_labels" in text


def test_the_phantom_group_example_is_refused_and_from_labels_is_the_way() -> None:
    """The brief's example: ids 0 and 7 used to make six empty groups, so k was 0."""
    with pytest.raises(ValueError, match="id 1 has no row"):
        Partition(np.array([0, 0, 7, 7]))
    p = Partition.from_labels([0, 0, 7, 7])
    assert p.n_groups == 2
    assert p.sizes.tolist() == [2, 2]


def test_valid_ids_in_any_order_are_kept_as_int32() -> None:
    p = Partition(np.array([2, 0, 1, 2, 0], dtype=np.int64))
    assert p.group.dtype == np.int32
    assert p.group.tolist() == [2, 0, 1, 2, 0]
    assert p.n_groups == 3 and p.sizes.tolist() == [2, 1, 2]
    assert Partition(np.array([True, False])).n_groups == 2
    empty = Partition(np.zeros(0, dtype=np.int32))
    assert empty.n == 0 and empty.n_groups == 0


@given(st.lists(st.integers(0, 6), min_size=1, max_size=40))
def test_accepts_exactly_the_ids_that_use_every_value_below_the_max(ids: list[int]) -> None:
    expected_missing = sorted(set(range(max(ids) + 1)) - set(ids))
    if not expected_missing:
        assert Partition(np.array(ids)).n_groups == max(ids) + 1
    else:
        with pytest.raises(ValueError, match=f"id {expected_missing[0]} has no row"):
            Partition(np.array(ids))


def test_a_checked_release_no_longer_reports_k_zero_for_gapped_ids() -> None:
    """Every group a release checks holds a row: k is the smallest real group."""
    t = Table.encode(generate_hospital(50, seed=1), hospital_schema())
    p = Partition.from_labels(np.where(np.arange(50) < 20, 0, 7))
    (k,) = Release(t, p).check([KAnonymity(1)])
    assert k.achieved == 20
