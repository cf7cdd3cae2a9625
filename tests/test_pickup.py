"""Stratified pick-up (spec asap.md 2.8, Algorithm 4, Theorems 7.1 and 7.2; section 6 item 8):
the running example's two pairings, Theorem 7.1 as a hypothesis test, determinism, the leaking
deterministic pick of spec 3.6 X3, the sensitive-subset pass-through and the refusals."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.pickup import bucket_of_sa, pickup
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Partition
from partition_sets import T, groups_of
from running_example import RUNNING

# Mondrian+ on the running example (spec 3.4): {t4,t5,t7,t8}, {t1,t2}, {t3,t6}
MONDRIAN_PLUS = np.array([1, 1, 2, 0, 0, 2, 0, 0])


def table_of(sa: list[str], subset: list[str] | None = None, mode: str = "set") -> Table:
    df = pd.DataFrame({"x": range(len(sa)), "s": sa})
    schema = Schema.build(
        {"x": {"kind": "numeric"}}, "s", sensitive_values=subset, sensitive_mode=mode
    )
    return Table.encode(df, schema)


def running() -> Table:
    schema = Schema.build({"x": {"kind": "numeric"}, "y": {"kind": "numeric"}}, "disease")
    return Table.encode(RUNNING, schema)


def test_running_example_two_pairings_each_about_half() -> None:
    table = running()
    a = {T(1, 2), T(3, 6), T(4, 8), T(5, 7)}  # the paper's "possible output" (Figure 5b)
    b = {T(1, 2), T(3, 6), T(4, 7), T(5, 8)}
    seen = Counter()
    for seed in range(400):
        part = pickup(table, MONDRIAN_PLUS, 2, np.random.default_rng(seed))
        got = groups_of(part)
        assert got in (a, b)
        seen[got == a] += 1
    assert 150 <= seen[True] <= 250  # each with probability 1/2


def test_groups_below_2l_unchanged_and_partition_object_accepted() -> None:
    table = running()
    part = pickup(table, Partition(MONDRIAN_PLUS), 3, np.random.default_rng(0))
    # every group has fewer than 2l = 6 rows: nothing changes
    assert groups_of(part) == groups_of(MONDRIAN_PLUS)


def test_lowest_row_pick_is_the_leaking_x3_vector() -> None:
    # spec 3.6 X3: rows a < b < c < d with SA X, X, Y, Z -> {a, c}, {b, d}
    table = table_of(["X", "X", "Y", "Z"])
    part = pickup(table, np.zeros(4, dtype=np.int64), 2, None, pick="lowest-row")
    assert groups_of(part) == {T(1, 3), T(2, 4)}


def test_published_sa_is_what_the_groups_are_built_from() -> None:
    # MASK++ passes its perturbed SA: the groups must hold distinct *given* values
    table = table_of(["A", "A", "B", "B"])
    perturbed = table.sa.copy()
    perturbed[:] = [0, 1, 0, 1]  # A, B, A, B
    for seed in range(20):
        part = pickup(table, np.zeros(4), 2, np.random.default_rng(seed), sa=perturbed)
        for g in part.groups():
            assert len(set(perturbed[g].tolist())) == len(g) == 2


def test_sensitive_subset_set_mode() -> None:
    # the subset {A, B} is one bucket: no pick-up group holds two of its rows
    sa = ["A", "B", "C", "D", "E", "F", "G", "H"]
    table = table_of(sa, subset=["A", "B"])
    assert bucket_of_sa(table)[table.sa].tolist() == [0, 0, 2, 3, 4, 5, 6, 7]
    for seed in range(20):
        part = pickup(table, np.zeros(8), 2, np.random.default_rng(seed))
        assert part.n_groups == 4
        assert all(np.count_nonzero(table.sa[g] <= 1) <= 1 for g in part.groups())
    # l-diverse for the subset, but a non-sensitive value fills 6 of 8 rows: not l-eligible
    # over the buckets, so the group passes through unchanged
    crowded = table_of(["A", "B", "C", "C", "C", "C", "C", "C"], subset=["A", "B"])
    part = pickup(crowded, np.zeros(8), 2, np.random.default_rng(0))
    assert part.n_groups == 1


def test_seed_none_draws_fresh_randomness_and_an_int_seed_replays() -> None:
    # scikit-learn's random_state convention (DESIGN.md section 5): None is fresh OS randomness
    # (one of the running example's two pairings each time), an int the same pairing each time
    table = running()
    a = {T(1, 2), T(3, 6), T(4, 8), T(5, 7)}
    b = {T(1, 2), T(3, 6), T(4, 7), T(5, 8)}
    fresh = {frozenset(groups_of(pickup(table, MONDRIAN_PLUS, 2))) for _ in range(40)}
    assert fresh == {frozenset(a), frozenset(b)}  # both, with probability 1 - 2**-39
    assert len({frozenset(groups_of(pickup(table, MONDRIAN_PLUS, 2, 5))) for _ in range(5)}) == 1


def test_refusals() -> None:
    table = running()
    rng = np.random.default_rng(0)
    with pytest.raises(ParameterError, match="whole number"):
        pickup(table, MONDRIAN_PLUS, 2.5, rng)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="at least 1"):
        pickup(table, MONDRIAN_PLUS, 0, rng)
    with pytest.raises(ParameterError, match="pick must be"):
        pickup(table, MONDRIAN_PLUS, 2, rng, pick="first")
    with pytest.raises(ValueError, match="rows"):
        pickup(table, MONDRIAN_PLUS[:5], 2, rng)


# -- Theorem 7.1 and Theorem 7.2 as properties -------------------------------------------------
@st.composite
def l_diverse_partitions(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    """SA codes and a partition whose every group is l-diverse (l-eligible)."""
    l = draw(st.integers(1, 4))  # noqa: E741
    n_groups = draw(st.integers(1, 6))
    sa: list[int] = []
    group: list[int] = []
    for g in range(n_groups):
        size = draw(st.integers(l, 5 * l + 3))
        vals = draw(st.lists(st.integers(0, 7), min_size=size, max_size=size))
        cnt = Counter(vals)
        if size < l * max(cnt.values()):
            # make it l-eligible: all 8 codes round-robin (S_max = ceil(size / 8))
            vals = [i % 8 for i in range(size)]
            assert size >= l * max(Counter(vals).values())
        sa += vals
        group += [g] * size
    perm = draw(st.permutations(range(len(sa))))
    return [sa[i] for i in perm], [group[i] for i in perm], l


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(l_diverse_partitions(), st.integers(0, 2**32 - 1))
def test_theorem_7_1(case: tuple[list[int], list[int], int], seed: int) -> None:
    sa, group_in, l = case  # noqa: E741
    table = table_of([f"v{s:02d}" for s in sa])
    g_in = np.asarray(group_in)
    log = SAReadLog()
    part = pickup(table, g_in, l, np.random.default_rng(seed), sa_log=log)
    sizes_in = np.bincount(g_in)
    for g in part.groups():
        parent = np.unique(g_in[g])
        assert parent.size == 1  # output refines input
        if sizes_in[parent[0]] < 2 * l:  # passed through unchanged
            assert g.size == sizes_in[parent[0]]
        else:
            assert l <= g.size < 2 * l  # Theorem 7.1
            assert np.unique(table.sa[g]).size == g.size  # distinct SA values
    # the rows (and so the SA multiset of every input group) are exactly the input's
    assert part.n == table.n and part.sizes.sum() == table.n
    # Theorem 7.2: the only SA statistic read is each input group's multiset, a union of
    # output groups
    assert log.violations(part.group) == []
    # determinism: the same seed gives the same partition
    again = pickup(table, g_in, l, np.random.default_rng(seed))
    assert np.array_equal(again.group, part.group)
