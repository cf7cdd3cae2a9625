"""The pyarrow CSV writer (:func:`kerckhoffs.data.io.write_csv`) writes pandas' bytes.

Releases keep their bytes (and so their SHA-256 digests in ``release.json``) when the writer
changed from ``DataFrame.to_csv`` to pyarrow (issue 15): every frame, awkward strings
included (commas, quotes, newlines, carriage returns, unicode, empty, missing), is compared
byte for byte with ``to_csv(index=False)``, which is the reference, never recomputed by the
code under test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data.io import QUOTED_CHARS, write_csv
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.models import parse_model

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"


def _same_bytes(df: pd.DataFrame, tmp: Path) -> bytes:
    write_csv(df, tmp / "new.csv")
    df.to_csv(tmp / "old.csv", index=False)
    new, old = (tmp / "new.csv").read_bytes(), (tmp / "old.csv").read_bytes()
    assert new == old
    return new


def test_hand_written_bytes(tmp_path: Path) -> None:
    """Exact expected bytes, written by hand (Python's csv quoting: ``,`` ``"`` newline)."""
    df = pd.DataFrame(
        {
            "group": np.array([0, 1, 2], dtype=np.int32),
            "a b": pd.array(["x,y", 'he said "hi"', None], dtype="str"),
            "c": ["", "line\nbreak", "ü"],
        }
    )
    got = _same_bytes(df, tmp_path)
    assert got == ('group,a b,c\n0,"x,y",\n1,"he said ""hi""","line\nbreak"\n2,,ü\n').encode()


def test_plain_frame_uses_the_fast_path(tmp_path: Path) -> None:
    df = pd.DataFrame({"g": [3, 1], "cell": ["[20-29]", "*"], "sa": [1.5, np.nan]})
    assert _same_bytes(df, tmp_path) == b"g,cell,sa\n3,[20-29],1.5\n1,*,\n"


def test_quoting_characters_probed() -> None:
    assert {",", '"', "\n"} <= set(QUOTED_CHARS)


def test_dtypes_pandas_renders_itself(tmp_path: Path) -> None:
    """Dtypes the writer hands to pandas (datetime, categorical, nullable boolean, mixed
    objects, one column, no rows) still give pandas' bytes."""
    frames = [
        pd.DataFrame({"t": pd.to_datetime(["2020-01-01", None]), "x": [1, 2]}),
        pd.DataFrame({"c": pd.Categorical(["a", "b,c"]), "x": [1, 2]}),
        pd.DataFrame({"b": pd.array([True, None], dtype="boolean"), "x": [1, 2]}),
        pd.DataFrame({"o": [1, "a"], "x": [1, 2]}),
        pd.DataFrame({"only": ["", "a"]}),
        pd.DataFrame({"a": pd.Series([], dtype=str), "b": pd.Series([], dtype=int)}),
    ]
    for df in frames:
        _same_bytes(df, tmp_path)


AWKWARD = st.text(alphabet=st.sampled_from([*'ab ,;"\n\r\t|ü€😀0-[]*', "\u2028"]), max_size=6)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 8))
    n_cols = draw(st.integers(2, 5))
    data: dict[str, object] = {}
    for j in range(n_cols):
        kind = draw(st.sampled_from(["str", "object", "int", "float", "bool", "Int64"]))
        name = draw(st.sampled_from(["c", "a,b", 'q"', "ü", "x y"])) + str(j)
        if kind in {"str", "object"}:
            cells = draw(st.lists(st.one_of(AWKWARD, st.none()), min_size=n, max_size=n))
            data[name] = pd.array(cells, dtype="str") if kind == "str" else cells
        elif kind == "int":
            data[name] = np.array(
                draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n))
            )
        elif kind == "float":
            values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1e-05))
            data[name] = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=float)
        elif kind == "bool":
            data[name] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        else:
            cells = draw(
                st.lists(st.one_of(st.integers(-100, 100), st.none()), min_size=n, max_size=n)
            )
            data[name] = pd.array(cells, dtype="Int64")
    return pd.DataFrame(data)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(df=frames())
def test_awkward_frames_same_bytes(df: pd.DataFrame, tmp_path: Path) -> None:
    _same_bytes(df, tmp_path)


@pytest.mark.parametrize(
    ("name", "models", "scheme"),
    [
        ("mondrian", ["k=3"], "generalization"),
        ("anatomy", ["l=2"], "bucketization"),
        ("hilb", ["l=2"], "generalization"),
        ("mondrian++", ["l=2"], "bucketization"),
        ("mask+", ["k=3", "m=2"], "generalization"),
        ("lattice", ["k=2"], "generalization"),
        ("mdav", ["k=2"], "generalization"),
    ],
)
def test_release_frames_same_bytes(
    name: str, models: list[str], scheme: str, tmp_path: Path
) -> None:
    """Every table of the test releases (with the other columns published too)."""
    table = Table.encode(generate_hospital(300, 1), Schema.from_toml(SCHEMA), keep_other=True)
    info = REGISTRY[name]
    options = {"scheme": scheme} if "scheme" in info.options else {}
    release = info.run(table, [parse_model(m) for m in models], seed=1, **options)
    for df in release.frames(include_other=True).values():
        _same_bytes(df, tmp_path)
