"""The helpers behind the fast m-privacy verifiers (issue 12; spec mprivacy.md 3.0-3.5): the
bitset upward closure, the counting-form fitness and oracle, the knowledge base's shortcuts
and the rankings must answer exactly as the plain definitions do (checked here by brute
force and by the histogram / numpy forms), since the verifiers' oracle-call counts are exact
test vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.mprivacy.constraints import Conjunction, DistinctL, KAnon
from kerckhoffs.mprivacy.fitness import (
    counting_fitness,
    fitness_batch,
    fitness_batch_counts,
    fitness_counts,
    is_counting,
)
from kerckhoffs.mprivacy.group import GroupStats, Oracle
from kerckhoffs.mprivacy.lattice import CoalitionVerdicts as Knowledge
from kerckhoffs.mprivacy.lattice import bitset_test, layer_masks, upward_closure
from kerckhoffs.mprivacy.verify import SMALL, _Lattice, binary, top_down

FAST = settings(max_examples=examples(40), deadline=None)


@st.composite
def groups(draw, max_providers: int = 10, max_records: int = 40, max_sa: int = 6):  # type: ignore[no-untyped-def]
    n_sa = draw(st.integers(1, max_sa))
    n_prov = draw(st.integers(1, max_providers))
    size = draw(st.integers(n_prov, max_records + n_prov))
    prov = list(range(n_prov)) + draw(
        st.lists(st.integers(0, n_prov - 1), min_size=size - n_prov, max_size=size - n_prov)
    )
    sa = draw(st.lists(st.integers(0, n_sa - 1), min_size=size, max_size=size))
    return GroupStats.from_records(np.array(prov), np.array(sa), n_sa)


@st.composite
def counting_constraints(draw):  # type: ignore[no-untyped-def]
    k = draw(st.integers(1, 30))
    l = draw(st.integers(1, 5))  # noqa: E741
    which = draw(st.sampled_from(["k", "l", "kl", "lk", "kk"]))
    return {
        "k": KAnon(k),
        "l": DistinctL(l),
        "kl": Conjunction((KAnon(k), DistinctL(l))),
        "lk": Conjunction((DistinctL(l), KAnon(k))),
        "kk": Conjunction((KAnon(k), KAnon(max(1, k - 3)))),
    }[which]


def test_upward_closure_by_brute_force() -> None:
    rng = np.random.default_rng(7)
    for n in (1, 3, 6, 7, 9):
        every = np.arange(1 << n, dtype=np.int64)
        for _ in range(5):
            picks = rng.choice(every, size=int(rng.integers(0, min(6, every.size) + 1)))
            got = bitset_test(upward_closure(picks, n), every)
            want = [any(p & ~x == 0 for p in picks.tolist()) for x in every.tolist()]
            assert got.tolist() == want


def test_upward_closure_known_vector() -> None:
    # n = 3, base {0b001}: exactly the coalitions holding provider 0
    got = bitset_test(upward_closure(np.array([0b001]), 3), np.arange(8))
    assert got.tolist() == [False, True, False, True, False, True, False, True]


@FAST
@given(groups(), counting_constraints(), st.sampled_from([0.3, 0.8, 0.5]))
def test_counting_fitness_equals_fitness_batch(g: GroupStats, c, alpha: float) -> None:  # type: ignore[no-untyped-def]
    assert is_counting(c)
    n = g.n_providers
    masks = np.arange(1 << n, dtype=np.int64)
    member = (masks[:, None] >> np.arange(n)) & 1
    counts, hists = member @ g.c, member @ g.h
    distinct = np.count_nonzero(hists, axis=1)
    want_s, want_r = fitness_batch(c, counts, hists, alpha)
    got_s, got_r = fitness_batch_counts(c, counts, distinct, alpha)
    assert np.array_equal(got_s, want_s) and np.array_equal(got_r, want_r)  # bit-identical
    fit = counting_fitness(c, alpha)
    for i in range(masks.size):
        one = fitness_counts(c, int(counts[i]), int(distinct[i]), alpha)
        assert one == fit(int(counts[i]), int(distinct[i])) == (want_s[i], want_r[i])


def test_counting_fitness_vector() -> None:
    # spec 2.9 with the paper's Table I constraint (k=3, l=2, alpha=0.3): Olga and Frank,
    # 2 records of 2 values, score 0.7 * 2/3 + 0.3 (below 1, no clamp); 6 records of 2
    # values against l=4: raw 1.4 + 0.15 = 1.55 but C fails, so the score is 1 - 1e-6
    assert counting_fitness(Conjunction((KAnon(3), DistinctL(2))), 0.3)(2, 2) == (
        pytest.approx(0.7 * 2 / 3 + 0.3),
        pytest.approx(0.7 * 2 / 3 + 0.3),
    )
    score, raw = counting_fitness(Conjunction((KAnon(3), DistinctL(4))), 0.3)(6, 2)
    assert score == 1 - 1e-6 and raw == pytest.approx(1.55)


@FAST
@given(groups(), counting_constraints())
def test_counting_oracle_equals_histogram_oracle(g: GroupStats, c) -> None:  # type: ignore[no-untyped-def]
    fast, slow = Oracle(g, c), Oracle(g, c, keep_log=True)
    for size in range(g.n_providers + 1):
        for combo in itertools.combinations(range(g.n_providers), size):
            count = g.N - int(g.c[list(combo)].sum())
            rem = g.H - g.h[list(combo)].sum(axis=0)
            want = not c.check(count, rem)
            assert fast.breaches(combo) == slow.breaches(combo) == want
    assert fast.calls == slow.calls == len(slow.log) and fast.log == []


@FAST
@given(st.integers(3, 9), st.data())
def test_knowledge_shortcuts_equal_the_plain_sets(n: int, data) -> None:  # type: ignore[no-untyped-def]
    me = data.draw(st.integers(1, n - 2))
    kb = Knowledge(n, me)
    full = (1 << n) - 1
    tops = [full & ~(1 << i) for i in range(n)]
    marks = data.draw(st.lists(st.sampled_from(tops + list(range(1 << n))), max_size=6))
    safe: list[int] = []
    for mask in marks:
        kb.mark_safe(mask)
        safe.append(mask)
        every = layer_masks(n, me).tolist()
        alive = [u for u in every if not any(u & ~s == 0 for s in safe)]
        assert kb.unresolved.tolist() == alive
        assert kb.done == (not alive)
        for x in range(1 << n):
            assert kb.any_unresolved_in(x) == any(u & ~x == 0 for u in alive)
            assert kb.known_safe(x) == any(x & ~s == 0 for s in safe)
        for size in range(me, n):
            want = [x for x in layer_masks(n, size).tolist() if any(u & ~x == 0 for u in alive)]
            assert kb.covering(size).tolist() == want


@FAST
@given(groups(max_providers=9), counting_constraints(), st.booleans())
def test_rankings_agree_across_paths(g: GroupStats, c, descending: bool) -> None:  # type: ignore[no-untyped-def]
    """Python (few coalitions), coalition x provider product and byte tables: one order,
    which is the sort by (score, raw score, bit-reversed mask) of the definitions."""
    lat = _Lattice(g, c, 0.3)
    n = g.n_providers
    for size in range(n + 1):
        layer = layer_masks(n, size)
        inv = {p: i for i, p in enumerate(lat.order)}
        keyed = []
        for x in layer.tolist():
            idx = lat.local(x)
            count, hist = g.coalition(idx)
            s, r = fitness_batch(c, np.array([count]), hist[None, :], 0.3)
            rev = sum(1 << (n - 1 - inv[p]) for p in idx)
            sign = -1 if descending else 1
            keyed.append(((sign * s[0], sign * r[0], -rev), x))
        want = [x for _, x in sorted(keyed)]
        assert lat.ranked(layer, descending) == want
        if descending and len(layer) > 1:  # binary's packed strength key: the same order
            assert layer[np.argsort(lat._strength_ranks(layer))].tolist() == want
        if len(layer) > SMALL or len(layer) < 2:
            continue
        lat._tables = None
        lat._byte_tables()  # force the table path too
        masks = np.asarray(layer)
        score, raw, rev_arr = lat.keys(masks)
        sign = -1.0 if descending else 1.0
        assert masks[np.lexsort((-rev_arr, sign * raw, sign * score))].tolist() == want
        lat._tables = None


def test_paper_call_counts_unchanged_on_a_big_group() -> None:
    """Spec 3.4/3.5 derived counts on a 14-provider group whose top coalitions are all safe:
    top-down and binary both need exactly m_eff + 1 checks."""
    rng = np.random.default_rng(3)
    prov = np.concatenate([np.arange(14), rng.integers(0, 14, 700)])
    sa = np.concatenate([np.arange(14) % 7, rng.integers(0, 7, 700)])
    g = GroupStats.from_records(prov, sa, 7)
    c = Conjunction((KAnon(20), DistinctL(3)))
    for m in (1, 4, 9):
        assert top_down(g, m, c).calls == m + 1
        assert binary(g, m, c).calls == m + 1
