"""The release report: every number the page shows equals what the library computes when
called directly; the page fetches nothing and holds nothing private."""

from __future__ import annotations

import itertools
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kerckhoffs as kh
from kerckhoffs.cli import run
from kerckhoffs.data.schema import Schema
from kerckhoffs.datasets import assign_providers, generate_hospital
from kerckhoffs.metrics.ncp import covered_ncp_by_qi
from kerckhoffs.metrics.reidentification import reidentification_risk
from kerckhoffs.reporting import build_report

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo" / "schema.toml"
PROVIDERS = ROOT / "examples" / "demo" / "schema_providers.toml"


class Numbers(HTMLParser):
    """Every ``<span class="num" data-key data-value>TEXT</span>`` of a page, and every
    address an element names (src, href, url())."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: dict[str, tuple[str, str]] = {}
        self.addresses: list[str] = []
        self._key: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name in ("src", "href", "xlink:href", "action"):
            if a.get(name) and not str(a[name]).startswith("#"):
                self.addresses.append(str(a[name]))
        if tag == "span" and a.get("class") == "num":
            self._key = (str(a["data-key"]), str(a["data-value"]))

    def handle_data(self, data: str) -> None:
        if self._key is not None:
            self.shown[self._key[0]] = (self._key[1], data)
            self._key = None


def parse(html: str) -> Numbers:
    p = Numbers()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A Mondrian release, a DP release and a provider-aware release of demo data, written
    by the command line as a user would."""
    tmp = tmp_path_factory.mktemp("report")
    df = generate_hospital(800, seed=3)
    df.to_csv(tmp / "h.csv", index=False)
    df.assign(provider=assign_providers(df, 3, seed=1)).to_csv(tmp / "hp.csv", index=False)
    runs = {
        "mondrian": ["h.csv", "--schema", str(DEMO), "-a", "mondrian", "-m", "k=4"],
        "dp": ["h.csv", "--schema", str(DEMO), "-a", "dp-histogram", "-m", "dp=1"],
        "pa": [
            "hp.csv",
            "--schema",
            str(PROVIDERS),
            "-a",
            "provider-aware",
            "-m",
            "k=4",
            "-m",
            "m-privacy=2",
        ],
    }
    for name, args in runs.items():
        args[0] = str(tmp / args[0])
        assert run(["anonymize", *args, "--out", str(tmp / name)]) == 0
    return {"dir": tmp, **{k: tmp / k for k in runs}}


def close(shown: str, want: Any) -> bool:
    """The page's data-value against the library's value."""
    if isinstance(want, str):
        return shown == repr(want)
    return math.isclose(float(shown), float(want), rel_tol=1e-12, abs_tol=1e-12)


def text_agrees(text: str, want: Any, share: bool) -> bool:
    """The text a reader sees says the same number (rounded as printed)."""
    if isinstance(want, str):
        return text == want
    num = float(re.sub(r"[^0-9.eE+-]", "", text.replace(",", "")))
    value = 100 * float(want) if share else float(want)
    return math.isclose(num, value, rel_tol=5e-3, abs_tol=5e-3)


SHARES = re.compile(r"(at_risk|uniques|marketer|alpha|ncp)")


def check_page(html: str, expected: dict[str, Any]) -> None:
    page = parse(html)
    assert not page.addresses, page.addresses
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html and "@media print" in html
    assert set(page.shown) == set(expected), set(page.shown) ^ set(expected)
    for key, want in expected.items():
        value, text = page.shown[key]
        assert close(value, want), (key, value, want)
        assert text_agrees(text, want, bool(SHARES.search(key))), (key, text, want)


def grouped_expected(
    release_dir: Path, people: pd.DataFrame, schema_path: Path
) -> tuple[dict[str, Any], str]:
    """Every number the report of a generalized release should show, each computed by
    calling the library directly; and the audit's verdict line."""
    schema = Schema.from_toml(schema_path)
    rel = kh.read_release(release_dir, schema_path)
    m = kh.measure(rel)
    r = reidentification_risk(rel, people, schema=schema)
    ncp = covered_ncp_by_qi(rel, people, schema)
    audit = kh.audit(rel, knowledge=people, schema=schema_path)
    expected: dict[str, Any] = {
        "release.scheme": "generalization",
        "release.algorithm": rel.provenance.algorithm,
        "release.quasi": ", ".join(rel.table.qi_names),
        "release.sensitive": rel.table.sa_name,
        "release.rows": rel.table.n,
        "release.groups": rel.partition.n_groups,
        "measure.k": m.k,
        "measure.l": m.l,
        "measure.distinct_l": m.distinct_l,
        "measure.entropy_l": m.entropy_l,
        "measure.t": m.t,
        "measure.alpha": m.alpha,
        "utility.ncp": float(np.mean(list(ncp.values()))),
        **{f"utility.ncp.{q}": v for q, v in ncp.items()},
        **{f"attack.{a.attack}.compromised": a.compromised for a in audit.results},
        **{f"attack.{a.attack}.max_posterior": a.max_posterior for a in audit.results},
    }
    if schema.sensitive_values:
        expected["release.sensitive_values"] = ", ".join(sorted(schema.sensitive_values))
    expected |= {f"risk.{k}": v for k, v in r.to_dict().items()}
    return expected, audit.verdict


def dp_expected(release_dir: Path) -> dict[str, Any]:
    """Every number the report of a dp-histogram release should show, from the release."""
    rel = kh.read_release(release_dir)
    eps, delta = rel.privacy_loss()  # type: ignore[attr-defined]
    noise = rel.noise  # type: ignore[attr-defined]
    counts = rel.to_pandas()
    chosen = rel.levels_chosen  # type: ignore[attr-defined]
    half = (counts["count_upper"] - counts["count_lower"]).to_numpy(dtype=float) / 2
    expected: dict[str, Any] = {
        "release.scheme": "dp",
        "release.algorithm": "dp-histogram",
        "release.quasi": ", ".join(rel.table.qi_names),
        "release.sensitive": rel.table.sa_name,
        "dp.epsilon": eps,
        "dp.delta": delta,
        "dp.measure": noise.measure.value,
        "dp.neighbours": noise.neighbours.value,
        "dp.contributions": noise.contributions,
        "dp.mechanism": noise.mechanism.value,
        "dp.scale": noise.scale,
        "dp.sensitivity": noise.sensitivity,
        "dp.estimator": noise.estimator,
        "dp.cells": len(counts),
        "dp.half_width": float(np.median(half)),
        "dp.half_width_max": float(half.max()),
        "dp.levels": chosen["levels"],
        "dp.levels_epsilon": chosen["privacy_map"],
    }
    return expected


def test_mondrian_report_numbers_are_the_librarys(demo: dict[str, Path]) -> None:
    people = pd.read_csv(demo["dir"] / "h.csv", dtype={"zip": str})
    html = build_report(demo["mondrian"], knowledge=people, schema=DEMO).html()
    expected, verdict = grouped_expected(demo["mondrian"], people, DEMO)
    check_page(html, expected)
    assert "verified against them when this report read" in html
    rows_absent(html, demo["mondrian"])
    assert verdict in html.replace("&#x27;", "'")


def test_dp_report_numbers_are_the_librarys(demo: dict[str, Path]) -> None:
    html = build_report(demo["dp"]).html()
    check_page(html, dp_expected(demo["dp"]))
    # a DP release publishes no row count, and the page shows none
    assert "rows published" not in html
    rows_absent(html, demo["dp"])


def test_provider_aware_report_names_no_provider(demo: dict[str, Path]) -> None:
    people = pd.read_csv(demo["dir"] / "hp.csv", dtype={"zip": str})
    rep = build_report(demo["pa"], knowledge=people.drop(columns="provider"), schema=PROVIDERS)
    html = rep.html()
    for provider in people["provider"].astype(str).unique():
        assert f">{provider}<" not in html and f" {provider} " not in html
    verdicts = {v.key: v.text for s in rep.sections for v in s.verdicts}
    assert verdicts["model.m-privacy"].startswith("ok when published")
    assert verdicts["model.k-anonymity"].startswith("ok")
    assert parse(html).addresses == []


def test_cli_writes_once_and_refuses_overwrite(
    demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = demo["dir"] / "r.html"
    argv = ["report", str(demo["mondrian"]), "--out", str(out)]
    assert run(argv) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    before = out.read_bytes()
    capsys.readouterr()
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "exists" in err and "Traceback" not in err
    assert out.read_bytes() == before
    assert run(["report", str(demo["dir"] / "missing"), "--out", str(out) + "2"]) == 2
    assert not Path(str(out) + "2").exists()


def rows_absent(html: str, release_dir: Path) -> None:
    """No published row of the release appears in the page (its cells in file order)."""
    table = pd.read_csv(next(release_dir.glob("*.csv")), dtype=str, keep_default_na=False)
    text = re.sub(r"<[^>]+>", " ", html)
    for row in table.drop_duplicates().itertuples(index=False):
        cells = [str(c) for c in row]
        assert ", ".join(cells) not in text and ",".join(cells) not in text, cells


@pytest.fixture(scope="module")
def dp_more(demo: dict[str, Path]) -> dict[str, Path]:
    """Randomized response and DP marginals of the demo data (levels with public domains)."""
    tmp, h = demo["dir"], str(demo["dir"] / "h.csv")
    runs = {
        "rr": ["-a", "dp-rr", "-m", "dp=1", "-O", "levels=age:4,sex:1,nationality:2,zip:2"],
        "marg": ["-a", "dp-marginals", "-m", "dp=1", "-O", "marginals=zip+disease;nationality"],
    }
    for name, args in runs.items():
        argv = ["anonymize", h, "--schema", str(DEMO), *args, "--out", str(tmp / name)]
        assert run(argv) == 0
    return {k: tmp / k for k in runs}


def test_dp_rr_and_marginals_numbers_are_the_librarys(
    demo: dict[str, Path], dp_more: dict[str, Path]
) -> None:
    from kerckhoffs.dp.accuracy import accuracy_line, half_width

    for name, value, lo, hi in (
        ("rr", "estimate_count", "estimate_lower", "estimate_upper"),
        ("marg", "count", "count_lower", "count_upper"),
    ):
        rep = build_report(dp_more[name])
        html = rep.html()
        rel = kh.read_release(dp_more[name])
        noise = rel.noise  # type: ignore[attr-defined]
        counts = rel.to_pandas()
        half = (counts[hi] - counts[lo]).to_numpy(dtype=float) / 2
        eps, delta = rel.privacy_loss()  # type: ignore[attr-defined]
        expected: dict[str, Any] = {
            "release.scheme": "dp",
            "release.algorithm": rel.provenance.algorithm,
            "release.quasi": ", ".join(rel.table.qi_names),
            "release.sensitive": "disease",
            "dp.epsilon": eps,
            "dp.delta": delta,
            "dp.measure": noise.measure.value,
            "dp.neighbours": noise.neighbours.value,
            "dp.contributions": noise.contributions,
            "dp.mechanism": noise.mechanism.value,
            "dp.estimator": noise.estimator,
            "dp.cells": len(counts),
            "dp.half_width": float(np.median(half)),
            "dp.half_width_max": float(half.max()),
        }
        if name == "rr":  # randomized response adds no noise of a scale: its keep probability
            (part,) = noise.parts
            expected["dp.keep_probability"] = part["keep_probability"]
            assert value in counts
        else:
            expected |= {"dp.scale": noise.scale, "dp.sensitivity": noise.sensitivity}
            for part in noise.parts:
                key = "dp.part." + "+".join(part["attributes"])
                expected |= {
                    f"{key}.cells": part["cells"],
                    f"{key}.scale": part["scale"],
                    f"{key}.half_width": half_width(noise.mechanism.value, part["scale"]),
                }
        check_page(html, expected)
        verdicts = {v.key: v.text for s in rep.sections for v in s.verdicts}
        assert verdicts["dp.accuracy"] == accuracy_line(noise.estimator, noise.accuracy)
        assert "rows published" not in html
        rows_absent(html, dp_more[name])


def test_report_of_a_release_in_memory(demo: dict[str, Path]) -> None:
    """A release made in this session: NCP from its codes, the query error on its original
    table, m-privacy checked on its providers (named nowhere), no seal."""
    from kerckhoffs.metrics.ncp import ncp_by_qi
    from kerckhoffs.metrics.query_error import query_error

    people = pd.read_csv(demo["dir"] / "hp.csv", dtype={"zip": str})
    rel = kh.anonymize(
        people, schema=PROVIDERS, algorithm="provider-aware", models=["k=4", "m-privacy=1"]
    )
    rep = kh.report(rel)
    html = rep.html()
    ncp = ncp_by_qi(rel)
    err = query_error(rel, qd=min(3, rel.table.d))  # paper 000's workload
    values = parse(html).shown
    for q, v in ncp.items():
        assert close(values[f"utility.ncp.{q}"][0], v)
    assert close(values["utility.query_error_median"][0], err.median)
    assert close(values["utility.query_error_mean"][0], err.mean)
    assert close(
        values["risk.prosecutor_highest"][0], reidentification_risk(rel).prosecutor_highest
    )
    verdicts = {v.key: v.text for s in rep.sections for v in s.verdicts}
    mp = kh.check(rel, models=["m-privacy=1"]).results[0]
    assert verdicts["model.m-privacy"] == f"ok: achieved {mp.achieved_text} ({mp.detail})"
    for provider in people["provider"].astype(str).unique():
        assert provider not in re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    assert "no seal" in html


def test_release_object_read_back(demo: dict[str, Path]) -> None:
    """A release read back and given as an object: its cells are text, so no information
    loss is shown without a population (never 0 %), and the seal says it was not verified
    by the report."""
    rel = kh.read_release(demo["mondrian"], DEMO)
    html = kh.report(rel).html()
    assert not [k for k in parse(html).shown if k.startswith("utility.")]
    assert "did not verify the files itself" in html
    people = pd.read_csv(demo["dir"] / "h.csv", dtype={"zip": str})
    with_pop = parse(build_report(rel, knowledge=people, schema=DEMO).html()).shown
    ncp = covered_ncp_by_qi(rel, people, Schema.from_toml(DEMO))
    for q, v in ncp.items():
        assert close(with_pop[f"utility.ncp.{q}"][0], v)
    assert "utility.query_error_median" not in with_pop
    rows_absent(html, demo["mondrian"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5_000), min_size=1, max_size=60))
def test_size_bins_put_every_group_in_the_bar_its_label_names(sizes: list[int]) -> None:
    from kerckhoffs.reporting.plots import size_bins

    labels, counts = size_bins(np.asarray(sizes))
    assert len(labels) == len(counts) and int(counts.sum()) == len(sizes)
    ranges = [tuple(int(x) for x in lab.split("-")) for lab in labels]
    ranges = [(r[0], r[-1]) for r in ranges]
    assert all(a <= b for a, b in ranges)
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(ranges))
    for (a, b), n in zip(ranges, counts, strict=True):  # oracle: count each bar's sizes
        assert n == sum(a <= s <= b for s in sizes)
    assert ranges[0][0] == min(sizes) and ranges[-1][1] >= max(sizes)


def test_cli_refuses_before_any_work(
    demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing --out folder, a missing --other release, a population without the schema
    that says what the cells cover: one error line each, exit 2, nothing written."""
    out = demo["dir"] / "refused.html"
    rel, h = str(demo["mondrian"]), str(demo["dir"] / "h.csv")
    for args, says in (
        (["--out", str(demo["dir"] / "no" / "r.html")], "no such directory"),
        (["--other", str(demo["dir"] / "missing"), "--out", str(out)], "release not found"),
        (["--knowledge", h, "--out", str(out)], "needs --schema"),
    ):
        capsys.readouterr()
        assert run(["report", rel, *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and says in err and err.count("\n") == 1, err
        assert "report:" not in err  # refused before the first step
    assert not out.exists()


ADULT = ROOT.parent / "shared" / "data" / "adult"
ADULT_SCHEMA = ROOT / "examples" / "adult" / "schema.toml"


@pytest.mark.skipif(not ADULT.is_dir(), reason="shared data not present")
@pytest.mark.slow  # real data
def test_reports_on_adult_show_the_librarys_numbers(tmp_path: Path) -> None:
    """Mondrian on Adult with Adult as the population, and dp-histogram on Adult, through
    the command line: every number on the page is the library's, nothing is fetched."""
    from kerckhoffs.attacks.knowledge import Knowledge
    from kerckhoffs.datasets import load_adult

    people = load_adult(ADULT)
    people.to_csv(tmp_path / "adult.csv", index=False)
    data, sch = str(tmp_path / "adult.csv"), str(ADULT_SCHEMA)
    for name, model in (("mondrian", ["-m", "k=5", "-m", "l=2"]), ("dp-histogram", ["-m", "dp=1"])):
        argv = ["anonymize", data, "-s", sch, "-a", name, *model, "-o", str(tmp_path / name)]
        assert run(argv) == 0
    out = tmp_path / "m.html"
    argv = ["report", str(tmp_path / "mondrian"), "--knowledge", data, "--schema", sch]
    assert run([*argv, "--out", str(out)]) == 0
    population = Knowledge.from_path(tmp_path / "adult.csv").population
    expected, verdict = grouped_expected(tmp_path / "mondrian", population, ADULT_SCHEMA)
    check_page(out.read_text(), expected)
    assert verdict in out.read_text().replace("&#x27;", "'")
    assert run(["report", str(tmp_path / "dp-histogram"), "--out", str(tmp_path / "d.html")]) == 0
    check_page((tmp_path / "d.html").read_text(), dp_expected(tmp_path / "dp-histogram"))
