"""Placing an insider coalition's records in a release's cells (the transportation problem of
:mod:`kerckhoffs.attacks.insider.placement`): one maximum placement, and which cells' loads differ
between maximum placements, against a brute force over every assignment."""

from __future__ import annotations

from itertools import product

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.attacks.insider.placement import place


@st.composite
def instances(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    n_records = draw(st.integers(0, 6))
    n_cells = draw(st.integers(1, 5))
    capacity = np.array(draw(st.lists(st.integers(0, 3), min_size=n_cells, max_size=n_cells)))
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, max(n_records - 1, 0)), st.integers(0, n_cells - 1)),
            max_size=3 * n_records,
        )
    )
    if not n_records:
        pairs = []
    record = np.array([p[0] for p in pairs], dtype=np.int64)
    cell = np.array([p[1] for p in pairs], dtype=np.int64)
    return record, cell, n_records, capacity


def brute_force(
    record: np.ndarray, cell: np.ndarray, n_records: int, capacity: np.ndarray
) -> tuple[int, set[tuple[int, ...]]]:
    """The largest number of records placed, and every load vector that places that many."""
    options = [
        sorted({int(c) for r, c in zip(record, cell, strict=True) if r == i} | {-1})
        for i in range(n_records)
    ]
    best, loads = -1, set()
    for choice in product(*options):
        load = np.zeros(capacity.size, dtype=np.int64)
        for c in choice:
            if c >= 0:
                load[c] += 1
        if (load > capacity).any():
            continue
        placed = int(load.sum())
        if placed > best:
            best, loads = placed, set()
        if placed == best:
            loads.add(tuple(load.tolist()))
    return best, loads


@settings(max_examples=examples(300), deadline=None)
@given(instances())
def test_placement_equals_brute_force(case: tuple) -> None:
    record, cell, n_records, capacity = case
    got = place(record, cell, n_records, capacity)
    best, loads = brute_force(record, cell, n_records, capacity)
    assert got.placed == best
    assert tuple(got.load.tolist()) in loads
    varies = [len({lv[c] for lv in loads}) > 1 for c in range(capacity.size)]
    assert got.variable.tolist() == varies
    assert got.low.tolist() == [min(lv[c] for lv in loads) for c in range(capacity.size)]
    assert got.high.tolist() == [max(lv[c] for lv in loads) for c in range(capacity.size)]
    assert got.unique == (len(loads) == 1)
    assert got.unplaceable == sum(
        1 for i in range(n_records) if not any(capacity[c] > 0 for c in cell[record == i])
    )


def test_a_record_fitting_two_boxes_goes_where_its_value_is() -> None:
    # Table I's 2-private release: Bob (Asthma) fits the boxes of groups 0 and 1, but group 0
    # publishes no Asthma; cells (group, value) with values Asthma = 0, Epilepsy = 1, Flu = 2
    capacity = np.array([0, 1, 1, 2, 0, 0])  # group 0: Epilepsy, Flu; group 1: Asthma x 2
    bob = place(np.array([0, 0]), np.array([0, 3]), 1, capacity)
    assert bob.load.tolist() == [0, 0, 0, 1, 0, 0] and bob.unique


@settings(max_examples=examples(300), deadline=None)
@given(instances(), st.data())
def test_realizable_equals_brute_force(case: tuple, data: st.DataObject) -> None:
    """Whether some maximum placement puts exactly the given loads in some cells (what the
    insider attack asks of a release's recorded m-privacy check), against every assignment."""
    record, cell, n_records, capacity = case
    got = place(record, cell, n_records, capacity)
    _, loads = brute_force(record, cell, n_records, capacity)
    cells = data.draw(st.lists(st.integers(0, capacity.size - 1), unique=True, max_size=3))
    fixed = {c: data.draw(st.integers(0, 3)) for c in cells}
    want = any(all(lv[c] == x for c, x in fixed.items()) for lv in loads)
    assert got.realizable(fixed) == want
    upper = {c: x + data.draw(st.integers(0, 2)) for c, x in fixed.items()}
    want = any(all(x <= lv[c] <= upper[c] for c, x in fixed.items()) for lv in loads)
    assert got.realizable(fixed, upper) == want
    # the parts: cells whose loads move together share a label
    parts = got.parts(range(capacity.size))
    for a in range(capacity.size):
        for b in range(capacity.size):
            if parts[a] != parts[b] or parts[a] == -1:
                # loads of different parts combine freely among the maximum placements
                combos = {(lv[a], lv[b]) for lv in loads}
                assert combos == {
                    (x, y) for x in {p[0] for p in combos} for y in {p[1] for p in combos}
                }
