"""The Dask table (kerckhoffs.engines.dask_table): codes and column encodings equal to
Table.encode on the whole table, whatever the partitioning; the rows stay on the workers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.engines.dask_table import encode_dask
from kerckhoffs.errors import InputError, SchemaError

dd = pytest.importorskip("dask.dataframe")

CITY = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]], "city")


def frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "height": np.round(rng.normal(170, 10, n), 1),
            "city": rng.choice(["a1", "a2", "b1"], n),  # b2: a leaf no row holds
            "zip": rng.choice([101, 7, 33, 2000], n),  # numeric data, declared categorical
            "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma"], n),
            "site": rng.choice(["h2", "h1", "h3"], n),
        }
    )


SCHEMA = Schema.build(
    {
        "age": {"kind": "numeric"},
        "height": {},
        "city": {"kind": "categorical", "hierarchy": CITY},
        "zip": {"kind": "categorical"},
    },
    "disease",
    provider="site",
    sensitive_values=["hiv", "cancer"],
)


def same_table(a: Table, b: Table) -> None:
    assert np.array_equal(a.qi, b.qi)
    assert np.array_equal(a.sa, b.sa)
    assert np.array_equal(a.sensitive, b.sensitive)
    for x, y in zip((*a.qi_columns, a.sa_column), (*b.qi_columns, b.sa_column), strict=True):
        assert x.kind == y.kind
        assert [str(v) for v in x.values] == [str(v) for v in y.values], x.name
    assert np.array_equal(np.asarray(a.provider_values), np.asarray(b.provider_values))
    assert np.array_equal(a.provider, b.provider)
    assert np.array_equal(a.row_ids, b.row_ids)


@pytest.mark.parametrize(("seed", "parts"), [(0, 1), (1, 3), (2, 7)])
def test_codes_equal_the_in_memory_encoding(dask_client: Any, seed: int, parts: int) -> None:
    df = frame(seed, 300)
    # a partition that holds few distinct values: its local codes differ from the global ones
    df.loc[:40, "age"] = 50
    dt = encode_dask(dd.from_pandas(df, npartitions=parts), SCHEMA, dask_client)
    assert dt.n == 300 and len(dt.parts) == parts
    same_table(dt.compute(), Table.encode(df, SCHEMA))


def test_missing_values_dropped_or_made_a_category(dask_client: Any) -> None:
    df = frame(3, 200)
    df["city"] = df["city"].astype(object)
    df.loc[[5, 150], "age"] = np.nan
    df.loc[[7, 190], "zip"] = np.nan
    schema = Schema.build(
        {
            "age": {"kind": "numeric", "missing": "drop"},
            "zip": {"kind": "categorical", "missing": "category"},
            "city": {"kind": "categorical", "hierarchy": CITY},
        },
        "disease",
    )
    dt = encode_dask(dd.from_pandas(df, npartitions=4), schema, dask_client)
    whole = Table.encode(df, schema)
    assert dt.n == 198
    same_table(dt.compute(), whole)


def test_parquet_directory(dask_client: Any, tmp_path: Any) -> None:
    df = frame(4, 250)
    for i, chunk in enumerate(np.array_split(np.arange(250), 3)):
        df.iloc[chunk].to_parquet(tmp_path / f"part.{i}.parquet")
    dt = encode_dask(str(tmp_path / "*.parquet"), SCHEMA, dask_client)
    same_table(dt.compute(), Table.encode(df, SCHEMA))


def test_parquet_files_read_by_row_groups_with_missing_texts(
    dask_client: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are read here, text columns from Parquet's dictionary pages as categoricals:
    the codes are still Table.encode's on the whole table read by pandas, with missing texts
    (the schema's missing policies), empty texts, "NA" and numbers stored as text; a file's
    row groups are split into partitions of about PART_ROWS rows."""
    from kerckhoffs.engines import dask_table

    df = frame(7, 400)
    df["city"] = df["city"].astype(object)
    df.loc[[3, 250], "city"] = None  # missing: "category" makes it a value
    df["zip"] = df["zip"].astype(str).astype(object)  # numbers stored as text
    df.loc[[9, 300], "zip"] = None  # missing: "drop" drops the row
    df.loc[[12, 330], "city"] = ""  # an empty text is a value in Parquet
    df.loc[[11, 320], "disease"] = "NA"  # a real value, not missing
    schema = Schema.build(
        {
            "age": {"kind": "numeric"},
            "city": {"kind": "categorical", "missing": "category"},
            "zip": {"kind": "categorical", "missing": "drop"},
        },
        "disease",
        provider="site",
    )
    files = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    df.iloc[:150].to_parquet(files[0], row_group_size=40)
    df.iloc[150:].to_parquet(files[1], row_group_size=60)
    monkeypatch.setattr(dask_table, "PART_ROWS", 100)
    assert dask_table.parquet_parts(files) == [
        (str(files[0]), [0, 1], 0),
        (str(files[0]), [2, 3], 80),
        (str(files[1]), [0], 0),
        (str(files[1]), [1], 60),
        (str(files[1]), [2], 120),
        (str(files[1]), [3, 4], 180),
    ]  # fmt: skip (groups of 40 and 60 rows, b's last two 60 + 10; then the file's rows before)
    first = dask_table._read_part(str(files[0]), [0], "a.parquet")
    assert len(first) == 40 and isinstance(first["city"].dtype, pd.CategoricalDtype)
    whole = Table.encode(pd.concat([pd.read_parquet(f) for f in files], ignore_index=True), schema)
    dt = encode_dask(files, schema, dask_client)
    assert len(dt.parts) == 6 and dt.n == whole.n == 398
    same_table(dt.compute(), whole)


def test_a_file_that_is_not_parquet_is_one_line(dask_client: Any, tmp_path: Any) -> None:
    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match=r"x\.parquet: not a readable Parquet file"):
        encode_dask([bad], SCHEMA, dask_client)


def test_errors_name_the_partition(dask_client: Any) -> None:
    df = frame(5, 100)
    df["age"] = df["age"].astype(object)
    df.loc[80, "age"] = "old"
    with pytest.raises(InputError, match=r"partition 1: column 'age' is numeric but data row"):
        encode_dask(dd.from_pandas(df, npartitions=2), SCHEMA, dask_client)
    bad = Schema.build({"age": {}}, "disease", sensitive_values=["plague"])
    with pytest.raises(SchemaError, match="sensitive value 'plague' does not occur"):
        encode_dask(dd.from_pandas(frame(6, 50), npartitions=2), bad, dask_client)
