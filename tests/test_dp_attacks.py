"""Attacks against DP count releases and query error on DP count tables (issue 14 item 6;
paper 004, spec ``composition.md`` 3.2, 3.8, 4.1-4.2).

OpenDP cannot be seeded: noisy runs are checked statistically with bounds whose false-failure
rate is stated at each test; exact vectors use count tables whose noise is replaced by known
numbers (:func:`exact_release`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.attacks.composition import (
    DP_REASON,
    chance,
    intersect,
    intersection_attack,
)
from kerckhoffs.attacks.composition.dp_intersection import (
    dp_intersection_attack,
    held_counts,
    thresholds,
)
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.locate import locate_all
from kerckhoffs.attacks.registry import applicable, get_attack
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import COUNT, DPRelease, cell_domain, dp_histogram, true_counts
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Partition, Release

# -- spec 4.1 Table 1 as two count tables ---------------------------------------------------------
CONDITIONS = ["AIDS", "Cancer", "Flu", "Heart Disease", "Tuberculosis", "Viral Infection"]
ZIP = Hierarchy([["13012", "130**", "*"], ["13053", "130**", "*"], ["14000", "140**", "*"]], "zip")
H1_AGE = Hierarchy(
    [[str(a), "<30" if a < 30 else "3*" if a < 40 else "≥40", "*"] for a in range(20, 60)], "age"
)
H2_AGE = Hierarchy([[str(a), "<35" if a < 35 else "≥35", "*"] for a in range(20, 60)], "age")
LEVELS = {"zip": 1, "age": 1, "nationality": 1}


def hospital_table(ages: list[int], conditions: list[str], age_h: Hierarchy) -> Table:
    """Twelve patients of one hospital (ages consistent with the paper's printed classes)."""
    df = pd.DataFrame(
        {
            "zip": ["13053"] * len(ages),
            "age": ages,
            "nationality": ["FR"] * len(ages),
            "condition": conditions,
        }
    )
    cols = (
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("age", Role.QUASI, kind=Kind.NUMERIC, hierarchy=age_h),
        Column("nationality", Role.QUASI, kind=Kind.CATEGORICAL),
        Column(
            "condition",
            Role.SENSITIVE,
            kind=Kind.CATEGORICAL,
            hierarchy=Hierarchy.flat(CONDITIONS, "condition"),
        ),
    )
    return Table.encode(df, Schema(cols))


def exact_release(table: Table, levels: dict[str, int]) -> DPRelease:
    """A DP count table whose noise is replaced by zero: the true counts of every cell,
    published through the DP release's own metadata and read-back path."""
    noisy = dp_histogram(table, 1.0, levels=levels, with_sa=True)
    domain, key = cell_domain(table, levels, with_sa=True)
    frame = noisy.counts.copy()
    frame[COUNT] = true_counts(key, domain.size)
    return DPRelease.from_counts(frame, noisy.metadata())


H1 = hospital_table(
    [21, 23, 25, 28, 41, 45, 50, 55, 30, 33, 36, 39],
    ["AIDS", "Heart Disease", "Viral Infection", "Viral Infection"]
    + ["Cancer", "Heart Disease", "Viral Infection", "Viral Infection"]
    + ["Cancer"] * 4,
    H1_AGE,
)
H2 = hospital_table(
    [20, 22, 26, 29, 31, 34, 35, 38, 42, 47, 51, 58],
    [
        "AIDS",
        "Tuberculosis",
        "Flu",
        "Tuberculosis",
        "Cancer",
        "Cancer",
        "Cancer",
        "Cancer",
        "Cancer",
        "Tuberculosis",
        "Viral Infection",
        "Viral Infection",
    ],
    H2_AGE,
)


def people(ages: list[int]) -> pd.DataFrame:
    return pd.DataFrame(
        {"zip": ["13012"] * len(ages), "age": ages, "nationality": ["FR"] * len(ages)}
    )


def schema_of(table: Table) -> Schema:
    return table.schema


@pytest.fixture(scope="module")
def exact_hospitals() -> list[DPRelease]:
    return [exact_release(H1, LEVELS), exact_release(H2, LEVELS)]


def test_noise_free_count_tables_reproduce_spec_4_2(exact_hospitals: list[DPRelease]) -> None:
    """Spec 4.2's four-person overlap, read off zero-noise count tables with tau = 0.5: the
    intersection attack's value sets, anonymities and breaches, exactly."""
    rels: list[Release] = list(exact_hospitals)
    pop = people([28, 32, 37, 45])
    locs = [locate_all([r], pop, schema_of(t))[0] for r, t in zip(rels, (H1, H2), strict=True)]
    res = dp_intersection_attack(rels, locs, true_values=["AIDS", "Cancer", "Cancer", "Cancer"])
    t = res.tuples
    assert t.ea_0.tolist() == [3, 1, 1, 3] and t.ea_1.tolist() == [4, 4, 3, 3]
    assert t.n_values.tolist() == [1, 1, 1, 2]
    assert t.anonymity_drop.tolist() == [2, 0, 0, 1]
    assert t.breached.tolist() == [True, True, True, False]
    assert t.sa_value.tolist() == ["AIDS", "Cancer", "Cancer", "Viral Infection"]
    d = res.details
    assert d["vulnerable"] == 2 and d["perfect_breach"] == 3
    assert d["effective_anonymity_after"] == 1.25
    assert d["prior_anonymity"] == [2.0, 3.5]
    assert d["partition_size"] == [4.0, 6.0]  # held counts of the located cells
    assert d["truth_in_set"] == 1.0 and d["correct_breach"] == 3
    assert d["tau"] == [0.5, 0.5]
    assert res.attack == "dp-intersection"
    # the same sets as Algorithm 1's own code on the thresholded counts
    inter = intersect(rels, locs, group_counts=[held_counts(r, 0.5) for r in rels])
    assert inter.value_sets() == [
        {"AIDS"},
        {"Cancer"},
        {"Cancer"},
        {"Cancer", "Viral Infection"},
    ]


def test_threshold_reads_counts_at_tau(exact_hospitals: list[DPRelease]) -> None:
    """tau = 2.5 keeps only H1 cells of at least 3 people: (<30, VI) has 2, so Alice's H1 set
    loses VI and HD; 3* keeps Cancer (4). Hand-derived from spec 4.1."""
    h1 = exact_hospitals[0]
    held = held_counts(h1, 2.5)
    labels = np.asarray(h1.table.sa_column.labels, dtype=object)
    kept = {(h1.counts.loc[g, "age"], labels[v]) for g, v in zip(*np.nonzero(held), strict=True)}
    assert kept == {("3*", "Cancer")}
    assert thresholds([h1, h1], tau_scale=3.0) == [6.0, 6.0]  # scale 2 at eps 1, substitution
    with pytest.raises(ParameterError, match="tau or tau_scale"):
        thresholds([h1], tau=1.0, tau_scale=1.0)
    with pytest.raises(ParameterError, match="tau must be a positive"):
        thresholds([h1], tau=0.0)


def test_intersection_refuses_dp(exact_hospitals: list[DPRelease]) -> None:
    rels: list[Release] = list(exact_hospitals)
    pop = people([28])
    reasons = dict((i.name, w) for i, w in applicable(rels, Knowledge(population=pop)))
    assert reasons["intersection"] == DP_REASON
    assert reasons["dp-intersection"] is None
    locs = locate_all(rels, pop, H1.schema)
    with pytest.raises(ParameterError, match="see dp-intersection") as e:
        intersection_attack(rels, locs)
    assert "\n" not in str(e.value)
    with pytest.raises(ParameterError, match="see dp-intersection"):
        intersect(rels, locs)
    with pytest.raises(ParameterError, match="see dp-intersection"):
        get_attack("intersection").run(rels, Knowledge(population=pop))


def test_dp_intersection_applies_only_to_dp_with_sa(exact_hospitals: list[DPRelease]) -> None:
    plain = Release(H1, Partition.from_labels(np.zeros(H1.n, dtype=np.int64)))
    pop = people([28])
    why = dict((i.name, w) for i, w in applicable([plain, plain], Knowledge(population=pop)))[
        "dp-intersection"
    ]
    assert why is not None and "no DP release" in why
    no_sa = dp_histogram(H1, 1.0, levels=LEVELS)
    why = dict((i.name, w) for i, w in applicable([no_sa, no_sa], Knowledge(population=pop)))
    assert "SA is not in the cells" in str(why["dp-intersection"])
    two = list(exact_hospitals)
    why = dict((i.name, w) for i, w in applicable(two, Knowledge()))["dp-intersection"]
    assert why is not None and "population" in why
    info = get_attack("dp-intersection")
    with pytest.raises(ParameterError, match="unknown option 'k'"):
        info.run(two, Knowledge(population=pop), k=3)
    res = info.run(two, Knowledge(population=pop, schema=H1.schema), tau=0.5)
    assert res.tuples.sa_value.tolist() == ["AIDS"]
    # H2 as a 6-anonymous generalized table beside H1's count table: the DP table is
    # thresholded, the other read exactly, and Alice is still breached (spec 4.2)
    ages = H2.qi_columns[1].decode(H2.qi[:, 1]).astype(int)
    h2 = Release(H2, Partition.from_labels((ages >= 35).astype(np.int64)))
    alice = pop.assign(zip="13053")  # h2 publishes the one zip it holds
    mixed = info.run([two[0], h2], Knowledge(population=alice, schema=H1.schema))
    assert mixed.tuples.sa_value.tolist() == ["AIDS"] and mixed.tuples.ea_1.tolist() == [4]
    assert mixed.details["tau"] == [0.5, None]


# -- DP noise at small epsilon removes the breach (statistical) ----------------------------------
N_PEOPLE, N_SA = 100, 8
SA_VALUES = [f"s{i}" for i in range(N_SA)]


def unique_people_table(seed: int) -> Table:
    """100 people, each alone in a public QI cell, with random SA values: a single exact
    count table already discloses everyone (homogeneous one-person cells)."""
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(N_PEOPLE)]
    df = pd.DataFrame({"who": ids, "s": rng.choice(SA_VALUES, N_PEOPLE)})
    cols = (
        Column("who", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=Hierarchy.flat(ids, "who")),
        Column("s", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=Hierarchy.flat(SA_VALUES)),
    )
    return Table.encode(df, Schema(cols))


def attack_twice(table: Table, epsilon: float | None) -> dict:
    """Two releases of the same people (exact when ``epsilon`` is None)."""
    if epsilon is None:
        rels: list[Release] = [exact_release(table, {}), exact_release(table, {})]
    else:
        rels = [dp_histogram(table, epsilon, levels="leaves", with_sa=True) for _ in range(2)]
    pop = pd.DataFrame({"who": table.qi_columns[0].decode(table.qi[:, 0])})
    locs = locate_all(rels, pop, table.schema)
    truth = table.decode_sa(table.sa)
    return dp_intersection_attack(rels, locs, true_values=truth).details


def test_exact_counts_breach_everyone_small_epsilon_almost_no_one() -> None:
    """Exact counts: all 100 correctly breached. eps = 0.05 (geometric, scale 40): a person is
    correctly breached only if their cell reads >= 1 in both releases (about 0.256) and each of
    the 7 other values fails in one (0.756 ** 7), about 3.6 %; 20 or more of 100 has
    probability below 1e-8 (binomial tail). eps = 20 (scale 0.1, a wrong cell about once in
    10,000): at least 90 of 100 (a false failure below 1e-12)."""
    table = unique_people_table(7)
    exact = attack_twice(table, None)
    assert exact["correct_breach"] == N_PEOPLE and exact["perfect_breach"] == N_PEOPLE
    noisy = attack_twice(table, 0.05)
    assert noisy["correct_breach"] < 20
    assert noisy["noise_scale"] == [40.0, 40.0]
    loose = attack_twice(table, 20.0)
    assert loose["correct_breach"] >= 90


# -- query error on a DP count table (noise replaced by known numbers) ---------------------------
AGE = Hierarchy([[str(a), "2*" if a < 30 else "3*", "*"] for a in range(20, 40)], "age")
SICK = Hierarchy([["cold", "*"], ["flu", "*"]], "sick")


def tiny_table() -> Table:
    """Ages 21, 25, 33 (numeric codes 0, 1, 2: ranks of the values present)."""
    df = pd.DataFrame({"age": [21, 25, 33], "sick": ["flu", "flu", "cold"]})
    cols = (
        Column("age", Role.QUASI, kind=Kind.NUMERIC, hierarchy=AGE),
        Column("sick", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=SICK),
    )
    return Table.encode(df, Schema(cols))


def known_counts(table: Table, with_sa: bool, numbers: list[int]) -> DPRelease:
    """A DP release of ``table`` at age level 1 whose published counts are ``numbers``."""
    r = dp_histogram(table, 1.0, levels={"age": 1}, with_sa=with_sa)
    r.counts[COUNT] = numbers
    return r


def test_query_error_on_a_dp_table_by_hand() -> None:
    """Cells (2*, cold) = -1, (2*, flu) = 3, (3*, cold) = 2, (3*, flu) = 0. The 2* box holds
    codes 0-1 (ages 21, 25), the 3* box code 2. Query A: age in [21, 21], flu: Est = 3 * 1/2
    = 1.5, Act = 1, error 0.5. Query B: age in [21, 33], cold: Est = -1 + 2 = 1, Act = 1,
    error 0. Query C: age in [25, 33], any SA: Est = (-1 + 3) * 1/2 + 2 = 3, Act = 2,
    error 0.5."""
    from kerckhoffs.metrics.query_error import Workload, estimate, query_error

    t = tiny_table()
    r = known_counts(t, True, [0, 0, 0, 0])
    order = [(a, s) for a, s in zip(r.counts["age"], r.counts["sick"], strict=True)]
    value = {("2*", "cold"): -1, ("2*", "flu"): 3, ("3*", "cold"): 2, ("3*", "flu"): 0}
    r.counts[COUNT] = [value[c] for c in order]
    cold, flu = (t.sa_column.values.tolist().index(v) for v in ("cold", "flu"))
    w = Workload.from_ranges(
        t, [[0], [0], [0]], [[0], [0], [1]], [[0], [2], [2]], [flu, cold, 0], [flu, cold, 1]
    )
    assert w.actual.tolist() == [1, 1, 2]
    for method in ("cube", "dense", "sparse"):
        assert estimate(r, w, source=t, method=method) == pytest.approx([1.5, 1.0, 3.0])
    q = query_error(r, w, source=t)
    assert q.errors == pytest.approx([0.5, 0.0, 0.5])
    with pytest.raises(ParameterError, match="source="):
        estimate(r, w)


def test_query_error_spreads_an_sa_left_out_of_the_cells() -> None:
    """Counts 2* = 4, 3* = -2 without the SA: each spread over the 2 SA values. Query age in
    [21, 25], flu: Est = 4 / 2 = 2, Act = 2. Range counts (no SA predicate): age in [25, 33]:
    Est = 4 / 2 - 2 = 0; age in [21, 21]: 4 / 2 = 2."""
    from kerckhoffs.metrics.query_error import Workload, estimate
    from kerckhoffs.metrics.range_count import RangeCountWorkload, range_count_estimates

    t = tiny_table()
    r = known_counts(t, False, [4, -2])
    flu = t.sa_column.values.tolist().index("flu")
    w = Workload.from_ranges(t, [[0]], [[0]], [[1]], [flu], [flu])
    assert estimate(r, w, source=t) == pytest.approx([2.0])
    rw = RangeCountWorkload(
        np.array([[1], [0]]), np.array([[2], [0]]), np.ones((2, 1), bool), np.array([2, 1]), 2, (3,)
    )
    assert range_count_estimates(r, rw, source=t) == pytest.approx([0.0, 2.0])


def _calibrated(rels: list[Release], table: Table) -> AttackResult:
    pop = pd.DataFrame({"who": table.qi_columns[0].decode(table.qi[:, 0])})
    locs = locate_all(rels, pop, table.schema)
    truth = table.decode_sa(table.sa)
    return dp_intersection_attack(rels, locs, true_values=truth, against_chance=True)


def _one_value_each(table: Table, named: list[str]) -> DPRelease:
    """A count table in which person i's cell holds exactly one value, ``named[i]`` (the
    noise replaced by known numbers)."""
    base = exact_release(table, {})
    frame = base.counts.copy()
    hit = dict(zip(table.qi_columns[0].decode(table.qi[:, 0]), named, strict=True))
    frame[COUNT] = [int(hit[w] == v) for w, v in zip(frame["who"], frame["s"], strict=True)]
    return DPRelease.from_counts(frame, base.metadata())


def test_breaches_are_judged_against_chance() -> None:
    """What audit runs: the singletons read from noisy counts count only as far as the right
    ones beat guessing from the value frequencies (their sum over the breached people is the
    chance expectation). Exact counts: all 100 right against about 12.5 by chance, so all 100
    are breached with posterior 1. Counts naming the right value for 13 people and a wrong
    one for 87: 13 right is within chance, so nothing is breached and the details say so."""
    table = unique_people_table(7)
    exact = _calibrated([exact_release(table, {}), exact_release(table, {})], table)
    assert exact.details["beyond_chance"] is True
    assert int(exact.tuples["breached"].sum()) == N_PEOPLE
    assert set(exact.tuples["posterior"]) == {1.0}
    truth = list(table.decode_sa(table.sa))
    freq = pd.Series(truth).value_counts(normalize=True)
    assert exact.details["chance_correct"] == round(float(freq.reindex(truth).sum()), 2)
    wrong = [v if i < 13 else SA_VALUES[(SA_VALUES.index(v) + 1) % len(SA_VALUES)]
             for i, v in enumerate(truth)]  # fmt: skip
    guessing = _calibrated([_one_value_each(table, wrong)] * 2, table)
    d = guessing.details
    assert d["claimed_breaches"] == N_PEOPLE and d["correct_breach"] == 13
    assert d["chance_correct"] == round(float(freq.reindex(wrong).sum()), 2)
    assert d["beyond_chance"] is False and not guessing.tuples["breached"].any()
    assert set(guessing.tuples["posterior"]) == {0.13}
    assert "nothing beyond chance" in d["verdict_note"]


# -- the chance of as many right guesses (the Poisson-binomial tail) -------------------------------
def brute_tail(p: list[float], c: int) -> float:
    """Pr[at least c of the claims right], summed over all 2^n outcomes."""
    total = 0.0
    for bits in itertools.product((0, 1), repeat=len(p)):
        if sum(bits) >= c:
            total += float(np.prod([q if b else 1 - q for q, b in zip(p, bits, strict=True)]))
    return total


CHANCES = st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5, 0.9, 1.0])


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(CHANCES, min_size=1, max_size=9), st.integers(0, 10))
def test_chance_tail_is_the_poisson_binomial_tail(p: list[float], c: int) -> None:
    assert chance.chance_tail(np.array(p), c) == pytest.approx(brute_tail(p, c), abs=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(CHANCES, min_size=1, max_size=40), st.data())
def test_chance_tail_bound_is_never_below_the_exact_tail(
    p: list[float], data: st.DataObject
) -> None:
    """Above EXACT_TERMS claims the Chernoff bound stands in: it may only overstate the
    chance (so fewer releases are called UNSAFE, never more)."""
    c = data.draw(st.integers(0, len(p) + 1))
    exact = chance.chance_tail(np.array(p), c)
    original = chance.EXACT_TERMS
    try:
        chance.EXACT_TERMS = 0
        bound = chance.chance_tail(np.array(p), c)
    finally:
        chance.EXACT_TERMS = original
    assert bound >= exact - 1e-12


def test_a_few_lucky_guesses_are_not_a_disclosure() -> None:
    """Two claimed breaches, both right, each value held by a tenth of the people: guessing
    does as well once in 100 (0.1 * 0.1), far from one in 30,000. The normal approximation
    used before put it 4.3 standard deviations above the mean (0.2 +- 0.42) and called it a
    disclosure; the README's DP audit hit such cases about one run in 20."""
    assert chance.chance_tail(np.array([0.1, 0.1]), 2) == pytest.approx(0.01)
    assert chance.chance_tail(np.array([0.1, 0.1]), 2) > chance.FALSE_ALARM
    # eight claims, all right, each a tenth: 1e-8, a disclosure
    assert chance.chance_tail(np.full(8, 0.1), 8) == pytest.approx(1e-8)
    assert chance.chance_tail(np.full(8, 0.1), 8) < chance.FALSE_ALARM
