"""Paper 002's experiments (spec exclusive.md 4.4-4.7 worked examples, 7 E-A / E-B): the
registered names, each measure's columns on a tiny point, and the worked-example table
against the spec's verified values (typed here by hand from the spec, not recomputed)."""

from __future__ import annotations

import sys
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples as budget
from kerckhoffs.cli import main
from kerckhoffs.disclosure import PAPER_CHK, inclusive, naive
from kerckhoffs.experiments import Context, all_experiments
from kerckhoffs.experiments import paper_002_exclusive as p2

NAMES = {
    "exclusive-examples",
    "exclusive-ea-utility",
    "exclusive-ea-joint",
    "exclusive-eb-functions",
    "exclusive-eb-groups",
}
EXAMPLE_COLUMNS = {
    "section",
    "panel",
    "item",
    "paper",
    "ours",
    "spec",
    "paper_text",
    "ours_text",
    "spec_text",
    "verdict",
    "remark",
    "figure_panel",
    "paper_vs_spec",
    "ours_vs_spec",
    "quantities",
}
UTILITY_COLUMNS = {
    "setting",
    "quantity",
    "count",
    "percent",
    "percent_low",
    "percent_high",
    "unsafe_of_naive",
    "units",
    "seconds",
    "classes_exclusive_wins",
    "classes_inclusive_wins",
}
JOINT_COLUMNS = {
    "setting",
    "outcome",
    "inclusive",
    "exclusive",
    "naive",
    "winner",
    "count",
    "unsafe",
    "percent",
}
COST_COLUMNS = {
    "repeat",
    "strategy",
    "instances",
    "seconds",
    "released",
    "per_last",
    "recurrence",
    "measure",
    "value",
}


# -- registration -------------------------------------------------------------------------------
def test_the_experiments_are_registered_with_claims_and_notes() -> None:
    exps = {e.name: e for e in all_experiments() if e.paper == "002"}
    assert set(exps) == NAMES
    for e in exps.values():
        assert e.claim and e.notes and e.grid


def test_reproduce_list_names_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", "reproduce", "--list"])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    assert not exc.value.code
    out = capsys.readouterr().out
    for name in NAMES:
        assert name in out


def test_budget_grids() -> None:
    """E-A and E-B stay inside the three-minute budget: the grids the notes describe."""
    exps = {e.name: e for e in all_experiments()}
    ea = exps["exclusive-ea-utility"].grid
    assert ea == exps["exclusive-ea-joint"].grid
    random_points = [p for p in ea if p["sequence"] == p2.RANDOM_SEQUENCES]
    assert {p["n_rows"] for p in random_points} == {8, 10, 12}
    assert {p["n_funcs"] for p in random_points} == {2, 3, 4}
    assert [p["sequence"] for p in ea].count(p2.PAPER_SEQUENCE) == 1
    assert [p["n_funcs"] for p in exps["exclusive-eb-functions"].grid] == [1, 2, 3, 4, 5]
    assert {p["n_funcs"] for p in exps["exclusive-eb-groups"].grid} == {3}


# -- the worked examples (spec 4.4-4.7) ---------------------------------------------------------
SPEC = {
    # 4.4: |PER| and the disclosure-set table
    "|PER| G0 g1": "16",
    "|PER| G0 g2": "144",
    "|PER| G0 g3": "432",
    "|DS_incl| G0 g1": "16",
    "|DS_incl| G0 g2": "16",
    "|DS_incl| G0 g3": "100",
    "max share DS_incl G0 g3": "19/25",
    "|DS_excl| G0 g3": "68",
    "max share DS_excl G0 g3": "11/17",
    "max share DS_incl G0 g2": "1",
    "|DS_incl| G_a g1": "32",
    "max share DS_incl G_a g1": "1/2",
    "|DS_incl| G_b g1": "4",
    "|DS_incl| G_b g2": "20",
    "max share DS_incl G_b g2": "4/5",
    "|DS_excl| G_b g2": "20",
    "|DS_incl| G_b g3": "100",
    "|DS_excl| G_b g3": "68",
    "max share DS_excl G_b g3": "11/17",
    # Examples 3, 7, 8
    "Ex. 3: g1-generalizations in PER(G_2)": "9",
    "Ex. 3: circles (those passing CHK)": "8",
    "Ex. 3: instances removed": "128",
    "Ex. 3: DS_2 left": "16",
    "Ex. 7: PER(G_3) case 1 (g1 PER passes)": "312",
    "Ex. 7: PER(G_3) case 2 (DS_incl of g2 passes)": "20",
    "Ex. 7: DS_incl3 set 1 (E = F = c4)": "52",
    "Ex. 7: DS_incl3 set 2 (C = D = c2)": "24",
    "Ex. 7: DS_incl3 set 3 (G = H = c6)": "24",
    "Ex. 7: share E = c4 in DS_incl3": "19/25",
    "Ex. 8: set 1 with D = c2, G = c6": "36",
    "Ex. 8: DS_excl3 set 1": "20",
    "Ex. 8: DS_excl3 sets 2 + 3": "48",
    "Ex. 8: share E = c4 in DS_excl3": "11/17",
    "DS_incl3 max share per person A..J": "9/25 9/25 11/25 3/5 19/25 19/25 3/5 11/25 9/25 9/25",
    "DS_excl3 max share per person A..J": "7/17 7/17 11/17 11/17 11/17 11/17 11/17 11/17 7/17 7/17",
    # 4.7 outcomes
    "G0 naive": "g2",
    "G0 inclusive": "nothing",
    "G0 exclusive": "nothing",
    "G_a naive": "g1",
    "G_a inclusive": "g1",
    "G_a exclusive": "g1",
    "G_b naive": "g3",
    "G_b inclusive": "nothing",
    "G_b exclusive": "g3",
    "X1 naive": "g2",
    "X1 inclusive": "g3",
    "X1 exclusive": "nothing",
    "X4 naive": "g3",
    "X4 inclusive": "g3",
    "X4 exclusive": "nothing",
    "G0 naive: true knowledge": "16",
    "G0 naive: max share": "1",
    "X1: |DS_incl3|": "216",
    "X1: max share DS_incl3": "5/9",
    "X1: |DS_excl| (deciding)": "16",
    "X4: |DS_incl3|": "160",
    "X4: max share DS_incl3": "13/20",
    "X4: |DS_excl| (deciding)": "144",
    "X4: max share DS_excl": "13/18",
    # 4.7 exhaustive
    "all tables": "453600",
    "(incl/excl/naive) g1/g1/g1": "322560",
    "(incl/excl/naive) g2/g2/g2": "7200",
    "(incl/excl/naive) g3/g3/g3": "31104",
    "(incl/excl/naive) nothing/g3/g3": "2448",
    "(incl/excl/naive) nothing/nothing/g2": "15264",
    "(incl/excl/naive) nothing/nothing/g3": "8640",
    "(incl/excl/naive) nothing/nothing/nothing": "66384",
    "any other (incl/excl/naive)": "0",
    "naive release unsafe": "23904",
}
PAPER = {  # what the paper prints (spec 4.5-4.6 quote it), where it prints a number
    "|DS_incl| G0 g3": 120.0,
    "max share DS_incl G0 g3": 0.8,
    "Ex. 7: DS_incl3 set 1 (E = F = c4)": 72.0,
    "Ex. 7: PER(G_3) case 2 (DS_incl of g2 passes)": 0.0,
    "Ex. 8: DS_excl3 set 1": 20.0,
    "|PER| G0 g1": 16.0,
}


@pytest.fixture(scope="module")
def examples() -> dict[str, dict]:
    rows = p2.worked_examples(Context(Path(".")))
    return {r["item"]: r for r in rows}


def test_worked_examples_ours_equal_the_spec(examples: dict[str, dict]) -> None:
    for item, expected in SPEC.items():
        assert examples[item]["ours_text"] == expected, item
    # every row (also those not typed above) agrees with the spec column, none DIFFERS
    for row in examples.values():
        assert set(row) == EXAMPLE_COLUMNS
        assert row["ours_text"] == row["spec_text"], row["item"]
        assert "DIFFERS" not in row["verdict"], row["item"]


def test_worked_examples_state_the_paper_and_example_7_correction(
    examples: dict[str, dict],
) -> None:
    for item, printed in PAPER.items():
        assert examples[item]["paper"] == pytest.approx(printed), item
    wrong = {r["item"] for r in examples.values() if r["verdict"].startswith("paper wrong")}
    assert wrong == {
        "|DS_incl| G0 g3",
        "max share DS_incl G0 g3",
        "Ex. 7: PER(G_3) case 2 (DS_incl of g2 passes)",
        "Ex. 7: DS_incl3 set 1 (E = F = c4)",
        "Ex. 7: share E = c4 in DS_incl3",
    }
    assert examples["max share DS_excl G0 g3"]["verdict"] == "reproduced"  # 0.647 = 11/17
    assert examples["|DS_incl| G0 g3"]["ours_vs_spec"] == 1.0
    assert examples["|DS_incl| G0 g3"]["paper_vs_spec"] == pytest.approx(1.2)
    assert examples["G_b exclusive"]["ours"] == 3.0 and examples["G0 inclusive"]["ours"] == 0.0


def test_exclusive_disclosure_set_beyond_the_naive_stop() -> None:
    """G0 under g3: the exclusive publisher stops at g2, but DS_excl3 is 68 with E = c4 in 44
    (spec 4.6, by hand: 20 + 12 + 12)."""
    seq = p2.running_sequence()
    size, counts = p2.exclusive_disclosure_set(seq, 2, p2.G0, PAPER_CHK)
    assert size == 68 and int(counts[4, 3]) == 44
    assert Fraction(int(counts.max()), size) == Fraction(11, 17)


# -- E-A ------------------------------------------------------------------------------------------
def test_strict_winner_by_hand() -> None:
    assert p2.strict_winner(-1, 2) == "exclusive"
    assert p2.strict_winner(2, -1) == "inclusive"
    assert p2.strict_winner(1, 2) == "inclusive"
    assert p2.strict_winner(2, 1) == "exclusive"
    assert p2.strict_winner(1, 1) == p2.strict_winner(-1, -1) == "equal"


@settings(max_examples=budget(40), deadline=None)
@given(
    n_rows=st.integers(8, 12),
    n_funcs=st.integers(1, 3),
    max_group=st.integers(5, 8),
    seed=st.integers(0, 2**16),
)
def test_random_sequence_is_qi_based_with_growing_groups(
    n_rows: int, n_funcs: int, max_group: int, seed: int
) -> None:
    seq = p2.random_sequence(np.random.default_rng(seed), n_rows, n_funcs, max_group)
    assert len(seq) == n_funcs and seq.n == n_rows
    groups = [seq.groups(i) for i in range(n_funcs)]
    assert all(a > b for a, b in pairwise(groups))
    for i in range(n_funcs):
        labels = seq[i]
        assert (np.diff(labels) >= 0).all()  # contiguous groups in QI order
        sizes = np.bincount(labels)
        assert sizes.min() >= 2 and sizes.max() <= max_group


@settings(max_examples=budget(15), deadline=None)
@given(n_funcs=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_worst_case_instances_reach_the_last_generalization(n_funcs: int, seed: int) -> None:
    seq, x = p2.worst_case_instance(np.random.default_rng(seed), 8, n_funcs, 3, 4)
    assert naive(seq, x, PAPER_CHK).released == n_funcs - 1
    # and the inclusive publisher computes a disclosure set at every level (spec 2.4 lemma)
    assert len(inclusive(seq, x, PAPER_CHK).steps) == n_funcs


def test_measure_utility_and_joint_on_a_hand_made_sample(tmp_path: Path) -> None:
    """Weights typed by hand: 3 tables g1/g1/g1, 1 nothing/g2/g2 (exclusive wins), 2
    g3/nothing/g2 (inclusive wins; naive unsafe on both), 4 nothing/nothing/nothing."""
    ctx = Context(tmp_path)
    sample = p2.UtilitySample(
        weight={(0, 0, 0): 3.0, (-1, 1, 1): 1.0, (2, -1, 1): 2.0, (-1, -1, -1): 4.0},
        unsafe={(0, 0, 0): 0.0, (-1, 1, 1): 0.0, (2, -1, 1): 2.0, (-1, -1, -1): 0.0},
        units=10,
        seconds=0.5,
    )
    point = {"sequence": "random", "n_rows": 8, "n_funcs": 3, "max_group": 8, "tables": 10}
    ctx._cache["p002:ea:8:3:10:0:8"] = sample
    rows = p2.measure_utility(point | {"seed": 0}, ctx)
    assert all(set(r) == UTILITY_COLUMNS for r in rows)
    got = {r["quantity"]: (r["count"], r["percent"]) for r in rows}
    assert got["naive releases"] == (6.0, 60.0)
    assert got["naive release unsafe"] == (2.0, 20.0)
    assert got["inclusive releases"] == (5.0, 50.0)
    assert got["exclusive releases"] == (4.0, 40.0)
    assert got["inclusive strictly better"] == (2.0, 20.0)
    assert got["exclusive strictly better"] == (1.0, 10.0)
    assert rows[0]["unsafe_of_naive"] == pytest.approx(100 * 2 / 6)
    joint = p2.measure_joint(point | {"seed": 0}, ctx)
    assert all(set(r) == JOINT_COLUMNS for r in joint)
    by = {r["outcome"]: r for r in joint}
    assert set(by) == {"g1/g1/g1", "φ/g2/g2", "g3/φ/g2", "φ/φ/φ"}
    assert by["g3/φ/g2"]["winner"] == "inclusive" and by["g3/φ/g2"]["unsafe"] == 2
    assert by["φ/g2/g2"]["winner"] == "exclusive"
    assert sum(r["percent"] for r in joint) == pytest.approx(100.0)


def test_measure_utility_on_a_tiny_random_point(tmp_path: Path) -> None:
    point = {"sequence": "random", "n_rows": 8, "n_funcs": 2, "max_group": 8, "tables": 6}
    rows = p2.measure_utility(point | {"seed": 1}, Context(tmp_path))
    assert [r["quantity"] for r in rows] == [label for _, label in p2.UTILITY_SERIES]
    assert all(set(r) == UTILITY_COLUMNS and r["units"] == 6 for r in rows)
    got = {r["quantity"]: r["count"] for r in rows}
    # exclusive releases only what naive releases; unsafe only among naive releases
    assert got["exclusive releases"] <= got["naive releases"]
    assert got["naive release unsafe"] <= got["naive releases"]
    for r in rows:  # a 95 % interval around each share
        assert r["percent_low"] <= r["percent"] <= r["percent_high"]


def test_class_wide_random_point_weighs_each_class_once_and_counts_winning_classes(
    tmp_path: Path,
) -> None:
    """Whole multiset classes: each class weighs 1 in all (its tables 1 / class size each),
    and a class counts as won by a strategy when it is strictly better on one of its tables,
    which the per-table weights must then show."""
    point = {"sequence": p2.RANDOM_CLASSES, "n_rows": 8, "n_funcs": 3, "max_group": 8,
             "classes": 5, "seed": 2}  # fmt: skip
    sample = p2._sample(point, Context(tmp_path))
    assert sample.units == 5 and abs(sample.total - 5) < 1e-9
    assert all(len(v) == 5 for v in sample.per_unit.values())  # one share per class
    wins = p2.summarize(sample)
    for strategy in ("inclusive", "exclusive"):
        assert 0 <= sample.classes_won[strategy] <= 5
        assert (sample.classes_won[strategy] > 0) == (wins[f"{strategy}_wins"] > 0)


def test_partitions_and_their_probabilities_by_hand() -> None:
    """4 rows: partitions into at most 7 parts are the 5 of 4; P((1, 1, 1, 1)) by hand: with k
    labels, k (k-1) (k-2) (k-3) of the k^4 tables use four distinct values; k = 3 gives 0."""
    assert p2.integer_partitions(4, 7) == [(4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1)]
    assert len(p2.integer_partitions(10, 7)) == p2.EA_PAPER_CLASSES == 38
    by_k = [Fraction(k * (k - 1) * (k - 2) * (k - 3), k**4) for k in range(3, 8)]
    assert p2.partition_probability((1, 1, 1, 1), 4) == sum(by_k) / 5
    # k labels: all 4 rows equal in k of k^4 tables
    assert p2.partition_probability((4,), 4) == sum(Fraction(k, k**4) for k in range(3, 8)) / 5
    assert sum(p2.partition_probability(q, 10) for q in p2.integer_partitions(10, 7)) == 1


def test_interval_by_hand() -> None:
    """Wilson at 0 of 100: upper bound z^2 / (n + z^2) = 3.8415 / 103.8415; normal interval
    of (0, 1, 0, 1): mean 1/2, sd = sqrt(1/3), half-width 1.96 * sqrt(1/3) / 2."""
    low, high = p2.interval([0.0] * 100, binary=True)
    assert low == 0.0 and high == pytest.approx(3.841459 / 103.841459, rel=1e-5)
    low, high = p2.interval([0.0, 1.0, 0.0, 1.0], binary=False)
    half = 1.959964 * (1 / 3) ** 0.5 / 2
    assert (low, high) == (pytest.approx(max(0.0, 0.5 - half)), pytest.approx(0.5 + half))


# -- E-B ------------------------------------------------------------------------------------------
def test_measure_cost_on_a_tiny_point(tmp_path: Path) -> None:
    point = {"n_rows": 8, "n_funcs": 2, "n_values": 3, "max_group": 4, "repeats": 2, "seed": 0}
    rows = p2.measure_cost(point, Context(tmp_path))
    assert all(set(r) == COST_COLUMNS for r in rows)
    assert {r["measure"] for r in rows} == {
        "PER instances enumerated",
        "instances / |PER| of the last generalization",
        "seconds",
    }
    inst = [r for r in rows if r["measure"] == "PER instances enumerated"]
    assert len(inst) == 2 * 4
    # the counted strategy was not run: it has no seconds row
    assert not [r for r in rows if r["measure"] == "seconds" and r["strategy"] == p2.COUNTED]
    for rep in (0, 1):
        by = {r["strategy"]: r for r in inst if r["repeat"] == rep}
        # exclusive (spec 5.3): at the worst case it enumerates exactly PER of the last level
        assert by["exclusive"]["instances"] == by["exclusive"]["per_last"]
        assert by["inclusive (memo)"]["instances"] >= by["exclusive"]["instances"]
        assert by["inclusive (no memo)"]["instances"] >= by["inclusive (memo)"]["instances"]
        # memoization is transparent (spec 6 T12)
        assert by["inclusive (memo)"]["released"] == by["inclusive (no memo)"]["released"]
        # the exact count is the run's own count, and releases the same
        assert by[p2.COUNTED]["instances"] == by["inclusive (no memo)"]["instances"]
        assert by[p2.COUNTED]["released"] == by["inclusive (no memo)"]["released"]


@settings(max_examples=budget(15), deadline=None)
@given(n_funcs=st.integers(2, 3), seed=st.integers(0, 2**16))
def test_no_memo_count_equals_the_runs_count(n_funcs: int, seed: int) -> None:
    """The count computed once per (level, signature) equals the instances the non-memoized
    publisher enumerates when it runs (8 rows, groups of 2-4), and both release the same
    index as the memoized publisher."""
    seq, x = p2.worst_case_instance(np.random.default_rng(seed), 8, n_funcs, 3, 4)
    run = inclusive(seq, x, PAPER_CHK, memo=False)
    assert p2.no_memo_instances(seq, x) == (run.instances, run.released)
    assert inclusive(seq, x, PAPER_CHK).released == run.released


@pytest.mark.slow
def test_no_memo_count_equals_the_runs_count_at_four_generalizations() -> None:
    """The same at 4 generalizations, where the recursion goes three levels deep (10 rows,
    groups of 2-5; 561,856 instances, several seconds)."""
    seq, x = p2.worst_case_instance(np.random.default_rng(2), 10, 4, 3, 5)
    run = inclusive(seq, x, PAPER_CHK, memo=False)
    assert run.instances == 561_856
    assert p2.no_memo_instances(seq, x) == (run.instances, run.released)


def test_recurrence_is_not_an_upper_bound() -> None:
    """The paper's recurrence evaluated with the table's own PER sizes is an estimate: on one
    of E-B's 5-generalization worst cases (point n_funcs = 5, third table) the exact count
    of the non-memoized recursion exceeds it (2.02e11 > 1.89e11)."""
    rng = np.random.default_rng([0, 12, 5, 6, 5])
    tables = [p2.worst_case_instance(rng, 12, 5, 4, 6) for _ in range(3)]
    seq, x = tables[2]
    assert p2.recurrence_estimate(seq, x) == 189_394_368_492
    assert p2.no_memo_instances(seq, x)[0] == 201_869_835_656
