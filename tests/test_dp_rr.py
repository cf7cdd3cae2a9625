"""dp-rr: k-ary randomized response per record (paper 004, spec ``composition.md`` 3.8, 4.3,
P15). OpenDP's generator cannot be seeded: responses are never compared exactly; the keep
probability, threshold and privacy map are exact, distributions are checked with 5-sigma
bounds (a false failure about once in a million runs per check)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kerckhoffs.dp.randomized_response as rr
from budget import examples
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data import manifest
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import DPRelease
from kerckhoffs.dp.mechanisms import Neighbours
from kerckhoffs.dp.randomized_response import (
    TWO64,
    dp_rr,
    frequency_estimates,
    keep_probability,
    randomize,
    replace_threshold,
    rr_estimates,
    uniform_below,
)
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models import DifferentialPrivacy, LabelDifferentialPrivacy, parse_model
from kerckhoffs.release import SEED_KEYS, Release

Z = 5.0
SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy([["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]], "zip")
DIS = Hierarchy([["Flu", "resp", "*"], ["Cold", "resp", "*"], ["Ulcer", "gut", "*"]], "disease")


def table(n_per: int = 1) -> Table:
    """Hand table: zip 100 has Flu x3, Cold x1 (times n_per); zip 101 has Ulcer x2; no 200."""
    base = pd.DataFrame(
        {
            "sex": ["M", "F", "M", "F", "M", "F"],
            "zip": ["100", "100", "100", "100", "101", "101"],
            "disease": ["Flu", "Flu", "Flu", "Cold", "Ulcer", "Ulcer"],
        }
    )
    df = pd.concat([base] * n_per, ignore_index=True)
    cols = (
        Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DIS),
    )
    return Table.encode(df, Schema(cols))


def within(observed: float, expected: float, sd: float) -> bool:
    return abs(observed - expected) <= Z * sd + 1e-12


def test_spec_4_3_keep_probability_three_quarters_at_ln3() -> None:
    p, q = keep_probability(math.log(3), 2)
    assert p == pytest.approx(0.75, abs=1e-15) and q == pytest.approx(0.25, abs=1e-15)
    # the sampler's realized keep probability: at most 3/4 and within 1e-12 of it
    t, keep, loss = replace_threshold(math.log(3), 2)
    realized = Fraction(TWO64 - t, TWO64)
    assert realized <= Fraction(3, 4) and float(Fraction(3, 4) - realized) < 1e-12
    assert Fraction(keep) >= realized and loss <= math.log(3)


@settings(max_examples=examples(25), deadline=None)
@given(eps=st.floats(0.01, 20.0), k=st.integers(2, 300))
def test_threshold_is_exact_and_the_loss_within_epsilon(eps: float, k: int) -> None:
    """P15 for the realized mechanism: p'/q' = (2^64 - T)(k-1)/T <= e^eps, and OpenDP's map
    at the recorded (rounded-up) keep probability is within eps."""
    t, keep, loss = replace_threshold(eps, k)
    p, _ = keep_probability(eps, k)
    realized = Fraction(TWO64 - t, TWO64)
    assert Fraction(keep) >= realized and keep - p < 1e-12 and p - keep < 1e-9
    assert loss <= eps
    ratio = Fraction(TWO64 - t) * (k - 1) / t
    assert math.log(ratio) <= eps + 1e-12
    assert 1 <= t < TWO64


def test_huge_epsilon_is_refused() -> None:
    with pytest.raises(ParameterError, match="too large"):
        replace_threshold(60.0, 2)


def test_responses_have_the_rr_distribution() -> None:
    """From value 2 of k = 5 at eps = 1: P(2) = p', every other value (1 - p')/4."""
    n, k = 200_000, 5
    t, _, _ = replace_threshold(1.0, k)
    p = 1 - t / TWO64
    out = randomize(np.full(n, 2), k, t)
    freq = np.bincount(out, minlength=k) / n
    for v in range(k):
        e = p if v == 2 else (1 - p) / (k - 1)
        assert within(freq[v], e, math.sqrt(e * (1 - e) / n)), (v, freq[v], e)


def test_uniform_below_is_uniform() -> None:
    n = 60_000
    for m in (3, 7, 8):
        f = np.bincount(uniform_below(m, n), minlength=m) / n
        assert f.size == m
        assert all(within(x, 1 / m, math.sqrt((1 / m) * (1 - 1 / m) / n)) for x in f)
    assert not uniform_below(1, 10).any()


def test_uniform_below_rejects_the_incomplete_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """m = 3: the accepted range is [0, 3 floor(2^64/3)) = [0, 2^64 - 1), so 2^64 - 1 is
    redrawn; the residue of the accepted ones is the answer (hand-derived)."""
    draws = iter([np.array([TWO64 - 1, 5], dtype=np.uint64), np.array([7], dtype=np.uint64)])
    monkeypatch.setattr(rr, "opendp_uniform_u64", lambda size: next(draws))
    assert uniform_below(3, 2).tolist() == [1, 2]


def test_replacement_is_keyed_on_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """replace iff U < T, then (v + 1 + R) mod k (hand-derived with fixed draws)."""
    draws = iter([np.array([0, 9, 10, 3], dtype=np.uint64), np.array([2, 0, 1], dtype=np.uint64)])
    monkeypatch.setattr(rr, "opendp_uniform_u64", lambda size: next(draws))
    # k = 4, T = 10: rows 0, 1, 3 replaced with R = 2, 0, 1
    assert randomize(np.array([3, 1, 2, 0]), 4, 10).tolist() == [(3 + 3) % 4, 2, 2, 2]


def test_bitvec_fallback_gives_fair_bits() -> None:
    u = rr._bitvec_u64(500)
    bits = np.unpackbits(u.view(np.uint8))
    assert u.dtype == np.uint64 and u.size == 500
    assert within(bits.mean(), 0.5, 0.5 / math.sqrt(bits.size))


def test_frequency_estimates_hand_vectors() -> None:
    # k = 2, p = 3/4, q = 1/4: obs [3, 1] -> [1, 0]; [2, 2] -> [1/2, 1/2]; an empty row -> NaN
    est = frequency_estimates(np.array([[3, 1], [2, 2], [0, 0]]), 0.75)
    assert est[:2].tolist() == [[1.0, 0.0], [0.5, 0.5]] and np.isnan(est[2]).all()
    with pytest.raises(ParameterError):
        frequency_estimates(np.array([[1, 1]]), 0.5)


def test_frequency_estimate_is_unbiased() -> None:
    """f = (0.5, 0.3, 0.2, 0) over k = 4 at eps = 1: the estimate from 100,000 responses is
    within 5 sd of f, sd = sqrt(pi(1 - pi)/N)/(p - q) with pi = p f + q (1 - f)."""
    k, n, f = 4, 100_000, np.array([0.5, 0.3, 0.2, 0.0])
    t, keep, _ = replace_threshold(1.0, k)
    codes = np.repeat(np.arange(k), (f * n).astype(int))
    est = frequency_estimates(np.bincount(randomize(codes, k, t), minlength=k)[None, :], keep)[0]
    p = 1 - t / TWO64
    q = (1 - p) / (k - 1)
    pi = p * f + q * (1 - f)
    sd = np.sqrt(pi * (1 - pi) / n) / (p - q)
    assert np.all(np.abs(est - f) <= Z * sd), (est, f)


def test_release_counts_every_cell_and_keeps_qi_totals() -> None:
    t = table(50)
    r = dp_rr(t, 1.0, levels="sex:1", perturb="sa", models=[LabelDifferentialPrivacy(1.0)])
    c = r.counts
    # every cell of the public domain: 3 zips x 3 diseases (zip 200 empty), sex at the root
    assert list(c.columns) == ["sex", "zip", "disease", "count"] and len(c) == 9
    totals = c.groupby("zip", sort=False)["count"].sum().to_dict()
    assert totals == {"100": 200, "101": 100, "200": 0}  # QI cells exact (perturb=sa)
    assert r.privacy_loss() == (r.noise.privacy_map, 0.0) and r.noise.privacy_map <= 1.0
    part = r.noise.parts[0]
    assert (part["categories"], part["perturb"]) == (3, "sa")
    est = rr_estimates(r)
    assert np.isnan(est.loc[est["zip"] == "200", "estimate"]).all()
    assert np.allclose(est.groupby("zip")["estimate"].sum().loc[["100", "101"]], 1.0)


def test_perturb_cell_and_sa_level() -> None:
    t = table(20)
    r = dp_rr(t, 2.0, levels="sex:1,zip:1,disease:1", perturb="cell")
    assert len(r.counts) == 4 and int(r.counts["count"].sum()) == t.n  # 2 zip x 2 groups
    assert r.noise.parts[0]["categories"] == 4


def test_refusals() -> None:
    t = table()
    with pytest.raises(ParameterError, match="reveals n"):
        dp_rr(t, 1.0, neighbours="add-remove")
    with pytest.raises(ParameterError, match="perturb"):
        dp_rr(t, 1.0, perturb="qi")
    with pytest.raises(ParameterError, match="at least 2 values"):
        dp_rr(t, 1.0, levels="disease:2", perturb="sa")
    with pytest.raises(ParameterError, match="at least 2 values"):
        dp_rr(t, 1.0, levels="sex:1,zip:2,disease:2")
    with pytest.raises(ParameterError, match="cannot be seeded"):
        REGISTRY["dp-rr"].run(t, [DifferentialPrivacy(1.0)], seed=3)


def test_write_read_back_and_fail_closed(tmp_path: Path) -> None:
    t = table(10)
    r = REGISTRY["dp-rr"].run(t, [LabelDifferentialPrivacy(1.0)], levels="sex:1", perturb="sa")
    with pytest.raises(PrivacyCheckFailed, match="release not written"):
        r.write(tmp_path / "bad", [DifferentialPrivacy(0.99)])
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "rel"
    r.write(out)
    meta = json.loads((out / "release.json").read_text())
    d = meta["dp"]
    assert (d["mechanism"], d["neighbours"], d["sensitivity_norm"]) == (
        "randomized-response",
        "sensitive-value",
        "records",
    )
    assert d["parts"][0]["keep_probability"] == pytest.approx(keep_probability(1.0, 3)[0])
    assert meta["provenance"]["algorithm"] == "dp-rr" and "rows" not in meta

    def keys(o: object) -> set[str]:
        if isinstance(o, dict):
            return set(o) | {k for v in o.values() for k in keys(v)}
        return {k for v in o for k in keys(v)} if isinstance(o, list) else set()

    assert not keys(meta) & SEED_KEYS
    back = Release.from_published(out)
    assert isinstance(back, DPRelease) and back.privacy_loss() == r.privacy_loss()
    assert back.counts["count"].tolist() == r.counts["count"].tolist()
    assert rr_estimates(back)["estimate"].notna().sum() == 6


def test_release_json_says_what_each_mechanism_post_processed() -> None:
    """Each DP algorithm records its own post-processing (dp-rr publishes the randomized
    records' counts as drawn: nothing is clamped or rounded)."""
    from kerckhoffs.dp.counts import dp_histogram
    from kerckhoffs.dp.marginals import dp_marginals
    from kerckhoffs.dp.mechanisms import ROUND

    t = table()
    rr = dp_rr(t, 1.0).noise.to_dict()
    assert rr["post_processing"].startswith("none:") and rr["estimator"] == "responses"
    hist = dp_histogram(t, 1.0).noise.to_dict()
    assert (hist["post_processing"], hist["estimator"]) == (ROUND, "unbiased")
    both = dp_marginals(t, 1.0, "sex;zip+disease", consistent=True).noise.to_dict()
    assert both["post_processing"].startswith(f"{ROUND}; column consistent: one common total")
    assert both["estimator"] == "unbiased"
    alone = dp_marginals(t, 1.0, "sex;zip+disease").noise
    assert alone.to_dict()["post_processing"] == ROUND


# -- the neighbour notion each mode meets ---------------------------------------------------------
def test_perturb_cell_is_the_default_and_meets_substitution() -> None:
    """The default mode randomizes the whole cell: DP under substitution, which also gives
    label DP at the same epsilon; the QI cell totals are randomized too (not all of the 60
    records stay in their QI cell: with k = 9 cells and keep probability e/(e + 8) ~ 0.25 the
    chance that all 60 responses keep their QI cell is below 1e-20)."""
    t = table(10)
    r = REGISTRY["dp-rr"].run(t, [DifferentialPrivacy(1.0)], levels="sex:1")
    assert r.noise.neighbours == Neighbours.SUBSTITUTION
    assert r.noise.parts[0]["perturb"] == "cell"
    assert r.provenance.parameters["neighbours"] == "substitution"
    assert [x.satisfied for x in r.check([DifferentialPrivacy(1.0)])] == [True]
    assert [x.satisfied for x in r.check([LabelDifferentialPrivacy(1.0)])] == [True]
    totals = r.counts.groupby("zip", sort=False)["count"].sum().to_dict()
    assert totals != {"100": 40, "101": 20, "200": 0}


def test_perturb_sa_meets_only_label_dp() -> None:
    """perturb=sa records sensitive-value neighbours: dp=EPS fails whatever its epsilon (the
    QI cell totals are exact), label-dp=EPS holds; asking dp= with perturb=sa is refused before
    any work, naming label-dp; neighbours=substitution with perturb=sa is refused."""
    t = table(10)
    r = dp_rr(t, 1.0, levels="sex:1", perturb="sa")
    assert r.noise.neighbours == Neighbours.SENSITIVE_VALUE
    (fail,) = r.check([DifferentialPrivacy(100.0)])
    assert not fail.satisfied and "label-dp" in fail.detail
    (ok,) = r.check([LabelDifferentialPrivacy(1.0)])
    assert ok.satisfied and ok.achieved == r.noise.privacy_map
    with pytest.raises(ParameterError, match="label-dp=1"):
        REGISTRY["dp-rr"].run(t, [DifferentialPrivacy(1.0)], levels="sex:1", perturb="sa")
    with pytest.raises(ParameterError, match="not under substitution"):
        dp_rr(t, 1.0, levels="sex:1", perturb="sa", neighbours="substitution")
    with pytest.raises(PrivacyCheckFailed):
        r.verify([DifferentialPrivacy(1.0)])
    rel = REGISTRY["dp-rr"].run(t, [parse_model("label-dp=1")], levels="sex:1", perturb="sa")
    assert rel.provenance.parameters["neighbours"] == "sensitive-value"


def test_label_dp_is_refused_by_count_tables() -> None:
    t = table(2)
    with pytest.raises(ParameterError, match="dp=EPS"):
        REGISTRY["dp-histogram"].run(t, [LabelDifferentialPrivacy(1.0)])
    with pytest.raises(ParameterError, match="sensitive-value"):
        REGISTRY["dp-histogram"].run(t, [DifferentialPrivacy(1.0)], neighbours="sensitive-value")


def test_an_old_perturb_sa_release_is_read_as_label_dp(tmp_path: Path) -> None:
    """A dp-rr perturb=sa release written before the notion was recorded says substitution
    (release.json re-sealed as it was then): read back as sensitive-value, with a note, so
    check --model dp= fails on it and label-dp= holds."""
    t = table(10)
    out = tmp_path / "old"
    REGISTRY["dp-rr"].run(t, [LabelDifferentialPrivacy(1.0)], levels="sex:1", perturb="sa").write(
        out
    )
    meta = json.loads((out / "release.json").read_text())
    meta["dp"]["neighbours"] = "substitution"
    meta["provenance"]["parameters"]["neighbours"] = "substitution"
    meta["checks"][0]["spec"] = DifferentialPrivacy(1.0).to_dict()
    (out / "release.json").write_bytes(manifest.seal(meta))
    back = Release.from_published(out)
    assert isinstance(back, DPRelease)
    assert back.noise.neighbours == Neighbours.SENSITIVE_VALUE
    assert back.provenance.parameters["neighbours"] == "sensitive-value"
    assert any("sensitive-value" in n and "substitution" in n for n in back.notes)
    assert [x.satisfied for x in back.check()] == [False]  # its recorded dp=1 no longer holds
    assert [x.satisfied for x in back.check([LabelDifferentialPrivacy(1.0)])] == [True]


def test_a_response_table_that_does_not_say_cell_is_read_as_label_dp() -> None:
    """Fail safe: a randomized-response record claiming substitution is read under
    sensitive-value neighbours unless a part says the whole cell was randomized."""
    from kerckhoffs.dp.mechanisms import NoiseSpec

    record = dp_rr(table(2), 1.0, levels="sex:1").noise.to_dict()
    assert NoiseSpec.from_dict(record).neighbours == Neighbours.SUBSTITUTION  # perturb=cell
    for parts in ([], [{"name": "randomized response", "perturb": "sa"}]):
        old = record | {"parts": parts}
        assert NoiseSpec.from_dict(old).neighbours == Neighbours.SENSITIVE_VALUE
