"""Randomness is secret (DESIGN.md section 5): no published file carries a
seed, a run without ``--seed`` draws fresh randomness, and ``audit`` reports a release whose
metadata reveals the seed of a randomized algorithm (the format kerckhoffs 0.1 wrote) as
UNSAFE by ``seed-replay``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli
from kerckhoffs import Partition, Provenance, Release
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.attacks.seed_replay import published_seed, seed_replay_attack
from kerckhoffs.datasets import generate_hospital, with_providers
from kerckhoffs.randomness import generator
from kerckhoffs.release import SEED_KEYS

# the demo schema with a provider column (three hospitals), for the m-privacy anonymizers
SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema_providers.toml"
SEED = 918273645  # a number no demo table contains

MODELS = {  # models each registered algorithm can enforce on 400 demo rows
    "anatomy": ["l=2"],
    "hilb": ["l=2"],
    "hilb+": ["l=2"],
    "hilb+strict": ["l=2"],
    "hilb++": ["l=2"],
    "hilb++strict": ["l=2"],
    "lattice": ["k=2"],
    "lattice-exclusive": ["k=2"],
    "lattice-inclusive": ["k=2"],
    "local-recoding": ["k=2"],
    "mask": ["k=5", "m=2"],
    "mask+": ["k=5", "m=2"],
    "mask++": ["k=5", "m=2"],
    "mdav": ["k=2"],
    "mondrian": ["k=2"],
    "mondrian+": ["l=2"],
    "mondrian++": ["l=2"],
    "provider-aware": ["k=5", "distinct-l=2", "m-privacy=1"],
    "mondrian-mprivacy": ["k=5", "distinct-l=2", "m-privacy=1"],
    "sequence": ["l=2"],
    "dp-histogram": ["dp=1"],
    "dp-marginals": ["dp=1"],
    "dp-rr": ["dp=1"],
    "dp-synthetic": ["dp=1"],
}
# options an algorithm needs (its candidate generalizations, by age)
OPTIONS = {
    "sequence": ["-O", f"sequence={SCHEMA.parents[0] / 'sequence_by_age.toml'}"],
    "dp-histogram": ["-O", "levels=age:4,sex:1,zip:1"],
    "dp-marginals": ["-O", "marginals=zip;zip+nationality", "-O", "levels=zip:1"],
    "dp-rr": ["-O", "levels=age:4,sex:1,zip:1"],
}
UNSEEDABLE = {"dp-histogram", "dp-marginals", "dp-rr", "dp-synthetic"}
"""OpenDP cannot be seeded: these refuse a seed, so nothing is published with it."""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    f = tmp_path_factory.mktemp("seeds") / "h.csv"
    with_providers(generate_hospital(400, 3), 3, "uniform", 3).to_csv(f, index=False)
    return f


def _keys(obj: object) -> set[str]:
    """Every key of a JSON object, at any depth."""
    if isinstance(obj, dict):
        return {str(k) for k in obj} | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


def test_every_algorithm_has_models_here() -> None:
    assert sorted(MODELS) == sorted(REGISTRY)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_no_published_file_contains_the_seed(
    name: str,
    data: Path,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    info = REGISTRY[name]
    out = tmp_path / "rel"
    models = [a for m in MODELS[name] for a in ("-m", m)] + OPTIONS.get(name, [])
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", data, "-s", SCHEMA, "-a", name, *models,
        "--seed", SEED, "-o", out,
    )  # fmt: skip
    if name in UNSEEDABLE:
        assert code == 2 and "cannot be seeded" in err and not out.exists()
        return
    assert code == 0, err
    if info.randomized:
        assert "warning: --seed" in err and "secret" in err
    else:
        assert "deterministic; --seed has no effect" in err
    files = sorted(p for p in out.iterdir())
    assert files and all(str(SEED).encode() not in p.read_bytes() for p in files)
    meta = json.loads((out / "release.json").read_text())
    assert not _keys(meta) & SEED_KEYS
    assert published_seed(meta) is None


@pytest.mark.parametrize("name", ["mondrian++", "anatomy", "hilb++strict", "mask"])
def test_runs_without_seed_differ(
    name: str,
    data: Path,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    """Fresh OS randomness on every run: two releases of the same table differ (with 400 rows
    the chance that two independent runs make the same random choices is negligible)."""
    models = [a for m in MODELS[name] for a in ("-m", m)]
    texts = []
    for run in ("a", "b"):
        code, _, err = run_cli(
            monkeypatch, capsys, "anonymize", data, "-s", SCHEMA, "-a", name, *models,
            "-o", tmp_path / run, "--format", "csv",
        )  # fmt: skip
        assert code == 0, err
        assert "seed" not in err
        stem = "release" if (tmp_path / run / "release.csv").exists() else "qit"
        texts.append((tmp_path / run / f"{stem}.csv").read_text())
    assert texts[0] != texts[1]


def test_same_seed_same_bytes_in_the_library(data: Path) -> None:
    """A seed is still for tests: same input + same seed = same release (no file written)."""
    import pandas as pd

    from kerckhoffs import Schema, Table

    table = Table.encode(pd.read_csv(data, dtype={"zip": str}), Schema.from_toml(SCHEMA))
    run = REGISTRY["mondrian++"].run
    from kerckhoffs.models import LDiversity

    a = run(table, [LDiversity(2)], seed=5)
    b = run(table, [LDiversity(2)], seed=np.random.default_rng(5))
    assert np.array_equal(a.partition.group, b.partition.group)


def test_generator_accepts_the_documented_seeds() -> None:
    assert generator(7).integers(1 << 30) == generator(7).integers(1 << 30)
    g = np.random.default_rng(1)
    assert generator(g) is g
    for bad, kind in ((-1, ValueError), (True, TypeError), ("7", TypeError)):
        with pytest.raises(kind):
            generator(bad)


def test_provenance_refuses_a_seed() -> None:
    for key in ("seed", "Seed", "random_state", "rng"):
        with pytest.raises(ValueError, match="must not carry a seed"):
            Provenance("anatomy", {key: 0})


# -- releases written by kerckhoffs 0.1 ------------------------------------------------------------
def _as_written_by_0_1(folder: Path, seed: int | None, algorithm: str) -> None:
    """Rewrite ``release.json`` the way kerckhoffs 0.1 wrote it: format 1, the seed under
    provenance, a plain list of files, no digests."""
    meta = json.loads((folder / "release.json").read_text())
    meta["format_version"] = 1
    meta["files"] = sorted(meta["files"])
    del meta["integrity"]
    meta["provenance"] = {
        "algorithm": algorithm,
        "parameters": meta["provenance"]["parameters"],
        "seed": seed,
        "version": "0.1.0",
    }
    (folder / "release.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def test_audit_of_a_0_1_release_with_its_seed_is_unsafe(
    data: Path,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    out = tmp_path / "old"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", data, "-s", SCHEMA, "-a", "mondrian++", "-m", "l=2",
        "-o", out,
    )  # fmt: skip
    assert code == 0, err
    _as_written_by_0_1(out, 0, "mondrian++")
    # format 1 records no digests: a downgraded release.json looks the same, so it is read
    # only when verification is turned off
    code, stdout, err = run_cli(monkeypatch, capsys, "audit", "-r", out, "--schema", SCHEMA)
    assert code == 2 and "format 1 (kerckhoffs 0.1)" in err and "--no-verify" in err, err
    code, stdout, err = run_cli(
        monkeypatch, capsys, "audit", "-r", out, "--schema", SCHEMA, "--no-verify"
    )
    assert code == 1
    last = " ".join(stdout.split()).rsplit("negative-association", 1)[-1]
    assert (
        "UNSAFE by seed-replay: release.json publishes the seed (provenance.seed = 0) of "
        "mondrian++, a randomized algorithm" in last
    )
    assert "format 1 (kerckhoffs 0.1) records no file digests" in err


def test_seed_replay_verdicts() -> None:
    df = with_providers(generate_hospital(50, 0), 3, "uniform", 0)
    from kerckhoffs import Schema, Table

    table = Table.encode(df, Schema.from_toml(SCHEMA))
    rel = Release(table, Partition.single(table.n))
    for meta, safe, words in [
        ({"provenance": {"algorithm": "anatomy", "seed": 3}}, False, "a randomized algorithm"),
        ({"provenance": {"algorithm": "mondrian", "seed": 3}}, True, "deterministic"),
        ({"provenance": {"algorithm": "arx", "parameters": {"random_state": 9}}}, False,
         "an algorithm kerckhoffs does not know"),
        ({"provenance": {"algorithm": "anatomy", "seed": None}}, True, "publishes no seed"),
    ]:  # fmt: skip
        rel = rel.with_published_metadata(meta)
        result = seed_replay_attack(rel)
        assert result.safe is safe and words in result.verdict(), result.verdict()
