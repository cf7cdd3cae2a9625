"""The Hilbert-order attack on Hilb (paper 000 Algorithm 7, section 8.3.1;
``docs/theory/asap.md#hilb-attack``).

Hilb (paper 000 section 6.2.2; ``docs/theory/asap.md#hilbert-curve`` and
``docs/theory/asap.md#hilb``) sorts the rows along a Hilbert curve and, in its greedy step, emits
the ``l`` bucket heads of lowest Hilbert index ``Q_T`` as a group. A row that lies inside that
group's ``Q_T`` range but was not taken (and was not grouped before) was *skipped*: it is not the
head of its SA bucket, so it shares its value with a member of the group that precedes it. An
adversary who knows every row's QIs (hence ``Q_T``) and the algorithm reads this off the release and
intersects the SA values of the two groups (Figure 8: ``t1 = t2 = gastritis``,
``t3 = heart disease``, ``t4 = diabetes``).

**Algorithm 7, with our fixes** (``docs/theory/asap.md#err-hilb-attack-loop``). Groups are ordered
by their lowest row in the algorithm's order (``Q_T``, ties by row id, as
:func:`kerckhoffs.algorithms.hilb.hilb` sorts). Walking that order with ``G`` the rows not yet
passed, a group ``G1`` is *deterministic* while ``|G| - |G1| >= l * S_max(G)`` (line 5; ``|G|``
counts tuples and ``S_max`` is over the published SA buckets, ``docs/theory/asap.md#hilb-attack``);
the walk stops at the first group failing it (the paper's "Goto Line 14" would loop forever; we read
it as terminate: ``docs/theory/asap.md#err-hilb-attack-loop``). Line 5 is sound for Hilb, Hilb+ and
Hilb++ alike: Hilb's greedy step then passes at ``s = l`` whatever it covers (its test reads
``S_max(G - G1) <= S_max(G)``), Hilb+'s look-ahead passes, and by induction the group holding the
lowest remaining row is the one emitted next. ``G1`` is *vulnerable* when some remaining row of
another group lies inside its range (``G~`` non-empty) and ``|G1| + 1 < 2l`` (line 7: ``G1`` plus
the duplicate would break l-diversity). Compromised tuples (Figure 9's count, which the paper leaves
undefined; our union rule, ``docs/theory/asap.md#err-hilb-attack-loop``): the rows of every
vulnerable ``G1`` and of every group of its ``G~``.

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
``u``), the attack computes the exact random-worlds posterior
(``docs/theory/asap.md#random-worlds``: uniform over each group's arrangements of its published SA
multiset) of an adversary who conditions on that one inference. ``G1``'s values are distinct (a Hilb
group is bucket heads), ``m2(x)`` is the count of ``x`` in ``G2``, ``C`` the values of ``G1`` that
``G2`` holds, ``c2 = sum_{x in C} m2(x)``:

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
greedy groups are frontier heads too: Hilb+ as printed reads which rows are bucket heads,
``docs/theory/asap.md#err-hilb-plus-literal``; Hilb++ leaves them as they are, being under ``2l``
rows, and its pick-up subgroups come after them in the order and fail line 5). ``hilb+strict`` and
``hilb++strict`` cut contiguous chunks of the Hilbert order by a rule that reads only ``S_max`` of
published unions (``docs/theory/asap.md#hilb-plus``; simulatable, Theorem 5.3): no tuple is skipped,
so nothing is inferred; their pick-up subgroups interleave but are drawn uniformly at random
(Theorem 7.2), so the frontier inference does not apply to them and the attack reports nothing (with
the reason). Other provenance ("unknown", "external ...") is attacked as Hilb.

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
  precede ``f`` takes from line 5's slack
  (:func:`~kerckhoffs.attacks.hilb.line5.line5_cut_by_groups`). Groups below the first ``q``
  at which some group may fail are deterministic
  (:func:`~kerckhoffs.attacks.hilb.line5.line5_cut`);
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
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import REGISTRY
from kerckhoffs.attacks.hilb.align import Alignment, align
from kerckhoffs.attacks.hilb.inputs import (
    ATTACK,
    check_ties,
    hilbert_keys,
    l_of,
    published_buckets,
    qi_constant_in_groups,
)
from kerckhoffs.attacks.hilb.posteriors import Hist, argmax_at, pair_posteriors
from kerckhoffs.attacks.hilb.walk import Algorithm7, uncertain_bounds, walk
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.table import Table
from kerckhoffs.errors import CannotRun, ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = [
    "FRONTIER_ALGORITHMS",
    "HILB_FAMILY",
    "STRICT_ALGORITHMS",
    "Algorithm7",
    "algorithm7",
    "hilb_order_attack",
]

HILB_FAMILY = tuple(sorted(n for n, a in REGISTRY.items() if a.family == "hilb"))
"""The Hilb family, from the registry (:mod:`kerckhoffs.algorithms.hilb`, imported by
:mod:`kerckhoffs.attacks.hilb.inputs`, registers it)."""
FRONTIER_ALGORITHMS = tuple(n for n in HILB_FAMILY if REGISTRY[n].frontier)
"""Hilb variants whose frontier may skip rows of the Hilbert order: Algorithm 7 applies."""
STRICT_ALGORITHMS = tuple(n for n in HILB_FAMILY if not REGISTRY[n].frontier)
"""Hilb variants that cut contiguous chunks of the order: nothing to infer (STRICT_REASON)."""

STRICT_REASON = (
    "{alg} cuts contiguous chunks of the Hilbert order by l * S_max of published unions and "
    "splits them by uniformly random pick-up (paper 000 Algorithms 2 and 4; Theorems 5.3, 7.2): "
    "no row is skipped by a frontier, so Algorithm 7's inference does not apply"
)


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
    """Algorithm 7 of paper 000 (``docs/theory/asap.md#hilb-attack``) on ``release``: deterministic
    and vulnerable groups, the union-rule compromised tuples and the skip inferences.

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
    check_ties(ties)
    l = l_of(release, l)  # noqa: E741
    if alignment is not None:
        population = _aligned_population(release, alignment, population, hilbert_index, input_order)
    pos, qrank = hilbert_keys(release, population, hilbert_index, bits, input_order)
    bucket, _, _ = published_buckets(release)
    group = release.partition.group.astype(np.int64)
    unc = None if alignment is None else uncertain_bounds(alignment, group, qrank)
    return walk(pos, qrank, group, bucket, l, ties, unc)


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
    """Paper 000's attack on Hilb (Algorithm 7, ``docs/theory/asap.md#hilb-attack``) with per-tuple
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
    check_ties(ties)
    alg = algorithm if algorithm is not None else release.provenance.algorithm
    l = l_of(release, l)  # noqa: E741
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
    pos, qrank = hilbert_keys(release, population, hilbert_index, bits, input_order)
    bucket, bounded, labels = published_buckets(release)
    group = release.partition.group.astype(np.int64)
    unc = None if alignment is None else uncertain_bounds(alignment, group, qrank)
    a7 = walk(pos, qrank, group, bucket, l, ties, unc)
    post = pair_posteriors(a7, group, bucket, bounded)

    # each group's own published share of its most frequent bounded value (no inference)
    n_groups = release.partition.n_groups
    sizes = release.partition.sizes
    if n:
        hist = Hist(group, bucket, n_groups, int(bucket.max()) + 1)
        own = np.where(bounded[bucket], hist(group, bucket), 0)
        naive = own / sizes[group]
        best_own, arg_own = argmax_at(n_groups, group, naive)
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
    if release.scheme == Scheme.GENERALIZATION and qi_constant_in_groups(release):
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
        and qi_constant_in_groups(release)
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
