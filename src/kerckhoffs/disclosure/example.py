"""Paper 002's running example, embedded so that the demo runs from an installed package (its Tables
1, 2, 4 and 6: ``docs/theory/disclosure-sets.md#worked-examples``; the same data as
``examples/disclosure``, a test keeps the two equal).

Ten patients (Table 1), each with an age (the quasi-identifier) and a condition (the
sensitive value), and the three candidate generalizations of Table 2, best first: ``g1``
cuts ages by decade, ``g2`` by 20-29 / 30-44 / 45-59 / 60-69, ``g3`` by 20-34 / 35-54 / 55-69.
``g2`` splits ``g1``'s group of Ellen (43) and Fen (49): the candidates are not nested.
"""

from __future__ import annotations

import pandas as pd

from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.disclosure.sequence import GeneralizationSequence

NAMES = ("Alice", "Bob", "Clark", "Diana", "Ellen", "Fen", "George", "Henry", "Ian", "Jason")
AGES = (21, 27, 31, 36, 43, 49, 52, 58, 63, 67)
CONDITIONS = (
    "flu",
    "tracheitis",
    "pneumonia",
    "tracheitis",
    "gastritis",
    "gastritis",
    "cancer",
    "enteritis",
    "cancer",
    "heart disease",
)
"""Table 1 (the paper's G0)."""

G_B = (
    "flu",
    "pneumonia",
    "tracheitis",
    "tracheitis",
    "gastritis",
    "gastritis",
    "cancer",
    "cancer",
    "enteritis",
    "heart disease",
)
"""The paper's instance G_b (Table 6), on which only the exclusive strategy releases."""

CANDIDATES = (
    ("g1", (0, 0, 1, 1, 2, 2, 3, 3, 4, 4)),
    ("g2", (0, 0, 1, 1, 1, 2, 2, 2, 3, 3)),
    ("g3", (0, 0, 0, 1, 1, 1, 1, 2, 2, 2)),
)
"""Table 2: each candidate's group of every row, best first."""


def running_example() -> tuple[pd.DataFrame, Schema, GeneralizationSequence]:
    """Table 1 as a DataFrame (name, age, condition), its schema (name an identifier, age a
    numeric QI, condition sensitive) and Table 2's candidates as a sequence."""
    df = pd.DataFrame({"name": NAMES, "age": AGES, "condition": CONDITIONS})
    schema = Schema(
        (
            Column("name", Role.IDENTIFIER),
            Column("age", Role.QUASI, Kind.NUMERIC),
            Column("condition", Role.SENSITIVE, Kind.CATEGORICAL),
        )
    )
    seq = GeneralizationSequence.from_labels(
        [list(labels) for _, labels in CANDIDATES], [name for name, _ in CANDIDATES]
    )
    return df, schema, seq


__all__ = ["AGES", "CANDIDATES", "CONDITIONS", "G_B", "NAMES", "running_example"]
