"""Paper 004's DP alternative (experiments X1-X4, issue 14 item 7): registered; each measure
runs on a tiny point (the demo table standing in for Adult and the Census stand-in); the
exact semantic numbers of X3 match hand-derived bounds; the ledger's composed epsilon is
hand-checked. DP noise cannot be seeded (OpenDP), so no test reads an exact noisy value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kerckhoffs.experiments import Context, all_experiments, get_experiment
from kerckhoffs.experiments import paper_004_composition as p004
from kerckhoffs.experiments import paper_004_dp as dp

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NAMES = ["dp-x1-breach", "dp-x2-utility", "dp-x3-semantic", "dp-x4-budget"]
DEMO_LEVELS = {"age": 4, "sex": 1, "zip": 1, "nationality": 2}
"""The demo table's public domain: 13 zip areas x 13 diseases (age, sex, nationality roots)."""


def test_registered() -> None:
    mine = sorted(e.name for e in all_experiments() if e.name.startswith("dp-x"))
    assert mine == NAMES
    for name in NAMES:
        exp = get_experiment(name)
        assert exp.paper == "004" and exp.grid and exp.claim and exp.notes
    x1 = get_experiment("dp-x1-breach").grid
    assert sorted({p["epsilon"] for p in x1}) == [0.1, 0.5, 1, 2, 4]
    # every DP point is measured in several independent runs (OpenDP's noise is not seeded)
    assert sorted(p["run"] for p in x1 if p["epsilon"] == 1) == list(range(dp.X1_RUNS))
    assert dp.X1_RUNS >= 5 and dp.X4_RUNS >= 5


@pytest.fixture
def demo_ctx(monkeypatch: pytest.MonkeyPatch) -> Context:
    """The 2000-row demo table as both datasets (overlap 300), with the demo's public
    levels as every DP cell domain."""
    monkeypatch.setattr(p004, "OVERLAP", 300)
    monkeypatch.setattr(dp, "DOMAINS", {"coarse": DEMO_LEVELS})
    monkeypatch.setattr(dp, "CENSUS_LEVELS", DEMO_LEVELS)
    ctx = Context(DATA)
    demo = ctx.dataset("demo")
    for key in ("p004:adult", "p004:census:occupation", "p004dp:table:adult"):
        ctx._cache[key] = demo
    ctx._cache["p004dp:table:census"] = demo
    return ctx


def test_x1_breach_rows(demo_ctx: Context) -> None:
    rows = dp.measure_x1({"epsilon": 1.0, "seed": 0}, demo_ctx)
    by = {r["series"]: r for r in rows}
    assert len(rows) == 4
    k = p004.attack_metrics(demo_ctx, "adult", ("mondrian", "mondrian"), {"k": 5}, 0)
    mondrian = next(r for s, r in by.items() if s.startswith("Mondrian"))
    assert mondrian["breach_pct"] == k["pvp100"] and mondrian["targets"] == 300
    dp_rows = [r for s, r in by.items() if s.startswith("DP")]
    for r in dp_rows:
        assert r["cells"] == 13 * 13 and r["targets"] == 300
        assert 0 <= r["correct_pct"] <= r["perfect_pct"] <= 100
    assert {r["breach_pct"] for r in dp_rows} == {
        dp_rows[0]["correct_pct"],
        dp_rows[0]["perfect_pct"],
    }


def test_x2_query_error_rows(demo_ctx: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dp, "X2_QUERIES", 200)
    d = dp.measure_x2({"scheme": "dp", "param": 1.0, "seed": 0}, demo_ctx)
    m5 = dp.measure_x2({"scheme": "mondrian", "param": 5, "seed": 0}, demo_ctx)
    m50 = dp.measure_x2({"scheme": "mondrian", "param": 50, "seed": 0}, demo_ctx)
    assert len(d) == 1 and d[0]["mean_error"] >= 0 and np.isfinite(d[0]["mean_error"])
    assert m5[0]["groups"] > m50[0]["groups"]  # larger k: fewer, larger groups
    with pytest.raises(Exception, match="unknown scheme"):
        dp.measure_x2({"scheme": "nope", "param": 1, "seed": 0}, demo_ctx)


def test_x3_hand_values(demo_ctx: Context) -> None:
    # e^eps = 3: Proposition 14 gives 3 - 1 = 2, tanh(ln 3) = (9 - 1)/(9 + 1) = 4/5
    rows = dp.measure_x3({"mechanism": "randomized response", "exp_eps": "3", "seed": 0}, demo_ctx)
    val = {r["quantity"]: r["value"] for r in rows}
    assert val["Proposition 14 bound e^eps-1"] == 2.0
    assert val["tanh(eps) bound (derived)"] == pytest.approx(0.8)
    assert val["worst SD, uniform prior"] <= val["worst SD over priors"] <= 0.8
    assert all(r["within_bound"] for r in rows)
    # Theorem 15 at e^eps = 5, delta = 1/100: 125 - 1 + 2 * 0.1 = 124.2
    rows = dp.measure_x3({"mechanism": dp.VERBATIM_PANEL, "exp_eps": "5", "seed": 0}, demo_ctx)
    val = {r["quantity"]: r["value"] for r in rows}
    assert val["Theorem 15 bound e^(3eps)-1+2sqrt(delta)"] == pytest.approx(124.2)
    # publishing the database verbatim: some transcript pins everyone down (SD 1)
    assert val["worst SD over priors"] == 1.0


def test_composed_epsilon_by_hand() -> None:
    spent = dp.composed_epsilon([np.array([0, 1, 5]), np.array([1, 2, 5])], 0.5)
    assert spent.to_dict() == {"0": 0.5, "1": 1.0, "5": 1.0, "2": 0.5}


def test_x4_budget_rows(demo_ctx: Context) -> None:
    rows = dp.measure_x4({"k": 5, "seed": 0}, demo_ctx)
    eps = {(r["n_rel"], r["series"]): r["value"] for r in rows if r["metric"].startswith("(b)")}
    for n in (2, 3, 4):
        assert eps[(n, "DP, overlap (in every release)")] == n * dp.X4_EPSILON
        assert eps[(n, "DP, others")] == dp.X4_EPSILON
    breach = [r["value"] for r in rows if r["series"] == "Mondrian k = 5"]
    assert breach == sorted(breach)  # nested releases: the breach can only grow (spec P4)


def test_theorem15_check_can_fail() -> None:
    """Theorem 15 at delta = 1/10,000, e^eps = 5/4: eps' = (5/4)^3 - 1 + 2/100 = 0.973125;
    delta' = n (1/100 + 2/10,000 / (ln(5/4) 5/4)) = 0.021434 (n = 2), 0.032151 (n = 3). Only
    verbatim transcripts have an SD above eps' (RR's are at most 0.056): the SD is 1 for every
    database holding a 1 (3 of 4 for n = 2, 7 of 8 for n = 3) and 1/2 for all zeros. So the
    bad mass is 3/4 delta, 7/8 delta, and 3/4 of 1/10 for the control, which fails."""
    rows = dp.measure_theorem15(dp.Fraction(5, 4))
    val = {r["quantity"]: r for r in rows}
    assert val["Theorem 15 eps'"]["value"] == pytest.approx(0.973125)
    assert val["Theorem 15 delta' (n = 2)"]["value"] == pytest.approx(0.021434, abs=1e-6)
    assert val["Theorem 15 delta' (n = 3)"]["value"] == pytest.approx(0.032151, abs=1e-6)
    bad = {q: r for q, r in val.items() if q.startswith("P(")}
    assert sorted((r["bad_mass_exact"], r["within_bound"], r["control"]) for r in bad.values()) == [
        ("3/40", False, True),
        ("3/40000", True, False),
        ("7/80000", True, False),
    ]
    # at e^eps = 21/20, eps' = 0.177 < 1/2: the all-zero verbatim transcript counts too
    small = {r["quantity"]: r for r in dp.measure_theorem15(dp.Fraction(21, 20))}
    assert small["Theorem 15 eps'"]["value"] == pytest.approx(1.05**3 - 1 + 0.02)
    got = sorted(r["bad_mass_exact"] for q, r in small.items() if q.startswith("P("))
    assert got == ["1/10", "1/10000", "1/10000"]


def test_run_summary_hand_values() -> None:
    """Runs 1, 2, 3, 4: mean 2.5, sd sqrt(5/3) = 1.29099; t(3) = 3.182, so the mean's 95 %
    interval is 2.5 +- 3.182 * 1.29099 / 2 = 2.5 +- 2.05397 and one run's is
    2.5 +- 3.182 * 1.29099 * sqrt(5/4) = 2.5 +- 4.59282 (cut at 0 below)."""
    import pandas as pd

    df = pd.DataFrame({"p": ["a"] * 4 + ["b"] * 2, "v": [1.0, 2.0, 3.0, 4.0, 5.0, 5.0]})
    out = dp.run_summary(df, "v", ["p"]).set_index("p")
    a = out.loc["a"]
    assert a["runs"] == 4 and a["mean"] == 2.5 and a["sd"] == pytest.approx(1.29099, abs=1e-5)
    assert a["mean_lo"] == pytest.approx(0.44603, abs=1e-4)
    assert a["mean_hi"] == pytest.approx(4.55397, abs=1e-4)
    assert a["single_lo"] == 0.0 and a["single_hi"] == pytest.approx(7.09282, abs=1e-4)
    assert (a["min"], a["max"]) == (1.0, 4.0)
    b = out.loc["b"]  # equal runs: every interval is the point itself
    assert (b["mean_lo"], b["mean_hi"], b["single_lo"], b["single_hi"]) == (5.0, 5.0, 5.0, 5.0)


def test_dp_location_does_not_depend_on_noise(demo_ctx: Context) -> None:
    """dp_attack reuses one layout's target locations across runs: two noise draws of the
    same histograms locate every target in the same cells."""
    from kerckhoffs.attacks.composition import OverlappingReleases
    from kerckhoffs.attacks.locate import locate_all

    subs, common = p004.subsets_of(demo_ctx, "adult", 2, 0)
    table = dp.dp_table(demo_ctx, "adult")
    found = []
    for eps in (0.1, 4.0):
        rels = dp.dp_releases(demo_ctx, "adult", eps, DEMO_LEVELS, 0, 2, 2)
        pop = OverlappingReleases(table, list(rels), list(subs[:2]), common).population()
        found.append(locate_all(rels, pop, table.schema))
    assert [r.counts is not None for r in rels] == [True, True]
    for a, b in zip(*found, strict=True):
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.candidates, b.candidates)
    # and the cached locations give the same breach as locating afresh
    rels = dp.dp_releases(demo_ctx, "adult", 1.0, DEMO_LEVELS, 0, 2, 2)
    fresh = dp.dp_attack(demo_ctx, "adult", rels, 0, 2)
    dp.dp_attack(
        demo_ctx,
        "adult",
        dp.dp_releases(demo_ctx, "adult", 1.0, DEMO_LEVELS, 0, 2, 2),
        0,
        2,
        layout="demo",
    )
    assert dp.dp_attack(demo_ctx, "adult", rels, 0, 2, layout="demo") == fresh
