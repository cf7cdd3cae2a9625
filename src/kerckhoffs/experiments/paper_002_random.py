"""The random tables and generalization sequences of paper 002's suggested experiment E-A
(and the worst-case tables of E-B, :mod:`.paper_002_cost`): random partitions into
contiguous groups, random tables, the three publishers run on each (naive, inclusive,
exclusive, :mod:`kerckhoffs.disclosure`) and the aggregated sample; also the exact
distribution over every table of the paper's own g1-g3, one multiset class at a time. The
measures and the experiments are in :mod:`.paper_002_exclusive`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from kerckhoffs.disclosure import (
    NOTHING,
    PAPER_CHK,
    ClassOutcomes,
    GeneralizationSequence,
    class_outcomes,
    exclusive,
    inclusive,
    naive,
)
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.paper_002_examples import (
    running_sequence,
)


def random_composition(
    rng: np.random.Generator, n: int, parts: int, lo: int, hi: int
) -> np.ndarray:
    """Sizes of ``parts`` contiguous groups covering ``n`` rows, each in ``[lo, hi]``: the
    extra ``n - parts * lo`` rows spread by a uniform random composition, redrawn while a
    group is larger than ``hi``."""
    extra = n - parts * lo
    if extra < 0 or parts * hi < n:
        raise ParameterError(f"{n} rows cannot form {parts} groups of {lo}..{hi} rows")
    while True:
        cuts = np.sort(rng.choice(extra + parts - 1, size=parts - 1, replace=False))
        sizes = np.diff(np.concatenate([[-1], cuts, [extra + parts - 1]])) - 1 + lo
        if sizes.max() <= hi:
            return sizes


def random_sequence(
    rng: np.random.Generator,
    n_rows: int,
    n_funcs: int,
    max_group: int = 8,
    coarsest: bool = False,
) -> GeneralizationSequence:
    """``n_funcs`` QI-based generalizations of ``n_rows`` rows (read in QI order, as ages):
    each a partition into contiguous groups of 2..``max_group`` rows, the number of groups
    strictly decreasing (average group size increasing: utility non-increasing,
    ``docs/theory/disclosure-sets.md#generalizations``). Consecutive partitions need not be
    nested (``docs/theory/disclosure-sets.md#edge-cases``). The group counts are a random
    choice among the feasible ones, or with ``coarsest`` the ``n_funcs`` smallest (largest
    groups: E-B's sizes then grow with ``max_group``)."""
    lo_m = math.ceil(n_rows / max_group)
    hi_m = n_rows // 2
    choices = np.arange(lo_m, hi_m + 1)
    if choices.size < n_funcs:
        raise ParameterError(
            f"{n_rows} rows give only {choices.size} group counts for {n_funcs} generalizations"
        )
    if coarsest:
        ms = choices[:n_funcs][::-1]
    else:
        ms = np.sort(rng.choice(choices, size=n_funcs, replace=False))[::-1]
    labels = []
    for m in ms:
        sizes = random_composition(rng, n_rows, int(m), 2, max_group)
        labels.append(np.repeat(np.arange(int(m)), sizes))
    return GeneralizationSequence.from_labels(labels)


def random_table(rng: np.random.Generator, n_rows: int, n_values: int) -> np.ndarray:
    """``n_rows`` sensitive values drawn uniformly from ``n_values`` labels, recoded to the
    codes that occur (``0..k-1``, no padding with unused values:
    ``docs/theory/disclosure-sets.md#edge-cases``)."""
    raw = rng.integers(0, n_values, size=n_rows)
    return np.unique(raw, return_inverse=True)[1].astype(np.int64).ravel()


def strict_winner(incl: int, excl: int) -> str:
    """Which safe strategy is strictly more useful (outcomes 0-based, -1 = nothing):
    ``"inclusive"``, ``"exclusive"`` or ``"equal"``. Releasing beats releasing nothing; an
    earlier generalization beats a later one (``docs/theory/disclosure-sets.md#utility``)."""
    if incl == excl:
        return "equal"
    if excl == NOTHING or (incl != NOTHING and incl < excl):
        return "inclusive"
    return "exclusive"


Triple = tuple[int, int, int]
"""(inclusive, exclusive, naive) released index, 0-based, -1 = nothing."""


@dataclass
class UtilitySample:
    """E-A's aggregated sample: per outcome triple, its ``weight`` (number of tables, or in
    the class-wide mode the tables' share of their class summed over the classes) and the
    weight of those whose naive release is unsafe; ``units`` tables or classes drawn;
    ``seconds`` of publishing."""

    weight: dict[Triple, float]
    unsafe: dict[Triple, float]
    units: int
    seconds: float
    classes_won: dict[str, int] = field(default_factory=dict)
    """Class-wide samples: per strategy, the classes in which it is strictly better on at
    least one table."""
    per_unit: dict[str, list[float]] = field(default_factory=dict)
    """Per quantity of :data:`UTILITY_SERIES`, its value on each unit drawn (a table: 0 or 1;
    a class: the share of its tables), for the interval over units; empty when exact."""
    exact: bool = False
    """The weights are the exact distribution over all tables (no sampling)."""

    @property
    def total(self) -> float:
        return float(sum(self.weight.values()))


UTILITY_SERIES = (
    ("naive_released", "naive releases"),
    ("naive_unsafe", "naive release unsafe"),
    ("inclusive_released", "inclusive releases"),
    ("exclusive_released", "exclusive releases"),
    ("inclusive_wins", "inclusive strictly better"),
    ("exclusive_wins", "exclusive strictly better"),
)


def summarize(sample: UtilitySample) -> dict[str, float]:
    """The E-A quantities (weights, as :data:`UTILITY_SERIES`) of a sample."""
    out = dict.fromkeys((k for k, _ in UTILITY_SERIES), 0.0)
    for (inc, exc, nai), w in sample.weight.items():
        out["naive_released"] += w if nai != NOTHING else 0.0
        out["naive_unsafe"] += sample.unsafe[(inc, exc, nai)]
        out["inclusive_released"] += w if inc != NOTHING else 0.0
        out["exclusive_released"] += w if exc != NOTHING else 0.0
        winner = strict_winner(inc, exc)
        if winner != "equal":
            out[f"{winner}_wins"] += w
    return out


def utility_sample(
    n_rows: int, n_funcs: int, tables: int, seed: int, max_group: int = 8
) -> UtilitySample:
    """E-A on random sequences: ``tables`` random (table, sequence) pairs of ``n_rows`` rows,
    3-7 labels and ``n_funcs`` generalizations (:func:`random_sequence`), each run through the
    three publishers with the paper's CHK. Each table weighs 1."""
    rng = np.random.default_rng([seed, n_rows, n_funcs, 2])
    weight: dict[Triple, float] = {}
    unsafe: dict[Triple, float] = {}
    per_unit: dict[str, list[float]] = {}
    seconds = 0.0
    for _ in range(tables):
        seq = random_sequence(rng, n_rows, n_funcs, max_group)
        x = random_table(rng, n_rows, int(rng.integers(3, 8)))
        t0 = time.perf_counter()
        nv = naive(seq, x, PAPER_CHK)
        inc = inclusive(seq, x, PAPER_CHK)
        exc = exclusive(seq, x, PAPER_CHK)
        seconds += time.perf_counter() - t0
        key = (_index(inc.released), _index(exc.released), _index(nv.released))
        weight[key] = weight.get(key, 0.0) + 1.0
        unsafe[key] = unsafe.get(key, 0.0) + (0.0 if nv.safe else 1.0)
        _record_unit(per_unit, {key: 1.0}, {key: 0.0 if nv.safe else 1.0})
    return UtilitySample(weight, unsafe, tables, seconds, per_unit=per_unit)


def _record_unit(
    per_unit: dict[str, list[float]], weight: dict[Triple, float], unsafe: dict[Triple, float]
) -> None:
    """Appends one unit's quantities (its weights sum to 1) to ``per_unit``."""
    for key, value in summarize(UtilitySample(weight, unsafe, 1, 0.0)).items():
        per_unit.setdefault(key, []).append(value)


def integer_partitions(
    n: int, most_parts: int, largest: int | None = None
) -> list[tuple[int, ...]]:
    """The partitions of ``n`` into at most ``most_parts`` parts, largest part first."""
    if n == 0:
        return [()]
    top = n if largest is None else min(n, largest)
    if most_parts == 0:
        return []
    return [
        (p, *rest)
        for p in range(top, 0, -1)
        for rest in integer_partitions(n - p, most_parts - 1, p)
    ]


EA_LABELS = range(3, 8)
"""E-A's tables draw their number of labels uniformly from 3-7 (:func:`random_table`)."""


def partition_probability(parts: tuple[int, ...], n_rows: int) -> Fraction:
    """The probability that :func:`random_table` (``k`` labels uniform over
    :data:`EA_LABELS`, then each row's value uniform over the ``k``) draws a table whose
    value counts, sorted, are ``parts``: per ``k``, the ways to give the parts distinct labels
    (parts of equal size interchangeable) times the arrangements of the multiset over the
    rows, over ``k ** n_rows``."""
    d = len(parts)
    same = math.prod(math.factorial(parts.count(v)) for v in set(parts))
    arrangements = math.factorial(n_rows) // math.prod(math.factorial(v) for v in parts)
    total = Fraction(0)
    for k in EA_LABELS:
        if k >= d:
            labelings = math.factorial(k) // (math.factorial(k - d) * same)
            total += Fraction(labelings * arrangements, k**n_rows)
    return total / len(EA_LABELS)


def paper_sequence_exact() -> UtilitySample:
    """E-A on the paper's own g1-g3 (10 rows), exactly: every table E-A's generator can draw,
    with its probability. CHK is symmetric in the values, so a table's outcomes depend on its
    multiset only up to relabeling: one class per partition of 10 into at most 7 parts (38
    classes, 1 to 453,600 tables each), published by the class-wide engine; each weighs
    :func:`partition_probability`, its tables equally. The weights sum to 1; no sampling,
    no interval (replaces a sample of 40 classes, whose 0.26 % / 0.28 % it corrects)."""
    seq = running_sequence()
    weight: dict[Triple, float] = {}
    unsafe: dict[Triple, float] = {}
    won = {"inclusive": 0, "exclusive": 0}
    seconds = 0.0
    parts_list = integer_partitions(seq.n, max(EA_LABELS))
    for parts in parts_list:
        t0 = time.perf_counter()
        co = class_outcomes(seq, np.array(parts), PAPER_CHK)
        seconds += time.perf_counter() - t0
        _add_class(co, float(partition_probability(parts, seq.n)), weight, unsafe, won, None)
    return UtilitySample(weight, unsafe, len(parts_list), seconds, won, exact=True)


def random_class_sample(
    n_rows: int, n_funcs: int, classes: int, seed: int, max_group: int
) -> UtilitySample:
    """E-A on random sequences, class-wide: ``classes`` random (sequence, table) pairs as
    :func:`utility_sample` draws them, each table's whole multiset class published at once
    (each class weighs 1, its tables 1 / class size: under uniform values every table of
    a class is equally likely). Sees what a sample of single tables cannot: a strategy
    that wins on a few tables of a class (the exclusive one wins on about 0.01-0.03 % of
    tables here, below what a few thousand single tables can show)."""
    rng = np.random.default_rng([seed, n_rows, n_funcs, 3])
    return _class_sample(rng, classes, lambda: random_sequence(rng, n_rows, n_funcs, max_group))


def _class_sample(
    rng: np.random.Generator, classes: int, next_sequence: Callable[[], GeneralizationSequence]
) -> UtilitySample:
    weight: dict[Triple, float] = {}
    unsafe: dict[Triple, float] = {}
    won = {"inclusive": 0, "exclusive": 0}
    per_unit: dict[str, list[float]] = {}
    seconds = 0.0
    for _ in range(classes):
        seq = next_sequence()
        x = random_table(rng, seq.n, int(rng.integers(3, 8)))
        t0 = time.perf_counter()
        co = class_outcomes(seq, np.bincount(x), PAPER_CHK)
        seconds += time.perf_counter() - t0
        _add_class(co, 1.0, weight, unsafe, won, per_unit)
    return UtilitySample(weight, unsafe, classes, seconds, won, per_unit)


def _add_class(
    co: ClassOutcomes,
    class_weight: float,
    weight: dict[Triple, float],
    unsafe: dict[Triple, float],
    won: dict[str, int],
    per_unit: dict[str, list[float]] | None,
) -> None:
    """Adds one class's outcome triples, each table weighing ``class_weight / class size``;
    counts the class for each strategy strictly better on one of its tables; records the
    class's shares in ``per_unit`` (unless None)."""
    m = co.tables.shape[0]
    stacked = np.stack([co.inclusive, co.exclusive, co.naive], axis=1).astype(np.int64)
    triples, inv, counts = np.unique(stacked, axis=0, return_inverse=True, return_counts=True)
    bad = np.bincount(inv.ravel(), weights=co.naive_unsafe, minlength=triples.shape[0])
    mine: dict[Triple, float] = {}
    mine_bad: dict[Triple, float] = {}
    for t, k, u in zip(triples.tolist(), counts.tolist(), bad.tolist(), strict=True):
        key = (int(t[0]), int(t[1]), int(t[2]))
        mine[key], mine_bad[key] = k / m, u / m
        weight[key] = weight.get(key, 0.0) + class_weight * k / m
        unsafe[key] = unsafe.get(key, 0.0) + class_weight * u / m
    winners = {strict_winner(key[0], key[1]) for key in mine}
    for strategy in won:
        won[strategy] += strategy in winners
    if per_unit is not None:
        _record_unit(per_unit, mine, mine_bad)


def interval(values: Sequence[float], binary: bool) -> tuple[float, float]:
    """A 95 % interval for the mean of ``values`` (one per unit drawn): Wilson's score
    interval when every value is 0 or 1 (single tables; it stays informative at 0), else the
    normal interval mean +- 1.96 sd / sqrt(n) (class shares; n = 700 classes, where Student's
    t differs by 0.2 %)."""
    n = len(values)
    mean = sum(values) / n
    z = 1.959964
    if binary:
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return max(0.0, mean - z * sd / math.sqrt(n)), mean + z * sd / math.sqrt(n)


def _index(released: int | None) -> int:
    return NOTHING if released is None else int(released)
