"""Hilb: l-diverse groups along a Hilbert curve (Ghinita et al. 2007, as paper 000 describes it).

Paper 000 section 6.2.2 (the algorithm: ``docs/theory/asap.md#hilbert-curve`` and
``docs/theory/asap.md#hilb``), its running example and the Hilb attack example
(``docs/theory/asap.md#worked-examples``), and what the tests check
(``docs/theory/asap.md#properties``).

1. **Hilbert order.** Each row's encoded QI vector is mapped to its index ``Q_T`` on a Hilbert
   curve (:mod:`kerckhoffs.algorithms.hilbert_curve`: Skilling's transform over all rows at
   once, raw codes, convention documented there) and the rows are sorted by ``(Q_T, row id)``.
   A precomputed ``hilbert_index`` can be passed instead (the tests give ``Q_T`` directly).
2. **Buckets.** The sorted rows are split into buckets by SA value, each in ``Q_T`` order. The
   *frontier* ``F`` is the first remaining row of every non-empty bucket.
3. **Greedy step.** With ``s = l``: ``G1`` = the ``s`` frontier rows of lowest ``Q_T`` (``s``
   distinct SA values). ``G1`` is emitted iff the rest stays l-eligible,
   ``|G| - s >= l * S_max(G - G1)`` (:func:`greedy_allows`); otherwise ``s`` grows by one,
   until ``s`` exceeds the frontier (the paper: "until ``|G1|`` reaches the number of buckets").
4. **Roll-back step.** If no ``s`` passes, ``s`` restarts at ``l`` and ``G1`` = the heads of the
   ``s`` buckets with the most remaining rows (ties: lowest head ``Q_T``, the rule we reconstruct
   from paper 000's example, ``docs/theory/asap.md#err-hilb-stop``), emitted under the same test,
   ``s`` growing until it passes. It passes at the latest at ``s = max(l, k)``, ``k`` the number of
   buckets holding ``S_max(G)`` rows: those ``s`` fullest buckets include all ``k``, so ``S_max``
   drops by one, and ``|G| - s >= l * (S_max(G) - 1)`` follows from ``|G| >= l * S_max(G)`` and
   ``|G| >= k * S_max(G)``. Then the greedy step resumes on the rest.

Every emitted group holds distinct SA values and every remainder stays l-eligible, so the output is
l-diverse. Hilb is *not* algorithm-safe (paper 000 section 6.2.2, Theorem 5.3): the test reads
``S_max(G - G1)`` of a remainder that is never published, and the switch to the roll-back step
reveals that every smaller ``G1`` failed. Hilb+ (paper 000 Algorithm 2,
``docs/theory/asap.md#hilb-plus``) replaces the test by the global look-ahead
``|G| - s >= l * S_max(G)``, computed on a union of published groups.

The buckets are those of :func:`kerckhoffs.algorithms.anatomy.sa_buckets`: one per SA value
(paper 000's setting), a schema's sensitive subset in ``set`` mode counting as one value.

**Speed.** The greedy loop is sequential over groups, but a step costs O(number of buckets), never
O(n). The buckets are chains over Hilbert positions (:func:`bucket_chains`: for each position the
rows left in its bucket and the next position of the bucket), the frontier is a sorted list of head
positions, so a step slices off the ``s`` lowest heads and inserts their successors. ``S_max(G)`` is
needed only when the test is tight: while ``|G| - l >= l * B`` for an upper bound ``B`` of
``S_max(G)``, ``G1`` passes at ``s = l`` whatever it covers (the test is monotone in
``S_max(G - G1) <= S_max(G)``); otherwise ``S_max(G)`` is read off the frontier's heads and
``S_max(G - G1)`` is ``S_max(G) - 1`` exactly when ``G1`` covers every bucket at ``S_max(G)``. The
outcome is the literal algorithm's (the tests compare with a line-by-line transcription of Hilb as
paper 000 describes it). The Hilbert index, the sort and the final group ids are numpy over all
rows. Census stand-in, l = 4: about 0.1 s (``benchmarks/``).
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.anatomy import l_eligible_buckets
from kerckhoffs.algorithms.hilbert_curve import hilbert_bits, hilbert_index, hilbert_order
from kerckhoffs.algorithms.pickup import pickup
from kerckhoffs.algorithms.registry import parse_scheme, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import Seed, deterministic_stage, generator
from kerckhoffs.release import Partition, Provenance, Release, Scheme

__all__ = [
    "HilbGroups",
    "bucket_chains",
    "greedy_allows",
    "hilb",
    "hilb_groups",
    "hilb_plus",
    "hilb_plus_groups",
    "hilb_plus_plus",
    "hilb_plus_plus_strict",
    "hilb_plus_strict",
    "hilb_plus_strict_groups",
    "table_hilbert_index",
]


def greedy_allows(remaining: int, s: int, l: int, smax_rest: int) -> bool:  # noqa: E741
    """Hilb's test for emitting ``G1`` (``|G1| = s``) from ``G`` (``|G| = remaining``).

    ``|G| - s >= l * S_max(G - G1)``: the rest must stay l-eligible. ``smax_rest`` is
    ``S_max(G - G1)``, a statistic of a tuple set that is never published; Hilb+ (paper 000
    Algorithm 2, ``docs/theory/asap.md#hilb-plus``) tests ``|G| - s >= l * S_max(G)`` instead.
    """
    return remaining - s >= l * smax_rest


@dataclass(frozen=True, eq=False)
class HilbGroups:
    """Hilb's groups in the order it emitted them.

    ``group[i]`` is the group of row ``i`` (ids ``0..n_groups-1`` in emission order, i.e. by
    the ``Q_T`` of their first row for greedy groups); ``rolled_back[g]`` says whether group
    ``g`` came from the roll-back step; ``order`` is the rows sorted by ``(Q_T, row id)``.
    """

    group: np.ndarray
    rolled_back: np.ndarray
    order: np.ndarray

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return int(self.rolled_back.shape[0])


@deterministic_stage
def table_hilbert_index(table: Table, bits: int | None = None) -> np.ndarray:
    """``Q_T`` of every row of ``table``: the Hilbert index of its encoded QI codes.

    The grid order is ``ceil(log2(largest QI code domain))`` unless ``bits`` is given (codes
    are raw, not rescaled; see :mod:`kerckhoffs.algorithms.hilbert_curve`).
    """
    if bits is None:
        bits = hilbert_bits([c.size for c in table.qi_columns])
    return hilbert_index(table.qi, bits)


def bucket_chains(at: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The SA buckets of rows in Hilbert order, as chains over positions (Hilb step 2).

    ``at[p]`` is the bucket of the row at Hilbert position ``p``. Returns, per position,
    ``left[p]`` (rows of its bucket at or after ``p``: the bucket's size while ``p`` is its
    head) and ``after[p]`` (the next position of its bucket, -1 for the last), and the
    initial frontier (each bucket's first position, ascending). Hilb+ (paper 000 Algorithm 2)
    walks the same chains; only its test differs.
    """
    at = np.asarray(at, dtype=np.int64)
    n = at.shape[0]
    if n == 0:
        return [], [], []
    counts = np.bincount(at)
    by_bucket = np.argsort(at, kind="stable")  # positions grouped by bucket, ascending
    first = np.cumsum(counts) - counts  # index in by_bucket of each bucket's first position
    inside = np.arange(n, dtype=np.int64) - np.repeat(first, counts)  # rank inside the bucket
    left = np.empty(n, dtype=np.int64)
    left[by_bucket] = np.repeat(counts, counts) - inside
    after = np.empty(n, dtype=np.int64)
    after[by_bucket[:-1]] = by_bucket[1:]
    after[by_bucket[(first + counts - 1)[counts > 0]]] = -1  # each bucket's last position
    heads = np.sort(by_bucket[first[counts > 0]])
    return left.tolist(), after.tolist(), heads.tolist()


class _Reads:
    """The SA reads of one run of Hilb, Hilb+ or Hilb+ strict, for :class:`SAReadLog`.

    Rows are handled by Hilbert position and mapped to row ids (``order``) when flushed, one batch
    per kind of read. The kinds (information-flow audit, ``docs/theory/asap.md#audits``; each
    batch's ``what`` says which):

    - *the remainder's SA histogram* (``S_max(G)``, and the bucket sizes of Hilb's roll-back):
      kept as the table's histogram minus those of the groups emitted so far, so it is logged
      as one read of the whole table and one read of every emitted group. Both are unions of
      published groups (the emitted groups are published, or split further by stratified
      pick-up), so recording them this way is exact for the audit and keeps the log O(n)
      instead of O(n) per step.
    - *the frontier*: to know that a row is the first of its bucket in ``G``, one reads the SA
      of every row of ``G`` before it. Taking the ``s`` lowest heads (or the heads of chosen
      buckets) reads the rows of ``G`` from its first row up to the last head taken. That set
      is a union of published groups only when it is the emitted group itself, i.e. when no
      row was skipped as a duplicate (a skipped row precedes the ``l``-th head, so its value is
      one of the first ``l - 1`` heads' and no published group, which has ``l`` distinct
      values, fits among the skipped rows).
    - *a candidate* ``G1`` (Hilb only): its SA values, which with the remainder's histogram
      give ``S_max(G - G1)``. ``G - G1`` is a union of published groups iff ``G1`` is, as ``G``
      is one; a failed candidate is not.

    The log describes the algorithm as paper 000 states it (with our resolutions,
    ``docs/theory/asap.md#err-hilb-stop``), not its data structures (the bucket
    chains are built from every SA value at once, an implementation detail equivalent to
    reading each frontier as above).
    """

    def __init__(self, order: np.ndarray) -> None:
        self.order = np.asarray(order, dtype=np.int64)
        self.alive = np.ones(self.order.shape[0], dtype=bool)
        self.frontier: list[np.ndarray] = []
        self.candidates: list[list[int]] = []

    def frontier_upto(self, lo: int, hi: int) -> None:
        """The rows of ``G`` at positions ``lo..hi`` were read to find bucket heads."""
        self.frontier.append(np.flatnonzero(self.alive[lo : hi + 1]) + lo)

    def candidate(self, chosen: list[int], lo: int) -> None:
        """``chosen`` (bucket heads, ``G``'s first position ``lo``) was tried as ``G1``."""
        self.candidates.append(list(chosen))
        self.frontier_upto(lo, max(chosen))

    def emit(self, chosen: list[int]) -> None:
        """The positions ``chosen`` left ``G`` as a group."""
        self.alive[chosen] = False

    def flush(self, sa_log: SAReadLog, group: np.ndarray, name: str) -> None:
        """Record the batches (``group``: the group of every row) in ``sa_log``."""
        n = self.order.shape[0]
        rows = np.arange(n, dtype=np.int64)
        sa_log.record(
            rows,
            0,
            f"{name}: SA histogram of the table (S_max(T); the remainder's histogram is it "
            "minus the emitted groups')",
        )
        sa_log.record(rows, group, f"{name}: SA histogram of every emitted group")
        for what, sets in (
            (
                f"{name}: frontier (SA of the remainder's rows up to the last bucket head taken)",
                self.frontier,
            ),
            (
                f"{name}: SA values of every candidate G1 (give S_max(G - G1))",
                [np.asarray(c, dtype=np.int64) for c in self.candidates],
            ),
        ):
            if not sets:
                continue
            sizes = [len(x) for x in sets]
            pos = np.concatenate(sets).astype(np.int64)
            sa_log.record(self.order[pos], np.repeat(np.arange(len(sets)), sizes), what)


def hilb_groups(
    bucket: np.ndarray,
    order: np.ndarray,
    l: int,  # noqa: E741
    *,
    sa_log: SAReadLog | None = None,
) -> HilbGroups:
    """Hilb's greedy and roll-back steps (``docs/theory/asap.md#hilb``) on rows already in Hilbert
    order.

    ``bucket`` is the SA bucket id (int, >= 0) of every row; ``order`` is the row indices
    sorted by ``(Q_T, row id)``; ``l`` is an integer >= 1. Requires l-eligibility
    (``n >= l * S_max``), which every emitted remainder then keeps.

    Rows are handled by their *position* in Hilbert order. The frontier is a sorted list of
    head positions; for a head ``h``, ``left[h]`` is how many rows its bucket still holds and
    ``after[h]`` the next position of the same bucket (-1 at the end), so no step touches more
    than the frontier.

    With ``sa_log``, records the reads of the algorithm as paper 000 states it (see
    :class:`_Reads`): for every size ``s`` tried, the frontier up to its ``s``-th head and the SA
    values of the candidate ``G1`` (which give ``S_max(G - G1)`` from ``G``'s histogram); in the
    roll-back, the bucket heads taken. The failed candidates and the rows skipped inside a
    frontier are not unions of published groups, so the audit fails Hilb
    (information-flow audit, ``docs/theory/asap.md#audits``).
    """
    n = int(order.shape[0])
    at = np.asarray(bucket)[order].astype(np.int64)  # bucket of each Hilbert position
    if n and n < l * int(np.bincount(at).max()):
        raise ParameterError(f"hilb: the rows are not l-eligible for l={l}")
    log = _Reads(order) if sa_log is not None else None
    left, after, heads = bucket_chains(at)
    bound = max((left[h] for h in heads), default=0)  # >= S_max(G); made exact when needed
    remaining = n
    emitted: list[int] = []  # Hilbert positions, group after group
    sizes: list[int] = []
    rolled: list[bool] = []

    while remaining:
        chosen: list[int] | None = None
        rolled_back = False
        # -- greedy step: G1 = the s lowest-Q_T frontier rows, s = l, l + 1, ..., |F| -------
        if greedy_allows(remaining, l, l, bound):
            # S_max(G - G1) <= S_max(G) <= bound: passes without looking at G1's buckets
            s = l
            chosen = heads[:s]
            if log is not None:
                log.candidate(chosen, heads[0])
            del heads[:s]
        else:
            smax = bound = max(left[h] for h in heads)  # S_max(G): the fullest bucket
            at_max = sum(left[h] == smax for h in heads)  # G1 lowers S_max iff it has them all
            s, seen, covered = l, 0, 0
            while s <= len(heads):
                while seen < s:
                    covered += left[heads[seen]] == smax
                    seen += 1
                if log is not None:
                    log.candidate(heads[:s], heads[0])
                if greedy_allows(remaining, s, l, smax - 1 if covered == at_max else smax):
                    chosen = heads[:s]
                    del heads[:s]
                    break
                s += 1
        # -- roll-back step: G1 = heads of the s fullest buckets (ties: lowest head Q_T) ------
        if chosen is None:
            rolled_back = True
            ranked = sorted(heads, key=lambda h: (-left[h], h))
            s, seen, covered = l, 0, 0
            while True:
                if s > len(ranked):  # impossible for an l-eligible G (module docstring)
                    raise InternalError("hilb: roll-back found no group")
                while seen < s:
                    covered += left[ranked[seen]] == smax
                    seen += 1
                if log is not None:
                    log.candidate(ranked[:s], heads[0])
                if greedy_allows(remaining, s, l, smax - 1 if covered == at_max else smax):
                    break
                s += 1
            chosen = ranked[:s]
            taken = set(chosen)
            heads = [h for h in heads if h not in taken]
        # -- emit G1: the chosen buckets lose their head ---------------------------------------
        for h in chosen:
            nxt = after[h]
            if nxt >= 0:
                insort(heads, nxt)
        if log is not None:
            log.emit(chosen)
        remaining -= s
        emitted.extend(chosen)
        sizes.append(s)
        rolled.append(rolled_back)

    group = np.empty(n, dtype=np.int32)
    group[order[np.asarray(emitted, dtype=np.int64)]] = np.repeat(
        np.arange(len(sizes), dtype=np.int32), sizes
    )
    if log is not None and sa_log is not None:
        log.flush(sa_log, group, "hilb")
    return HilbGroups(group, np.asarray(rolled, dtype=bool), order)


def _hilbert_positions(
    table: Table, name: str, bits: int | None, given: np.ndarray | None, params: dict[str, Any]
) -> np.ndarray:
    """The rows sorted by ``(Q_T, row id)``: ``Q_T`` given (one number per row) or computed
    with ``bits`` (default: the fewest the QI codes need). Notes the choice in ``params``."""
    if given is not None:
        index = np.asarray(given)
        if index.shape[0] != table.n:
            raise ParameterError(
                f"{name}: hilbert_index has {index.shape[0]} values for {table.n} rows"
            )
        params["hilbert_index"] = "given"
    else:
        need = hilbert_bits([c.size for c in table.qi_columns])
        if bits is None:
            bits = need
        elif int(bits) < need:
            raise ParameterError(
                f"{name}: bits={bits} is too few for the QI codes (the largest domain needs {need})"
            )
        index = table_hilbert_index(table, int(bits))
        params["bits"] = int(bits)
    return hilbert_order(index=index)


HILBERT_OPTIONS = {
    "bits": "Hilbert grid order (default: ceil(log2(largest QI code domain)))",
    "hilbert_index": "precomputed Q_T per row (Python only; ties by row id)",
}


@register(
    "hilb",
    frontier=True,
    summary="Hilb: greedy l-diverse groups along a Hilbert curve (Ghinita et al. 2007)",
    models=("LDiversity",),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    options={
        "scheme": "generalization (default) or bucketization (Ghinita et al.'s permutation)",
        **HILBERT_OPTIONS,
    },
)
def hilb(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: Scheme | str = Scheme.GENERALIZATION,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Hilb for frequency l-diversity (paper 000 section 6.2.2, ``docs/theory/asap.md#hilb``),
    published by generalization
    (default) or bucketization (``scheme``: Ghinita et al. 2007 publish either way; the
    grouping, and so the Hilb attack of paper 000 Algorithm 7, is the same).

    Reads ``l`` (a whole number) from :class:`~kerckhoffs.models.LDiversity`, the only model it
    accepts. Raises :class:`~kerckhoffs.errors.ParameterError` for other models or a table that
    is not l-eligible (``|T| < l * S_max(T)``). ``hilbert_index`` replaces the computed ``Q_T``
    (one number per row; ties by row id). Deterministic: ``seed`` is not used.
    ``sa_log`` records the SA statistics read (:func:`hilb_groups`); the audit fails Hilb.
    """
    scheme = parse_scheme(scheme, "hilb")
    l, bucket = l_eligible_buckets(table, models, "hilb")  # noqa: E741
    params: dict[str, Any] = {"l": l}
    if scheme != Scheme.GENERALIZATION:
        params["scheme"] = scheme.value
    order = _hilbert_positions(table, "hilb", bits, hilbert_index, params)
    result = hilb_groups(bucket, order, l, sa_log=sa_log)
    return Release(
        table,
        Partition.from_labels(result.group),
        scheme,
        table.sa,
        Provenance("hilb", params),
    )


# -- Hilb+ (paper 000 Algorithm 2) and Hilb+ strict (docs/theory/asap.md#hilb-plus) -------------
@deterministic_stage
def hilb_plus_groups(
    bucket: np.ndarray,
    order: np.ndarray,
    l: int,  # noqa: E741
    *,
    sa_log: SAReadLog | None = None,
) -> np.ndarray:
    """Literal Hilb+ (paper 000 Algorithm 2, ``docs/theory/asap.md#hilb-plus``) on rows already in
    Hilbert order.

    ``bucket``, ``order``, ``l`` as in :func:`hilb_groups`. While ``|G| - l >= l * S_max(G)``
    (global look-ahead), ``G1`` = the ``l`` frontier rows of lowest ``Q_T``; otherwise the
    whole remainder ``G`` is the last group (line 8, ``s = |G|``; line 10 then takes all of
    ``G``: the printed "``|G|`` tuples of F" is impossible, so we take the whole remainder:
    ``docs/theory/asap.md#err-hilb-plus-line10``).
    Returns the group of every row (ids in emission order).

    The frontier reads tuple-level SA: see :func:`hilb_plus` for why this is not
    algorithm-safe. With ``sa_log`` the frontier reads are logged (:class:`_Reads`), and the
    audit fails exactly when some step skipped a row as a duplicate.
    """
    n = int(order.shape[0])
    at = np.asarray(bucket)[order].astype(np.int64)
    if n and n < l * int(np.bincount(at).max()):
        raise ParameterError(f"hilb+: the rows are not l-eligible for l={l}")
    log = _Reads(order) if sa_log is not None else None
    left, after, heads = bucket_chains(at)
    bound = max((left[h] for h in heads), default=0)  # >= S_max(G); made exact when needed
    remaining = n
    emitted: list[int] = []
    while remaining:
        if remaining - l < l * bound:
            bound = max(left[h] for h in heads)  # S_max(G) exactly
            if remaining - l < l * bound:
                break  # line 7-8: publish the rest as one group
        chosen = heads[:l]  # line 10: the l lowest-Q_T frontier rows (l distinct values)
        if log is not None:
            log.frontier_upto(heads[0], chosen[-1])
            log.emit(chosen)
        del heads[:l]
        for h in chosen:
            nxt = after[h]
            if nxt >= 0:
                insort(heads, nxt)
        emitted.extend(chosen)
        remaining -= l
    full = len(emitted) // l
    group = np.full(n, full, dtype=np.int32)  # the final group: the remainder
    group[order[np.asarray(emitted, dtype=np.int64)]] = np.repeat(
        np.arange(full, dtype=np.int32), l
    )
    if log is not None and sa_log is not None:
        log.flush(sa_log, group, "hilb+")
    return group


@deterministic_stage
def hilb_plus_strict_groups(
    bucket: np.ndarray,
    order: np.ndarray,
    l: int,  # noqa: E741
    *,
    sa_log: SAReadLog | None = None,
) -> np.ndarray:
    """Hilb+ strict (``docs/theory/asap.md#hilb-plus``): contiguous chunks of the Hilbert order, 1-D
    Mondrian+.

    With ``G`` the rows not yet grouped (always a suffix of the Hilbert order) and
    ``k = l * S_max(G)``: if ``|G| - k >= k`` the first ``k`` rows of ``G`` are a group,
    otherwise ``G`` is the last one. Returns the group of every row (ids in Hilbert order).

    ``S_max`` of every suffix comes from one numpy pass: the count of a row's value at or after
    it (``bucket_chains``' ``left``), maximized from the end. Logically it is the table's SA
    histogram minus those of the chunks already cut, which is what ``sa_log`` records.
    """
    n = int(order.shape[0])
    group = np.zeros(n, dtype=np.int32)
    if n == 0:
        return group
    at = np.asarray(bucket)[order].astype(np.int64)
    counts = np.bincount(at)
    if n < l * int(counts.max()):
        raise ParameterError(f"hilb+strict: the rows are not l-eligible for l={l}")
    by_bucket = np.argsort(at, kind="stable")
    first = np.cumsum(counts) - counts
    left = np.empty(n, dtype=np.int64)  # rows of its bucket at or after each position
    left[by_bucket] = np.repeat(counts, counts) - (
        np.arange(n, dtype=np.int64) - np.repeat(first, counts)
    )
    smax_from = np.maximum.accumulate(left[::-1])[::-1].tolist()  # S_max of every suffix
    starts = [0]
    p = 0
    while True:
        k = l * smax_from[p]
        if n - p - k < k:
            break
        p += k
        starts.append(p)
    chunk = np.searchsorted(np.asarray(starts), np.arange(n), side="right") - 1
    group[order] = chunk.astype(np.int32)
    if sa_log is not None:
        _Reads(order).flush(sa_log, group, "hilb+strict")
    return group


LITERAL_NOT_SAFE = (
    "Not algorithm-safe (contrary to paper 000 Theorem 6.2; docs/theory/asap.md"
    "#err-hilb-plus-literal): its frontier reads tuple-level SA. "
    "Counterexample, l = 2, rows in Q_T order with SA A, A, B, C, B, C: Hilb+ publishes "
    "{t1, t3} and {t2, t4, t5, t6}; t2 was skipped, so it holds A (Pr[t2 = C] is 0 for an "
    "adversary who knows Hilb+, 1/2 for one who does not) and t4, t5, t6 hold C with "
    "probability 2/3 > 1/l. Use hilb+strict for algorithm-safe publishing."
)


@register(
    "hilb+",
    family="hilb",
    base="hilb",
    frontier=True,
    summary="Hilb+: Hilb with global look-ahead, literal paper 000 Alg. 2 (NOT algorithm-safe)",
    models=("LDiversity",),
    options=dict(HILBERT_OPTIONS),
)
def hilb_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Hilb+ exactly as paper 000 Algorithm 2 (``docs/theory/asap.md#hilb-plus``), by
    generalization.

    Hilb's greedy step with the look-ahead test ``|G| - l >= l * S_max(G)`` on the remainder
    ``G`` instead of ``S_max(G - G1)``; no size increments, no roll-back; when the test fails
    the remainder is published whole. Kept literal to reproduce paper 000's Figure 10 and
    Table 8. Running example (paper 000's eight rows,
    ``docs/theory/asap.md#worked-examples``): ``{t1,t2}, {t3,t4}, {t5,t6,t7,t8}``.

    **The literal Hilb+ is NOT algorithm-safe**, contrary to paper 000's Theorem 6.2. The paper
    argues that only ``S_max(G)`` is read, a statistic of a union of published groups, but line 10
    also reads tuple-level SA through the frontier: a row skipped inside the ``Q_T`` range of ``G1``
    is not a bucket head, so it shares its value with an earlier member of ``G1``, exactly the
    inference Algorithm 7 uses against Hilb. Our 6-row counterexample
    (``docs/theory/asap.md#err-hilb-plus-literal``): l = 2, rows ``t1..t6`` in ``Q_T`` order with SA
    ``A, A, B, C, B, C``. Hilb+ publishes ``{t1,t3}`` (A, B) and ``{t2,t4,t5,t6}`` (A, B, C, C).
    Without knowing the algorithm, ``Pr[t2 = C] = Pr[t4 = C] = 1/2`` (24 worlds); knowing it, ``t2``
    must equal ``t1`` (6 worlds), so ``Pr[t2 = C] = 0`` and
    ``Pr[t4 = C] = Pr[t5 = C] = Pr[t6 = C] = 2/3 > 1/l``: ASAP and 2-diversity both fail. With
    ``sa_log`` the information-flow audit fails on such a release (the frontier read
    ``{t1, t2, t3}`` is no union of groups). Use :func:`hilb_plus_strict` (``hilb+strict``) for
    algorithm-safe publishing.

    Same models, options and refusals as :func:`hilb`; deterministic (``seed`` is not used).
    """
    l, bucket = l_eligible_buckets(table, models, "hilb+")  # noqa: E741
    params: dict[str, Any] = {"l": l}
    order = _hilbert_positions(table, "hilb+", bits, hilbert_index, params)
    group = hilb_plus_groups(bucket, order, l, sa_log=sa_log)
    return Release(
        table,
        Partition.from_labels(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("hilb+", params),
    )


@register(
    "hilb+strict",
    algorithm_safe=True,
    family="hilb",
    base="hilb",
    summary="Hilb+ strict: l*S_max(rest)-row chunks of the Hilbert order (algorithm-safe)",
    models=("LDiversity",),
    options=dict(HILBERT_OPTIONS),
)
def hilb_plus_strict(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Hilb+ strict (``docs/theory/asap.md#hilb-plus``): the algorithm-safe Hilb+, by
    generalization.

    One-dimensional Mondrian+ along the Hilbert order, greedy from the left: with ``G`` the
    rows not yet grouped and ``k = l * S_max(G)``, the next group is the first ``k`` rows of
    ``G`` if ``|G| - k >= k``, else all of ``G``. Each chunk is l-diverse
    (``|chunk| = l * S_max(G) >= l * S_max(chunk)``) and so is the last
    (``|G| >= l * S_max(G)`` holds throughout).

    **Difference from the literal Hilb+** (:func:`hilb_plus`): Hilb+ picks ``G1`` among the
    bucket heads, so which rows it groups depends on individual rows' SA values (a skipped row
    is a duplicate of an earlier one); Hilb+ strict cuts contiguous runs of the Hilbert order,
    so its decisions use the QIs and ``S_max`` of the rest ``G`` only, and ``G`` is the union of
    the published groups after the cut. It is simulatable (Theorem 5.3): 0 of 400 random
    instances violate ASAP in our prototype, and with ``sa_log`` the information-flow
    audit always passes. The price is coarser groups (``l * S_max`` rows, not ``l``); Hilb++
    strict (:func:`hilb_plus_plus_strict`) recovers utility with stratified pick-up.
    Running example (paper 000's eight rows, ``docs/theory/asap.md#worked-examples``):
    ``{t1,t2,t3,t4}, {t5,t6,t7,t8}``.

    Same models, options and refusals as :func:`hilb`; deterministic (``seed`` is not used).
    """
    l, bucket = l_eligible_buckets(table, models, "hilb+strict")  # noqa: E741
    params: dict[str, Any] = {"l": l}
    order = _hilbert_positions(table, "hilb+strict", bits, hilbert_index, params)
    group = hilb_plus_strict_groups(bucket, order, l, sa_log=sa_log)
    return Release(
        table,
        Partition.from_labels(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("hilb+strict", params),
    )


# -- Hilb++ (paper 000 Algorithms 5/6 applied to Hilb+, docs/theory/asap.md#plus-plus) ----------
def _plus_plus(
    name: str,
    table: Table,
    models: list[PrivacyModel],
    seed: Seed,
    scheme: Scheme | str,
    bits: int | None,
    hilbert_index: np.ndarray | None,
    sa_log: SAReadLog | None,
    strict: bool,
) -> Release:
    """Hilb+ (literal or strict), then stratified pick-up with ``generator(seed)``."""
    scheme = parse_scheme(scheme, name)
    l, bucket = l_eligible_buckets(table, models, name)  # noqa: E741
    params: dict[str, Any] = {"l": l, "scheme": scheme.value}
    order = _hilbert_positions(table, name, bits, hilbert_index, params)
    step = hilb_plus_strict_groups if strict else hilb_plus_groups
    coarse = step(bucket, order, l, sa_log=sa_log)
    part = pickup(table, coarse, l, generator(seed), sa_log=sa_log)
    return Release(table, part, scheme, table.sa, Provenance(name, params))


PLUS_PLUS_OPTIONS = {
    "scheme": "generalization (default) or bucketization",
    **HILBERT_OPTIONS,
}


@register(
    "hilb++",
    family="hilb",
    base="hilb+",
    frontier=True,
    summary="Hilb++: literal Hilb+ then stratified pick-up (paper 000; NOT algorithm-safe)",
    models=("LDiversity",),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options=dict(PLUS_PLUS_OPTIONS),
)
def hilb_plus_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: Scheme | str = Scheme.GENERALIZATION,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Hilb++ as paper 000 defines it (Algorithms 5 and 6, ``docs/theory/asap.md#plus-plus``):
    literal Hilb+, then pick-up.

    Every Hilb+ group of at least ``2l`` rows is cut by Anatomy with uniformly random, seeded row
    choice (:func:`~kerckhoffs.algorithms.pickup.pickup`,
    ``docs/theory/asap.md#stratified-pickup``); the groups then have ``l..2l-1`` rows with distinct
    SA values (Theorem 7.1). Published by generalization (each group its own generalized QI) or
    bucketization (``scheme=``, Algorithm 6). Pick-up keeps safety but cannot add it: built on the
    literal Hilb+, Hilb++ is **not** algorithm-safe (7 of 150 random instances violate ASAP in our
    prototype; :func:`hilb_plus`). Use :func:`hilb_plus_plus_strict` (``hilb++strict``) for that.
    ``seed``: an int, a :class:`numpy.random.Generator`, or None (default: fresh OS randomness);
    same seed, same release.
    """
    return _plus_plus(
        "hilb++", table, models, seed, scheme, bits, hilbert_index, sa_log, strict=False
    )


@register(
    "hilb++strict",
    algorithm_safe=True,
    family="hilb",
    base="hilb+strict",
    summary="Hilb++ strict: Hilb+ strict then stratified pick-up (algorithm-safe)",
    models=("LDiversity",),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options=dict(PLUS_PLUS_OPTIONS),
)
def hilb_plus_plus_strict(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: Scheme | str = Scheme.GENERALIZATION,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Hilb+ strict, then stratified pick-up (``docs/theory/asap.md#hilb-plus`` and
    ``docs/theory/asap.md#plus-plus``): algorithm-safe.

    Hilb+ strict's chunks of ``l * S_max`` rows are cut by Anatomy with seeded uniformly random row
    choice (``docs/theory/asap.md#stratified-pickup``); both steps read only QIs, the SA multisets
    of unions of published groups and randomness, so the release is simulatable (0 of 150 random
    instances violate ASAP in our prototype; the information-flow audit passes). Groups have
    ``l..2l-1`` rows with distinct SA values, except chunks under ``2l`` rows, which pass unchanged.
    ``scheme`` as in :func:`hilb_plus_plus`. ``seed``: an int, a :class:`numpy.random.Generator`, or
    None (default: fresh OS randomness); same seed, same release.
    """
    return _plus_plus(
        "hilb++strict", table, models, seed, scheme, bits, hilbert_index, sa_log, strict=True
    )
