"""MASK (paper 001 Algorithm 1): Table XXI and paper 000's Table 2/4 as exact vectors, the
plan's invariants (spec minimality.md section 7 items 21-27), and hypothesis properties of
MASK on Mondrian over random tables, in the subset (set / each) and all-values settings."""

from __future__ import annotations

import dataclasses
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Scheme, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.mask import mask, mask_perturb, mask_plan
from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.errors import CannotPublish, ParameterError
from kerckhoffs.models import KAnonymity, LDiversity, MConfidentiality

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ADULT_SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "adult" / "schema.toml"


def counts_by_group(release: Release) -> list[Counter]:
    """Per group, the multiset of published SA labels."""
    labels = release.table.sa_column.labels
    return [
        Counter(str(labels[c]) for c in release.sa_published[rows])
        for rows in release.partition.groups()
    ]


# -- Table XXI (spec minimality.md 4.15): k = 2, m = 2 ---------------------------------------------
Q_HIER = Hierarchy([["q1", "Q", "*"], ["q2", "Q", "*"], ["q3", "R", "*"], ["q4", "R", "*"]], "q")


def qid_table(qid: list[str], disease: list[str]) -> Table:
    """One QI ``qid`` (hierarchy Q_HIER) and the SA ``disease`` with HIV sensitive."""
    schema = Schema(
        (Column("qid", Role.QUASI, Kind.CATEGORICAL, Q_HIER), Column("disease", Role.SENSITIVE)),
        frozenset({"HIV"}),
    )
    return Table.encode(pd.DataFrame({"qid": qid, "disease": disease}), schema)


def table_xxi() -> Table:
    return qid_table(
        ["q1", "q2", "q3", "q3", "q4", "q4"], ["HIV", "HIV", "HIV", "non", "non", "non"]
    )


@pytest.mark.parametrize("seed", range(12))
def test_table_xxi_exact(seed: int) -> None:
    table = table_xxi()
    models = [KAnonymity(2), MConfidentiality(2)]
    rel = mask(table, models, seed=seed)
    # (b) the 2-anonymous base: Mondrian groups {q1, q2}, {q3, q3}, {q4, q4}
    assert rel.partition.same_as(Partition.from_labels([0, 0, 1, 1, 2, 2]))
    cells = rel.generalized_cells()["qid"].tolist()
    assert [cells[g] for g in rel.partition.group] == ["Q", "Q", "q3", "q3", "q4", "q4"]
    # (c) after step 4: Q holds one HIV and one non-sensitive value; q3, q4 untouched
    assert counts_by_group(rel) == [
        Counter({"HIV": 1, "non": 1}),
        Counter({"HIV": 1, "non": 1}),
        Counter({"non": 2}),
    ]
    assert int(rel.perturbed.sum()) == 1
    (row,) = np.flatnonzero(rel.perturbed)
    assert row in (0, 1) and table.decode_sa()[row] == "HIV"
    assert all(r.satisfied for r in rel.check(models))
    # the original column is untouched and the frames publish the distorted one
    assert table.decode_sa().tolist() == ["HIV", "HIV", "HIV", "non", "non", "non"]
    frame = rel.frames()["release"]
    assert sorted(frame["disease"].tolist()) == ["HIV", "HIV", "non", "non", "non", "non"]


def test_table_xxi_plan() -> None:
    table = table_xxi()
    part = Partition.from_labels([0, 0, 1, 1, 2, 2])
    plan = mask_plan(table, part, 2, np.random.default_rng(0))
    assert plan.violating[:, 0].tolist() == [True, False, False]  # V = {Q}
    assert plan.lookalikes[0].tolist() == [1]  # u = (2-1)*1, L = {q3} (proportion 1/2 > 0)
    assert plan.drawn[0, 0] == 1  # D = {0.5 with probability 1}
    assert plan.targets[:, 0].tolist() == [1, 1, 0]  # p_E = 1/2 -> one HIV of two kept


def test_table_xxi_two_lookalikes_hypothetical() -> None:
    # the paper's aside: with L = {q3, q4}, D = {1/2: 1/2, 0: 1/2}, and drawing 0 changes both
    # Q values. Two violating groups force u = 2 (m = 2) so L = {q3, q4} as in the aside.
    table = qid_table(
        ["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"],
        ["HIV", "HIV", "HIV", "HIV", "HIV", "non", "non", "non"],
    )
    part = Partition.by_qi(table)
    seen = set()
    for seed in range(40):
        plan = mask_plan(table, part, 2, np.random.default_rng(seed))
        assert sorted(plan.lookalikes[0].tolist()) == [2, 3]
        seen.update(plan.targets[:2, 0].tolist())
        pub = mask_perturb(table, part, 2, np.random.default_rng(seed), plan=plan)
        hiv = np.bincount(part.group, weights=pub == table.sa_column.labels.tolist().index("HIV"))
        assert hiv[:2].tolist() == plan.targets[:2, 0].tolist()
    assert seen == {0, 1}


# -- paper 000 Table 2 / Table 4 (spec asap.md 3.2) ------------------------------------------------
def table_2() -> Table:
    df = pd.DataFrame(
        {
            "age": [46, 49, 32, 35, 24, 38, 25, 37],
            "sex": ["F", "F", "F", "F", "F", "F", "M", "M"],
            "country": ["Mexico"] * 4 + ["Japan"] * 4,
            "disease": [
                "cancer",
                "heart disease",
                "heart disease",
                "AIDS",
                "AIDS",
                "AIDS",
                "AIDS",
                "AIDS",
            ],
        }
    )
    schema = Schema.build(
        {"age": {"kind": "numeric"}, "sex": {}, "country": {}}, "disease", sensitive_values=["AIDS"]
    )
    return Table.encode(df, schema)


TABLE_2B = Partition.from_labels([0, 0, 0, 0, 1, 1, 1, 1])


def test_table_2b_is_the_4_anonymous_table() -> None:
    table = table_2()
    rel = Release(table, TABLE_2B)
    assert rel.generalized_cells().values.tolist() == [
        ["[32-49]", "F", "Mexico"],
        ["[24-38]", "*", "Japan"],
    ]
    k, m = rel.check([KAnonymity(4), MConfidentiality(2)])
    assert k.satisfied and not m.satisfied and m.group_ok.tolist() == [True, False]


def test_table_2c_mask_output() -> None:
    table = table_2()
    models = [KAnonymity(4), MConfidentiality(2)]
    outcomes = set()
    for seed in range(60):
        rel = mask(table, models, seed=seed, partition=TABLE_2B)
        mexico, japan = counts_by_group(rel)
        assert mexico == Counter({"cancer": 1, "heart disease": 2, "AIDS": 1})  # unchanged
        # Japan: p = 1/4 from the only satisfying group -> 1 AIDS kept of 4 (<= floor(4/2))
        assert japan["AIDS"] == 1 and japan["AIDS"] <= 4 // 2
        assert set(japan) <= {"AIDS", "cancer", "heart disease"}
        assert int(rel.perturbed.sum()) == 3 and not rel.perturbed[:4].any()
        assert all(r.satisfied for r in rel.check(models))
        outcomes.add(tuple(sorted(japan.items())))
    # Table 2(c)'s Japan group (cancer, cancer, heart disease, AIDS) is one of the outcomes
    assert (("AIDS", 1), ("cancer", 2), ("heart disease", 1)) in outcomes


def test_table_4_s_star_of_table_2c() -> None:
    table = table_2()
    mexico = ["cancer", "heart disease", "heart disease", "AIDS"]
    japan = ["cancer", "cancer", "heart disease", "AIDS"]
    published = [*mexico, *japan]
    labels = table.sa_column.labels.tolist()
    rel = Release(table, TABLE_2B, sa_published=np.array([labels.index(v) for v in published]))
    hist = rel.histogram()
    cols = [labels.index(v) for v in ["AIDS", "cancer", "heart disease"]]
    s_star = [
        [Fraction(int(c), int(n)) for c in row[cols]]
        for row, n in zip(hist.counts, hist.sizes, strict=True)
    ]
    F = Fraction
    assert s_star == [[F(1, 4), F(1, 4), F(1, 2)], [F(1, 4), F(1, 2), F(1, 4)]]
    assert rel.check([MConfidentiality(2)])[0].satisfied


# -- parameters ------------------------------------------------------------------------------------
def test_registered_and_refuses_bad_parameters() -> None:
    assert get("mask").run is mask
    table = table_xxi()
    with pytest.raises(ParameterError, match="needs both"):
        mask(table, [KAnonymity(2)])
    with pytest.raises(ParameterError, match="cannot enforce l-diversity"):
        mask(table, [KAnonymity(2), MConfidentiality(2), LDiversity(2)])
    with pytest.raises(ParameterError, match=r"needs \(m-1\)\*\|V\| = 4 groups"):
        mask(table, [KAnonymity(2), MConfidentiality(3)])  # k < m is allowed; this table is not
    with pytest.raises(ParameterError, match="larger than the table"):
        mask(table, [KAnonymity(7), MConfidentiality(2)])
    with pytest.raises(ParameterError, match="replacement"):
        mask(table, [KAnonymity(2), MConfidentiality(2)], replacement="nope")
    with pytest.raises(ParameterError, match="unknown option"):
        mask(table, [KAnonymity(2), MConfidentiality(2)], colour="red")
    with pytest.raises(ParameterError, match=r"group of 1 rows \(< k=2\)"):
        mask(table, [KAnonymity(2), MConfidentiality(2)], partition=Partition.by_qi(table))


def test_cannot_publish_when_too_few_groups_satisfy() -> None:
    # Table XXI with q3 holding two HIV: V = {Q, q3}, only q4 satisfies, u = 2 > 1
    table = table_xxi()
    t2 = dataclasses.replace(table, sa=np.array([0, 0, 0, 0, 1, 1], dtype=np.int32))
    assert t2.decode_sa().tolist()[:4] == ["HIV"] * 4
    with pytest.raises(CannotPublish, match="cannot be published"):
        mask(t2, [KAnonymity(2), MConfidentiality(2)], seed=0)


def test_no_violation_returns_the_k_anonymous_table() -> None:
    # every base group satisfies m: the k-anonymous table is published as is (step 2(b))
    table = table_xxi()
    rel = mask(table, [KAnonymity(2), MConfidentiality(1)], seed=0)
    assert not rel.perturbed.any()
    base = mondrian(table, [KAnonymity(2)], categorical_cuts="median")  # MASK's base partition
    assert rel.partition.same_as(base.partition)


def test_single_violating_group_is_refused() -> None:
    # one group (5 AIDS of 8 > floor(8/2)) and no satisfying group to copy: u = 1 > 0
    with pytest.raises(CannotPublish, match="cannot be published"):
        mask(table_2(), [KAnonymity(8), MConfidentiality(2)], seed=3)


def test_bucketization_scheme() -> None:
    rel = mask(table_xxi(), [KAnonymity(2), MConfidentiality(2)], seed=1, scheme="bucketization")
    assert rel.scheme == Scheme.BUCKETIZATION
    st_ = rel.frames()["st"]
    assert int(st_.loc[st_["disease"] == "HIV", "count"].sum()) == 2


# -- hypothesis ------------------------------------------------------------------------------------
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
    ],
    "disease",
)


def random_table(seed: int, n: int, setting: str, skew: float) -> Table:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 60, n)
    p = np.array([3.0, 3.0, 0.5 + skew, 0.5 + skew / 2, 3.0])
    disease = rng.choice(DISEASE.leaves, n, p=p / p.sum())
    # make the sensitive values cluster in old ages so that some groups violate
    old = age >= 50
    disease[old & (rng.random(n) < skew / 4)] = "hiv"
    df = pd.DataFrame(
        {
            "age": age,
            "city": rng.choice(["a1", "a2", "b1", "b2", "c1"], n),
            "disease": disease,
        }
    )
    sensitive = None if setting == "all" else frozenset({"hiv", "cancer"})
    mode = "each" if setting == "each" else "set"
    schema = Schema(
        (
            Column("age", widths=(5, 10)),
            Column("city", Role.QUASI, Kind.CATEGORICAL, CITY),
            Column("disease", Role.SENSITIVE, Kind.CATEGORICAL, DISEASE),
        ),
        sensitive,
        sensitive_mode=mode,
    )
    return Table.encode(df, schema, strict_sensitive=False)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(20, 160),
    extra=st.integers(0, 6),
    m=st.integers(2, 4),
    setting=st.sampled_from(["set", "each", "all"]),
    replacement=st.sampled_from(["nearest", "uniform"]),
    skew=st.floats(0.0, 3.0),
)
def test_mask_properties(seed, n, extra, m, setting, replacement, skew) -> None:  # type: ignore[no-untyped-def]
    k = m + extra
    table = random_table(seed, n, setting, skew)
    original = table.sa.copy()
    models = [KAnonymity(k), MConfidentiality(m)]
    try:
        rel = mask(table, models, seed=seed, replacement=replacement)
    except ParameterError as exc:
        assume("cannot be published" not in str(exc) and "too large" not in str(exc))
        raise
    assert np.array_equal(table.sa, original)  # the original column is never written
    # output k-anonymous and every published group m-confidential
    for res in rel.check(models):
        assert res.satisfied, res.summary()
    # the QI partition is Mondrian's k-anonymous partition (blind to the SA)
    base = mondrian(table, [KAnonymity(k)], categorical_cuts="median").partition
    assert rel.partition.same_as(base)
    # only violating groups are perturbed; others keep their SA multiset row by row
    before = MConfidentiality(m).evaluate(Release(table, rel.partition).histogram())
    touched = np.unique(rel.partition.group[rel.perturbed])
    assert not before.group_ok[touched].any()
    ok_rows = before.group_ok[rel.partition.group]
    assert np.array_equal(rel.sa_published[ok_rows], original[ok_rows])
    hist0 = Release(table, rel.partition).histogram().counts
    hist1 = rel.histogram().counts
    assert np.array_equal(hist0[before.group_ok], hist1[before.group_ok])
    if setting != "all":
        # with a subset: changes go from sensitive values to non-sensitive ones only
        assert table.sensitive[original[rel.perturbed]].all()
        assert not table.sensitive[rel.sa_published[rel.perturbed]].any()
    # same seed, same release; the published frames are identical
    again = mask(table, models, seed=seed, replacement=replacement)
    assert np.array_equal(again.sa_published, rel.sa_published)
    assert again.frames()["release"].equals(rel.frames()["release"])


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(30, 160),
    k=st.integers(3, 8),
    m=st.integers(2, 3),
    setting=st.sampled_from(["set", "each", "all"]),
    skew=st.floats(0.5, 3.0),
)
def test_plan_invariants(seed, n, k, m, setting, skew) -> None:  # type: ignore[no-untyped-def]
    table = random_table(seed, n, setting, skew)
    part = mondrian(table, [KAnonymity(k)], categorical_cuts="median").partition
    try:
        plan = mask_plan(table, part, m, np.random.default_rng(seed))
    except ParameterError:
        assume(False)
        raise
    sizes = part.sizes
    cap = sizes // m
    in_v = plan.violating.any(axis=1)
    good = np.flatnonzero(~in_v)
    for s in range(len(plan.sets)):
        vs = np.flatnonzero(plan.violating[:, s])
        assert np.array_equal(vs, np.flatnonzero(plan.set_counts[:, s] > cap))
        lk = plan.lookalikes[s]
        if vs.size == 0:
            assert lk.size == 0 and (plan.targets[:, s] == plan.set_counts[:, s]).all()
            continue
        # |L| = (m-1)|V| satisfying groups with the highest proportions of the set
        assert lk.size == (m - 1) * vs.size and np.isin(lk, good).all()
        prop = plan.set_counts[:, s] / sizes
        rest = np.setdiff1d(good, lk)
        if rest.size:
            assert prop[lk].min() >= prop[rest].max()
        drawn = plan.drawn[vs, s]
        assert np.isin(drawn, lk).all()
        t = plan.targets[vs, s]
        assert (t <= cap[vs]).all() and (t < plan.set_counts[vs, s]).all()
        if not plan.all_values:
            # target = min(round_half_down(p_E |E|), floor(|E|/m)) exactly
            exact = [
                min(
                    int(
                        np.ceil(
                            Fraction(int(plan.set_counts[d, s]) * int(sizes[g]), int(sizes[d]))
                            - Fraction(1, 2)
                        )
                    ),
                    int(cap[g]),
                )
                for g, d in zip(vs, drawn, strict=True)
            ]
            assert t.tolist() == exact
    # applying the plan publishes exactly the targets
    pub = mask_perturb(table, part, m, np.random.default_rng(seed + 1), plan=plan)
    rel = Release(table, part, sa_published=pub)
    if not plan.sets:  # no sensitive value occurs: nothing to protect, nothing perturbed
        assert np.array_equal(pub, table.sa)
        return
    onehot = np.stack([mask_ for mask_ in plan.sets], axis=1).astype(np.int64)
    got = rel.histogram().counts @ onehot
    # every value sensitive: values that receive moved rows grow (below their cap)
    exact = plan.violating | ~in_v[:, None] | (not plan.all_values)
    assert np.array_equal(got[exact], plan.targets[exact])
    assert (got[~exact] >= plan.targets[~exact]).all()
    assert (got[in_v] <= cap[in_v, None]).all()


def test_other_base_algorithm() -> None:
    table = random_table(0, 120, "set", 0.5)
    rel = mask(table, [KAnonymity(6), MConfidentiality(2)], seed=0, base="local-recoding")
    assert rel.provenance.parameters["base"] == "local-recoding"
    base = get("local-recoding").run(table, [KAnonymity(6)]).partition
    assert rel.partition.same_as(base)
    assert all(r.satisfied for r in rel.check([KAnonymity(6), MConfidentiality(2)]))


# -- real data smoke test --------------------------------------------------------------------------
@pytest.mark.skipif(not (DATA / "adult" / "adult.data").exists(), reason="no shared Adult data")
def test_adult_k50_m3() -> None:
    from kerckhoffs.datasets import load_adult

    table = Table.encode(load_adult(DATA / "adult"), Schema.from_toml(ADULT_SCHEMA))
    assert int(table.sensitive[table.sa].sum()) == 1566
    models = [KAnonymity(50), MConfidentiality(3)]
    rel = mask(table, models, seed=0)
    assert all(r.satisfied for r in rel.check(models))
    assert 0 < int(rel.perturbed.sum()) < 1566
    assert not table.sensitive[rel.sa_published[rel.perturbed]].any()


@pytest.mark.parametrize("seed", range(6))
def test_k_below_m_distorts_small_groups_to_no_sensitive_value(seed: int) -> None:
    """Paper 001 Fig. 10 runs MASK with k = 2 < m. Hand-derived: Mondrian k = 2 pairs the rows
    by qid (q1 q1 | q2 q2 | q3 q3 | q4 q4); only {q1} holds HIV (1 of 2 > 1/3), the three
    others hold none, so L = (m - 1) |V| = 2 groups of proportion 0, D = {0}, and the target
    min(round(0 * 2), floor(2 / 3)) = 0: the one HIV row becomes non-sensitive, nothing else
    changes, and every group is 3-confidential (no sensitive value left)."""
    table = qid_table(["q1", "q1", "q2", "q2", "q3", "q3", "q4", "q4"], ["HIV"] + ["non"] * 7)
    rel = mask(table, [KAnonymity(2), MConfidentiality(3)], seed=seed)
    assert rel.partition.same_as(Partition.from_labels([0, 0, 1, 1, 2, 2, 3, 3]))
    assert rel.perturbed.tolist() == [True] + [False] * 7
    assert counts_by_group(rel) == [Counter({"non": 2})] * 4
