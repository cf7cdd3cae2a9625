"""The Dask release writer (kerckhoffs.engines.dask_release): the parts hold the same groups
(cells and SA multisets) as the in-memory release of the same partition, read back and verified
by the in-memory reader; group ids and file order follow published content only; a model that
fails on the written files leaves nothing (fail closed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.engines.dask_mondrian import mondrian_dask
from kerckhoffs.engines.dask_release import write_dask_release
from kerckhoffs.engines.dask_table import encode_dask
from kerckhoffs.errors import PrivacyCheckFailed
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Provenance, Release

dd = pytest.importorskip("dask.dataframe")

CITY = [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]]


def frame(seed: int, n: int = 400) -> tuple[pd.DataFrame, Schema]:
    from kerckhoffs.data.hierarchy import Hierarchy

    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "city": rng.choice(["a1", "a2", "b1", "b2"], n),
            "disease": rng.choice(list("abcde"), n),
        }
    )
    schema = Schema.build(
        {"age": {}, "city": {"kind": "categorical", "hierarchy": Hierarchy(CITY, "city")}},
        "disease",
    )
    return df, schema


def content(df: pd.DataFrame, qi: list[str], sa: str) -> Counter:
    """Each group as (its cells, its sorted SA values): what a release shows, whatever its ids."""
    out: Counter = Counter()
    for _, g in df.groupby("group"):
        cells = tuple(str(g[c].iloc[0]) for c in qi)
        assert all((g[c].astype(str) == cells[i]).all() for i, c in enumerate(qi))
        out[(cells, tuple(sorted(map(str, g[sa]))))] += 1
    return out


@pytest.mark.parametrize("models", [[KAnonymity(4)], [LDiversity(2), KAnonymity(2)]])
def test_parts_hold_the_in_memory_release(dask_client: Any, tmp_path: Path, models: list) -> None:
    df, schema = frame(1)
    dt = encode_dask(dd.from_pandas(df, npartitions=3), schema, dask_client)
    groups = mondrian_dask(dt, models)
    results = write_dask_release(dt, groups, models, tmp_path / "out", Provenance("mondrian", {}))
    assert all(r.satisfied for r in results)
    split = write_dask_release(
        dt, groups, models, tmp_path / "parts", Provenance("mondrian", {}), n_parts=3
    )
    assert [r.achieved for r in split] == [r.achieved for r in results]
    three = Release.from_published(tmp_path / "parts").frames()["release"]
    assert content(three, ["age", "city"], "disease") == content(
        Release.from_published(tmp_path / "out").frames()["release"], ["age", "city"], "disease"
    )
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["release-00000.parquet", "release.json"]  # 400 rows: one part, 3 inputs
    back = Release.from_published(tmp_path / "out")  # verified against release.json
    assert back.table.n == len(df)
    expected = get("mondrian").run(Table.encode(df, schema), models)
    mine = back.frames()["release"]
    theirs = expected.frames()["release"]
    assert content(mine, ["age", "city"], "disease") == content(theirs, ["age", "city"], "disease")
    assert [r.achieved for r in back.check(models)] == [r.achieved for r in expected.check(models)]
    # rows sorted by (group, SA) in every part, parts are consecutive ranges of group ids
    last = -1
    for i in range(3):
        part = pd.read_parquet(tmp_path / "parts" / f"release-{i:05d}.parquet")
        assert part["group"].is_monotonic_increasing and part["group"].iloc[0] > last
        last = part["group"].iloc[-1]


def test_fails_closed(dask_client: Any, tmp_path: Path) -> None:
    df, schema = frame(2)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
    groups = mondrian_dask(dt, [KAnonymity(2)])
    with pytest.raises(PrivacyCheckFailed, match="not written"):
        write_dask_release(
            dt, groups, [KAnonymity(50)], tmp_path / "out", Provenance("mondrian", {})
        )
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging directory left


# -- a release in parts, checked on the workers ----------------------------------------------
def test_check_of_a_release_on_dask_equals_the_in_memory_check(
    dask_client: Any, tmp_path: Path
) -> None:
    from kerckhoffs.engines.dask_release import check_dask_release
    from kerckhoffs.models import EntropyLDiversity, TCloseness

    df, schema = frame(5, 600)
    models = [KAnonymity(3), LDiversity(2)]
    dt = encode_dask(dd.from_pandas(df, npartitions=3), schema, dask_client)
    groups = mondrian_dask(dt, models)
    out = tmp_path / "out"
    write_dask_release(dt, groups, models, out, Provenance("mondrian", {}), n_parts=3)
    back = Release.from_published(out)
    asked = [KAnonymity(5), LDiversity(3), EntropyLDiversity(1.5), TCloseness(0.2)]
    found = check_dask_release(out, asked, dask_client)
    want = back.check(asked)
    assert [r.achieved for r in found.results] == [r.achieved for r in want]
    assert [r.satisfied for r in found.results] == [r.satisfied for r in want]
    assert not all(r.satisfied for r in want)  # some fail: the verdicts are compared, not ok
    assert (found.rows, found.groups) == (len(df), back.partition.n_groups)
    recorded = check_dask_release(out, None, dask_client)  # the models it was written for
    assert [r.satisfied for r in recorded.results] == [True, True]


def test_check_of_a_release_on_dask_refuses_a_changed_part(
    dask_client: Any, tmp_path: Path
) -> None:
    from kerckhoffs.engines.dask_release import check_dask_release
    from kerckhoffs.errors import InputError, ParameterError
    from kerckhoffs.models import MPrivacy

    df, schema = frame(6)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
    groups = mondrian_dask(dt, [KAnonymity(4)])
    out = tmp_path / "out"
    write_dask_release(dt, groups, [KAnonymity(4)], out, Provenance("mondrian", {}))
    with pytest.raises(ParameterError, match="which the files do not show"):
        check_dask_release(out, [MPrivacy(1).with_models([KAnonymity(2)])], dask_client)
    part = out / "release-00000.parquet"
    frame_ = pd.read_parquet(part)
    frame_.loc[0, "group"] = 99_999  # a row moved to a group of its own
    frame_.to_parquet(part)
    with pytest.raises(InputError, match=r"release-00000\.parquet: changed after it was written"):
        check_dask_release(out, [KAnonymity(4)], dask_client)
    (out / "release.json").write_text("{}")
    with pytest.raises(InputError, match="not a kerckhoffs release"):
        check_dask_release(out, [KAnonymity(4)], dask_client)


def test_a_forged_table_beside_the_parts_is_never_read(dask_client: Any, tmp_path: Path) -> None:
    """A release written in parts lists only ``release-NNNNN.parquet``; a ``release.parquet``
    dropped beside them (every row in one group: k = n) would be taken for the release by a
    reader that looks for the whole table first. It is refused in memory and on Dask, and
    ``verify=False`` reads the listed parts (the written groups), not the forgery."""
    from kerckhoffs.engines.dask_release import check_dask_release
    from kerckhoffs.errors import InputError

    df, schema = frame(7)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
    groups = mondrian_dask(dt, [KAnonymity(4)])
    out = tmp_path / "out"
    write_dask_release(dt, groups, [KAnonymity(4)], out, Provenance("mondrian", {}), n_parts=2)
    written = Release.from_published(out)
    forged = written.frames()["release"]
    forged["group"] = 0
    forged["age"] = forged["city"] = "*"
    forged.to_parquet(out / "release.parquet", index=False)
    with pytest.raises(InputError, match=r"out/release\.parquet: a data file release\.json does"):
        Release.from_published(out)
    with pytest.raises(InputError, match=r"out/release\.parquet: a data file release\.json does"):
        check_dask_release(out, [KAnonymity(4)], dask_client)
    back = Release.from_published(out, verify=False)
    assert content(back.frames()["release"], ["age", "city"], "disease") == content(
        written.frames()["release"], ["age", "city"], "disease"
    )
    assert back.partition.n_groups == written.partition.n_groups > 1


def test_two_runs_write_the_same_bytes(dask_client: Any, tmp_path: Path) -> None:
    """The same input, twice: the same parts and release.json byte for byte (a release is
    reproducible from its input). Each QI column is stored dictionary-encoded over its distinct
    cells: a dictionary of one entry per group (repeated cells) made pyarrow fall back to PLAIN
    pages whose bytes differed between two writes of the same rows."""
    import pyarrow.parquet as pq

    df, schema = frame(2, 3000)
    models = [KAnonymity(3)]
    folders = []
    for run in ("a", "b"):
        dt = encode_dask(dd.from_pandas(df, npartitions=3), schema, dask_client)
        groups = mondrian_dask(dt, models)
        write_dask_release(
            dt, groups, models, tmp_path / run, Provenance("mondrian", {}), n_parts=2
        )
        folders.append(tmp_path / run)
    names = sorted(p.name for p in folders[0].iterdir())
    assert names == ["release-00000.parquet", "release-00001.parquet", "release.json"]
    for name in names:
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name
    for name in names[:2]:
        meta = pq.ParquetFile(folders[0] / name).metadata.row_group(0)
        for j in range(meta.num_columns):
            column = meta.column(j)
            if column.path_in_schema in ("age", "city"):
                assert "RLE_DICTIONARY" in column.encodings, (name, column.path_in_schema)
        table = pq.read_table(folders[0] / name)
        for qi in ("age", "city"):  # read back as plain strings, as the in-memory release's
            assert str(table.schema.field(qi).type) == "string"
