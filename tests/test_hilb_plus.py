"""Hilb+ (literal paper 000 Algorithm 2), Hilb+ strict and Hilb++ (spec asap.md 2.6, 2.9):
the running example and the literal Hilb+ counterexample as exact vectors (spec 3.4, 2.6),
literal transcriptions of spec 2.6 as oracles, the section 6 properties as hypothesis tests,
and the SA-read logs the information-flow audit judges (spec 1.10 item 2)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.hilb import (
    hilb,
    hilb_groups,
    hilb_plus,
    hilb_plus_groups,
    hilb_plus_plus,
    hilb_plus_plus_strict,
    hilb_plus_strict,
    hilb_plus_strict_groups,
)
from kerckhoffs.algorithms.hilbert_curve import hilbert_order
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Scheme
from partition_sets import T, groups_of

RUNNING_XY = [(6, 0), (7, 0), (7, 1), (5, 3), (5, 2), (6, 4), (2, 6), (0, 4)]
DISEASES = [
    "AIDS",
    "diabetes",
    "heart disease",
    "cancer",
    "cancer",
    "mumps",
    "gastritis",
    "gastritis",
]
PLUS = (hilb_plus, hilb_plus_strict)
PLUS_PLUS = (hilb_plus_plus, hilb_plus_plus_strict)


def grid_table(sa: list[str], xy: list[tuple[int, int]] = RUNNING_XY) -> Table:
    """Rows on the 8x8 grid (codes = coordinates), as in tests/test_hilb.py."""
    axis = Hierarchy.flat(range(8), name="0..7", keep_order=True)
    df = pd.DataFrame({"x": [x for x, _ in xy], "y": [y for _, y in xy], "s": sa})
    quasi = {
        "x": {"kind": "categorical", "hierarchy": axis},
        "y": {"kind": "categorical", "hierarchy": axis},
    }
    return Table.encode(df, Schema.build(quasi, "s"))


# -- the running example (spec 3.4, section 6 item 10) ---------------------------------------------
def test_running_example_hilb_plus() -> None:
    # 8-2 = 6 >= 2*2 -> {t1,t2}; 6-2 = 4 >= 2*2 -> {t3,t4}; 4-2 = 2 < 2*2 -> the rest whole
    table = grid_table(DISEASES)
    release = hilb_plus(table, [LDiversity(2)])
    assert groups_of(release.partition.group) == {T(1, 2), T(3, 4), T(5, 6, 7, 8)}
    assert release.scheme == Scheme.GENERALIZATION
    assert release.provenance.algorithm == "hilb+"
    assert release.provenance.parameters == {"l": 2, "bits": 3}
    assert release.check([LDiversity(2)])[0].satisfied
    assert hilb_plus_groups(table.sa, np.arange(8), 2).tolist() == [0, 0, 1, 1, 2, 2, 2, 2]
    given_index = hilb_plus(table, [LDiversity(2)], hilbert_index=np.arange(8))
    assert given_index.partition.same_as(release.partition)
    # Hilb (original) on the same table, for contrast: {t1,t2}, {t3,t4}, {t5,t7}, {t6,t8}
    assert groups_of(hilb(table, [LDiversity(2)]).partition.group) == {
        T(1, 2),
        T(3, 4),
        T(5, 7),
        T(6, 8),
    }


def test_running_example_hilb_plus_strict() -> None:
    # S_max(T) = 2 -> k = 4, 8 - 4 >= 4 -> {t1..t4}; rest S_max 2, 4 - 4 < 4 -> whole
    table = grid_table(DISEASES)
    release = hilb_plus_strict(table, [LDiversity(2)])
    assert groups_of(release.partition.group) == {T(1, 2, 3, 4), T(5, 6, 7, 8)}
    assert release.provenance.algorithm == "hilb+strict"
    assert release.check([LDiversity(2)])[0].satisfied
    assert hilb_plus_strict_groups(table.sa, np.arange(8), 2).tolist() == [0] * 4 + [1] * 4


def test_running_example_hilb_plus_plus() -> None:
    # spec 3.4: {t1,t2}, {t3,t4} unchanged; {t5..t8} -> {t5, t7|t8}, {t6, t8|t7}
    table = grid_table(DISEASES)
    seen = set()
    for seed in range(40):
        got = groups_of(hilb_plus_plus(table, [LDiversity(2)], seed=seed).partition.group)
        assert T(1, 2) in got and T(3, 4) in got and len(got) == 4
        seen.add(frozenset(got - {T(1, 2), T(3, 4)}))
    assert seen == {
        frozenset({T(5, 7), T(6, 8)}),
        frozenset({T(5, 8), T(6, 7)}),
    }
    # strict: {t1..t4} (4 distinct values) and {t5..t8} are each cut into two pairs
    for seed in range(10):
        got = groups_of(hilb_plus_plus_strict(table, [LDiversity(2)], seed=seed).partition.group)
        assert len(got) == 4 and all(len(g) == 2 for g in got)
        assert all(g <= T(1, 2, 3, 4) or g <= T(5, 6, 7, 8) for g in got)
        assert {frozenset({5, 6}), frozenset({7, 8})}.isdisjoint(got)


# -- the literal Hilb+ counterexample (spec 2.6; asap.md A9: its frontier reads tuple-level SA) ---
COUNTER_SA = ["A", "A", "B", "C", "B", "C"]  # rows t1..t6 in Q_T order, l = 2
COUNTER_XY = [(0, 0), (1, 0), (1, 1), (0, 1), (0, 2), (0, 3)]  # Hilbert indices 0, 1, 2, 3, 4, 5


def posteriors(worlds: list[tuple[str, ...]], row: int, value: str) -> Fraction:
    return Fraction(sum(w[row] == value for w in worlds), len(worlds))


def test_literal_hilb_plus_counterexample() -> None:
    table = grid_table(COUNTER_SA, COUNTER_XY)
    assert hilbert_order(table.qi, 3).tolist() == list(range(6))
    release = hilb_plus(table, [LDiversity(2)])
    # spec: {t1,t3} (A, B) and {t2,t4,t5,t6} (A, B, C, C)
    assert groups_of(release.partition.group) == {T(1, 3), T(2, 4, 5, 6)}
    assert release.check([LDiversity(2)])[0].satisfied  # 2-diverse as published
    # the spec's world counts: 24 naive worlds (each group's multiset arranged over its rows),
    # 6 of which literal Hilb+ turns into the same groups
    one = sorted(set(itertools.permutations("AB")))
    two = sorted(set(itertools.permutations("ABCC")))
    naive = [(a[0], b[0], a[1], b[1], b[2], b[3]) for a in one for b in two]
    assert len(naive) == 24
    target = Partition(release.partition.group)
    smart = [
        w
        for w in naive
        if Partition(hilb_plus_groups(np.array([ord(v) for v in w]), np.arange(6), 2)).same_as(
            target
        )
    ]
    assert len(smart) == 6
    assert all(w[1] == w[0] for w in smart)  # t2 was skipped: it repeats t1's value
    assert posteriors(naive, 1, "C") == Fraction(1, 2)
    assert posteriors(smart, 1, "C") == 0
    for row in (3, 4, 5):
        assert posteriors(naive, row, "C") == Fraction(1, 2)
        assert posteriors(smart, row, "C") == Fraction(2, 3)  # > 1/l in the smart view
    # the information-flow audit: the frontier {t1,t2,t3} is no union of published groups
    log = SAReadLog()
    hilb_plus(table, [LDiversity(2)], sa_log=log)
    bad = log.violations(release.partition.group)
    assert len(bad) == 1 and "frontier" in bad[0][0] and bad[0][1] == 1
    # Hilb+ strict publishes the six rows as one group and passes
    strict_log = SAReadLog()
    strict = hilb_plus_strict(table, [LDiversity(2)], sa_log=strict_log)
    assert strict.partition.n_groups == 1
    assert strict_log.violations(strict.partition.group) == []


def test_audit_fails_hilb_and_passes_hilb_plus_where_no_row_is_skipped() -> None:
    table = grid_table(DISEASES)
    # Hilb: the roll-back step tried {t5,t6} and {t5,t6,t7} (never published)
    log = SAReadLog()
    release = hilb(table, [LDiversity(2)], sa_log=log)
    whats = dict(log.violations(release.partition.group))
    assert set(whats) == {
        "hilb: frontier (SA of the remainder's rows up to the last bucket head taken)",
        "hilb: SA values of every candidate G1 (give S_max(G - G1))",
    }
    # the literal Hilb+ skips no row on the running example, so its reads are all recomputable
    for fn in (hilb_plus, hilb_plus_strict, hilb_plus_plus, hilb_plus_plus_strict):
        log = SAReadLog()
        release = fn(table, [LDiversity(2)], seed=1, sa_log=log)
        assert log.reads and log.violations(release.partition.group) == []


# -- literal transcriptions of spec 2.6 as oracles -------------------------------------------------
def smax(sa: list[int], rows: list[int]) -> int:
    return max(Counter(sa[i] for i in rows).values(), default=0)


def hilb_plus_reference(sa: list[int], qt: list[int], l: int) -> tuple[list[list[int]], bool]:  # noqa: E741
    """Algorithm 2 line by line (sets recomputed each step); also whether a row was skipped."""
    remaining = sorted(range(len(sa)), key=lambda i: (qt[i], i))
    out: list[list[int]] = []
    skipped = False
    while remaining:
        if len(remaining) - l < l * smax(sa, remaining):
            out.append(sorted(remaining))
            break
        heads: list[int] = []
        values: set[int] = set()
        for row in remaining:  # frontier in Q_T order: first row of each bucket
            if sa[row] not in values:
                values.add(sa[row])
                heads.append(row)
        g1 = heads[:l]
        skipped |= remaining.index(g1[-1]) != l - 1
        out.append(sorted(g1))
        remaining = [r for r in remaining if r not in g1]
    return out, skipped


def strict_reference(sa: list[int], qt: list[int], l: int) -> list[list[int]]:  # noqa: E741
    """HILB_PLUS_STRICT of spec 2.6, verbatim."""
    g = sorted(range(len(sa)), key=lambda i: (qt[i], i))
    out: list[list[int]] = []
    while g:
        k = l * smax(sa, g)
        if len(g) - k >= k:
            out.append(sorted(g[:k]))
            g = g[k:]
        else:
            out.append(sorted(g))
            g = []
    return out


@st.composite
def eligible_inputs(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    l = draw(st.integers(1, 4))  # noqa: E741
    n = draw(st.integers(1, 40))
    alphabet = draw(st.integers(1, 7))
    sa = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    qt = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n))
    top = max(Counter(sa).values())
    if n < l * top:  # make it l-eligible by adding distinct fresh values
        extra = l * top - n
        sa += list(range(alphabet, alphabet + extra))
        qt += draw(st.lists(st.integers(0, 15), min_size=extra, max_size=extra))
    return sa, qt, l


def listed(group: np.ndarray) -> list[list[int]]:
    return [sorted(np.flatnonzero(group == g).tolist()) for g in range(int(group.max()) + 1)]


@settings(max_examples=examples(300), deadline=None)
@given(eligible_inputs())
def test_hilb_plus_matches_the_literal_spec(inputs: tuple[list[int], list[int], int]) -> None:
    sa, qt, l = inputs  # noqa: E741
    order = hilbert_order(index=np.asarray(qt))
    log = SAReadLog()
    group = hilb_plus_groups(np.asarray(sa), order, l, sa_log=log)
    want, skipped = hilb_plus_reference(sa, qt, l)
    assert listed(group) == want
    # the audit fails exactly when some frontier read skipped a row
    assert bool(log.violations(group)) == skipped
    for rows in want:  # property 1: every group l-diverse
        assert len(rows) >= l * smax(sa, rows)


@settings(max_examples=examples(300), deadline=None)
@given(eligible_inputs())
def test_hilb_plus_strict_matches_the_spec(inputs: tuple[list[int], list[int], int]) -> None:
    sa, qt, l = inputs  # noqa: E741
    order = hilbert_order(index=np.asarray(qt))
    log = SAReadLog()
    group = hilb_plus_strict_groups(np.asarray(sa), order, l, sa_log=log)
    assert listed(group) == strict_reference(sa, qt, l)
    assert log.violations(group) == []  # simulatable: every read on a union of groups
    # contiguous chunks of the Hilbert order, numbered along it
    assert (np.diff(group[order]) >= 0).all()


def test_hilb_log_fails_on_every_roll_back() -> None:
    rng = np.random.default_rng(11)
    failed = 0
    for _ in range(200):
        n = int(rng.integers(4, 30))
        sa = rng.integers(0, 5, n)
        top = int(np.bincount(sa).max())
        sa = np.concatenate([sa, 5 + np.arange(max(0, 2 * top - n))])
        log = SAReadLog()
        result = hilb_groups(sa, np.arange(sa.size), 2, sa_log=log)
        bad = log.violations(result.group)
        if result.rolled_back.any():
            assert bad  # a roll-back means a failed greedy candidate was read
        failed += bool(bad)
    assert failed > 0


# -- properties on tables (spec section 6: 1 diversity, 2 partition, 3 preconditions, 9 determinism)
@st.composite
def random_tables(draw: st.DrawFn) -> tuple[Table, int]:
    l = draw(st.integers(1, 4))  # noqa: E741
    n = draw(st.integers(1, 60))
    alphabet = draw(st.integers(1, 8))
    sa = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    top = max(Counter(sa).values())
    sa += list(range(alphabet, alphabet + max(0, l * top - n)))
    m = len(sa)
    cols = {
        f"q{j}": draw(st.lists(st.integers(0, draw(st.integers(0, 30))), min_size=m, max_size=m))
        for j in range(draw(st.integers(1, 4)))
    }
    df = pd.DataFrame({**cols, "s": [f"v{v}" for v in sa]})
    schema = Schema.build({c: {"kind": "numeric"} for c in cols}, "s")
    return Table.encode(df, schema), l


def assert_partition_and_diversity(release, table: Table, l: int) -> None:  # noqa: E741
    part = release.partition
    assert part.n == table.n and part.sizes.min() >= 1  # property 2: a partition of the rows
    assert part.same_as(Partition.from_labels(part.group))
    assert release.check([LDiversity(l)])[0].satisfied  # property 1
    hist = release.histogram()
    assert (part.sizes >= l * hist.counts.max(axis=1)).all()
    assert np.array_equal(release.sa_published, table.sa)  # SA untouched


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables())
def test_plus_properties(tab: tuple[Table, int]) -> None:
    table, l = tab  # noqa: E741
    for fn in PLUS:
        release = fn(table, [LDiversity(l)])
        assert_partition_and_diversity(release, table, l)
        again = fn(table, [LDiversity(l)], seed=7)  # property 9: deterministic, seed unused
        assert np.array_equal(again.partition.group, release.partition.group)
    strict_log = SAReadLog()
    strict = hilb_plus_strict(table, [LDiversity(l)], sa_log=strict_log)
    assert strict_log.violations(strict.partition.group) == []


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(), st.integers(0, 2**32 - 1))
def test_plus_plus_properties(tab: tuple[Table, int], seed: int) -> None:
    table, l = tab  # noqa: E741
    for fn, base in zip(PLUS_PLUS, PLUS, strict=True):
        coarse = base(table, [LDiversity(l)]).partition.group
        release = fn(table, [LDiversity(l)], seed=seed)
        assert_partition_and_diversity(release, table, l)
        group = release.partition.group
        # refines Hilb+: every group inside one Hilb+ group
        pairs = np.unique(np.stack([group, coarse], axis=1), axis=0)
        assert np.unique(pairs[:, 0]).size == pairs.shape[0]
        # pick-up group sizes (Theorem 7.1): groups cut from Hilb+ groups of >= 2l rows have
        # l..2l-1 rows with distinct SA values; smaller Hilb+ groups pass unchanged
        coarse_size = np.bincount(coarse)[coarse]
        sizes = release.partition.sizes
        hist = release.histogram()
        cut = np.unique(group[coarse_size >= 2 * l])
        assert ((sizes[cut] >= l) & (sizes[cut] < 2 * l)).all()
        assert (hist.counts[cut].max(axis=1) == 1).all()
        kept = group[coarse_size < 2 * l]
        assert (sizes[kept] == coarse_size[coarse_size < 2 * l]).all()
        # property 9: same seed, same release
        again = fn(table, [LDiversity(l)], seed=seed)
        assert np.array_equal(again.partition.group, group)
    log = SAReadLog()
    strict = hilb_plus_plus_strict(table, [LDiversity(l)], seed=seed, sa_log=log)
    assert log.violations(strict.partition.group) == []


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(2, 5), st.integers(1, 30), st.integers(0, 5))
def test_preconditions_refuse_ineligible_tables(l: int, smax_: int, others: int) -> None:  # noqa: E741
    # property 3: |T| < l * S_max(T) raises, naming l
    sa = ["hot"] * smax_ + [f"v{i}" for i in range(min(others, l * smax_ - smax_ - 1))]
    xy = [(i % 8, (i // 8) % 8) for i in range(len(sa))]
    table = grid_table(sa, xy)
    assert table.n < l * smax_
    for fn in PLUS + PLUS_PLUS:
        with pytest.raises(ParameterError, match=f"l={l}") as err:
            fn(table, [LDiversity(l)])
        assert "\n" not in str(err.value)


def test_independent_of_row_order_when_qi_vectors_differ() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {"a": rng.permutation(80), "b": rng.integers(0, 9, 80), "s": rng.choice(list("pqrstu"), 80)}
    )
    schema = Schema.build({"a": {"kind": "numeric"}, "b": {"kind": "numeric"}}, "s")
    perm = rng.permutation(80)
    for fn in PLUS:
        base = fn(Table.encode(df, schema), [LDiversity(3)])
        shuffled = fn(Table.encode(df.iloc[perm].reset_index(drop=True), schema), [LDiversity(3)])
        back = np.empty(80, dtype=np.int32)
        back[perm] = shuffled.partition.group
        assert Partition(back).same_as(base.partition)


# -- options, refusals, registry -------------------------------------------------------------------
def test_schemes_and_refusals() -> None:
    table = grid_table(DISEASES)
    for fn in PLUS_PLUS:
        gen = fn(table, [LDiversity(2)], seed=4)
        bkt = fn(table, [LDiversity(2)], seed=4, scheme="bucketization")
        assert gen.scheme == Scheme.GENERALIZATION and bkt.scheme == Scheme.BUCKETIZATION
        assert gen.partition.same_as(bkt.partition)  # the scheme changes publishing only
        assert bkt.provenance.parameters == {"l": 2, "scheme": "bucketization", "bits": 3}
        with pytest.raises(ParameterError, match="scheme must be one of"):
            fn(table, [LDiversity(2)], scheme="suppression")
    for fn in PLUS + PLUS_PLUS:
        name = fn(table, [LDiversity(2)], seed=0).provenance.algorithm
        with pytest.raises(ParameterError, match="cannot enforce k-anonymity"):
            fn(table, [LDiversity(2), KAnonymity(2)])
        with pytest.raises(ParameterError, match=re.escape(f"{name} needs an l-diversity model")):
            fn(table, [])
        with pytest.raises(ParameterError, match="whole number"):
            fn(table, [LDiversity(2.5)])
        with pytest.raises(ParameterError, match=re.escape(f"{name}: hilbert_index has 3 values")):
            fn(table, [LDiversity(2)], hilbert_index=np.arange(3))
        with pytest.raises(ParameterError, match="bits=2 is too few"):
            fn(table, [LDiversity(2)], bits=2)


def test_registered() -> None:
    for name, fn, randomized in (
        ("hilb+", hilb_plus, False),
        ("hilb+strict", hilb_plus_strict, False),
        ("hilb++", hilb_plus_plus, True),
        ("hilb++strict", hilb_plus_plus_strict, True),
    ):
        info = get(name)
        assert info.run is fn
        assert info.models == ("LDiversity",)
        assert info.randomized is randomized
        want = (
            (Scheme.GENERALIZATION, Scheme.BUCKETIZATION)
            if randomized
            else (Scheme.GENERALIZATION,)
        )
        assert info.schemes == want
    assert "NOT algorithm-safe" in (hilb_plus.__doc__ or "")
    assert "A, A, B, C, B, C" in (hilb_plus.__doc__ or "")
