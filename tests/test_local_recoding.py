"""Minimal local recoding for (alpha, k)-anonymity / l-diversity (spec minimality.md 3.8): paper
001's local-recoding tables (I(d), III(d), X) and its Adult cases (4.16) as exact vectors,
small hand-computed k-anonymity cases, and hypothesis properties on random tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.local_recoding import Ladder, local_recoding
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import AlphaKAnonymity, KAnonymity, LDiversity, MConfidentiality

HIERARCHIES = Path(__file__).resolve().parents[1] / "examples" / "adult" / "hierarchies"
Q_HIER = Hierarchy([["q1", "Q", "*"], ["q2", "Q", "*"], ["q4", "P", "*"]], "q")


def qid_table(qids: list[str], diseases: list[str], sensitive: list[str] | None) -> Table:
    df = pd.DataFrame({"qid": qids, "disease": diseases})
    schema = Schema(
        (Column("qid", Role.QUASI, Kind.CATEGORICAL, Q_HIER), Column("disease", Role.SENSITIVE)),
        frozenset(sensitive) if sensitive is not None else None,
    )
    return Table.encode(df, schema)


def published(release: Release) -> list[tuple[str, ...]]:
    """Each row as (published QI cells..., SA value), in row order."""
    cells = release.generalized_cells().values.tolist()
    sa = release.table.decode_sa(release.sa_published)
    return [(*cells[g], str(v)) for g, v in zip(release.partition.group, sa, strict=True)]


# -- paper 001, exact local-recoding outputs -------------------------------------------------------
def test_table_i_d() -> None:
    # Table I(b) -> I(d): both q1 HIV tuples go up to Q with two borrowed q2 tuples
    table = qid_table(["q1"] * 2 + ["q2"] * 6, ["HIV"] * 2 + ["non"] * 6, ["HIV"])
    rel = local_recoding(table, [LDiversity(2)])
    assert [r[0] for r in published(rel)] == ["Q", "Q", "Q", "Q", "q2", "q2", "q2", "q2"]
    assert rel.check([LDiversity(2)])[0].satisfied


def test_table_iii_d_all_values_sensitive() -> None:
    diseases = ["HIV", "HIV", "Gallstones", "Lung Cancer", "Ulcer", "Alzheimer", "Diabetes"]
    table = qid_table(
        ["q1", "q1", "q2", "q2", "q2", "q2", "q2", "q4", "q4"],
        [*diseases, "Ulcer", "Alzheimer"],
        None,
    )
    rel = local_recoding(table, [LDiversity(2)])
    assert [r[0] for r in published(rel)] == ["Q"] * 4 + ["q2"] * 3 + ["q4"] * 2


def test_table_x() -> None:
    # Table IX (q1: HIV, HIV, non, non, HIV; q2: non x7, HIV) -> Table X: one q1 HIV and one
    # q2 tuple published as Q, the rest ungeneralized
    table = qid_table(
        ["q1"] * 5 + ["q2"] * 8,
        ["HIV", "HIV", "non", "non", "HIV"] + ["non"] * 7 + ["HIV"],
        ["HIV"],
    )
    rel = local_recoding(table, [LDiversity(2)])
    assert published(rel) == [
        ("q1", "HIV"),
        ("q1", "HIV"),
        ("q1", "non"),
        ("q1", "non"),
        ("Q", "HIV"),
        ("Q", "non"),
        *[("q2", "non")] * 6,
        ("q2", "HIV"),
    ]
    assert rel.partition.same_as(Partition.from_labels([0] * 4 + [1, 1] + [2] * 7))


def adult_like(rows: list[tuple[int, str, str, str]]) -> Table:
    df = pd.DataFrame(rows, columns=["age", "workclass", "marital-status", "education"])
    schema = Schema(
        (
            Column("age", Role.QUASI, Kind.NUMERIC, str(HIERARCHIES / "age.csv")),
            Column("workclass", Role.QUASI, Kind.CATEGORICAL, str(HIERARCHIES / "workclass.csv")),
            Column(
                "marital-status",
                Role.QUASI,
                Kind.CATEGORICAL,
                str(HIERARCHIES / "marital-status.csv"),
            ),
            Column(
                "education", Role.SENSITIVE, Kind.CATEGORICAL, str(HIERARCHIES / "education.csv")
            ),
        ),
        frozenset({"Preschool", "1st-4th", "5th-6th", "7th-8th"}),
    )
    return Table.encode(df, schema)


def test_adult_case_1() -> None:
    # spec 4.16: the self-employed tuple and one private tuple are published as the parent
    # node of both workclasses ("with-pay" in the paper, "Paid" in our Adult hierarchy)
    msa = "Married-spouse-absent"
    table = adult_like(
        [
            (80, "Self-emp-not-inc", msa, "7th-8th"),
            (80, "Private", msa, "HS-grad"),
            (80, "Private", msa, "HS-grad"),
        ]
    )
    rel = local_recoding(table, [LDiversity(2)])
    assert published(rel) == [
        ("80", "Paid", msa, "7th-8th"),
        ("80", "Paid", msa, "HS-grad"),
        ("80", "Private", msa, "HS-grad"),
    ]


def test_adult_case_2() -> None:
    msa = "Married-spouse-absent"
    rows = [(33, "Self-emp-not-inc", msa, "1st-4th")]
    rows += [(33, "Private", msa, edu) for edu in ["HS-grad"] * 10 + ["5th-6th"] * 3 + ["9th"] * 4]
    table = adult_like(rows)
    rel = local_recoding(table, [LDiversity(2)])
    pub = published(rel)
    assert pub[0] == ("33", "Paid", msa, "1st-4th")
    assert pub[1] == ("33", "Paid", msa, "HS-grad")  # the first non-sensitive private tuple
    assert {p[:3] for p in pub[2:]} == {("33", "Private", msa)}
    assert rel.partition.same_as(Partition.from_labels([0, 0] + [1] * 16))


# -- hand-computed k-anonymity cases ---------------------------------------------------------------
CITY = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]], "city")


def city_table(cities: list[str]) -> Table:
    df = pd.DataFrame({"city": cities, "s": ["x"] * len(cities)})
    schema = Schema(
        (Column("city", Role.QUASI, Kind.CATEGORICAL, CITY), Column("s", Role.SENSITIVE))
    )
    return Table.encode(df, schema)


def test_k_anonymity_no_borrowing_possible() -> None:
    # A = {a1, a1, a2}: a2 alone violates k=2 and a1 has no spare row -> A stays whole
    table = city_table(["a1", "a1", "a2", "b1", "b1", "b1", "b2", "b2", "b2"])
    rel = local_recoding(table, [KAnonymity(2)])
    assert [p[0] for p in published(rel)] == ["A", "A", "A"] + ["b1"] * 3 + ["b2"] * 3


def test_k_anonymity_borrows_one_row() -> None:
    # A = {a1 x3, a2}: a2 borrows the first a1 row (spare 3 - 2 = 1)
    table = city_table(["a1", "a1", "a1", "a2", "b1", "b1"])
    rel = local_recoding(table, [KAnonymity(2)])
    assert [p[0] for p in published(rel)] == ["A", "a1", "a1", "A", "b1", "b1"]


def test_alpha_k() -> None:
    # (alpha=0.5, k=3): q1 {HIV, HIV, non} violates alpha; it keeps nothing (1 non < k) and
    # goes up whole, borrowing one q2 row: Q = {HIV, HIV, non, non} (1/2), q2 keeps 4 rows
    table = qid_table(["q1"] * 3 + ["q2"] * 5, ["HIV", "HIV", "non"] + ["non"] * 5, ["HIV"])
    rel = local_recoding(table, [AlphaKAnonymity(0.5, 3)])
    assert [p[0] for p in published(rel)] == ["Q"] * 4 + ["q2"] * 4
    res = rel.check([AlphaKAnonymity(0.5, 3)])[0]
    assert res.satisfied and res.achieved == 0.5


def test_ladder_of_numeric_without_hierarchy() -> None:
    table = Table.encode(
        pd.DataFrame({"x": [1, 2, 3, 4, 5], "s": list("abcab")}), Schema.build(["x"], "s")
    )
    lad = Ladder.of(table.qi_columns[0])
    assert lad.height == 3 and lad.base == 5
    assert lad.node.tolist() == [[0, 1, 2, 3, 4], [0, 0, 1, 1, 2], [0, 0, 0, 0, 1], [0] * 5]
    assert lad.coverage.tolist() == [[1] * 5, [2, 2, 2, 2, 1], [4, 4, 4, 4, 1], [5] * 5]


def test_refusals() -> None:
    assert get("local-recoding").run is local_recoding
    table = qid_table(["q1", "q2", "q2"], ["HIV", "HIV", "non"], ["HIV"])
    with pytest.raises(ParameterError, match="cannot satisfy"):
        local_recoding(table, [LDiversity(2)])  # 2 of 3 sensitive in the whole table
    with pytest.raises(ParameterError, match="cannot enforce m-confidentiality"):
        local_recoding(table, [MConfidentiality(2)])
    with pytest.raises(ParameterError, match="needs a model"):
        local_recoding(table, [])
    with pytest.raises(ParameterError, match="larger than the table"):
        local_recoding(table, [KAnonymity(4)])


# -- hypothesis ------------------------------------------------------------------------------------
DISEASE = ["flu", "cold", "hiv", "cancer", "ulcer", "asthma"]


def random_table(seed: int, n: int, setting: str, distinct: int | None = None) -> Table:
    """Random rows; with ``distinct``, only that many distinct QI vectors (repeated)."""
    rng = np.random.default_rng(seed)
    m = n if distinct is None else distinct
    qi = pd.DataFrame(
        {
            "age": rng.integers(20, 60, m),
            "score": rng.integers(0, 13, m),  # numeric without hierarchy: binary intervals
            "city": rng.choice(["a1", "a2", "b1", "b2"], m),
        }
    )
    if distinct is not None:
        qi = qi.iloc[rng.integers(0, m, n)].reset_index(drop=True)
    df = qi.assign(disease=rng.choice(DISEASE, n, p=[0.3, 0.25, 0.08, 0.07, 0.2, 0.1]))
    schema = Schema(
        (
            Column("age", widths=(5, 10, 20)),
            Column("score", Role.QUASI, Kind.NUMERIC),
            Column("city", Role.QUASI, Kind.CATEGORICAL, CITY),
            Column("disease", Role.SENSITIVE),
        ),
        None if setting == "all" else frozenset({"hiv", "cancer"}),
        sensitive_mode="each" if setting == "each" else "set",
    )
    return Table.encode(df, schema, strict_sensitive=False)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 150),
    setting=st.sampled_from(["set", "each", "all"]),
    kind=st.sampled_from(["alpha-k", "l", "k"]),
    k=st.integers(1, 6),
    l=st.sampled_from([1.5, 2.0, 3.0]),
    distinct=st.one_of(st.none(), st.integers(1, 6)),
)
def test_properties(seed, n, setting, kind, k, l, distinct) -> None:  # type: ignore[no-untyped-def]  # noqa: E741
    table = random_table(seed, n, setting, distinct)
    model = {
        "alpha-k": AlphaKAnonymity(1 / l, k),
        "l": LDiversity(l),
        "k": KAnonymity(k),
    }[kind]
    try:
        rel = local_recoding(table, [model])
    except ParameterError as exc:
        # only when no release of this table can satisfy the model
        root = Release(table, Partition.single(table.n))
        assert not root.check([model])[0].satisfied or "exceeds" in str(exc), str(exc)
        return
    assert rel.check([model])[0].satisfied
    assert rel.partition.n == table.n and rel.partition.sizes.sum() == table.n
    assert rel.sa_published is table.sa and not rel.perturbed.any()
    again = local_recoding(table, [model])
    assert np.array_equal(again.partition.group, rel.partition.group)
    # minimality: when the ungeneralized table already satisfies the model, nothing is
    # generalized (every union of satisfying classes satisfies, so no specialization fails)
    if Release(table, Partition.by_qi(table)).check([model])[0].satisfied:
        assert rel.partition.same_as(Partition.by_qi(table))


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120))
def test_unconstrained_recoding_is_the_table_itself(seed: int, n: int) -> None:
    # with k = 1 and alpha = 1 every specialization is allowed: groups = distinct QI vectors
    table = random_table(seed, n, "set")
    rel = local_recoding(table, [KAnonymity(1)])
    assert rel.partition.same_as(Partition.by_qi(table))
