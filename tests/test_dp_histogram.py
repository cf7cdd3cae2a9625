"""DP count releases (paper 004; spec ``composition.md`` 3.8, 4.3, P13, P14, P20).

OpenDP cannot be seeded: noisy values are never compared exactly. Scales, sensitivities and
privacy maps are exact (read from the measurement); distributions are checked statistically
with 5-sigma bounds (a false failure about once in a million runs per check).
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kerckhoffs as kh
from budget import examples
from cli_runner import run_cli
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import DPRelease, cell_domain, dp_histogram, true_counts
from kerckhoffs.dp.mechanisms import (
    add_noise,
    count_measurement,
    histogram_sensitivity,
    post_process,
)
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models import DifferentialPrivacy, KAnonymity, parse_model
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import SEED_KEYS, Partition, Release, Scheme

ROOT = Path(__file__).resolve().parents[1]
SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy(
    [["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]],
    "zip",
)
DISEASE = Hierarchy([["Flu", "*"], ["Cold", "*"]], "disease")


def small_table(widths_age: bool = False) -> Table:
    """Five people, all in zip 100: most cells of the domain are empty."""
    df = pd.DataFrame(
        {
            "sex": ["M", "F", "M", "M", "F"],
            "zip": ["100", "100", "100", "100", "100"],
            "age": [30, 31, 45, 50, 52],
            "disease": ["Flu", "Flu", "Cold", "Flu", "Cold"],
        }
    )
    cols = [
        Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("age", Role.QUASI, kind=Kind.NUMERIC, widths=(10, 20)),
        Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DISEASE),
    ]
    return Table.encode(df, Schema(tuple(cols)))


def dp1() -> list[PrivacyModel]:
    return [DifferentialPrivacy(1.0)]


# -- sensitivity and scale (spec 4.3, P14) ---------------------------------------------------
def test_histogram_sensitivity_by_neighbour_notion() -> None:
    assert histogram_sensitivity("substitution") == 2
    assert histogram_sensitivity("add-remove") == 1
    assert histogram_sensitivity("add_remove") == 1


@pytest.mark.parametrize("mechanism", ["laplace", "geometric"])
def test_spec_4_3_laplace_histogram_scale(mechanism: str) -> None:
    """eps = 1: scale 2 under substitution, 1 under add/remove; OpenDP's map is exactly 1."""
    meas, spec = count_measurement(7, 1.0, mechanism, "substitution")
    assert (spec.scale, spec.sensitivity, spec.privacy_map) == (2.0, 2, 1.0)
    assert float(meas.map(2 if mechanism == "geometric" else 2.0)) == 1.0
    meas, spec = count_measurement(7, 1.0, mechanism, "add-remove")
    assert (spec.scale, spec.sensitivity, spec.privacy_map) == (1.0, 1, 1.0)


@settings(max_examples=examples(25), deadline=None)
@given(st.floats(0.01, 20), st.sampled_from(["laplace", "geometric"]), st.booleans())
def test_scale_is_delta_over_eps_and_map_never_exceeds_eps(
    eps: float, mechanism: str, substitution: bool
) -> None:
    nb = "substitution" if substitution else "add-remove"
    _, spec = count_measurement(3, eps, mechanism, nb)
    delta = 2 if substitution else 1
    assert spec.privacy_map <= eps
    assert spec.scale == pytest.approx(delta / eps, rel=1e-12)


# -- the cell domain -------------------------------------------------------------------------
def test_every_cell_present_including_empty_ones() -> None:
    t = small_table()
    r = dp_histogram(t, 1.0, levels="age:3", with_sa=True, models=dp1())
    # 2 sexes x 3 zips x 1 age cell x 2 diseases, every combination once, in domain order
    expected = list(itertools.product(["M", "F"], ["100", "101", "200"], ["*"], ["Flu", "Cold"]))
    got = list(r.counts[["sex", "zip", "age", "disease"]].itertuples(index=False, name=None))
    assert got == expected
    assert len(r.counts) == r.noise.cells == 12
    assert r.counts["count"].dtype == np.int64  # unbiased: may be negative, never clamped


def test_counting_matches_brute_force() -> None:
    t = small_table()
    domain, key = cell_domain(t, {"zip": 1, "age": 3}, with_sa=True)
    counts = true_counts(key, domain.size)
    frame = domain.frame()
    rows = [("M", "Flu"), ("F", "Flu"), ("M", "Cold"), ("M", "Flu"), ("F", "Cold")]
    brute = [
        sum(1 for s, d in rows if (s, "10*", d) == (c.sex, c.zip, c.disease))
        for c in frame.itertuples()
    ]
    assert counts.tolist() == brute and counts.sum() == 5
    assert frame["zip"].tolist().count("20*") == 4  # the empty 20* cells are there


def test_public_domain_only() -> None:
    """age's cells below the root come from the data (widths): refused; the root is public."""
    t = small_table()
    with pytest.raises(ParameterError, match="not public"):
        cell_domain(t, {"age": 1})
    with pytest.raises(ParameterError, match="no column 'height'"):
        cell_domain(t, {"height": 1, "age": 3})
    with pytest.raises(ParameterError, match=r"levels 0\.\.2, not 3"):
        cell_domain(t, {"zip": 3, "age": 3})
    with pytest.raises(ParameterError, match="max_cells"):
        cell_domain(t, {"age": 3}, max_cells=5)


# -- noise (P13 statistically; spec 4.3 geometric vector) ------------------------------------
def test_laplace_noise_mean_and_variance() -> None:
    """Laplace, eps = 1, substitution: b = 2, per-cell variance 2 b^2 = 8 (spec 4.3)."""
    n = 10_000
    meas, spec = count_measurement(n, 1.0, "laplace")
    z = add_noise(np.zeros(n, dtype=np.int64), meas, spec)
    # sd of the mean sqrt(8/n); of the sample variance sqrt(20 b^4 / n) (Laplace kurtosis 6)
    assert abs(z.mean()) < 5 * math.sqrt(8 / n)
    assert abs(z.var() - 8) < 5 * math.sqrt(20 * 16 / n)


def test_geometric_pmf_spec_vector() -> None:
    """Delta = 1, eps = ln 2: alpha = 1/2, Pr[0] = 1/3, Pr[+-1] = 1/6, Pr[+-2] = 1/12."""
    n = 10_000
    meas, spec = count_measurement(n, math.log(2), "geometric", "add-remove")
    assert spec.scale == pytest.approx(1 / math.log(2), rel=1e-12)
    z = add_noise(np.full(n, 5, dtype=np.int64), meas, spec) - 5
    for value, p in [(0, 1 / 3), (1, 1 / 6), (-1, 1 / 6), (2, 1 / 12), (-2, 1 / 12)]:
        freq = float(np.mean(z == value))
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / n), (value, freq)


def test_post_processing_reads_only_the_noisy_output() -> None:
    assert list(inspect.signature(post_process).parameters) == ["noisy"]
    # rounded, never clamped (the unbiased estimator); rint is odd: -x rounds to -rint(x)
    assert post_process(np.array([-3.2, 0.4, 0.6, 7.5, 2.0])).tolist() == [-3, 0, 1, 8, 2]
    assert post_process(np.array([-0.6, -7.5, -2.5, 2.5])).tolist() == [-1, -8, -2, 2]


# -- release.json, read-back, fail closed ----------------------------------------------------
def test_release_json_fields_and_read_back(tmp_path: Path) -> None:
    t = small_table()
    r = dp_histogram(t, 1.0, levels="age:3", with_sa=True, mechanism="laplace", models=dp1())
    out = tmp_path / "rel"
    r.write(out)
    meta = json.loads((out / "release.json").read_text())
    assert meta["scheme"] == "dp"
    d = meta["dp"]
    assert (d["epsilon"], d["delta"], d["neighbours"], d["sensitivity"]) == (
        1.0,
        0.0,
        "substitution",
        2,
    )
    assert (d["mechanism"], d["scale"], d["privacy_map"], d["cells"]) == ("laplace", 2.0, 1.0, 12)
    assert d["opendp"].startswith("0.")
    assert "rows" not in meta and "groups" not in meta

    def keys(o: object) -> set[str]:
        if isinstance(o, dict):
            return set(o) | {k for v in o.values() for k in keys(v)}
        return {k for v in o for k in keys(v)} if isinstance(o, list) else set()

    assert not keys(meta) & SEED_KEYS
    back = Release.from_published(out)
    assert isinstance(back, DPRelease) and back.scheme == Scheme.DP
    assert back.privacy_loss() == (1.0, 0.0) == r.privacy_loss()
    assert back.counts.equals(r.counts)
    assert [m.to_dict() for m in back.models] == [DifferentialPrivacy(1.0).to_dict()]
    assert [x.satisfied for x in back.check([DifferentialPrivacy(0.5)])] == [False]
    assert kh.check(out).satisfied


def test_fail_closed_when_the_map_exceeds_the_target(tmp_path: Path) -> None:
    r = dp_histogram(small_table(), 1.0, levels="age:3", models=dp1())
    with pytest.raises(PrivacyCheckFailed, match="release not written"):
        r.write(tmp_path / "rel", [DifferentialPrivacy(0.99)])
    assert not (tmp_path / "rel").exists()
    r.write(tmp_path / "ok", [DifferentialPrivacy(1.0, 1e-6)])


def test_non_dp_release_has_no_privacy_loss_and_refuses_dp() -> None:
    t = small_table()
    rel = Release(t, Partition.single(t.n))
    assert rel.privacy_loss() is None
    with pytest.raises(ParameterError, match="differentially private release"):
        rel.check([DifferentialPrivacy(1.0)])
    r = dp_histogram(t, 1.0, levels="age:3", models=dp1())
    with pytest.raises(ParameterError, match="property of groups"):
        r.check([KAnonymity(2)])


def test_model_parse_and_record() -> None:
    m = parse_model("dp=1,1e-6")
    assert isinstance(m, DifferentialPrivacy) and (m.epsilon, m.delta) == (1.0, 1e-6)
    assert PrivacyModel.from_dict(m.to_dict()).parameter == "epsilon=1, delta=1e-06"
    assert parse_model("dp=0.5").to_dict() == {
        "model": "differential-privacy",
        "epsilon": 0.5,
        "delta": 0.0,
    }
    for bad in ["dp=0", "dp=-1", "dp=1,1", "dp=1,2,3"]:
        with pytest.raises(ParameterError):
            parse_model(bad)


# -- the CLI ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kerckhoffs.datasets import generate_hospital

    f = tmp_path_factory.mktemp("dp") / "h.csv"
    generate_hospital(500, 1).to_csv(f, index=False)
    return f


SCHEMA = ROOT / "examples" / "demo" / "schema.toml"
LEVELS = ["-O", "levels=age:4,sex:1,zip:1"]


def test_cli_anonymize_check_and_refusals(  # type: ignore[no-untyped-def]
    demo_csv: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    out = tmp_path / "R"
    args = ["anonymize", demo_csv, "-s", SCHEMA, "-a", "dp-histogram", "-m", "dp=1", *LEVELS]
    code, stdout, err = run_cli(monkeypatch, capsys, *args, "-o", out)
    assert code == 0, err
    assert "wrote dp release" in stdout
    counts = pd.read_csv(out / "counts.csv")
    assert len(counts) == json.loads((out / "release.json").read_text())["dp"]["cells"]
    code, _, _ = run_cli(monkeypatch, capsys, "check", out, "-m", "dp=0.5")
    assert code == 1
    code, _, _ = run_cli(monkeypatch, capsys, "check", out, "-m", "dp=1")
    assert code == 0
    code, _, err = run_cli(monkeypatch, capsys, *args, "--seed", "3", "-o", tmp_path / "bad")
    # refused before any work, as the only line (no "keep the seed secret" warning first)
    assert code == 2 and err.splitlines() == [
        "error: --seed: dp-histogram cannot be seeded (OpenDP draws its noise from a secure "
        "generator)"
    ]
    bad = [
        ["-O", "mechanism=gauss"],
        ["-O", "neighbours=swap"],
        ["-O", "with_sa=maybe"],
        ["-O", "levels=age:2"],
        ["-O", "max_cells=10"],
        ["-m", "k=5"],
    ]
    for extra in bad:
        code, _, err = run_cli(monkeypatch, capsys, *args, *extra, "-o", tmp_path / "bad")
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (extra, err)
        assert not (tmp_path / "bad").exists()


def test_budget_refusal_end_to_end_with_dp_histogram(  # type: ignore[no-untyped-def]
    demo_csv: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Issue 14: two releases of the same patients at epsilon 0.6 each under a budget of 1:
    the first is written and recorded, the second would take every patient to 1.2 and, with
    ``--over-budget refuse``, is refused in one line, nothing written and the ledger
    unchanged (the default leaves them out instead: tests/test_dp_ledger.py)."""
    ledger = tmp_path / "private" / "ledger.json"
    ledger.parent.mkdir()
    args = ["anonymize", demo_csv, "-s", SCHEMA, "-a", "dp-histogram", "-m", "dp=0.6", *LEVELS]
    code, stdout, err = run_cli(
        monkeypatch, capsys, *args, "-o", tmp_path / "a", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert "recorded epsilon=0.6" in stdout
    meta = json.loads((tmp_path / "a" / "release.json").read_text())
    assert meta["dp"]["epsilon"] == 0.6 and meta["dp"]["privacy_map"] <= 0.6
    before = ledger.read_bytes()
    code, _, err = run_cli(
        monkeypatch, capsys, *args, "-o", tmp_path / "b", "--ledger", ledger, "--budget", "1",
        "--over-budget", "refuse",
    )  # fmt: skip
    assert code == 2 and err.startswith("error:") and "over the budget" in err
    assert not (tmp_path / "b").exists() and ledger.read_bytes() == before


def test_level_is_the_same_option_as_levels(  # type: ignore[no-untyped-def]
    demo_csv: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Issue 14's wording, ``--option level=...``: the same as ``levels=``; both is an error.
    The release records epsilon 1 and lists every cell of the domain: 1 age x 1 sex x the
    zip areas of the zip hierarchy's level 1 x the regions of the nationality hierarchy's
    level 1, empty ones included."""
    args = ["anonymize", demo_csv, "-s", SCHEMA, "-a", "dp-histogram", "-m", "dp=1"]
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        *args,
        "-O",
        "level=age:4,sex:1,zip:1,nationality:1",
        "-o",
        tmp_path / "R",
    )
    assert code == 0, err
    meta = json.loads((tmp_path / "R" / "release.json").read_text())
    counts = pd.read_csv(tmp_path / "R" / "counts.csv", dtype=str)
    from kerckhoffs.datasets import hospital_hierarchies

    areas = {row[1] for row in hospital_hierarchies()["zip"]}
    regions = {row[1] for row in hospital_hierarchies()["nationality"]}
    cells = len(areas) * len(regions)
    assert meta["dp"]["epsilon"] == 1.0 and len(counts) == meta["dp"]["cells"] == cells
    assert set(counts["zip"]) == areas and set(counts["nationality"]) == regions
    code, _, err = run_cli(
        monkeypatch, capsys, *args, "-O", "level=age:4", "-O", "levels=age:4", "-o", tmp_path / "X"
    )
    assert code == 2 and "not both" in err and not (tmp_path / "X").exists()


def test_remembered_layouts_are_copies() -> None:
    """Two releases over one domain share the remembered public layout but never its
    objects: writing into one release's counts or table notes leaves the other as it was,
    and the layout is the same one dp_histogram builds from scratch."""
    from kerckhoffs.dp import counts as counts_module

    t = small_table()
    a = dp_histogram(t, 1.0, levels="zip:1,age:3")
    b = dp_histogram(t, 1.0, levels="zip:1,age:3")
    before = b.counts.copy()
    a.counts.loc[:, "count"] = -1
    a.table.notes.append("x")
    assert b.counts.equals(before) and b.table.notes == []
    assert a.table is not b.table and a.counts is not b.counts
    counts_module._LAYOUTS.clear()
    fresh = dp_histogram(t, 1.0, levels="zip:1,age:3")
    cells = [c for c in fresh.counts.columns if c != "count"]
    assert fresh.counts[cells].equals(b.counts[cells])
    assert fresh.table.to_frame().equals(b.table.to_frame())
