"""Encoding: codes, decoders, kinds, missing-value policies, schema from TOML."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Column, Hierarchy, Kind, Role, Schema, Table
from kerckhoffs.errors import HierarchyError, InputError, SchemaError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

ZIP = Hierarchy(
    [
        ["13053", "1305*", "*"],
        ["14850", "1485*", "*"],
        ["13068", "1306*", "*"],
        ["13055", "1305*", "*"],
    ],
    "zip",
)


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": ["Ann", "Bob", "Cid", "Dee", "Eve"],
            "age": [30, 25, 30, 41, 25],
            "zip": ["13053", "14850", "13055", "13068", "13053"],
            "disease": ["flu", "HIV", "flu", "cancer", "flu"],
        }
    )


def schema(**kw) -> Schema:  # type: ignore[no-untyped-def]
    return Schema(
        (
            Column("name", Role.IDENTIFIER),
            Column("age", Role.QUASI),
            Column("zip", Role.QUASI, Kind.CATEGORICAL, ZIP),
            Column("disease", Role.SENSITIVE),
        ),
        **kw,
    )


def test_codes_and_decoders() -> None:
    t = Table.encode(frame(), schema())
    assert t.qi.dtype == np.int32 and t.qi.shape == (5, 2) and t.sa.dtype == np.int32
    assert t.qi_columns[0].kind == Kind.NUMERIC  # inferred from dtype
    assert list(t.qi[:, 0]) == [1, 0, 1, 2, 0]  # ranks of 25 < 30 < 41
    # categorical codes follow the hierarchy's depth-first order: 1305* leaves first
    assert list(t.qi_columns[1].values) == ["13053", "13055", "14850", "13068"]
    assert list(t.decode_qi(1)) == list(frame()["zip"])
    assert list(t.decode_sa()) == list(frame()["disease"])
    assert list(t.to_frame().columns) == ["age", "zip", "disease"]  # identifier dropped
    assert t.sensitive.all()


def test_sensitive_subset_and_misspelling() -> None:
    t = Table.encode(frame(), schema(sensitive_values=frozenset({"HIV"})))
    assert list(t.sa_column.labels[t.sensitive]) == ["HIV"]
    with pytest.raises(SchemaError, match="'HIV ' does not occur"):
        Table.encode(frame(), schema(sensitive_values=frozenset({"HIV "})))


def test_missing_policies() -> None:
    df = frame()
    df.loc[[1, 3], "age"] = np.nan
    with pytest.raises(
        InputError, match=r"column 'age': 2 row\(s\) have missing values \(first: data row 2\)"
    ):
        Table.encode(df, schema())
    t = Table.encode(df, schema(missing="drop"))
    assert t.n == 3 and list(t.row_ids) == [0, 2, 4]
    assert t.notes == ["column 'age': dropped 2 row(s) with missing values"]
    df = frame()
    df.loc[0, "zip"] = None
    zip_h = Hierarchy([*ZIP.rows(), ["?", "?", "*"]], "zip")
    s = Schema(
        (
            Column("age"),
            Column("zip", Role.QUASI, Kind.CATEGORICAL, zip_h, missing="category"),
            Column("disease", Role.SENSITIVE),
        )
    )
    t = Table.encode(df, s)
    assert t.decode_qi(1)[0] == "?"
    with pytest.raises(SchemaError, match="needs a categorical column"):
        Table.encode(frame().assign(age=[np.nan, 1, 2, 3, 4]), schema(missing="category"))


def test_value_missing_from_hierarchy_names_column_value_row() -> None:
    df = frame()
    df.loc[3, "zip"] = "99999"
    with pytest.raises(HierarchyError, match=r"column 'zip': value '99999' \(data row 4\)"):
        Table.encode(df, schema())


def test_text_in_numeric_column() -> None:
    df = frame().astype({"age": object})
    df.loc[2, "age"] = "thirty"
    s = Schema((Column("age", kind="numeric"), Column("disease", Role.SENSITIVE)))
    with pytest.raises(InputError, match=r"column 'age' is numeric but data row 3 holds 'thirty'"):
        Table.encode(df, s)


def test_numeric_interval_hierarchy_from_widths() -> None:
    s = Schema((Column("age", widths=(5, 10)), Column("disease", Role.SENSITIVE)))
    t = Table.encode(frame(), s)
    col = t.qi_columns[0]
    assert col.hierarchy is not None and col.hierarchy.height == 3
    assert list(col.generalize(np.array([0, 0]), np.array([1, 0]))) == ["[25-30]", "25"]


def test_schema_errors() -> None:
    with pytest.raises(SchemaError, match="exactly one sensitive"):
        Schema((Column("a"),))
    with pytest.raises(SchemaError, match="no quasi-identifier"):
        Schema((Column("s", Role.SENSITIVE),))
    with pytest.raises(SchemaError, match="role 'quasy'"):
        Column("a", "quasy")
    with pytest.raises(SchemaError, match="not in the data"):
        Table.encode(frame(), Schema.build(["age", "height"], "disease"))


def test_toml_schema(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    ZIP.write_csv(tmp_path / "h" / "zip.csv")
    f = tmp_path / "s.toml"
    f.write_text(
        'sensitive_values = ["HIV"]\n'
        '[columns.name]\nrole = "identifier"\n'
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\nwidths = [5, 10]\n'
        '[columns.zip]\nrole = "quasi"\nkind = "categorical"\nhierarchy = "h/zip.csv"\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    s = Schema.from_toml(f)
    assert [c.name for c in s.quasi] == ["age", "zip"] and s.sensitive.name == "disease"
    t = Table.encode(frame(), s)
    assert t.qi_columns[1].hierarchy is not None and t.qi_columns[1].hierarchy.height == 2
    f.write_text('[columns.a]\nrole = "quasi"\ncolour = "red"\n')
    with pytest.raises(SchemaError, match="unknown key 'colour'"):
        Schema.from_toml(f)


def test_csv_keeps_leading_zeros_of_categorical_codes(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("zip;disease\n02134;flu\n02134;HIV\n")
    s = Schema((Column("zip", Role.QUASI, Kind.CATEGORICAL), Column("disease", Role.SENSITIVE)))
    t = Table.from_csv(f, s)
    assert list(t.decode_qi(0)) == ["02134", "02134"]


@pytest.mark.skipif(not DATA.is_dir(), reason="shared data not present")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_example_schemas_encode_the_real_data() -> None:
    from kerckhoffs.datasets import load_adult, load_adult_training, load_census

    t = Table.encode(load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult/schema.toml"))
    assert t.n == 45_222 and int(t.sensitive[t.sa].sum()) == 1_566
    assert [c.size for c in t.qi_columns[1:]] == [7, 7, 14, 5, 2, 41, 2]
    t = Table.encode(
        load_adult_training(DATA / "adult"),
        Schema.from_toml(EXAMPLES / "adult/schema_training.toml"),
    )
    assert t.n == 30_162
    t = Table.encode(
        load_census(DATA / "census"), Schema.from_toml(EXAMPLES / "census/schema.toml")
    )
    assert t.n == 148_318 and t.n_sa == 46
