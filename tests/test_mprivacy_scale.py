"""m-privacy at scale (paper 003's settings: many providers, one provider per user): the
requested m is decided first and the achieved m searched only as far as it stays cheap; the
exact verifier needs no bitmask of at most 62 providers; every shortcut and the search agree
with the brute-force oracle (``verify.brute``: every coalition of up to m_eff providers).

Timing cases that took minutes (and gigabytes) before: one group of 51 rows and 50 providers,
checked for m = 1, searched its achieved m by bisection over every coalition size, and
``C(50, 24)`` coalitions were listed in Python."""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.models import DistinctLDiversity, KAnonymity, MPrivacy
from kerckhoffs.mprivacy import exact
from kerckhoffs.mprivacy.constraints import Conjunction, Constraint, DistinctL, KAnon
from kerckhoffs.mprivacy.exact import achieved_m, m_private_groups
from kerckhoffs.mprivacy.group import GroupStats
from kerckhoffs.mprivacy.verify import brute
from test_mprivacy_properties import monotone_constraints, partitions, per_group

FAST = settings(max_examples=examples(60), deadline=None)


@contextmanager
def at_most(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""

    def stop(*_: object) -> None:
        raise TimeoutError(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def brute_achieved(g: GroupStats, c: Constraint, n_providers: int) -> int:
    top = g.n_providers - 1
    if not brute(g, 0, c).private:
        return -1
    if brute(g, top, c).private:
        return n_providers - 1
    return max(x for x in range(top) if brute(g, x, c).private)


# -- every path against the brute-force oracle ----------------------------------------------------
@st.composite
def shared_holders(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    """One group whose providers hold overlapping sets of rare values (no shortcut settles
    most of them): each provider holds one to three of eight values."""
    n_prov = draw(st.integers(3, 9))
    prov, sa = [], []
    for p in range(n_prov):
        for v in draw(st.sets(st.integers(0, 7), min_size=1, max_size=3)):
            prov.append(p)
            sa.append(v)
    return np.array(prov), np.array(sa), n_prov


@FAST
@given(shared_holders(), st.integers(0, 6), st.integers(1, 8))
def test_union_search_equals_brute_force(case: tuple, lower: int, m: int) -> None:
    """With the bitmask search switched off every group that no shortcut settles goes to the
    depth-first union search: the same verdicts and achieved m as brute force."""
    prov, sa, n_prov = case
    distinct = len(set(sa.tolist()))
    c = DistinctL(max(1, distinct - lower))  # 1 to 7 values must vanish
    group = np.zeros(prov.size, dtype=np.int64)
    with mock.patch.object(exact, "MAX_COMBINATIONS", 0):
        got = m_private_groups(group, prov, sa, 1, n_prov, 8, m, c)
        ach = achieved_m(group, prov, sa, 1, n_prov, 8, c)
    g = GroupStats.from_records(prov, sa, 8)
    assert got.tolist() == [brute(g, m, c).private]
    assert ach.tolist() == [brute_achieved(g, c, n_prov)]


@FAST
@given(partitions(), monotone_constraints(), st.integers(0, 8))
def test_shortcuts_and_search_equal_brute_force_on_partitions(part, c: Constraint, m: int) -> None:  # type: ignore[no-untyped-def]
    group, prov, sa, n_groups, n_prov, n_sa = part
    with mock.patch.object(exact, "MAX_COMBINATIONS", 0):
        got = m_private_groups(group, prov, sa, n_groups, n_prov, n_sa, m, c)
    assert got.tolist() == [brute(g, m, c).private for g in per_group(part)]


@FAST
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=12),
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(0, 11),
)
def test_one_provider_per_user_equals_brute_force(sa: list[int], k: int, l: int, m: int) -> None:  # noqa: E741
    """Paper 003's setting of one provider per user: every record its own provider (holder
    sets of the values are disjoint: the cheapest values decide)."""
    n = len(sa)
    c = Conjunction((KAnon(k), DistinctL(l)))
    group, prov = np.zeros(n, dtype=np.int64), np.arange(n)
    got = m_private_groups(group, prov, np.array(sa), 1, n, 5, m, c)
    g = GroupStats.from_records(prov, np.array(sa), 5)
    assert got.tolist() == [brute(g, m, c).private]
    assert achieved_m(group, prov, np.array(sa), 1, n, 5, c).tolist() == [brute_achieved(g, c, n)]


def test_more_than_62_providers_holding_rare_values() -> None:
    """70 providers in one group, each holding one of 35 values twice over (value v by
    providers 2v and 2v + 1): the bitmask search stopped at 62 providers ("does not support
    it"); now decided, and equal to brute force (2,486 coalitions of up to 2 providers)."""
    n = 70
    prov = np.arange(n)
    sa = prov // 2
    group = np.zeros(n, dtype=np.int64)
    g = GroupStats.from_records(prov, sa, 35)
    for l in (34, 35):  # noqa: E741
        c = DistinctL(l)
        for m in (1, 2):
            got = m_private_groups(group, prov, sa, 1, n, 35, m, c)
            assert got.tolist() == [brute(g, m, c).private], (l, m)
    # distinct-l = 34: need 2 values to vanish, so 4 providers: 3-private, not 4-private
    assert achieved_m(group, prov, sa, 1, n, 35, DistinctL(34)).tolist() == [3]


# -- the requested m first, the achieved m as far as cheap ---------------------------------------
def one_group(provider: list[int], sa: list[int]) -> Release:
    df = pd.DataFrame(
        {"q": 0, "s": [f"v{v:02d}" for v in sa], "p": [f"P{p:02d}" for p in provider]}
    )
    t = Table.encode(df, Schema.build({"q": {"kind": "numeric"}}, "s", provider="p"))
    return Release(t, Partition.single(t.n))


def test_fifty_providers_in_one_group_of_51_rows() -> None:
    """Provider i holds value i (provider 0 twice): k = 5 allows m <= 45 (removing m
    providers, provider 0 among them, takes m + 1 rows of 51), distinct l = 3 needs 48 values
    to vanish (48 providers). Before: minutes and gigabytes, computing the achieved m."""
    rel = one_group([*range(50), 0], [*range(50), 0])
    model = MPrivacy(1, [KAnonymity(5), DistinctLDiversity(3)])
    t0 = time.perf_counter()
    with at_most(20):
        (result,) = rel.check([model])
    assert time.perf_counter() - t0 < 2
    assert result.satisfied and result.group_values.tolist() == [45]
    assert "lower bound" not in result.detail


def test_fifty_providers_on_a_cycle() -> None:
    """Provider i holds values i and i + 1 (mod 50) and a value all hold: a coalition of j
    providers in a row makes at most j - 1 values vanish, and distinct l = 3 of 51 values
    needs 49 to vanish; k = 5 of 150 rows allows m <= 48. Every m up to 48 is settled by the
    union search's bound, none listed coalition by coalition."""
    provider = [p for i in range(50) for p in (i, i, i)]
    sa = [v for i in range(50) for v in (i, (i + 1) % 50, 50)]
    rel = one_group(provider, sa)
    t0 = time.perf_counter()
    with at_most(20):
        (result,) = rel.check([MPrivacy(1, [KAnonymity(5), DistinctLDiversity(3)])])
    assert time.perf_counter() - t0 < 2
    assert result.satisfied and result.group_values.tolist() == [48]


def test_a_search_cut_short_says_so_and_never_passes_undecided() -> None:
    """With a budget too small for the union search (and the bitmask search off), the cycle's
    achieved m is a lower bound, and a requested m it cannot settle is counted as violating:
    the detail says which. The verdict at the requested m stays exact where it is decided."""
    provider = [p for i in range(12) for p in (i, i)]
    sa = [v for i in range(12) for v in (i, (i + 1) % 12)]
    rel = one_group(provider, sa)
    model = MPrivacy(1, [DistinctLDiversity(11)])  # need 2 values: 3 providers in a row
    (full,) = rel.check([model])
    assert full.satisfied and full.group_values.tolist() == [2]
    with (
        mock.patch.object(exact, "MAX_COMBINATIONS", 0),
        mock.patch.object(exact, "SEARCH_BUDGET", 30),
    ):
        (cut,) = rel.check([model])
        (undecided,) = rel.check([MPrivacy(2, [DistinctLDiversity(11)])])
    assert cut.satisfied and cut.group_values.tolist() == [1]
    assert "lower bound in 1 group(s)" in cut.detail
    assert not undecided.satisfied and "not decided at m=2" in undecided.detail


def test_decision_and_bound_agree_with_the_exact_search_on_random_groups() -> None:
    from kerckhoffs.mprivacy.exact import achieved_triples, decide_triples

    rng = np.random.default_rng(3)
    for _ in range(30):
        n_prov = int(rng.integers(2, 11))
        size = int(rng.integers(n_prov, 30))
        prov = np.r_[np.arange(n_prov), rng.integers(0, n_prov, size - n_prov)]
        sa = rng.integers(0, 6, size)
        c = Conjunction((KAnon(int(rng.integers(1, 6))), DistinctL(int(rng.integers(1, 4)))))
        g, p, s, w = exact._triples(np.zeros(size, dtype=np.int64), prov, sa, n_prov, 6)
        want = achieved_triples(g, p, s, w, 1, n_prov, 6, c).m
        for budget in (1, 50, None):
            with mock.patch.object(exact, "MAX_COMBINATIONS", 0):
                m = int(rng.integers(0, n_prov))
                d = decide_triples(g, p, s, w, 1, 6, m, c, budget)
                a = achieved_triples(g, p, s, w, 1, n_prov, 6, c, budget, (m, d))
            stats = GroupStats.from_records(prov, sa, 6)
            truth = brute(stats, m, c).private
            assert d.undecided[0] or d.ok[0] == truth
            assert not (d.ok[0] and not truth)  # never passes what brute force refuses
            assert a.m[0] <= want[0] and (not a.exact[0] or a.m[0] == want[0])


def test_one_provider_per_user_anonymizes_and_checks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every record its own provider (600 providers) and groups of 70 or more: the bitmask
    search refused it ("more than 62 providers holding rare values"); now published and
    checked, the achieved m exact."""
    from kerckhoffs import api
    from kerckhoffs.datasets import generate_hospital

    df = generate_hospital(600, 0)
    df["provider"] = [f"u{i}" for i in range(len(df))]
    data = tmp_path / "users.csv"
    df.to_csv(data, index=False)
    from pathlib import Path

    schema = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema_providers.toml"
    with at_most(60):
        rel = api.anonymize(
            data, schema=schema, algorithm="mondrian-mprivacy",
            models=["k=70", "distinct-l=3", "m-privacy=3"],
        )  # fmt: skip
        results = {r.model: r for r in rel.check()}
    mp = results["m-privacy"]
    assert mp.satisfied and "lower bound" not in mp.detail
    assert mp.achieved >= 3 and math.isfinite(mp.achieved)


def test_a_distributed_check_adds_up_what_its_slices_could_not_search() -> None:
    """A Dask check evaluates slices of the groups and combines them: the counts behind the
    detail line (lower bounds, undecided groups) add up instead of keeping the first slice's."""
    provider = [p for i in range(12) for p in (i, i)]
    sa = [v for i in range(12) for v in (i, (i + 1) % 12)]
    rel = one_group(provider, sa)
    model = MPrivacy(1, [DistinctLDiversity(11)])
    with (
        mock.patch.object(exact, "MAX_COMBINATIONS", 0),
        mock.patch.object(exact, "SEARCH_BUDGET", 30),
    ):
        part = model.evaluate(rel.histogram())
    both = model.combine([part, part], np.array([24, 24]))
    assert "lower bound in 1 group(s)" in part.detail
    assert "lower bound in 2 group(s)" in both.detail and both.group_values.tolist() == [1, 1]


def test_an_undecided_root_is_not_called_impossible() -> None:
    """When the coalition search cannot settle the whole table within its budget the
    anonymizer may not claim that no partition is m-private: it searches, and publishes only
    groups it could decide (each checked here by brute force), or says it could not settle."""
    from kerckhoffs.algorithms.mprivacy_anonymize import mondrian_mprivacy, provider_aware
    from kerckhoffs.errors import ParameterError
    from kerckhoffs.models import combine_m_privacy

    provider = [p for i in range(12) for p in (i, i)]
    sa = [v for i in range(12) for v in (i, (i + 1) % 12)]
    df = pd.DataFrame(
        {"q": provider, "s": [f"v{v:02d}" for v in sa], "p": [f"P{p:02d}" for p in provider]}
    )
    t = Table.encode(df, Schema.build({"q": {"kind": "numeric"}}, "s", provider="p"))
    models = combine_m_privacy([DistinctLDiversity(11), MPrivacy(2)])
    c = DistinctL(11)  # two values must vanish: three providers in a row
    for fn in (mondrian_mprivacy, provider_aware):
        with (
            mock.patch.object(exact, "MAX_COMBINATIONS", 0),
            mock.patch.object(exact, "SEARCH_BUDGET", 30),
        ):
            assert decide_at_root(t, 2, c).undecided[0]
            try:
                rel = fn(t, models)
            except ParameterError as e:
                assert "so no partition" not in str(e)
                assert "could not settle" in str(e)
                continue
        for block in rel.partition.groups():
            stats = GroupStats.from_records(t.provider[block], t.sa[block], t.n_sa)
            assert brute(stats, 2, c).private


def decide_at_root(t: Table, m: int, c: Constraint):  # type: ignore[no-untyped-def]
    from kerckhoffs.mprivacy.exact import decide_triples

    g, p, s, w = exact._triples(np.zeros(t.n, dtype=np.int64), t.provider, t.sa, 12, t.n_sa)
    return decide_triples(g, p, s, w, 1, t.n_sa, m, c, exact.SEARCH_BUDGET)
