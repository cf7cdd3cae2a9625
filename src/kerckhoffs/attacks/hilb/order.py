"""The Hilbert-order attack on Hilb (paper 000 Algorithm 7, section 8.3.1; spec ``asap.md`` 2.12).

Hilb (spec 2.4-2.5) sorts the rows along a Hilbert curve and, in its greedy step, emits the
``l`` bucket heads of lowest Hilbert index ``Q_T`` as a group. A row that lies inside that
group's ``Q_T`` range but was not taken (and was not grouped before) was *skipped*: it is not
the head of its SA bucket, so it shares its value with a member of the group that precedes it.
An adversary who knows every row's QIs (hence ``Q_T``) and the algorithm reads this off the
release and intersects the SA values of the two groups (Figure 8: ``t1 = t2 = gastritis``,
``t3 = heart disease``, ``t4 = diabetes``).

**Algorithm 7, with the spec's fixes.** Groups are ordered by their lowest row in the
algorithm's order (``Q_T``, ties by row id, as :func:`kerckhoffs.algorithms.hilb.hilb` sorts).
Walking that order with ``G`` the rows not yet passed, a group ``G1`` is *deterministic* while
``|G| - |G1| >= l * S_max(G)`` (line 5; ``|G|`` counts tuples and ``S_max`` is over the
published SA buckets, spec 2.12); the walk stops at the first group failing it (spec 2.12:
"Goto Line 14" means terminate). Line 5 is sound for Hilb, Hilb+ and Hilb++ alike: Hilb's
greedy step then passes at ``s = l`` whatever it covers (its test reads ``S_max(G - G1) <=
S_max(G)``), Hilb+'s look-ahead passes, and by induction the group holding the lowest remaining
row is the one emitted next. ``G1`` is *vulnerable* when some remaining row of another group
lies inside its range (``G~`` non-empty) and ``|G1| + 1 < 2l`` (line 7: ``G1`` plus the
duplicate would break l-diversity). Compromised tuples (Figure 9's count, spec 2.12's union
rule): the rows of every vulnerable ``G1`` and of every group of its ``G~``.

**Faster than the paper's O(m^2).** Numpy over rows, no loop over groups or rows: the group
order is one argsort of each group's lowest position; ``S_max`` of every suffix of that order
comes from one sort of (bucket, group rank) (the count of a row's bucket at or after its group,
maximized from the end), so line 5 is one comparison for all groups and the stop index its
first failure. Line 6 is interval logic: row ``u`` at position ``p`` in group rank ``j`` is
skipped by deterministic rank ``i`` iff ``i < j`` and ``p`` is below ``i``'s last position
(``i``'s first position is below ``p`` for every ``i < j``). Hence ``G~`` is non-empty iff some
position inside ``i``'s range holds a rank above ``i`` (a range-maximum search over a sparse
table of block maxima), and ``u`` is skipped by a vulnerable group iff the running maximum of
the vulnerable groups' last positions over ranks ``< j`` exceeds ``p``. O(n log n) in all; the
O(m^2) transcription (``algorithm7_literal`` in ``benchmarks/bench_hilb_attack.py`` and the
tests) names the same vulnerable groups and tuples. On the Census stand-in a skipped row lies
inside the ranges of ~40 groups on average at l = 6 (2.2 million pairs), which is why the
pairs are never enumerated: the posteriors use, for each skipped row, the first and the last
group skipping it (the first is ``searchsorted`` on the running maximum of last positions, the
last a range-maximum search), and for each group with a skipped row its first one.

**Posteriors (what each tuple reveals).** The union rule says which tuples Algorithm 7 touches,
not how much it learns about each. For each inference used, "skipped row ``u`` of group ``G2``
equals one of the first ``k`` members of deterministic group ``G1``" (``k`` = members preceding
``u``), the attack computes the exact random-worlds posterior (spec 1.6: uniform over each
group's arrangements of its published SA multiset) of an adversary who conditions on that one
inference. ``G1``'s values are distinct (a Hilb group is bucket heads), ``m2(x)`` is the count of
``x`` in ``G2``, ``C`` the values of ``G1`` that ``G2`` holds, ``c2 = sum_{x in C} m2(x)``:

- ``u``: ``Pr[x] = m2(x) / c2`` for ``x`` in ``C`` (pinned when ``C`` is one value);
- a member of ``G1`` among the first ``k``: ``Pr[x] = (1{x in C} m2(x) (s1 - 1) + (c2 - 1{x in C}
  m2(x)) (k - 1)) / (k c2 (s1 - 1))``;
- a later member of ``G1``: ``Pr[x] = (c2 - 1{x in C} m2(x)) / (c2 (s1 - 1))``, so a value of
  ``G1`` that ``G2`` lacks has ``1 / (s1 - 1) > 1/l`` for a group of ``l`` rows;
- another member ``w`` of ``G2``: ``Pr[x] = m2(x) (1 - 1{x in C} / c2) / (s2 - 1)``;
- ``u`` again, with all inferences on it at once: ``Pr[x] ∝ m2(x)`` over the values of ``G2``
  held by every ``G1`` skipping it (given ``v(u)``, the ``G1``s' arrangements are independent
  and each holds ``v(u)`` among its first ``k`` with the same probability).

(From ``Pr[E | v(h) = x]`` for the event ``E`` of the inference under independent uniform
arrangements of ``G1`` and ``G2``; the tests check every reported posterior against
:func:`~kerckhoffs.audits.random_worlds.naive_worlds` filtered by the inference.) Each is a
proper posterior (conditioning on an event that holds in the real data), so each tuple is
reported with the largest of them over the inferences it takes part in (and its own group's
published share), restricted to bounded values (every value, or the schema's sensitive set).
``breached``: that posterior exceeds ``1/l``. An adversary combining all inferences can learn
more; the reported posterior is a lower bound on what the best adversary learns. On Figure 8
it is exact: ``t1..t4`` pinned, as the brute-force smart world says.

**Which releases.** The frontier inference holds for ``hilb``, ``hilb+`` and ``hilb++`` (Hilb+'s
greedy groups are frontier heads too: spec 2.6's counterexample; Hilb++ leaves them as they
are, being under ``2l`` rows, and its pick-up subgroups come after them in the order and fail
line 5). ``hilb+strict`` and ``hilb++strict`` cut contiguous chunks of the Hilbert order by a
rule that reads only ``S_max`` of published unions (spec 2.6; simulatable, Theorem 5.3): no
tuple is skipped, so nothing is inferred; their pick-up subgroups interleave but are drawn
uniformly at random (Theorem 7.2), so the frontier inference does not apply to them and the
attack reports nothing (with the reason). Other provenance ("unknown", "external ...") is
attacked as Hilb.

**Ties and the QI codes.** ``ties="row"`` orders tied ``Q_T`` (identical QI vectors) by row id,
which is exactly Hilb's order when the release's rows are in the anonymizer's input order
(in-process releases). Read back from files, the row order is the file's, so
``ties="unordered"`` draws only conclusions that hold for any order of tied rows. Groups whose
lowest ``Q_T`` ties form a *class*: Hilb emits a class's groups one after the other (after the
first, the lowest remaining row still has that ``Q_T``, and only the class's groups hold it) in
an order the release does not give. So line 5 is checked for the worst order (the rows of the
later classes against ``l`` times ``S_max`` of this class and the later ones), and the walk
stops at the first class failing it; a row is skipped by a group only if its own group is in a
later class and its ``Q_T`` is strictly below the group's largest; and the members "before" it
are those with ``Q_T`` at most its own. (The earlier rule, attacking a group only if no other
group shared its lowest ``Q_T``, stopped the walk at the first tie: five groups into Adult at
``l = 3``, where ``Q_T`` ties are common; by classes, the walk on the true alignment passes the
same 7,791 groups as ``ties="row"``, with 1,669 tuples disclosed against 1,720.) ``Q_T`` is
recomputed from the QI codes with the grid order the release records (``bits``), so the codes
must be the anonymizer's (same schema); a release made with a given ``hilbert_index`` needs it
again. A release that contradicts the inference (a skipped row sharing no value with the
group, a deterministic group with repeated values) raises
:class:`~kerckhoffs.errors.InputError`: its ``Q_T`` order is not the one it was made with.

**A population aligned by cells.** A generalized release read from files holds cells, not
QIs; :func:`kerckhoffs.attacks.hilb.align.align` lays the population (the individuals' exact
QIs) on its rows and says what the published sizes and cells determine (its docstring). Where
they do not, the attack only concludes what holds for *every* alignment they allow:

- a group's first ``Q_T`` is known to lie in ``[low, high]`` (the lowest ``Q_T`` it may hold;
  the lowest it certainly holds, or the lowest of its open members when they are the highest
  its bounds allow); classes and the worst-order line 5 read these bounds. A group ``f`` that
  may be emitted before a group of first ``Q_T`` ``q`` has its first in ``[low_f, min(high_f,
  q)]``: the rows of the groups certainly after that (``low > min(high_f, q)``) must be ``l``
  times ``S_max`` of the groups not certainly before it (``high >= low_f``). When every group
  is l-eligible on its own, a tighter bound counts, per SA bucket, what each group that may
  precede ``f`` takes from line 5's slack (:func:`_line5_cut_by_groups`). Groups below the
  first ``q`` at which some group may fail are deterministic (:func:`_line5_cut`);
- a group whose members are all known (*resolved*) can be ``G1`` with its exact range; so can
  a group whose first member is known (its place in the order is then exact) for the rows below
  every individual it may hold beyond its settled rows: such a row lies inside its range (an
  unknown member comes after it) and the members before it are its settled rows, so ``k`` is
  exact (on the demo hospital data this discloses two more individuals);
- a row is skipped when every group it may be in is certainly after ``G1`` (it remains) and its
  ``Q_T`` is below ``G1``'s largest; then ``G1`` is vulnerable (line 7), whatever its group;
- an inference (posterior, union rule) names a skipped row only when its group is certain
  (a fixed count put it there);
- claims on release rows become claims on individuals only for settled types (each individual's
  group is one of those its fixed counts name) whose every row carries a claim on the same
  value, with the smallest such posterior: it holds whichever of its type's rows an individual
  is. Individuals of unsettled types, and those in no cell, are counted in
  ``AttackResult.not_located`` (not attacked).

Every such conclusion holds on the true alignment (the tests check every inference, every
vulnerable group and every pinned value against the truth on random releases, with the
population in another order than the anonymizer's input). It can be far less than the true
alignment gives. On Adult at ``l = 3`` in paper 000's setting (every education value counts,
``examples/adult/schema_every_value.toml``; 15,074 groups of three whose cells overlap widely,
45,219 of 45,222 individuals with several candidate groups) the published data fix the groups
of 136 of them; line 5 passes 11,116 groups (by their lowest possible first row), but only
settled individuals can be named as skipped: 9 inferences disclose 16 individuals, 2 pinned
to their true value, where the true alignment discloses 22,758. Under ``schema.toml``'s
sensitive subset (Hilb then folds the four values below high school into one bucket: another
release) the 9 inferences land on other values and no sensitive value is disclosed (1,669 with
the true alignment). At ``l = 2`` with the subset, 23,974 of 44,211 are fixed and 165
individuals are disclosed, every one pinned to its true value (859 with the true alignment).
The demo hospital data (600 rows, ``l = 3``): 48 disclosed of 336.
Walking Hilb's order from the left does not settle more at ``l = 3``: a group takes at most
one row of each value, so rows of the common values wait behind while the group's other
members are bucket heads far ahead (on the true run, past the first hundred groups, a group's
members span a median of 660 to 1,480 positions of the order, 13,141 at the 90th percentile
of groups 6,000-11,000), and the lowest remaining row is covered by a median of 570 unused
groups' cells (150 steps sampled, 2026-11-27).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from kerckhoffs.algorithms.hilb import table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import hilbert_bits, hilbert_order
from kerckhoffs.algorithms.registry import REGISTRY
from kerckhoffs.attacks.hilb.align import Alignment, align
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import CannotRun, InputError, ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = [
    "FRONTIER_ALGORITHMS",
    "HILB_FAMILY",
    "STRICT_ALGORITHMS",
    "Algorithm7",
    "algorithm7",
    "hilb_order_attack",
]

ATTACK = "hilb-order"
HILB_FAMILY = tuple(sorted(n for n, a in REGISTRY.items() if a.family == "hilb"))
"""The Hilb family, from the registry (importing :mod:`kerckhoffs.algorithms.hilb` above
registers it)."""
FRONTIER_ALGORITHMS = tuple(n for n in HILB_FAMILY if REGISTRY[n].frontier)
"""Hilb variants whose frontier may skip rows of the Hilbert order: Algorithm 7 applies."""
STRICT_ALGORITHMS = tuple(n for n in HILB_FAMILY if not REGISTRY[n].frontier)
"""Hilb variants that cut contiguous chunks of the order: nothing to infer (STRICT_REASON)."""
TIES = ("row", "unordered")
_BLOCK = 16  # values per block of the range-maximum table
_DENSE = 20_000_000  # largest groups x buckets histogram kept dense

STRICT_REASON = (
    "{alg} cuts contiguous chunks of the Hilbert order by l * S_max of published unions and "
    "splits them by uniformly random pick-up (spec asap.md 2.6, 2.8; Theorems 5.3, 7.2): no "
    "row is skipped by a frontier, so Algorithm 7's inference does not apply"
)


@dataclass(frozen=True, eq=False)
class Algorithm7:
    """What Algorithm 7 finds on one release (group ids are the release's partition ids).

    ``order``: the groups by their lowest row in Hilbert order (the attack's order);
    ``deterministic``: how many leading groups of ``order`` pass line 5 (the walk stops at
    ``order[deterministic]``); ``vulnerable``: bool per group (line 7); ``union``: bool per row,
    the compromised tuples of the union rule (spec 2.12). The inferences the posteriors use
    (each skipped row with the first and the last deterministic group skipping it, each
    deterministic group with its first skipped row; distinct): ``pair_group`` (``G1``),
    ``pair_row`` (the skipped row ``u``) and ``pair_prefix`` (``k``, members of ``G1`` before
    ``u``). ``positions``: each row's rank in ``(Q_T, row id)`` order; ``l`` the diversity
    parameter; ``ties`` the tie rule used; ``certain``: per row, whether its group is certain
    (an alignment's settled rows; ``None``: every row). A ``G1`` with rows whose individual is
    not known has its certain rows as its first members (those before ``u``).
    """

    l: int  # noqa: E741
    ties: str
    order: np.ndarray
    deterministic: int
    vulnerable: np.ndarray
    union: np.ndarray
    pair_group: np.ndarray
    pair_row: np.ndarray
    pair_prefix: np.ndarray
    positions: np.ndarray
    certain: np.ndarray | None = None

    @property
    def vulnerable_groups(self) -> np.ndarray:
        """The vulnerable groups' ids, in the attack's order."""
        return self.order[self.vulnerable[self.order]]

    @property
    def compromised(self) -> int:
        """Tuples compromised by the union rule (paper 000 Figure 9's measure)."""
        return int(self.union.sum())


# -- inputs ----------------------------------------------------------------------------------------
def _check_ties(ties: str) -> str:
    if ties not in TIES:
        raise ParameterError(f"{ATTACK}: ties must be one of {', '.join(TIES)}, got {ties!r}")
    return ties


def _whole(value: Any, name: str) -> int:
    """A whole number >= 1 from an int, an integral float or such a string (CLI options)."""
    try:
        ok = not isinstance(value, bool) and float(value).is_integer() and float(value) >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"{ATTACK}: {name} must be a whole number >= 1, got {value!r}")
    return int(float(value))


def _l_of(release: Release, l: Any) -> int:  # noqa: E741
    """``l`` given, else the release's recorded ``l``, else its smallest group (Hilb's groups
    have ``l`` rows)."""
    if l is None:
        l = release.provenance.parameters.get("l")  # noqa: E741
    if l is None:
        l = int(release.partition.sizes.min()) if release.partition.n else 1  # noqa: E741
    return _whole(l, "l")


def _qi_constant_in_groups(release: Release) -> bool:
    """Every group has one QI vector: the table holds published cells, not exact QIs."""
    part = release.partition
    n = part.n
    if n == 0 or part.n_groups == n:
        return False
    first = np.empty(part.n_groups, dtype=np.int64)
    first[part.group[::-1]] = np.arange(n - 1, -1, -1)  # each group's first row
    qi = release.table.qi
    return bool((qi == qi[first[part.group]]).all())


def _hilbert_keys(
    release: Release,
    population: Table | None,
    hilbert_index: np.ndarray | None,
    bits: int | None,
    input_order: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's position in ``(Q_T, row id)`` order and the dense rank of its ``Q_T``; the
    row id is ``input_order`` when given (the row's index in the anonymizer's input)."""
    n = release.table.n
    params = release.provenance.parameters
    if hilbert_index is not None:
        index = np.asarray(hilbert_index)
        if index.shape[0] != n:
            raise ParameterError(
                f"{ATTACK}: hilbert_index has {index.shape[0]} values for {n} rows"
            )
    else:
        if params.get("hilbert_index") == "given":
            raise ParameterError(
                f"{ATTACK}: the release was made with a given Hilbert index; pass it as "
                "hilbert_index"
            )
        source = population if population is not None else release.table
        if population is not None:
            if population.n != n:
                raise ParameterError(
                    f"{ATTACK}: the population has {population.n} rows, the release {n}"
                )
        elif release.scheme == Scheme.GENERALIZATION and _qi_constant_in_groups(release):
            raise ParameterError(
                f"{ATTACK}: the release holds only generalized cells; pass the population's "
                "exact QIs (row-aligned with the release), or align the population with the "
                "cells (alignment=kerckhoffs.attacks.hilb.align.align(...))"
            )
        need = hilbert_bits([c.size for c in source.qi_columns])
        if bits is None:
            bits = params.get("bits")
        bits = need if bits is None else _whole(bits, "bits")
        if bits < need:
            raise ParameterError(
                f"{ATTACK}: bits={bits} is too few for the QI codes (the largest domain needs "
                f"{need}); are these the anonymizer's codes?"
            )
        index = table_hilbert_index(source, bits)
    if input_order is None:
        order = hilbert_order(index=index)
    else:
        tie = np.asarray(input_order)
        if tie.shape != (n,) or np.unique(tie).size != n:
            raise ParameterError(
                f"{ATTACK}: input_order must give each of the {n} rows a distinct index"
            )
        words = [index] if index.ndim == 1 else [index[:, w] for w in range(index.shape[1])]
        order = np.lexsort((tie, *words[::-1]))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n, dtype=np.int64)
    sorted_index = index[order]
    if sorted_index.ndim == 1:
        change = sorted_index[1:] != sorted_index[:-1]
    else:
        change = (sorted_index[1:] != sorted_index[:-1]).any(axis=1)
    qrank_by_pos = np.concatenate([[0], np.cumsum(change)]).astype(np.int64)
    return pos, qrank_by_pos[pos] if n else qrank_by_pos


def _buckets(release: Release) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Published SA bucket per row, whether each bucket is bounded, and bucket labels.

    One bucket per SA code, except that a sensitive subset in ``set`` mode is one bucket (what
    :func:`kerckhoffs.algorithms.anatomy.sa_buckets` does for Hilb). Bounded buckets are those
    l-diversity bounds: every value without a subset, else the sensitive ones.
    """
    t = release.table
    labels = [str(v) for v in t.sa_column.labels.tolist()]
    sens = np.asarray(t.sensitive, dtype=bool)
    mapping = np.arange(t.n_sa, dtype=np.int64)
    bounded = np.ones(t.n_sa, dtype=bool)
    if not sens.all():
        bounded = sens.copy()
        if t.schema.sensitive_mode == SensitiveMode.SET and sens.any():
            merged = int(np.flatnonzero(sens)[0])
            mapping[sens] = merged
            names = "|".join(labels[i] for i in np.flatnonzero(sens))
            labels[merged] = names
    bucket = mapping[np.asarray(release.sa_published, dtype=np.int64)]
    return bucket, bounded, labels


# -- Algorithm 7 -----------------------------------------------------------------------------------
def algorithm7(
    release: Release,
    *,
    l: int | None = None,  # noqa: E741
    population: Table | None = None,
    hilbert_index: np.ndarray | None = None,
    bits: int | None = None,
    ties: str = "row",
    input_order: np.ndarray | None = None,
    alignment: Alignment | None = None,
) -> Algorithm7:
    """Algorithm 7 of paper 000 (spec ``asap.md`` 2.12) on ``release``: deterministic and
    vulnerable groups, the union-rule compromised tuples and the skip inferences.

    ``l`` defaults to the release's recorded ``l`` (else its smallest group). ``Q_T`` is
    computed from ``population``'s QI codes (exact QIs row-aligned with the release, for a
    generalized release read from files) or the release table's, with the release's recorded
    ``bits``; or given as ``hilbert_index``. ``ties`` as in the module docstring; with
    ``ties="row"``, ``input_order`` (each row's index in the anonymizer's input table) breaks
    ties of ``Q_T`` instead of the release's row order. ``alignment``: a population aligned
    by cells (:func:`~kerckhoffs.attacks.hilb.align.align`; needs ``ties="unordered"``), whose
    undetermined part the walk treats as the module docstring says; its inferences then name
    release rows whose group is certain (``alignment.settled``).
    """
    _check_ties(ties)
    l = _l_of(release, l)  # noqa: E741
    if alignment is not None:
        population = _aligned_population(release, alignment, population, hilbert_index, input_order)
    pos, qrank = _hilbert_keys(release, population, hilbert_index, bits, input_order)
    bucket, _, _ = _buckets(release)
    group = release.partition.group.astype(np.int64)
    unc = None if alignment is None else _uncertain(alignment, group, qrank)
    return _algorithm7(pos, qrank, group, bucket, l, ties, unc)


def _aligned_population(
    release: Release,
    alignment: Alignment,
    population: Table | None,
    hilbert_index: np.ndarray | None,
    input_order: np.ndarray | None,
) -> Table:
    """The alignment's table, after checking it is the only source of QIs and row order."""
    if population is not None or hilbert_index is not None or input_order is not None:
        raise ParameterError(
            f"{ATTACK}: an alignment replaces population, hilbert_index and input_order"
        )
    if alignment.table.n != release.table.n:
        raise ParameterError(
            f"{ATTACK}: the alignment has {alignment.table.n} rows, the release {release.table.n}"
        )
    return alignment.table


@dataclass(frozen=True, eq=False)
class _Uncertain:
    """What an alignment leaves open (:mod:`kerckhoffs.attacks.hilb.align`), for
    :func:`_algorithm7` with ``ties="unordered"``; keys are dense ranks of ``Q_T``.

    ``group_key`` and ``group_sure``: the lowest and the highest ``Q_T`` each group's first
    member can have (the lowest ``Q_T`` it may hold, the lowest it certainly holds);
    ``group_resolved``: its members' ``Q_T`` are all known; ``group_open_min``: the lowest
    ``Q_T`` of the individuals it may hold whose count in it is not fixed (the maximum int64
    for a resolved group); ``row_key``: per row, the lowest ``group_key`` of the groups it can
    be in; ``row_settled``: per row, its group is certain.
    """

    group_key: np.ndarray
    group_sure: np.ndarray
    group_resolved: np.ndarray
    group_open_min: np.ndarray
    row_key: np.ndarray
    row_settled: np.ndarray


def _algorithm7(
    pos: np.ndarray,
    qrank: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
    ties: str,
    unc: _Uncertain | None = None,
) -> Algorithm7:
    n = int(group.shape[0])
    group = group.astype(np.int64)
    n_groups = int(group.max()) + 1 if n else 0
    empty = np.empty(0, dtype=np.int64)
    if n == 0:
        return Algorithm7(
            l, ties, empty, 0, np.zeros(0, bool), np.zeros(0, bool), empty, empty, empty, pos
        )
    unordered = ties == "unordered"
    if unc is not None and not unordered:
        raise ParameterError(
            f"{ATTACK}: a population aligned by cells has no row order; use ties=unordered"
        )
    order = np.empty(n, dtype=np.int64)  # row at each position
    order[pos] = np.arange(n, dtype=np.int64)
    sizes = np.bincount(group, minlength=n_groups)
    first = np.full(n_groups, n, dtype=np.int64)
    np.minimum.at(first, group, pos)
    last = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(last, group, pos)
    if unc is None:
        attack_order = np.argsort(first, kind="stable")  # line 2: by lowest (Q_T, row id)
    else:  # by the lowest Q_T its first member can have (exact for the groups walked)
        attack_order = np.lexsort((first, unc.group_key))
    rank = np.empty(n_groups, dtype=np.int64)
    rank[attack_order] = np.arange(n_groups)
    j_by_pos = rank[group[order]]
    sz = sizes[attack_order]

    # line 5: S_max of the rows of the groups at or after each rank (published buckets)
    smax_from = _smax_suffix(bucket, rank[group], n_groups)
    remaining = n - (np.cumsum(sz) - sz)
    qrank_by_pos = qrank[order]
    if unordered:  # classes of groups sharing their lowest Q_T, in an unknown order
        if unc is None:
            low_q = qrank_by_pos[first[attack_order]]
            row_key_by_pos = low_q[j_by_pos]
        else:
            low_q = unc.group_key[attack_order]
            row_key_by_pos = unc.row_key[order]
        if unc is None:
            new_class = np.r_[True, low_q[1:] != low_q[:-1]]
            starts = np.flatnonzero(new_class)
            cls_end = np.r_[starts[1:], n_groups][np.cumsum(new_class) - 1]
            cls_start = starts[np.cumsum(new_class) - 1]
            # line 5 whatever the order inside the class: fewest rows left, largest S_max
            ok = np.r_[remaining, 0][cls_end] >= l * smax_from[cls_start]
            stop = int(np.argmin(ok)) if not ok.all() else n_groups
        else:  # deterministic: below the first Q_T from which some group may fail line 5
            cut = _line5_cut(unc.group_key, unc.group_sure, group, bucket, l)
            stop = int(np.searchsorted(low_q, cut, side="left"))
    else:
        ok = remaining - sz >= l * smax_from
        stop = int(np.argmin(ok)) if not ok.all() else n_groups

    # skips: the row at position p is skipped by rank i < stop iff i < limit(p) and p < end_i
    # (limit: the ranks certainly emitted before p's group, whose first rows all precede p)
    start = first[attack_order[:stop]] + 1
    end = last[attack_order[:stop]]
    if unordered:  # strictly below the group's largest Q_T; only an earlier class skips
        tie_start = np.flatnonzero(np.r_[True, qrank_by_pos[1:] != qrank_by_pos[:-1]])
        end = tie_start[qrank_by_pos[end]]
        limit = np.minimum(np.searchsorted(low_q, row_key_by_pos, side="left"), stop)
    else:
        limit = np.minimum(j_by_pos, stop)
    if unc is not None:
        # a group whose members are not all known still skips the rows below every member it
        # may hold beyond its settled rows, when its first member is known (so is its place in
        # the order): those rows lie inside its range (an unknown member comes after them) and
        # its members before them are its settled rows, so k is exact. Any other unresolved
        # group infers nothing (it may still be deterministic, which is all the walk past it
        # needs). Rows from its known first Q_T on are searched (its laid-out rows may not be
        # its members).
        det_g = attack_order[:stop]
        first_known = unc.group_key[det_g] == unc.group_sure[det_g]
        below_open = np.searchsorted(qrank_by_pos, unc.group_open_min[det_g], side="left")
        resolved = unc.group_resolved[det_g]
        end = np.where(resolved, end, np.where(first_known, below_open, -1))
        key_start = np.searchsorted(qrank_by_pos, unc.group_key[det_g], side="left") + 1
        start = np.where(resolved, start, key_start)
    reach = np.maximum.accumulate(end) if stop else np.zeros(0, dtype=np.int64)
    skip_lo = np.searchsorted(reach, np.arange(n), side="right")  # the first rank skipping p
    skipped = np.flatnonzero(skip_lo < limit)
    # line 6: the first skipped row of each deterministic group (G~ is non-empty iff it exists)
    first_skip = _RangeMax(limit).first_above(start, end, np.arange(stop))
    has_skip = first_skip < end
    vul_rank = np.zeros(n_groups, dtype=bool)
    vul_rank[:stop] = has_skip & (sz[:stop] + 1 < 2 * l)  # line 7
    vulnerable = np.zeros(n_groups, dtype=bool)
    vulnerable[attack_order] = vul_rank
    # union rule: the vulnerable groups and the groups of the rows they skip
    vreach = np.maximum.accumulate(np.where(vul_rank[:stop], end, -1)) if stop else reach
    p_all = np.arange(n)
    by_vul = np.zeros(n, dtype=bool)
    has_lim = limit > 0
    by_vul[has_lim] = vreach[limit[has_lim] - 1] > p_all[has_lim]
    if unc is not None:  # a skipped row of an uncertain group names no group
        settled_by_pos = unc.row_settled[order]
        by_vul &= settled_by_pos
        skipped = skipped[settled_by_pos[skipped]]
        first_skip = _RangeMax(np.where(settled_by_pos, limit, -1)).first_above(
            start, end, np.arange(stop)
        )
    hit = vulnerable.copy()
    hit[group[order[by_vul]]] = True

    # the inferences used for posteriors: each skipped row with its first and its last
    # skipper, and each deterministic group with its first skipped row (rows of certain groups)
    first_skipper = skip_lo[skipped]
    last_skipper = _RangeMax(end).last_above(first_skipper, limit[skipped], skipped)
    det = np.flatnonzero(first_skip < end)
    pair = np.sort(
        np.concatenate(
            [first_skipper * n + skipped, last_skipper * n + skipped, det * n + first_skip[det]]
        )
    )
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if pair.size else pair
    pair_i, pair_p = pair // n, pair % n
    pair_row = order[pair_p]
    # k: members of G1 before u (row order) / with Q_T at most u's (unordered); with an
    # alignment, its settled rows (its other members come after u, see ``end`` above)
    in_det = j_by_pos < stop
    if unc is not None:
        in_det &= unc.row_settled[order]
    mem_key = np.flatnonzero(in_det)  # positions of deterministic rows, ascending
    mem_rank = j_by_pos[mem_key]
    srt = np.argsort(mem_rank, kind="stable")
    mem_rank, mem_key = mem_rank[srt], mem_key[srt]
    side: Literal["left", "right"]
    if unordered:
        mem_key, u_key, side = qrank_by_pos[mem_key], qrank_by_pos[pair_p], "right"
    else:
        u_key, side = pair_p, "left"
    flat = mem_rank * (n + 1) + mem_key  # ascending: by rank, then key
    mem_start = np.concatenate([[0], np.cumsum(np.bincount(mem_rank, minlength=stop))])
    k = np.searchsorted(flat, pair_i * (n + 1) + u_key, side=side) - mem_start[pair_i]
    return Algorithm7(
        l,
        ties,
        attack_order,
        stop,
        vulnerable,
        hit[group],
        attack_order[pair_i],
        pair_row,
        k.astype(np.int64),
        pos,
        None if unc is None else unc.row_settled,
    )


def _line5_cut(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int:
    """The lowest ``Q_T`` key ``q`` such that a group emitted before a group of first key ``q``
    may have failed line 5, when group ``f``'s first key is only known to lie in ``[low[f],
    high[f]]``: groups of first key below the cut are deterministic. The larger of two sound
    cuts (:func:`_line5_cut_by_sets`, and :func:`_line5_cut_by_groups` when it applies)."""
    cut = _line5_cut_by_sets(low, high, group, bucket, l)
    by_groups = _line5_cut_by_groups(low, high, group, bucket, l)
    return cut if by_groups is None else max(cut, by_groups)


def _line5_cut_by_sets(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int:
    """If ``f`` was emitted before a group of key ``q``, its first key ``x`` lies in ``[low[f],
    min(high[f], q)]``; the tuples remaining after it include the groups certainly after it
    (``low > x``, at least those with ``low > min(high[f], q)``) and lie in the groups not
    certainly before it (``high >= low[f]``), so line 5 holds at ``f`` when the rows of the
    first set are at least ``l`` times ``S_max`` of the second. The rows side shrinks as ``q``
    grows: ``f`` passes up to a largest ``q`` (``thr``), and may fail from ``max(low[f], thr +
    1)`` on, if ``high[f] > thr``; the cut is the least of these."""
    n_groups = low.shape[0]
    sizes = np.bincount(group, minlength=n_groups)
    by_low = np.argsort(low, kind="stable")
    low_sorted = low[by_low]
    rows_from = np.cumsum(sizes[by_low][::-1])[::-1]  # rows of groups by_low[k:], decreasing
    by_high = np.argsort(high, kind="stable")
    rank = np.empty(n_groups, dtype=np.int64)
    rank[by_high] = np.arange(n_groups)
    smax_from = np.r_[_smax_suffix(bucket, rank[group], n_groups), 0]
    need = l * smax_from[np.searchsorted(high[by_high], low, side="left")]
    # the last k with rows_from[k] >= need; f passes while {low > x} covers by_low[k:]
    k = np.searchsorted(-rows_from, -need, side="right") - 1
    top = np.iinfo(np.int64).max
    thr = np.where(k >= 0, low_sorted[np.maximum(k, 0)] - 1, -1)
    may_fail = high > thr
    start = np.where(may_fail, np.maximum(low, thr + 1), top)
    return int(start.min()) if n_groups else top


def _line5_cut_by_groups(
    low: np.ndarray,
    high: np.ndarray,
    group: np.ndarray,
    bucket: np.ndarray,
    l: int,  # noqa: E741
) -> int | None:
    """The cut when every group is ``l``-eligible on its own (``l`` times its most frequent
    bucket's count at most its size, as in every l-diverse release); ``None`` otherwise.

    Line 5 at ``f`` reads, for every bucket ``b``: ``n - |f| - l * total_b + sum over the
    groups B emitted before f of d_b(g) >= 0``, with ``d_b(g) = l * count_b(g) - |g|``. Every
    ``d_b(g) <= 0`` here, so the left side is least when ``B`` holds every group that may
    precede ``f``: those whose lowest first key is at most ``f``'s first key ``x``, and ``x <=
    min(high[f], q)`` when ``f`` is emitted before a group of key ``q``. In groups sorted by
    ``low``, that is a prefix, and line 5 holds for every ``B`` inside the prefix of ``k``
    groups when the remaining rows (the suffix, with ``f`` if ``f`` lies in the prefix) minus
    ``|f|`` are at least ``l`` times the suffix's ``S_max`` (plus ``f``'s largest count when
    ``f`` lies in the prefix). That holds up to a largest ``k`` (a longer prefix only lowers
    it), found for all groups at once by bisection; ``f`` may fail once the prefix reaches the
    next group's ``low`` ``L``: from ``q = max(low[f], L)`` if ``high[f] >= L``.

    The per-group sums make this far tighter than :func:`_line5_cut_by_sets` where the first
    keys are uncertain: on Adult's Hilb release at ``l = 3`` read from files, 11,098 groups lie
    below this cut against 170, and the first group failing line 5 on the true alignment has
    the key right after it."""
    n_groups = low.shape[0]
    if n_groups == 0:
        return None
    sizes = np.bincount(group, minlength=n_groups)
    n_b = int(bucket.max()) + 1
    keys, counts = np.unique(group * n_b + bucket, return_counts=True)
    cmax = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(cmax, keys // n_b, counts)
    if (l * cmax > sizes).any():
        return None
    by_low = np.argsort(low, kind="stable")
    low_sorted = low[by_low]
    rank = np.empty(n_groups, dtype=np.int64)
    rank[by_low] = np.arange(n_groups)
    rows_from = np.r_[np.cumsum(sizes[by_low][::-1])[::-1], 0]  # rows of ranks >= k
    smax_from = np.r_[_smax_suffix(bucket, rank[group], n_groups), 0]

    def holds(k: np.ndarray) -> np.ndarray:  # line 5 at each f with the prefix of k groups
        f_after = k <= rank
        return np.where(
            f_after,
            rows_from[k] - sizes >= l * smax_from[k],
            rows_from[k] >= l * (smax_from[k] + cmax),
        )

    zero = np.zeros(n_groups, dtype=np.int64)
    ok0 = holds(zero)
    lo = np.where(ok0, 0, -1)  # holds at lo (or lo = -1), fails at hi (n_groups + 1: never)
    hi = np.where(ok0, n_groups + 1, 0)
    while True:  # bisection, for all groups at once (about log2 of the group count rounds)
        active = hi - lo > 1
        if not active.any():
            break
        mid = (lo + hi) // 2
        ok = holds(np.clip(mid, 0, n_groups))
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    top = np.iinfo(np.int64).max
    fails = lo < n_groups
    edge = np.where(lo < 0, low, low_sorted[np.clip(lo, 0, n_groups - 1)])
    start = np.where(fails & (high >= edge), np.maximum(low, edge), top)
    return int(start.min())


def _smax_suffix(bucket: np.ndarray, rank: np.ndarray, n_ranks: int) -> np.ndarray:
    """Per rank ``r``: the largest count of one bucket among the rows of ranks ``>= r`` (one
    sort of (bucket, rank); a bucket's count at or after a rank, maximized from the end)."""
    n_b = int(bucket.max()) + 1
    ks = np.sort(bucket * n_ranks + rank)
    bucket_end = np.cumsum(np.bincount(bucket, minlength=n_b))
    run = np.r_[True, ks[1:] != ks[:-1]]
    first_of_run = np.flatnonzero(run)[np.cumsum(run) - 1]
    left = bucket_end[ks // n_ranks] - first_of_run  # rows of the bucket at ranks >= this
    gmax = np.zeros(n_ranks, dtype=np.int64)
    np.maximum.at(gmax, ks % n_ranks, left)
    return np.maximum.accumulate(gmax[::-1])[::-1]


class _RangeMax:
    """Range-maximum searches over an int array, vectorized over queries: a sparse table of
    the maxima of blocks of ``_BLOCK`` values (memory ``n / _BLOCK * log n``), plus direct
    scans of the partial blocks at the ends of a range."""

    def __init__(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=np.int64)
        self.n = v.shape[0]
        nb = max(1, -(-self.n // _BLOCK))
        self.v = np.full(nb * _BLOCK, np.iinfo(np.int64).min, dtype=np.int64)
        self.v[: self.n] = v
        self.levels = [self.v.reshape(nb, _BLOCK).max(axis=1)]
        s = 1
        while (1 << s) <= nb:
            prev = self.levels[-1]
            half = 1 << (s - 1)
            self.levels.append(np.maximum(prev[:-half], prev[half:]))
            s += 1

    def _scan(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray, first: bool) -> np.ndarray:
        """First (or last) index in ``[lo, hi)`` with value above ``t``; ranges span at most one
        block; ``hi`` (or ``lo - 1``) when none."""
        idx = lo[:, None] + np.arange(_BLOCK)[None, :]
        inside = idx < hi[:, None]
        above = inside & (self.v[np.minimum(idx, self.v.shape[0] - 1)] > t[:, None])
        found = above.any(axis=1)
        if first:
            at = lo + np.argmax(above, axis=1)
            return np.where(found, at, hi)
        at = lo + _BLOCK - 1 - np.argmax(above[:, ::-1], axis=1)
        return np.where(found, at, lo - 1)

    def first_above(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query, the first index ``i`` in ``[lo, hi)`` with ``values[i] > t``, else ``hi``."""
        lo, hi, t = (np.asarray(a, dtype=np.int64) for a in (lo, hi, t))
        hi = np.maximum(hi, lo)
        head_end = np.minimum(hi, (lo // _BLOCK + 1) * _BLOCK)
        out = self._scan(lo, head_end, t, True)
        todo = np.flatnonzero(out >= head_end)  # not in the head block
        out[todo] = hi[todo]
        b0 = head_end[todo] // _BLOCK
        b1 = hi[todo] // _BLOCK  # full blocks b0 .. b1 - 1
        cur = b0.copy()
        tt = t[todo]
        for s in range(len(self.levels) - 1, -1, -1):  # skip blocks whose maximum is <= t
            step = 1 << s
            can = cur + step <= b1
            lvl = self.levels[s]
            can[can] &= lvl[cur[can]] <= tt[can]
            cur[can] += step
        blk = cur < b1
        lo2 = np.where(blk, cur * _BLOCK, np.maximum(b1 * _BLOCK, head_end[todo]))
        hi2 = np.where(blk, cur * _BLOCK + _BLOCK, hi[todo])
        out[todo] = self._scan(lo2, np.minimum(hi2, hi[todo]), tt, True)
        out[todo] = np.where(out[todo] >= np.minimum(hi2, hi[todo]), hi[todo], out[todo])
        return out

    def last_above(self, lo: np.ndarray, hi: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query, the last index ``i`` in ``[lo, hi)`` with ``values[i] > t``, else
        ``lo - 1``."""
        lo, hi, t = (np.asarray(a, dtype=np.int64) for a in (lo, hi, t))
        hi = np.maximum(hi, lo)
        tail_start = np.maximum(lo, ((hi - 1) // _BLOCK) * _BLOCK)
        out = self._scan(tail_start, hi, t, False)
        todo = np.flatnonzero(out < tail_start)  # not in the tail block
        out[todo] = lo[todo] - 1
        b0 = -(-lo[todo] // _BLOCK)  # full blocks b0 .. b1 - 1
        b1 = tail_start[todo] // _BLOCK
        cur = b1.copy()
        tt = t[todo]
        for s in range(len(self.levels) - 1, -1, -1):
            step = 1 << s
            can = cur - step >= b0
            lvl = self.levels[s]
            can[can] &= lvl[cur[can] - step] <= tt[can]
            cur[can] -= step
        blk = cur > b0
        lo2 = np.where(blk, (cur - 1) * _BLOCK, lo[todo])
        hi2 = np.where(blk, cur * _BLOCK, np.minimum(b0 * _BLOCK, tail_start[todo]))
        res = self._scan(lo2, hi2, tt, False)
        out[todo] = np.where(res < lo2, lo[todo] - 1, res)
        return out


# -- posteriors ------------------------------------------------------------------------------------
class _Hist:
    """Count of bucket ``b`` in group ``g`` (dense when small, else sorted sparse keys), and
    each group's (bucket, count) entries. Bucket ``n_b`` is a dummy that every group lacks
    (the padding of member matrices)."""

    def __init__(self, group: np.ndarray, bucket: np.ndarray, n_groups: int, n_b: int) -> None:
        self.stride = n_b + 1
        key = group * self.stride + bucket
        if n_groups * self.stride <= _DENSE:
            self.dense: np.ndarray | None = np.bincount(
                key, minlength=n_groups * self.stride
            ).astype(np.int32)
            self.keys = np.flatnonzero(self.dense)
            self.counts = self.dense[self.keys]
        else:
            self.dense = None
            self.keys, self.counts = np.unique(key, return_counts=True)
        self.key_group = self.keys // self.stride
        per = np.bincount(self.key_group, minlength=n_groups)
        self.start = np.cumsum(per) - per
        self.per = per

    def __call__(self, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        key = g * self.stride + b
        if self.dense is not None:
            return self.dense[key]
        i = np.minimum(np.searchsorted(self.keys, key), self.keys.size - 1)
        return np.where(self.keys[i] == key, self.counts[i], 0)

    def entries(
        self, gs: np.ndarray, bounded_bucket: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bounded (bucket, count) entries of each group of ``gs``, concatenated, with
        the index in ``gs`` each belongs to."""
        start, per = self.start[gs], self.per[gs]
        idx = np.repeat(start, per) + (np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per))
        b = self.keys[idx] % self.stride
        keep = bounded_bucket[b]
        owner = np.repeat(np.arange(gs.shape[0]), per)
        return b[keep], self.counts[idx][keep], owner[keep]


def _argmax_at(size: int, idx: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target ``t``: the largest of ``values[idx == t]`` (-1 if none) and one index
    attaining it (-1 if none)."""
    best = np.full(size, -1.0)
    np.maximum.at(best, idx, values)
    arg = np.full(size, -1, dtype=np.int64)
    hit = np.flatnonzero(values == best[idx])
    arg[idx[hit]] = hit
    return best, arg


def _index_of(ids: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``ids`` (ints below ``size``), ascending, and each entry's index
    among them (``np.unique(..., return_inverse=True)`` by a mask, no sort)."""
    mark = np.zeros(size, dtype=bool)
    mark[ids] = True
    slot = np.cumsum(mark) - 1
    return np.flatnonzero(mark), slot[ids]


@dataclass
class _Posteriors:
    value: np.ndarray  # bucket per row (-1: nothing derived)
    posterior: np.ndarray  # per row (0: nothing derived)
    via: np.ndarray  # G1 of the inference giving it (-1: none)


def _inconsistent(row: int, g1: int, g2: int) -> InputError:
    return InputError(
        f"{ATTACK}: row {row} lies inside group {g1}'s Hilbert range but its group {g2} shares "
        "no SA value with it: the release was not made by Hilb in this Hilbert order (QI codes, "
        "bits or row order differ)"
    )


def _pair_posteriors(
    a7: Algorithm7, group: np.ndarray, bucket: np.ndarray, bounded_bucket: np.ndarray
) -> _Posteriors:
    """The per-tuple posteriors of the module docstring, vectorized over inferences."""
    n = group.shape[0]
    out = _Posteriors(np.full(n, -1, np.int64), np.zeros(n), np.full(n, -1, np.int64))
    n_pairs = a7.pair_row.shape[0]
    if n_pairs == 0:
        return out
    group = group.astype(np.int64)
    n_groups = int(group.max()) + 1
    n_b = int(bucket.max()) + 1
    sizes = np.bincount(group, minlength=n_groups)
    hist = _Hist(group, bucket, n_groups, n_b)
    bounded = np.zeros(n_b + 1, dtype=bool)  # per bucket, with the dummy n_b
    bounded[:n_b] = bounded_bucket[:n_b]

    # members of each G1 in position order, as padded [G1s, width] matrices (dummy bucket n_b)
    g1_ids, pair_slot = _index_of(a7.pair_group, n_groups)
    slot_of_group = np.full(n_groups, -1, dtype=np.int64)
    slot_of_group[g1_ids] = np.arange(g1_ids.size)
    order = np.empty(n, dtype=np.int64)
    order[a7.positions] = np.arange(n)
    rows = order[slot_of_group[group[order]] >= 0]  # their rows in position order
    if a7.certain is not None:  # certain rows first (the uncertain ones come after every u)
        rows = rows[np.argsort(~a7.certain[rows], kind="stable")]
    rows = rows[np.argsort(slot_of_group[group[rows]], kind="stable")]
    s1_slot = sizes[g1_ids]
    width = int(s1_slot.max())
    col = np.arange(rows.size) - np.repeat(np.cumsum(s1_slot) - s1_slot, s1_slot)
    mem_row = np.full((g1_ids.size, width), -1, dtype=np.int64)
    mem_row[slot_of_group[group[rows]], col] = rows
    valid_slot = mem_row >= 0
    mem_b = np.where(valid_slot, bucket[np.maximum(mem_row, 0)], n_b)
    srt = np.sort(np.where(valid_slot, mem_b, -1 - np.arange(width)), axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if dup.any():
        g = int(g1_ids[int(np.argmax(dup))])
        raise InputError(
            f"{ATTACK}: group {g} passes line 5 but repeats an SA value, which Hilb's greedy step "
            "never does: the release was not made by Hilb in this Hilbert order"
        )

    # per inference: the count in G2 of each value of G1
    u = a7.pair_row
    g1 = a7.pair_group
    g2 = group[u]
    s1 = s1_slot[pair_slot].astype(float)
    s2 = sizes[g2].astype(float)
    k = a7.pair_prefix.astype(float)
    mb = mem_b[pair_slot]
    m = hist(g2[:, None], mb)
    in_c = m > 0
    c2 = m.sum(axis=1).astype(float)
    if (c2 == 0).any():
        bad = int(np.argmax(c2 == 0))
        raise _inconsistent(int(u[bad]), int(g1[bad]), int(g2[bad]))
    every = np.arange(n_pairs)
    bnd = bounded[mb]
    cb = np.where(bnd, m, 0)
    mu = cb.max(axis=1).astype(float)  # largest bounded count in C
    x_u = mb[every, np.argmax(cb, axis=1)]
    out_b = bnd & ~in_c  # bounded values of G1 that G2 lacks
    has_out = out_b.any(axis=1)
    x_out = mb[every, np.argmax(out_b, axis=1)]
    lo_c = np.where(in_c & bnd, m, np.iinfo(np.int32).max)
    mlo = lo_c.min(axis=1).astype(float)
    x_lo = mb[every, np.argmin(lo_c, axis=1)]
    has_c = mu > 0

    f_u = np.where(has_c, mu / c2, 0.0)
    s1m = np.maximum(s1 - 1, 1)
    f_pre = np.where(
        has_c,
        (mu * (s1 - 1) + (c2 - mu) * (k - 1)) / (k * c2 * s1m),
        np.where(has_out, (k - 1) / (k * s1m), 0.0),
    )
    x_pre = np.where(has_c, x_u, x_out)
    f_suf = np.where(has_out, 1 / s1m, np.where(has_c, (c2 - mlo) / (c2 * s1m), 0.0))
    x_suf = np.where(has_out, x_out, x_lo)
    m_out = _outside_counts(hist, group, bucket, bounded, g2, g1, np.where(bnd, in_c, False))
    s2m = np.maximum(s2 - 1, 1)
    f_in = np.where(has_c, mu * (c2 - 1) / (c2 * s2m), 0.0)
    f_oth = np.where(s2 > 1, np.maximum(m_out / s2m, f_in), 0.0)

    found: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # row, p, x, via
    # u itself, one inference at a time
    best, arg = _argmax_at(n, u, f_u)
    r = np.flatnonzero(arg >= 0)
    found.append((r, best[r], x_u[arg[r]], g1[arg[r]]))
    # u with every inference on it at once: its value is in G2 and in each G1 that skipped it
    # (given v(u), the G1s' arrangements are independent, each equally likely to hold it early)
    found.append(_combined(u, g1, mb, m, in_c, bounded, n, n_b))
    # members of G1 before u (k of them) and after it: member at column t takes f_pre of the
    # inferences with k > t and f_suf of those with k <= t
    cell = pair_slot * (width + 1) + a7.pair_prefix
    n_cells = g1_ids.size * (width + 1)
    pre_v, pre_a = _argmax_at(n_cells, cell, f_pre)
    suf_v, suf_a = _argmax_at(n_cells, cell, f_suf)
    pre_v, pre_a = pre_v.reshape(-1, width + 1), pre_a.reshape(-1, width + 1)
    suf_v, suf_a = suf_v.reshape(-1, width + 1), suf_a.reshape(-1, width + 1)
    mem_v = np.full((g1_ids.size, width), -1.0)
    mem_a = np.full((g1_ids.size, width), -1, dtype=np.int64)
    mem_x = np.full((g1_ids.size, width), -1, dtype=np.int64)
    run_v = np.full(g1_ids.size, -1.0)  # best f_pre over k > t, scanning t downwards
    run_a = np.full(g1_ids.size, -1, dtype=np.int64)
    for t in range(width - 1, -1, -1):  # a loop over columns (at most the largest G1)
        better = pre_v[:, t + 1] > run_v
        run_v = np.where(better, pre_v[:, t + 1], run_v)
        run_a = np.where(better, pre_a[:, t + 1], run_a)
        mem_v[:, t], mem_a[:, t] = run_v, run_a
        mem_x[:, t] = np.where(run_a >= 0, x_pre[np.maximum(run_a, 0)], -1)
    run_v = np.full(g1_ids.size, -1.0)  # best f_suf over k <= t, scanning t upwards
    run_a = np.full(g1_ids.size, -1, dtype=np.int64)
    for t in range(width):
        better = suf_v[:, t] > run_v
        run_v = np.where(better, suf_v[:, t], run_v)
        run_a = np.where(better, suf_a[:, t], run_a)
        take = run_v > mem_v[:, t]
        mem_v[:, t] = np.where(take, run_v, mem_v[:, t])
        mem_a[:, t] = np.where(take, run_a, mem_a[:, t])
        mem_x[:, t] = np.where(take, x_suf[np.maximum(run_a, 0)], mem_x[:, t])
    ok = valid_slot & (mem_a >= 0)
    found.append((mem_row[ok], mem_v[ok], mem_x[ok], g1[mem_a[ok]]))
    # the other members of G2: the best inference on the group whose u is another row
    b1, a1 = _argmax_at(n_groups, g2, f_oth)
    u1 = np.where(a1 >= 0, u[np.maximum(a1, 0)], -1)
    other = np.flatnonzero(u != u1[g2])
    b2 = np.full(n_groups, -1.0)
    a2 = np.full(n_groups, -1, dtype=np.int64)
    if other.size:
        b2, a2o = _argmax_at(n_groups, g2[other], f_oth[other])
        a2 = np.where(a2o >= 0, other[np.maximum(a2o, 0)], -1)
    use2 = np.arange(n) == u1[group]
    v_oth = np.where(use2, b2[group], b1[group])
    a_oth = np.where(use2, a2[group], a1[group])
    r = np.flatnonzero(a_oth >= 0)
    winners, which = _index_of(a_oth[r], n_pairs)  # at most two per group
    x_oth = _other_values(hist, bounded, winners, g2, g1, m_out, f_in, x_u, s2m)[which]
    found.append((r, v_oth[r], x_oth, g1[a_oth[r]]))

    for rr, vv, xx, gg in found:  # each role names a row at most once
        take = vv > out.posterior[rr]
        out.posterior[rr[take]] = vv[take]
        out.value[rr[take]] = xx[take]
        out.via[rr[take]] = gg[take]
    return out


def _combined(
    u: np.ndarray,
    g1: np.ndarray,
    mb: np.ndarray,
    m: np.ndarray,
    in_c: np.ndarray,
    bounded: np.ndarray,
    n: int,
    n_b: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each skipped row's posterior given all inferences on it: ``Pr[x] ∝ m2(x)`` over the
    values of ``G2`` that every ``G1`` skipping it holds. Returns (rows, posterior, value, G1)."""
    by_u = np.argsort(u, kind="stable")
    us = u[by_u]
    starts = np.flatnonzero(np.r_[True, us[1:] != us[:-1]])
    first = by_u[starts]  # one inference per row: its C holds the intersection
    rows = us[starts]
    if n_b <= 63:  # sets of values as bit masks
        one = np.uint64(1)
        bits = np.zeros(u.shape[0], dtype=np.uint64)
        for t in range(mb.shape[1]):  # a loop over columns
            bits |= np.where(in_c[:, t], one << mb[:, t].astype(np.uint64), np.uint64(0))
        inter = np.bitwise_and.reduceat(bits[by_u], starts)
        mb0 = mb[first]
        cand = in_c[first] & ((inter[:, None] >> mb0.astype(np.uint64)) & one).astype(bool)
    else:  # count, per (row, value), the inferences whose C holds it
        pr, pt = np.nonzero(in_c)
        keys, cnt = np.unique(u[pr] * (n_b + 1) + mb[pr, pt], return_counts=True)
        n_inf = np.bincount(u, minlength=n)
        held = keys[cnt == n_inf[keys // (n_b + 1)]]
        mb0 = mb[first]
        cand = in_c[first] & np.isin(rows[:, None] * (n_b + 1) + mb0, held)
    mm = np.where(cand, m[first], 0)
    total = mm.sum(axis=1).astype(float)
    if (total == 0).any():
        bad = int(np.argmax(total == 0))
        raise _inconsistent(int(rows[bad]), int(g1[first[bad]]), -1)
    score = np.where(bounded[mb0], mm, 0)
    best = score.max(axis=1) / total
    x = mb0[np.arange(rows.size), np.argmax(score, axis=1)]
    keep = best > 0
    return rows[keep], best[keep], x[keep], g1[first[keep]]


def _outside_counts(
    hist: _Hist,
    group: np.ndarray,
    bucket: np.ndarray,
    bounded: np.ndarray,
    g2: np.ndarray,
    g1: np.ndarray,
    bounded_in_c: np.ndarray,
) -> np.ndarray:
    """Per inference: the largest count in ``G2`` of a bounded value that ``G1`` lacks."""
    n_groups = hist.per.shape[0]
    n_bounded = np.bincount(group, weights=bounded[bucket], minlength=n_groups)
    repeats = np.bincount(hist.key_group, weights=hist.counts > 1, minlength=n_groups)
    # distinct G2: some bounded value outside G1 iff G2 has more bounded rows than C has
    out = np.where(n_bounded[g2] > bounded_in_c.sum(axis=1), 1.0, 0.0)
    slow = np.flatnonzero(repeats[g2] > 0)
    if slow.size:
        b, c, owner = hist.entries(g2[slow], bounded)
        cnt = np.where(hist(g1[slow][owner], b) > 0, 0, c)
        best = np.zeros(slow.size)
        np.maximum.at(best, owner, cnt.astype(float))
        out[slow] = best
    return out


def _other_values(
    hist: _Hist,
    bounded: np.ndarray,
    pairs: np.ndarray,
    g2: np.ndarray,
    g1: np.ndarray,
    m_out: np.ndarray,
    f_in: np.ndarray,
    x_u: np.ndarray,
    s2m: np.ndarray,
) -> np.ndarray:
    """The value behind ``f_oth`` for the given inferences: the most frequent bounded value of
    ``G2`` outside ``G1``, or the best value of ``C``."""
    x = x_u[pairs].copy()
    sel = np.flatnonzero((m_out[pairs] > 0) & (m_out[pairs] / s2m[pairs] >= f_in[pairs]))
    if sel.size:
        p = pairs[sel]
        b, c, owner = hist.entries(g2[p], bounded)
        score = np.where(hist(g1[p][owner], b) > 0, -1.0, c.astype(float))
        _, arg = _argmax_at(sel.size, owner, score)
        x[sel] = np.where(arg >= 0, b[np.maximum(arg, 0)], x[sel])
    return x


# -- the attack ------------------------------------------------------------------------------------
def hilb_order_attack(
    release: Release,
    *,
    l: int | None = None,  # noqa: E741
    population: Table | None = None,
    hilbert_index: np.ndarray | None = None,
    bits: int | None = None,
    ties: str = "row",
    input_order: np.ndarray | None = None,
    algorithm: str | None = None,
    alignment: Alignment | None = None,
) -> AttackResult:
    """Paper 000's attack on Hilb (Algorithm 7, spec ``asap.md`` 2.12) with per-tuple
    posteriors (module docstring).

    ``algorithm`` is the algorithm the adversary assumes made the release (default: its
    provenance; anything outside the Hilb family is attacked as Hilb). ``alignment``
    (:func:`kerckhoffs.attacks.hilb.align.align`) is the population laid on a generalized
    release read from files; it needs ``ties="unordered"`` and replaces ``population``,
    ``hilbert_index`` and ``input_order`` (module docstring, "A population aligned by cells").
    Other parameters as in :func:`algorithm7`. Returns one tuple per row the attack says
    something about: ``row``, ``sa_value`` (the most likely bounded value it infers),
    ``posterior``, ``breached`` (posterior above ``1/l``), ``group``, ``union`` (compromised by
    Algorithm 7's union rule) and ``via`` (the deterministic group whose inference gives the
    posterior, -1 for none); with an alignment, rows are the population's rows, ``n_rows`` its
    size and ``not_located`` its individuals in no cell or in an undetermined group.
    ``details``: groups, deterministic and vulnerable groups, the union-rule count and share
    (of the release's tuples), inferences, pinned tuples, and the alignment's figures.
    """
    _check_ties(ties)
    alg = algorithm if algorithm is not None else release.provenance.algorithm
    l = _l_of(release, l)  # noqa: E741
    n = release.table.n
    base = {"l": l, "model": alg, "ties": ties, "groups": release.partition.n_groups}
    if alignment is not None:
        population = _aligned_population(release, alignment, population, hilbert_index, input_order)
        if ties != "unordered":
            raise ParameterError(
                f"{ATTACK}: a population aligned by cells has no row order; use ties=unordered"
            )
        base |= {f"alignment_{k}": v for k, v in alignment.counts.items()}
    if alg in STRICT_ALGORITHMS:
        empty = np.empty(0, dtype=np.int64)
        tuples = tuple_table(empty, [], np.empty(0), np.empty(0, bool), group=empty)
        details = base | {"compromised_union": 0, "reason": STRICT_REASON.format(alg=alg)}
        if alignment is None:
            return AttackResult(ATTACK, tuples, n, 1 / l, details)
        return AttackResult(ATTACK, tuples, alignment.n_population, 1 / l, details)
    pos, qrank = _hilbert_keys(release, population, hilbert_index, bits, input_order)
    bucket, bounded, labels = _buckets(release)
    group = release.partition.group.astype(np.int64)
    unc = None if alignment is None else _uncertain(alignment, group, qrank)
    a7 = _algorithm7(pos, qrank, group, bucket, l, ties, unc)
    post = _pair_posteriors(a7, group, bucket, bounded)

    # each group's own published share of its most frequent bounded value (no inference)
    n_groups = release.partition.n_groups
    sizes = release.partition.sizes
    if n:
        hist = _Hist(group, bucket, n_groups, int(bucket.max()) + 1)
        own = np.where(bounded[bucket], hist(group, bucket), 0)
        naive = own / sizes[group]
        best_own, arg_own = _argmax_at(n_groups, group, naive)
        use_naive = best_own[group] > post.posterior  # ties: the inference's value
        value = np.where(use_naive, bucket[np.maximum(arg_own[group], 0)], post.value)
        posterior = np.where(use_naive, best_own[group], post.posterior)
        via = np.where(use_naive, -1, post.via)
    else:
        value, posterior, via = post.value, post.posterior, post.via
    rows = np.flatnonzero(a7.union | (post.via >= 0))
    if bounded.any():  # nothing bounded to say: name the (first) bounded value, posterior 0
        value = np.where(posterior > 0, value, int(np.flatnonzero(bounded)[0]))
    n_rows, not_located = n, 0
    out_group, union = group[rows], a7.union[rows]
    if alignment is not None:  # from release rows to the individuals certainly behind them
        rows, value, posterior, via, out_group, union = _by_person(
            alignment, group, rows, value, posterior, via, a7.union
        )
        n_rows = alignment.n_population
        not_located = int(alignment.not_located.size + alignment.unresolved.size)
    else:
        value, posterior, via = value[rows], posterior[rows], via[rows]
    label_arr = np.asarray(labels, dtype=object)
    breached = posterior * l > 1 + 1e-9
    tuples = tuple_table(
        rows,
        label_arr[value] if rows.size else [],
        posterior,
        breached,
        group=out_group,
        union=union,
        via=via,
    )
    details = base | {
        "deterministic_groups": a7.deterministic,
        "vulnerable_groups": int(a7.vulnerable.sum()),
        "compromised_union": a7.compromised,
        "compromised_union_share": a7.compromised / n if n else 0.0,
        "inferences": int(a7.pair_row.shape[0]),
        "pinned": int((posterior >= 1 - 1e-12).sum()),
    }
    return AttackResult(ATTACK, tuples, n_rows, 1 / l, details, not_located=not_located)


def _uncertain(alignment: Alignment, group: np.ndarray, qrank: np.ndarray) -> _Uncertain:
    """The bounds :func:`_algorithm7` needs from an alignment: each group's lowest possible
    first ``Q_T`` (its settled rows and the types it may hold), whether that is certain (a
    settled row, or a type it holds for sure, has it), whether all its members are known, and
    each row's lowest possible group key."""
    n_groups = int(group.max()) + 1 if group.size else 0
    n_types = int(alignment.type_settled.shape[0])
    top = np.iinfo(np.int64).max
    q_type = np.zeros(n_types, dtype=np.int64)
    q_type[alignment.row_type] = qrank  # one Q_T per type (identical QI vectors)
    settled = alignment.settled
    o_type, o_group = alignment.open_type, alignment.open_group
    low = np.full(n_groups, top, dtype=np.int64)  # lowest Q_T a member can have
    np.minimum.at(low, group[settled], qrank[settled])
    sure = low.copy()  # an upper bound on its first Q_T: a member it certainly has, ...
    np.minimum.at(low, o_group, q_type[o_type])
    forced = alignment.open_lo > 0
    np.minimum.at(sure, o_group[forced], q_type[o_type[forced]])
    # ... or the lowest of its open members when they are the highest its open counts allow
    need = np.bincount(group, minlength=n_groups) - np.bincount(group[settled], minlength=n_groups)
    q_open = q_type[o_type]
    srt = np.lexsort((-q_open, o_group))
    g_s, hi_s = o_group[srt], alignment.open_hi[srt]
    cum = np.cumsum(hi_s)
    cum -= np.r_[0, cum][np.searchsorted(g_s, g_s, side="left")]  # within each group
    hit = np.flatnonzero(cum >= need[g_s])
    if hit.size:
        g_hit, at = np.unique(g_s[hit], return_index=True)
        sure[g_hit] = np.minimum(sure[g_hit], q_open[srt][hit[at]])
    resolved = np.bincount(o_group, minlength=n_groups) == 0
    open_min = np.full(n_groups, top, dtype=np.int64)
    np.minimum.at(open_min, o_group, q_open)
    type_low = np.full(n_types, top, dtype=np.int64)
    np.minimum.at(type_low, o_type, low[o_group])
    row_key = np.where(settled, low[group], type_low[alignment.row_type])
    return _Uncertain(low, sure, resolved, open_min, row_key, settled)


def _by_person(
    alignment: Alignment,
    group: np.ndarray,
    rows: np.ndarray,
    value: np.ndarray,
    posterior: np.ndarray,
    via: np.ndarray,
    union: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Claims on release rows as claims on individuals. Individuals of one type are
    interchangeable and a settled type's individuals sit in its rows in an order the release
    does not give, so an individual is reported only when its type is settled and every row of
    the type carries a claim on the same value; it gets the smallest posterior among them
    (true whichever row it is), the group when the type lies in one group (else -1), ``union``
    when every row of the type is in the union, and the ``via`` of a row with that posterior.
    Returns (population rows, value, posterior, via, group, union)."""
    rt = alignment.row_type
    n_types = int(alignment.type_settled.shape[0])
    t = rt[rows]
    top = np.iinfo(np.int64).max
    per_type = np.bincount(rt, minlength=n_types)
    claims = np.bincount(t, minlength=n_types)
    v_lo = np.full(n_types, top, dtype=np.int64)
    v_hi = np.full(n_types, -1, dtype=np.int64)
    np.minimum.at(v_lo, t, value[rows])
    np.maximum.at(v_hi, t, value[rows])
    p_lo = np.full(n_types, np.inf)
    np.minimum.at(p_lo, t, posterior[rows])
    g_lo = np.full(n_types, top, dtype=np.int64)
    g_hi = np.full(n_types, -1, dtype=np.int64)
    np.minimum.at(g_lo, rt, group)
    np.maximum.at(g_hi, rt, group)
    in_union = np.bincount(rt, weights=union, minlength=n_types) == per_type
    at_min = posterior[rows] == p_lo[t]
    via_t = np.full(n_types, -1, dtype=np.int64)
    via_t[t[at_min]] = via[rows][at_min]
    good = alignment.type_settled & (claims == per_type) & (v_lo == v_hi)
    pt = alignment.person_type
    persons = np.flatnonzero(pt >= 0)
    persons = persons[good[pt[persons]]]
    tp = pt[persons]
    return (
        persons,
        v_lo[tp],
        p_lo[tp],
        via_t[tp],
        np.where(g_lo[tp] == g_hi[tp], g_lo[tp], -1),
        in_union[tp],
    )


# -- registry adapter ------------------------------------------------------------------------------
def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    release = releases[0]
    alg = release.provenance.algorithm
    known = alg in HILB_FAMILY or alg in ("unknown", "manual") or alg.startswith("external")
    if not known:
        return f"the release was made by {alg}, not by a Hilb-family algorithm"
    if alg in STRICT_ALGORITHMS:
        return None  # it applies, and reports that nothing is inferred
    if release.provenance.parameters.get("hilbert_index") == "given":  # a Hilb release, but
        # the attack cannot re-run its order without the index
        raise CannotRun(
            f"{ATTACK}: the release was made with a given Hilbert index, which the release "
            "does not hold (hilb_order_attack takes it as hilbert_index=)"
        )
    if release.scheme == Scheme.GENERALIZATION and _qi_constant_in_groups(release):
        if knowledge.population is None:
            return "needs the exact QIs of the release's rows (a population in the knowledge)"
        if knowledge.schema is None:
            raise CannotRun(
                f"{ATTACK}: needs the schema (--schema) to read the published cells and encode "
                "the population's QIs as the anonymizer did"
            )
    return None


@register_attack(
    ATTACK,
    summary="paper 000 Algorithm 7: tuples a Hilb release discloses through its Hilbert order",
    applies=_applies,
    reads=("population",),
)
def _run(releases: Sequence[Release], knowledge: Knowledge, **options: Any) -> AttackResult:
    """Registry adapter: ``releases[0]`` attacked with :func:`hilb_order_attack`.

    Options: ``population`` (a :class:`Table` of exact QIs row-aligned with the release, for a
    generalized release read from files), ``input_order`` (each row's index in the
    anonymizer's input table), ``l``, ``bits``, ``hilbert_index``, ``algorithm`` and ``ties``:
    ``row`` when ``input_order`` is given, else ``unordered`` (a release read back from files
    is in the files' row order, not the anonymizer's; module docstring).

    A generalized release read from files (its rows hold cells, not QIs) given no
    ``population`` option is aligned with ``knowledge.population`` through its cells and
    ``knowledge.load_schema()`` (:func:`~kerckhoffs.attacks.hilb.align.align`; cells are taken
    as tightest when the provenance is a Hilb-family algorithm, which publishes them so), and
    attacked with ``ties="unordered"``: what ``kerckhoffs audit --release R --knowledge POP.csv
    --schema SCHEMA`` runs.
    """
    if not releases:
        raise ParameterError(f"{ATTACK}: no release to attack")
    known = {"population", "input_order", "l", "bits", "ties", "algorithm", "hilbert_index"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ParameterError(f"{ATTACK}: unknown option {unknown[0]!r} (known: {sorted(known)})")
    population = options.get("population")
    if population is not None and not isinstance(population, Table):
        raise ParameterError(f"{ATTACK}: population must be an encoded Table")
    input_order = options.get("input_order")
    release = releases[0]
    alg = options.get("algorithm") or release.provenance.algorithm
    alignment = None
    if (
        population is None
        and input_order is None
        and options.get("hilbert_index") is None
        and knowledge.population is not None
        and alg not in STRICT_ALGORITHMS
        and release.scheme == Scheme.GENERALIZATION
        and _qi_constant_in_groups(release)
    ):
        tight = release.provenance.algorithm in HILB_FAMILY
        alignment = align(release, knowledge.population, knowledge.load_schema(), tight=tight)
    return hilb_order_attack(
        release,
        l=options.get("l"),
        population=population,
        hilbert_index=options.get("hilbert_index"),
        bits=options.get("bits"),
        ties=options.get("ties", "row" if input_order is not None else "unordered"),
        input_order=input_order,
        algorithm=options.get("algorithm"),
        alignment=alignment,
    )
