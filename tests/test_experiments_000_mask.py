"""Paper 000's MASK-family experiments (Figs. 6-7, Table 7; spec asap.md 4.3): registration,
the helpers they share, and tiny end-to-end runs (full runs stay out of the unit suite)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import pytest

from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.attacks.composition import take_rows
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments import Context, all_experiments, get_experiment, run_experiment
from kerckhoffs.experiments import paper_000_mask as pm
from kerckhoffs.metrics import Workload
from kerckhoffs.models import KAnonymity, MConfidentiality
from kerckhoffs.release import Scheme

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NAMES = [
    "asap-fig6a",
    "asap-fig6b",
    *[f"asap-fig7{c}" for c in "abcdefghijk"],
    "asap-table7",
]
needs_adult = pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no ../shared/data/adult")


def test_every_experiment_is_registered_with_grid_claim_and_notes() -> None:
    mine = {e.name: e for e in all_experiments() if e.measure.__module__ == pm.__name__}
    assert sorted(mine) == sorted(NAMES)
    for name in NAMES:
        exp = get_experiment(name)
        assert exp.paper == "000"
        assert exp.grid and exp.claim and exp.notes
        assert exp.figure.replace(" ", "").lower().endswith(name.split("-")[1][3:])


def test_fig7_grids_fix_the_paper_defaults_and_pair_the_schemes() -> None:
    for gen, buck in zip("abcde", "fghij", strict=True):
        g, b = get_experiment(f"asap-fig7{gen}"), get_experiment(f"asap-fig7{buck}")
        assert {p["scheme"] for p in g.grid} == {"generalization"}
        assert {p["scheme"] for p in b.grid} == {"bucketization"}
        strip = [{k: v for k, v in p.items() if k != "scheme"} for p in g.grid]
        assert strip == [{k: v for k, v in p.items() if k != "scheme"} for p in b.grid]
    a = get_experiment("asap-fig7a")
    assert [p["k"] for p in a.grid] == [3, 5, 10, 20, 50, 100]
    assert all(p["m"] == 3 and p["qi"] == 8 and p["qd"] == 3 and p["sel_pct"] == 5 for p in a.grid)
    assert all(p["k"] == 50 for p in get_experiment("asap-fig7b").grid)
    assert {(p["k"], p["m"]) for p in get_experiment("asap-fig6a").grid} == {
        (k, m) for k in range(5, 9) for m in range(2, 6)
    }
    assert {p["pct"] for p in get_experiment("asap-fig6b").grid} == {10, 12.5, 15, 17.5, 20}


def test_first_qis_keeps_rows_and_codes_and_the_schema_agrees() -> None:
    ctx = Context(DATA)
    t = ctx.dataset("demo")
    sub = pm.first_qis(t, 2)
    assert sub.qi_names == t.qi_names[:2]
    assert [c.name for c in sub.schema.quasi] == t.qi_names[:2]
    assert np.array_equal(sub.qi, t.qi[:, :2]) and sub.qi.flags.f_contiguous
    assert np.array_equal(sub.sa, t.sa)
    assert pm.first_qis(t, t.d) is t
    wl = Workload.draw(sub, 50, 2, 0.1, seed=0)
    assert set(np.unique(wl.columns)) <= {0, 1}
    with pytest.raises(ParameterError):
        pm.first_qis(t, 0)


def test_stratified_resample_hits_the_share_exactly() -> None:
    ctx = Context(DATA)
    t = ctx.dataset("demo")
    t = dataclasses.replace(t, sensitive=np.arange(t.n_sa) < 3)  # a subset of 3 values
    r = pm.stratified_resample(t, 0.2, seed=1)
    assert r.n == t.n
    assert int(r.sensitive[r.sa].sum()) == round(0.2 * t.n)
    again = pm.stratified_resample(t, 0.2, seed=1)
    assert np.array_equal(r.qi, again.qi) and np.array_equal(r.sa, again.sa)
    with pytest.raises(ParameterError):
        pm.stratified_resample(t, 1.0, seed=0)


@needs_adult
def test_mask_fallback_copies_a_satisfying_group_and_stays_m_confidential() -> None:
    """Where paper 001's MASK refuses ((m-1)|V| > satisfying groups), the fallback (look-alikes
    = every satisfying group, paper 000 section 2.2) publishes an m-confidential release that
    changes only sensitive rows of violating groups, into non-sensitive values."""
    ctx = Context(DATA)
    t = pm.stratified_resample(ctx.dataset("adult"), 0.2, seed=0)
    t = take_rows(t, np.arange(4000))
    part = mondrian(t, [KAnonymity(5)]).partition
    rel, fallback = pm.mask_release(t, part, 5, 5, seed=3)
    assert fallback  # 20% sensitive, m = 5: paper 001's MASK cannot publish
    assert MConfidentiality(5).evaluate(rel.histogram()).satisfied
    changed = rel.perturbed
    assert changed.any()
    assert t.sensitive[t.sa[changed]].all() and not t.sensitive[rel.sa_published[changed]].any()
    sizes = np.bincount(part.group)
    sens = np.bincount(part.group, weights=t.sensitive[t.sa])
    violating = sens > sizes // 5
    assert violating[part.group[changed]].all()
    rel2, _ = pm.mask_release(t, part, 5, 5, seed=3)
    assert np.array_equal(rel.sa_published, rel2.sa_published)


def test_fig7k_measure_runs_end_to_end_on_the_demo_table(tmp_path: Path) -> None:
    ctx = Context(DATA)
    start = time.perf_counter()
    point = {"k": 10, "m": 2, "qi": 4, "qd": 2, "sel_pct": 10, "scheme": "bucketization"}
    rows = pm._measure_fig7k(point | {"seed": 0, "dataset": "demo", "queries": 300}, ctx)
    assert [r["algorithm"] for r in rows] == ["MASK", "MASK+", "MASK++"]
    for r in rows:
        assert np.isfinite(r["avg_error_pct"]) and r["avg_error_pct"] >= 0
        assert r["queries"] == 300
    # both schemes come from one cached release; MASK++ refines MASK+'s groups
    gen = pm.release(
        ctx, "MASK++", qi=4, k=10, m=2, seed=0, scheme="generalization", dataset="demo"
    )
    buck = pm.release(
        ctx, "MASK++", qi=4, k=10, m=2, seed=0, scheme="bucketization", dataset="demo"
    )
    assert gen.scheme == Scheme.GENERALIZATION and buck.scheme == Scheme.BUCKETIZATION
    assert buck.sa_published is gen.sa_published
    plus = pm.release(
        ctx, "MASK+", qi=4, k=10, m=2, seed=0, scheme="generalization", dataset="demo"
    )
    assert np.array_equal(plus.sa_published, gen.sa_published)
    assert gen.partition.n_groups >= plus.partition.n_groups
    assert time.perf_counter() - start < 5


def test_table7_measure_on_the_demo_table() -> None:
    ctx = Context(DATA)
    rows = pm._measure_table7(
        {"k": 10, "m": 2, "qi": 4, "seed": 0, "dataset": "demo", "repeats": 1}, ctx
    )
    assert [r["algorithm"] for r in rows] == ["MASK", "MASK++", "MASK++ (bucketization)"]
    for r in rows:
        assert r["seconds_ours"] > 0
        assert r["ratio_to_paper"] == pytest.approx(r["seconds_ours"] / r["seconds_paper"])


@needs_adult
def test_fig6a_runs_end_to_end_on_an_adult_sample(tmp_path: Path) -> None:
    """The runner on Fig. 6a's measure with a 6,000-row Adult sample and 2 MASK draws: rows
    written, counts consistent, no false positive on the real (unresampled) rows."""
    ctx = Context(DATA)
    full = ctx.dataset("adult")
    ctx._cache["dataset:adult"] = take_rows(full, np.arange(6000))
    start = time.perf_counter()
    row = pm._measure_fig6a({"k": 5, "m": 3, "seed": 0, "draws": 2}, ctx)
    assert row["draws"] == 2 and row["k_label"] == "k = 5"
    assert 0 <= row["compromised_true_mean"] <= row["compromised_mean"]
    assert row["compromised_min"] <= row["compromised_mean"] <= row["compromised_max"]
    assert row["false_positive_groups_total"] == 0
    assert row["perturbed_groups_mean"] > 0
    exp = get_experiment("asap-fig6a")
    small = dataclasses.replace(exp, grid=[{"k": 5, "m": 2, "draws": 1}])
    df = run_experiment(small, tmp_path, context=ctx)
    assert len(df) == 1 and (tmp_path / "asap-fig6a.csv").is_file()
    assert (tmp_path / "asap-fig6a.png").stat().st_size > 0
    assert time.perf_counter() - start < 5
