"""The Hilbert-order attack on Hilb (paper 000 Algorithm 7; spec asap.md 2.12, 3.5, 3.6): the
Figure 8 vector exactly and against the brute-force smart world, a literal O(m^2)
transcription of Algorithm 7 as oracle (hypothesis), soundness of every inference and
exactness of every reported posterior against random worlds, zero on the strict variants,
ties in an unknown order, releases read back from files with a row-aligned population,
refusals, and real-data smoke runs. (Generalized releases read from files with a population
aligned by cells: test_hilb_attack_files.py.)"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.algorithms.anatomy import sa_buckets
from kerckhoffs.algorithms.hilb import hilb, table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import hilbert_order
from kerckhoffs.algorithms.registry import get
from kerckhoffs.attacks.hilb.order import Algorithm7, algorithm7, hilb_order_attack
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import get_attack
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.audits.random_tables import random_table
from kerckhoffs.audits.random_worlds import naive_worlds, random_worlds
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.errors import CannotRun, InputError, ParameterError
from kerckhoffs.models import LDiversity
from kerckhoffs.release import Provenance
from partition_sets import T, groups_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FIG8 = ["gastritis", "gastritis", "heart disease", "diabetes", "cancer", "mumps", "AIDS", "AIDS"]


def line_table(sa: list[str]) -> Table:
    """Rows t1..tn with QI codes 0..n-1 (the tests pass Q_T(t_i) = i directly)."""
    axis = Hierarchy.flat(range(16), name="0..15", keep_order=True)
    df = pd.DataFrame({"x": range(len(sa)), "s": sa})
    return Table.encode(df, Schema.build({"x": {"kind": "categorical", "hierarchy": axis}}, "s"))


def by_row(result: AttackResult) -> dict[int, tuple[str, float, bool]]:
    t = result.tuples
    return {
        int(r): (str(v), float(p), bool(b))
        for r, v, p, b in zip(t["row"], t["sa_value"], t["posterior"], t["breached"], strict=True)
    }


# -- the literal Algorithm 7 (paper 000, printed pseudo-code with the spec's fixes) ----------------
def algorithm7_literal(release: Release, l: int, pos: np.ndarray) -> tuple[set[int], set[int]]:  # noqa: E741
    """Line by line, O(m^2) over groups: returns (vulnerable groups, compromised rows)."""
    groups = [g.tolist() for g in release.partition.groups()]
    bucket = sa_buckets(release.table)[0]
    remaining = sorted(range(len(groups)), key=lambda g: min(pos[r] for r in groups[g]))
    vulnerable: set[int] = set()
    compromised: set[int] = set()
    while remaining:  # line 3
        g1 = remaining[0]  # line 4
        rows_left = [r for g in remaining for r in groups[g]]
        smax = max(Counter(int(bucket[r]) for r in rows_left).values())
        if len(rows_left) - len(groups[g1]) >= l * smax:  # line 5
            lo = min(pos[r] for r in groups[g1])
            hi = max(pos[r] for r in groups[g1])
            tilde = [g2 for g2 in remaining[1:] if any(lo <= pos[r] <= hi for r in groups[g2])]
            if tilde and len(groups[g1]) + 1 < 2 * l:  # line 7
                vulnerable.add(g1)
                compromised.update(groups[g1])
                for g2 in tilde:
                    compromised.update(groups[g2])
        else:
            break  # line 11: "Goto Line 14" = terminate
        remaining.pop(0)  # line 13
    return vulnerable, compromised


# -- Figure 8 (spec 3.5) ---------------------------------------------------------------------------
def figure_8() -> tuple[Table, Release]:
    table = line_table(FIG8)
    return table, hilb(table, [LDiversity(2)], hilbert_index=np.arange(8))


def test_figure_8_exact_vector() -> None:
    _, release = figure_8()
    assert groups_of(release) == {T(1, 3), T(2, 4), T(5, 7), T(6, 8)}
    a7 = algorithm7(release, hilbert_index=np.arange(8))
    g = release.partition.group
    assert a7.vulnerable_groups.tolist() == [g[0]]  # only {t1, t3}
    assert a7.deterministic == 2  # {t5, t7} fails line 5: 4 - 2 < 2 * 2
    assert np.flatnonzero(a7.union).tolist() == [0, 1, 2, 3]
    assert (a7.pair_row.tolist(), a7.pair_prefix.tolist()) == ([1], [1])  # t2, after t1
    result = hilb_order_attack(release, hilbert_index=np.arange(8))
    assert by_row(result) == {
        0: ("gastritis", 1.0, True),
        1: ("gastritis", 1.0, True),
        2: ("heart disease", 1.0, True),
        3: ("diabetes", 1.0, True),
    }
    assert result.compromised == 4
    assert result.details["compromised_union"] == 4
    assert result.details["vulnerable_groups"] == 1
    assert result.verdict() == "UNSAFE: 4 of 8 rows disclosed by hilb-order"


def test_figure_8_agrees_with_the_brute_force_smart_world() -> None:
    table, release = figure_8()
    audit = random_worlds("hilb", table, [LDiversity(2)], options={"hilbert_index": np.arange(8)})
    labels = [str(x) for x in table.sa_column.labels.tolist()]
    ours = by_row(hilb_order_attack(release, hilbert_index=np.arange(8)))
    for r in range(8):
        smart = {labels[v]: q for v, q in audit.smart[r].items()}
        if r < 4:  # point masses, exactly what the attack pins
            value, p, _ = ours[r]
            assert smart == {value: Fraction(1)} and p == 1
        else:  # unchanged, and the attack claims nothing
            assert smart == {v: Fraction(1, 2) for v in smart} and r not in ours
    assert audit.naive_count == 16 and not audit.asap


def test_x2_hilb_on_aabcbc() -> None:
    # spec 3.6 X2: Hilb {t1,t3}, {t2,t4}, {t5,t6}; t1 = t2 = A, t3 = B, t4 = C for certain
    release = hilb(line_table(list("AABCBC")), [LDiversity(2)], hilbert_index=np.arange(6))
    result = hilb_order_attack(release, hilbert_index=np.arange(6))
    assert by_row(result) == {
        0: ("A", 1.0, True),
        1: ("A", 1.0, True),
        2: ("B", 1.0, True),
        3: ("C", 1.0, True),
    }


def test_x1_hilb_plus_is_attacked_too() -> None:
    # spec 3.6 X1 / 2.6: Hilb+ {t1,t3}, {t2,t4,t5,t6}; knowing Hilb+, t4, t5, t6 hold C w.p. 2/3
    table = line_table(list("AABCBC"))
    release = get("hilb+").run(table, [LDiversity(2)], hilbert_index=np.arange(6))
    assert groups_of(release) == {T(1, 3), T(2, 4, 5, 6)}
    rows = by_row(hilb_order_attack(release, hilbert_index=np.arange(6)))
    for r in (3, 4, 5):
        value, p, breached = rows[r]
        assert value == "C" and Fraction(p).limit_denominator(100) == Fraction(2, 3) and breached
    audit = random_worlds("hilb+", table, [LDiversity(2)], options={"hilbert_index": np.arange(6)})
    c = int(np.flatnonzero(table.sa_column.labels == "C")[0])
    assert all(audit.smart[r][c] == Fraction(2, 3) for r in (3, 4, 5))
    assert rows[1][0] in ("A", "B") and rows[1][1] == 0.5  # t2 is t1's value: A or B


def test_unordered_ties_walk_past_a_class_of_groups() -> None:
    # t1 and t2 share Q_T 0 and each starts a group ({t1,t3}, {t2,t4}), in an order the release
    # does not give: nothing is said of t1..t4, but line 5 holds in either order (8 rows after
    # them >= 2 * S_max 2), so the walk goes on and finds Figure 8's pattern on t5..t8
    q = np.array([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    release = hilb(line_table(list("AABCDDEFGHIJ")), [LDiversity(2)], hilbert_index=q)
    assert groups_of(release) == {T(1, 3), T(2, 4), T(5, 7), T(6, 8), T(9, 10), T(11, 12)}
    later = {4: ("D", 1.0, True), 5: ("D", 1.0, True), 6: ("E", 1.0, True), 7: ("F", 1.0, True)}
    early = {0: ("A", 1.0, True), 1: ("A", 1.0, True), 2: ("B", 1.0, True), 3: ("C", 1.0, True)}
    assert by_row(hilb_order_attack(release, hilbert_index=q)) == early | later
    assert by_row(hilb_order_attack(release, hilbert_index=q, ties="unordered")) == later
    a7 = algorithm7(release, hilbert_index=q, ties="unordered")
    assert a7.deterministic == 5 and a7.vulnerable_groups.tolist() == [2]


# -- random small releases -------------------------------------------------------------------------
FRONTIER = ("hilb", "hilb+", "hilb++")


def small_release(seed: int, algorithm: str, l: int = 2) -> Release:  # noqa: E741
    """A release of a random 5-9 row table with two QIs over 0..7 (ties happen; the attack
    computes Q_T itself); raises ParameterError when the draw cannot be l-eligible."""
    rng = np.random.default_rng(seed)
    table = random_table(rng, int(rng.integers(5, 10)), n_sa=int(rng.integers(l, 6)), l=l)
    return get(algorithm).run(table, [LDiversity(l)], seed=seed)


def line_release(seed: int, algorithm: str, l: int = 2) -> tuple[Release, np.ndarray]:  # noqa: E741
    """A release of 8-12 rows with Q_T given (a permutation, or draws with ties), more SA
    values than l: about a quarter of them leave the attack something to infer at l = 2."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 13))
    n_sa = int(rng.integers(l + 1, 7))
    while True:
        sa = rng.integers(0, n_sa, size=n)
        if n >= l * int(np.bincount(sa).max()):
            break
    q = rng.integers(0, n, size=n) if rng.random() < 0.5 else rng.permutation(n)
    table = line_table([chr(ord("A") + int(v)) for v in sa])
    return get(algorithm).run(table, [LDiversity(l)], seed=seed, hilbert_index=q), q


def draw(seed: int, algorithm: str, kind: str, l: int = 2) -> tuple[Release, np.ndarray | None]:  # noqa: E741
    if kind == "grid":
        return small_release(seed, algorithm, l), None
    return line_release(seed, algorithm, l)


def positions(release: Release, q: np.ndarray | None) -> np.ndarray:
    if q is None:
        q = table_hilbert_index(release.table, release.provenance.parameters["bits"])
    order = hilbert_order(index=q)
    pos = np.empty(release.table.n, dtype=np.int64)
    pos[order] = np.arange(release.table.n)
    return pos


def inference_holds(release: Release, a7: Algorithm7) -> None:
    """Every inference is true of the real data: u's value is one of the first k members'."""
    bucket = sa_buckets(release.table)[0]
    for g1, u, k in zip(a7.pair_group, a7.pair_row, a7.pair_prefix, strict=True):
        members = np.flatnonzero(release.partition.group == g1)
        members = members[np.argsort(a7.positions[members])]
        assert 1 <= k < members.size
        assert bucket[u] in set(bucket[members[:k]].tolist()), (g1, u, k)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    algorithm=st.sampled_from(FRONTIER),
    kind=st.sampled_from(["grid", "line"]),
    l=st.sampled_from([2, 3]),
)
def test_matches_the_literal_algorithm_7(seed: int, algorithm: str, kind: str, l: int) -> None:  # noqa: E741
    try:
        release, q = draw(seed, algorithm, kind, l)
    except ParameterError:
        return  # the random table is not l-eligible for this algorithm
    vulnerable, compromised = algorithm7_literal(release, l, positions(release, q))
    a7 = algorithm7(release, hilbert_index=q)
    assert set(a7.vulnerable_groups.tolist()) == vulnerable
    assert set(np.flatnonzero(a7.union).tolist()) == compromised
    inference_holds(release, a7)


def _columns(a7: Algorithm7) -> tuple[list[int], list[int], list[int]]:
    return a7.pair_group.tolist(), a7.pair_row.tolist(), a7.pair_prefix.tolist()


def brute_posteriors(release: Release, a7: Algorithm7) -> list[list[dict[int, Fraction]]]:
    """Random-worlds posteriors of every adversary the attack models: no inference, each
    inference alone, and all inferences on one skipped row together."""
    group = release.partition.group
    members = {
        int(g): np.flatnonzero(group == g)[np.argsort(a7.positions[group == g])]
        for g in np.unique(a7.pair_group)
    }
    pairs = list(zip(*_columns(a7), strict=True))
    preds = [[p] for p in pairs]
    preds += [[p for p in pairs if p[1] == u] for u in sorted(set(a7.pair_row.tolist()))]
    out = []
    for pred in [[], *preds]:

        def know(world: np.ndarray, pred: list = pred) -> bool:
            return all(world[u] in world[members[g1][:k]] for g1, u, k in pred)

        worlds = naive_worlds(release, knowledge=know)
        post = []
        for r in range(release.table.n):
            c = Counter(worlds[:, r].tolist())
            post.append({v: Fraction(n, len(worlds)) for v, n in c.items()})
        out.append(post)
    return out


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(seed=st.integers(0, 10**6), algorithm=st.sampled_from(FRONTIER))
def test_posteriors_are_exact_random_world_posteriors(seed: int, algorithm: str) -> None:
    release, q = line_release(seed, algorithm)
    result = hilb_order_attack(release, hilbert_index=q)
    a7 = algorithm7(release, hilbert_index=q)
    inference_holds(release, a7)
    assume(not result.tuples.empty)
    labels = [str(x) for x in release.table.sa_column.labels.tolist()]
    every = brute_posteriors(release, a7)
    truth = release.table.sa
    for r, v, p in zip(
        result.tuples["row"], result.tuples["sa_value"], result.tuples["posterior"], strict=True
    ):
        code = labels.index(v)
        exact = [post[r].get(code, Fraction(0)) for post in every]
        assert any(abs(float(x) - p) < 1e-9 for x in exact), (r, v, p, exact)
        if p == 1:  # pinned values are the real ones
            assert truth[r] == code


def test_some_plain_hilb_releases_are_compromised_and_no_strict_one_is() -> None:
    hits = {"hilb": 0, "hilb+strict": 0, "hilb++strict": 0}
    for seed in range(25):
        for alg in hits:
            for kind in ("grid", "line"):
                try:
                    release, q = draw(seed, alg, kind)
                except ParameterError:
                    continue
                result = hilb_order_attack(release, hilbert_index=q)
                hits[alg] += result.compromised
                if alg != "hilb":
                    assert result.tuples.empty
    assert hits["hilb"] > 0 and hits["hilb+strict"] == hits["hilb++strict"] == 0


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 10**6),
    kind=st.sampled_from(["grid", "line"]),
    l=st.sampled_from([2, 3]),
)
def test_hilb_plus_strict_compromises_nothing_even_attacked_as_hilb(
    seed: int,
    kind: str,
    l: int,  # noqa: E741
) -> None:
    try:
        release, q = draw(seed, "hilb+strict", kind, l)
    except ParameterError:
        return
    assert hilb_order_attack(release, hilbert_index=q).compromised == 0
    # an adversary who wrongly assumes plain Hilb finds no skipped row either: the chunks are
    # contiguous runs of the Hilbert order
    forced = hilb_order_attack(release, hilbert_index=q, algorithm="hilb")
    assert forced.compromised == 0 and forced.details["compromised_union"] == 0
    vulnerable, compromised = algorithm7_literal(release, l, positions(release, q))
    assert not vulnerable and not compromised


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 10**6), algorithm=st.sampled_from(FRONTIER))
def test_unordered_ties_are_sound_whatever_the_row_order(seed: int, algorithm: str) -> None:
    try:
        release = small_release(seed, algorithm)
    except ParameterError:
        return
    perm = np.random.default_rng(seed).permutation(release.table.n)
    t = release.table
    shuffled = Release(
        Table(t.schema, t.qi[perm], t.sa[perm], t.qi_columns, t.sa_column, t.sensitive),
        Partition(release.partition.group[perm]),
        release.scheme,
        release.sa_published[perm],
        release.provenance,
    )
    a = algorithm7(release, ties="unordered")
    b = algorithm7(shuffled, ties="unordered")
    assert np.array_equal(a.union[perm], b.union)
    inference_holds(release, a)
    inference_holds(shuffled, b)
    assert not (a.union & ~algorithm7(release).union).any()  # never more than the exact order


# -- releases read back from files ---------------------------------------------------------------
def hospital() -> tuple[pd.DataFrame, Table]:
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    df = generate_hospital(600, seed=3)
    return df, Table.encode(df, hospital_schema())


def test_generalized_release_from_files_with_the_population(tmp_path: Path) -> None:
    from kerckhoffs.datasets import hospital_schema

    df, table = hospital()
    release = hilb(table, [LDiversity(3)])
    direct = hilb_order_attack(release)
    assert direct.compromised > 0
    release.write(tmp_path / "r", [LDiversity(3)], formats=("csv",))
    back = Release.from_published(tmp_path / "r")
    with pytest.raises(ParameterError, match="generalized cells"):
        hilb_order_attack(back)
    info = get_attack("hilb-order")
    assert "exact QIs" in info.applies([back], Knowledge())
    # the files hold the rows sorted by published group id and SA: link them back
    order = np.lexsort(
        (release.sa_published, release.published_numbering()[release.partition.group])
    )
    population = Table.encode(df.iloc[order].reset_index(drop=True), hospital_schema())
    linked = hilb_order_attack(back, population=population, input_order=order)
    assert linked.compromised == direct.compromised
    assert sorted(order[linked.tuples["row"]].tolist()) == sorted(direct.tuples["row"].tolist())
    # without the input order, only what holds for any order of tied rows
    safe = info.run([back], Knowledge(population=df), population=population)
    assert safe.details["ties"] == "unordered"
    inference_holds(back, algorithm7(back, population=population, ties="unordered"))


# -- registry, refusals ----------------------------------------------------------------------------
def test_registered_and_applies() -> None:
    info = get_attack("hilb-order")
    _, release = figure_8()
    _, table = hospital()
    with pytest.raises(CannotRun, match="given Hilbert index"):  # a Hilb release all the
        info.applies([release], Knowledge())  # same: the audit says it could not run
    for alg in ("hilb", "hilb+", "hilb++", "hilb+strict", "hilb++strict"):
        r = get(alg).run(table, [LDiversity(3)], seed=1)
        assert info.applies([r], Knowledge()) is None
    mondrian = get("mondrian").run(table, [LDiversity(3)])
    assert "not by a Hilb-family" in info.applies([mondrian], Knowledge())
    assert "one release" in info.applies([mondrian, mondrian], Knowledge())
    strict = get("hilb++strict").run(table, [LDiversity(3)], seed=1)
    result = info.run([strict], Knowledge())
    assert result.safe and "random pick-up" in result.details["reason"]
    plain = get("hilb").run(table, [LDiversity(3)])
    assert (
        info.run([plain], Knowledge(), ties="row").compromised
        == hilb_order_attack(plain).compromised
    )
    with pytest.raises(ParameterError, match="unknown option 'k'"):
        info.run([plain], Knowledge(), k=3)


def test_refusals_are_one_line() -> None:
    _, release = figure_8()
    cases = [
        (lambda: hilb_order_attack(release), "given Hilbert index"),
        (lambda: hilb_order_attack(release, hilbert_index=np.arange(3)), "3 values for 8 rows"),
        (lambda: hilb_order_attack(release, hilbert_index=np.arange(8), ties="x"), "ties"),
        (lambda: hilb_order_attack(release, hilbert_index=np.arange(8), l="x"), "whole number"),
        (
            lambda: hilb_order_attack(release, hilbert_index=np.arange(8), input_order=np.zeros(8)),
            "distinct",
        ),
    ]
    _, table = hospital()
    plain = hilb(table, [LDiversity(3)])
    cases.append((lambda: hilb_order_attack(plain, population=line_table(FIG8)), "population"))
    cases.append((lambda: hilb_order_attack(plain, bits=2), "bits=2"))
    for call, match in cases:
        with pytest.raises(ParameterError, match=match) as exc:
            call()
        assert "\n" not in str(exc.value)


def test_a_release_that_contradicts_hilb_is_refused() -> None:
    # Figure 8's groups under another order: t5 (cancer, group {t5,t7}) falls inside the range
    # of {t1,t3} (gastritis, heart disease), sharing no value with it
    _, release = figure_8()
    index = np.array([0, 5, 2, 6, 1, 7, 8, 9])
    with pytest.raises(InputError, match="shares no SA value"):
        hilb_order_attack(release, hilbert_index=index)
    # a "Hilb" group repeating a value with a skipped row inside it
    table = line_table(list("ABAB"))
    fake = Release(table, Partition(np.array([0, 1, 0, 1])), provenance=Provenance("hilb"))
    with pytest.raises(InputError, match="repeats an SA value"):
        hilb_order_attack(fake, hilbert_index=np.array([0, 1, 2, 3]), l=1)


# -- real data -------------------------------------------------------------------------------------
def test_demo_data() -> None:
    _, table = hospital()
    for alg in ("hilb", "hilb+", "hilb++"):
        result = hilb_order_attack(get(alg).run(table, [LDiversity(3)], seed=0))
        assert result.compromised > 0 and result.max_posterior == 1.0
        assert result.compromised <= result.details["compromised_union"]
    for alg in ("hilb+strict", "hilb++strict"):
        assert hilb_order_attack(get(alg).run(table, [LDiversity(3)], seed=0)).safe


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no Adult data")
def test_adult() -> None:
    from kerckhoffs.datasets import load_adult

    table = Table.encode(
        load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult/schema.toml")
    )
    result = hilb_order_attack(hilb(table, [LDiversity(2)]))
    assert result.compromised > 0
    assert set(result.tuples["sa_value"][result.tuples["breached"]]) == {
        "Preschool|1st-4th|5th-6th|7th-8th"  # the sensitive set is what l-diversity bounds
    }
    strict = get("hilb++strict").run(table, [LDiversity(2)], seed=0)
    assert hilb_order_attack(strict).compromised == 0
