"""A small hand-computable table (numeric age, a two-level letter hierarchy, a constant
column), shared by the NCP and utility-metric tests."""

from __future__ import annotations

import pandas as pd

from kerckhoffs import Hierarchy, Schema, Table

LETTER = Hierarchy(
    [["a", "X", "*"], ["b", "X", "*"], ["c", "Y", "*"], ["d", "Y", "*"], ["e", "Y", "*"]],
    name="letter",
)


def hand_table() -> Table:
    df = pd.DataFrame(
        {
            "age": [20, 25, 30, 40, 40, 20],
            "letter": ["a", "b", "a", "c", "d", "a"],
            "one": ["z"] * 6,
            "s": ["x", "y", "x", "y", "x", "y"],
        }
    )
    quasi = {
        "age": {"kind": "numeric"},
        "letter": {"kind": "categorical", "hierarchy": LETTER},
        "one": {"kind": "categorical"},
    }
    return Table.encode(df, Schema.build(quasi, "s"))
