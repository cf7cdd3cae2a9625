"""Prosecutor, journalist and marketer re-identification risk (ARX's definitions, El Emam's
models): literal values worked out by hand, and a brute-force oracle written from the
definitions (one record and one population row at a time) on random generalized tables."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kerckhoffs as kh
from kerckhoffs.data.schema import Schema
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics.reidentification import reidentification_risk, risk_from_sizes
from kerckhoffs.release import Release


def published(df: pd.DataFrame, quasi: list[str], sa: str) -> Release:
    """``df`` read back as a release another tool published (rows with equal cells: a group)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "release.csv"
        df.to_csv(path, index=False)
        return Release.from_published(path, Schema.build(quasi, sa))


# -- a table whose answer ARX's definitions give directly ----------------------------------------
def test_arx_definitions_by_hand() -> None:
    """Groups A, B, C, D of 1, 2, 2, 5 records (n = 10); the population holds 2, 2, 6, 10 of
    each and 5 others (25 rows). Threshold 0.2.

    prosecutor: highest 1/1; average 4 groups / 10 = 0.4; at risk: 1/f > 0.2 for f < 5, so
    1 + 2 + 2 = 5 of 10 records; sample uniques 1/10.
    journalist: F = 2, 2, 6, 10: highest 1/2; at risk: 1/F > 0.2 for F < 5 (A, B): 3 of 10;
    marketer sum f/F / n = (1/2 + 2/2 + 2/6 + 5/10) / 10 = 7/30; journalist average
    max(4 / 20, 7/30) = 7/30; population uniques 0.
    """
    cells = ["A"] * 1 + ["B"] * 2 + ["C"] * 2 + ["D"] * 5
    rel = published(pd.DataFrame({"q": cells, "s": ["x"] * 10}), ["q"], "s")
    pop = pd.DataFrame({"q": ["A"] * 2 + ["B"] * 2 + ["C"] * 6 + ["D"] * 10 + ["E"] * 5})
    r = reidentification_risk(rel, pop, threshold=0.2)
    assert r.prosecutor_highest == 1.0
    assert r.prosecutor_average == pytest.approx(0.4)
    assert r.prosecutor_at_risk == pytest.approx(0.5)
    assert r.sample_uniques == pytest.approx(0.1)
    assert r.journalist_highest == pytest.approx(0.5)
    assert r.journalist_at_risk == pytest.approx(0.3)
    assert r.marketer == pytest.approx(7 / 30)
    assert r.journalist_average == pytest.approx(7 / 30)
    assert r.population_uniques == 0.0
    assert r.population_rows == 25
    # Without a population: F = f, so the marketer risk is the prosecutor average.
    alone = reidentification_risk(rel)
    assert alone.marketer == pytest.approx(0.4) and alone.journalist_highest is None


def test_journalist_average_takes_the_larger_estimator() -> None:
    """Groups of 1 and 9 with population counts 1 and 90: groups / sum F = 2/91 = 0.022;
    sum f/F / n = (1 + 0.1) / 10 = 0.11, the larger; population uniques 1/10."""
    r = risk_from_sizes(np.array([1, 9]), np.array([1, 90]))
    assert r.journalist_average == pytest.approx(0.11)
    assert r.population_uniques == pytest.approx(0.1)
    assert r.journalist_highest == 1.0


# -- paper 004 (Ganta, Kasiviswanathan, Smith), Table 1: the two hospitals' releases ---------------
H1_AGES = ["<30"] * 4 + ["≥40"] * 4 + ["3*"] * 4
H2_AGES = ["<35"] * 6 + ["≥35"] * 6


def hospital(ages: list[str]) -> Release:
    df = pd.DataFrame(
        {"zip": ["130**"] * 12, "age": ages, "nationality": ["*"] * 12, "condition": ["c"] * 12}
    )
    return published(df, ["zip", "age", "nationality"], "condition")


def test_paper_004_table_1() -> None:
    """H1 (4-anonymous, classes of 4, 4, 4): every record's risk 1/4 > 0.2, so all at risk;
    average 3/12. H2 (6-anonymous, 6 and 6): 1/6 < 0.2, none at risk; average 2/12.
    Population: one person of each age 20..59 in zip 13012: H1's classes cover 10 (<30),
    20 (>=40) and 10 (3*) of them: journalist highest 1/10, marketer (4/10 + 4/20 + 4/10)/12
    = 1/12, journalist average max(3/40, 1/12) = 1/12."""
    h1, h2 = hospital(H1_AGES), hospital(H2_AGES)
    r1, r2 = reidentification_risk(h1), reidentification_risk(h2)
    assert (r1.prosecutor_highest, r1.prosecutor_average, r1.prosecutor_at_risk) == (
        0.25,
        0.25,
        1.0,
    )
    assert r2.prosecutor_highest == pytest.approx(1 / 6)
    assert r2.prosecutor_average == pytest.approx(1 / 6)
    assert r2.prosecutor_at_risk == 0.0
    pop = pd.DataFrame({"zip": [13012] * 40, "age": range(20, 60), "nationality": ["?"] * 40})
    j1 = reidentification_risk(h1, pop)
    assert j1.journalist_highest == pytest.approx(0.1)
    assert j1.marketer == pytest.approx(1 / 12)
    assert j1.journalist_average == pytest.approx(1 / 12)
    assert j1.journalist_at_risk == 0.0


# -- independent oracle on random generalized tables ----------------------------------------------
def oracle(
    ages: list[int],
    sexes: list[str],
    width: int,
    mask_sex: bool,
    pop: list[tuple[int, str]],
    threshold: float,
) -> dict[str, float]:
    """The definitions record by record: a record's group is its (age interval, sex cell);
    F counts population rows inside the interval and matching the sex cell."""

    def cell(a: int, s: str) -> tuple[int, str]:
        return (a // width * width, "*" if mask_sex else s)

    keys = [cell(a, s) for a, s in zip(ages, sexes, strict=True)]
    n = len(keys)
    f = {k: keys.count(k) for k in keys}
    big_f = {
        k: sum(1 for a, s in pop if k[0] <= a <= k[0] + width - 1 and k[1] in ("*", s)) for k in f
    }
    out = {
        "prosecutor_highest": max(1 / f[k] for k in keys),
        "prosecutor_average": len(f) / n,
        "prosecutor_at_risk": sum(1 for k in keys if 1 / f[k] > threshold) / n,
        "sample_uniques": sum(1 for k in keys if f[k] == 1) / n,
        "journalist_highest": max(1 / big_f[k] for k in keys),
        "journalist_at_risk": sum(1 for k in keys if 1 / big_f[k] > threshold) / n,
        "marketer": sum(1 / big_f[k] for k in keys) / n,
        "population_uniques": sum(1 for k in keys if big_f[k] == 1) / n,
    }
    out["journalist_average"] = max(len(f) / sum(big_f.values()), out["marketer"])
    return out


@settings(max_examples=25, deadline=None)
@given(
    ages=st.lists(st.integers(0, 40), min_size=1, max_size=25),
    width=st.sampled_from([1, 5, 10]),
    mask_sex=st.booleans(),
    extra=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["F", "M"])), max_size=30),
    threshold=st.sampled_from([0.1, 0.2, 0.5]),
    seed=st.integers(0, 3),
)
def test_matches_brute_force_oracle(
    ages: list[int],
    width: int,
    mask_sex: bool,
    extra: list[tuple[int, str]],
    threshold: float,
    seed: int,
) -> None:
    sexes = list(np.random.default_rng(seed).choice(["F", "M"], len(ages)))
    lo = [a // width * width for a in ages]
    df = pd.DataFrame(
        {
            "age": [f"[{x}, {x + width - 1}]" for x in lo],
            "sex": ["*" if mask_sex else s for s in sexes],
            "sa": ["x"] * len(ages),
        }
    )
    rel = published(df, ["age", "sex"], "sa")
    pop_rows = list(zip(ages, sexes, strict=True)) + extra
    pop = pd.DataFrame(pop_rows, columns=["age", "sex"])
    got = reidentification_risk(rel, pop, threshold=threshold).to_dict()
    want = oracle(ages, sexes, width, mask_sex, pop_rows, threshold)
    for key, value in want.items():
        assert got[key] == pytest.approx(value), key


def test_population_missing_a_released_person_is_refused() -> None:
    rel = published(pd.DataFrame({"q": ["A", "A", "B"], "s": ["x"] * 3}), ["q"], "s")
    with pytest.raises(InputError, match="not a population of this release"):
        reidentification_risk(rel, pd.DataFrame({"q": ["A", "B"]}))


def test_measure_carries_the_risk_and_dp_is_refused() -> None:
    df = generate_hospital(300, seed=0)
    rel = kh.anonymize(
        df, quasi=["age", "zip"], sensitive="disease", algorithm="mondrian", models=["k=5"]
    )
    m = kh.measure(rel, population=df, risk_threshold=0.1)
    assert m.risk == reidentification_risk(rel, df, threshold=0.1)
    assert m.risk.prosecutor_highest == 1 / m.k
    with pytest.raises(ParameterError):
        risk_from_sizes(np.array([2, 3]), threshold=1.5)
