"""The other DP mechanisms of paper 004 (spec ``composition.md`` 3.8, 2.11, P13-P15): the
Gaussian mechanism for (epsilon, delta), marginals under one budget, k-ary randomized
response, and the private choice of generalization levels (report-noisy-max).

OpenDP cannot be seeded: noisy values are never compared exactly. Scales and privacy maps are
exact (read from OpenDP's measurements or derived by hand); distributions are checked
statistically with 5-sigma bounds (a false failure about once in a million runs per check).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import DPRelease, dp_histogram
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    NoiseSpec,
    add_noise,
    count_measurement,
    gaussian_measurement,
    l2_histogram_sensitivity,
)
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models import DifferentialPrivacy
from kerckhoffs.release import Release

SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy(
    [["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]],
    "zip",
)
DISEASE = Hierarchy([["Flu", "*"], ["Cold", "*"], ["HIV", "*"]], "disease")


def table(n: int = 5) -> Table:
    """``n`` people (default five, all in zip 100): most cells of the domain are empty."""
    base = pd.DataFrame(
        {
            "sex": ["M", "F", "M", "M", "F"],
            "zip": ["100", "100", "100", "100", "100"],
            "age": [30, 31, 45, 50, 52],
            "disease": ["Flu", "Flu", "Cold", "Flu", "Cold"],
        }
    )
    df = pd.concat([base] * (n // 5), ignore_index=True) if n > 5 else base
    cols = [
        Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("age", Role.QUASI, kind=Kind.NUMERIC, widths=(10, 20)),
        Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DISEASE),
    ]
    return Table.encode(df, Schema(tuple(cols)))


# -- Gaussian (spec 3.8 gaussian_mechanism; issue 14 item 2) ---------------------------------
def test_gaussian_l2_sensitivity() -> None:
    assert l2_histogram_sensitivity("substitution") == math.sqrt(2)
    assert l2_histogram_sensitivity("add-remove") == 1.0


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-6), (0.5, 1e-5), (2.0, 1e-9)])
def test_gaussian_scale_is_the_smallest_opendp_accepts(eps: float, delta: float) -> None:
    import opendp.prelude as dp

    meas, spec = gaussian_measurement(4, eps, delta)
    assert spec.mechanism == Mechanism.GAUSSIAN and spec.norm == "l2"
    assert (spec.epsilon, spec.delta, spec.sensitivity) == (eps, delta, math.sqrt(2))
    assert spec.privacy_map <= eps
    assert float(meas.map(math.sqrt(2))[0]) == spec.privacy_map
    # zCDP of the Gaussian by hand: rho = Δ2² / (2 σ²) = 1 / σ² under substitution
    assert spec.parts[0]["rho"] == pytest.approx(1 / spec.scale**2, rel=1e-9)
    # a scale 1e-6 smaller would exceed epsilon: the bisection found the smallest
    space = (dp.vector_domain(dp.atom_domain(T="i64"), size=4), dp.l2_distance(T="f64"))
    smaller = dp.c.make_fix_delta(
        dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=spec.scale * (1 - 1e-6))),
        delta,
    )
    assert float(smaller.map(math.sqrt(2))[0]) > eps
    if eps < 1:  # Dwork-Roth's classic scale is valid (and looser) for eps < 1
        assert spec.scale <= math.sqrt(2) * math.sqrt(2 * math.log(1.25 / delta)) / eps


def test_gaussian_refused_without_delta() -> None:
    with pytest.raises(ParameterError, match="needs delta > 0"):
        count_measurement(4, 1.0, "gaussian")
    with pytest.raises(ParameterError, match="needs delta > 0"):
        dp_histogram(table(), 1.0, levels="age:3", mechanism="gaussian")


def test_gaussian_noise_variance() -> None:
    n = 10_000
    meas, spec = gaussian_measurement(n, 1.0, 1e-6)
    z = add_noise(np.zeros(n, dtype=np.int64), meas, spec).astype(float)
    var = spec.scale**2  # discrete Gaussian variance is within 1e-9 of sigma² for sigma > 1
    assert abs(z.mean()) < 5 * math.sqrt(var / n)
    assert abs(z.var() - var) < 5 * math.sqrt(2 * var**2 / n)


def test_gaussian_release_records_delta_and_fails_closed(tmp_path: Path) -> None:
    r = dp_histogram(
        table(),
        1.0,
        levels="age:3",
        mechanism="gaussian",
        delta=1e-6,
        models=[DifferentialPrivacy(1.0, 1e-6)],
    )
    assert r.privacy_loss() == (r.noise.privacy_map, 1e-6)
    with pytest.raises(PrivacyCheckFailed, match="release not written"):
        r.write(tmp_path / "bad", [DifferentialPrivacy(1.0)])
    assert not (tmp_path / "bad").exists()
    r.write(tmp_path / "ok")
    d = json.loads((tmp_path / "ok" / "release.json").read_text())["dp"]
    assert (d["mechanism"], d["delta"], d["sensitivity_norm"]) == ("gaussian", 1e-6, "l2")
    assert d["privacy_map"] <= 1.0 and d["scale"] == r.noise.scale
    back = Release.from_published(tmp_path / "ok")
    assert isinstance(back, DPRelease) and back.privacy_loss() == r.privacy_loss()
    assert NoiseSpec.from_dict(d) == r.noise


# -- marginals (spec 3.8 marginals, 2.11 basic composition) ----------------------------------
def test_marginals_every_cell_exact_counts_and_composed_map() -> None:
    from kerckhoffs.dp.marginals import dp_marginals

    t = table(5)
    r = dp_marginals(t, 1.0, "sex+disease;zip", levels="zip:1", models=[DifferentialPrivacy(1)])
    c = r.counts
    assert list(c.columns) == ["marginal", "sex", "zip", "disease", "count"]
    # 2 sexes x 3 diseases, then the 2 zip prefixes (the empty 20* included), '*' elsewhere
    assert c["marginal"].tolist() == ["sex+disease"] * 6 + ["zip"] * 2
    assert c["zip"].tolist() == ["*"] * 6 + ["10*", "20*"]
    assert c.loc[6:, "sex"].tolist() == ["*", "*"] and c.loc[6:, "disease"].tolist() == ["*"] * 2
    assert c.loc[:5, ["sex", "disease"]].values.tolist() == [
        ["M", "Flu"], ["M", "Cold"], ["M", "HIV"], ["F", "Flu"], ["F", "Cold"], ["F", "HIV"],
    ]  # fmt: skip
    n = r.noise
    # two marginals, each epsilon 1/2 and Δ 2: scale 4, total sensitivity 2q = 4, map 1/2 + 1/2
    assert [p["epsilon"] for p in n.parts] == [0.5, 0.5]
    assert [p["scale"] for p in n.parts] == [4.0, 4.0] and n.scale == 4.0
    assert (n.sensitivity, n.cells, n.privacy_map) == (4, 8, 1.0)
    assert r.privacy_loss() == (1.0, 0.0)


def test_marginals_weights_and_add_remove() -> None:
    from kerckhoffs.dp.marginals import dp_marginals

    r = dp_marginals(table(), 0.9, [["sex"], ["zip"]], levels={"zip": 2}, weights="1,2",
                     neighbours="add-remove", mechanism="laplace")  # fmt: skip
    eps = [p["epsilon"] for p in r.noise.parts]
    assert eps == pytest.approx([0.3, 0.6], rel=1e-12)
    assert [p["scale"] for p in r.noise.parts] == pytest.approx([1 / 0.3, 1 / 0.6], rel=1e-12)
    assert r.noise.sensitivity == 2 and r.noise.privacy_map <= 0.9
    assert r.noise.privacy_map == pytest.approx(0.9, rel=1e-12)


def test_marginals_true_counts_statistically() -> None:
    """Noise is centred on the true marginal: 500 copies of five people, sex marginal."""
    from kerckhoffs.dp.marginals import dp_marginals

    t = table(500)
    got = np.array(
        [dp_marginals(t, 2.0, "sex", mechanism="laplace").counts["count"].to_numpy()
         for _ in range(40)]
    )  # fmt: skip
    # scale 1 (Δ 2, eps 2): per-draw sd sqrt 2, mean of 40 draws sd 0.224; clamping never bites
    assert np.abs(got.mean(axis=0) - [300, 200]).max() < 5 * math.sqrt(2 / 40) + 0.5


def test_marginals_read_back_and_refusals(tmp_path: Path) -> None:
    from kerckhoffs.dp.marginals import dp_marginals

    r = dp_marginals(table(), 1.0, "sex+disease;zip", levels="zip:1",
                     models=[DifferentialPrivacy(1)])  # fmt: skip
    r.write(tmp_path / "m")
    back = Release.from_published(tmp_path / "m")
    assert isinstance(back, DPRelease) and back.counts.equals(r.counts)
    assert back.privacy_loss() == r.privacy_loss() and back.noise == r.noise
    for bad, match in [
        ("sex+height", "no attribute 'height'"),
        ("sex;sex", "given twice"),
        ("sex+sex", "twice"),
        ("", "expected NAME"),
        ("age", "not public"),
    ]:
        with pytest.raises(ParameterError, match=match):
            dp_marginals(table(), 1.0, bad)
    with pytest.raises(ParameterError, match="in no marginal"):
        dp_marginals(table(), 1.0, "sex", levels="zip:1")
    with pytest.raises(ParameterError, match="2 given for 1"):
        dp_marginals(table(), 1.0, "sex", weights="1,2")


# -- levels=auto: the exponential mechanism / noisy max (spec 3.8) ---------------------------
def test_auto_utility_sensitivity_bruteforce() -> None:
    """Moving one record between any two cells changes u by at most 2 (module docstring)."""
    from kerckhoffs.dp.select import utility

    rng = np.random.default_rng(1)
    worst = 0
    for _ in range(300):
        c = rng.integers(0, 6, size=5)
        a, b = rng.integers(0, 5, size=2)
        if c[a] == 0:
            continue
        d = c.copy()
        d[a] -= 1
        d[b] += 1
        worst = max(worst, abs(utility(c, 3) - utility(d, 3)))
    assert worst == 2


def test_auto_picks_the_best_candidate_with_a_large_budget_and_records_both() -> None:
    # by hand, 500 rows (300 M, 200 F, all zip 100), threshold 1, an empty cell costs 1:
    # u = 2 * #populated - #cells; the path (sex, zip) from (1, 2) u 1: round 1 (0, 2) u 2
    # beats (1, 1) u 0; round 2 forced (0, 1) u 0; round 3 forced (0, 0) u -2; the stop
    # picks (0, 2); age (widths from the data) stays at its root 3
    r = dp_histogram(table(500), 200.0, levels="auto", selection=0.5)
    assert {a["name"]: a["level"] for a in r.axes} == {"sex": 0, "zip": 2, "age": 3}
    sel = r.noise.parts[0]
    counts = next(p for p in r.noise.parts if p["name"] == "counts")
    rounds = [p for p in r.noise.parts if p["name"].startswith("level selection: round")]
    assert sel["name"] == "level selection" and sel["rounds"] == 3 and len(rounds) == 3
    assert [p["chosen"] for p in rounds] == ["sex:0", "zip:1", "zip:0"]
    assert sel["threshold"] == 1 and sel["empty_cost"] == 1 and sel["levels"] == "sex:0 zip:* age:*"
    assert sel["epsilon"] == 100.0 and sel["privacy_map"] <= 100.0 and sel["sensitivity"] == 2
    assert all(p["scale"] == pytest.approx(2 * 2 / 25.0) for p in rounds)  # 75 / 3 a round
    assert r.noise.privacy_map == pytest.approx(200.0) and r.noise.privacy_map <= 200.0
    assert r.noise.privacy_map == sel["privacy_map"] + counts["privacy_map"]
    assert "scores" not in json.dumps(r.noise.to_dict())


def test_auto_is_randomized_with_a_small_budget() -> None:
    """With epsilon 0.01 for the choice the pick is near uniform over the 6 candidates."""
    picks = {
        tuple(a["level"] for a in dp_histogram(table(500), 0.02, levels="auto", selection=0.5).axes)
        for _ in range(60)
    }
    assert len(picks) >= 3  # each candidate has probability about 1/6: >= 3 distinct w.p. ~1


def test_auto_pin_and_refusals(tmp_path: Path) -> None:
    r = dp_histogram(table(), 1.0, levels="auto,sex:1", models=[DifferentialPrivacy(1)])
    assert r.axes[0]["level"] == 1
    r.write(tmp_path / "a")
    assert Release.from_published(tmp_path / "a").privacy_loss() == r.privacy_loss()
    with pytest.raises(ParameterError, match="selection"):
        dp_histogram(table(), 1.0, levels="auto", selection=1.5)
    with pytest.raises(ParameterError, match="max_cells"):
        dp_histogram(table(), 1.0, levels="auto", max_cells=0)


# -- randomized response arithmetic (spec 3.8, 4.3, P15) -------------------------------------
def test_rr_spec_vector_and_ratio() -> None:
    from kerckhoffs.dp.randomized_response import keep_probability, opendp_privacy_map

    p, q = keep_probability(math.log(3), 2)  # spec 4.3: each bit kept w.p. 3/4
    assert (p, q) == pytest.approx((0.75, 0.25), abs=1e-15)
    for eps, k in [(0.5, 3), (1.0, 10), (2.0, 5)]:
        p, q = keep_probability(eps, k)
        assert p / q == pytest.approx(math.exp(eps), rel=1e-12)  # P15: exactly e^eps
        assert p + (k - 1) * q == pytest.approx(1.0, rel=1e-15)
        assert opendp_privacy_map(eps, k) == pytest.approx(eps, rel=1e-9)


def test_rr_frequency_estimate_is_unbiased_exactly() -> None:
    """Plug the exact expected response frequencies (Fractions) into the estimator."""
    from fractions import Fraction

    from kerckhoffs.dp.randomized_response import expected_response

    p, q = Fraction(3, 5), Fraction(1, 5)  # k = 3, e^eps = 3
    f = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    expected = expected_response(f, p, q)
    assert sum(expected) == 1
    assert [(e - q) / (p - q) for e in expected] == f


def test_rr_frequency_estimate_function_on_expected_counts() -> None:
    from kerckhoffs.dp.randomized_response import frequency_estimate, keep_probability

    eps = math.log(3)
    p, q = keep_probability(eps, 3)
    f = np.array([0.5, 1 / 3, 1 / 6])
    obs = 6000 * (p * f + q * (1 - f))
    assert frequency_estimate(obs, eps) == pytest.approx(f, rel=1e-12)
    with pytest.raises(ParameterError):
        frequency_estimate(np.array([0, 0]), eps)


def test_consistent_totals_by_hand() -> None:
    """Two tables of the same people: noisy sums 9 (variance 1) and 12 (variance 2) give the
    common total (9 * 1 + 12 * 0.5) / 1.5 = 10; each table clamped at 0, scaled to 10 and
    rounded by largest remainders (ties to the lower cell)."""
    from kerckhoffs.dp.mechanisms import consistent_totals

    a, b = consistent_totals([np.array([4.0, 5.0, 0.0]), np.array([-2.0, 7.0, 7.0])], [1.0, 2.0])
    assert a.tolist() == [4, 6, 0] and a.sum() == 10  # 4.44 / 5.56 / 0 -> 4 + 6
    assert b.tolist() == [0, 5, 5] and b.sum() == 10  # 0 / 5 / 5
    (c,) = consistent_totals([np.array([-1.0, -2.0])], [1.0])
    assert c.tolist() == [0, 0]


def test_marginals_sum_consistently() -> None:
    """dp-marginals with consistent=True adds a second column post-processed to one common
    total (cells sum consistently, non-negative); ``count`` stays the unbiased noisy count,
    and without the option there is no second column."""
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.dp.counts import COUNT
    from kerckhoffs.dp.marginals import MARGINAL, dp_marginals
    from kerckhoffs.release.count import CONSISTENT

    table = Table.encode(generate_hospital(400, 5), hospital_schema())
    marg = "zip;zip+nationality"
    rel = dp_marginals(table, 1.0, marg, levels="zip:1,nationality:1", consistent=True)
    totals = rel.counts.groupby(MARGINAL)[CONSISTENT].sum()
    assert totals.nunique() == 1 and (rel.counts[CONSISTENT] >= 0).all()
    assert rel.counts[COUNT].dtype == np.int64 and rel.noise.estimator == "unbiased"
    plain = dp_marginals(table, 1.0, marg, levels="zip:1,nationality:1")
    assert CONSISTENT not in plain.to_pandas().columns


# -- neighbour notions and what each implies -------------------------------------------------------
def test_implied_loss_by_hand() -> None:
    """Same notion: unchanged; substitution gives sensitive-value at the same loss; add/remove
    gives substitution and sensitive-value at (2 eps, (1 + e^eps) delta); nothing gives
    add/remove but add/remove; sensitive-value gives nothing else. Saturates: no overflow, no
    NaN (delta 0 stays 0 at a huge epsilon)."""
    from kerckhoffs.dp.mechanisms import implied_loss

    assert implied_loss((1.0, 1e-6), "substitution", "substitution") == (1.0, 1e-6)
    assert implied_loss((1.0, 1e-6), "substitution", "sensitive-value") == (1.0, 1e-6)
    eps, delta = implied_loss((1.0, 1e-6), "add-remove", "substitution")  # type: ignore[misc]
    assert eps == 2.0 and delta == pytest.approx((1 + math.e) * 1e-6, rel=1e-12)
    assert implied_loss((0.5, 0.0), "add-remove", "sensitive-value") == (1.0, 0.0)
    assert implied_loss((1.0, 0.0), "substitution", "add-remove") is None
    assert implied_loss((1.0, 0.0), "sensitive-value", "substitution") is None
    assert implied_loss((1.0, 0.0), "sensitive-value", "add-remove") is None
    assert implied_loss((800.0, 0.0), "add-remove", "substitution") == (1600.0, 0.0)
    assert implied_loss((800.0, 1e-9), "add-remove", "substitution") == (1600.0, 1.0)


def test_add_remove_to_substitution_doubles_epsilon_exactly() -> None:
    """An independent oracle for the factor 2: a two-cell count vector with geometric noise
    of alpha = 1/2 on each cell is ln 2-DP under add/remove (one cell moves by one). Under
    substitution both cells move; the worst pointwise likelihood ratio, computed exactly
    from the geometric pmf over a window of outputs, is 4 = e^(2 ln 2): the conversion is
    tight, not only an upper bound."""
    from fractions import Fraction

    from kerckhoffs.dp.semantic import geometric_pmf

    half = Fraction(1, 2)

    def pmf(x: tuple[int, int], counts: tuple[int, int]) -> Fraction:
        return geometric_pmf(half, x[0] - counts[0]) * geometric_pmf(half, x[1] - counts[1])

    window = [(a, b) for a in range(-6, 9) for b in range(-6, 9)]
    add_remove = max(pmf(x, (3, 2)) / pmf(x, (2, 2)) for x in window)
    substitution = max(pmf(x, (3, 2)) / pmf(x, (2, 3)) for x in window)
    assert add_remove == 2 and substitution == 4


def test_dp_targets_read_the_recorded_notion() -> None:
    """dp=EPS holds under substitution or add/remove (the detail names it) and fails on a
    sensitive-value release at any epsilon; label-dp=EPS holds on all three, at twice the
    epsilon of an add/remove release."""
    from kerckhoffs.models import LabelDifferentialPrivacy

    dp1, label1 = DifferentialPrivacy(1.0), LabelDifferentialPrivacy(1.0)
    for nb in ("substitution", "add-remove"):
        r = dp1.evaluate_loss((1.0, 0.0), nb)
        assert r.satisfied and nb in r.detail
    r = dp1.evaluate_loss((0.01, 0.0), "sensitive-value")
    assert not r.satisfied and "label-dp" in r.detail
    assert label1.evaluate_loss((1.0, 0.0), "sensitive-value").satisfied
    assert label1.evaluate_loss((1.0, 0.0), "substitution").satisfied
    half = label1.evaluate_loss((0.5, 0.0), "add-remove")
    assert half.satisfied and half.achieved == 1.0
    assert not label1.evaluate_loss((0.6, 0.0), "add-remove").satisfied
    assert LabelDifferentialPrivacy(1.0, 1e-6).to_dict() == {
        "model": "label-differential-privacy",
        "epsilon": 1.0,
        "delta": 1e-6,
    }


def test_count_tables_refuse_the_sensitive_value_notion() -> None:
    with pytest.raises(ParameterError, match="perturb=sa"):
        count_measurement(4, 1.0, "geometric", "sensitive-value")
    with pytest.raises(ParameterError, match="perturb=sa"):
        gaussian_measurement(4, 1.0, 1e-6, "label")
