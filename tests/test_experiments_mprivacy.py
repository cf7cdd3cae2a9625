"""Paper 003's experiments E1-E7 (spec mprivacy.md 5.5) and the range COUNT workload of spec
3.10 (kerckhoffs.metrics.range_count). Fast: the measures run on a small synthetic table
shaped like paper 003's Adult, put into the run's context cache in place of the real one."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments import Context, all_experiments, run_experiment
from kerckhoffs.experiments import paper_003_mprivacy as p3
from kerckhoffs.metrics.range_count import (
    RangeCountWorkload,
    box_sums,
    draw_range_counts,
    range_count_error,
    range_count_estimates,
    true_counts,
)
from kerckhoffs.release import Partition, Release

NAMES = {
    "mprivacy-e1-fig6",
    "mprivacy-e2-fig7",
    "mprivacy-e3-fig8",
    "mprivacy-e4-fig9",
    "mprivacy-e5-fig10",
    "mprivacy-e6-fig11",
    "mprivacy-e7-fig12",
}
VERIFY_COLUMNS = {
    "strategy",
    "calls",
    "seconds",
    "private",
    "used",
    "avg_fitness",
    "records_per_provider",
    "group",
}
ANON_COLUMNS = {
    "algorithm",
    "series",
    "verifier",
    "status",
    "seconds",
    "oracle_calls",
    "nodes",
    "groups",
    "providers_per_group",
    "query_error",
    "query_error_median",
}
OCCUPATIONS = [f"occ{i:02d}" for i in range(14)]


def synthetic_adult(n: int, seed: int = 0) -> pd.DataFrame:
    """A frame with paper 003's Adult columns (random values), standing in for the real one."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 60, n),
            "workclass": rng.choice(["Private", "State-gov", "Self-emp"], n),
            "education": rng.choice(["HS-grad", "Bachelors", "Masters", "Some-college"], n),
            "marital-status": rng.choice(["Married", "Never-married", "Divorced"], n),
            "race": rng.choice(["White", "Black", "Other"], n),
            "sex": rng.choice(["Male", "Female"], n),
            "native-country": rng.choice(["United-States", "Mexico", "India"], n),
            "hours-per-week": rng.integers(10, 60, n),
            "occupation": rng.choice(OCCUPATIONS, n),
        }
    )


@pytest.fixture
def tiny(tmp_path: Path) -> Context:
    ctx = Context(tmp_path)
    ctx._cache["p003:adult-frame"] = synthetic_adult(600)
    return ctx


# -- registration -------------------------------------------------------------------------------
def test_the_seven_experiments_are_listed_with_claims_and_notes() -> None:
    """The paper's seven figures, and Fig. 9's provenance measurement beside them."""
    exps = {e.name: e for e in all_experiments() if e.paper == "003"}
    assert set(exps) == NAMES | {"mprivacy-e4-provenance"}
    for e in exps.values():
        assert e.claim and e.notes and e.grid
        assert e.figure.startswith("Fig. ")
    figures = sorted(int(e.figure.split()[1]) for e in exps.values() if e.name in NAMES)
    assert figures == [6, 7, 8, 9, 10, 11, 12]


def test_grids_hold_table_ii_defaults() -> None:
    exps = {e.name: e for e in all_experiments()}
    e1 = exps["mprivacy-e1-fig6"].grid
    assert {p["size"] for p in e1} == {150, 750} and {p["n_g"] for p in e1} == {15}
    assert sorted({p["m"] for p in e1}) == list(range(1, 15))
    assert {p["m"] for p in exps["mprivacy-e2-fig7"].grid} == {5}
    e3 = exps["mprivacy-e3-fig8"].grid
    assert {p["size"] / p["n_g"] for p in e3} >= {1, 15, 100}
    assert sorted({p["m"] for p in exps["mprivacy-e4-fig9"].grid}) == list(range(1, 10))
    assert p3.K_ANON == 30 and p3.L_ANON == 4 and p3.M_ANON == 3 and p3.N_PROVIDERS == 10
    assert p3.K_VERIFY == 50 and p3.L_VERIFY == 4 and p3.N_QUERIES == 2500


# -- E1-E3 --------------------------------------------------------------------------------------
def test_verification_group_has_every_provider_and_is_reproducible() -> None:
    sa = np.arange(200) % 14
    a = p3.verification_group(sa, 14, 60, 7, seed=3)
    b = p3.verification_group(sa, 14, 60, 7, seed=3)
    c = p3.verification_group(sa, 14, 60, 7, seed=4)
    assert a.N == 60 and a.n_providers == 7 and (a.c > 0).all()
    assert np.array_equal(a.h, b.h)
    assert not np.array_equal(a.h, c.h)
    with pytest.raises(ParameterError):
        p3.verification_group(sa, 14, 500, 7, seed=0)


def test_measure_verify_rows_and_agreeing_verdicts(tiny: Context) -> None:
    rows = p3.measure_verify({"size": 40, "n_g": 6, "m": 2, "seed": 0, "k": 8, "l": 3}, tiny)
    assert [r["strategy"] for r in rows] == list(p3.VERIFIERS_COMPARED)
    for r in rows:
        assert set(r) == VERIFY_COLUMNS
        assert r["records_per_provider"] == pytest.approx(40 / 6)
        assert r["calls"] >= 1
    assert len({r["private"] for r in rows}) == 1  # exact verifiers agree
    direct = next(r for r in rows if r["strategy"] == "direct")
    assert direct["calls"] <= math.comb(6, 2)
    adaptive = next(r for r in rows if r["strategy"] == "adaptive")
    assert adaptive["used"] in ("binary", "top-down")


def test_calibrate_finds_the_crossover_and_the_line() -> None:
    # hand-made: top-down costs 100 / rpp, binary a flat 10 -> top-down no worse from rpp 10
    rpp = [1.0, 5.0, 10.0, 20.0]
    rows = []
    for x in rpp:
        fit = 0.04 * x + 0.33
        rows.append(
            {"records_per_provider": x, "strategy": "binary", "calls": 10, "avg_fitness": fit}
        )
        rows.append(
            {
                "records_per_provider": x,
                "strategy": "top-down",
                "calls": 100 / x,
                "avg_fitness": fit,
            }
        )
    got = p3.calibrate(pd.DataFrame(rows))
    assert got["crossover_rpp"] == 10.0
    assert got["crossover_fitness"] == pytest.approx(0.73)
    assert got["slope"] == pytest.approx(0.04) and got["intercept"] == pytest.approx(0.33)
    assert got["r2"] == pytest.approx(1.0)
    # top-down never catches up: no crossover
    flat = pd.DataFrame(rows).assign(calls=lambda d: np.where(d.strategy == "binary", 1, 5))
    assert math.isnan(p3.calibrate(flat)["crossover_rpp"])


def test_e3_end_to_end_writes_csv_and_png(tiny: Context, tmp_path: Path) -> None:
    exp = next(e for e in all_experiments() if e.name == "mprivacy-e3-fig8")
    small = dataclasses.replace(
        exp, grid=[{"size": 6 * r, "n_g": 6, "m": 2, "k": 8, "l": 3} for r in (2, 10)], seeds=(0,)
    )
    df = run_experiment(small, tmp_path / "out", context=tiny)
    assert len(df) == 2 * len(p3.VERIFIERS_COMPARED)
    assert (tmp_path / "out" / "mprivacy-e3-fig8.csv").is_file()
    assert (tmp_path / "out" / "mprivacy-e3-fig8.png").is_file()


# -- E4-E7 --------------------------------------------------------------------------------------
def test_providers_per_group_by_hand() -> None:
    group = np.array([0, 0, 0, 1, 1, 2])
    provider = np.array([0, 1, 0, 2, 2, 1])
    assert p3.providers_per_group(group, provider) == pytest.approx((2 + 1 + 1) / 3)


def test_measure_anonymize_rows(tiny: Context) -> None:
    point = {"rows": 600, "k": 5, "l": 2, "m": 1, "seed": 0}
    rows = p3.measure_anonymize(point, tiny)
    assert [r["algorithm"] for r in rows] == list(p3.ALGORITHMS)
    for r in rows:
        assert set(r) == ANON_COLUMNS, r
        assert r["status"] == "ok"
        assert 1.0 <= r["providers_per_group"] <= p3.N_PROVIDERS
        assert r["groups"] >= 1 and r["query_error"] >= 0 and r["oracle_calls"] > 0
    # the long form has one row per (algorithm, measure); a second call reuses the cached runs
    long = p3.measure_anonymize_long(point, tiny)
    assert {r["measure"] for r in long} == {
        "runtime (s)",
        "oracle calls",
        "query error (mean relative)",
    }
    assert len(long) == 3 * len(rows)


def test_measure_verifiers_same_partition_different_cost(tiny: Context) -> None:
    rows = p3.measure_verifiers(
        {"rows": 600, "k": 5, "l": 2, "m": 1, "seed": 0, "verifiers": ("binary", "top-down")}, tiny
    )
    calls = {r["series"]: r["value"] for r in rows if r["measure"] == "oracle calls"}
    assert set(calls) == {"binary", "top-down"}
    groups = {r["groups"] for r in rows}
    assert len(groups) == 1  # the verifiers are exact: same output (property P16)


def test_refusal_is_recorded(tiny: Context) -> None:
    # k above the table size: the root is not m-private, the algorithms refuse (spec R20)
    rows = p3.measure_anonymize({"rows": 600, "k": 1000, "l": 2, "m": 1, "seed": 0}, tiny)
    assert all(r["status"].startswith("refused") for r in rows)


def test_adult_schema_is_a23(tiny: Context) -> None:
    schema = p3.adult_schema(tiny)
    table = Table.encode(synthetic_adult(50).assign(provider="P1"), schema)
    assert table.qi_names == [
        "age",
        "workclass",
        "education",
        "marital-status",
        "race",
        "sex",
        "native-country",
        "hours-per-week",
    ]
    assert table.sa_column.name == "occupation" and table.provider is not None


# -- the range COUNT workload (spec 3.10) -------------------------------------------------------
def small_table(n: int, sizes: tuple[int, ...], seed: int) -> Table:
    rng = np.random.default_rng(seed)
    cols: dict[str, dict[str, str]] = {}
    data = {}
    for j, s in enumerate(sizes):
        data[f"q{j}"] = rng.integers(0, s, n)
        cols[f"q{j}"] = {"role": "quasi", "kind": "numeric"}
    data["s"] = rng.integers(0, 3, n).astype(str)
    cols["s"] = {"role": "sensitive", "kind": "categorical"}
    return Table.encode(pd.DataFrame(data), Schema.from_dict({"columns": cols}))


def brute_counts(table: Table, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.array(
        [
            int(np.all((table.qi >= lo[i]) & (table.qi <= hi[i]), axis=1).sum())
            for i in range(len(lo))
        ]
    )


def test_box_sums_by_hand() -> None:
    box_lo, box_hi, mass = np.array([[0, 0]]), np.array([[3, 1]]), np.array([8.0])
    q_lo, q_hi = np.array([[0, 0], [0, 1]]), np.array([[1, 1], [1, 1]])
    used = np.array([[True, False], [True, True]])
    # 8 * 2/4 = 4; 8 * 2/4 * 1/2 = 2
    assert box_sums(box_lo, box_hi, mass, q_lo, q_hi, used).tolist() == [4.0, 2.0]


def test_workload_properties_on_a_table() -> None:
    table = small_table(300, (10, 6, 8, 5, 7, 4), seed=1)
    w = draw_range_counts(table, 400, seed=2)
    assert w.n_queries == 400
    assert set(np.unique(w.qd)) <= {2, 3} and set(np.unique(w.qd)) == {2, 3}  # [2, q/2]
    sizes = np.array(w.sizes)
    assert (w.lo >= 0).all() and (w.lo <= w.hi).all() and (w.hi < sizes).all()
    # an unused column spans its whole domain
    assert (w.lo[~w.used] == 0).all()
    assert np.array_equal(w.hi[~w.used], np.broadcast_to(sizes - 1, w.hi.shape)[~w.used])
    assert (w.actual > 0).all()
    assert np.array_equal(w.actual, brute_counts(table, w.lo, w.hi))
    # seeded: the same seed draws the same workload
    again = draw_range_counts(table, 400, seed=2)
    assert np.array_equal(again.lo, w.lo) and np.array_equal(again.used, w.used)


def test_act_zero_queries_are_redrawn() -> None:
    # values only at the two ends of wide domains: many random boxes hold no row
    df = pd.DataFrame(
        {
            "a": np.r_[np.zeros(20, int), np.full(20, 99)],
            "b": np.r_[np.zeros(20, int), np.full(20, 99)],
            "c": np.r_[np.full(20, 99), np.zeros(20, int)],
            "d": np.r_[np.full(20, 99), np.zeros(20, int)],
            "s": ["x", "y"] * 20,
        }
    )
    cols = {c: {"role": "quasi", "kind": "categorical"} for c in "abcd"}
    cols["s"] = {"role": "sensitive", "kind": "categorical"}
    table = Table.encode(df.astype(str), Schema.from_dict({"columns": cols}))
    w = draw_range_counts(table, 300, seed=0)
    assert w.drawn > w.n_queries  # some were discarded
    assert (w.actual > 0).all()
    assert np.array_equal(w.actual, brute_counts(table, w.lo, w.hi))


def test_estimate_on_singletons_is_the_true_count_and_one_group_is_uniform() -> None:
    table = small_table(200, (9, 5, 7, 4), seed=3)
    w = draw_range_counts(table, 200, seed=4)
    singles = Release(table, Partition(np.arange(table.n, dtype=np.int32)))
    err = range_count_error(singles, w)
    assert np.allclose(err.estimates, w.actual) and err.mean == pytest.approx(0.0, abs=1e-12)
    # one group: its box is the table's code range on every QI; uniform spread by hand
    one = Release(table, Partition.single(table.n))
    est = range_count_estimates(one, w)
    lo, hi = table.qi.min(axis=0), table.qi.max(axis=0)
    width = (hi - lo + 1).astype(float)
    ov = (np.minimum(hi, w.hi) - np.maximum(lo, w.lo) + 1).clip(min=0)
    expected = table.n * np.prod(np.where(w.used, ov / width, 1.0), axis=1)
    assert np.allclose(est, expected)


def test_workload_parameter_errors() -> None:
    table = small_table(50, (4, 4, 4), seed=0)  # q = 3: floor(q/2) = 1 < 2
    with pytest.raises(ParameterError):
        draw_range_counts(table, 10, seed=0)
    assert draw_range_counts(table, 10, seed=0, qd_min=1).qd.max() == 1
    with pytest.raises(ParameterError):
        draw_range_counts(table, 0, seed=0, qd_min=1)


@settings(max_examples=examples(25), deadline=None)
@given(
    n=st.integers(1, 60),
    sizes=st.lists(st.integers(1, 6), min_size=2, max_size=5),
    seed=st.integers(0, 10_000),
    groups=st.integers(1, 8),
)
def test_counts_and_estimates_match_brute_force(
    n: int, sizes: list[int], seed: int, groups: int
) -> None:
    table = small_table(n, tuple(sizes), seed)
    rng = np.random.default_rng(seed)
    d = len(sizes)
    used = rng.random((30, d)) < 0.6
    a, b = (rng.random((2, 30, d)) * np.array([c.size for c in table.qi_columns])).astype(int)
    lo, hi = np.where(used, np.minimum(a, b), 0), np.where(used, np.maximum(a, b), 0)
    full = np.array([c.size for c in table.qi_columns]) - 1
    hi = np.where(used, hi, full)
    assert np.array_equal(true_counts(table, lo, hi, used), brute_counts(table, lo, hi))
    # any partition: the estimate is the per-group uniform-spread sum, by a loop over groups
    part = Partition.from_labels(rng.integers(0, groups, n))
    rel = Release(table, part)
    g_lo = np.array([table.qi[part.group == g].min(axis=0) for g in range(part.n_groups)])
    g_hi = np.array([table.qi[part.group == g].max(axis=0) for g in range(part.n_groups)])
    expect = np.zeros(30)
    for g in range(part.n_groups):
        ov = (np.minimum(g_hi[g], hi) - np.maximum(g_lo[g], lo) + 1).clip(min=0)
        frac = np.where(used, ov / (g_hi[g] - g_lo[g] + 1), 1.0)
        expect += part.sizes[g] * np.prod(frac, axis=1)
    act = brute_counts(table, lo, hi)
    workload = RangeCountWorkload(lo, hi, used, act, 30, tuple(c.size for c in table.qi_columns))
    assert np.allclose(range_count_estimates(rel, workload), expect)


def test_provider_named_share_by_hand() -> None:
    """Two providers on one QI (codes 0-5): P0 holds 0, 1, 2 and P1 holds 3, 4, 5 and 1. A
    release of groups {0, 1, 2} (box 0-2: P0 has 3 records inside, P1 one) and {3, 4, 5, 1'}
    (box 1-5: P0 has 2 inside, P1 4 = the group's size, so only P1 could have supplied it).
    Named: group 0 -> P0 (3 rows right), group 1 -> P1 (4 rows right): 7 of 7."""
    from types import SimpleNamespace

    from kerckhoffs.experiments.paper_003_mprivacy import provider_named_share

    qi = np.array([[0], [1], [2], [3], [4], [5], [1]])
    provider = np.array([0, 0, 0, 1, 1, 1, 1])
    group = np.array([0, 0, 0, 1, 1, 1, 1])
    release = SimpleNamespace(
        table=SimpleNamespace(qi=qi),
        partition=SimpleNamespace(group=group),
        group_bounds=lambda: (np.array([[0], [1]]), np.array([[2], [5]])),
    )
    assert provider_named_share(release, provider, 2) == 1.0
    # the same boxes, each group now mixing the providers (rows 1 and 6 swap providers): the
    # outsider still names P0 for group 0 (2 of 3 right) and P1 for group 1 (3 of 4 right)
    mixed = np.array([0, 1, 0, 1, 1, 1, 0])
    assert provider_named_share(release, mixed, 2) == 5 / 7


def test_e7_l_sweep_spans_provider_assignments() -> None:
    """E7's l sweep measures every l on each of several provider assignments (so the l effect
    can be read against the spread between assignments); the k sweep stays on one."""
    e7 = next(e for e in all_experiments() if e.name == "mprivacy-e7-fig12")
    l_points = [p for p in e7.grid if p["vary"] == "l"]
    assert {(p["l"], p["assignment"]) for p in l_points} == {
        (v, a) for v in p3.E7_L for a in p3.E7_L_ASSIGNMENTS
    }
    assert len(p3.E7_L_ASSIGNMENTS) >= 5
    assert all("assignment" not in p for p in e7.grid if p["vary"] == "k")


def test_assignment_draws_the_providers_in_place_of_the_seed(tmp_path: Path) -> None:
    """A point's ``assignment`` is the seed of its provider draw: {seed 0, assignment 1}
    measures what {seed 1} measures (fresh contexts, so no cached run is shared)."""

    def fresh() -> Context:
        ctx = Context(tmp_path)
        ctx._cache["p003:adult-frame"] = synthetic_adult(600)
        return ctx

    base = {"rows": 600, "k": 5, "l": 2, "m": 1}
    ctx_a, ctx_b = fresh(), fresh()
    by_assignment = p3.measure_anonymize({**base, "seed": 0, "assignment": 1}, ctx_a)
    by_seed = p3.measure_anonymize({**base, "seed": 1}, ctx_b)
    drop = ("seconds",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in by_assignment] == [
        {k: v for k, v in r.items() if k not in drop} for r in by_seed
    ]
    t0 = p3.provider_table(ctx_a, "adult", 600, 0).provider
    t1 = p3.provider_table(ctx_a, "adult", 600, 1).provider
    assert t0 is not None and t1 is not None and not np.array_equal(t0, t1)


def test_verification_figures_draw_seconds_then_calls() -> None:
    """Figs. 6-8 plot seconds first (the paper's axis) and oracle calls after; Fig. 8 adds the
    paper's runtime-against-fitness panel and the fitness line (ours fitted, the paper's)."""
    exps = {e.name: e for e in all_experiments()}
    for name in ("mprivacy-e1-fig6", "mprivacy-e2-fig7", "mprivacy-e3-fig8"):
        plot = exps[name].plot
        assert plot.y == "seconds" and plot.logy
        assert "calls" in [extra.y for extra in plot.extra]
        assert "adaptive" in dict(plot.labels)
    fig8 = exps["mprivacy-e3-fig8"].plot
    assert [(e.x, e.y) for e in fig8.extra] == [
        ("avg_fitness", "seconds"),
        ("records_per_provider", "calls"),
        ("records_per_provider", "avg_fitness"),
    ]
    fitness = fig8.extra[-1]
    assert fitness.fit and fitness.lines == (("paper: 0.04x + 0.33 (R² = 0.97)", 0.04, 0.33),)


def test_fit_and_reference_lines_by_hand() -> None:
    """The least-squares line of a panel, on points worked by hand: (0, 0), (1, 1), (2, 0),
    (3, 1) have mean x 1.5 and mean y 0.5, Sxy = 1 and Sxx = 5, so slope 0.2 and intercept
    0.2; the residuals -0.2, 0.6, -0.6, 0.2 leave 0.8 of the total 1.0, R² = 0.2."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kerckhoffs.experiments.base import Plot
    from kerckhoffs.experiments.runner import _straight_lines

    df = pd.DataFrame({"x": [0, 1, 2, 3], "y": [0.0, 1.0, 0.0, 1.0]})
    spec = Plot(x="x", y="y", xlabel="x", ylabel="y", fit=True, lines=(("ref", 1.0, 0.0),))
    fig, ax = plt.subplots()
    try:
        _straight_lines(ax, df, spec)
        labels = ax.get_legend_handles_labels()[1]
        ref = next(line for line in ax.get_lines() if line.get_label() == "ref")
        assert np.allclose(ref.get_ydata(), ref.get_xdata())  # y = 1 x + 0 over x's range
        assert min(ref.get_xdata()) == 0 and max(ref.get_xdata()) == 3
    finally:
        plt.close(fig)
    assert labels == ["ref", "least squares: 0.200x + 0.20 (R² = 0.20)"]
    # without fit or lines nothing is drawn (every other figure)
    fig, ax = plt.subplots()
    try:
        _straight_lines(ax, df, Plot(x="x", y="y", xlabel="x", ylabel="y"))
        assert ax.get_lines() == []
    finally:
        plt.close(fig)


def _toy_release(qi: np.ndarray, sa: np.ndarray, group: np.ndarray, lo: list, hi: list):  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    return SimpleNamespace(
        table=SimpleNamespace(qi=qi, sa=sa, n_sa=int(sa.max()) + 1),
        partition=SimpleNamespace(group=group),
        group_bounds=lambda: (np.array(lo), np.array(hi)),
    )


def test_provider_named_share_ml_by_hand() -> None:
    """The maximum-likelihood outsider, worked by hand. One QI (codes 0-5), SA a = 0, b = 1.
    P0 holds QIs 0, 1, 2 with a, a, b (n = 3); P1 holds 3, 4, 5, 1 with b, b, a, b (n = 4).
    Group 0 (box 0-2, SA a, a, b): inside it P1 has no a, so two rows are impossible for it:
    P0. Group 1 (box 1-5, SA b, b, a, b): P0 has one a and one b inside (n = 3), P1 one a and
    three b (n = 4); both could supply every row, log-likelihoods 4 log(1/3) = -4.39 and
    3 log(3/4) + log(1/4) = -2.25: P1. Every row named right."""
    qi = np.array([[0], [1], [2], [3], [4], [5], [1]])
    sa = np.array([0, 0, 1, 1, 1, 0, 1])
    provider = np.array([0, 0, 0, 1, 1, 1, 1])
    group = np.array([0, 0, 0, 1, 1, 1, 1])
    release = _toy_release(qi, sa, group, [[0], [1]], [[2], [5]])
    assert p3.provider_named_share_ml(release, provider, 2) == 1.0


def test_sensitive_values_name_what_the_qis_cannot() -> None:
    """Two providers with the same QIs (all 0) but different SA values (P0: a, a; P1: b, b),
    one group each. The QI-only outsider sees two providers that fit both boxes equally and
    names P0 for both (2 of 4 rows right); the likelihood outsider reads the SA values and
    names each group's provider (4 of 4)."""
    qi = np.zeros((4, 1), dtype=np.int64)
    sa = np.array([0, 0, 1, 1])
    provider = np.array([0, 0, 1, 1])
    group = np.array([0, 0, 1, 1])
    release = _toy_release(qi, sa, group, [[0], [0]], [[0], [0]])
    assert p3.provider_named_share(release, provider, 2) == 0.5
    assert p3.provider_named_share_ml(release, provider, 2) == 1.0


def test_fig11_is_log_log_and_fig9_runtime_log() -> None:
    """Paper 003 draws Fig. 11 on log-log axes and Fig. 9's runtime on a log axis."""
    exps = {e.name: e for e in all_experiments()}
    fig11 = exps["mprivacy-e6-fig11"].plot
    assert fig11.logx and fig11.logy
    fig9 = exps["mprivacy-e4-fig9"].plot
    assert fig9.logy_panels == ("runtime",) and not fig9.logy and not fig9.logx
