"""Paper 002: the exclusive strategy can release where the inclusive one releases nothing on a
sequence of generalizations that is not the paper's own (a counterexample to "only the
inclusive strategy ever wins on random contiguous sequences", which a 2,700-table sample
suggested). Checked with both engines: the recursive publishers, which follow the
definitions step by step, and the class-wide engine, which decides every table of the
multiset class at once."""

from __future__ import annotations

import numpy as np

from kerckhoffs.disclosure import PAPER_CHK
from kerckhoffs.disclosure.classwide import class_outcomes
from kerckhoffs.disclosure.publishers import exclusive, inclusive, naive
from kerckhoffs.disclosure.sequence import GeneralizationSequence


def _labels(groups: list[list[int]]) -> list[int]:
    out = [0] * sum(len(g) for g in groups)
    for i, g in enumerate(groups):
        for row in g:
            out[row] = i
    return out


SEQ = GeneralizationSequence.from_labels(
    [
        _labels([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]),
        _labels([[0, 1, 2], [3, 4], [5, 6], [7, 8, 9]]),
        _labels([[0, 1, 2], [3, 4], [5, 6, 7, 8, 9]]),
    ]
)
TABLE = np.array([0, 1, 2, 0, 3, 0, 1, 2, 3, 3])


def test_exclusive_releases_g3_where_inclusive_releases_nothing() -> None:
    """Recursive (2, 2)-diversity: the naive choice is g3 (the instances g1 and g2 leave
    possible fail it); the
    exclusive strategy's disclosure set for g3 (the tables whose naive choice is g3) passes,
    the inclusive one's (every table no earlier level released) does not."""
    assert naive(SEQ, TABLE, PAPER_CHK).released == 2
    assert exclusive(SEQ, TABLE, PAPER_CHK).released == 2
    assert inclusive(SEQ, TABLE, PAPER_CHK).released is None
    co = class_outcomes(SEQ, np.bincount(TABLE), PAPER_CHK)
    at = int(np.flatnonzero((co.tables == TABLE).all(axis=1))[0])
    assert (co.naive[at], co.exclusive[at], co.inclusive[at]) == (2, 2, -1)
    assert co.tables.shape[0] == 25_200  # 10! / (3! 2! 2! 3!)
