"""The release report: every number the page shows equals what the library computes when
called directly; the page fetches nothing and holds nothing private."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

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


def test_mondrian_report_numbers_are_the_librarys(demo: dict[str, Path]) -> None:
    people = pd.read_csv(demo["dir"] / "h.csv", dtype={"zip": str})
    schema = Schema.from_toml(DEMO)
    html = build_report(demo["mondrian"], knowledge=people, schema=DEMO).html()
    rel = kh.read_release(demo["mondrian"], DEMO)
    m = kh.measure(rel)
    r = reidentification_risk(rel, people, schema=schema)
    ncp = covered_ncp_by_qi(rel, people, schema)
    audit = kh.audit(rel, knowledge=people, schema=DEMO)
    expected: dict[str, Any] = {
        "release.scheme": "generalization",
        "release.algorithm": "mondrian",
        "release.quasi": ", ".join(rel.table.qi_names),
        "release.sensitive": "disease",
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
    expected |= {f"risk.{k}": v for k, v in r.to_dict().items()}
    check_page(html, expected)
    assert audit.verdict in html.replace("&#x27;", "'")
    # nothing private: no QI vector of a person, no disease list of a group
    assert "02116" not in html or "02116" not in people["zip"].tolist()


def test_dp_report_numbers_are_the_librarys(demo: dict[str, Path]) -> None:
    html = build_report(demo["dp"]).html()
    rel = kh.read_release(demo["dp"])
    eps, delta = rel.privacy_loss()  # type: ignore[attr-defined]
    noise = rel.noise  # type: ignore[attr-defined]
    counts = rel.to_pandas()
    chosen = rel.levels_chosen  # type: ignore[attr-defined]
    half = (counts["count_upper"] - counts["count_lower"]).to_numpy(dtype=float) / 2
    expected: dict[str, Any] = {
        "release.scheme": "dp",
        "release.algorithm": "dp-histogram",
        "release.quasi": ", ".join(rel.table.qi_names),
        "release.sensitive": "disease",
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
    check_page(html, expected)
    # a DP release publishes no row count, and the page shows none
    assert "rows published" not in html


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
