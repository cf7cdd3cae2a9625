"""The stochastic DP tester (issue 14 item 5; paper 004, spec ``composition.md`` 2.9, 3.8).

OpenDP cannot be seeded: the audits are statistical. An honest release must stay within its
claimed epsilon of 1 (the tester's false-alarm rate is alpha = 1e-3 per run; measured over 25
runs each: Laplace bounds 0.66 +- 0.07, max 0.77; geometric 0.79 +- 0.06, max 0.91). The
broken mechanism (scale 1/eps, the add/remove sensitivity, on substitution neighbours: really
2 eps) must be caught (measured: Laplace, 3000 samples per side, 1.39 +- 0.05, min 1.32;
geometric, 4000, 1.73 +- 0.06, min 1.62; 25/25 caught each).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.dp.counts import dp_histogram
from kerckhoffs.dp.mechanisms import Mechanism, Neighbours, NoiseSpec, count_measurement
from kerckhoffs.dp.tester import (
    audit_histogram,
    clopper_pearson,
    epsilon_lower_bound,
    neighbouring_tables,
    sample_histograms,
    sample_releases,
)
from kerckhoffs.errors import ParameterError

SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy([["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]], "zip")
DISEASE = Hierarchy([["Flu", "*"], ["Cold", "*"]], "disease")
SCHEMA = Schema(
    (
        Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DISEASE),
    )
)
LEVELS = "zip:1"
"""Cells sex x {10*, 20*}: four cells, domain order M|10*, M|20*, F|10*, F|20*."""


def people() -> pd.DataFrame:
    """40 people: (M, 100) x 8, (M, 101) x 4, (M, 200) x 10, (F, 100) x 6, (F, 200) x 12;
    cell counts M|10* 12, M|20* 10, F|10* 6, F|20* 12 (hand-counted)."""
    groups = [("M", "100", 8), ("M", "101", 4), ("M", "200", 10), ("F", "100", 6), ("F", "200", 12)]
    rows = [(s, z) for s, z, k in groups for _ in range(k)]
    df = pd.DataFrame(rows, columns=["sex", "zip"])
    df["disease"] = np.where(np.arange(len(df)) % 3 == 0, "Cold", "Flu")
    return df


TRUE_COUNTS = np.array([12, 10, 6, 12])
ROW_M200 = 12
"""Position of the first (M, 200) person: substituting F moves one count from M|20* (10 -> 9)
to F|20* (12 -> 13)."""


def substitution_pair() -> tuple[Any, Any]:
    return neighbouring_tables(people(), SCHEMA, ROW_M200, {"sex": "F"})


def wrong_sensitivity(
    cells: int, epsilon: float, mechanism: Mechanism, neighbours: Neighbours, delta: float = 0.0
) -> tuple[Any, NoiseSpec]:
    """The deliberately broken mechanism: the add/remove sensitivity 1 (scale 1/eps) used
    whatever the neighbour notion; OpenDP's map then still says eps."""
    return count_measurement(cells, epsilon, mechanism, Neighbours.ADD_REMOVE, delta)


# -- Clopper-Pearson ---------------------------------------------------------------------------
def test_clopper_pearson_closed_forms() -> None:
    """k = 0: upper = 1 - a^(1/n); k = n: lower = a^(1/n); 50/100 at 95% two-sided is the
    textbook interval [0.3983, 0.6017]."""
    lo, hi = clopper_pearson(0, 100, 0.025)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 100), abs=1e-12)
    lo, hi = clopper_pearson(100, 100, 0.025)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 100), abs=1e-12)
    lo, hi = clopper_pearson(50, 100, 0.025)
    assert lo == pytest.approx(0.3983, abs=5e-5) and hi == pytest.approx(0.6017, abs=5e-5)


def _tail_brute(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= k) by exact rational summation."""
    q = Fraction(p)
    return float(sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k, n + 1)))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 60),
    frac=st.floats(0, 1),
    level=st.sampled_from([0.4, 0.05, 1e-3, 1e-6]),
)
def test_clopper_pearson_solves_the_binomial_tails(n: int, frac: float, level: float) -> None:
    k = round(frac * n)
    lo, hi = clopper_pearson(k, n, level)
    assert 0 <= lo <= k / n <= hi <= 1
    if k > 0:
        assert _tail_brute(k, n, lo) == pytest.approx(level, rel=1e-6)
    if k < n:
        assert 1 - _tail_brute(k + 1, n, hi) == pytest.approx(level, rel=1e-6)


def test_clopper_pearson_refuses_impossible_counts() -> None:
    with pytest.raises(ParameterError):
        clopper_pearson(5, 4, 0.01)
    with pytest.raises(ParameterError):
        clopper_pearson(1, 4, 0.0)


# -- the estimator on hand-made samples --------------------------------------------------------
def test_identical_outputs_give_no_evidence() -> None:
    x = np.zeros((200, 3))
    assert epsilon_lower_bound(x, x.copy()).lower_bound == 0.0


def test_disjoint_outputs_give_a_large_bound() -> None:
    """M(D) always 1, M(D') always 0: no epsilon covers it; with 160 test samples per side
    the bound is ln(lower(160/160) / upper(0/160)) at 5e-4 each, by the closed forms
    ln(r / (1 - r)) with r = 5e-4^(1/160): about 3.02."""
    x, y = np.ones((200, 2)), np.zeros((200, 2))
    b = epsilon_lower_bound(x, y)
    r = 5e-4 ** (1 / 160)
    assert b.lower_bound == pytest.approx(math.log(r / (1 - r)), rel=1e-9)
    assert b.lower_bound > 3 and b.point == math.inf
    assert (b.hits_d, b.n_d, b.hits_d2, b.n_d2) == (160, 160, 0, 160)


def test_randomized_response_bound_stays_below_ln3() -> None:
    """One bit kept with probability 3/4 (epsilon = ln 3, spec 4.3): numpy draws with a fixed
    seed; the bound is below ln 3 and the plain ratio estimate near it."""
    g = np.random.default_rng(7)
    x = (g.random(20_000) < 0.75).astype(float)  # true bit 1
    y = (g.random(20_000) < 0.25).astype(float)  # true bit 0
    b = epsilon_lower_bound(x, y)
    assert 0.9 < b.lower_bound <= math.log(3)
    assert abs(b.point - math.log(3)) < 0.1


def test_estimator_refuses_bad_shapes() -> None:
    with pytest.raises(ParameterError):
        epsilon_lower_bound(np.zeros((10, 2)), np.zeros((10, 3)))
    with pytest.raises(ParameterError):
        epsilon_lower_bound(np.zeros((3, 1)), np.zeros((3, 1)))


# -- neighbouring tables -----------------------------------------------------------------------
def test_substitution_neighbour_changes_one_record() -> None:
    d, d2 = substitution_pair()
    a, b = d.to_frame(), d2.to_frame()
    assert len(a) == len(b) == 40
    differ = np.flatnonzero((a.astype(str) != b.astype(str)).any(axis=1).to_numpy())
    assert differ.tolist() == [ROW_M200]
    assert (a.loc[ROW_M200, "sex"], b.loc[ROW_M200, "sex"]) == ("M", "F")


def test_add_remove_neighbour_drops_the_row() -> None:
    d, d2 = neighbouring_tables(people(), SCHEMA, 0, neighbours="add-remove")
    assert (d.n, d2.n) == (40, 39)
    with pytest.raises(ParameterError):
        neighbouring_tables(people(), SCHEMA, 0, {"sex": "F"}, neighbours="add-remove")
    with pytest.raises(ParameterError):
        neighbouring_tables(people(), SCHEMA, 0)  # substitution needs a change
    with pytest.raises(ParameterError):
        neighbouring_tables(people(), SCHEMA, 40, {"sex": "F"})


def test_audit_refuses_tables_that_are_not_neighbours() -> None:
    df = people()
    d, _ = neighbouring_tables(df, SCHEMA, 0, {"sex": "F"})
    far = df.copy()
    far.loc[[0, 1], "sex"] = "F"
    with pytest.raises(ParameterError, match="not neighbours"):
        audit_histogram(d, neighbouring_tables(far, SCHEMA, 2, {"sex": "M"})[1], 1.0)
    _, removed = neighbouring_tables(df, SCHEMA, 0, neighbours="add-remove")
    with pytest.raises(ParameterError, match="not neighbours"):
        audit_histogram(d, removed, 1.0, levels=LEVELS)  # substitution claimed


# -- the sampled pipeline ----------------------------------------------------------------------
def test_sampler_is_the_release_pipeline() -> None:
    """Same noise record as dp_histogram (scale 2 = Δ/ε under substitution, map exactly ε),
    one row per sample, one column per cell, centred on the hand-counted true counts
    (geometric noise of scale 2: variance 2α/(1-α)^2 with α = e^-1/2; 5-sigma bound, and
    clamping at 0 is negligible at counts >= 6: P(noise <= -6) < 0.05)."""
    d, _ = substitution_pair()
    x, spec, domain = sample_histograms(d, 1.0, 2000, levels=LEVELS)
    release = dp_histogram(d, 1.0, levels=LEVELS)
    assert spec == release.noise
    assert (spec.sensitivity, spec.scale, spec.privacy_map) == (2, 2.0, 1.0)
    assert x.shape == (2000, 4) and x.dtype == np.int64 and (x >= 0).all()
    assert domain.frame().astype(str).agg("|".join, axis=1).tolist() == [
        "M|10*",
        "M|20*",
        "F|10*",
        "F|20*",
    ]
    alpha = math.exp(-0.5)
    sd = math.sqrt(2 * alpha / (1 - alpha) ** 2)
    assert np.all(np.abs(x.mean(axis=0) - TRUE_COUNTS) < 5 * sd / math.sqrt(2000) + 0.05)


# -- the audits --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mechanism", "neighbours", "samples"),
    [
        ("geometric", "substitution", 4000),
        ("laplace", "substitution", 3000),
        ("geometric", "add-remove", 4000),
        ("laplace", "add-remove", 3000),
    ],
)
def test_honest_releases_stay_within_their_epsilon(
    mechanism: str, neighbours: str, samples: int
) -> None:
    if neighbours == "substitution":
        d, d2 = substitution_pair()
    else:
        d, d2 = neighbouring_tables(people(), SCHEMA, ROW_M200, neighbours=neighbours)
    audit = audit_histogram(
        d, d2, 1.0, levels=LEVELS, mechanism=mechanism, neighbours=neighbours, samples=samples
    )
    assert audit.claimed_epsilon == 1.0
    assert not audit.violated, audit.summary()
    assert audit.bound.n_d == audit.bound.n_d2 == samples - int(samples * 0.2)


@pytest.mark.parametrize(("mechanism", "samples"), [("laplace", 3000), ("geometric", 4000)])
def test_wrong_sensitivity_is_caught(mechanism: str, samples: int) -> None:
    """Scale 1/eps on substitution neighbours: really 2 eps. The tester must find it, on the
    two cells our counting changes (M|20* down, F|20* up), which no one-cell event shows."""
    d, d2 = substitution_pair()
    audit = audit_histogram(
        d, d2, 1.0, levels=LEVELS, mechanism=mechanism, samples=samples,
        measurement=wrong_sensitivity,
    )  # fmt: skip
    assert audit.claimed_epsilon == 1.0
    assert audit.violated, audit.summary()
    assert sorted(audit.cell_labels[c] for c in audit.bound.event.cells) == ["F|20*", "M|20*"]
    assert "VIOLATION" in audit.summary()


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["geometric", "laplace"])
def test_dp_histogram_itself_stays_within_epsilon(mechanism: str) -> None:
    """The release function, one call per sample (about 4 ms each): no batching involved."""
    d, d2 = substitution_pair()
    x, spec = sample_releases(d, 1.0, 1500, levels=LEVELS, mechanism=mechanism)
    y, _ = sample_releases(d2, 1.0, 1500, levels=LEVELS, mechanism=mechanism)
    bound = epsilon_lower_bound(x, y)
    assert bound.lower_bound <= spec.privacy_map
    assert bound.point > 0.5  # the event found really separates D and D'


@pytest.mark.slow
def test_wrong_sensitivity_is_caught_at_half_epsilon() -> None:
    """A smaller epsilon (0.5, broken: really 1) needs more samples: 20000 per side."""
    d, d2 = substitution_pair()
    audit = audit_histogram(
        d, d2, 0.5, levels=LEVELS, samples=20_000, measurement=wrong_sensitivity
    )
    assert audit.violated, audit.summary()
