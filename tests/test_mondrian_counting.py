"""Mondrian by counting (issue 15 item 2): the level-by-level engine that decides cuts from
per-(group, code) histograms must give exactly the partitions (same group id on every row) and
the same SA-read log as the sorted-orders engine it replaced, kept verbatim in
``benchmarks/baselines/mondrian_v0.py``, for every option: lower/upper median, strict/relaxed
cuts, every cut rule (k, l, look-ahead, entropy-l, t-closeness, both, a plain function),
categorical and numeric QIs, sensitive subsets in both modes, duplicate rows collapsed or not,
dense or compressed histograms. Plus hand-computed vectors for the two counting steps."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Hierarchy, Partition, Schema, Table
from kerckhoffs.algorithms.mondrian import (
    AllCuts,
    CutRule,
    CutStats,
    EntropyLDiversityCut,
    FunctionCut,
    KAnonymityCut,
    LDiversityCut,
    LookAheadCut,
    TClosenessCut,
    level_histogram,
    median_cuts,
    mondrian_groups,
)
from kerckhoffs.algorithms.mondrian import counting as mondrian_module
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.errors import ParameterError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def _baseline() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mondrian_v0", ROOT / "benchmarks" / "baselines" / "mondrian_v0.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BASELINE = _baseline()


# -- the two counting steps, by hand ---------------------------------------------------------------
def test_level_histogram_counts_group_cell_pairs() -> None:
    # one column of width 4: group 0 holds 0, 1, 1, 3; group 1 holds 2, 2 (keys g * 4 + cell)
    group = np.array([0, 1, 0, 0, 1, 0], dtype=np.int64)
    cells = np.array([1, 2, 0, 3, 2, 1], dtype=np.uint8)
    h = level_histogram(group, cells, 2, 4)
    assert h.key.tolist() == [0, 1, 3, 6]
    assert h.count.tolist() == [1, 2, 1, 2]
    # weighted units (a unit standing for several rows) and each unit's cell
    hw = level_histogram(group, cells, 2, 4, np.array([1.0, 2, 1, 5, 1, 1]), unit_cells=True)
    assert hw.count.tolist() == [1, 2, 5, 3]
    assert hw.unit_cell is not None and hw.unit_cell.tolist() == [1, 3, 0, 2, 3, 1]
    # two columns side by side (domains 2 and 3: cells 0-1 and 2-4, width 5), weighted
    two = np.array([[0, 2], [1, 4], [1, 2]], dtype=np.uint8)
    h2 = level_histogram(np.array([0, 0, 1]), two, 2, 5, np.array([2.0, 1, 3]))
    assert h2.key.tolist() == [0, 1, 2, 4, 6, 7]
    assert h2.count.tolist() == [2, 1, 2, 1, 3, 3]


def test_level_histogram_compressed_when_dense_is_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mondrian_module, "DENSE_BINS", 0)
    monkeypatch.setattr(mondrian_module, "DENSE_BINS_PER_UNIT", 0)
    group = np.array([0, 1, 0, 0, 1, 0], dtype=np.int64)
    cells = np.array([1, 2, 0, 3, 2, 1], dtype=np.int64)
    h = level_histogram(group, cells, 2, 4, unit_cells=True)
    assert h.key.tolist() == [0, 1, 3, 6] and h.count.tolist() == [1, 2, 1, 2]
    assert h.unit_cell is not None and h.unit_cell.tolist() == [1, 3, 0, 2, 3, 1]


def test_median_cuts_by_hand() -> None:
    # QI a (domain 6): group 0 holds 0 1 1 3; group 1 holds 2 2 (one value); group 2 holds
    # 0 0 0 5 5. QI b (domain 2, cells 6-7): group 0 holds 1 1 1 1; group 1: 0 1; group 2:
    # 0 1 1 1 1
    rows = [(0, 0, 1), (0, 1, 1), (0, 1, 1), (0, 3, 1), (1, 2, 0), (1, 2, 1)]
    rows += [(2, 0, 0), (2, 0, 1), (2, 0, 1), (2, 5, 1), (2, 5, 1)]
    group = np.array([g for g, _, _ in rows], dtype=np.int64)
    cells = np.array([[a, 6 + b] for _, a, b in rows], dtype=np.int64)
    h = level_histogram(group, cells, 3, 8)
    sizes = np.array([4, 2, 5], dtype=np.int64)
    lo = median_cuts(h, sizes, [6, 2], lower=True, strict=True)
    # lower median, QI a: group 0 sorted 0 1 1 3, position ceil(4/2)-1 = 1 -> v = 1,
    # L = {0, 1, 1}; group 2 sorted 0 0 0 5 5, position 2 -> v = 0, L = {0, 0, 0}.
    # QI b: group 1 sorted 0 1 -> v = 0, L = {0}; group 2: 0 1 1 1 1 -> v = 1, L = all
    assert lo.spread.tolist() == [[3, 0], [0, 1], [5, 1]]
    assert lo.value.tolist() == [[1, 1], [2, 0], [0, 1]]
    assert lo.below.tolist() == [[1, 0], [0, 0], [0, 1]]
    assert lo.left.tolist() == [[3, 4], [2, 1], [3, 5]]  # no spread: |L| = |G|, no cut
    up = median_cuts(h, sizes, [6, 2], lower=False, strict=True)
    # upper median, position floor(m/2): QI a group 0 -> 1 (L = {0}); group 2 -> 0 (L empty);
    # QI b group 1 -> 1 (L = {0}); group 2 -> 1 (L = {0})
    assert up.value.tolist() == [[1, 1], [2, 1], [0, 1]]
    assert up.left.tolist() == [[1, 4], [2, 1], [0, 1]]
    rel = median_cuts(h, sizes, [6, 2], lower=True, strict=False)
    assert rel.left.tolist() == [[2, 4], [2, 1], [3, 3]]  # ceil(m/2) rows where a cut exists
    rel_up = median_cuts(h, sizes, [6, 2], lower=False, strict=False)
    assert rel_up.left.tolist() == [[2, 4], [2, 1], [2, 2]]


# -- equality with the sorted-orders engine --------------------------------------------------------
@st.composite
def tables(draw: st.DrawFn) -> Table:
    """Random tables with many duplicate rows (so collapsing matters), 1-4 QIs among
    categorical ones over a wider declared domain and numeric ones (up to 60 distinct)."""
    n = draw(st.integers(1, 120))
    d = draw(st.integers(1, 4))
    data: dict[str, list] = {}
    quasi: dict[str, dict] = {}
    for j in range(d):
        hi = draw(st.sampled_from([0, 1, 2, 4, 9, 60]))
        data[f"q{j}"] = draw(st.lists(st.integers(0, hi), min_size=n, max_size=n))
        if hi < 20 and draw(st.booleans()):
            h = Hierarchy([[str(v), f"b{v // 3}", "*"] for v in range(hi + 3)], name=f"q{j}")
            quasi[f"q{j}"] = {"kind": "categorical", "hierarchy": h}
        else:
            quasi[f"q{j}"] = {"kind": "numeric"}
    n_sa = draw(st.integers(1, 6))
    data["s"] = [f"s{v}" for v in draw(st.lists(st.integers(0, n_sa - 1), min_size=n, max_size=n))]
    subset = draw(st.sampled_from([None, None, ["s0"], ["s0", "s1"]]))
    if subset is not None and not set(subset) <= set(data["s"]):
        subset = None
    mode = draw(st.sampled_from(["set", "each"]))
    schema = Schema.build(quasi, "s", sensitive_values=subset, sensitive_mode=mode)
    return Table.encode(pd.DataFrame(data), schema)


def _halves_and_group(s: CutStats) -> np.ndarray:
    assert s.bounded is not None and s.bounded_left is not None and s.bounded_right is not None
    return (
        (s.left >= 2)
        & (s.right >= 2)
        & (s.left + 1 >= 2 * s.bounded_left)
        & (s.right + 1 >= 2 * s.bounded_right)
        & (s.bounded <= s.size)
    )


RULES = {
    "k1": lambda t: KAnonymityCut(1),
    "k2": lambda t: KAnonymityCut(2),
    "k5": lambda t: KAnonymityCut(5),
    "l1.5": lambda t: LDiversityCut(1.5),
    "l2": lambda t: LDiversityCut(2),
    "l3": lambda t: LDiversityCut(3),
    "look2": lambda t: LookAheadCut(2),
    "k2+l2": lambda t: AllCuts([KAnonymityCut(2), LDiversityCut(2)]),
    "k3+look1.5": lambda t: AllCuts([KAnonymityCut(3), LookAheadCut(1.5)]),
    "entropy1.5": lambda t: EntropyLDiversityCut(1.5),
    "t0.4": lambda t: TClosenessCut(
        0.4, np.bincount(t.sa, minlength=t.n_sa), ordered=bool(t.n_sa % 2)
    ),
    "function": lambda t: FunctionCut(_halves_and_group),
}


def _canonical_log(log: SAReadLog) -> list[tuple[str, list[tuple[int, ...]]]]:
    """Each record as (what, its row sets sorted): the same reads in the same order,
    whatever the order of rows inside a record."""
    out = []
    for read in log.reads:
        sets: dict[int, list[int]] = {}
        for r, s in zip(read.rows.tolist(), read.set_ids.tolist(), strict=True):
            sets.setdefault(s, []).append(r)
        out.append((read.what, sorted(tuple(sorted(v)) for v in sets.values())))
    return out


def _same_as_baseline(table: Table, rule: CutRule, median: str, cuts: str, **kw: bool) -> None:
    log_old, log_new = SAReadLog(), SAReadLog()
    old = BASELINE.mondrian_groups_sorted(table, rule, median=median, cuts=cuts, sa_log=log_old)
    new = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=log_new, **kw)
    assert new.dtype == old.dtype
    assert np.array_equal(new, old)
    assert _canonical_log(log_new) == _canonical_log(log_old)
    assert np.array_equal(mondrian_groups(table, rule, median=median, cuts=cuts, **kw), old)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.sampled_from(sorted(RULES)),
    st.sampled_from(["lower", "upper"]),
    st.sampled_from(["strict", "relaxed"]),
    st.booleans(),
)
def test_same_groups_and_reads_as_sorted_orders(
    table: Table, rule: str, median: str, cuts: str, collapse: bool
) -> None:
    _same_as_baseline(table, RULES[rule](table), median, cuts, collapse=collapse)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.sampled_from(sorted(RULES)),
    st.sampled_from(["lower", "upper"]),
    st.sampled_from(["strict", "relaxed"]),
)
def test_same_groups_with_compressed_histograms(
    table: Table, rule: str, median: str, cuts: str
) -> None:
    # the np.unique path taken when n_groups * W would be too large for a dense bincount
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mondrian_module, "DENSE_BINS", 0)
        mp.setattr(mondrian_module, "DENSE_BINS_PER_UNIT", 0)
        _same_as_baseline(table, RULES[rule](table), median, cuts)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.sampled_from(sorted(RULES)),
    st.sampled_from(["lower", "upper"]),
    st.sampled_from(["strict", "relaxed"]),
)
def test_same_groups_with_column_by_column_histograms(
    table: Table, rule: str, median: str, cuts: str
) -> None:
    # the path of large inputs: QI keys counted one column at a time into reused buffers
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mondrian_module, "COLUMN_KEYS", 0)
        _same_as_baseline(table, RULES[rule](table), median, cuts)


def test_collapsed_duplicates_on_a_tie_heavy_table() -> None:
    # 2,000 rows over 3 x 4 x 2 QI values and 3 SA values: every unit stands for many rows
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 3, 2000),
            "b": rng.integers(0, 4, 2000),
            "c": rng.integers(0, 2, 2000),
            "s": rng.choice(["x", "y", "z"], 2000),
        }
    )
    quasi = {q: {"kind": "numeric"} for q in "abc"}
    table = Table.encode(df, Schema.build(quasi, "s"))
    for rule in (KAnonymityCut(20), LDiversityCut(2.5), LookAheadCut(2)):
        for median in ("lower", "upper"):
            for cuts in ("strict", "relaxed"):
                _same_as_baseline(table, rule, median, cuts)


def test_parameters_refused_one_line() -> None:
    table = Table.encode(
        pd.DataFrame({"x": [1, 2], "s": ["a", "b"]}), Schema.build({"x": {"kind": "numeric"}}, "s")
    )
    with pytest.raises(Exception, match="median must be one of"):
        mondrian_groups(table, KAnonymityCut(1), median="middle")
    with pytest.raises(Exception, match="cuts must be one of"):
        mondrian_groups(table, KAnonymityCut(1), cuts="loose")


# -- real data (slow): the benchmark's settings ----------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "census").exists(), reason="needs ../shared/data/census")
def test_census_l4_same_as_sorted_orders() -> None:
    from kerckhoffs.datasets import load_census

    schema = Schema.from_toml(ROOT / "examples" / "census" / "schema.toml")
    table = Table.encode(load_census(DATA / "census"), schema)
    for median, cuts in (("lower", "strict"), ("upper", "relaxed")):
        _same_as_baseline(table, LDiversityCut(4), median, cuts)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult").exists(), reason="needs ../shared/data/adult")
def test_adult_k10_and_l4_same_as_sorted_orders() -> None:
    from kerckhoffs.datasets import load_adult_training

    schema = Schema.from_toml(ROOT / "examples" / "adult" / "schema_training.toml")
    table = Table.encode(load_adult_training(DATA / "adult" / "adult.csv"), schema)
    for rule in (KAnonymityCut(10), LDiversityCut(4), LookAheadCut(4)):
        for cuts in ("strict", "relaxed"):
            _same_as_baseline(table, rule, "lower", cuts)


@settings(max_examples=examples(80), deadline=None)
@given(
    t=tables(),
    rule=st.sampled_from(sorted(RULES)),
    split=st.integers(0, 3),
    median=st.sampled_from(["lower", "upper"]),
    cuts=st.sampled_from(["strict", "relaxed"]),
)
def test_start_continues_each_given_group_on_its_own(
    t: Table, rule: str, split: int, median: str, cuts: str
) -> None:
    # start = two groups (rows by parity of a QI code or of the row id): the recursion from
    # them equals Mondrian run on each group's rows alone (same encodings), as a distributed
    # run relies on when it finishes its subtrees in memory
    from kerckhoffs.attacks.composition import take_rows

    key = t.qi[:, split % t.d] if split < 2 else np.arange(t.n)
    start = (key % 2).astype(np.int64)
    if np.unique(start).size < 2:
        start = np.zeros(t.n, dtype=np.int64)
    r = RULES[rule](t)
    got = mondrian_groups(t, r, median=median, cuts=cuts, start=start)
    expected = np.empty(t.n, dtype=np.int64)
    base = 0
    for g in range(int(start.max()) + 1):
        rows = np.flatnonzero(start == g)
        sub = mondrian_groups(take_rows(t, rows), r, median=median, cuts=cuts)
        expected[rows] = sub + base
        base += int(sub.max()) + 1
    assert Partition(got).same_as(Partition(expected.astype(np.int32)))
    with_rows = mondrian_groups(t, r, median=median, cuts=cuts, start=start, collapse=False)
    assert np.array_equal(with_rows, got)


@settings(max_examples=examples(80), deadline=None)
@given(
    t=tables(),
    rule=st.sampled_from(sorted(RULES)),
    median=st.sampled_from(["lower", "upper"]),
    with_start=st.booleans(),
    collapse=st.booleans(),
    data=st.data(),
)
def test_weights_stand_for_repeated_rows(
    t: Table, rule: str, median: str, with_start: bool, collapse: bool, data: st.DataObject
) -> None:
    """Row i with weight w is the table with row i repeated w times (strict cuts never
    separate equal rows): each row gets the group of its copies, ids numbered alike (a
    distributed run finishes a group from its distinct rows and their counts)."""
    from kerckhoffs.attacks.composition import take_rows

    w = np.array(data.draw(st.lists(st.integers(1, 4), min_size=t.n, max_size=t.n)), np.int64)
    start = (t.qi[:, 0] % 2).astype(np.int64) if with_start else None
    if start is not None and np.unique(start).size < 2:
        start = None
    r = RULES[rule](t)
    got = mondrian_groups(t, r, median=median, weights=w, start=start, collapse=collapse)
    copies = np.repeat(np.arange(t.n), w)
    expanded = mondrian_groups(
        take_rows(t, copies), r, median=median, start=None if start is None else start[copies]
    )
    first_copy = np.concatenate([[0], np.cumsum(w)[:-1]])
    assert np.array_equal(got, expanded[first_copy])
    assert np.array_equal(expanded, got[copies])  # the copies of a row never part


def test_weights_are_refused_where_they_cannot_stand_for_rows() -> None:
    t = Table.encode(
        pd.DataFrame({"a": [1, 2, 3], "s": ["x", "y", "x"]}),
        Schema.build({"a": {"kind": "numeric"}}, "s"),
    )
    with pytest.raises(ParameterError, match="weights need strict cuts"):
        mondrian_groups(t, KAnonymityCut(1), cuts="relaxed", weights=np.ones(3, np.int64))
    with pytest.raises(ParameterError, match="one positive count per row"):
        mondrian_groups(t, KAnonymityCut(1), weights=np.array([1, 0, 2]))
    with pytest.raises(ParameterError, match="one positive count per row"):
        mondrian_groups(t, KAnonymityCut(1), weights=np.ones(2, np.int64))
