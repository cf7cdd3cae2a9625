"""Paper 001's experiments (spec minimality.md 5.5): registration, the QID restriction, the
Adult headline numbers and each measure function end to end on tiny inputs (full runs stay
out of the unit suite)."""

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
from kerckhoffs.attacks.composition import take_rows
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.experiments import Context, all_experiments, get_experiment, run_experiment
from kerckhoffs.experiments import paper_001_minimality as p1

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
NAMES = {
    "minimality-e1-m": "Fig. 7a, 7b",
    "minimality-e1-qid": "Fig. 7c, 7d",
    "minimality-e2-fig8": "Fig. 8a-8d",
    "minimality-e2-fig9": "Fig. 9a-9d",
    "minimality-e3-fig10": "Fig. 10",
    "minimality-e4-fig11ab": "Fig. 11a, 11b",
    "minimality-e4-fig11cd": "Fig. 11c, 11d",
}


@pytest.fixture(scope="module")
def ctx() -> Context:
    return Context(SHARED)


def test_every_experiment_is_registered_with_grid_and_claim() -> None:
    mine = {e.name: e for e in all_experiments() if e.paper == "001"}
    assert set(NAMES) <= set(mine)
    for name, figure in NAMES.items():
        exp = get_experiment(name)
        assert exp.figure == figure
        assert exp.grid and exp.claim and exp.notes
        assert all(p["dataset"] == "adult" for p in exp.grid)
        keys = {tuple(sorted(p.items())) for p in exp.grid}
        assert len(keys) == len(exp.grid)  # no point twice
        assert exp.plot.y == "value" and exp.plot.series


def test_grids_cover_the_paper_parameters() -> None:
    assert {p["m"] for p in get_experiment("minimality-e1-m").grid} == {2, 4, 6, 8, 10}
    assert {p["qid"] for p in get_experiment("minimality-e1-qid").grid} == set(range(1, 9))
    for name, m in (("minimality-e2-fig8", 2), ("minimality-e2-fig9", 10)):
        grid = get_experiment(name).grid
        assert {p["m"] for p in grid} == {m} and {p["k"] for p in grid} == {2, 10, 20}
        assert 8 in {p["qid"] for p in grid}
    fig11 = get_experiment("minimality-e4-fig11ab").grid
    assert {p["m"] for p in fig11} == {2, 10} and {p["qid"] for p in fig11} == {8}


@settings(max_examples=examples(10), deadline=None)
@given(d=st.integers(1, 4))
def test_qid_table_keeps_the_first_d_quasi_identifiers(d: int) -> None:
    table = Context(SHARED).dataset("demo")
    sub = p1.qid_table(table, d)
    assert sub.qi_names == table.qi_names[:d]
    assert [c.name for c in sub.schema.quasi] == table.qi_names[:d]
    np.testing.assert_array_equal(sub.qi, table.qi[:, :d])
    assert sub.qi.flags.f_contiguous
    np.testing.assert_array_equal(sub.sa, table.sa)
    assert sub.n == table.n


def test_qid_table_rejects_bad_sizes(ctx: Context) -> None:
    table = ctx.dataset("demo")
    for d in (0, table.d + 1):
        with pytest.raises(ParameterError, match="QID size"):
            p1.qid_table(table, d)


def test_headline_check_rejects_other_data(ctx: Context) -> None:
    with pytest.raises(InputError, match="45,222"):
        p1.adult_headline(ctx.dataset("demo"))


@pytest.mark.skipif(not (SHARED / "adult").is_dir(), reason="shared Adult data not present")
def test_adult_gives_45222_rows_and_1566_sensitive_tuples(ctx: Context) -> None:
    assert p1.adult_headline(ctx.dataset("adult")) == (45_222, 1_566)


def _small_ctx(n: int = 1500) -> Context:
    """A context whose "demo" dataset is a seeded subsample of Adult (or the generated demo
    table when the shared data is absent)."""
    ctx = Context(SHARED)
    if (SHARED / "adult").is_dir():
        adult = ctx.dataset("adult")
        rows = np.sort(np.random.default_rng(0).choice(adult.n, n, replace=False))
        ctx.cached("dataset:demo", lambda: take_rows(adult, rows))
    return ctx


def test_measure_e1_end_to_end() -> None:
    ctx = _small_ctx()
    rows = p1.measure_e1({"dataset": "demo", "qid": 3, "m": 2, "seed": 0}, ctx)
    table = ctx.dataset("demo")
    assert [r["measure"] for r in rows] == [p1.E1_PROPORTION, p1.E1_CREDIBILITY, p1.E1_CREDIBILITY]
    prop, cred, bound = rows
    assert bound["value"] == 0.5
    assert prop["sensitive_tuples"] == int(table.sensitive[table.sa].sum())
    assert prop["rows"] == table.n
    assert 0.0 <= prop["value"] <= 1.0
    assert prop["value"] == pytest.approx(prop["problematic_tuples"] / prop["sensitive_tuples"])
    if prop["problematic_tuples"]:
        assert cred["value"] > 0.5  # problematic means above 1/m
    else:
        assert cred["value"] is None


def test_measure_e2_end_to_end() -> None:
    ctx = _small_ctx()
    point = {"dataset": "demo", "qid": 3, "k": 10, "m": 2, "seed": 0, "queries": 200}
    rows = p1.measure_e2(point, ctx)
    df = pd.DataFrame(rows)
    assert set(df["algorithm"]) == {p1.MCONF, p1.ALPHAK}
    assert set(df["measure"]) == {p1.E2_TIME, p1.E2_ERROR, p1.E2_LOSS, p1.E2_DISTORTION}
    ak = df[df["algorithm"] == p1.ALPHAK].set_index("measure")["value"]
    assert ak[p1.E2_DISTORTION] == 0.0  # only MASK perturbs the SA
    assert 0.0 <= ak[p1.E2_LOSS] <= 1.0 and ak[p1.E2_TIME] > 0
    mk = df[df["algorithm"] == p1.MCONF]
    if (mk["status"] == "ok").all():
        vals = mk.set_index("measure")["value"]
        assert 0.0 <= vals[p1.E2_DISTORTION] <= 1.0 and vals[p1.E2_ERROR] >= 0
        share = mk["mask_step1_share"].iloc[0]
        assert 0.0 < share <= 1.0
    else:
        assert mk["value"].isna().all() and mk["status"].str.startswith("refused").all()
    # the same point again comes from the context's caches
    again = pd.DataFrame(p1.measure_e2(point, ctx))
    pd.testing.assert_frame_equal(df, again)


@pytest.mark.skipif(not (SHARED / "adult").is_dir(), reason="shared Adult data not present")
def test_mask_refusal_is_recorded_not_raised() -> None:
    # on the Adult subsample alpha-k anonymity holds and MASK refuses; the generated stand-in
    # has too frequent a sensitive set for alpha = 0.05, so the test needs the real data
    ctx = _small_ctx()
    rows = p1.measure_two_tables(
        {"dataset": "demo", "qid": 2, "k": 10, "m": 20, "seed": 0, "queries": 100}, ctx
    )
    by_alg = {r["algorithm"]: r for r in rows}
    assert by_alg[p1.MCONF]["value"] is None
    assert "MASK needs (m-1)*|V| = 380 groups satisfying m" in by_alg[p1.MCONF]["status"]
    assert by_alg[p1.ALPHAK]["value"] >= 0 and by_alg[p1.ALPHAK]["status"] == "ok"


def test_two_tables_run_experiment_writes_csv_and_png(tmp_path: Path) -> None:
    ctx = _small_ctx()
    exp = dataclasses.replace(
        get_experiment("minimality-e4-fig11cd"),
        name="minimality-tiny",
        grid=[
            {"dataset": "demo", "qid": 3, "k": 10, "m": 2, "s": s, "queries": 150}
            for s in (0.05, 0.1)
        ],
    )
    df = run_experiment(exp, tmp_path, context=ctx)
    assert (tmp_path / "minimality-tiny.csv").is_file()
    assert (tmp_path / "minimality-tiny.png").stat().st_size > 0
    assert len(df) == 4 and set(df["s"]) == {0.05, 0.1}
    ok = df[df["status"] == "ok"]
    assert ok["value"].map(math.isfinite).all()
