"""The search's tag carry (:func:`kerckhoffs.algorithms.lattice.search._close`) against the
definition: after it, a node is marked upward iff some originally marked node is ``<=`` it in
every coordinate (downward: ``>=``), checked by comparing every pair of level vectors."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.algorithms.lattice.search import _close


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=4),
    st.data(),
    st.booleans(),
)
def test_close_marks_exactly_the_nodes_above_or_below_a_marked_one(
    heights: list[int], data: st.DataObject, upward: bool
) -> None:
    nodes = list(itertools.product(*(range(h + 1) for h in heights)))  # C order = index order
    marked = np.array(data.draw(st.lists(st.booleans(), min_size=len(nodes), max_size=len(nodes))))
    mask = marked.copy()
    _close(mask, tuple(heights), upward=upward)
    for x, got in zip(nodes, mask.tolist(), strict=True):
        below = [y for y, m in zip(nodes, marked.tolist(), strict=True) if m]
        if upward:
            want = any(all(a <= b for a, b in zip(y, x, strict=True)) for y in below)
        else:
            want = any(all(a >= b for a, b in zip(y, x, strict=True)) for y in below)
        assert got == want, (x, heights, upward)
