"""Checks on Dask (kerckhoffs.engines.dask_check) equal the in-memory checks: for random
tables and every model, the same achieved values, per-group measures and detail lines, for
groups given per row and for the table as it stands (each distinct QI vector a group)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.engines.dask_check import check_dask
from kerckhoffs.engines.dask_table import encode_dask
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    ModelResult,
    MPrivacy,
    RecursiveCLDiversity,
    TCloseness,
)
from kerckhoffs.release import Partition, Release

dd = pytest.importorskip("dask.dataframe")

MODELS = [
    KAnonymity(2),
    AlphaKAnonymity(0.6, 2),
    LDiversity(2),
    DistinctLDiversity(2),
    EntropyLDiversity(1.5),
    RecursiveCLDiversity(3, 2),
    TCloseness(0.4),
    MConfidentiality(2),
    MPrivacy(1, [KAnonymity(2)]),
]


def random_frame(seed: int) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 20 + int(rng.integers(2, 12)), n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.integers(0, int(rng.integers(1, 5)), n),
            "disease": rng.choice(["a", "b", "c", "d"][: int(rng.integers(2, 5))], n),
            "site": rng.choice(["p", "q", "r"], n),
        }
    )
    numeric_sa = bool(rng.integers(0, 2))
    if numeric_sa:
        df["disease"] = rng.integers(0, 5, n)
    schema = Schema.build(
        {"age": {}, "sex": {}, "zip": {"kind": "numeric"}},
        "disease",
        provider="site",
        sensitive_values=None if numeric_sa or seed % 3 else ["a"],
    )
    return df, schema


def same(a: ModelResult, b: ModelResult) -> None:
    assert (a.model, a.parameter, a.detail, a.higher_is_better) == (
        b.model,
        b.parameter,
        b.detail,
        b.higher_is_better,
    )
    assert a.achieved == b.achieved or (np.isnan(a.achieved) and np.isnan(b.achieved))
    np.testing.assert_array_equal(a.group_values, b.group_values)
    np.testing.assert_array_equal(a.group_ok, b.group_ok)


def models_for(table: Table) -> list[Any]:
    chosen = []
    for m in MODELS:
        if isinstance(m, MPrivacy) and not table.sensitive.all():
            continue  # (refused on a sensitive subset with frequency l; k is fine but skip)
        chosen.append(m)
    return chosen


@pytest.mark.parametrize("seed", range(4))
def test_given_groups(dask_client: Any, seed: int) -> None:
    df, schema = random_frame(seed)
    table = Table.encode(df, schema)
    rng = np.random.default_rng(100 + seed)
    n_groups = int(rng.integers(1, max(2, table.n // 3)))
    labels = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, table.n - n_groups)])
    rng.shuffle(labels)
    parts = int(rng.integers(1, 5))
    dt = encode_dask(dd.from_pandas(df, npartitions=parts), schema, dask_client)
    offsets = np.concatenate([[0], np.cumsum(dt.lengths)])
    groups = [
        dask_client.scatter(labels[offsets[i] : offsets[i + 1]], hash=False)
        for i in range(len(dt.parts))
    ]
    models = models_for(table)
    got = check_dask(dt, models, groups, n_groups)
    expected = Release(table, Partition(labels.astype(np.int32))).check(models)
    assert got.n_groups == n_groups
    for a, b in zip(got.results, expected, strict=True):
        same(a, b)


@pytest.mark.parametrize("seed", range(2))
def test_table_as_it_stands(dask_client: Any, seed: int) -> None:
    df, schema = random_frame(50 + seed)
    table = Table.encode(df, schema)
    dt = encode_dask(dd.from_pandas(df, npartitions=3), schema, dask_client)
    models = models_for(table)
    got = check_dask(dt, models)
    release = Release(table, Partition.by_qi(table))
    assert got.n_groups == release.partition.n_groups
    for a, b in zip(got.results, release.check(models), strict=True):
        same(a, b)


def test_validation_on_the_whole_table(dask_client: Any) -> None:
    df, schema = random_frame(7)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
    with pytest.raises(ParameterError, match="larger than the table"):
        check_dask(dt, [KAnonymity(10_000)])
