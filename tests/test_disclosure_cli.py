"""Paper 002 (disclosure sets) in the toolkit: the lattice's disclosure option and its
registered variants, the disclosure-set attack, ``audit``, the ``disclosure`` command and
the demo section (spec ``exclusive.md`` 4.4-4.7; issue 13 items 4-6)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs import api
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.algorithms.lattice import chosen_node, decide, lattice
from kerckhoffs.attacks import disclosure_set_attack
from kerckhoffs.audits.random_worlds import with_sa
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.disclosure import PAPER_CHK, read_sequence
from kerckhoffs.errors import NothingReleased, ParameterError
from kerckhoffs.models import parse_model
from kerckhoffs.release import Partition, Provenance, Release, Scheme

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "disclosure"
# a lattice version of Table 1: age in 10-, 20- and 40-year bands (a chain of 5 nodes)
LATTICE_SCHEMA = """
[columns.name]
role = "identifier"
[columns.age]
role = "quasi"
kind = "numeric"
widths = [10, 20, 40]
[columns.condition]
role = "sensitive"
kind = "categorical"
"""
# found by search: distinct 2-diversity first passes at the 40-year bands, and knowing that
# the finer nodes failed pins some patients down (checked by brute force below)
LEAKY = ["flu", "gastritis", "flu", "flu", "tracheitis", "flu", "pneumonia"]
LEAKY += ["gastritis", "gastritis", "gastritis"]


@pytest.fixture(scope="module")
def table1() -> Table:
    return Table.from_csv(EX / "table1.csv", Schema.from_toml(EX / "schema.toml"))


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> tuple[Table, Path, Path]:
    d = tmp_path_factory.mktemp("leaky")
    (d / "schema.toml").write_text(LATTICE_SCHEMA)
    df = pd.read_csv(EX / "table1.csv")
    df["condition"] = LEAKY
    df.to_csv(d / "t.csv", index=False)
    return Table.from_csv(d / "t.csv", Schema.from_toml(d / "schema.toml")), d / "t.csv", d


def _brute_force(table: Table, models: list) -> tuple[int, np.ndarray]:  # type: ignore[type-arg]
    """Every table consistent with the naive lattice release (PER, by permuting SA values in
    each group), re-run through the naive lattice itself: the adversary's knowledge."""
    c = chosen_node(table, models)
    rel = lattice(table, models)
    groups = [np.flatnonzero(rel.partition.group == g) for g in range(rel.partition.n_groups)]
    perms = [sorted(set(itertools.permutations(table.sa[g].tolist()))) for g in groups]
    kept = []
    for combo in itertools.product(*perms):
        x = table.sa.copy()
        for g, vals in zip(groups, combo, strict=True):
            x[g] = vals
        try:
            if chosen_node(with_sa(table, x), models) == c:
                kept.append(x)
        except ParameterError:
            continue
    return len(kept), np.array(kept)


def test_lattice_default_is_naive_and_unchanged(leaky) -> None:  # type: ignore[no-untyped-def]
    table = leaky[0]
    models = [parse_model("distinct-l=2")]
    a, b = lattice(table, models), lattice(table, models, disclosure="naive")
    assert a.provenance.to_dict() == b.provenance.to_dict()
    assert "disclosure" not in a.provenance.parameters


def test_lattice_exclusive_refuses_the_leaky_table(leaky) -> None:  # type: ignore[no-untyped-def]
    table = leaky[0]
    models = [parse_model("distinct-l=2")]
    size, kept = _brute_force(table, models)
    share = max(int(np.bincount(kept[:, r]).max()) for r in range(table.n))
    check = decide(table, models, chosen_node(table, models), "exclusive")
    assert not check.shortcut
    assert check.disclosure_size == size
    assert check.max_share == Fraction(share, size) == 1
    with pytest.raises(NothingReleased, match="releases nothing"):
        lattice(table, models, disclosure="exclusive")
    with pytest.raises(NothingReleased):
        REGISTRY["lattice-exclusive"].run(table, models)


def test_lattice_exclusive_releases_table1_bands(tmp_path, table1) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "s.toml").write_text(LATTICE_SCHEMA)
    t = Table.from_csv(EX / "table1.csv", Schema.from_toml(tmp_path / "s.toml"))
    models = [parse_model("l=2")]
    size, _ = _brute_force(t, models)
    check = decide(t, models, chosen_node(t, models), "exclusive")
    assert check.disclosure_size == size == 160  # 288 - 128 (hand count: 8 * 8 * 2 pass g1)
    rel = REGISTRY["lattice-exclusive"].run(t, models)
    assert rel.provenance.parameters["disclosure"] == "exclusive"
    assert rel.provenance.parameters["released_index"] == check.released == 2
    assert rel.provenance.algorithm == "lattice-exclusive"


def test_shortcut_k_anonymity(leaky) -> None:  # type: ignore[no-untyped-def]
    table = leaky[0]
    models = [parse_model("k=2")]
    check = decide(table, models, chosen_node(table, models), "exclusive")
    assert check.shortcut and check.candidates == 0
    assert (
        REGISTRY["lattice-inclusive"].run(table, models).provenance.parameters["levels"]
        == lattice(table, models).provenance.parameters["levels"]
    )


def test_lattice_disclosure_bad_options(leaky) -> None:  # type: ignore[no-untyped-def]
    table = leaky[0]
    models = [parse_model("distinct-l=2")]
    with pytest.raises(ParameterError, match="disclosure must be one of"):
        lattice(table, models, disclosure="sometimes")
    with pytest.raises(ParameterError, match="suppression=0"):
        lattice(table, models, disclosure="exclusive", suppression=0.1)
    with pytest.raises(ParameterError, match="bound"):
        decide(table, models, chosen_node(table, models), "exclusive", limit=5)


def test_attack_finds_gastritis_leak(table1) -> None:  # type: ignore[no-untyped-def]
    seq = read_sequence(EX / "sequence.toml", table1.n)
    rel = Release(
        table1,
        Partition.from_labels(seq[1]),
        Scheme.GENERALIZATION,
        table1.sa,
        Provenance("naive", {}),
    )
    res = disclosure_set_attack(rel, seq, PAPER_CHK)
    hit = res.tuples[res.tuples["breached"]]
    assert hit["row"].tolist() == [4, 5]  # Ellen and Fen
    assert hit["sa_value"].tolist() == ["gastritis", "gastritis"]
    assert hit["posterior"].tolist() == [1.0, 1.0]
    assert res.details["disclosure_size"] == 16 and res.details["per_size"] == 144
    assert not res.safe


def test_audit_runs_disclosure_set_on_naive_lattice(leaky) -> None:  # type: ignore[no-untyped-def]
    table = leaky[0]
    rel = lattice(table, [parse_model("distinct-l=2")])
    report = api.audit(rel)
    assert not report.safe
    names = [r.attack for r in report.results]
    assert "disclosure-set" in names
    res = next(r for r in report.results if r.attack == "disclosure-set")
    assert res.max_posterior == 1.0
    # an exclusive release is not the naive publisher's: not run, with the reason
    ok = REGISTRY["lattice-exclusive"].run(table, [parse_model("k=2")])
    skipped = dict(api.audit(ok).skipped)
    assert "naive lattice" in skipped["disclosure-set"]


def test_cli_disclosure(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "disclosure",
        str(EX / "table1.csv"),
        "-s",
        str(EX / "schema.toml"),
        "--sequence",
        str(EX / "sequence.toml"),
    )
    assert code == 0
    assert "19/25" in out and "144" in out and "432" in out
    assert "nothing" in out


def test_cli_disclosure_bad_input(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(
        monkeypatch, capsys, "disclosure", str(EX / "table1.csv"), "-s", str(EX / "schema.toml")
    )
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_cli_anonymize_nothing_released(monkeypatch, capsys, leaky, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, csv, d = leaky
    out = tmp_path / "rel"
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "anonymize",
        str(csv),
        "-s",
        str(d / "schema.toml"),
        "-a",
        "lattice-exclusive",
        "-m",
        "distinct-l=2",
        "-o",
        str(out),
    )
    assert code == 1
    assert "releases nothing" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
