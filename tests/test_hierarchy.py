"""Hierarchies: ARX reading/writing, validation, depth-first codes, LCA, builders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kerckhoffs import Hierarchy
from kerckhoffs.errors import HierarchyError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# paper 001 Fig. 1 (reconstructed in spec minimality.md 2.2), rows deliberately interleaved
EDU = [
    ["1st-4th", "elementary", "without-post-secondary", "*"],
    ["undergrad", "university", "post-secondary", "*"],
    ["9th-10th", "secondary", "without-post-secondary", "*"],
    ["5th-6th", "elementary", "without-post-secondary", "*"],
    ["postgrad", "university", "post-secondary", "*"],
    ["7th-8th", "elementary", "without-post-secondary", "*"],
    ["vocational", "vocational-node", "post-secondary", "*"],
    ["11th-12th", "secondary", "without-post-secondary", "*"],
    ["HS-grad", "secondary", "without-post-secondary", "*"],
]


def test_depth_first_order_makes_every_node_contiguous() -> None:
    h = Hierarchy(EDU, "education")
    assert list(h.leaves) == [
        "1st-4th",
        "5th-6th",
        "7th-8th",
        "9th-10th",
        "11th-12th",
        "HS-grad",
        "undergrad",
        "postgrad",
        "vocational",
    ]
    for level in range(h.height + 1):
        ids = h.node_ids[level]
        assert np.all(np.diff(ids) >= 0)  # contiguous ranges, numbered in order
    # paper 001 Definition 6: coverage[university] = 2, base = 9
    uni = list(h.node_labels(1)).index("university")
    assert h.coverage(1)[uni] == 2 and len(h) == 9


def test_lca() -> None:
    h = Hierarchy(EDU)
    idx = h.leaf_index(["1st-4th", "7th-8th", "HS-grad", "postgrad", "undergrad"])
    lo = idx[[0, 0, 4, 3]]
    hi = idx[[1, 2, 3, 3]]
    assert list(h.lca_label(lo, hi)) == [
        "elementary",
        "without-post-secondary",
        "university",
        "postgrad",
    ]
    assert list(h.lca_label(idx[[0]], idx[[3]])) == ["*"]


def test_read_write_round_trip(tmp_path: Path) -> None:
    h = Hierarchy(EDU)
    f = tmp_path / "edu.csv"
    h.write_csv(f)
    back = Hierarchy.read_csv(f)
    assert back.rows() == h.rows()
    assert f.read_text().splitlines()[0] == "1st-4th;elementary;without-post-secondary;*"


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([["a", "x", "*"], ["b", "*"]], "equal depth"),
        ([["a", "x", "*"], ["a", "y", "*"]], "more than one row"),
        ([["a", "x", "*"], ["b", "x", "root2"]], "single root"),
        ([["a", "x", "p", "*"], ["b", "x", "q", "*"]], "two parents"),
        ([], "empty"),
        ([["a"]], "single root"),
    ],
)
def test_validation(rows, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HierarchyError, match=match):
        Hierarchy(rows)


def test_missing_file_and_wrong_separator(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError, match="not found"):
        Hierarchy.read_csv(tmp_path / "nope.csv")
    f = tmp_path / "comma.csv"
    f.write_text("a,x,*\nb,x,*\n")
    with pytest.raises(HierarchyError, match="';'-separated"):
        Hierarchy.read_csv(f)


def test_interval_builder() -> None:
    h = Hierarchy.intervals([17, 37, 38, 90], (5, 10, 20))
    rows = {r[0]: r for r in h.rows()}
    assert rows["37"] == ["37", "[35-39]", "[30-39]", "[20-39]", "*"]
    assert rows["17"] == ["17", "[15-19]", "[10-19]", "[0-19]", "*"]
    with pytest.raises(HierarchyError, match="multiple"):
        Hierarchy.intervals([1, 2], (5, 7))


def test_flat() -> None:
    h = Hierarchy.flat(["b", "a", "b"])
    assert h.rows() == [["a", "*"], ["b", "*"]] and h.height == 1


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/hierarchies/*.csv")), ids=lambda p: p.name)
def test_example_hierarchies_are_valid(path: Path) -> None:
    h = Hierarchy.read_csv(path)
    assert h.height >= 1 and len(h) >= 2


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=30, unique=True)
)
def test_random_trees_get_contiguous_nodes(pairs) -> None:  # type: ignore[no-untyped-def]
    # leaves (a, b) under node "n{a}" under "m{a % 2}" under "*", listed in random order
    rows = [[f"v{a}.{b}", f"n{a}", f"m{a % 2}", "*"] for a, b in pairs]
    h = Hierarchy(rows)
    for level in range(1, h.height + 1):
        labels = h.labels[level]
        for lab in set(labels):
            where = np.flatnonzero(labels == lab)
            assert where[-1] - where[0] + 1 == len(where)
