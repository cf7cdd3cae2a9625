"""DP releases and missing values: every DP algorithm refuses ``missing = "drop"`` (dropping a
row for one missing value changes n and its cells, so a neighbour that turns one value missing
is told apart); ``missing = "category"`` makes missing a value of the public cell domain."""

from __future__ import annotations

import pandas as pd
import pytest

import kerckhoffs as kh
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, MissingPolicy, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import dp_histogram
from kerckhoffs.dp.marginals import dp_marginals
from kerckhoffs.dp.randomized_response import dp_rr
from kerckhoffs.errors import ParameterError

SEX = Hierarchy([["M", "*"], ["F", "*"]], "sex")
ZIP = Hierarchy([["100", "10*", "*"], ["101", "10*", "*"], ["200", "20*", "*"]], "zip")
DISEASE = Hierarchy([["Flu", "*"], ["Cold", "*"], ["?", "*"]], "disease")
"""The SA hierarchy lists the missing value ``?``: under ``missing = "category"`` it is a
value of the public domain whether or not a row lacks its value."""

DP_RUNS = [
    ("dp-histogram", ["dp=1"], {"with_sa": True, "levels": "leaves"}),
    ("dp-marginals", ["dp=1"], {"marginals": "sex;zip+disease"}),
    ("dp-rr", ["dp=1"], {}),
    ("dp-rr", ["label-dp=1"], {"perturb": "sa"}),
]


def people(missing_sa: bool = False) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "sex": ["M", "F", "M", "F", "M", "F"],
            "zip": ["100", "100", "101", "101", "200", "200"],
            "disease": ["Flu", "Cold", "Flu", "Flu", "Cold", "Cold"],
        }
    )
    if missing_sa:
        df.loc[2, "disease"] = None
    return df


def schema(missing: str = "error", column: str | None = None, policy: str | None = None) -> Schema:
    def col(name: str, role: Role, h: Hierarchy) -> Column:
        return Column(
            name,
            role,
            kind=Kind.CATEGORICAL,
            hierarchy=h,
            missing=policy if name == column else None,
        )

    return Schema(
        (
            col("sex", Role.QUASI, SEX),
            col("zip", Role.QUASI, ZIP),
            col("disease", Role.SENSITIVE, DISEASE),
        ),
        missing=MissingPolicy(missing),
    )


@pytest.mark.parametrize(("algorithm", "models", "options"), DP_RUNS)
@pytest.mark.parametrize("where", ["schema", "column"])
@pytest.mark.parametrize("missing_sa", [False, True])
def test_every_dp_algorithm_refuses_drop(
    algorithm: str, models: list[str], options: dict[str, object], where: str, missing_sa: bool
) -> None:
    """Schema-wide or on one column, with or without a missing value in the data: the
    decision reads the schema only, so whether it refuses says nothing about the rows."""
    sch = schema("drop") if where == "schema" else schema("category", "zip", "drop")
    with pytest.raises(ParameterError) as info:
        kh.anonymize(people(missing_sa), schema=sch, algorithm=algorithm, models=models, **options)
    text = str(info.value)
    assert 'missing = "drop"' in text and 'missing = "category"' in text, text
    assert "'zip'" in text or where == "schema"
    assert "changes n" in text


def test_the_library_functions_refuse_drop_too() -> None:
    table = Table.encode(people(), schema("error", "disease", "drop"))
    for call in (
        lambda: dp_histogram(table, 1.0),
        lambda: dp_marginals(table, 1.0, "sex"),
        lambda: dp_rr(table, 1.0),
    ):
        with pytest.raises(ParameterError, match="'disease'"):
            call()


def test_a_non_dp_algorithm_may_still_drop() -> None:
    release = kh.anonymize(
        people(missing_sa=True), schema=schema("drop"), algorithm="mondrian", models=["k=1"]
    )
    assert release.table.n == 5


@pytest.mark.parametrize(("algorithm", "models", "options"), DP_RUNS)
def test_category_keeps_the_domain_public(
    algorithm: str, models: list[str], options: dict[str, object]
) -> None:
    """Under category the cells are the same with and without a missing value (the SA
    hierarchy's ``?`` is always a cell): the release's layout is a function of the schema,
    and a missing value is one record's change of value, which the noise covers."""
    sch = schema("category")
    a = kh.anonymize(people(), schema=sch, algorithm=algorithm, models=models, **options)
    b = kh.anonymize(people(True), schema=sch, algorithm=algorithm, models=models, **options)
    cells = [c for c in a.counts.columns if c != "count"]  # type: ignore[attr-defined]
    assert a.counts[cells].equals(b.counts[cells])  # type: ignore[attr-defined]
    if "disease" in cells:
        assert "?" in set(a.counts["disease"])  # type: ignore[attr-defined]
