"""``kh.anonymize(ddf, ...)`` on a Dask DataFrame: the same partition as on the pandas frame,
a release checked on the workers, written from its files, and the refusals in one line."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import kerckhoffs as kh
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.release import Release

dd = pytest.importorskip("dask.dataframe")


def frame(n: int = 900, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "zip": rng.choice(["10001", "10002", "10003", "20001", "20002"], n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma"], n),
            "site": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to the groups' numbering (first-appearance numbering of both)."""
    return bool(np.array_equal(pd.factorize(a)[0], pd.factorize(b)[0]))


def dask_groups(client: Any, release: Any) -> np.ndarray:
    return np.concatenate(client.gather(release.groups.groups))


@pytest.mark.parametrize(
    ("algorithm", "models", "options"),
    [
        ("mondrian", ["k=6", "l=3"], {}),  # the default categorical cut: values
        ("mondrian", ["k=6", "l=3"], {"categorical_cuts": "median"}),
        ("mondrian+", ["k=6", "l=2"], {}),
    ],
)
def test_a_dask_frame_gives_the_pandas_partition(
    dask_client: Any, tmp_path: Path, algorithm: str, models: list[str], options: dict[str, str]
) -> None:
    df = frame()
    kw: dict[str, Any] = {"quasi": ["age", "zip"], "sensitive": "disease",
                          "algorithm": algorithm, "models": models, **options}  # fmt: skip
    want = kh.anonymize(df, **kw)
    got = kh.anonymize(dd.from_pandas(df, npartitions=3), **kw)
    assert type(got).__name__ == "DaskRelease" and got.n == len(df)
    assert same_partition(dask_groups(dask_client, got), want.partition.group)
    assert got.n_groups == want.partition.n_groups > 5
    assert got.provenance.parameters == want.provenance.parameters
    assert [r.achieved for r in got.check()] == [r.achieved for r in want.check()]
    # written from its files, read back by the in-memory tools
    got.write(tmp_path / "rel")
    back = Release.from_published(tmp_path / "rel")
    assert [r.achieved for r in back.check(want.models)] == [r.achieved for r in want.check()]
    assert "age" in repr(got.table) and "groups=" in repr(got)


def test_provider_aware_on_a_dask_frame(dask_client: Any) -> None:
    df = frame(seed=9)
    schema = kh.Schema.build({"age": {"kind": "numeric"}, "zip": {}}, "disease", provider="site")
    kw: dict[str, Any] = {"schema": schema, "algorithm": "provider-aware",
                          "models": ["m-privacy=1", "k=5"]}  # fmt: skip
    want = kh.anonymize(df, **kw)
    got = kh.anonymize(dd.from_pandas(df, npartitions=2), **kw)
    assert same_partition(dask_groups(dask_client, got), want.partition.group)
    assert got.n_groups == want.partition.n_groups > 5
    assert "providers on" in got.notes[0] and "no record" in got.notes[0]
    assert all(r.satisfied for r in got.check())


def test_refusals_on_a_dask_frame(dask_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ddf = dd.from_pandas(frame(200), npartitions=2)
    kw: dict[str, Any] = {"quasi": ["age", "zip"], "sensitive": "disease", "models": ["k=5"]}
    with pytest.raises(ParameterError, match="the Dask engine runs mondrian, mondrian"):
        kh.anonymize(ddf, algorithm="anatomy", **kw)
    with pytest.raises(ParameterError, match="no option 'frob'"):
        kh.anonymize(ddf, algorithm="mondrian", frob=1, **kw)
    with pytest.raises(ParameterError, match="on Dask takes median and cuts"):
        kh.anonymize(ddf, algorithm="mondrian", categorical_cuts="hierarchy", **kw)
    with pytest.raises(ParameterError, match="publishes by generalization"):
        kh.anonymize(ddf, algorithm="mondrian", scheme="bucketization", **kw)
    with pytest.raises(ParameterError, match="k=500"):
        kh.anonymize(ddf, algorithm="mondrian", quasi=["age"], sensitive="disease",
                     models=["k=500"])  # fmt: skip

    def no_client() -> None:
        raise ValueError("No clients found")

    import distributed

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ParameterError, match="start one first"):
        kh.anonymize(ddf, algorithm="mondrian", **kw)


def alone(groups: np.ndarray, new: int) -> np.ndarray:
    """The first row moved to a new group of its own."""
    out = groups.copy()
    out[0] = new
    return out


def test_a_partition_that_does_not_hold_is_not_written(dask_client: Any, tmp_path: Path) -> None:
    """The check on the workers is independent of the algorithm: a release whose groups were
    tampered with after the run is refused by ``write`` and reported by ``check``."""
    df = frame(300)
    got = kh.anonymize(dd.from_pandas(df, npartitions=2), quasi=["age", "zip"],
                       sensitive="disease", algorithm="mondrian", models=["k=5"])  # fmt: skip
    moved = dask_client.submit(alone, got.groups.groups[0], got.n_groups)
    got.groups = dataclasses.replace(
        got.groups, groups=[moved, *got.groups.groups[1:]], n_groups=got.n_groups + 1
    )
    assert not got.check()[0].satisfied
    with pytest.raises(PrivacyCheckFailed):
        got.write(tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_check_of_a_dask_frame_equals_the_pandas_check(dask_client: Any) -> None:
    """``kh.check(ddf, ...)`` checks the table as it stands on the workers: every distinct
    (age, zip) is a group. k is the smallest group, as plain pandas counts it; every model's
    result and every group's row equal the in-memory check of the pandas frame."""
    df = frame(seed=5)
    kw: dict[str, Any] = {"quasi": ["age", "zip"], "sensitive": "disease",
                          "models": ["k=2", "l=2", "entropy-l=1.5", "t=0.6"]}  # fmt: skip
    got = kh.check(dd.from_pandas(df, npartitions=3), **kw)
    want = kh.check(df, **kw)
    sizes = df.groupby(["age", "zip"]).size()
    assert got.release is None and got.achieved["k"] == sizes.min() == 1
    assert got.achieved == want.achieved and got.satisfied == want.satisfied is False
    a, b = got.groups, want.groups
    assert len(a) == len(sizes) and int(a["size"].sum()) == len(df)
    key = list(a.columns)
    assert (
        a.sort_values(key).reset_index(drop=True).equals(b.sort_values(key).reset_index(drop=True))
    )
    assert repr(got) == repr(want)
    # m-privacy from the frame's provider column
    schema = kh.Schema.build({"age": {"kind": "numeric"}, "zip": {}}, "disease", provider="site")
    coarse = df.assign(age=df["age"] // 20 * 20)
    models = ["k=2", "m-privacy=1"]
    got = kh.check(dd.from_pandas(coarse, npartitions=2), schema=schema, models=models)
    want = kh.check(coarse, schema=schema, models=models)
    assert got.achieved == want.achieved and got.satisfied == want.satisfied


def test_check_refusals_on_a_dask_frame(dask_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ddf = dd.from_pandas(frame(200), npartitions=2)
    kw: dict[str, Any] = {"quasi": ["age", "zip"], "sensitive": "disease"}
    with pytest.raises(ParameterError, match="checking a Dask DataFrame needs models"):
        kh.check(ddf, **kw)
    with pytest.raises(ParameterError, match="providers= is for a release"):
        kh.check(ddf, models=["k=2"], providers=[0, 1], **kw)

    def no_client() -> None:
        raise ValueError("No clients found")

    import distributed

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ParameterError, match=r"checked on a dask\.distributed client's workers"):
        kh.check(ddf, models=["k=2"], **kw)
