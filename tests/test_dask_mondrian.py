"""Mondrian on Dask (kerckhoffs.engines.dask_mondrian) gives every row the same group as the
in-memory engine on the whole table: for random tables, every cut rule (k, frequency l,
entropy l, t-closeness, Mondrian+'s look-ahead), both medians, both cut modes and both
categorical cuts the Dask engine has (``median``, pinned by name in the older cases, and
``values``, the default)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.mondrian import (
    mondrian_groups,
    plus_rule_from_models,
    rule_from_models,
)
from kerckhoffs.engines.dask_mondrian import mondrian_dask
from kerckhoffs.engines.dask_table import encode_dask
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import EntropyLDiversity, KAnonymity, LDiversity, TCloseness

dd = pytest.importorskip("dask.dataframe")


def random_frame(seed: int) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 500))
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 20 + int(rng.integers(3, 40)), n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.integers(0, int(rng.integers(2, 9)), n),
            "disease": rng.choice(list("abcdef"), n, p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.1]),
        }
    )
    return df, Schema.build({"age": {}, "sex": {}, "zip": {"kind": "numeric"}}, "disease")


CASES = [
    ([KAnonymity(3)], False, "lower", "strict"),
    ([KAnonymity(4)], False, "upper", "relaxed"),
    ([LDiversity(2)], False, "lower", "strict"),
    ([LDiversity(2), KAnonymity(3)], False, "lower", "relaxed"),
    ([EntropyLDiversity(1.8)], False, "upper", "strict"),
    ([TCloseness(0.35), KAnonymity(2)], False, "lower", "strict"),
    ([LDiversity(2)], True, "lower", "strict"),
    ([LDiversity(2), KAnonymity(2)], True, "upper", "relaxed"),
]


@pytest.mark.parametrize(
    ("seed", "models", "plus", "median", "cuts"),
    # k strict and l strict (cases 0, 2) run in the slow suite only: the default one keeps to
    # three minutes of CPU, and t + k (5), Mondrian+ (6) and the few-distinct-rows test below
    # cut strictly too; the first cases again on other tables, in the slow suite
    [
        (i, *case) if i not in (0, 2) else pytest.param(i, *case, marks=pytest.mark.slow)
        for i, case in enumerate(CASES)
    ]
    + [pytest.param(8 + i, *case, marks=pytest.mark.slow) for i, case in enumerate(CASES[:3])],
)
def test_same_groups_as_in_memory(
    dask_client: Any, seed: int, models: list[Any], plus: bool, median: str, cuts: str
) -> None:
    # seed % 3 == 0: every level on the partitions; 1, 2: groups of at most 60 / 25 rows are
    # shuffled to workers and finished by the in-memory engine
    finish = (0, 60, 25)[seed % 3]
    df, schema = random_frame(seed)
    table = Table.encode(df, schema)
    make = plus_rule_from_models if plus else rule_from_models
    try:
        rule, _ = make(table, models, "mondrian")
    except ParameterError:  # (a table the models refuse: the Dask path must refuse it too)
        dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
        with pytest.raises(ParameterError):
            mondrian_dask(
                dt, models, plus=plus, median=median, cuts=cuts, finish_rows=finish,
                categorical_cuts="median",
            )  # fmt: skip
        return
    expected = mondrian_groups(table, rule, median=median, cuts=cuts)
    dt = encode_dask(dd.from_pandas(df, npartitions=1 + seed % 3), schema, dask_client)
    got = mondrian_dask(
        dt, models, plus=plus, median=median, cuts=cuts, finish_rows=finish,
        categorical_cuts="median",
    )  # fmt: skip
    assert got.n_groups == int(expected.max()) + 1
    assert np.array_equal(np.concatenate(dask_client.gather(got.groups)), expected)


def values_frame(seed: int) -> tuple[pd.DataFrame, Schema]:
    """A random table with two categorical QIs of several values (where ``values`` cuts
    differ from median cuts) and a numeric one."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 400))
    df = pd.DataFrame(
        {
            "city": rng.choice(list("abcdefgh"), n, p=[0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05]),
            "job": rng.choice(["x", "y", "z", "w"], n),
            "age": rng.integers(20, 20 + int(rng.integers(3, 30)), n),
            "disease": rng.choice(list("abcde"), n, p=[0.3, 0.25, 0.2, 0.15, 0.1]),
        }
    )
    schema = Schema.build(
        {"city": {"kind": "categorical"}, "job": {"kind": "categorical"},
         "age": {"kind": "numeric"}},
        "disease",
    )  # fmt: skip
    return df, schema


@pytest.mark.parametrize(
    ("seed", "models", "median", "finish"),
    [
        (20, [KAnonymity(3)], "lower", 0),
        (21, [LDiversity(2)], "upper", 0),
        (22, [TCloseness(0.4), KAnonymity(2)], "lower", 40),
    ],
)
def test_values_cuts_same_groups_as_in_memory(
    dask_client: Any, seed: int, models: list[Any], median: str, finish: int
) -> None:
    """``categorical_cuts="values"`` (Mondrian's default): the Dask engine cuts a categorical
    QI by its distinct values and tries the other median before the next QI, as in memory,
    level by level on the partitions (``finish`` 0) or finished on a worker; a rule on sizes
    only (k), one reading the halves' SA (l, t). The in-memory partition is checked to differ
    from the median cuts' (else the case would not test the option)."""
    df, schema = values_frame(seed)
    table = Table.encode(df, schema)
    rule, _ = rule_from_models(table, models, "mondrian")
    expected = mondrian_groups(table, rule, median=median, values=True)
    median_cut = mondrian_groups(table, rule, median=median)
    assert not np.array_equal(expected, median_cut)
    dt = encode_dask(dd.from_pandas(df, npartitions=2 + seed % 2), schema, dask_client)
    got = mondrian_dask(dt, models, median=median, finish_rows=finish)  # the default: values
    assert got.params["categorical_cuts"] == "values"
    assert got.n_groups == int(expected.max()) + 1
    assert np.array_equal(np.concatenate(dask_client.gather(got.groups)), expected)


def test_dask_categorical_cuts_refused_where_there_is_no_engine(dask_client: Any) -> None:
    """``hierarchy`` has no Dask engine, ``values`` no relaxed cuts, Mondrian+ only median
    cuts: each refused in one line before any work; Mondrian+ and relaxed cuts default to
    median cuts (nothing recorded, as in memory)."""
    df, schema = values_frame(23)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), schema, dask_client)
    with pytest.raises(ParameterError, match="categorical_cuts=hierarchy is not available"):
        mondrian_dask(dt, [KAnonymity(3)], categorical_cuts="hierarchy")
    with pytest.raises(ParameterError, match="Mondrian\\+: median"):
        mondrian_dask(dt, [LDiversity(2)], plus=True, categorical_cuts="values")
    with pytest.raises(ParameterError, match="needs strict cuts"):
        mondrian_dask(dt, [KAnonymity(3)], cuts="relaxed", categorical_cuts="values")
    relaxed = mondrian_dask(dt, [KAnonymity(3)], cuts="relaxed")
    assert "categorical_cuts" not in relaxed.params


def test_strict_cuts_fold_equal_rows_into_units() -> None:
    """Under strict cuts a partition counts each distinct (QI, SA) row once, with its weight:
    every row maps to a unit with its codes, the weights add up to the rows, and a unit's first
    row is the first row with its codes. Relaxed cuts keep one unit per row."""
    from kerckhoffs.engines.dask_mondrian import _start
    from kerckhoffs.engines.dask_table import Part

    rng = np.random.default_rng(4)
    qi = rng.integers(0, 3, (500, 3)).astype(np.uint8)
    sa = rng.integers(0, 2, 500).astype(np.uint8)
    part = Part(qi, sa, None, 0)
    units = _start(part, np.array([0, 3, 6]), 0, fold=True)
    assert units.weight is not None and units.inverse is not None and units.first is not None
    assert units.weight.sum() == 500 and units.qi.shape[0] == 54  # 3 * 3 * 3 * 2 codes
    assert np.array_equal(units.qi[units.inverse], qi) and np.array_equal(
        units.sa[units.inverse], sa
    )
    assert np.array_equal(units.first, [np.flatnonzero(units.inverse == u)[0] for u in range(54)])
    rows = _start(part, np.array([0, 3, 6]), 0, fold=False)
    assert rows.weight is None and rows.qi is qi


def test_a_table_of_few_distinct_rows_is_finished_in_memory_from_the_start(
    dask_client: Any,
) -> None:
    """2,000 rows that are 40 distinct (QI, SA) rows repeated: each of the 3 partitions holds
    at most 40 units, so the whole table (at most 120 units, under finish_rows = 200 although
    it has 2,000 rows) goes to one worker as units with their counts before any level runs on
    the partitions; the partition is the in-memory one, for every row."""
    df, schema = random_frame(3)
    distinct = df.drop_duplicates().head(40).reset_index(drop=True)
    rows = distinct.iloc[np.random.default_rng(0).integers(0, len(distinct), 2000)]
    rows = rows.reset_index(drop=True)
    table = Table.encode(rows, schema)
    rule, _ = rule_from_models(table, [LDiversity(2)], "mondrian")
    expected = mondrian_groups(table, rule)
    dt = encode_dask(dd.from_pandas(rows, npartitions=3), schema, dask_client)
    got = mondrian_dask(dt, [LDiversity(2)], finish_rows=200, categorical_cuts="median")
    assert got.levels == 0  # no level on the partitions
    assert got.n_groups == int(expected.max()) + 1 > 1
    assert np.array_equal(np.concatenate(dask_client.gather(got.groups)), expected)
    # by rows (relaxed cuts fold nothing), the same table goes level by level first
    relaxed = mondrian_dask(
        dt, [LDiversity(2)], cuts="relaxed", finish_rows=200, categorical_cuts="median"
    )
    assert relaxed.levels > 0
    expected = mondrian_groups(table, rule, cuts="relaxed")
    assert np.array_equal(np.concatenate(dask_client.gather(relaxed.groups)), expected)
