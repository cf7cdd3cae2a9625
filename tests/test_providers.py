"""Providers in the data (paper 003, spec mprivacy.md 3.10 and 5.1): assign_providers (no
provider empty, reproducible from a seed, uniform vs Exp(1) sizes), the loaders' providers=
option and ``datasets prepare --providers``; the provider column is never published (spec 9,
A19)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from cli_runner import run_cli
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.datasets import assign_providers, load_adult, with_providers
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import DistinctLDiversity, KAnonymity

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "providers"


def test_as_many_records_as_providers_gives_each_one_record() -> None:
    s = assign_providers(10, 10, "exponential", seed=4)
    assert sorted(s.tolist()) == [f"P{i:02d}" for i in range(1, 11)]


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(1, 12),
    st.integers(0, 200),
    st.sampled_from(["uniform", "exponential"]),
    st.integers(0, 2**32),
)
def test_no_provider_empty_and_same_seed_same_assignment(
    n: int, extra: int, split: str, seed: int
) -> None:
    rows = n + extra
    s = assign_providers(rows, n, split, seed=seed)
    assert len(s) == rows and s.name == "provider"
    assert s.nunique() == n  # every provider holds at least one record
    assert s.equals(assign_providers(rows, n, split, seed=seed))
    assert s.equals(assign_providers(rows, n, split, seed=np.random.default_rng(seed)))


def test_uniform_sizes_are_equal_and_exponential_ones_are_not() -> None:
    rows, n = 100_000, 10
    cv = {}
    for split in ("uniform", "exponential"):
        per_seed = []
        for seed in range(20):
            sizes = assign_providers(rows, n, split, seed=seed).value_counts().to_numpy()
            per_seed.append(sizes.std() / sizes.mean())
        cv[split] = float(np.mean(per_seed))
    # uniform: multinomial noise only, sd/mean about sqrt(n / rows) = 0.01
    assert cv["uniform"] < 0.03
    # Exp(1) weights: the sizes' coefficient of variation is that of the weights, about 1
    assert 0.5 < cv["exponential"] < 1.5


def test_keeps_the_index_and_refuses_bad_input() -> None:
    df = pd.DataFrame({"a": range(5)}, index=[10, 11, 12, 13, 14])
    assert assign_providers(df, 2, seed=0).index.tolist() == [10, 11, 12, 13, 14]
    assert "provider" in with_providers(df, 2, seed=0).columns
    assert with_providers(df, None) is df
    with pytest.raises(ParameterError, match="3 providers need at least 3 records"):
        assign_providers(2, 3)
    with pytest.raises(ParameterError, match="uniform or exponential"):
        assign_providers(5, 2, "zipf")
    with pytest.raises(InputError, match="already has a column"):
        with_providers(with_providers(df, 2, seed=0), 2)


def test_prepare_demo_with_providers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["datasets", "prepare", "demo", "--rows", "300", "--providers", "4"]
    args += ["--provider-split", "exponential", "--seed", "5"]
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "a.csv")
    assert code == 0, err
    code, _, _ = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    df = pd.read_csv(tmp_path / "a.csv")
    assert sorted(df["provider"].unique()) == ["P1", "P2", "P3", "P4"]
    plain = pd.read_csv(tmp_path / "a.csv").drop(columns="provider")
    run_cli(monkeypatch, capsys, "datasets", "prepare", "demo", "--rows", "300", "--seed", "5",
            "--out", tmp_path / "c.csv")  # fmt: skip
    pd.testing.assert_frame_equal(plain, pd.read_csv(tmp_path / "c.csv"))  # same rows
    code, _, err = run_cli(
        monkeypatch, capsys, "datasets", "prepare", "demo", "--providers", "2",
        "--provider-split", "zipf", "--out", tmp_path / "d.csv",
    )  # fmt: skip
    assert code == 2 and "--provider-split zipf" in err
    assert not (tmp_path / "d.csv").exists()


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="needs the UCI Adult files")
def test_adult_with_ten_exponential_providers() -> None:
    df = load_adult(DATA / "adult", providers=10, provider_split="exponential", seed=3)
    assert len(df) == 45_222
    sizes = df["provider"].value_counts()
    assert len(sizes) == 10 and sizes.sum() == 45_222
    again = load_adult(DATA / "adult", providers=10, provider_split="exponential", seed=3)
    assert df["provider"].equals(again["provider"])


def test_provider_column_is_never_published(tmp_path: Path) -> None:
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    df["hospital"] = df["hospital"].map(lambda p: f"Hospital-{p}-Xq")  # unmistakable values
    df["ward"] = "W"  # an 'other' column, published with include_other
    t = Table.encode(df, Schema.from_toml(EXAMPLE / "schema.toml"), keep_other=True)
    assert t.provider is not None
    part = Partition(np.array([0, 1, 0, 2, 2, 1, 0, 2, 1, 1], dtype=np.int32))
    rel = Release(t, part, models=(KAnonymity(3), DistinctLDiversity(2)))
    for name, frame in rel.frames(include_other=True).items():
        assert "hospital" not in frame.columns, name
        assert not frame.astype(str).apply(lambda c: c.str.contains("Hospital-")).any().any()
    rel.write(tmp_path / "out", include_other=True)
    files = sorted((tmp_path / "out").iterdir())
    assert {f.suffix for f in files} == {".csv", ".parquet", ".json"}
    for f in files:
        if f.suffix == ".parquet":
            back = pd.read_parquet(f)
            assert "hospital" not in back.columns
            assert not back.astype(str).apply(lambda c: c.str.contains("Hospital-")).any().any()
        else:
            text = f.read_text()
            assert "hospital" not in text and "Hospital-" not in text, f.name
    assert "ward" in pd.read_csv(tmp_path / "out" / "release.csv").columns  # others do go out
