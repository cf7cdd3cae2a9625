"""dp-synthetic: DP synthetic rows from OpenDP's MST over the schema's public domain.

OpenDP cannot be seeded, so rows are never compared exactly; the privacy map, the neighbour
distance it is computed at, the intervals and the fit errors are checked against independent
computations (closed forms, pandas group-bys of the published files). A small table of three
columns keeps each run to a few seconds (OpenDP's measurement is built once per parameters).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.loss import Measure
from kerckhoffs.dp.synthetic import dp_synthetic
from kerckhoffs.dp.synthetic_mbi import zcdp_rho
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models import DifferentialPrivacy, LabelDifferentialPrivacy
from kerckhoffs.release import SEED_KEYS, Release, SyntheticRelease

pytest.importorskip("mbi")

SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy([["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]], "zip")
DIS = Hierarchy([["Flu", "resp", "*"], ["Cold", "resp", "*"], ["Ulcer", "gut", "*"]], "disease")
LABELS = {"sex": {"M", "F"}, "zip": {"100", "101", "200"}, "disease": {"Flu", "Cold", "Ulcer"}}


def frame(n_per: int = 5) -> pd.DataFrame:
    base = pd.DataFrame(
        {
            "sex": ["M", "F", "M", "F", "M", "F"],
            "zip": ["100", "100", "100", "100", "101", "101"],
            "disease": ["Flu", "Flu", "Flu", "Cold", "Ulcer", "Ulcer"],
        }
    )
    return pd.concat([base] * n_per, ignore_index=True)


SCHEMA = Schema(
    (
        Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
        Column("zip", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ZIP),
        Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DIS),
    )
)


def table(n_per: int = 5) -> Table:
    return Table.encode(frame(n_per), SCHEMA)


@pytest.fixture(scope="module")
def pure() -> SyntheticRelease:
    """A pure-DP release at epsilon 1 remembering the model DP(1): the first release of the
    seed-1 run of tests/test_dp_synthetic_audit.py (140 rows of a random table over SCHEMA),
    made once for the session and only read here (a release costs one to three seconds of
    jax compiling its model fit)."""
    from test_dp_synthetic_audit import seed1_run

    return seed1_run()[1][0]


def test_refusals_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    t = table()
    run = REGISTRY["dp-synthetic"].run
    with pytest.raises(ParameterError, match="cannot be seeded"):
        run(t, [DifferentialPrivacy(1.0)], seed=3)
    with pytest.raises(ParameterError, match="label"):
        run(t, [LabelDifferentialPrivacy(1.0)])
    for eps, delta in ((0, 0), (-1, 0), (math.inf, 0), (1, 1.0), (1, -0.1)):
        with pytest.raises(ParameterError):
            dp_synthetic(t, eps, delta=delta)
    with pytest.raises(ParameterError, match="method"):
        dp_synthetic(t, 1.0, method="gan")
    with pytest.raises(ParameterError, match="contributions"):
        dp_synthetic(t, 1.0, contributions=0)
    with pytest.raises(ParameterError, match="sensitive-value"):
        dp_synthetic(t, 1.0, neighbours="sensitive-value")
    bare = Schema(
        (
            Column("sex", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=SEX),
            Column("zip", Role.QUASI, kind=Kind.CATEGORICAL),
            Column("disease", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=DIS),
        )
    )
    with pytest.raises(ParameterError, match="zip"):
        dp_synthetic(Table.encode(frame(), bare), 1.0)
    monkeypatch.setitem(sys.modules, "mbi", None)  # the extra not installed
    with pytest.raises(ParameterError, match=r"pip install 'kerckhoffs\[dp\]'"):
        dp_synthetic(t, 1.0)


def test_pure_release_records_opendps_map_at_two_rows(pure: SyntheticRelease) -> None:
    eps, delta = pure.privacy_loss()
    assert 0.999 < eps <= 1.0 and delta == 0.0
    assert pure.noise.sensitivity == 2  # one substitution: a symmetric distance of 2 rows
    loss = pure.accounting()
    assert (loss.measure, loss.rho, loss.neighbours, loss.contributions) == (
        Measure.PURE,
        None,
        "substitution",
        1,
    )
    assert [r.satisfied for r in pure.check([DifferentialPrivacy(1.0)])] == [True]
    assert [r.satisfied for r in pure.check([DifferentialPrivacy(0.99)])] == [False]
    with pytest.raises(ParameterError, match="groups"):
        from kerckhoffs.models import KAnonymity

        pure.check([KAnonymity(2)])


def test_rows_are_public_labels_sorted_and_fit_errors_recomputed(pure: SyntheticRelease) -> None:
    rows = pure.to_pandas()
    assert list(rows.columns) == ["sex", "zip", "disease"]
    for c, allowed in LABELS.items():
        assert set(rows[c]) <= allowed
    # rows sorted by public node code (domain order), so their order says nothing else
    domain = {"sex": ["M", "F"], "zip": ["100", "101", "200"], "disease": ["Flu", "Cold", "Ulcer"]}
    pos = np.stack([rows[c].map(domain[c].index).to_numpy() for c in domain], axis=1)
    assert np.array_equal(np.lexsort(pos.T[::-1]), np.arange(len(rows)))
    assert len(rows) == pure.table.n
    marg = pure.marginals()
    assert set(marg.columns) == {"marginal", "sex", "zip", "disease", "count", "lower", "upper"}
    for part in pure.noise.parts:
        attrs = part["attributes"]
        cells = marg[marg["marginal"] == part["name"]]
        assert len(cells) == part["cells"]
        # the interval is OpenDP's accuracy for the discrete Laplace of the recorded scale:
        # P(|X| > t) = 2 e^(-(t+1)/b) / (1 + e^(-1/b)) <= 5 % at its half-width t
        t, b = part["interval_half_width"], part["noise_scale"]
        assert 2 * math.exp(-(t + 1) / b) / (1 + math.exp(-1 / b)) <= 0.05 + 1e-12
        assert np.allclose(cells["upper"] - cells["lower"], 2 * t)
        synth = rows.groupby(attrs).size()
        noisy = cells.set_index(attrs)["count"]
        l1 = float(noisy.sub(synth.reindex(noisy.index, fill_value=0)).abs().sum())
        assert l1 == part["l1_synthetic_vs_noisy"]


def test_write_read_back_and_fail_closed(pure: SyntheticRelease, tmp_path: Path) -> None:
    with pytest.raises(PrivacyCheckFailed, match="release not written"):
        pure.write(tmp_path / "bad", [DifferentialPrivacy(0.5)])
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "rel"
    pure.write(out)
    names = {p.name for p in out.iterdir()}
    assert {"synthetic.csv", "synthetic.parquet", "marginals.csv", "release.json"} <= names
    meta = json.loads((out / "release.json").read_text())
    syn = meta["synthetic"]
    assert (syn["method"], syn["measure"], syn["neighbours"], syn["contributions"]) == (
        "mst",
        "max-divergence",
        "substitution",
        1,
    )
    assert syn["privacy_map"] == pure.noise.privacy_map and syn["opendp"] == "0.16.0"
    assert len(syn["cliques"]) == len(pure.noise.parts) >= 3

    def keys(o: object) -> set[str]:
        if isinstance(o, dict):
            return set(o) | {k for v in o.values() for k in keys(v)}
        return {k for v in o for k in keys(v)} if isinstance(o, list) else set()

    assert not keys(meta) & SEED_KEYS
    assert 140 not in [v for v in syn.values() if isinstance(v, int)]  # the true n is 140
    back = Release.from_published(out)
    assert isinstance(back, SyntheticRelease)
    assert back.privacy_loss() == pure.privacy_loss()
    assert back.accounting() == pure.accounting()
    pd.testing.assert_frame_equal(back.to_pandas(), pure.to_pandas().astype(str))
    assert [r.satisfied for r in back.check([DifferentialPrivacy(1.0)])] == [True]


def test_zcdp_add_remove_with_bounded_contributions() -> None:
    t = table(3)
    r = dp_synthetic(t, 1.0, delta=1e-6, neighbours="add-remove", contributions=2)
    eps, delta = r.privacy_loss()
    loss = r.accounting()
    assert loss.measure == Measure.ZCDP and loss.contributions == 2 and delta == 1e-6
    assert r.noise.sensitivity == 2  # two rows of one person, added or removed
    rho = loss.rho
    assert rho is not None and 0 < rho <= zcdp_rho(1.0, 1e-6)
    # Bun-Steinke's conversion, an upper bound on OpenDP's tighter one
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / 1e-6)) + 1e-12
    assert 0.99 < eps <= 1.0
    # the rho asked for is the largest that converts within epsilon (1 % more does not)
    from kerckhoffs.dp.synthetic_mbi import _approx_epsilon

    assert _approx_epsilon(zcdp_rho(1.0, 1e-6) * 1.01, 1e-6) > 1.0
    assert r.noise.mechanism.value == "gaussian"


def test_no_synthetic_rows_is_a_release_too() -> None:
    """The model's estimated total can round to no row (tiny table, small epsilon): the
    release is still built, written and read back, with its marginals."""
    from kerckhoffs.release.synthetic import qi_groups, synthetic_table

    empty = synthetic_table(
        pd.DataFrame({"sex": [], "zip": [], "disease": []}), ["sex", "zip"], "disease"
    )
    assert empty.n == 0 and qi_groups(empty).n == 0
