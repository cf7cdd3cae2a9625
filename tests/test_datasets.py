"""Tests for kerckhoffs.data.datasets: the hospital demo generator and the real-data loaders.

The loader tests read the real files under ``/work/shared/data`` (next to the project root) and
are skipped when that directory is absent; the expected counts are those of the data README.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs.data.datasets import (
    ADULT_COLUMNS,
    HOSPITAL_SENSITIVE_VALUES,
    generate_hospital,
    hospital_hierarchies,
    load_adult,
    load_adult_training,
    load_census,
)
from kerckhoffs.errors import InputError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

HOSPITAL_COLUMNS = ["patient_id", "age", "sex", "zip", "nationality", "disease"]


def _data(*parts: str) -> Path:
    """A path under the shared data directory, skipping the test if it is not there."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


# --------------------------------------------------------------------------------------------
# Hospital demo
# --------------------------------------------------------------------------------------------


def test_hospital_same_seed_identical() -> None:
    pd.testing.assert_frame_equal(generate_hospital(3000, 7), generate_hospital(3000, 7))
    pd.testing.assert_frame_equal(generate_hospital(), generate_hospital(2000, 0))


def test_hospital_different_seed_differs() -> None:
    a, b = generate_hospital(2000, 1), generate_hospital(2000, 2)
    assert not a.equals(b)
    for col in ["age", "zip", "nationality", "disease"]:
        assert (a[col] != b[col]).any(), col


def test_hospital_shape_and_columns() -> None:
    df = generate_hospital(2000, 0)
    assert list(df.columns) == HOSPITAL_COLUMNS
    assert df.shape == (2000, 6)
    assert df["age"].dtype == np.int64
    assert df["age"].between(0, 95).all()
    assert set(df["sex"]) == {"F", "M"}
    assert df["patient_id"].is_unique
    assert df["patient_id"].iloc[0] == "P000001"
    assert df["patient_id"].str.fullmatch(r"P\d{6}").all()
    assert df["zip"].str.fullmatch(r"\d{5}").all()
    assert 30 <= df["zip"].nunique() <= 60
    assert df.isna().sum().sum() == 0
    # Adult-heavy ages, one dominant nationality.
    assert (df["age"] >= 18).mean() > 0.75
    top_nationality = df["nationality"].value_counts(normalize=True).iloc[0]
    assert 0.5 < top_nationality < 0.9


def test_hospital_single_row() -> None:
    df = generate_hospital(1, 3)
    assert df.shape == (1, 6)
    assert df["patient_id"].tolist() == ["P000001"]


@pytest.mark.parametrize("rows", [0, -5, 2.5, "100", True, None])
def test_hospital_bad_rows(rows: object) -> None:
    with pytest.raises(InputError, match="rows"):
        generate_hospital(rows)  # type: ignore[arg-type]


def test_hospital_bad_seed() -> None:
    with pytest.raises(InputError, match="seed"):
        generate_hospital(10, -1)


def _check_hierarchy(name: str, rows: list[list[str]]) -> None:
    """Equal depth, unique leaves, single root, one parent per node, siblings adjacent."""
    assert rows, name
    depth = len(rows[0])
    assert depth >= 2
    assert all(len(r) == depth for r in rows), name
    assert all(isinstance(x, str) and x for r in rows for x in r), name
    leaves = [r[0] for r in rows]
    assert len(set(leaves)) == len(leaves), name
    assert {r[-1] for r in rows} == {"*"}, name
    # A label names one node: it sits on one level only, and "*" only at the top.
    level_of: dict[str, int] = {}
    for r in rows:
        for j, label in enumerate(r):
            assert level_of.setdefault(label, j) == j, (name, label)
    for j in range(depth - 1):
        parent: dict[str, str] = {}
        for r in rows:
            assert parent.setdefault(r[j], r[j + 1]) == r[j + 1], (name, r[j])
    # Depth-first order: the leaves under any node form one contiguous block.
    for j in range(1, depth):
        column = [r[j] for r in rows]
        seen: set[str] = set()
        for i, label in enumerate(column):
            if i > 0 and label != column[i - 1]:
                assert label not in seen, (name, label)
            seen.add(label)


def test_hospital_hierarchies_well_formed() -> None:
    hierarchies = hospital_hierarchies()
    assert set(hierarchies) == {"zip", "nationality", "disease"}
    for name, rows in hierarchies.items():
        _check_hierarchy(name, rows)
    for z, prefix, area, root in hierarchies["zip"]:
        assert (prefix, area, root) == (z[:4] + "*", z[:3] + "**", "*")
    assert len({r[2] for r in hierarchies["zip"]}) >= 3
    assert 10 <= len(hierarchies["nationality"]) <= 16
    assert 10 <= len(hierarchies["disease"]) <= 16
    assert set(HOSPITAL_SENSITIVE_VALUES) <= {r[0] for r in hierarchies["disease"]}
    # A fresh copy each call: mutating one does not change the next.
    hierarchies["zip"].clear()
    assert hospital_hierarchies()["zip"]


@pytest.mark.parametrize("seed", [0, 1, 2, 17, 12345])
def test_hospital_hierarchies_cover_emitted_values(seed: int) -> None:
    df = generate_hospital(5000, seed)
    for col, rows in hospital_hierarchies().items():
        leaves = {r[0] for r in rows}
        missing = set(df[col]) - leaves
        assert not missing, (col, missing)


@pytest.mark.parametrize("seed", [0, 3, 99])
@pytest.mark.parametrize("rows", [2000, 5000])
def test_hospital_disease_frequencies(rows: int, seed: int) -> None:
    freq = generate_hospital(rows, seed)["disease"].value_counts(normalize=True)
    assert freq.max() < 0.25
    assert len(freq) >= 10


def test_hospital_rare_diseases_present() -> None:
    df = generate_hospital(5000, 0)
    freq = df["disease"].value_counts(normalize=True)
    for value in HOSPITAL_SENSITIVE_VALUES:
        assert value in freq.index, value
        assert 0.003 < freq[value] < 0.04, (value, freq[value])


def test_conditional_sampler_respects_cells() -> None:
    from kerckhoffs.data.datasets import _sample_rows

    weights = np.array([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 5.0]])
    cell = np.random.default_rng(0).integers(0, 3, 60_000)
    drawn = _sample_rows(np.random.default_rng(1), cell, weights)
    for c in range(3):
        share = np.bincount(drawn[cell == c], minlength=4) / np.sum(cell == c)
        np.testing.assert_allclose(share, weights[c] / weights[c].sum(), atol=0.02)
        assert not np.any(share[weights[c] == 0])


def test_hospital_disease_depends_on_age_and_sex() -> None:
    df = generate_hospital(20000, 5)
    old_men = df[(df["age"] >= 65) & (df["sex"] == "M")]
    young = df[df["age"] < 40]
    assert (old_men["disease"] == "Heart disease").mean() > 3 * (
        young["disease"] == "Heart disease"
    ).mean()
    assert not ((df["disease"] == "Prostate cancer") & (df["sex"] == "F")).any()


# --------------------------------------------------------------------------------------------
# Real data loaders
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_adult(_data("adult"))


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return load_census(_data("census"))


def test_load_adult_rows_and_columns(adult: pd.DataFrame) -> None:
    assert adult.shape == (45_222, 15)
    assert list(adult.columns) == list(ADULT_COLUMNS)
    assert adult.index.equals(pd.RangeIndex(45_222))
    assert adult.isna().sum().sum() == 0
    for col in ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss"]:
        assert adult[col].dtype == np.int64, col
    assert adult["hours-per-week"].dtype == np.int64
    assert pd.api.types.is_string_dtype(adult["workclass"].dtype)


def test_load_adult_domains(adult: pd.DataFrame) -> None:
    expected = {
        "age": 74,
        "workclass": 7,
        "education": 16,
        "marital-status": 7,
        "occupation": 14,
        "race": 5,
        "sex": 2,
        "native-country": 41,
        "salary": 2,
    }
    assert {c: adult[c].nunique() for c in expected} == expected
    assert set(adult["salary"]) == {"<=50K", ">50K"}
    text = adult.select_dtypes(exclude="number")
    for col in text.columns:
        assert not text[col].str.contains(r"^\s|\s$|^\?$").any(), col


def test_load_adult_low_education(adult: pd.DataFrame) -> None:
    low = {"Preschool", "1st-4th", "5th-6th", "7th-8th"}
    assert int(adult["education"].isin(low).sum()) == 1_566


def test_load_adult_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nowhere"):
        load_adult(tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"adult\.data"):
        load_adult(tmp_path)


def test_load_adult_missing_test_file(tmp_path: Path) -> None:
    (tmp_path / "adult.data").write_text(
        "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family,"
        " White, Male, 2174, 0, 40, United-States, <=50K\n"
    )
    with pytest.raises(InputError, match=r"adult\.test"):
        load_adult(tmp_path)


def test_load_adult_small_files(tmp_path: Path) -> None:
    row = "{age}, Private, 1, HS-grad, 9, Divorced, Sales, Unmarried, White, Female, 0, 0, 40, {c},"
    (tmp_path / "adult.data").write_text(
        row.format(age=30, c="Peru") + " <=50K\n" + row.format(age=31, c="?") + " >50K\n\n"
    )
    (tmp_path / "adult.test").write_text(
        "|1x3 Cross validator\n" + row.format(age=40, c="Cuba") + " >50K.\n"
    )
    df = load_adult(tmp_path)
    assert df["age"].tolist() == [30, 40]
    assert df["native-country"].tolist() == ["Peru", "Cuba"]
    assert df["salary"].tolist() == ["<=50K", ">50K"]


def test_load_adult_bad_numeric(tmp_path: Path) -> None:
    (tmp_path / "adult.data").write_text(
        "old, Private, 1, HS-grad, 9, Divorced, Sales, Unmarried, White, Female, 0, 0, 40, Peru,"
        " <=50K\n"
    )
    (tmp_path / "adult.test").write_text("|1x3 Cross validator\n")
    with pytest.raises(InputError, match="'age'"):
        load_adult(tmp_path)


@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_load_census_in_universe(census: pd.DataFrame) -> None:
    assert len(census) == 148_318
    assert (census["occupation"] != 0).all()
    assert census["occupation"].dtype == np.int64
    assert census["age"].dtype == np.int64
    assert census["country"].isna().any()
    assert "?" not in set(census["country"].dropna())
    assert census["occupation"].value_counts(normalize=True).iloc[0] < 0.09
    assert census.index.equals(pd.RangeIndex(len(census)))


@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_load_census_all_rows_from_file() -> None:
    df = load_census(_data("census", "census_income.csv.gz"), in_universe=False)
    assert len(df) == 299_285
    assert int(df["country"].isna().sum()) == 5_157
    assert df["occupation"].nunique() == 47
    assert (df["occupation"] == 0).any()


def test_load_census_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="census_income"):
        load_census(tmp_path)
    with pytest.raises(InputError, match=r"absent\.csv\.gz"):
        load_census(tmp_path / "absent.csv.gz")


def test_load_census_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "census_income.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("age,sex\n30,Male\n")
    with pytest.raises(InputError, match="missing column"):
        load_census(tmp_path)
    path.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="cannot read"):
        load_census(path)


def test_load_adult_training() -> None:
    df = load_adult_training(_data("adult"))
    assert len(df) == 30_162
    assert df["age"].dtype == np.int64
    assert "salary-class" in df.columns
    assert df.isna().sum().sum() == 0
    same = load_adult_training(_data("adult", "adult.csv"))
    pd.testing.assert_frame_equal(df, same)


def test_load_adult_training_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"adult\.csv"):
        load_adult_training(tmp_path)
    with pytest.raises(InputError, match="gone"):
        load_adult_training(tmp_path / "gone" / "adult.csv")


def test_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "adult.csv"
    path.write_text('age;sex\n"30;Male\n')  # unterminated quote: a multi-line parser message
    with pytest.raises(InputError) as info:
        load_adult_training(path)
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)
    with pytest.raises(InputError) as info:
        load_census(tmp_path / "nope")
    assert "\n" not in str(info.value)


def test_demo_example_schema_matches_the_code(tmp_path: Path) -> None:
    """examples/demo/ (for the CLI) and hospital_schema() (for Python) describe the same table."""
    from kerckhoffs import Hierarchy, Schema, Table
    from kerckhoffs.datasets import hospital_hierarchies, hospital_schema

    ex = Path(__file__).resolve().parents[1] / "examples" / "demo"
    for name, rows in hospital_hierarchies().items():
        assert (
            Hierarchy.read_csv(ex / "hierarchies" / f"{name}.csv").rows() == Hierarchy(rows).rows()
        )
    df = generate_hospital(500, 4)
    from_toml = Table.encode(df, Schema.from_toml(ex / "schema.toml"))
    from_code = Table.encode(df, hospital_schema())
    assert (from_toml.qi == from_code.qi).all() and (from_toml.sa == from_code.sa).all()
