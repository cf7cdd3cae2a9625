"""Paper 003's vectors (spec mprivacy.md 4.1-4.4, 4.6): Table I, which m each published
table achieves, the fitness values of Eq. 1, the verifier traces on Tb3 and the oracle-call
counts of the complexity instances."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from kerckhoffs.mprivacy.constraints import Conjunction, DistinctL, KAnon, conjunction
from kerckhoffs.mprivacy.exact import achieved_m, m_private_groups
from kerckhoffs.mprivacy.fitness import fitness
from kerckhoffs.mprivacy.group import GroupStats, Oracle
from kerckhoffs.mprivacy.verify import VERIFIERS, binary, bottom_up, direct, top_down

CANCER, ASTHMA, FLU, EPILEPSY = range(4)
P1, P2, P3, P4 = range(4)
# Table I: name -> (provider, disease)
RECORDS = {
    "Alice": (P1, CANCER),
    "Bob": (P1, ASTHMA),
    "Emily": (P1, ASTHMA),
    "Dorothy": (P2, CANCER),
    "Mark": (P2, FLU),
    "John": (P2, FLU),
    "Sara": (P3, EPILEPSY),
    "Cecilia": (P3, FLU),
    "Olga": (P4, CANCER),
    "Frank": (P4, ASTHMA),
}
TA = [["Alice", "Emily", "Sara"], ["Bob", "John", "Olga", "Frank"], ["Dorothy", "Mark", "Cecilia"]]
TB = [["Alice", "Mark", "Sara"], ["Emily", "Dorothy", "Cecilia"], ["Bob", "Olga", "Frank", "John"]]
WHOLE = [list(RECORDS)]
TABLES = {"Ta": TA, "Tb": TB, "whole": WHOLE}


def rows(groups: list[list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = np.array([i for i, names in enumerate(groups) for _ in names])
    p = np.array([RECORDS[n][0] for names in groups for n in names])
    s = np.array([RECORDS[n][1] for names in groups for n in names])
    return g, p, s


def stats(names: list[str]) -> GroupStats:
    return GroupStats.from_records(
        np.array([RECORDS[n][0] for n in names]), np.array([RECORDS[n][1] for n in names]), 4
    )


def kl(k: int, l: int) -> Conjunction:  # noqa: E741
    return Conjunction((KAnon(k), DistinctL(l)))


# spec 4.2: (table, k, l) -> largest m for which the table is m-private
EXPECTED_M = {
    ("Ta", 3, 2): 0,
    ("Ta", 2, 2): 0,
    ("Ta", 1, 2): 0,
    ("Ta", 3, 1): 0,
    ("Ta", 2, 1): 0,
    ("Tb", 3, 2): 0,  # the paper claims 1-private; removing one of Tb1's 3 providers leaves 2 < 3
    ("Tb", 2, 2): 1,
    ("Tb", 1, 2): 1,
    ("Tb", 2, 1): 1,
    ("Tb", 3, 1): 0,
    ("whole", 3, 2): 2,
    ("whole", 2, 2): 3,
}


@pytest.mark.parametrize(
    ("table", "k", "l", "expected"), [(*key, v) for key, v in EXPECTED_M.items()]
)
@pytest.mark.parametrize("strategy", sorted(VERIFIERS))
def test_table_one_m_achieved(table: str, k: int, l: int, expected: int, strategy: str) -> None:  # noqa: E741
    for m in range(4):
        verdicts = [
            VERIFIERS[strategy](stats(names), m, kl(k, l)).private for names in TABLES[table]
        ]
        assert all(verdicts) == (m <= expected), (table, k, l, m)


@pytest.mark.parametrize(
    ("table", "k", "l", "expected"), [(*key, v) for key, v in EXPECTED_M.items()]
)
def test_table_one_exact_vectorized(table: str, k: int, l: int, expected: int) -> None:  # noqa: E741
    g, p, s = rows(TABLES[table])
    n_groups = len(TABLES[table])
    got = achieved_m(g, p, s, n_groups, 4, 4, kl(k, l))
    assert int(got.min()) == expected
    for m in range(4):
        assert m_private_groups(g, p, s, n_groups, 4, 4, m, kl(k, l)).all() == (m <= expected)


def test_table_one_group_values() -> None:
    # (3,2): every group of Ta and Tb is 0-private only; the whole table 2-private
    for table in ("Ta", "Tb"):
        g, p, s = rows(TABLES[table])
        assert achieved_m(g, p, s, 3, 4, 4, kl(3, 2)).tolist() == [0, 0, 0]
    # (2,2): Tb's groups have 3 providers each and survive any one of them, not two
    g, p, s = rows(TB)
    assert achieved_m(g, p, s, 3, 4, 4, kl(2, 2)).tolist() == [1, 1, 1]
    # whole table (2,2): 3-private is n - 1 = the largest m
    g, p, s = rows(WHOLE)
    assert achieved_m(g, p, s, 1, 4, 4, kl(2, 2)).tolist() == [3]
    assert achieved_m(g, p, s, 1, 4, 4, kl(11, 1)).tolist() == [-1]


def test_breaching_coalitions_of_the_sara_attack() -> None:
    o = Oracle(stats(TA[0]), kl(3, 2))
    # local indices: Ta1's providers are P1 (0) and P3 (1)
    assert o.breaches([0]) and o.breaches([1]) and not o.breaches([])
    o = Oracle(stats(TB[2]), kl(3, 2))  # providers P1, P2, P4
    assert [o.breaches([i]) for i in range(3)] == [False, False, True]


def test_whole_table_not_three_private() -> None:
    o = Oracle(stats(WHOLE[0]), kl(3, 2))
    assert o.breaches([P1, P2, P3])  # leaves Olga and Frank: 2 < 3
    assert not o.breaches([P1, P2])


@pytest.mark.parametrize(
    ("names", "alpha", "expected"),
    [
        (["Sara"], 0.3, 0.7 / 3 + 0.3 / 2),
        (["Olga", "Frank"], 0.3, 0.7 * 2 / 3 + 0.3),
        (TA[2], 0.3, 1.0),
        (TA[0], 0.3, 1.15),
        (TB[1], 0.3, 1.15),
        (TA[1], 0.3, 0.7 * 4 / 3 + 0.45),
        (WHOLE[0], 0.3, 0.7 * 10 / 3 + 0.6),
        (["Alice", "Bob", "Emily"], 0.3, 1.0),
        (["Dorothy", "Mark", "John"], 0.3, 1.0),
        (["Sara", "Cecilia"], 0.3, 0.7 * 2 / 3 + 0.3),
        (["Sara"], 0.8, 0.2 / 3 + 0.4),
        (["Olga", "Frank"], 0.8, 0.2 * 2 / 3 + 0.8),
        (TA[2], 0.8, 1.0),
        (TA[0], 0.8, 1.4),
        (TA[1], 0.8, 0.2 * 4 / 3 + 1.2),
    ],
)
def test_fitness_vectors(names: list[str], alpha: float, expected: float) -> None:
    st = stats(names)
    assert fitness(kl(3, 2), st.N, st.H, alpha) == pytest.approx(expected, abs=1e-9)


def test_fitness_literal_values() -> None:
    st = stats(["Olga", "Frank"])
    assert fitness(kl(3, 2), st.N, st.H, 0.3) == pytest.approx(0.76667, abs=1e-5)
    st = stats(WHOLE[0])
    assert fitness(kl(3, 2), st.N, st.H, 0.3) == pytest.approx(2.93333, abs=1e-5)


def test_fitness_clamp_is_min() -> None:
    # 6 records, 2 values, k=3, l=4: raw 1.4 + 0.15 = 1.55, but C fails -> 1 - eps
    hist = np.array([3, 3, 0, 0])
    assert fitness(kl(3, 4), 6, hist, 0.3) == 1 - 1e-6
    # a violating set with raw below the clamp keeps its raw score
    assert fitness(kl(3, 4), 1, np.array([1, 0, 0, 0]), 0.3) == pytest.approx(0.7 / 3 + 0.3 / 4)


TB3 = TB[2]  # providers P1, P2, P4 -> local 0, 1, 2


def trace(fn, k: int, l: int) -> tuple[bool, list[tuple[tuple[int, ...], bool]]]:  # noqa: E741
    log: list = []
    orig = Oracle.breaches

    def spy(self, members):  # type: ignore[no-untyped-def]
        out = orig(self, members)
        log.append((tuple(sorted(self.stats.providers[list(members)].tolist())), out))
        return out

    Oracle.breaches = spy  # type: ignore[method-assign]
    try:
        ok = fn(stats(TB3), 1, kl(k, l)).private
    finally:
        Oracle.breaches = orig  # type: ignore[method-assign]
    return ok, log


B, S = True, False


@pytest.mark.parametrize(
    ("fn", "k", "expected"),
    [
        (direct, 3, [((P1,), S), ((P2,), S), ((P4,), B)]),
        (bottom_up, 3, [((), S), ((P4,), B)]),
        (
            top_down,
            3,
            [((P1, P2), B), ((P1, P4), B), ((P2, P4), B), ((P1,), S), ((P2,), S), ((P4,), B)],
        ),
        (binary, 3, [((P1, P2), B), ((P1,), S), ((P2,), S), ((P1, P4), B), ((P4,), B)]),
        (direct, 2, [((P1,), S), ((P2,), S), ((P4,), S)]),
        (bottom_up, 2, [((), S), ((P4,), S), ((P1,), S), ((P2,), S)]),
        (top_down, 2, [((P1, P2), S), ((P1, P4), B), ((P2, P4), B), ((P4,), S)]),
        (binary, 2, [((P1, P2), S), ((P1, P4), B), ((P4,), S)]),
    ],
)
def test_tb3_traces(fn, k: int, expected: list) -> None:  # type: ignore[no-untyped-def]
    ok, log = trace(fn, k, 2)
    assert ok == (k == 2)
    assert log == expected


def worst_case(n: int, m: int) -> tuple[GroupStats, KAnon]:
    """n providers with one record each, all values different, k = n - m (spec 4.6)."""
    return GroupStats(np.arange(n), np.eye(n, dtype=np.int64)), KAnon(n - m)


@pytest.mark.parametrize(("n", "m"), [(10, 3), (10, 5), (8, 2)])
def test_worst_case_calls(n: int, m: int) -> None:
    st, c = worst_case(n, m)
    d, bu, td, bi = direct(st, m, c), bottom_up(st, m, c), top_down(st, m, c), binary(st, m, c)
    assert d.private and bu.private and td.private and bi.private
    assert d.calls == comb(n, m)
    assert bu.calls == sum(comb(n, i) for i in range(m + 1))
    assert td.calls == sum(comb(n, i) for i in range(m, n))
    assert bi.calls >= d.calls  # direct is the lower bound here (paper section IV)


def test_worst_case_literal_counts() -> None:
    st, c = worst_case(10, 3)
    assert [f(st, 3, c).calls for f in (direct, bottom_up, top_down)] == [120, 176, 967]
    assert binary(st, 3, c).calls == 206
    st, c = worst_case(10, 5)
    assert [f(st, 5, c).calls for f in (direct, bottom_up, top_down, binary)] == [
        252,
        638,
        637,
        380,
    ]


@pytest.mark.parametrize(("n", "m"), [(6, 1), (6, 4), (9, 3)])
def test_all_safe_and_hopeless_calls(n: int, m: int) -> None:
    h = np.full((n, 3), 5, dtype=np.int64)
    safe = kl(2, 2)
    st = GroupStats(np.arange(n), h)
    assert top_down(st, m, safe).calls == m + 1
    assert binary(st, m, safe).calls == m + 1
    assert direct(st, m, safe).calls == comb(n, m)
    assert bottom_up(st, m, safe).calls == sum(comb(n, i) for i in range(m + 1))
    hopeless = GroupStats(np.arange(n), np.ones((n, 1), dtype=np.int64))
    c = kl(1, 2)
    results = {f.__name__: f(hopeless, m, c) for f in (direct, bottom_up, top_down, binary)}
    assert not any(r.private for r in results.values())
    assert results["bottom_up"].calls == 1 and results["direct"].calls == 1
    assert results["binary"].calls == 2
    assert results["top_down"].calls == sum(comb(n, i) for i in range(m + 1, n)) + 1


def test_conjunction_flattens() -> None:
    c = conjunction([KAnon(3), conjunction([DistinctL(2)])])
    assert c == kl(3, 2) and c.eg_monotonic
