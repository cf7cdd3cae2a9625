"""Paper 002: the exclusive strategy can release where the inclusive one releases nothing on a
sequence of generalizations that is not the paper's own (a counterexample to "only the
inclusive strategy ever wins on random contiguous sequences", which a 2,700-table sample
suggested). Checked with both engines (the recursive publishers, which follow the
definitions step by step, and the class-wide engine, which decides every table of the
multiset class at once) and by an independent brute force over the 25,200 tables of the
multiset that uses no project code."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

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


# -- the same case by brute force, from the definitions alone -------------------------------------
# The brute force uses nothing of kerckhoffs: every table of the multiset is listed, a PER set
# is the list of tables that a generalization maps to the same groups' multisets, CHK is
# counted over a set of tables, and the three publishers follow paper 002's definitions
# (section 2: naive, inclusive with its recursive disclosure set, exclusive with the
# non-recursive one).
Table = tuple[int, ...]
GROUPS: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9)),
    ((0, 1, 2), (3, 4), (5, 6), (7, 8, 9)),
    ((0, 1, 2), (3, 4), (5, 6, 7, 8, 9)),
)


def _multiset_tables(counts: dict[int, int], n: int) -> list[Table]:
    """Every table of ``n`` rows with exactly ``counts[v]`` rows of value ``v``."""
    if n == 0:
        return [()]
    out = []
    for v in sorted(counts):
        if counts[v]:
            rest = {**counts, v: counts[v] - 1}
            out += [(v, *t) for t in _multiset_tables(rest, n - 1)]
    return out


CLASS = _multiset_tables({0: 3, 1: 2, 2: 2, 3: 3}, 10)


def _key(i: int, t: Table) -> tuple[tuple[int, ...], ...]:
    """g_i(t): each group of generalization i with its sorted values."""
    return tuple(tuple(sorted(t[r] for r in g)) for g in GROUPS[i])


def _group_by_key(i: int) -> dict[tuple[tuple[int, ...], ...], list[Table]]:
    """The PER sets of generalization i: the class's tables grouped by g_i."""
    out: dict[tuple[tuple[int, ...], ...], list[Table]] = {}
    for t in CLASS:
        out.setdefault(_key(i, t), []).append(t)
    return out


PER_BY_KEY = [_group_by_key(i) for i in range(3)]


def _per(i: int, t: Table) -> list[Table]:
    return PER_BY_KEY[i][_key(i, t)]


def _largest_share(tables: list[Table]) -> Fraction:
    """The largest share of one value for one person over ``tables``."""
    return max(
        Fraction(max(sum(t[p] == v for t in tables) for v in range(4)), len(tables))
        for p in range(10)
    )


def _chk(tables: list[Table]) -> bool:
    """Recursive (2,2)-diversity on a set of possible tables: nonempty, and every person's
    most likely value has a share below 2/3 (r1 < 2 (r2 + ... ) with two or more values)."""
    return bool(tables) and _largest_share(tables) < Fraction(2, 3)


def _naive(t: Table) -> int | None:
    return next((i for i in range(3) if _chk(_per(i, t))), None)


def _ds_incl(i: int, t: Table) -> list[Table]:
    """The tables of PER(g_i(t)) for which the inclusive publisher restricted to g_1..g_{i-1}
    releases nothing."""
    return [u for u in _per(i, t) if _incl(u, i) is None]


@cache
def _ds_incl_passes(i: int, key: tuple[tuple[int, ...], ...]) -> bool:
    """CHK on the inclusive disclosure set, which depends on the table only through g_i(t)
    (the PER set it enumerates): computed once per generalized table."""
    return _chk(_ds_incl(i, PER_BY_KEY[i][key][0]))


def _incl(t: Table, levels: int = 3) -> int | None:
    return next((i for i in range(levels) if _ds_incl_passes(i, _key(i, t))), None)


def _ds_excl(i: int, t: Table) -> list[Table]:
    """The tables of PER(g_i(t)) whose PER fails CHK under every earlier generalization."""
    return [u for u in _per(i, t) if not any(_chk(_per(j, u)) for j in range(i))]


def _excl(t: Table) -> int | None:
    i = _naive(t)
    return i if i is not None and _chk(_ds_excl(i, t)) else None


def test_brute_force_from_the_definitions_agrees() -> None:
    """The minimal case, decided without the engine: exclusive releases g3 (its disclosure set
    156 tables, largest share 8/13 < 2/3); inclusive releases nothing (g3's inclusive
    disclosure set 292 tables, largest share 52/73 >= 2/3)."""
    t = tuple(int(v) for v in TABLE)
    assert len(CLASS) == len(set(CLASS)) == 25_200
    assert _naive(t) == 2 and _excl(t) == 2 and _incl(t) is None
    ds_e, ds_i = _ds_excl(2, t), _ds_incl(2, t)
    assert (len(ds_e), _largest_share(ds_e)) == (156, Fraction(8, 13))
    assert (len(ds_i), _largest_share(ds_i)) == (292, Fraction(52, 73))
    # and the engine's disclosure sets are the same size
    assert exclusive(SEQ, TABLE, PAPER_CHK).disclosure_size == 156
    assert inclusive(SEQ, TABLE, PAPER_CHK).disclosure_size == 292
