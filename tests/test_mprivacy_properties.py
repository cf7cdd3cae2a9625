"""Properties of the m-privacy verifiers (spec mprivacy.md section 7): every verifier agrees
with brute force (P1), provider order does not change a verdict (P3), m-privacy is monotone
in m (P4), m = 0 is C itself (P5), the frequency-l closed form equals Definition 2.1 checked
exhaustively, and the vectorized exact verifier equals brute force per group."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.mprivacy.constraints import Conjunction, Constraint, DistinctL, FrequencyL, KAnon
from kerckhoffs.mprivacy.exact import achieved_m, m_private_groups
from kerckhoffs.mprivacy.group import GroupStats
from kerckhoffs.mprivacy.verify import (
    adaptive,
    binary,
    bottom_up,
    brute,
    direct,
    exact,
    exhaustive,
    top_down,
)

FAST = settings(max_examples=examples(60), deadline=None)


@st.composite
def groups(draw, max_providers: int = 12, max_records: int = 30, max_sa: int = 5):  # type: ignore[no-untyped-def]
    n_sa = draw(st.integers(1, max_sa))
    n_prov = draw(st.integers(1, max_providers))
    size = draw(st.integers(1, max_records))
    prov = draw(st.lists(st.integers(0, n_prov - 1), min_size=size, max_size=size))
    sa = draw(st.lists(st.integers(0, n_sa - 1), min_size=size, max_size=size))
    return GroupStats.from_records(np.array(prov), np.array(sa), n_sa)


@st.composite
def monotone_constraints(draw):  # type: ignore[no-untyped-def]
    k = draw(st.integers(1, 12))
    l = draw(st.integers(1, 4))  # noqa: E741
    which = draw(st.sampled_from(["k", "l", "kl"]))
    if which == "k":
        return KAnon(k)
    if which == "l":
        return DistinctL(l)
    return Conjunction((KAnon(k), DistinctL(l)))


@FAST
@given(groups(max_providers=9), monotone_constraints(), st.integers(0, 10))
def test_every_verifier_equals_brute_force(g: GroupStats, c: Constraint, m: int) -> None:
    expected = brute(g, m, c).private
    for fn in (direct, bottom_up, top_down, binary, adaptive, exact):
        assert fn(g, m, c).private == expected, fn.__name__
    assert adaptive(g, m, c, mode="records_per_provider").private == expected


@settings(max_examples=examples(15), deadline=None)
@given(groups(max_providers=12, max_records=40), monotone_constraints(), st.integers(0, 12))
def test_twelve_providers(g: GroupStats, c: Constraint, m: int) -> None:
    expected = brute(g, m, c).private
    assert binary(g, m, c).private == expected
    assert top_down(g, m, c).private == expected
    assert exact(g, m, c).private == expected


@FAST
@given(groups(max_providers=7), monotone_constraints(), st.integers(0, 8), st.randoms())
def test_provider_order_does_not_matter(g: GroupStats, c: Constraint, m: int, rnd) -> None:  # type: ignore[no-untyped-def]
    perm = list(range(g.n_providers))
    rnd.shuffle(perm)
    shuffled = GroupStats(g.providers[perm], g.h[perm])
    assert binary(shuffled, m, c).private == binary(g, m, c).private
    assert top_down(shuffled, m, c).private == top_down(g, m, c).private


@FAST
@given(groups(max_providers=8), monotone_constraints())
def test_monotone_in_m(g: GroupStats, c: Constraint) -> None:
    verdicts = [binary(g, m, c).private for m in range(g.n_providers + 2)]
    assert verdicts == sorted(verdicts, reverse=True)
    assert verdicts[0] == c.check(g.N, g.H)
    assert verdicts[-1] == verdicts[g.n_providers - 1]


@settings(max_examples=examples(120), deadline=None)
@given(
    groups(max_providers=5, max_records=9, max_sa=3),
    st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0]),
    st.integers(0, 5),
)
def test_frequency_l_closed_form_equals_definition(g: GroupStats, l: float, m: int) -> None:  # noqa: E741
    assert exact(g, m, FrequencyL(l)).private == exhaustive(g, m, FrequencyL(l)).private


def test_frequency_l_is_not_eg_monotonic() -> None:
    # {a, b} is 2-diverse, {a, a, b} is not: a coalition that keeps some records matters
    c = FrequencyL(2.0)
    assert c.check(2, np.array([1, 1])) and not c.check(3, np.array([2, 1]))
    # so a coalition may do more harm by keeping some of its records than by removing all:
    # the closed form must agree with the exhaustive check of Definition 2.1
    g = GroupStats(np.arange(3), np.array([[1, 0, 0], [1, 2, 1], [0, 0, 1]]))
    assert exhaustive(g, 1, c).private == exact(g, 1, c).private


@st.composite
def partitions(draw, max_sa: int = 4):  # type: ignore[no-untyped-def]
    n_groups = draw(st.integers(1, 6))
    n_prov = draw(st.integers(1, 8))
    n_sa = draw(st.integers(1, max_sa))
    size = draw(st.integers(n_groups, 50))
    group = draw(st.lists(st.integers(0, n_groups - 1), min_size=size, max_size=size))
    group = list(range(n_groups)) + group[n_groups:]  # no empty group
    prov = draw(st.lists(st.integers(0, n_prov - 1), min_size=size, max_size=size))
    sa = draw(st.lists(st.integers(0, n_sa - 1), min_size=size, max_size=size))
    return np.array(group), np.array(prov), np.array(sa), n_groups, n_prov, n_sa


def per_group(part) -> list[GroupStats]:  # type: ignore[no-untyped-def]
    group, prov, sa, n_groups, _, n_sa = part
    return [
        GroupStats.from_records(prov[group == i], sa[group == i], n_sa) for i in range(n_groups)
    ]


@FAST
@given(partitions(), monotone_constraints(), st.integers(0, 8))
def test_exact_vectorized_equals_brute_per_group(part, c: Constraint, m: int) -> None:  # type: ignore[no-untyped-def]
    group, prov, sa, n_groups, n_prov, n_sa = part
    got = m_private_groups(group, prov, sa, n_groups, n_prov, n_sa, m, c)
    expected = [brute(g, m, c).private for g in per_group(part)]
    assert got.tolist() == expected
    ach = achieved_m(group, prov, sa, n_groups, n_prov, n_sa, c)
    for g, a in zip(per_group(part), ach.tolist(), strict=True):
        top = g.n_providers - 1
        expected_a = (
            -1
            if not brute(g, 0, c).private
            else n_prov - 1
            if brute(g, top, c).private
            else max(x for x in range(top) if brute(g, x, c).private)
        )
        assert a == expected_a


@settings(max_examples=examples(60), deadline=None)
@given(partitions(max_sa=3), st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.integers(0, 4))
def test_exact_vectorized_frequency_l(part, l: float, m: int) -> None:  # type: ignore[no-untyped-def]  # noqa: E741
    group, prov, sa, n_groups, n_prov, n_sa = part
    got = m_private_groups(group, prov, sa, n_groups, n_prov, n_sa, m, FrequencyL(l))
    small = [g for g in per_group(part) if g.N <= 12]
    expected = [exhaustive(g, m, FrequencyL(l)).private for g in small]
    keep = [g.N <= 12 for g in per_group(part)]
    assert got[np.array(keep, dtype=bool)].tolist() == expected


def test_pruning_verifiers_refuse_non_monotone_constraints() -> None:
    import pytest

    from kerckhoffs.errors import ParameterError

    g = GroupStats(np.arange(3), np.array([[1, 0], [1, 1], [0, 2]]))
    for fn in (direct, bottom_up, top_down, binary, adaptive):
        with pytest.raises(ParameterError, match="EG-monotonic"):
            fn(g, 1, FrequencyL(2.0))
    assert brute(g, 1, FrequencyL(2.0)).strategy == "exhaustive"
