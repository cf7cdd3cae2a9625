"""DP releases at the edges of what floats and OpenDP hold, and the ledger's file.

* A very large epsilon: OpenDP's zCDP-to-(epsilon, delta) conversion overflows for small
  Gaussian scales, and ``e^eps`` is no float from 710 on. Every DP algorithm either publishes
  (its recorded loss checked against OpenDP's own map, built here directly) or refuses in one
  line; a very small epsilon (a noise scale beyond 2^52) is refused in one line too.
* Composed releases (``dp-marginals``) split epsilon *and* delta: the parts' deltas must sum to
  at most the target in floating point, or the release refuses itself.
* A verdict that a loss exceeds its target prints the digits that show it.
* A ledger's folder is never created; a hard-linked ledger is refused (saving it by an atomic
  rename would split it); sums beyond a float saturate without numpy's warnings.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import kerckhoffs as kh
from cli_runner import run_cli
from kerckhoffs.data.schema import MissingPolicy
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import generate_hospital, hospital_schema
from kerckhoffs.dp.composition import parse_budget
from kerckhoffs.dp.counts import dp_histogram, refuse_missing_drop
from kerckhoffs.dp.ledger import Ledger
from kerckhoffs.dp.marginals import dp_marginals
from kerckhoffs.dp.mechanisms import check_budget, count_measurement, gaussian_measurement
from kerckhoffs.dp.randomized_response import keep_probability, replace_threshold
from kerckhoffs.dp.semantic import semantic_privacy, uniform_prior
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models.base import ModelResult, format_number
from kerckhoffs.models.differential_privacy import DifferentialPrivacy, LabelDifferentialPrivacy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "demo"
SCHEMA = EXAMPLES / "schema.toml"
LEVELS = "levels=age:4,sex:1,zip:1,nationality:1"
SQRT2 = math.sqrt(2.0)


@pytest.fixture(scope="module")
def hospital() -> Table:
    return Table.encode(generate_hospital(300, seed=1), hospital_schema())


@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "hospital.csv"
    generate_hospital(300, seed=2).to_csv(path, index=False)
    return path


def opendp_gaussian_loss(scale: float, delta: float, d_in: float) -> float:
    """OpenDP's epsilon for its discrete Gaussian at ``scale`` fixed at ``delta`` (built here,
    not through kerckhoffs: the oracle of what a release may record)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T="i64"), size=1), dp.l2_distance(T="f64"))
    meas = dp.c.make_fix_delta(
        dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=scale)), delta
    )
    return float(meas.map(d_in)[0])


# -- item: a large epsilon -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "eps,neighbours,d_in",
    [(80.0, "substitution", SQRT2), (1e6, "substitution", SQRT2), (710.0, "add-remove", 1.0),
     (1e308, "add-remove", 1.0)],
)  # fmt: skip
def test_gaussian_at_a_large_epsilon_is_built_within_it(
    eps: float, neighbours: str, d_in: float
) -> None:
    """OpenDP's map overflowed while the scale was searched (epsilon 80 and up ended in
    "internal error"). The scale found has a loss, by OpenDP's own map, within the target;
    up to 50,000 it is the target to float precision (no needless noise), beyond it the
    release records 50,000."""
    meas, spec = gaussian_measurement(3, eps, 1e-6, neighbours)
    loss = opendp_gaussian_loss(spec.scale, 1e-6, d_in)
    assert loss == spec.privacy_map <= eps
    assert spec.privacy_map >= min(eps, 50_000.0) * (1 - 1e-9)
    assert np.asarray(meas(np.array([5, 0, 7], dtype=np.int64))).shape == (3,)


def test_dp_functions_at_a_large_epsilon_publish_within_it(hospital: Table) -> None:
    """The shipped release functions at epsilons that crashed: levels=auto with the Gaussian,
    dp-marginals with the Gaussian at 800, dp-histogram at 1e308. Each release's own check
    (what its files say, read back) passes and its loss is within the target."""
    runs = [
        (dp_histogram(hospital, 1e308, levels="auto", mechanism="gaussian", delta=1e-6), 1e308),
        (dp_marginals(hospital, 800, "age+sex;zip", levels="age:4,sex:1", mechanism="gaussian",
                      delta=1e-6), 800.0),
        (dp_histogram(hospital, 1e308, levels=LEVELS.split("=")[1]), 1e308),
    ]  # fmt: skip
    for release, eps in runs:
        got_eps, _ = release.privacy_loss()
        assert got_eps <= eps and math.isfinite(got_eps)
        assert all(r.satisfied for r in release.verify([DifferentialPrivacy(eps, 1e-6)]))


def test_randomized_response_at_extreme_epsilons_is_one_line() -> None:
    """``e^eps`` overflowed from 710 on (OverflowError: "internal error"); a tiny epsilon made
    OpenDP refuse a keep probability below 1/k. Both are one-line ParameterErrors now, and
    the keep probability itself is finite at any epsilon."""
    p, q = keep_probability(800.0, 3)
    assert p == 1.0 and 0.0 <= q < 1e-300
    p, q = keep_probability(1.0, 3)  # e / (e + 2), 1 / (e + 2), by hand
    assert p == pytest.approx(math.e / (math.e + 2), rel=1e-15)
    assert q == pytest.approx(1 / (math.e + 2), rel=1e-15)
    for eps in (710.0, 1e308):
        with pytest.raises(ParameterError, match="too large for randomized response"):
            replace_threshold(eps, 3)
    with pytest.raises(ParameterError, match="too small for randomized response"):
        replace_threshold(1e-300, 3)


def test_a_tiny_epsilon_is_one_line() -> None:
    """A scale beyond 2^52 overflowed the integer counts (a numpy cast warning, then a
    misleading error) or OpenDP's map (internal error)."""
    for mech in ("geometric", "laplace"):
        with pytest.raises(ParameterError, match="too small"):
            count_measurement(4, 1e-300, mech)
    with pytest.raises(ParameterError, match="too small"):
        gaussian_measurement(4, 1e-300, 1e-300)


def test_gaussian_histogram_at_epsilon_80_on_the_command_line(
    demo_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The reported command: rc 3, "internal error (OpenDPException: Overflow ...)"."""
    out_dir = tmp_path / "g"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", demo_csv, "--schema", SCHEMA, "-a", "dp-histogram",
        "--model", "dp=80,1e-6", "-O", "mechanism=gaussian", "-O", LEVELS, "--out", out_dir,
    )  # fmt: skip
    assert code == 0, err
    assert "error" not in err and "Warning" not in err
    dp = json.loads((out_dir / "release.json").read_text())["dp"]
    assert dp["privacy_map"] == opendp_gaussian_loss(dp["scale"], 1e-6, SQRT2) <= 80


# -- item: dp-marginals with the Gaussian refused its own release --------------------------------
@pytest.mark.parametrize("eps", [5.0, 100.0])
def test_gaussian_marginals_compose_within_the_target(
    eps: float, demo_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Three marginals at delta 1e-6: each got 1e-6/3, which sum to 1.0000000000000002e-06 >
    1e-06, and the release refused itself ("achieved 5, delta 1e-06 ... VIOLATED"). The
    parts recorded in release.json compose (summed here) to at most the target."""
    out_dir = tmp_path / "m"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", demo_csv, "--schema", SCHEMA, "-a", "dp-marginals",
        "--model", f"dp={eps:g},1e-6", "-O", "mechanism=gaussian",
        "-O", "marginals=age+sex;zip;nationality", "-O", "levels=age:4,sex:1", "--out", out_dir,
    )  # fmt: skip
    assert code == 0, err
    parts = json.loads((out_dir / "release.json").read_text())["dp"]["parts"]
    assert len(parts) == 3
    assert math.fsum(p["delta"] for p in parts) <= 1e-6
    assert math.fsum(p["privacy_map"] for p in parts) <= eps


def test_split_delta_sums_to_at_most_delta() -> None:
    """Exact sums (Fractions of the floats) never pass the target; each share stays within a
    few ulps of its proportional value."""
    from kerckhoffs.dp.marginals import split_delta

    for parts in range(1, 13):
        for delta in (1e-6, 1e-9, 0.3, 1e-300):
            shares = [float(1 + j % 3) for j in range(parts)]
            got = split_delta(delta, shares)
            assert sum(Fraction(d) for d in got) <= Fraction(delta)
            total = sum(shares)
            for d, s in zip(got, shares, strict=True):
                assert d == pytest.approx(delta * s / total, rel=1e-14)
    assert split_delta(0.0, [1.0, 2.0]) == [0.0, 0.0]


def _numbers(line: str) -> tuple[float, float]:
    """The target epsilon and the achieved value as printed in a summary line."""
    target = re.search(r"epsilon=([0-9.e+-]+)", line)
    achieved = re.search(r"achieved ([0-9.e+-]+)", line)
    assert target and achieved, line
    return float(target[1]), float(achieved[1])


def test_a_violation_prints_the_digits_that_show_the_excess() -> None:
    """ "achieved 5, delta 1e-06 ... VIOLATED" against a target of 5 and 1e-06 contradicted
    itself. Read back as numbers, the printed values show the excess."""
    over_delta = DifferentialPrivacy(5, 1e-6).evaluate_loss((5.0, 1e-6 + 2e-22), "substitution")
    line = over_delta.summary()
    shown = re.search(r"delta ([0-9.e+-]+) \(above ([0-9.e+-]+)\)", line)
    assert shown and float(shown[1]) > float(shown[2]) == 1e-6, line
    assert "VIOLATED" in line and "group" not in line  # the release, not a group
    for target, loss in ((5.0, 5.000000000000001), (0.99999999, 1.0), (1.0, 1.0000000000000002)):
        for model, nb in ((DifferentialPrivacy(target), "substitution"),
                          (LabelDifferentialPrivacy(target), "sensitive-value")):  # fmt: skip
            result = model.evaluate_loss((loss, 0.0), nb)
            assert not result.satisfied
            printed_target, printed = _numbers(result.summary())
            assert printed_target == target and printed > printed_target, result.summary()
    ok = DifferentialPrivacy(5).evaluate_loss((4.9999, 0.0), "add-remove")
    assert ok.summary().endswith("— ok")


def test_huge_numbers_print_as_exponents(
    demo_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """dp=1e308 printed its epsilon as a 309-digit integer."""
    assert format_number(1e308) == "1e+308" and format_number(123456.0) == "123456"
    code, out, err = run_cli(
        monkeypatch, capsys, "anonymize", demo_csv, "--schema", SCHEMA, "-a", "dp-histogram",
        "--model", "dp=1e308", "-O", LEVELS, "--out", tmp_path / "h",
    )  # fmt: skip
    assert code == 0, err
    assert "1e+308" in out and not re.search(r"\d{20}", out + err), out


def test_too_large_a_budget_says_so() -> None:
    """A 400-digit budget was "epsilon must be a positive number"."""
    for budget in ("9" * 400, 10**400, "1e400"):
        with pytest.raises(ParameterError, match="too large") as info:
            parse_budget(budget)
        assert len(str(info.value)) < 300
    with pytest.raises(ParameterError, match="too large"):
        check_budget(10**400)
    with pytest.raises(ParameterError, match="positive"):
        parse_budget("-1")


def test_violating_groups_are_counted_with_separators() -> None:
    result = ModelResult("k-anonymity", "k=5", 1.0, np.ones(2000), np.arange(2000) < 247, True)
    assert "VIOLATED in 1,753 group(s)" in result.summary()


# -- the ledger's file -----------------------------------------------------------------------------
def test_a_ledger_in_a_missing_folder_is_refused(
    demo_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A typo in the folder made the folder and a fresh ledger (everyone's budget full again),
    rc 0 with only a note. Now one line naming the folder, nothing created, nothing written;
    in an existing folder a new ledger still starts with a note."""
    args = ["anonymize", demo_csv, "--schema", SCHEMA, "-a", "dp-histogram", "-m", "dp=1",
            "-O", LEVELS]  # fmt: skip
    missing = tmp_path / "ledgr" / "sub" / "L.json"
    code, _, err = run_cli(monkeypatch, capsys, *args, "-o", tmp_path / "a", "--ledger", missing)
    assert code == 2 and err.count("\n") == 1, err
    assert "ledgr" in err and "does not exist" in err
    assert not (tmp_path / "ledgr").exists() and not (tmp_path / "a").exists()
    with pytest.raises(InputError, match="does not exist"):
        kh.publish(generate_hospital(30, seed=0), tmp_path / "b", missing,
                   schema=hospital_schema(), algorithm="dp-histogram", models=["dp=1"],
                   options={"levels": LEVELS.split("=")[1]})  # fmt: skip
    assert not (tmp_path / "ledgr").exists() and not (tmp_path / "b").exists()
    code, _, err = run_cli(
        monkeypatch, capsys, *args, "-o", tmp_path / "c", "--ledger", tmp_path / "L.json"
    )
    assert code == 0 and "note:" in err and "new ledger" in err, err


def test_a_hard_linked_ledger_is_refused_not_split(
    demo_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``ln h1.json h2.json`` then a run through h2: the atomic rename gave h2 a new file and
    h1 kept the old accounts. Now refused in one line, both names still one file; reading it
    (``budget``) is fine."""
    args = ["anonymize", demo_csv, "--schema", SCHEMA, "-a", "dp-histogram", "-m", "dp=1",
            "-O", LEVELS]  # fmt: skip
    h1, h2 = tmp_path / "h1.json", tmp_path / "h2.json"
    assert run_cli(monkeypatch, capsys, *args, "-o", tmp_path / "a", "--ledger", h1)[0] == 0
    os.link(h1, h2)
    code, _, err = run_cli(monkeypatch, capsys, *args, "-o", tmp_path / "b", "--ledger", h2)
    assert code == 2 and err.count("\n") == 1 and "hard link" in err, err
    assert os.path.samefile(h1, h2) and len(Ledger.load(h1).entries) == 1
    assert not (tmp_path / "b").exists()
    led = Ledger.load(h1)
    with pytest.raises(InputError, match="hard link"):  # the library's save refuses too
        led.record("c", 1.0, 0.0, ["P1"])
    assert len(led.entries) == 1
    assert os.path.samefile(h1, h2) and len(Ledger.load(h2).entries) == 1
    assert run_cli(monkeypatch, capsys, "budget", h1)[0] == 0


def test_sums_beyond_a_float_saturate_without_warnings(tmp_path: Path) -> None:
    """Two releases at epsilon 1e308 made numpy print "RuntimeWarning: overflow encountered
    in add" beside the output (ledger totals, the budget filter). The totals are inf (over
    any budget), silently."""
    ledger = tmp_path / "L.json"
    options = {"levels": LEVELS.split("=")[1]}
    data = generate_hospital(30, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # b's budget filter adds 1e308 to a's 1e308 (everyone is left out of b); c charges
        # everyone again, so the totals pass the largest float
        for name, budget in (("a", None), ("b", 1.7e308), ("c", None)):
            kh.publish(data, tmp_path / name, ledger, schema=hospital_schema(),
                       algorithm="dp-histogram", models=["dp=1e308"], budget=budget,
                       options=options)  # fmt: skip
        led = Ledger.load(ledger)
        spent = led.spent()
        check = led.would_exceed(data["patient_id"], 1e308, 0.0, budget=1.7e308)
    assert np.isinf(spent["epsilon"]).all() and bool(check)


# -- small ones ------------------------------------------------------------------------------
def test_the_schema_wide_drop_refusal_names_the_setting() -> None:
    """It named column 'age' for a setting at the top of the schema."""
    base = hospital_schema()
    wide = dataclasses.replace(base, missing=MissingPolicy.DROP)
    table = Table.encode(generate_hospital(20, seed=0), wide)
    with pytest.raises(ParameterError) as info:
        refuse_missing_drop(table, "dp-histogram")
    assert "schema-wide" in str(info.value) and "'age'" not in str(info.value)
    zip_drops = base.with_column(
        dataclasses.replace(base.column("zip"), missing=MissingPolicy.DROP)
    )
    table = Table.encode(generate_hospital(20, seed=0), zip_drops)
    with pytest.raises(ParameterError, match="column 'zip' sets"):
        refuse_missing_drop(table, "dp-histogram")


def test_bad_mass_refuses_nan() -> None:
    """``bad_mass(nan)`` returned 1/2 (NaN compares false, so only undefined pairs counted)."""
    from kerckhoffs.dp.semantic import random_record

    report = semantic_privacy(random_record(), uniform_prior((0, 1), 3), default=0)
    for bad in (math.nan, np.float64("nan"), "0.5"):
        with pytest.raises(ParameterError, match="threshold"):
            report.bad_mass(bad)  # type: ignore[arg-type]
    assert report.bad_mass(Fraction(1, 2)) == Fraction(1, 2)
    assert report.bad_mass(np.float64(0.5)) == Fraction(1, 2)
