"""MASK+ (paper 000 Algorithm 3, local look-ahead) and MASK++ (MASK+ then stratified pick-up):
the spec's exact vectors (asap.md 3.4, 3.6 X4-X7, 6 item 13: Table 2/4), the look-ahead
invariants of spec 6 item 7 (a)-(f) and properties 1, 2, 3, 9 as hypothesis tests, and MASK++
refining MASK+ with pick-up groups of l .. 2l-1 distinct values."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Scheme, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.mask import mask
from kerckhoffs.algorithms.mask_plus import (
    lookahead_domain,
    mask_plus,
    mask_plus_counts,
    mask_plus_lookahead,
    mask_plus_plus,
)
from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, LDiversity, MConfidentiality
from running_example import RUNNING


def counts_by_group(release: Release) -> list[Counter]:
    """Per group, the multiset of published SA labels (zero counts dropped)."""
    labels = release.table.sa_column.labels
    return [
        Counter(str(labels[c]) for c in release.sa_published[rows])
        for rows in release.partition.groups()
    ]


def decide(counts: list[int], m: int, sens: list[bool] | None = None, fill: str = "paper"):  # type: ignore[no-untyped-def]
    """(r, perturb, published counts) of one group, counts in value order."""
    c = np.array([counts])
    s = np.ones(c.shape[1], dtype=bool) if sens is None else np.array(sens)
    look = mask_plus_lookahead(c, m, s)
    out = mask_plus_counts(look, s, np.random.default_rng(0), fill)
    return int(look.read[0]), bool(look.perturb[0]), out[0].tolist()


# -- spec 3.4: the 8-tuple running example, m = 3, k = 4 -------------------------------------------


def running_table() -> Table:
    schema = Schema.build({"x": {"kind": "numeric"}, "y": {"kind": "numeric"}}, "disease")
    return Table.encode(RUNNING, schema)


@pytest.mark.parametrize("fill_order", ["random", "paper"])
@pytest.mark.parametrize("seed", range(8))
def test_running_example_group_1(seed: int, fill_order: str) -> None:
    table = running_table()
    models = [KAnonymity(4), MConfidentiality(3)]
    rel = mask_plus(table, models, seed=seed, fill_order=fill_order)
    # MASK step 1, k-anonymity Mondrian with k = 4 (Fig. 4a): {t4,t5,t7,t8}, {t1,t2,t3,t6}
    assert rel.partition.same_as(Partition.from_labels([1, 1, 1, 0, 0, 1, 0, 0]))
    g1 = rel.partition.group[3]
    by_group = dict(zip(range(2), counts_by_group(rel), strict=True))
    assert by_group[g1] == Counter(
        {"heart disease": 1, "mumps": 1, "cancer": 1, "gastritis": 1}
    )  # AIDS 0, diabetes 0
    # Group 2 triggers perturbation mode (r = 2) but its counts are kept: published untouched
    assert not rel.perturbed[[0, 1, 2, 5]].any()
    # tuple level: one of t4, t5 and one of t7, t8 are relabelled
    assert rel.perturbed[[3, 4]].sum() == 1 and rel.perturbed[[6, 7]].sum() == 1
    assert all(r.satisfied for r in rel.check(models))


def test_running_example_decisions() -> None:
    table = running_table()
    labels = table.sa_column.labels.tolist()
    assert labels == ["AIDS", "cancer", "diabetes", "gastritis", "heart disease", "mumps"]
    # Group 1 <0,0,0,0,2,2> in ascending order AIDS, diabetes, heart disease, mumps, cancer,
    # gastritis: B_2 = 1 <= 1, B_3 = 4/3 > 1 -> r = 2
    r, perturb, out = decide([0, 2, 0, 2, 0, 0], 3)
    assert (r, perturb, out) == (2, True, [0, 1, 0, 1, 1, 1])
    # Group 2 <0,0,1,1,1,1>: perturbation mode with r = 2, the fill reproduces the counts
    assert decide([1, 0, 1, 0, 1, 1], 3) == (2, True, [1, 0, 1, 0, 1, 1])


def test_mask_plus_plus_running_example_unchanged() -> None:
    # both groups have 4 < 2m = 6 rows: stratified pick-up changes nothing (spec 3.4)
    table = running_table()
    for seed in range(5):
        plus = mask_plus(table, [KAnonymity(4), MConfidentiality(3)], seed=seed)
        pp = mask_plus_plus(
            table, [KAnonymity(3), MConfidentiality(3)], seed=seed, partition=plus.partition
        )
        assert pp.partition.same_as(plus.partition)
        assert np.array_equal(pp.sa_published, plus.sa_published)


# -- spec 6 item 13: Table 2 / Table 4, m = 2, every value counted ---------------------------------
def table_2(japan: list[str]) -> Table:
    df = pd.DataFrame(
        {
            "age": [46, 49, 32, 35, 24, 38, 25, 37],
            "sex": ["F", "F", "F", "F", "F", "F", "M", "M"],
            "country": ["Mexico"] * 4 + ["Japan"] * 4,
            "disease": ["cancer", "heart disease", "heart disease", "AIDS", *japan],
        }
    )
    schema = Schema.build({"age": {"kind": "numeric"}, "sex": {}, "country": {}}, "disease")
    return Table.encode(df, schema)


TABLE_2B = Partition.from_labels([0, 0, 0, 0, 1, 1, 1, 1])
JAPAN_GROUPS = [
    ["AIDS"] * 4,
    ["AIDS", "AIDS", "heart disease", "AIDS"],
    ["heart disease", "AIDS", "heart disease", "AIDS"],
]


@pytest.mark.parametrize("fill_order", ["random", "paper"])
@pytest.mark.parametrize("japan", JAPAN_GROUPS)
def test_table_2_japan_groups_publish_the_same_counts(japan: list[str], fill_order: str) -> None:
    for seed in range(10):
        table = table_2(japan + ["cancer"] * 0)
        # the domain is AIDS < cancer < heart disease (cancer is present in the Mexico group)
        assert table.sa_column.labels.tolist() == ["AIDS", "cancer", "heart disease"]
        models = [KAnonymity(4), MConfidentiality(2)]
        rel = mask_plus(table, models, seed=seed, partition=TABLE_2B, fill_order=fill_order)
        mexico, jp = counts_by_group(rel)
        assert mexico == Counter({"AIDS": 1, "cancer": 1, "heart disease": 2})
        assert not rel.perturbed[:4].any()
        assert jp == Counter({"heart disease": 2, "AIDS": 2})  # cancer 0
        assert all(r.satisfied for r in rel.check(models))


def test_table_2_decisions() -> None:
    # Mexico (AIDS 1, cancer 1, heart 2): every test passes -> unchanged
    assert decide([1, 1, 2], 2) == (3, False, [1, 1, 2])
    # Japan: reads only cancer = 0, B_2 = 4/1 > 2 -> r = 1 -> cancer 0, heart 2, AIDS 2
    for japan in ([4, 0, 0], [3, 0, 1], [2, 0, 2]):
        assert decide(japan, 2) == (1, True, [2, 0, 2])


# -- spec 3.6 X4-X7 --------------------------------------------------------------------------------
def test_x4_off_by_one_fix() -> None:
    # |D_S| = 4, m = 2, f = <0,0,1,3>: the printed loop exits without testing B_3 = 4 > 2
    assert decide([0, 0, 1, 3], 2) == (2, True, [0, 0, 2, 2])


def test_x5_infeasible_fill_falls_back_to_r0() -> None:
    # |D_S| = 4, m = 3, <0,0,2,2>: (|D_S|-1)*cap = 3 < 4, so f_1 is not read -> <1,1,1,1>
    for fill in ("paper", "random"):
        assert decide([0, 0, 2, 2], 3, fill=fill) == (0, True, [1, 1, 1, 1])


def test_x6_x7_paper_fill_order() -> None:
    # X6: a0 b1 c2 d4 e0 f0, m = 2: order a,e,f,b,c,d; r = 3 -> a0 b1 c3 d3 e0 f0
    assert decide([0, 1, 2, 4, 0, 0], 2) == (3, True, [0, 1, 3, 3, 0, 0])
    # X7: a1 b2 c3 d4 e10 f0 g0, m = 3: B = 4, 5, 6, 7.5 -> r = 4 -> c5 d6 e6
    assert decide([1, 2, 3, 4, 10, 0, 0], 3) == (4, True, [1, 2, 5, 6, 6, 0, 0])


def test_random_fill_order_keeps_the_reads() -> None:
    seen = set()
    for seed in range(40):
        look = mask_plus_lookahead(np.array([[0, 1, 2, 4, 0, 0]]), 2)
        out = mask_plus_counts(look, np.ones(6, bool), np.random.default_rng(seed), "random")
        row = out[0].tolist()
        assert [row[0], row[4], row[5]] == [0, 0, 0] and sum(row) == 7
        assert all(0 <= v <= 3 for v in row)
        seen.add(tuple(row))
    assert len(seen) > 1  # the unread values are refilled in random order


def test_sensitive_subset_decisions() -> None:
    # every unread value non-sensitive: the group is left as it is
    sens = [True, True, False, False, False, False]
    assert decide([0, 0, 1, 1, 2, 4], 3, sens) == (2, False, [0, 0, 1, 1, 2, 4])
    # an unread sensitive value: capped at floor(8/3) = 2, the non-sensitive value absorbs
    _, perturb, out = decide([0, 1, 6, 1], 3, [True, False, True, False])
    assert perturb and out[2] <= 2 and sum(out) == 8 and out[0] == 0


# -- spec 6 item 7 (a)-(f) on count vectors --------------------------------------------------------
@st.composite
def count_vectors(draw):  # type: ignore[no-untyped-def]
    d = draw(st.integers(2, 7))
    m = draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(0, 12), min_size=d, max_size=d))
    subset = draw(st.booleans())
    sens = draw(st.lists(st.booleans(), min_size=d, max_size=d)) if subset else [True] * d
    return counts, m, sens


@settings(max_examples=examples(400), deadline=None)
@given(
    cv=count_vectors(),
    fill=st.sampled_from(["random", "paper"]),
    seed=st.integers(0, 1000),
)
def test_lookahead_invariants(cv, fill, seed) -> None:  # type: ignore[no-untyped-def]
    counts, m, sens_l = cv
    c = np.array([counts])
    sens = np.array(sens_l)
    n = int(c.sum())
    d = c.shape[1]
    cap = n // m
    feasible = (~sens).any() or d * cap >= n
    assume(n > 0 and feasible and sens.any())  # no sensitive value: mask+ reads nothing
    look = mask_plus_lookahead(c, m, sens)
    out = mask_plus_counts(look, sens, np.random.default_rng(seed), fill)[0]
    r = int(look.read[0])
    order = look.order[0]
    f = look.sorted_counts[0]
    assert np.all(np.diff(f) >= 0)
    # (a) every value read is within the cap
    assert np.all(f[: min(r, d)] <= cap)
    # (d) the group keeps its size
    assert int(out.sum()) == n
    # m-confidential: every sensitive value within the cap
    assert np.all(out[sens] <= cap)
    if not look.perturb[0]:
        # (f) unperturbed groups are m-confidential, and published as they are
        assert np.array_equal(out, c[0])
        assert np.all(c[0][sens] <= cap)
        return
    assert r < d
    # (b) the r values read keep their counts and stay the r smallest
    assert np.array_equal(out[order[:r]], f[:r])
    lb = f[r - 1] if r else 0
    # (c) the other counts lie in [f_r, cap(v)]
    unread = order[r:]
    assert np.all(out[unread] >= lb)
    assert np.all(out[unread][sens[unread]] <= cap)
    if r:
        assert out[unread].min() >= out[order[:r]].max()
    # (e) the decision re-run on the published counts is the same (simulatability)
    again = mask_plus_lookahead(out[None, :], m, sens)
    assert int(again.read[0]) == r
    assert bool(again.perturb[0])
    assert np.array_equal(again.sorted_counts[0][:r], f[:r])


# -- properties 1, 2, 3, 9 on tables ---------------------------------------------------------------
CITY = Hierarchy(
    [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"], ["c1", "C", "*"]],
    "city",
)
DISEASE = Hierarchy(
    [
        ["flu", "mild", "*"],
        ["cold", "mild", "*"],
        ["hiv", "severe", "*"],
        ["cancer", "severe", "*"],
        ["ulcer", "other", "*"],
        ["gout", "other", "*"],
    ],
    "disease",
)


def random_table(seed: int, n: int, setting: str, skew: float) -> Table:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 60, n)
    p = np.array([3.0, 3.0, 0.5 + skew, 0.5 + skew / 2, 3.0, 1.0])
    disease = rng.choice(DISEASE.leaves, n, p=p / p.sum())
    disease[(age >= 50) & (rng.random(n) < skew / 3)] = "hiv"
    df = pd.DataFrame(
        {"age": age, "city": rng.choice(["a1", "a2", "b1", "b2", "c1"], n), "disease": disease}
    )
    sensitive = None if setting == "all" else frozenset({"hiv", "cancer"})
    schema = Schema(
        (
            Column("age", widths=(5, 10)),
            Column("city", Role.QUASI, Kind.CATEGORICAL, CITY),
            Column("disease", Role.SENSITIVE, Kind.CATEGORICAL, DISEASE),
        ),
        sensitive,
        sensitive_mode="each" if setting == "each" else "set",
    )
    return Table.encode(df, schema, strict_sensitive=False)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(12, 150),
    extra=st.integers(0, 6),
    m=st.integers(2, 4),
    setting=st.sampled_from(["set", "each", "all"]),
    fill=st.sampled_from(["random", "paper"]),
    skew=st.floats(0.0, 3.0),
)
def test_mask_plus_properties(seed, n, extra, m, setting, fill, skew) -> None:  # type: ignore[no-untyped-def]
    k = m + extra
    table = random_table(seed, n, setting, skew)
    assume(n >= k)
    models = [KAnonymity(k), MConfidentiality(m)]
    try:  # m above what the data allows (e.g. more than its distinct values) is refused
        MConfidentiality(m).validate(Release(table, Partition.single(n)).histogram(), "disease")
    except ParameterError:
        with pytest.raises(ParameterError):
            mask_plus(table, models, seed=seed, fill_order=fill)
        return
    base = mondrian(table, [KAnonymity(k)], categorical_cuts="median").partition
    sizes = base.sizes
    if setting == "all" and (table.n_sa * (sizes // m) < sizes).any():
        # property 3: a group that cannot hold |D_S| values at floor(|G|/m) each is refused
        with pytest.raises(ParameterError, match=r"\|D_S\| \* floor\(\|G\|/m\) < \|G\|"):
            mask_plus(table, models, seed=seed, fill_order=fill)
        return
    log = SAReadLog()
    rel = mask_plus(table, models, seed=seed, fill_order=fill, sa_log=log)
    # property 2: the groups are the QI-only k-anonymous partition, every row once
    assert rel.partition.same_as(base)
    # property 1: k-anonymous, every published count <= floor(|G|/m)
    assert all(r.satisfied for r in rel.check(models))
    hist = rel.histogram()
    assert np.all(hist.sizes >= k)
    assert np.all(hist.sensitive_count <= hist.sizes // m)
    # table untouched; per group the row count is kept; values whose count is kept keep rows
    orig = Release(table, rel.partition).histogram().counts
    value_of_code, sens, _ = lookahead_domain(table)
    d = sens.size
    g = rel.partition.group.astype(np.int64)
    before = np.bincount(g * d + value_of_code[table.sa], minlength=hist.n_groups * d)
    after = np.bincount(g * d + value_of_code[rel.sa_published], minlength=hist.n_groups * d)
    kept = (before == after).reshape(hist.n_groups, d)
    assert not rel.perturbed[kept[g, value_of_code[table.sa]]].any()
    assert np.array_equal(orig.sum(axis=1), hist.sizes)
    # (e) on the release: the look-ahead re-run on the published counts reads the same prefix
    look0 = mask_plus_lookahead(before.reshape(-1, d), m, sens)
    look1 = mask_plus_lookahead(after.reshape(-1, d), m, sens)
    assert np.array_equal(look0.read, look1.read)
    changed = (before != after).reshape(hist.n_groups, d).any(axis=1)
    assert not (changed & ~look0.perturb).any()
    # the information-flow audit: every statistic read is on a union of published groups
    assert log.violations(rel.partition.group) == []
    # property 9: same seed, same output
    again = mask_plus(table, models, seed=seed, fill_order=fill)
    assert np.array_equal(again.sa_published, rel.sa_published)
    assert again.partition.same_as(rel.partition)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(20, 150),
    m=st.integers(2, 3),
    extra=st.integers(2, 8),
    setting=st.sampled_from(["set", "each", "all"]),
    skew=st.floats(0.0, 3.0),
)
def test_mask_plus_plus_properties(seed, n, m, extra, setting, skew) -> None:  # type: ignore[no-untyped-def]
    table = random_table(seed, n, setting, skew)
    k_base = m + extra
    base = mondrian(table, [KAnonymity(k_base)]).partition
    sizes = base.sizes
    assume(not (setting == "all" and (table.n_sa * (sizes // m) < sizes).any()))
    models = [KAnonymity(m), MConfidentiality(m)]  # the paper's l = m
    plus = mask_plus(table, models, seed=seed, partition=base)
    log = SAReadLog()
    pp = mask_plus_plus(table, models, seed=seed, partition=base, sa_log=log)
    # the perturbation is MASK+'s (one RNG stream: MASK+ first), pick-up only regroups
    assert np.array_equal(pp.sa_published, plus.sa_published)
    assert all(r.satisfied for r in pp.check(models))
    # refines MASK+: each output group inside one MASK+ group, each MASK+ group's multiset kept
    pg, bg = pp.partition.group, base.group
    pairs = np.unique(np.stack([pg, bg], axis=1), axis=0)
    assert np.unique(pairs[:, 0]).size == pairs.shape[0]
    # pick-up groups (Theorem 7.1): l .. 2l-1 rows of distinct (bucketed) published values
    from kerckhoffs.algorithms.pickup import bucket_of_sa

    bucket = bucket_of_sa(table)[pp.sa_published]
    split_parents = set()
    for rows in pp.partition.groups():
        parent = int(bg[rows[0]])
        if rows.size < base.sizes[parent]:
            split_parents.add(parent)
            assert m <= rows.size < 2 * m
            assert np.unique(bucket[rows]).size == rows.size
    for parent in range(base.n_groups):
        if parent not in split_parents:
            assert (
                base.sizes[parent] < 2 * m
                or np.bincount(bucket[bg == parent]).max() * m > base.sizes[parent]
            )
    assert log.violations(pp.partition.group) == []
    again = mask_plus_plus(table, models, seed=seed, partition=base)
    assert again.partition.same_as(pp.partition)
    assert np.array_equal(again.sa_published, pp.sa_published)


# -- parameters, registration, schemes, sa_log -----------------------------------------------------
def test_registered_and_refuses_bad_parameters() -> None:
    assert get("mask+").run is mask_plus and get("mask++").run is mask_plus_plus
    assert Scheme.BUCKETIZATION in get("mask++").schemes
    table = running_table()
    with pytest.raises(ParameterError, match="needs both"):
        mask_plus(table, [KAnonymity(4)])
    with pytest.raises(ParameterError, match="cannot enforce l-diversity"):
        mask_plus(table, [KAnonymity(4), MConfidentiality(2), LDiversity(2)])
    with pytest.raises(ParameterError, match="k=2 must be at least m=3"):
        mask_plus(table, [KAnonymity(2), MConfidentiality(3)])
    with pytest.raises(ParameterError, match="fill_order"):
        mask_plus(table, [KAnonymity(4), MConfidentiality(2)], fill_order="nope")
    with pytest.raises(ParameterError, match="unknown option"):
        mask_plus(table, [KAnonymity(4), MConfidentiality(2)], colour="red")
    with pytest.raises(ParameterError, match="scheme"):
        mask_plus_plus(table, [KAnonymity(4), MConfidentiality(2)], scheme="dp")
    with pytest.raises(ParameterError, match="pickup_l=2 < k=4"):
        mask_plus_plus(table, [KAnonymity(4), MConfidentiality(2)], pickup_l=2)
    with pytest.raises(ParameterError, match="pickup_l must be"):
        mask_plus_plus(table, [KAnonymity(4), MConfidentiality(3)], pickup_l=2)


def test_group_too_small_for_the_domain_is_refused() -> None:
    # property 3: k = m = 5 gives one group of 8 rows over 6 values: 6 * floor(8/5) = 6 < 8
    table = running_table()
    with pytest.raises(ParameterError, match=r"group of 8 rows cannot hold"):
        mask_plus(table, [KAnonymity(5), MConfidentiality(5)], seed=0)
    # m = 4: 6 * floor(8/4) = 12 >= 8, published
    rel = mask_plus(table, [KAnonymity(8), MConfidentiality(4)], seed=0)
    assert rel.check([MConfidentiality(4)])[0].satisfied


def test_bucketization() -> None:
    table = running_table()
    rel = mask_plus_plus(
        table, [KAnonymity(4), MConfidentiality(3)], seed=1, scheme="bucketization"
    )
    assert rel.scheme == Scheme.BUCKETIZATION
    assert rel.provenance.algorithm == "mask++" and rel.provenance.parameters["pickup_l"] == 4
    st_ = rel.frames()["st"]
    assert int(st_["count"].sum()) == 8


def test_sa_log_of_mask_and_mask_plus() -> None:
    table = table_2(JAPAN_GROUPS[0])
    t_set = dataclasses.replace(
        table, sensitive=table.sa_column.labels == "AIDS"
    )  # AIDS alone sensitive, as in Table 2
    log = SAReadLog()
    rel = mask(t_set, [KAnonymity(4), MConfidentiality(2)], seed=0, partition=TABLE_2B, sa_log=log)
    whats = [r.what for r in log.reads]
    assert whats[0].startswith("MASK step 2") and whats[1].startswith("MASK steps 2-3")
    assert log.reads[1].rows.tolist() == [0, 1, 2, 3]  # the satisfying (Mexico) group
    assert rel.perturbed[4:].sum() == 3
    log = SAReadLog()
    plus = mask_plus(
        table, [KAnonymity(4), MConfidentiality(2)], seed=0, partition=TABLE_2B, sa_log=log
    )
    assert len(log.reads) == 1 and log.violations(plus.partition.group) == []
    assert sorted(log.reads[0].rows.tolist()) == list(range(8))
