"""The fast paths of issue 15 give exactly what the paths they replaced gave.

- ``Table.encode``'s ``category`` missing-value path on arrow strings (codes, label inserted
  at its first appearance) against the object cast it replaced (brute force reference);
- ``Table.from_csv`` (only the used columns, text read chunk by chunk into categoricals)
  against ``Table.encode`` of the whole file read at once;
- ``stable_order`` against ``np.lexsort``;
- the fail-closed write reads back what it wrote: a CSV that is not the rendering of the
  checked Parquet table, or a read-back table that fails the model, writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kerckhoffs.release.writer as release_module
from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data import io as io_module
from kerckhoffs.data.schema import MISSING_LABEL
from kerckhoffs.data.table import _fill_missing
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import PrivacyCheckFailed
from kerckhoffs.models import KAnonymity
from kerckhoffs.release import stable_order

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "?", "ü,x", None]), min_size=1, max_size=15))
def test_missing_label_same_codes_as_object_cast(cells: list[str | None]) -> None:
    s = pd.Series(cells, dtype="str")
    na = s.isna().to_numpy()
    old_codes, old_uniques = pd.factorize(s.astype(object).where(~na, MISSING_LABEL))
    for column in (s, s.astype("category")):
        new_codes, new_uniques = pd.factorize(_fill_missing(column, na, sorted_later=False))
        assert np.array_equal(old_codes, new_codes)
        assert [str(u) for u in new_uniques] == list(old_uniques)


def test_missing_label_hand_example() -> None:
    s = pd.Series(["b", None, "a", None, "b"], dtype="str")
    codes, uniques = pd.factorize(_fill_missing(s, s.isna().to_numpy(), sorted_later=False))
    assert codes.tolist() == [0, 1, 2, 1, 0]
    assert list(uniques) == ["b", "?", "a"]


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 300), st.integers(1, 40), st.integers(1, 9), st.integers(0, 2**31))
def test_stable_order_is_lexsort(n: int, groups: int, values: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, groups, n), rng.integers(0, values, n)
    assert np.array_equal(stable_order(a, b), np.lexsort((b, a)))
    assert np.array_equal(stable_order(a), np.argsort(a, kind="stable"))


def test_stable_order_too_wide_falls_back() -> None:
    a = np.array([2**40, 3, 2**40, 0])
    b = np.array([1, 2**30, 0, 5])
    assert np.array_equal(stable_order(a, b), np.lexsort((b, a)))


@pytest.mark.parametrize("chunk", [7, 1_000])
def test_from_csv_reads_what_encode_of_the_whole_file_gives(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of 7 rows (many categoricals joined) and one chunk give the reference table."""
    monkeypatch.setattr(io_module, "CHUNK_ROWS", chunk)
    path = tmp_path / "h.csv"
    generate_hospital(60, 3).to_csv(path, index=False)
    schema = Schema.from_toml(SCHEMA)
    text = ["patient_id", "sex", "zip", "nationality", "disease"]
    whole = pd.read_csv(path, dtype=dict.fromkeys(text, str), keep_default_na=False, na_values=[""])
    ref = Table.encode(whole, schema)
    got = Table.from_csv(path, schema)
    assert np.array_equal(ref.qi, got.qi) and np.array_equal(ref.sa, got.sa)
    for a, b in zip(ref.qi_columns, got.qi_columns, strict=True):
        assert np.array_equal(a.values, b.values)


def test_from_csv_still_names_a_missing_identifier_column(tmp_path: Path) -> None:
    """Columns the encoding does not read are still checked against the header."""
    path = tmp_path / "h.csv"
    generate_hospital(20, 3).drop(columns=["patient_id"]).to_csv(path, index=False)
    with pytest.raises(Exception, match="patient_id"):
        Table.from_csv(path, Schema.from_toml(SCHEMA))


def _release(rows: int = 200):
    table = Table.encode(generate_hospital(rows, 2), Schema.from_toml(SCHEMA))
    return REGISTRY["mondrian"].run(table, [KAnonymity(3)])


def test_write_refuses_a_csv_that_is_not_the_checked_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CSV is rendered from the table read back from the Parquet file; bytes that reach
    the disk other than the ones rendered (here one line ending changed on the way) are
    refused and nothing is written."""
    release = _release()
    real = release_module._Tee.write
    changed = []

    def tampering(self: object, data: bytes | memoryview) -> int:
        raw = bytes(data)
        self.digest.update(raw)  # type: ignore[attr-defined]
        if not changed and b"\n" in raw:  # the disk gets something else, once
            changed.append(True)
            raw = raw.replace(b"\n", b"\r\n", 1)
        return int(self.fh.write(raw))  # type: ignore[attr-defined]

    monkeypatch.setattr(release_module._Tee, "write", tampering)
    with pytest.raises(PrivacyCheckFailed, match="not the CSV rendering of the checked table"):
        release.write(tmp_path / "out", [KAnonymity(3)])
    assert changed and not (tmp_path / "out").exists()
    monkeypatch.setattr(release_module._Tee, "write", real)
    assert all(r.satisfied for r in release.write(tmp_path / "out", [KAnonymity(3)]))


def test_write_checks_the_table_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-back table that breaks k (one row lost on the way) writes nothing."""
    release = _release()
    real = release_module.read_back

    def lossy(*args: object) -> pd.DataFrame:
        df = real(*args)  # type: ignore[arg-type]
        return df.iloc[1:].reset_index(drop=True)

    monkeypatch.setattr(release_module, "read_back", lossy)
    with pytest.raises(PrivacyCheckFailed):
        release.write(tmp_path / "out", [KAnonymity(3)], formats=("parquet",))
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(release_module, "read_back", real)
    results = release.write(tmp_path / "out", [KAnonymity(3)])
    assert all(r.satisfied for r in results)


def test_parquet_written_a_row_group_at_a_time_is_the_same_file(tmp_path: Path) -> None:
    """Over pyarrow's default row group (1Mi rows) the text is written row group by row
    group; the file is the one ``to_parquet`` writes for the frame holding ``str``."""
    n = release_module.PARQUET_ROW_GROUP + 1000
    rng = np.random.default_rng(0)
    labels = pd.Index(["[20-29]", "*", "Flu", "ü"], dtype="str")
    cat = pd.Categorical.from_codes(rng.integers(0, 4, n), categories=labels)
    compact = pd.DataFrame({"group": np.arange(n, dtype=np.int32), "cell": cat})
    text = compact.astype({"cell": release_module.TEXT_DTYPE})
    release_module.write_parquet(compact, tmp_path / "new.parquet", ["cell"])
    text.to_parquet(tmp_path / "old.parquet", index=False)
    assert (tmp_path / "new.parquet").read_bytes() == (tmp_path / "old.parquet").read_bytes()
