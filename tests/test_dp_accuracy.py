"""Each DP count's stated interval and the estimator the counts are
(:mod:`kerckhoffs.dp.accuracy`).

The oracle is written from the definitions, not from the code under test: the exact
coverage of an interval ``[count - h, count + h]`` is the probability mass of ``|Z| <= h``
under the noise's own probability function (discrete Laplace ``∝ exp(-|z|/b)``, discrete
Gaussian ``∝ exp(-z²/(2σ²))``, rounded continuous Laplace ``1 - exp(-(h + 1/2)/b)``).

The coverage tests count one interval per cell: the releases below have about 2,000 cells,
and OpenDP draws each cell's noise independently with the same distribution (the
measurement is a vector of i.i.d. draws), so the cells' "covered" indicators are 2,000
independent Bernoulli trials with the interval's coverage as their mean, the same as 2,000
runs of a one-cell release at a 50th of the cost. The band 93-97 % is 4 standard deviations
of a binomial proportion (sd 0.49 %) either side of 95 % (a false failure about once in
20,000 runs per check); the scales are large enough (b >= 20, σ >= 25) that the discrete
intervals' exact coverage is within 0.7 % above 95 % (checked against the oracle first). A
control with the 88 % half-width must fail the band, so the test can fail.
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
from kerckhoffs.dp.accuracy import half_width, rr_intervals
from kerckhoffs.dp.counts import COUNT, dp_histogram, true_counts
from kerckhoffs.dp.marginals import dp_marginals, marginal_domain
from kerckhoffs.dp.randomized_response import dp_rr
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import DifferentialPrivacy
from kerckhoffs.release import Release
from kerckhoffs.release.count import COUNT_LOWER, COUNT_UPPER, DPRelease

LOW, HIGH = 0.93, 0.97
XY = Hierarchy([["x", "*"], ["y", "*"]])


def exact_coverage(mechanism: str, scale: float, h: int) -> float:
    """P(|published - true| <= h), from the noise's definition (module docstring)."""
    if mechanism == "laplace":  # |rint Z| <= h  iff  |Z| < h + 1/2 (ties have mass 0)
        return 1.0 - math.exp(-(h + 0.5) / scale)
    z = np.arange(-int(60 * scale) - 60, int(60 * scale) + 61, dtype=np.float64)
    w = np.exp(-np.abs(z) / scale) if mechanism == "geometric" else np.exp(-(z**2) / (2 * scale**2))
    return float(w[np.abs(z) <= h].sum() / w.sum())


@pytest.mark.parametrize("mechanism", ["geometric", "laplace", "gaussian"])
@pytest.mark.parametrize("scale", [0.4, 1.0, 2.0, 3.7, 20.0, 50.0])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_half_width_covers_at_least_the_level(mechanism: str, scale: float, level: float) -> None:
    """OpenDP's accuracy, floored (integer noise) or rounded (Laplace), covers at least the
    level exactly; for geometric and Laplace it is the smallest integer that does (tight),
    for the discrete Gaussian (OpenDP's bound is conservative) within 1.5 % at scale 20+ and
    level 95 % or more."""
    h = half_width(mechanism, scale, level)
    assert exact_coverage(mechanism, scale, h) >= level
    if mechanism != "gaussian" and h > 0:
        assert exact_coverage(mechanism, scale, h - 1) < level
    if mechanism == "gaussian" and scale >= 20 and level >= 0.95:
        assert exact_coverage(mechanism, scale, h) < level + 0.015


def grid_table(na: int = 40, nb: int = 50, seed: int = 3) -> tuple[Table, np.ndarray]:
    """Two QIs with public hierarchies (``na`` x ``nb`` = 2,000 cells), a two-valued SA, and
    true cell counts 0-5 (a third of the cells empty: where clamping would bias), with the
    true count of every (a, b) cell."""
    rng = np.random.default_rng(seed)
    a = [f"a{i:02d}" for i in range(na)]
    b = [f"b{i:02d}" for i in range(nb)]
    truth = rng.integers(0, 6, size=na * nb) * (rng.random(na * nb) > 1 / 3)
    cell = np.repeat(np.arange(na * nb), truth)
    df = pd.DataFrame(
        {
            "a": np.array(a)[cell // nb],
            "b": np.array(b)[cell % nb],
            "s": np.where(rng.random(cell.size) < 0.5, "x", "y"),
        }
    )
    cols = (
        Column("a", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=Hierarchy([[v, "*"] for v in a])),
        Column("b", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=Hierarchy([[v, "*"] for v in b])),
        Column("s", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=XY),
    )
    return Table.encode(df, Schema(cols)), truth


# mechanism -> (epsilon, delta) for dp_histogram / dp_marginals: scales 20 / 40 (Laplace,
# geometric), 48 / 50 (Gaussian), where the discrete intervals' exact coverage is <= 95.7 %
BUDGETS = {
    "geometric": (0.1, 0.0),
    "laplace": (0.1, 0.0),
    "gaussian": (0.1, 1e-5),
}


def release_and_truth(kind: str, mechanism: str) -> tuple[DPRelease, np.ndarray]:
    t, truth = grid_table()
    eps, delta = BUDGETS[mechanism]
    if kind == "histogram":
        return dp_histogram(t, eps, levels="leaves", mechanism=mechanism, delta=delta), truth
    marg = "a+b;a"
    rel = dp_marginals(t, 2 * eps, marg, mechanism=mechanism, delta=delta)
    doms = [marginal_domain(t, m, {}) for m in (("a", "b"), ("a",))]
    return rel, np.concatenate([true_counts(k, d.size) for d, k in doms])


def coverage(frame: pd.DataFrame, truth: np.ndarray) -> float:
    covered = (frame[COUNT_LOWER].to_numpy() <= truth) & (truth <= frame[COUNT_UPPER].to_numpy())
    return float(covered.mean())


@pytest.mark.parametrize("mechanism", ["geometric", "laplace", "gaussian"])
@pytest.mark.parametrize("kind", ["histogram", "marginals"])
def test_stated_95_intervals_cover_93_to_97_percent(kind: str, mechanism: str) -> None:
    """2,000+ cells, one interval each (module docstring): the 95 % intervals cover the true
    count in 93-97 % of them; the 88 % half-width (a too-small interval) falls below the
    band; the counts are unbiased (their mean error over the empty cells is within 5 sd of
    0, where a clamped count's is about a third of the scale above it)."""
    rel, truth = release_and_truth(kind, mechanism)
    frame = rel.to_pandas()
    assert len(frame) >= 2000 and rel.noise.accuracy is not None
    assert rel.noise.accuracy["level"] == 0.95
    for h, s in zip(rel.noise.accuracy["half_width"], scales_of(rel), strict=True):
        assert h == half_width(mechanism, s)
        assert 0.95 <= exact_coverage(mechanism, s, h) < 0.957  # the band is fair to it
    got = coverage(frame, truth)
    assert LOW <= got <= HIGH, got
    # control: intervals from the 88 % half-width, same draws
    widths = np.repeat(
        [half_width(mechanism, s, 0.88) for s in scales_of(rel)], rel.noise.accuracy["cells"]
    )
    count = frame[COUNT].to_numpy()
    small = pd.DataFrame({COUNT_LOWER: count - widths, COUNT_UPPER: count + widths})
    assert coverage(small, truth) < LOW
    empty = truth == 0
    err = (count - truth)[empty].astype(float)
    sd = math.sqrt(2.0) * max(scales_of(rel)) / math.sqrt(empty.sum())
    assert abs(err.mean()) < 5 * sd, (err.mean(), sd)
    assert (count < 0).any()  # not clamped


def scales_of(rel: DPRelease) -> list[float]:
    """The scale of each run of cells (one per marginal; the release's own for a histogram)."""
    parts = [p for p in rel.noise.parts if p.get("name") == "marginal"]
    return [float(p["scale"]) for p in parts] if parts else [rel.noise.scale]


def rr_table(groups: int = 1000, per: int = 20, seed: int = 5) -> tuple[Table, np.ndarray]:
    """``groups`` QI cells of ``per`` records each, SA x/y with a share of x varying by cell;
    the true count of every (QI cell, SA) cell in domain order."""
    rng = np.random.default_rng(seed)
    qi = [f"q{i:04d}" for i in range(groups)]
    share = rng.random(groups)
    sa = rng.random((groups, per)) < share[:, None]
    df = pd.DataFrame({"q": np.repeat(qi, per), "s": np.where(sa.reshape(-1), "x", "y")})
    cols = (
        Column("q", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=Hierarchy([[v, "*"] for v in qi])),
        Column("s", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=XY),
    )
    x = sa.sum(axis=1)
    return Table.encode(df, Schema(cols)), np.stack([x, per - x], axis=1).reshape(-1)


def test_rr_hoeffding_interval_is_sound_and_a_naive_one_is_not() -> None:
    """dp-rr perturb=sa, 1,000 QI cells of 20 records, epsilon 1: the stated 95 % interval of
    the estimated count covers the true count in at least 95 % of the cells (Hoeffding is
    conservative: about 99.8 % expected); the interval without the 1/(p - q) debiasing
    factor (too small) covers clearly less; the estimate is unbiased. The two cells of one
    QI cell have opposite errors (their estimates add up to its 20 records), so the 2,000
    indicators are 1,000 independent pairs; soundness needs no band."""
    t, truth = rr_table()
    rel = dp_rr(t, 1.0, perturb="sa")
    frame = rel.to_pandas()
    assert rel.noise.estimator == "responses" and rel.noise.accuracy["of"] == "estimate"
    lo, hi = frame["estimate_lower"].to_numpy(), frame["estimate_upper"].to_numpy()
    assert ((lo <= truth) & (truth <= hi)).mean() >= 0.95
    est = frame["estimate_count"].to_numpy()
    keep = rel.noise.parts[0]["keep_probability"]
    q = 1 - keep
    naive = (hi - est) * (keep - q)
    assert ((est - naive <= truth) & (truth <= est + naive)).mean() < 0.9
    sd = math.sqrt(20 * keep * q) / (keep - q) / math.sqrt(truth.size / 2)
    assert abs((est - truth).mean()) < 5 * sd


def test_rr_intervals_by_hand() -> None:
    """k = 2, keep 0.75 (q = 0.25), one group of 8 responses 6/2: estimates (6 - 2)/0.5 = 8
    and (2 - 2)/0.5 = 0; half-width sqrt(8 ln 40 / 2)/0.5."""
    est, lo, hi = rr_intervals(np.array([6, 2]), 2, 0.75)
    assert est.tolist() == [8.0, 0.0]
    h = math.sqrt(8 * math.log(40) / 2) / 0.5
    assert hi.tolist() == pytest.approx([8 + h, h]) and lo.tolist() == pytest.approx([8 - h, -h])


def small() -> Table:
    t, _ = grid_table(4, 5)
    return t


def test_files_release_json_and_read_back(tmp_path: Path) -> None:
    """The files hold count_lower/count_upper; release.json the estimator, level, half-width
    and method; reading back gives the same to_pandas(); negative counts read back."""
    rel = dp_histogram(small(), 0.05, levels="leaves", models=[DifferentialPrivacy(0.05)])
    rel.write(tmp_path / "r")
    meta = json.loads((tmp_path / "r" / "release.json").read_text())
    acc = meta["dp"]["accuracy"]
    assert meta["dp"]["estimator"] == "unbiased"
    assert acc["level"] == 0.95 and acc["cells"] == [20]
    assert acc["half_width"] == [half_width("geometric", 40.0)] and "OpenDP" in acc["method"]
    csv = pd.read_csv(tmp_path / "r" / "counts.csv")
    assert (csv[COUNT_UPPER] - csv[COUNT] == acc["half_width"][0]).all()
    back = Release.from_published(tmp_path / "r")
    assert isinstance(back, DPRelease)
    pd.testing.assert_frame_equal(back.to_pandas(), rel.to_pandas(), check_dtype=False)


def test_accuracy_level_option_and_refusals() -> None:
    t = small()
    r90 = dp_histogram(t, 1.0, levels="leaves", accuracy=0.9)
    assert r90.noise.accuracy["level"] == 0.9
    assert r90.noise.accuracy["half_width"] == [half_width("geometric", 2.0, 0.9)]
    for bad in (0, 1, 1.5, "x"):
        with pytest.raises(ParameterError, match="accuracy level"):
            dp_histogram(t, 1.0, levels="leaves", accuracy=bad)  # type: ignore[arg-type]


def test_tampered_interval_and_old_releases(tmp_path: Path) -> None:
    """A published interval that does not match count and release.json is refused; a
    release written before (no estimator, no accuracy) still reads, with non-negative counts
    required as before, and has no interval columns."""
    rel = dp_histogram(small(), 1.0, levels="leaves")
    meta = rel.metadata()
    files = rel.to_pandas()
    bad = files.copy()
    bad.loc[0, COUNT_LOWER] -= 1
    with pytest.raises(InputError, match="count_lower"):
        DPRelease.from_counts(bad, meta)
    old_meta = json.loads(json.dumps(meta))
    del old_meta["dp"]["estimator"], old_meta["dp"]["accuracy"]
    old = files[[c for c in files.columns if c not in (COUNT_LOWER, COUNT_UPPER)]].copy()
    old[COUNT] = old[COUNT].clip(lower=0)
    back = DPRelease.from_counts(old, old_meta)
    assert back.noise.estimator == "clamped" and list(back.to_pandas().columns) == list(old.columns)
    old.loc[0, COUNT] = -1
    with pytest.raises(InputError, match="non-negative"):
        DPRelease.from_counts(old, old_meta)
    neg = files.copy()
    neg.loc[0, [COUNT, COUNT_LOWER, COUNT_UPPER]] -= 1000
    assert DPRelease.from_counts(neg, meta).counts[COUNT].iloc[0] < 0


def test_a_stated_width_is_recomputed_not_trusted() -> None:
    """release.json claiming a narrower interval than OpenDP's accuracy gives for its scale
    (with the columns to match) is refused on reading: an interval is a claim."""
    rel = dp_marginals(grid_table(4, 5)[0], 1.0, "a+b;a", weights="1,3")
    meta = rel.metadata()
    files = rel.to_pandas()
    assert len(set(meta["dp"]["accuracy"]["half_width"])) == 2  # one per marginal's scale
    DPRelease.from_counts(files, meta)
    meta["dp"]["accuracy"]["half_width"][0] -= 1
    files.loc[:19, COUNT_LOWER] += 1
    files.loc[:19, COUNT_UPPER] -= 1
    with pytest.raises(InputError, match="half_width"):
        DPRelease.from_counts(files, meta)


@pytest.mark.parametrize("mechanism", ["geometric", "laplace", "gaussian"])
def test_degenerate_scales_still_get_a_sound_width(mechanism: str) -> None:
    """Where OpenDP's accuracy overflows (scale about 1e-308) the closed-form tail bound
    gives 0; at the largest scale a release accepts (2^52) the width is finite and a count
    plus it fits an int64."""
    assert half_width(mechanism, 2e-308) <= 1  # noise 0 there; OpenDP says 1 for Gaussian
    big = half_width(mechanism, 2.0**52)
    assert 0 < big < 2**60 and big >= 2.0**52
