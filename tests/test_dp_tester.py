"""The stochastic DP tester (issue 14 item 5; paper 004, spec ``composition.md`` 2.9, 3.8).

OpenDP cannot be seeded: the audits are statistical. An honest release must stay within its
claimed epsilon of 1 (the tester's false-alarm rate is alpha = 1e-3 per run; measured over 25
runs each: Laplace bounds 0.66 +- 0.07, max 0.77; geometric 0.79 +- 0.06, max 0.91). The
broken mechanism (scale 1/eps, the add/remove sensitivity, on substitution neighbours: really
2 eps) must be caught (measured: Laplace, 3000 samples per side, 1.39 +- 0.05, min 1.32;
geometric, 4000, 1.73 +- 0.06, min 1.62; 25/25 caught each).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.dp.counts import dp_histogram
from kerckhoffs.dp.marginals import dp_marginals
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    NoiseSpec,
    count_measurement,
    gaussian_measurement,
)
from kerckhoffs.dp.randomized_response import replace_threshold
from kerckhoffs.dp.select import UTILITY_SENSITIVITY, choose_levels
from kerckhoffs.dp.tester import (
    Event,
    audit_histogram,
    audit_level_selection,
    audit_marginals,
    audit_rr,
    clopper_pearson,
    epsilon_lower_bound,
    neighbouring_tables,
    sample_histograms,
    sample_level_choices,
    sample_marginals,
    sample_releases,
    sample_rr,
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


@settings(max_examples=examples(40), deadline=None)
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
        two cells our counting changes (M|20* down, F|20* up), which no one-cell event shows (the
    event found may add unchanged cells: an orthant or half-plane over three or four)."""
    d, d2 = substitution_pair()
    audit = audit_histogram(
        d, d2, 1.0, levels=LEVELS, mechanism=mechanism, samples=samples,
        measurement=wrong_sensitivity,
    )  # fmt: skip
    assert audit.claimed_epsilon == 1.0
    assert audit.violated, audit.summary()
    assert {"F|20*", "M|20*"} <= {audit.cell_labels[c] for c in audit.bound.event.cells}
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


# -- events over several cells -----------------------------------------------------------------
def test_sum_and_orthant_events_count_by_hand() -> None:
    """Half-plane ``X0 - X2 >= 1`` and orthant ``X0 >= 1, X1 <= 0, X2 >= 2`` on four
    hand-made rows (hits counted by hand: rows 0 and 3; row 1)."""
    rows = np.array([[3, 0, 1], [1, 0, 2], [0, 5, 0], [2, 1, 1]])
    half = Event((0, 2), (1, -1), (1.0,), True, "sum")
    assert half.occurs(rows).tolist() == [True, False, False, True]
    assert half.describe(["a", "b", "c"]) == "count[a] - count[c] >= 1"
    orthant = Event((0, 1, 2), (1, -1, 1), (1.0, 0.0, 2.0), True)
    assert orthant.occurs(rows).tolist() == [False, True, False, False]


def test_four_changed_cells_need_an_orthant_or_a_half_plane() -> None:
    """Four independent cells, each shifted by one unit of a Laplace of scale 1 (numpy, fixed
    seed): the true loss is 4, but any two cells show at most 2. The bound must exceed 2,
    which only an event over three or more cells can show."""
    g = np.random.default_rng(3)
    x = g.laplace(0.0, 1.0, (6000, 4)) + np.array([1, 0, 1, 0])
    y = g.laplace(0.0, 1.0, (6000, 4)) + np.array([0, 1, 0, 1])
    b = epsilon_lower_bound(x, y)
    assert b.lower_bound > 2.0, b
    assert len(b.event.cells) >= 3


# -- the Gaussian mechanism ((epsilon, delta)) -------------------------------------------------
GAUSS_EPS, GAUSS_DELTA = 3.0, 1e-2
"""Large enough for the halved scale to show against the claim 3. Honest, 4000 samples per
side: bounds 1.06-1.57 (30 runs). Half scale: at 4000 samples 2 of 150 runs stayed below 3
(2.31 and 2.54, when the 800 selection samples picked a poor event; median 3.59), so the
test was flaky; at 10000 samples 100 of 100 runs were above 3 (lowest 3.60, median 3.94;
2026-11-27). (At delta 1e-3 and epsilon 2 the half scale gave 1.96-2.44 even at 10000
samples: too close to call.)"""
GAUSS_SAMPLES = {False: 4000, True: 10_000}
"""Samples per side for the honest and the half-scale Gaussian (measured above)."""


def half_scale_gaussian(
    cells: int, epsilon: float, mechanism: Mechanism, neighbours: Neighbours, delta: float
) -> tuple[Any, NoiseSpec]:
    """The broken Gaussian: the honest release's record, but noise of half its scale (the
    true loss at the same delta is more than twice epsilon)."""
    import opendp.prelude as dp

    _, spec = gaussian_measurement(cells, epsilon, delta, neighbours)
    space = (dp.vector_domain(dp.atom_domain(T="i64"), size=cells), dp.l2_distance(T="f64"))
    return dp.m.make_gaussian(*space, scale=spec.scale / 2), spec


@pytest.mark.parametrize("broken", [False, True])
def test_gaussian_release_within_its_epsilon_delta_and_half_scale_caught(broken: bool) -> None:
    """Cells M|*, F|* (zip at its root); the substitution moves one person from M to F."""
    d, d2 = substitution_pair()
    audit = audit_histogram(
        d, d2, GAUSS_EPS, levels="zip:2", mechanism="gaussian", delta=GAUSS_DELTA,
        samples=GAUSS_SAMPLES[broken], **({"measurement": half_scale_gaussian} if broken else {}),
    )  # fmt: skip
    assert audit.claimed_delta == GAUSS_DELTA
    assert audit.claimed_epsilon == pytest.approx(GAUSS_EPS, rel=1e-9)
    assert audit.claimed_epsilon <= GAUSS_EPS
    assert audit.violated == broken, audit.summary()


# -- dp-marginals -------------------------------------------------------------------------------
MARGINALS = "sex;zip"
"""Two marginals, sex (M, F) and zip at level 1 (10*, 20*): the substitution below moves one
person from (M, 200) to (F, 100), so both marginals change, two cells each."""


def marginal_pair() -> tuple[Any, Any]:
    return neighbouring_tables(people(), SCHEMA, ROW_M200, {"sex": "F", "zip": "100"})


def test_marginal_sampler_is_the_release_pipeline() -> None:
    """Same columns, labels and per-marginal scales as dp_marginals (epsilon 2 split in two:
    scale 2 / 1 = 2 each), centred on the hand-counted marginals M 22, F 18, 10* 18, 20* 22."""
    d, _ = marginal_pair()
    x, specs, labels = sample_marginals(d, 2.0, 2000, MARGINALS, levels="zip:1")
    release = dp_marginals(d, 2.0, MARGINALS, levels="zip:1")
    assert labels == ["sex:M", "sex:F", "zip:10*", "zip:20*"]
    assert len(release.counts) == x.shape[1] == 4
    assert [p["scale"] for p in release.noise.parts] == [s.scale for s in specs] == [2.0, 2.0]
    assert math.fsum(s.privacy_map for s in specs) == release.noise.privacy_map
    alpha = math.exp(-0.5)
    sd = math.sqrt(2 * alpha / (1 - alpha) ** 2)
    assert np.all(np.abs(x.mean(axis=0) - [22, 18, 18, 22]) < 5 * sd / math.sqrt(2000) + 0.05)


def sensitivity_one_per_marginal(
    cells: int, epsilon: float, mechanism: Mechanism, neighbours: Neighbours, delta: float
) -> tuple[Any, NoiseSpec]:
    """The broken marginals release: each marginal's noise for sensitivity 1 (scale
    1/eps_j), as if a substitution changed one cell per marginal: really 2 eps."""
    return count_measurement(cells, epsilon, mechanism, Neighbours.ADD_REMOVE, delta)


@pytest.mark.parametrize("broken", [False, True])
def test_marginals_within_epsilon_and_sensitivity_one_caught(broken: bool) -> None:
    """Epsilon 2 over two marginals (measured, 5 runs of 4000 samples per side: honest
    1.06-1.59, broken 2.72-3.44 against the claim 2; the events found are orthants over all
    four changed cells)."""
    d, d2 = marginal_pair()
    audit = audit_marginals(
        d, d2, 2.0, MARGINALS, levels="zip:1", samples=4000,
        **({"measurement": sensitivity_one_per_marginal} if broken else {}),
    )  # fmt: skip
    assert audit.claimed_epsilon == pytest.approx(2.0, rel=1e-9) and audit.what == "dp-marginals"
    assert audit.violated == broken, audit.summary()


# -- levels=auto: the private choice of levels ---------------------------------------------------
SELECTION_EPS, SELECTION_FRACTION = 4.0, 0.5
"""The selection gets epsilon 2 (noisy-max scale 2 * 2 / 2 = 2); the counts the other 2 (times
1 - 1e-12: geometric scale a hair above 1, so the utility threshold is a hair above 3: a cell
counts from 4 people on)."""


def selection_pair() -> tuple[Any, Any]:
    """19 people: M|100 1, M|101 2, M|200 1, F|100 9, F|101 4, F|200 2; the M|100 person
    becomes F|200. Utilities (2 * #cells >= 3 - #cells) over the candidates (sex, zip)
    levels 00, 01, 02, 10, 11, 12, by hand: D -2 -2 2 1 0 1, D' -2 -2 0 3 2 1
    (a cell counts from 4 people: e.g. sex alone, M 4 -> 3 loses a populated cell; zip alone,
    *|200 3 -> 4 gains one)."""
    groups = [("M", "100", 1), ("M", "101", 2), ("M", "200", 1)]
    groups += [("F", "100", 9), ("F", "101", 4), ("F", "200", 2)]
    df = pd.DataFrame(
        [(s, z, "Flu") for s, z, k in groups for _ in range(k)], columns=["sex", "zip", "disease"]
    )
    return neighbouring_tables(df, SCHEMA, 0, {"sex": "F", "zip": "200"})


def monotonic_noisy_max(candidates: int, epsilon: float) -> tuple[Any, float, float]:
    """The broken selection: the utility declared monotonic (it is not: one candidate's
    score can rise while another's falls), so OpenDP uses half the scale and its map still
    says epsilon; really 2 epsilon."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (
        dp.vector_domain(dp.atom_domain(T="i64"), size=candidates),
        dp.linf_distance(T="i64", monotonic=True),
    )
    meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=UTILITY_SENSITIVITY / epsilon)
    return meas, UTILITY_SENSITIVITY / epsilon, float(meas.map(UTILITY_SENSITIVITY))


def noisy_max_probabilities(u: list[int], scale: float) -> np.ndarray:
    """P(argmax_j u_j + E_j = j) for i.i.d. exponential noise E_j of the given scale (what
    OpenDP's make_noisy_max draws under max_divergence; Gumbel is its zCDP variant): the
    integral of density_j(t) * prod_{k != j} CDF_k(t) over t, by Gauss-Legendre (200 nodes)
    on each piece between consecutive scores, where the integrand is smooth."""
    u_arr = np.asarray(u, dtype=np.float64)
    edges = np.unique(np.append(u_arr, u_arr.max() + 80 * scale))
    nodes, weights = np.polynomial.legendre.leggauss(200)
    out = np.zeros(len(u))
    for a, b in itertools.pairwise(edges):
        t = (b - a) / 2 * nodes + (a + b) / 2
        w = (b - a) / 2 * weights
        above = np.clip(t[None, :] - u_arr[:, None], 0.0, None)
        inside = t[None, :] > u_arr[:, None]
        cdf = np.where(inside, -np.expm1(-above / scale), 0.0)
        dens = np.where(inside, np.exp(-above / scale) / scale, 0.0)
        for k in range(len(u)):
            out[k] += float(np.sum(w * dens[k] * np.prod(np.delete(cdf, k, axis=0), axis=0)))
    return out


def test_noisy_max_probabilities_by_hand() -> None:
    """Two candidates, scores 0 and d, exponential noise of scale 1: P(first wins) =
    P(E1 - E2 > d) = e^-d / 2 (the difference of two exponentials is Laplace)."""
    p = noisy_max_probabilities([0, 2], 1.0)
    assert p[0] == pytest.approx(math.exp(-2) / 2, abs=1e-9)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)


def test_level_choices_follow_report_noisy_max() -> None:
    """The sampled choice frequencies match report-noisy-max with exponential noise of scale
    2 over the hand-derived utilities of D (-2 -2 2 1 0 1); 3000 draws, each frequency within
    5 binomial sd."""
    d, _ = selection_pair()
    c = sample_level_choices(d, SELECTION_EPS, 3000, selection=SELECTION_FRACTION)
    assert [(lv["sex"], lv["zip"]) for lv in c.candidates] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2),
    ]  # fmt: skip
    assert c.scale == 2.0 and c.privacy_map == pytest.approx(2.0) and c.epsilon == 2.0
    assert c.choices.shape == (3000, 6) and (c.choices.sum(axis=1) == 1).all()
    p = noisy_max_probabilities([-2, -2, 2, 1, 0, 1], 2.0)
    freq = c.choices.mean(axis=0)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 3000))


@pytest.mark.parametrize("broken", [False, True])
def test_level_selection_within_epsilon_and_monotonic_claim_caught(broken: bool) -> None:
    """Events "level vector j chosen" (expected bounds at 3200 test draws, from the exact
    probabilities of :func:`noisy_max_probabilities` at scale 2 (honest) and 1 (broken):
    about 1.4 and 2.9 against the claim 2; the true maximum log ratios are 1.68 and 3.41)."""
    d, d2 = selection_pair()
    audit = audit_level_selection(
        d, d2, SELECTION_EPS, selection=SELECTION_FRACTION, samples=4000,
        **({"measurement": monotonic_noisy_max} if broken else {}),
    )  # fmt: skip
    assert audit.claimed_epsilon == pytest.approx(2.0) and audit.what == "level selection"
    assert audit.violated == broken, audit.summary()


@pytest.mark.slow
def test_choose_levels_itself_matches_the_sampler() -> None:
    """choose_levels (what dp_histogram calls), one call per draw: its choice frequencies on
    D match report-noisy-max at scale 2 as the batched sampler's do."""
    d, _ = selection_pair()
    # the count scale dp_histogram gives it: 2 / (2 (1 - 1e-12)), a hair above 1, so the
    # threshold is a hair above 3 and a cell of 3 people does not count (as in the sampler)
    scale = count_measurement(1, 2.0 * (1 - 1e-12))[1].scale
    picks = [choose_levels(d, 2.0, count_scale=scale, max_cells=10**6)[0] for _ in range(3000)]
    keys = [(lv["sex"], lv["zip"]) for lv in picks]
    order = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    freq = np.array([keys.count(k) for k in order]) / 3000
    p = noisy_max_probabilities([-2, -2, 2, 1, 0, 1], 2.0)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 3000))


@pytest.mark.slow
def test_dp_marginals_itself_stays_within_epsilon() -> None:
    """The release function, one call per sample: no batching involved."""
    d, d2 = marginal_pair()
    x = np.stack(
        [dp_marginals(d, 2.0, MARGINALS, levels="zip:1").counts["count"] for _ in range(1500)]
    )
    y = np.stack(
        [dp_marginals(d2, 2.0, MARGINALS, levels="zip:1").counts["count"] for _ in range(1500)]
    )
    bound = epsilon_lower_bound(x, y)
    assert bound.lower_bound <= 2.0
    assert bound.point > 0.5


# -- dp-rr: randomized response -----------------------------------------------------------------
def rr_pair() -> tuple[Any, Any]:
    """Person 0 is (M, 100, Cold); D' gives them Flu (their QI cell unchanged: perturb=sa)."""
    return neighbouring_tables(people(), SCHEMA, 0, {"disease": "Flu"})


def double_epsilon_keep(epsilon: float, k: int) -> tuple[int, float, float]:
    """The broken randomized response: the keep probability computed at 2 eps, while the
    release records OpenDP's map at eps (really ln 2e-ish: 2 eps)."""
    t, keep, _ = replace_threshold(2 * epsilon, k)
    return t, keep, replace_threshold(epsilon, k)[2]


def test_rr_sampler_keeps_with_the_threshold_probability() -> None:
    """Record 0 (Cold; cells M|100|Cold, M|100|Flu) keeps its value with probability
    e/(e + 1) = 0.7311 at epsilon 1, k = 2 (hand-derived; 5 binomial sd at 3000 runs), and
    every run's count table sums to the 40 records with the QI cell totals exact (perturb=sa:
    M|100 has 8 people)."""
    d, _ = rr_pair()
    s = sample_rr(d, 1.0, 3000, row=0)
    assert s.k == 2 and s.claimed <= 1.0
    assert s.values.shape == (3000, len(s.labels)) and (s.values.sum(axis=1) == 1).all()
    p = math.e / (math.e + 1)
    kept = s.values[:, s.labels.index("M|100|Cold")].mean()
    assert abs(kept - p) < 5 * math.sqrt(p * (1 - p) / 3000)
    assert (
        s.values[:, s.labels.index("M|100|Flu")].sum()
        == 3000 - s.values[:, s.labels.index("M|100|Cold")].sum()
    )
    c = sample_rr(d, 1.0, 500, row=0, output="counts")
    assert (c.values.sum(axis=1) == 40).all()
    cell = c.values[:, c.labels.index("M|100|Cold")] + c.values[:, c.labels.index("M|100|Flu")]
    assert (cell == 8).all()


@pytest.mark.parametrize("broken", [False, True])
def test_rr_within_epsilon_and_doubled_keep_caught(broken: bool) -> None:
    """Events on the changed record's response (measured over 25 runs of 4000 per side:
    honest 0.87 +- 0.03, max 0.95; broken 1.81 +- 0.03, min 1.76, against the claim 1;
    perturb=cell below: honest 0.75 +- 0.06, max 0.82; broken 1.72 +- 0.06, min 1.59)."""
    d, d2 = rr_pair()
    audit = audit_rr(
        d, d2, 1.0, samples=4000, **({"threshold": double_epsilon_keep} if broken else {})
    )
    assert audit.what == "dp-rr" and audit.claimed_epsilon <= 1.0
    assert audit.violated == broken, audit.summary()
    assert audit.cell_labels[audit.bound.event.cells[0]].startswith("M|100|")


def test_rr_whole_cell_perturbation_caught() -> None:
    """perturb=cell over the 8 cells sex x {10*, 20*} x disease: person 0 moves from
    M|10*|Cold to F|20*|Cold; the doubled keep probability is caught."""
    d, d2 = neighbouring_tables(people(), SCHEMA, 0, {"sex": "F", "zip": "200"})
    honest = audit_rr(d, d2, 1.0, levels=LEVELS, perturb="cell", samples=4000)
    assert not honest.violated, honest.summary()
    audit = audit_rr(
        d, d2, 1.0, levels=LEVELS, perturb="cell", samples=4000, threshold=double_epsilon_keep
    )
    assert audit.violated, audit.summary()


def test_rr_audit_refuses_a_qi_change_under_perturb_sa() -> None:
    d, d2 = substitution_pair()  # sex changes: not protected by perturb=sa
    with pytest.raises(ParameterError, match="QI cell"):
        audit_rr(d, d2, 1.0, samples=100)
    with pytest.raises(ParameterError, match="exactly one"):
        audit_rr(d, d, 1.0, samples=100)
