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
    assert val["tanh(eps) bound (spec 2.12)"] == pytest.approx(0.8)
    assert val["worst SD, uniform prior"] <= val["worst SD over priors"] <= 0.8
    assert all(r["within_bound"] for r in rows)
    # Theorem 15 at e^eps = 5, delta = 1/100: 125 - 1 + 2 * 0.1 = 124.2
    rows = dp.measure_x3(
        {"mechanism": "randomized response + verbatim", "exp_eps": "5", "seed": 0}, demo_ctx
    )
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
