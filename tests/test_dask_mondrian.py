"""Mondrian on Dask (kerckhoffs.engines.dask_mondrian) gives every row the same group as the
in-memory engine on the whole table: for random tables, every cut rule (k, frequency l,
entropy l, t-closeness, Mondrian+'s look-ahead), both medians and both cut modes."""

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
            mondrian_dask(dt, models, plus=plus, median=median, cuts=cuts, finish_rows=finish)
        return
    expected = mondrian_groups(table, rule, median=median, cuts=cuts)
    dt = encode_dask(dd.from_pandas(df, npartitions=1 + seed % 3), schema, dask_client)
    got = mondrian_dask(dt, models, plus=plus, median=median, cuts=cuts, finish_rows=finish)
    assert got.n_groups == int(expected.max()) + 1
    assert np.array_equal(np.concatenate(dask_client.gather(got.groups)), expected)


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
    got = mondrian_dask(dt, [LDiversity(2)], finish_rows=200)
    assert got.levels == 0  # no level on the partitions
    assert got.n_groups == int(expected.max()) + 1 > 1
    assert np.array_equal(np.concatenate(dask_client.gather(got.groups)), expected)
    # by rows (relaxed cuts fold nothing), the same table goes level by level first
    relaxed = mondrian_dask(dt, [LDiversity(2)], cuts="relaxed", finish_rows=200)
    assert relaxed.levels > 0
    expected = mondrian_groups(table, rule, cuts="relaxed")
    assert np.array_equal(np.concatenate(dask_client.gather(relaxed.groups)), expected)
