"""Privacy models on the papers' worked examples (exact vectors) and against a per-group
Python oracle on random releases (hypothesis)."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    RecursiveCLDiversity,
    TCloseness,
    parse_model,
)


def release_of(
    groups: list[list[str]], sensitive: list[str] | None = None, sa_numeric: bool = False
) -> Release:
    """A release whose groups hold the given SA values (QI = the group label)."""
    rows = [(f"g{i}", v) for i, g in enumerate(groups) for v in g]
    df = pd.DataFrame(rows, columns=["q", "s"])
    if sa_numeric:
        df["s"] = df["s"].astype(float)
    schema = Schema.build(["q"], "s", sensitive_values=sensitive)
    table = Table.encode(df, schema)
    return Release(table, Partition.by_qi(table))


def check(release: Release, model):  # type: ignore[no-untyped-def]
    return release.check([model])[0]


# -- paper 000 (spec asap.md 3.1, 3.2) ------------------------------------------------------------
def test_asap_table1_published_is_2_diverse_with_aids_sensitive() -> None:
    # Table 1(b): group F = {gastritis, heart disease}, group * = {cancer, diabetes, AIDS, AIDS}
    rel = release_of(
        [["gastritis", "heart disease"], ["cancer", "diabetes", "AIDS", "AIDS"]], ["AIDS"]
    )
    r = check(rel, LDiversity(2))
    assert r.satisfied
    assert list(r.group_values) == [np.inf, 2.0]
    assert r.achieved == 2.0
    assert not check(rel, LDiversity(2.01)).satisfied


def test_asap_table1_microdata_violates() -> None:
    # Table 1(a) grouped by Sex: the two males both have AIDS
    rel = release_of(
        [["gastritis", "heart disease", "cancer", "diabetes"], ["AIDS", "AIDS"]], ["AIDS"]
    )
    r = check(rel, LDiversity(2))
    assert not r.satisfied and r.achieved == 1.0 and r.violating == 1


def test_asap_table3_sa_distribution_per_group() -> None:
    rel = release_of([["gastritis", "heart disease"], ["cancer", "diabetes", "AIDS", "AIDS"]])
    hist = rel.histogram()
    labels = list(rel.table.sa_column.labels)
    order = [labels.index(v) for v in ["AIDS", "cancer", "diabetes", "gastritis", "heart disease"]]
    dist = [
        [Fraction(int(c), int(s)) for c in row[order]]
        for row, s in zip(hist.counts, hist.sizes, strict=True)
    ]
    F = Fraction
    assert dist == [[0, 0, 0, F(1, 2), F(1, 2)], [F(1, 2), F(1, 4), F(1, 4), 0, 0]]


def test_asap_table2_four_anonymous_then_mask() -> None:
    df = pd.DataFrame(
        {
            "age": [46, 49, 32, 35, 24, 38, 25, 37],
            "sex": list("FFFFFFMM"),
            "country": ["Mexico"] * 4 + ["Japan"] * 4,
            "disease": ["cancer", "heart disease", "heart disease", "AIDS"] + ["AIDS"] * 4,
        }
    )
    table = Table.encode(
        df, Schema.build(["age", "sex", "country"], "disease", sensitive_values=["AIDS"])
    )
    part = Partition(np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    rel = Release(table, part)
    assert check(rel, KAnonymity(4)).satisfied
    assert check(rel, KAnonymity(4)).achieved == 4
    assert not check(rel, MConfidentiality(2)).satisfied  # Japan: 4 AIDS > floor(4/2)
    cells = rel.generalized_cells()
    assert cells.to_dict("list") == {
        "age": ["[32-49]", "[24-38]"],
        "sex": ["F", "*"],
        "country": ["Mexico", "Japan"],
    }
    # Table 2(c): MASK publishes the Japan group as cancer, cancer, heart disease, AIDS
    sa = table.sa.copy()
    lab = list(table.sa_column.labels)
    sa[4:] = [lab.index(v) for v in ["cancer", "cancer", "heart disease", "AIDS"]]
    masked = Release(table, part, sa_published=sa)
    assert int(masked.perturbed.sum()) == 3
    assert check(masked, MConfidentiality(2)).satisfied
    hist = masked.histogram()
    order = [lab.index(v) for v in ["AIDS", "cancer", "heart disease"]]
    s4 = [[Fraction(int(c), 4) for c in row[order]] for row in hist.counts]
    F = Fraction
    assert s4 == [[F(1, 4), F(1, 4), F(1, 2)], [F(1, 4), F(1, 2), F(1, 4)]]  # Table 4
    # (alpha, k) with AIDS sensitive: the original Japan group is all AIDS
    r = check(rel, AlphaKAnonymity(0.5, 4))
    assert r.achieved == 1.0 and list(r.group_values) == [0.25, 1.0]


# -- paper 001 (spec minimality.md section 4) ------------------------------------------------
HIV = ["HIV"]


@pytest.mark.parametrize(
    ("groups", "achieved", "ok"),
    [
        ([["HIV", "non"], ["HIV"] + ["non"] * 5], 2.0, True),  # Table I(a)
        ([["HIV", "HIV"], ["non"] * 6], 1.0, False),  # Table I(b)
        ([["HIV", "HIV"] + ["non"] * 6], 4.0, True),  # Table I(c) global
        ([["HIV", "HIV", "non", "non"], ["non"] * 4], 2.0, True),  # Table I(d) local
    ],
)
def test_minimality_table_I_two_diversity(groups, achieved, ok) -> None:  # type: ignore[no-untyped-def]
    r = check(release_of(groups, HIV), LDiversity(2))
    assert r.achieved == achieved and r.satisfied is ok


def test_minimality_table_III_all_values_sensitive() -> None:
    good = [
        ["HIV", "Lung Cancer"],
        ["Gallstones", "HIV", "Ulcer", "Alzheimer", "Diabetes"],
        ["Ulcer", "Alzheimer"],
    ]
    bad = [
        ["HIV", "HIV"],
        ["Gallstones", "Lung Cancer", "Ulcer", "Alzheimer", "Diabetes"],
        ["Ulcer", "Alzheimer"],
    ]
    assert check(release_of(good), LDiversity(2)).satisfied
    assert not check(release_of(bad), LDiversity(2)).satisfied
    glob = [
        ["HIV", "HIV", "Gallstones", "Lung Cancer", "Ulcer", "Alzheimer", "Diabetes"],
        ["Ulcer", "Alzheimer"],
    ]
    assert check(release_of(glob), LDiversity(2)).satisfied


def test_minimality_table_IV_three_diversity() -> None:
    good = [["HIV", "non", "non"], ["HIV"] + ["non"] * 7]
    bad = [["HIV", "HIV", "non"], ["non"] * 8]
    assert check(release_of(good, HIV), LDiversity(3)).satisfied
    r = check(release_of(bad, HIV), LDiversity(3))
    assert not r.satisfied and r.achieved == pytest.approx(1.5)


def test_minimality_table_XI_recursive_3_3() -> None:
    good = [["Diabetics", "HIV", "Lung Cancer"], ["HIV", "Ulcer", "Alzhema", "Gallstones"]]
    bad = [["Diabetics", "HIV", "HIV"], ["Lung Cancer", "Ulcer", "Alzhema", "Gallstones"]]
    glob = [["Diabetics", "HIV", "HIV", "Lung Cancer", "Ulcer", "Alzhema", "Gallstones"]]
    r = check(release_of(good), RecursiveCLDiversity(3, 3))
    assert r.satisfied and list(r.group_values) == [1.0, 0.5]
    r = check(release_of(bad), RecursiveCLDiversity(3, 3))
    assert not r.satisfied and r.group_values[0] == np.inf  # fewer than 3 distinct values
    r = check(release_of(glob), RecursiveCLDiversity(3, 3))
    assert r.satisfied and r.achieved == 0.5  # r1 = 2, r3+..+r6 = 4


def test_minimality_table_XII_half_closeness() -> None:
    # self-consistent vector from Table XII(b): q1 = {HIV, HIV}, q2 = {non x6, HIV x2}
    rel = release_of([["HIV", "HIV"], ["non"] * 6 + ["HIV"] * 2])
    r = check(rel, TCloseness(0.5))
    assert r.group_values == pytest.approx([0.6, 0.15])
    assert not r.satisfied and r.violating == 1
    glob = release_of([["HIV", "HIV"] + ["non"] * 6 + ["HIV"] * 2])
    assert check(glob, TCloseness(0.0)).satisfied


def test_minimality_table_XXI_mask_example_m_confidentiality() -> None:
    before = release_of([["HIV", "HIV"], ["HIV", "non"], ["non", "non"]], HIV)
    after = release_of([["HIV", "non"], ["HIV", "non"], ["non", "non"]], HIV)
    assert not check(before, MConfidentiality(2)).satisfied
    r = check(after, MConfidentiality(2))
    assert r.satisfied and r.achieved == 2


# -- hand-computed ---------------------------------------------------------------------------
def test_t_closeness_ordered_distance_li_et_al_salary_example() -> None:
    # Li, Li, Venkatasubramanian (ICDE 2007): salaries 3k..11k; {3k,4k,5k} is 0.375 from the
    # table, {6k,8k,11k} is 0.167.
    rel = release_of([["3", "4", "5"], ["6", "8", "11"], ["7", "9", "10"]], sa_numeric=True)
    r = check(rel, TCloseness(0.2))
    assert r.group_values[:2] == pytest.approx([0.375, 1 / 6])
    assert r.detail == "ordered ground distance"
    assert r.achieved == pytest.approx(0.375) and r.violating == 2  # {7,9,10}: 17/72


def test_entropy_and_distinct() -> None:
    rel = release_of([["a", "b"], ["a", "a", "b", "c"], ["a"]])
    r = check(rel, EntropyLDiversity(2))
    assert r.group_values == pytest.approx([2.0, 2**1.5, 1.0])
    assert list(r.group_ok) == [True, True, False]
    d = check(rel, DistinctLDiversity(2))
    assert list(d.group_values) == [2, 3, 1] and d.achieved == 1


def test_sensitive_set_vs_each_mode() -> None:
    groups = [["HIV", "cancer", "flu", "flu"]]
    as_set = release_of(groups, ["HIV", "cancer"])
    assert check(as_set, LDiversity(2)).achieved == 2.0  # 2 sensitive rows of 4
    df = pd.DataFrame({"q": ["g"] * 4, "s": groups[0]})
    each = Schema.build(["q"], "s", sensitive_values=["HIV", "cancer"], sensitive_mode="each")
    t = Table.encode(df, each)
    assert Release(t, Partition.by_qi(t)).check([LDiversity(2)])[0].achieved == 4.0


def test_parameters_impossible_for_the_data_are_refused() -> None:
    rel = release_of([["a", "b", "c"], ["a", "b"]])
    hist = rel.histogram()
    with pytest.raises(ParameterError, match="larger than the table"):
        KAnonymity(6).validate(hist)
    with pytest.raises(ParameterError, match="distinct values"):
        LDiversity(4).validate(hist, "'s'")
    with pytest.raises(ParameterError, match="distinct values"):
        EntropyLDiversity(3.5).validate(hist)
    LDiversity(3).validate(hist)
    with pytest.raises(ParameterError):
        parse_model("t=1.5")
    with pytest.raises(ParameterError):
        parse_model("k=2.5")


def test_parse_model_round_trip() -> None:
    for spec, cls in [
        ("k=5", KAnonymity),
        ("l=3", LDiversity),
        ("distinct-l=2", DistinctLDiversity),
        ("entropy-l=2.5", EntropyLDiversity),
        ("recursive-cl=3,2", RecursiveCLDiversity),
        ("t=0.2", TCloseness),
        ("alpha-k=0.5,5", AlphaKAnonymity),
        ("m=3", MConfidentiality),
    ]:
        assert isinstance(parse_model(spec), cls)


# -- hypothesis: every model agrees with a per-group Python oracle -------------------------------
@st.composite
def grouped(draw):  # type: ignore[no-untyped-def]
    n_groups = draw(st.integers(1, 6))
    alphabet = draw(st.integers(1, 5))
    groups = [
        draw(st.lists(st.integers(0, alphabet - 1), min_size=1, max_size=9))
        for _ in range(n_groups)
    ]
    sens = draw(st.one_of(st.none(), st.sets(st.integers(0, alphabet - 1), min_size=1)))
    return groups, sens


def _oracle(groups: list[list[int]], sens: set[int] | None) -> dict[str, list]:
    table = Counter(v for g in groups for v in g)
    n = sum(table.values())
    out: dict[str, list] = {k: [] for k in ("size", "count", "distinct", "entropy", "rec", "emd")}
    for g in groups:
        c = Counter(g)
        out["size"].append(len(g))
        out["count"].append(max(c.values()) if sens is None else sum(c[v] for v in sens))
        out["distinct"].append(len(c))
        out["entropy"].append(-sum(x / len(g) * math.log(x / len(g)) for x in c.values()))
        r = sorted(c.values(), reverse=True)
        tail = sum(r[1:])  # l = 2
        out["rec"].append(r[0] / tail if tail else math.inf)
        out["emd"].append(0.5 * sum(abs(c[v] / len(g) - table[v] / n) for v in table))
    return out


@settings(max_examples=examples(150), deadline=None)
@given(grouped(), st.integers(1, 4), st.integers(1, 4))
def test_models_match_a_per_group_oracle(case, k, l) -> None:  # type: ignore[no-untyped-def]  # noqa: E741
    groups, sens = case
    names = [[f"v{v}" for v in g] for g in groups]
    present = {v for g in groups for v in g}
    # naming every value as "the" sensitive set is the same as naming none: each value is its
    # own set (a set of every value could never be diverse)
    if sens is not None and (not (sens & present) or sens >= present):
        sens = None
    sens_names = None if sens is None else [f"v{v}" for v in sens & present]
    sens_eff = None if sens_names is None else sens & present
    rel = release_of(names, sens_names)
    o = _oracle(groups, sens_eff)
    assert check(rel, KAnonymity(k)).group_ok.tolist() == [s >= k for s in o["size"]]
    lres = check(rel, LDiversity(l))
    assert lres.group_ok.tolist() == [
        s >= l * c for s, c in zip(o["size"], o["count"], strict=True)
    ]
    m = check(rel, MConfidentiality(l))
    assert m.group_ok.tolist() == [c <= s // l for s, c in zip(o["size"], o["count"], strict=True)]
    assert check(rel, DistinctLDiversity(l)).group_values.tolist() == o["distinct"]
    assert check(rel, EntropyLDiversity(1)).group_values == pytest.approx(np.exp(o["entropy"]))
    assert check(rel, RecursiveCLDiversity(2, 2)).group_values.tolist() == pytest.approx(o["rec"])
    assert check(rel, TCloseness(0.5)).group_values == pytest.approx(o["emd"])
    a = check(rel, AlphaKAnonymity(0.5, k))
    assert a.group_values == pytest.approx(
        [c / s for s, c in zip(o["size"], o["count"], strict=True)]
    )
