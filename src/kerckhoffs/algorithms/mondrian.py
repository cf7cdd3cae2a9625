"""Mondrian: strict multidimensional median partitioning (LeFevre, DeWitt, Ramakrishnan 2006).

Top-down recursion (spec ``asap.md`` 2.1 and 2.3): a group ``G`` is cut on one quasi-identifier
at its median into ``L = {t : t[dim] <= split}`` and ``R = G - L``; the dimensions are tried in
order of decreasing *normalized range* ``(max code - min code over G) / W_dim`` (``W_dim`` the
width of the column's code domain; ties go to the lower column index), falling back to the next
dimension when the cut is not allowed; a group with no allowed cut is published whole.

- **Median** (``median="lower"``, the spec's default): the smallest value ``v`` with
  ``|{t in G : t[dim] <= v}| >= ceil(|G|/2)``. ``median="upper"`` takes the value at sorted
  position ``floor(|G|/2)`` (0-based) and sends the rows equal to it to the right half, so the
  two options mirror each other (with ``<= upper median`` the cut of two distinct values would
  never be possible).
- **Cuts** (``cuts="strict"``, the default): rows with equal values stay on one side.
  ``cuts="relaxed"`` (LeFevre's relaxed partitioning) splits the rows equal to the median
  between the halves, so that ``|L| = ceil(|G|/2)`` (lower) or ``floor(|G|/2)`` (upper); ties
  are broken by row id, deterministically. A dimension with a single value in ``G`` is never
  cut, in either mode.
- **Categorical** quasi-identifiers are cut along their hierarchy-ordered codes (depth-first
  leaf order, :mod:`kerckhoffs.data.table`), so a group spans a code interval and publishes
  its lowest common hierarchy node (:meth:`kerckhoffs.release.Release.generalized_cells`).
- **Allowable cuts** are a parameter, a :class:`CutRule` evaluated on the statistics of the
  candidate halves (:class:`CutStats`), vectorized over all candidate cuts. Built in:
  :class:`KAnonymityCut` (``|L| >= k and |R| >= k``, spec 2.3) and :class:`LDiversityCut`
  (frequency l-diversity ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, spec 2.1, with ``c`` the
  subset-aware bounded count of :attr:`~kerckhoffs.models.GroupHistogram.sensitive_count`).
  Given both models, both must hold (:class:`AllCuts`).

Speed (issue 15, "Mondrian by counting"): the recursion runs level by level, all groups of
one depth at once, and decides every cut by counting. Per level, one ``bincount`` over
``(group, QI, code)`` cells gives every group's code histogram on every quasi-identifier
(code domains sit side by side), from which the normalized ranges (first and last non-empty
cell), the medians and ``|L|`` (one ``searchsorted`` in the cumulative counts) follow; the
SA statistics are one ``bincount`` over (group, SA) cells, and the halves' SA counts one
more over the cells of the left rows of the candidates being decided (the right half is the
group minus the left). Rows never need sorting: under strict cuts, rows with equal QI codes
always travel together, so duplicate rows are first folded into weighted units (the
histograms are weighted), which bounds every level's work by the number of distinct rows.
Relaxed cuts send the rows equal to the median left in row order (a stable sort of only
those tie rows). Nothing loops over rows or groups in Python; the loops are over depths,
dimensions and rounds of fallback dimensions. The previous engine, which kept d + 1 sorted
orders and split them stably at each depth, is kept as the reference the partitions are
tested against (``benchmarks/baselines/mondrian_v0.py``).

Original Mondrian for l-diversity is *not* algorithm-safe (spec 2.1, Theorem 5.1): a rejected
cut consults ``S_max`` of halves that are never published. Mondrian+ (paper 000 Algorithm 1,
spec 2.2) fixes that with one different cut rule, see :class:`CutRule`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.pickup import pickup
from kerckhoffs.algorithms.registry import parse_scheme, pick, refuse_others, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import Kind, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import EntropyLDiversity, LDiversity, entropy_of_counts
from kerckhoffs.models.t_closeness import TCloseness, emd_to
from kerckhoffs.randomness import Seed, deterministic_stage, generator
from kerckhoffs.release import Partition, Provenance, Release, Scheme
from kerckhoffs.segments import exclusive_cumsum, segment_ranges

EPS = 1e-9
"""Tolerance when comparing ``l * count`` (l may be fractional) with a row count."""

MEDIANS = ("lower", "upper")
CUTS = ("strict", "relaxed")


# -- allowable-cut rules -------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CutStats:
    """Statistics of candidate cuts, one entry per candidate (a group cut on one dimension).

    ``size`` is ``|G|``, ``left`` is ``|L|`` (``right = |G| - |L|``). ``bounded`` is ``c(G)``,
    the count frequency l-diversity bounds (``S_max(G)`` when every SA value is sensitive, else
    the sensitive count of the schema's subset, as :attr:`GroupHistogram.sensitive_count`);
    ``bounded_left`` / ``bounded_right`` are ``c(L)`` / ``c(R)``; ``hist_left`` /
    ``hist_right`` the halves' full SA histograms ``[candidates, n_sa]`` (entropy l-diversity,
    t-closeness). The SA fields are ``None`` unless the rule declares that it reads them
    (``reads_group_sa`` / ``reads_halves_sa`` / ``reads_halves_hist``), so k-anonymity cuts
    never touch the SA.
    """

    size: np.ndarray
    left: np.ndarray
    bounded: np.ndarray | None = None
    bounded_left: np.ndarray | None = None
    bounded_right: np.ndarray | None = None
    hist_left: np.ndarray | None = None
    hist_right: np.ndarray | None = None

    @property
    def right(self) -> np.ndarray:
        """``|R| = |G| - |L|``."""
        return self.size - self.left


class CutRule:
    """Whether a candidate cut ``G -> (L, R)`` is allowed (vectorized over candidates).

    Subclasses set ``reads_group_sa`` / ``reads_halves_sa`` to the SA statistics they need
    (also an audit of what a rule reads: statistics of halves that end up unpublished are what
    makes original Mondrian leak, spec 2.1) and implement :meth:`allowed`.

    **Mondrian+ is one different rule** (paper 000 Algorithm 1; spec ``asap.md`` 2.2, global
    look-ahead),
    :class:`LookAheadCut`: a cut of ``G`` is allowed only when both halves have at least
    ``l * S_max(G)`` rows. It reads the SA of ``G`` only, which is always a union of published
    groups, so it never consults an unpublished statistic (equivalently, a k-anonymity cut
    with ``k = l * S_max(G)`` per group); :func:`mondrian_plus` is ``mondrian_groups(table,
    LookAheadCut(l))`` after the l-eligibility check.
    """

    reads_group_sa: bool = False
    reads_halves_sa: bool = False
    reads_halves_hist: bool = False

    def allowed(self, stats: CutStats) -> np.ndarray:
        """Boolean per candidate: may ``G`` be cut into these halves."""
        raise NotImplementedError

    def describe(self) -> str:
        """Short description for error messages and provenance."""
        return type(self).__name__


class KAnonymityCut(CutRule):
    """k-anonymity Mondrian (spec ``asap.md`` 2.3): allowed iff ``|L| >= k`` and ``|R| >= k``."""

    def __init__(self, k: int) -> None:
        self.k = int(k)

    def allowed(self, stats: CutStats) -> np.ndarray:
        return (stats.left >= self.k) & (stats.right >= self.k)

    def describe(self) -> str:
        return f"k={self.k}"


class LDiversityCut(CutRule):
    """Frequency l-diversity Mondrian (spec ``asap.md`` 2.1): allowed iff
    ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, ``c`` the subset-aware bounded count."""

    reads_halves_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.bounded_left is not None and stats.bounded_right is not None
        return (stats.left + EPS >= self.l * stats.bounded_left) & (
            stats.right + EPS >= self.l * stats.bounded_right
        )

    def describe(self) -> str:
        return f"l={format_number(self.l)}"


class LookAheadCut(CutRule):
    """Mondrian+'s global look-ahead (paper 000, Algorithm 1 and Theorem 6.1; spec ``asap.md``
    2.2): allowed iff ``|L| >= l * c(G)`` and ``|R| >= l * c(G)``, ``c(G)`` the bounded count
    of the group being cut (``S_max(G)`` when every SA value counts).

    The worst case, every copy of the most frequent value landing in one half, still leaves
    that half l-diverse: ``c(L) / |L| <= c(G) / |L| <= 1 / l`` (eq. 20). Unlike
    :class:`LDiversityCut` it never looks at the halves' SA, only at ``G``'s, and every group
    the recursion tests ends up a union of published groups, so the statistic is recomputable
    from the release (Theorem 5.3: algorithm-safe).
    """

    reads_group_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.bounded is not None
        need = self.l * stats.bounded - EPS
        return (stats.left >= need) & (stats.right >= need)

    def describe(self) -> str:
        return f"look-ahead l={format_number(self.l)}"


class AllCuts(CutRule):
    """Every one of ``rules`` must allow the cut (k-anonymity and l-diversity together)."""

    def __init__(self, rules: Sequence[CutRule]) -> None:
        self.rules = tuple(rules)
        self.reads_group_sa = any(r.reads_group_sa for r in self.rules)
        self.reads_halves_sa = any(r.reads_halves_sa for r in self.rules)
        self.reads_halves_hist = any(r.reads_halves_hist for r in self.rules)

    def allowed(self, stats: CutStats) -> np.ndarray:
        ok = np.ones(stats.size.shape, dtype=bool)
        for r in self.rules:
            ok &= r.allowed(stats)
        return ok

    def describe(self) -> str:
        return ", ".join(r.describe() for r in self.rules)


class EntropyLDiversityCut(CutRule):
    """Entropy l-diversity Mondrian (paper 004 Def. 4; spec ``composition.md`` 3.4): allowed
    iff both halves have SA entropy ``>= log l``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)
        self.log_l = math.log(self.l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.hist_left is not None and stats.hist_right is not None
        return (entropy_of_counts(stats.hist_left) + 1e-9 >= self.log_l) & (
            entropy_of_counts(stats.hist_right) + 1e-9 >= self.log_l
        )

    def describe(self) -> str:
        return f"entropy-l={format_number(self.l)}"


class TClosenessCut(CutRule):
    """t-closeness Mondrian (paper 004 Def. 5; spec ``composition.md`` 3.4): allowed iff both
    halves are within EMD ``t`` of the table's SA distribution ``totals``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, t: float, totals: np.ndarray, ordered: bool) -> None:
        self.t = float(t)
        self.totals = np.asarray(totals)
        self.ordered = ordered

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.hist_left is not None and stats.hist_right is not None
        near = self.t + 1e-12
        return (emd_to(stats.hist_left, self.totals, self.ordered) <= near) & (
            emd_to(stats.hist_right, self.totals, self.ordered) <= near
        )

    def describe(self) -> str:
        return f"t={format_number(self.t)}"


class FunctionCut(CutRule):
    """A plain callable ``f(CutStats) -> bool array`` as a rule (reads every SA statistic)."""

    reads_group_sa = True
    reads_halves_sa = True

    def __init__(self, fn: Callable[[CutStats], np.ndarray]) -> None:
        self.fn = fn

    def allowed(self, stats: CutStats) -> np.ndarray:
        return np.asarray(self.fn(stats), dtype=bool)

    def describe(self) -> str:
        return getattr(self.fn, "__name__", "custom rule")


def as_rule(rule: CutRule | Callable[[CutStats], np.ndarray]) -> CutRule:
    """``rule`` as a :class:`CutRule` (a callable is wrapped in :class:`FunctionCut`)."""
    return rule if isinstance(rule, CutRule) else FunctionCut(rule)


# -- the partitioner -----------------------------------------------------------------------------
def bounded_reducer(table: Table) -> tuple[np.ufunc, np.ndarray | None]:
    """How a (group, SA) count vector reduces to the bounded count c(group).

    Mirrors :attr:`GroupHistogram.sensitive_count`: max over all values when every value is
    sensitive; sum over the sensitive subset in ``set`` mode; max over it in ``each`` mode.
    Returns the ufunc and the per-SA-code weight mask (None = all values count).
    """
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.all():
        return np.maximum, None
    if table.schema.sensitive_mode == SensitiveMode.SET:
        return np.add, sens
    return np.maximum, sens


DENSE_BINS = 1 << 22
DENSE_BINS_PER_UNIT = 2
"""A level histogram is a dense ``bincount`` while its ``n_groups * width`` bins stay below
``max(DENSE_BINS, DENSE_BINS_PER_UNIT * keys)``; above that (wide numeric domains, many
groups) the keys are compressed by sorting (``np.unique``), so memory stays bounded by the
input size."""

COLUMN_KEYS = 1 << 22
"""Above this many keys (active units x QIs) a level's QI histograms are counted one column
at a time (each with its own dense-or-sorted choice, keys in one reused buffer) instead of
all columns at once, so memory stays a few arrays of the active units."""


@dataclass(frozen=True, eq=False)
class LevelHistogram:
    """The non-empty cells of one level's per-(group, cell) counts, sparse.

    ``key[i] = group * width + cell`` (ascending) holds ``count[i] > 0`` rows. For the
    quasi-identifiers the cells of QI ``j`` are ``offset_j + code`` (the QIs' code domains side
    by side, ``width`` their total); for the SA, the SA code. Two histograms computed on
    disjoint row sets (chunks of a table) sum by merging keys, which is what a distributed
    level needs. ``unit_cell`` (optional) is the index in ``key`` of every input unit.
    """

    key: np.ndarray
    count: np.ndarray
    width: int
    unit_cell: np.ndarray | None = None


def level_histogram(
    group: np.ndarray,
    cells: np.ndarray,
    n_groups: int,
    width: int,
    weight: np.ndarray | None = None,
    *,
    unit_cells: bool = False,
    first_cell: int = 0,
    buffer: np.ndarray | None = None,
    columns: Sequence[int] | None = None,
) -> LevelHistogram:
    """The (group, cell) histogram of one level (Mondrian's counting step, issue 15).

    ``group`` (int64) per active unit, ``cells`` its cell (``[n]``) or one cell per QI
    (``[n, d]``), ``first_cell <= cell < first_cell + width``; ``weight`` the rows each unit
    stands for (None: one; ``[n]``, or ``[n * d]`` already repeated per column). One
    ``bincount`` over ``group * width + cell - first_cell`` (all columns at once) while the
    dense table is small enough (:data:`DENSE_BINS`), else a sort of the keys.
    ``unit_cells=True`` also returns each unit's cell index (one column only: the SA pairs,
    whose halves are counted by cell). ``buffer`` (int64, at least ``n``) is used for the
    keys of one column instead of a fresh temporary (large inputs). ``columns``: count only
    these columns of a 2-D ``cells``.
    """
    n = group.size
    if cells.ndim == 2 and columns is None:
        columns = range(cells.shape[1])
    d = 1 if cells.ndim == 1 else len(columns or ())
    if buffer is not None and d == 1 and buffer.size >= n:
        key = np.multiply(group, width, out=buffer[:n])
    else:
        key = group * width
    if first_cell:
        key -= first_cell
    if cells.ndim == 1:
        key += cells
    else:
        assert columns is not None
        base = key
        key = np.empty((d, n), dtype=np.int64)
        for i, j in enumerate(columns):
            np.add(base, cells[:, j], out=key[i])
        key = key.reshape(-1)
        if weight is not None and weight.size == n and d > 1:
            weight = np.tile(weight, d)
    bins = n_groups * width
    unit_cell = None
    if bins <= max(DENSE_BINS, DENSE_BINS_PER_UNIT * key.size):
        hist = np.bincount(key, weights=weight, minlength=bins)
        out_key = np.flatnonzero(hist)
        count = hist[out_key]
        if unit_cells:
            rank = np.cumsum(hist > 0, dtype=np.int64)
            rank -= 1
            unit_cell = rank[key]
    else:
        out_key, inv = np.unique(key, return_inverse=True)
        count = np.bincount(inv, weights=weight, minlength=out_key.size)
        if unit_cells:
            unit_cell = inv.astype(np.int64)
    if count.dtype != np.int64:
        count = count.astype(np.int64)
    return LevelHistogram(out_key, count, width, unit_cell)


@dataclass(frozen=True, eq=False)
class MedianCuts:
    """Per group and quasi-identifier of one level (arrays ``[n_groups, d]``): the candidate
    median cut.

    ``spread`` = max code - min code; ``value`` the median code ``v``; ``below`` the rows
    with a code ``< v``; ``left`` = ``|L|`` (``|G|`` when ``spread == 0``: no cut). Under
    strict cuts ``L`` is ``{code <= v}`` (lower median) or ``{code < v}`` (upper); under
    relaxed cuts it is ``{code < v}`` plus the first ``left - below`` rows with code ``v``.
    """

    spread: np.ndarray
    value: np.ndarray
    below: np.ndarray
    left: np.ndarray


def median_cuts(
    hist: LevelHistogram,
    sizes: np.ndarray,
    domains: Sequence[int],
    lower: bool,
    strict: bool,
    *,
    offsets: np.ndarray | None = None,
) -> MedianCuts:
    """Every group's median cut on every quasi-identifier, from the level's (summed) QI
    histogram (cells of QI ``j`` at offset ``domains[0] + .. + domains[j-1]``).

    The lower median is the smallest ``v`` with ``|{t <= v}| >= ceil(|G|/2)``; the upper one
    the code at sorted position ``floor(|G|/2)``, i.e. the smallest ``v`` with
    ``|{t <= v}| >= floor(|G|/2) + 1`` (module docstring). Found for all (group, QI) segments
    at once by one ``searchsorted`` in the cumulative counts of the histogram's cells (cells
    are sorted by group, QI, code, and every segment has at least one). ``offsets``: the
    first cell of each QI when they are not the running sums of ``domains`` (a histogram of
    some of the QIs only).
    """
    d = len(domains)
    if offsets is None:
        offsets = np.zeros(d, dtype=np.int64)
        np.cumsum(domains[:-1], out=offsets[1:])
    n_groups = sizes.size
    seg_start = (np.arange(n_groups, dtype=np.int64)[:, None] * hist.width + offsets).ravel()
    first = np.searchsorted(hist.key, seg_start)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = hist.key.size - 1
    m = np.repeat(sizes, d)
    spread = hist.key[last] - hist.key[first]
    cum = np.cumsum(hist.count)
    before = cum[first] - hist.count[first]
    target = before + ((m + 1) // 2 if lower else m // 2 + 1)
    at = np.searchsorted(cum, target)
    upto = cum[at] - before
    below = upto - hist.count[at]
    cut = spread > 0
    left = m.copy()  # |L| = |G|: not a cut
    if strict:
        left[cut] = (upto if lower else below)[cut]
    else:
        half = (m + 1) // 2 if lower else m // 2
        left[cut] = half[cut]
    shape = (n_groups, d)
    return MedianCuts(
        spread.reshape(shape),
        (hist.key[at] - seg_start).reshape(shape),
        below.reshape(shape),
        left.reshape(shape),
    )


def tie_ranks(group: np.ndarray) -> np.ndarray:
    """Rank of each element among the earlier elements with the same ``group`` value."""
    n = group.size
    if not n:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(group, kind="stable")
    sorted_g = group[order]
    starts = np.flatnonzero(sorted_g[1:] != sorted_g[:-1])
    del sorted_g
    starts += 1
    starts = np.concatenate(([0], starts))
    lengths = np.diff(np.append(starts, n))
    small: Any = np.int32 if n < np.iinfo(np.int32).max else np.int64
    rank = np.empty(n, dtype=small)
    rank[order] = np.arange(n, dtype=small) - np.repeat(starts.astype(small), lengths)
    return rank


def _fold_units(qi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Equal rows of ``qi`` (codes ``[n, d]``) collapsed into units
    (:meth:`~kerckhoffs.release.Partition.from_columns`).

    Returns ``(unit of each row, first row of each unit)``, units numbered by first
    appearance, or None when every row is distinct.
    """
    n = qi.shape[0]
    unit: np.ndarray = Partition.from_columns(qi).group
    if int(unit.max()) + 1 == n:
        return None
    unit = unit.astype(np.int64, copy=False)
    # ids come in order of first appearance: a unit starts where the running max grows
    top = np.maximum.accumulate(unit)
    grows = np.empty(n, dtype=bool)
    grows[0] = True
    np.not_equal(top[1:], top[:-1], out=grows[1:])
    del top
    return unit, np.flatnonzero(grows)


class _Units:
    """How rows map to the QI units of the recursion, for the SA-read log (rows)."""

    def __init__(self, row_unit: np.ndarray | None, sa_log: SAReadLog | None) -> None:
        self.row_unit = row_unit
        self.sa_log = sa_log

    def record(self, units: np.ndarray, set_ids: np.ndarray, what: str) -> None:
        """Log an SA read on sets of units (expanded to their rows)."""
        assert self.sa_log is not None
        if self.row_unit is None:
            self.sa_log.record(units, set_ids, what)
            return
        of_unit = np.full(int(self.row_unit.max()) + 1, -1, dtype=np.int64)
        of_unit[units] = set_ids
        of_row = of_unit[self.row_unit]
        rows = np.flatnonzero(of_row >= 0)
        self.sa_log.record(rows, of_row[rows], what)


@dataclass(frozen=True, eq=False)
class PairCells:
    """A level's (group, SA) cells: the summed histogram, each group's first cell and cell
    count, each cell's SA code, and its weight in the bounded count (None: every value)."""

    hist: LevelHistogram
    first: np.ndarray
    count: np.ndarray
    sa: np.ndarray
    weight: np.ndarray | None


def halves_stats(
    rule: CutRule,
    pairs: PairCells,
    todo: np.ndarray,
    size: np.ndarray,
    left: np.ndarray,
    bounded: np.ndarray,
    left_counts: np.ndarray,
    reducer: np.ufunc,
    n_sa: int,
) -> CutStats:
    """The statistics of one round of candidate cuts, group ``todo[i]`` into halves of
    ``left[i]`` and ``size[i] - left[i]`` rows, from ``left_counts``: the left halves' rows in
    every (group, SA) cell of ``pairs`` (the right half is the group minus the left). The
    in-memory engine counts the left halves with one ``bincount``; the Dask engine sums them
    over the partitions; both decide here."""
    pc = pairs.count[todo]
    local_first = exclusive_cumsum(pc)
    at = segment_ranges(pairs.first[todo], pc)
    cnt = left_counts[at].astype(np.int64, copy=False)
    rest = pairs.hist.count[at] - cnt
    w = None if pairs.weight is None else pairs.weight[at]
    h_left = h_right = None
    if rule.reads_halves_hist:  # full histograms of the halves
        cand_of_pair = np.repeat(np.arange(todo.size), pc)
        h_left = np.zeros((todo.size, n_sa), dtype=np.int64)
        h_left[cand_of_pair, pairs.sa[at]] = cnt
        h_right = np.zeros_like(h_left)
        h_right[cand_of_pair, pairs.sa[at]] = rest
    return CutStats(
        size,
        left,
        bounded,
        reduce_bounded(cnt, w, reducer, local_first),
        reduce_bounded(rest, w, reducer, local_first),
        h_left,
        h_right,
    )


def level_candidates(
    spread: np.ndarray,
    med_code: np.ndarray,
    below: np.ndarray,
    n_left: np.ndarray,
    sizes: np.ndarray,
    widths: np.ndarray,
    offsets: np.ndarray,
    live: Sequence[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A level's candidate cuts, per (group, QI), from its medians (:func:`median_cuts`):
    the normalized range, the median's cell (code + the QI's cell offset), the rows equal to
    it that a relaxed cut may send left, and whether the cut leaves rows on both sides. The
    in-memory and the Dask engine share it."""
    norm = np.zeros(spread.shape, dtype=np.float64)
    for j in live:
        if widths[j] > 0:
            norm[:, j] = spread[:, j] / widths[j]
    cand = (n_left > 0) & (n_left < sizes[:, None])
    return norm, med_code + offsets, n_left - below, cand


def allowed_by_counts(
    rule: CutRule,
    cand: np.ndarray,
    sizes: np.ndarray,
    n_left: np.ndarray,
    bounded: np.ndarray | None,
) -> np.ndarray:
    """Per (group, QI), whether ``rule`` allows the candidate cut, for rules that read no
    halves' SA counts: every candidate judged at once from the sizes (and the group's bounded
    count)."""
    allowed = np.zeros(cand.shape, dtype=bool)
    gi, ji = np.nonzero(cand)
    if gi.size:
        stats = CutStats(sizes[gi], n_left[gi, ji], None if bounded is None else bounded[gi])
        allowed[gi, ji] = rule.allowed(stats)
    return allowed


@deterministic_stage
def mondrian_groups(
    table: Table,
    rule: CutRule | Callable[[CutStats], np.ndarray],
    *,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
    collapse: bool = True,
    start: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Group id per row of Mondrian's partition of ``table`` under the cut ``rule``.

    The engine behind :func:`mondrian` (and Mondrian+ / MASK, which pass their own rules).
    No precondition is checked here: a table whose root violates the rule's model comes back
    as one group. Group ids are in order of first appearance in the rows.

    How (module docstring; issue 15 "Mondrian by counting"): the recursion runs level by
    level, and each level is three steps, each a pure function of arrays so that a level can
    be computed on chunks of the table and summed (what a distributed run does):

    1. *histograms* (:func:`level_histogram`): from the codes of the active units and their
       group ids, one ``bincount`` over ``(group, QI, code)`` cells, the QIs' code domains
       side by side (one QI at a time for large inputs), and one over ``group * n_sa + SA``
       when the rule reads the SA;
    2. *cuts* (:func:`median_cuts`, then the rule): from the (summed) histograms, every
       group's normalized ranges, medians and ``|L|``; the rule is evaluated in rounds, round
       ``r`` trying each undecided group's ``r``-th dimension in order of normalized range
       (all candidates of a round in one call: rules are elementwise). When it reads the
       halves' SA, their counts are one more ``bincount`` over the (group, SA) cells of the
       left rows of the round's candidates (the right half is the group minus the left);
    3. *map*: finished groups leave; a split group ``g`` (the ``r``-th split one) sends its
       rows to ``2r`` (left) or ``2r + 1``, the same numbering as the sorted-orders engine of
       earlier versions (``benchmarks/baselines/mondrian_v0.py``), so the partition and the
       ``sa_log`` records are identical to it.

    Units: under strict cuts rows with equal QI codes always stay together, so with
    ``collapse`` (default) they are folded into one weighted QI unit first (one
    ``factorize`` of the folded QI codes), and rows with equal QI and SA codes into one
    weighted SA unit of it; the histograms are then weighted ``bincount`` s and the
    partition is the same (``collapse=False`` runs on rows, for tests). Relaxed cuts split
    rows equal to the median by row id and always run on rows. Memory: a few arrays of the
    active units; a dense histogram is used while it has at most
    ``max(DENSE_BINS, DENSE_BINS_PER_UNIT * keys)`` bins, else its keys are sorted.

    ``sa_log`` (:mod:`~kerckhoffs.algorithms.sa_reads`) records the SA statistics the rule
    reads: ``c(G)`` of every group with a candidate cut (rules reading the group's SA) and
    ``c(L)``, ``c(R)`` of every candidate evaluated (rules reading the halves). Not touched
    when ``None``.

    ``start`` (int, ``0 .. m - 1``, every id used): the group each row is in already; the
    recursion continues from those groups instead of the whole table, each as the in-memory
    recursion would continue it (the decisions of a group read only its own rows). A
    distributed run cuts the top levels on its partitions and finishes the subtrees here
    (:mod:`kerckhoffs.engines.dask_mondrian`).

    ``weights`` (strict cuts only; positive ints): the rows each row stands for. The result is
    the partition of the table with row ``i`` repeated ``weights[i]`` times, one id per row
    (strict cuts never separate equal rows): a distributed run ships a group's distinct rows
    with their counts instead of the rows themselves.
    """
    if median not in MEDIANS:
        raise ParameterError(
            f"mondrian: median must be one of {', '.join(MEDIANS)}, got {median!r}"
        )
    if cuts not in CUTS:
        raise ParameterError(f"mondrian: cuts must be one of {', '.join(CUTS)}, got {cuts!r}")
    rule = as_rule(rule)
    lower = median == "lower"
    strict = cuts == "strict"
    n, d = table.n, table.d
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    row_weight = None  # the rows each row stands for (None: one)
    if weights is not None:
        if not strict:
            raise ParameterError(
                "mondrian: weights need strict cuts (relaxed cuts split equal rows by row order)"
            )
        row_weight = np.asarray(weights, dtype=np.int64)
        if row_weight.shape != (n,) or (row_weight < 1).any():
            raise ParameterError("mondrian: weights need one positive count per row")
    widths = np.array([max(c.size - 1, 0) for c in table.qi_columns], dtype=np.float64)
    domains = [max(c.size, 1) for c in table.qi_columns]
    need_pairs = rule.reads_group_sa or rule.reads_halves_sa
    halves_sa = rule.reads_halves_sa
    reducer, sens_mask = bounded_reducer(table)
    n_sa = max(table.n_sa, 1)

    # The units. QI units (the recursion's): rows, or under strict cuts the distinct QI
    # tuples with their row counts. SA units (the SA pairs' histograms, rules reading the
    # SA): the distinct (QI unit, SA) pairs with their row counts, ordered by QI unit
    # (``qof``: their QI unit; None when they are the QI units themselves).
    qi_cols = [table.qi[:, j] for j in range(d)]
    row_unit = first_row = None  # row -> QI unit, QI unit -> its first row
    q_weight = row_weight
    if collapse and strict:
        # rows with equal QI codes travel together, within their starting group
        by_qi = _fold_units(table.qi if start is None else np.column_stack([start, table.qi]))
        if by_qi is not None:
            row_unit, first_row = by_qi
            q_weight = np.bincount(row_unit, weights=row_weight, minlength=first_row.size)
            q_weight = q_weight.astype(np.int64)
    units = _Units(row_unit, sa_log)
    n_units = n if first_row is None else first_row.size
    # the QIs' cells side by side: QI j's code + offsets[j] (one histogram for all QIs)
    offsets = np.zeros(d, dtype=np.int64)
    np.cumsum(domains[:-1], out=offsets[1:])
    width = int(sum(domains))
    code_type = np.min_scalar_type(width - 1)
    codes = np.empty((n_units, d), dtype=code_type, order="F")  # column j: codes[:, j]
    for j in range(d):
        codes[:, j] = qi_cols[j] if first_row is None else qi_cols[j][first_row]
        codes[:, j] += code_type.type(offsets[j])
    wf = None if q_weight is None else q_weight.astype(np.float64)
    by_column = n_units * d > COLUMN_KEYS
    dim_type: Any = np.int8 if d < 127 else np.int32
    alive = np.ones(d, dtype=bool)  # QIs with more than one value in some active group
    wf_cols, wf_cols_n = None, 0  # the weights repeated for the live QIs, how many
    key_buffer = np.empty(n_units, dtype=np.int64) if by_column else None
    sa_type = np.min_scalar_type(n_sa - 1)
    qof = sa_u = ws = None  # SA units: QI unit, SA code, rows
    s_count = s_start = np.zeros(0, dtype=np.int64)  # SA units per QI unit, first one
    if need_pairs:
        if row_unit is None:
            sa_u = table.sa.astype(sa_type)
        else:
            pair = level_histogram(  # (QI unit, SA) cells
                row_unit, table.sa, n_units, n_sa, row_weight
            )
            if pair.key.size == n_units:  # one SA value per QI unit
                sa_u = table.sa[first_row].astype(sa_type)
            else:
                qof = pair.key // n_sa
                sa_u = (pair.key - qof * n_sa).astype(sa_type)
                ws = pair.count.astype(np.float64)
                s_count = np.bincount(qof, minlength=n_units)
                s_start = exclusive_cumsum(s_count)

    uid = np.arange(n_units, dtype=np.int64)  # the active units
    gid = np.zeros(n_units, dtype=np.int64)  # their group at this level
    sizes = np.array([n if row_weight is None else row_weight.sum()], dtype=np.int64)  # rows
    if start is not None:
        start = np.asarray(start, dtype=np.int64)
        gid = start.copy() if first_row is None else start[first_row]
        sizes = np.bincount(start, weights=row_weight).astype(np.int64)
        if start.size != n or not sizes.all():
            raise ParameterError("mondrian: start needs a group id per row, every id 0..m-1 used")
    out = np.full(n_units, -1, dtype=np.int64)
    next_id = 0
    left_u = np.zeros(n_units, dtype=bool)  # whether the unit goes left in its group's cut

    def mark_left(
        sub: np.ndarray, dim_of: np.ndarray, value: np.ndarray, ties: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Set ``left_u`` of the active units ``sub`` whose group ``g`` is cut on
        ``dim_of[g] >= 0`` at median ``value[g]`` (``ties[g]`` rows equal to it go left
        under relaxed cuts); returns the mask of ``sub`` in such groups and the left flags."""
        grp = gid[sub]
        dim = dim_of[grp]  # small ints
        on = dim >= 0
        flat = dim.astype(np.int64)
        np.maximum(flat, 0, out=flat)
        flat *= gid.size
        flat += sub
        c = codes.ravel(order="F")[flat]  # (codes is F-ordered: a view)
        del flat
        v = value.astype(code_type)[grp]
        if strict:
            left = c <= v if lower else c < v
        else:
            left = c < v
            tie = np.flatnonzero(on & (c == v))
            if tie.size:
                left[tie] = tie_ranks(grp[tie]) < ties[grp[tie]]
        left_u[sub] = left
        return on, left

    while sizes.size:
        n_groups = sizes.size
        every = np.arange(n_groups)

        # 1. histograms, 2. candidate cuts: SA statistics of the groups from the SA pairs
        bounded = pairs_hist = pair_first = pair_count = pair_w = pair_sa = None
        gid_s = gid if qof is None else np.repeat(gid, s_count)  # the group of every SA unit
        if need_pairs:
            assert sa_u is not None
            w_s = wf if qof is None else ws
            pairs_hist = level_histogram(
                gid_s, sa_u, n_groups, n_sa, w_s, unit_cells=halves_sa, buffer=key_buffer
            )
            pair_first = np.searchsorted(pairs_hist.key, every * n_sa)
            pair_count = np.diff(np.append(pair_first, pairs_hist.key.size))
            pair_sa = pairs_hist.key % n_sa
            if sens_mask is not None:
                pair_w = sens_mask[pair_sa]
            bounded = reduce_bounded(pairs_hist.count, pair_w, reducer, pair_first)

        # candidate cuts: normalized range, median and |L| of every group on every dimension
        # (a QI with one value in every group keeps one value in their subgroups: skipped)
        live = [j for j in range(d) if alive[j]]
        spread = np.zeros((n_groups, d), dtype=np.int64)
        med_code = np.zeros((n_groups, d), dtype=np.int64)
        below = np.zeros((n_groups, d), dtype=np.int64)
        n_left = np.repeat(sizes[:, None], d, axis=1)  # |L| = |G|: no cut
        if not by_column and live:
            if len(live) != wf_cols_n and wf is not None:
                wf_cols, wf_cols_n = np.tile(wf, len(live)), len(live)
            hist = level_histogram(gid, codes, n_groups, width, wf_cols, columns=live)
            part = [
                median_cuts(
                    hist, sizes, [domains[j] for j in live], lower, strict, offsets=offsets[live]
                )
            ]
        else:  # large inputs: one column at a time
            part = [
                median_cuts(
                    level_histogram(
                        gid,
                        codes[:, j],
                        n_groups,
                        domains[j],
                        wf,
                        first_cell=int(offsets[j]),
                        buffer=key_buffer,
                    ),
                    sizes,
                    domains[j : j + 1],
                    lower,
                    strict,
                )
                for j in live
            ]
        if live:
            spread[:, live] = np.hstack([c.spread for c in part])
            med_code[:, live] = np.hstack([c.value for c in part])
            below[:, live] = np.hstack([c.below for c in part])
            n_left[:, live] = np.hstack([c.left for c in part])
        alive &= (spread > 0).any(axis=0)
        norm, value, ties, cand = level_candidates(
            spread, med_code, below, n_left, sizes, widths, offsets, live
        )  # (value in cell space, as ``codes``)

        # allowed cuts
        if sa_log is not None and rule.reads_group_sa:
            has_cand = np.asarray(cand.any(axis=1))
            pos = np.flatnonzero(has_cand[gid])
            units.record(uid[pos], gid[pos], "S_max of the group being cut")
        if not halves_sa:
            allowed = allowed_by_counts(rule, cand, sizes, n_left, bounded)
        else:
            allowed = np.zeros((n_groups, d), dtype=bool)
            # try each group's dimensions in its order, reading halves only when needed
            assert pairs_hist is not None and pairs_hist.unit_cell is not None
            assert bounded is not None and pair_first is not None and pair_count is not None
            assert pair_sa is not None
            order = np.argsort(-np.where(cand, norm, -1.0), axis=1, kind="stable")
            n_cand = cand.sum(axis=1)
            undecided = n_cand > 0
            slot = np.full(n_groups, -1, dtype=np.int64)
            dim_of = np.empty(n_groups, dtype=dim_type)
            sub = np.arange(gid.size) if undecided.all() else np.flatnonzero(undecided[gid])
            for r in range(d):
                todo = np.flatnonzero(undecided & (n_cand > r))
                if not todo.size:
                    break
                dims = order[todo, r]
                # the left rows of every candidate of this round: one gather of their codes
                dim_of.fill(-1)
                dim_of[todo] = dims
                if r:  # only the units of groups with a candidate in this round
                    sub = sub[dim_of[gid[sub]] >= 0]
                on, left = mark_left(sub, dim_of, value[every, dim_of], ties[every, dim_of])
                lpos = sub[on & left]
                if qof is not None:  # the SA units of the left QI units: their segments
                    lpos = segment_ranges(s_start[lpos], s_count[lpos])
                w_left = wf if qof is None else ws
                cnt_all = np.bincount(
                    pairs_hist.unit_cell[lpos],
                    weights=None if w_left is None else w_left[lpos],
                    minlength=pairs_hist.key.size,
                )
                # the round's candidates (one per group in todo) evaluated at once
                pairs = PairCells(pairs_hist, pair_first, pair_count, pair_sa, pair_w)
                stats = halves_stats(
                    rule, pairs, todo, sizes[todo], n_left[todo, dims], bounded[todo], cnt_all,
                    reducer, n_sa,
                )  # fmt: skip
                if sa_log is not None:  # one record per dimension, candidates numbered in it
                    for j in range(d):
                        g = todo[dims == j]
                        if g.size:
                            pos = sub[dim_of[gid[sub]] == j]
                            slot[g] = np.arange(g.size)
                            half = 2 * slot[gid[pos]] + ~left_u[pos]
                            slot[g] = -1
                            units.record(uid[pos], half, "S_max of the candidate halves")
                ok = np.asarray(rule.allowed(stats), dtype=bool)
                allowed[todo[ok], dims[ok]] = True
                undecided[todo[ok]] = False
            # a group's last evaluated candidate is its allowed one: left_u holds its halves

        # first allowed dimension in order of decreasing normalized range (ties: lower index)
        best = np.argmax(np.where(allowed, norm, -1.0), axis=1)
        split = allowed[every, best]
        nl_best = n_left[every, best]
        if not halves_sa:
            sub = np.arange(gid.size) if split.all() else np.flatnonzero(split[gid])
            best_of = np.where(split, best, -1).astype(dim_type)
            mark_left(sub, best_of, value[every, best], ties[every, best])

        # 3. map: finished groups leave with their final ids
        if not split.all():
            done = ~split
            fin_id = np.cumsum(done) - 1 + next_id
            gone = done[gid]
            out[uid[gone]] = fin_id[gid[gone]]
            next_id += int(done.sum())
            if not split.any():
                break
            keep = np.flatnonzero(~gone)
            if qof is not None:  # the SA units follow their QI units
                keep_s = np.flatnonzero(~gone[qof])
                new_index = np.cumsum(~gone) - 1
                qof = new_index[qof[keep_s]]
                s_count = s_count[keep]
                s_start = exclusive_cumsum(s_count)
                assert sa_u is not None
                sa_u = sa_u[keep_s]
                if ws is not None:
                    ws = ws[keep_s]
            elif sa_u is not None:
                sa_u = sa_u[keep]
            uid, gid, left_u = uid[keep], gid[keep], left_u[keep]
            kept = np.empty((keep.size, d), dtype=code_type, order="F")
            for j in range(d):
                np.take(codes[:, j], keep, out=kept[:, j])
            codes = kept
            if wf is not None:
                wf = wf[keep]
                wf_cols_n = 0  # (repeated again at the next histogram)
        rank = np.cumsum(split) - 1  # the r-th split group's halves are 2r and 2r + 1
        gid = 2 * rank[gid]
        gid += ~left_u
        new_sizes = np.empty(2 * int(split.sum()), dtype=np.int64)
        new_sizes[0::2] = nl_best[split]
        new_sizes[1::2] = sizes[split] - nl_best[split]
        sizes = new_sizes

    assert (out >= 0).all()
    # ids in order of first appearance in the rows (units are numbered that way)
    first_unit = np.full(next_id, n_units, dtype=np.int64)
    np.minimum.at(first_unit, out, np.arange(n_units, dtype=np.int64))
    relabel = np.empty(next_id, dtype=np.int32)
    relabel[np.argsort(first_unit)] = np.arange(next_id, dtype=np.int32)
    return relabel[out] if row_unit is None else relabel[out][row_unit]


def reduce_bounded(
    counts: np.ndarray, weight: np.ndarray | None, reducer: np.ufunc, first: np.ndarray
) -> np.ndarray:
    """Per-group bounded count from per-pair counts (pairs sorted by group)."""
    if weight is not None:
        counts = counts * weight
    return reducer.reduceat(counts, first)


# -- the registered algorithm --------------------------------------------------------------------
def rule_from_models(
    table: Table, models: list[PrivacyModel], name: str, whole: GroupHistogram | None = None
) -> tuple[CutRule, dict[str, Any]]:
    """The cut rule of ``models`` and the parameters a release records, after checking that
    the whole table can satisfy them. ``whole``: the table's one-group SA histogram, when the
    rows are elsewhere (a Dask table passes the summed histogram and a table without rows for
    the encodings)."""
    refuse_others(models, (KAnonymity, LDiversity, EntropyLDiversity, TCloseness), name)
    k_model = pick(models, KAnonymity, name)
    l_model = pick(models, LDiversity, name)
    e_model = pick(models, EntropyLDiversity, name)
    t_model = pick(models, TCloseness, name)
    if k_model is None and l_model is None and e_model is None and t_model is None:
        raise ParameterError(
            f"{name} needs a k-anonymity (k=K), l-diversity (l=L), entropy l-diversity "
            "(entropy-l=L) or t-closeness (t=T) model"
        )
    hist = (
        whole
        if whole is not None
        else GroupHistogram.from_codes(
            np.zeros(table.n, dtype=np.int64),
            table.sa,
            1,
            table.n_sa,
            table.sensitive,
            table.schema.sensitive_mode,
            table.sa_column.kind,
        )
    )
    n = hist.n
    rules: list[CutRule] = []
    params: dict[str, Any] = {}
    if k_model is not None:
        k_model.validate(hist, table.sa_name)
        rules.append(KAnonymityCut(k_model.k))
        params["k"] = k_model.k
    if l_model is not None:
        l_model.validate(hist, table.sa_name)
        c = int(hist.sensitive_count[0])
        if n + EPS < l_model.l * c:
            what = "S_max" if hist.all_sensitive else "its sensitive count"
            raise ParameterError(
                f"{name}: the table is not l-eligible for l={format_number(l_model.l)}: "
                f"{n} rows < l * {what} ({c}) = {format_number(l_model.l * c)}"
            )
        rules.append(LDiversityCut(l_model.l))
        params["l"] = l_model.l
    if e_model is not None:
        e_model.validate(hist, table.sa_name)
        on_table = e_model.evaluate(hist)
        if not on_table.satisfied:
            raise ParameterError(
                f"{name}: the whole table is not entropy {format_number(e_model.l)}-diverse "
                f"(its entropy allows l = {format_number(on_table.achieved)})"
            )
        rules.append(EntropyLDiversityCut(e_model.l))
        params["entropy_l"] = e_model.l
    if t_model is not None:
        rules.append(TClosenessCut(t_model.t, hist.totals, table.sa_column.kind == Kind.NUMERIC))
        params["t"] = t_model.t
    return (rules[0] if len(rules) == 1 else AllCuts(rules)), params


@register(
    "mondrian",
    summary="Mondrian multidimensional median partitioning (LeFevre et al. 2006)",
    models=("KAnonymity", "LDiversity", "EntropyLDiversity", "TCloseness"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
        "categorical_cuts": "median (default) | hierarchy: cut a categorical QI at its median "
        "code, or into the children of its common hierarchy node (cells never overlap)",
    },
)
def mondrian(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    categorical_cuts: str = "median",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian for k-anonymity, frequency l-diversity (spec ``asap.md`` 2.1, 2.3), entropy
    l-diversity and t-closeness (paper 004's constrained Mondrian, spec ``composition.md`` 3.4).

    Reads ``k`` from :class:`~kerckhoffs.models.KAnonymity`, ``l`` from
    :class:`~kerckhoffs.models.LDiversity`, entropy ``l`` from
    :class:`~kerckhoffs.models.EntropyLDiversity` and ``t`` from
    :class:`~kerckhoffs.models.TCloseness`; a cut is allowed only when both halves satisfy
    every model given (the last two read the halves' full SA histograms). Raises
    :class:`~kerckhoffs.errors.ParameterError` for other models, ``k`` above the table size, or
    a table that is not l-eligible (``|T| < l * c(T)``). Deterministic: ``seed`` is
    not used. Returns a generalization release whose every group satisfies the models.

    ``sa_log`` records the SA statistics read (information-flow audit, spec 1.10 item 2):
    under l-diversity, ``S_max`` of the whole table and of every candidate half; a rejected
    cut's halves are never published, so the audit fails wherever a cut was rejected on them.

    ``categorical_cuts``: ``"median"`` (default) cuts a categorical QI at the median of its
    hierarchy-ordered codes, so two groups may publish the same or nested cells;
    ``"hierarchy"`` splits it into the children of the group's common hierarchy node
    (LeFevre's categorical split; published cells never overlap, so every person's cells
    locate their group: :mod:`kerckhoffs.algorithms.mondrian_hierarchy`).
    """
    from kerckhoffs.algorithms.mondrian_hierarchy import CATEGORICAL_CUTS, hierarchy_cut_groups

    if categorical_cuts not in CATEGORICAL_CUTS:
        raise ParameterError(
            f"mondrian: categorical_cuts must be one of {', '.join(CATEGORICAL_CUTS)}, "
            f"got {categorical_cuts!r}"
        )
    rule, params = rule_from_models(table, models, "mondrian")
    if sa_log is not None and "l" in params:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    if categorical_cuts == "hierarchy":
        group = hierarchy_cut_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    else:
        group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    params.update(median=median, cuts=cuts)
    if categorical_cuts != "median":  # recorded only when not the default (older releases)
        params["categorical_cuts"] = categorical_cuts
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian", params),
    )


# -- Mondrian+ and Mondrian++ (paper 000 sections 6-7: the algorithm-safe variants) -------------
def plus_rule_from_models(
    table: Table, models: list[PrivacyModel], name: str, whole: GroupHistogram | None = None
) -> tuple[CutRule, dict[str, Any]]:
    """:func:`rule_from_models` (same checks) with the l-diversity cut replaced by the
    look-ahead; an l-diversity model is required."""
    refuse_others(models, (KAnonymity, LDiversity), name)
    if not any(isinstance(m, LDiversity) for m in models):
        raise ParameterError(f"{name} needs an l-diversity model (l=L)")
    rule, params = rule_from_models(table, models, name, whole)
    rules = rule.rules if isinstance(rule, AllCuts) else (rule,)
    swapped = [LookAheadCut(r.l) if isinstance(r, LDiversityCut) else r for r in rules]
    return (swapped[0] if len(swapped) == 1 else AllCuts(swapped)), params


@register(
    "mondrian+",
    family="mondrian",
    base="mondrian",
    summary="Mondrian+ (global look-ahead, algorithm-safe): cut G only when both halves "
    "have >= l * S_max(G) rows (paper 000, Alg. 1)",
    models=("LDiversity", "KAnonymity"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian+ (paper 000 Algorithm 1, Theorem 6.1; spec ``asap.md`` 2.2, interpretation A).

    Mondrian with ONE different cut rule, :class:`LookAheadCut`: a cut of ``G`` is allowed
    only when both halves have at least ``l * S_max(G)`` rows (``c(G)`` under a sensitive
    subset), instead of original Mondrian's "both halves are l-diverse". The only SA statistic
    read is ``S_max`` of the groups being cut (and of the table, for l-eligibility), each a
    union of published groups, so the release is algorithm-safe (Theorem 5.3) and ``sa_log``
    (information-flow audit) finds no violation. The printed Algorithm 1 is not executable
    (``G1, G2`` used before defined, ``InputSet`` never updated: spec ``asap.md`` section 8,
    A4); this is its canonical recursion (spec 2.2), whose output
    does not depend on the order groups are processed in.

    Requires :class:`~kerckhoffs.models.LDiversity`; a :class:`~kerckhoffs.models.KAnonymity`
    given on top also bounds every half by ``k``. Same checks and refusals as :func:`mondrian`
    (one-line :class:`~kerckhoffs.errors.ParameterError`, e.g. a table that is not
    l-eligible, spec 3.6 X8). Deterministic: ``seed`` is not used. Groups are
    coarser than Mondrian's (lower utility, paper 000 Figure 10i); Mondrian++ refines them.
    """
    rule, params = plus_rule_from_models(table, models, "mondrian+")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    params.update(median=median, cuts=cuts)
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian+", params),
    )


@register(
    "mondrian++",
    family="mondrian",
    base="mondrian+",
    summary="Mondrian++: Mondrian+ then stratified pick-up (Anatomy inside each group of "
    ">= 2l rows, random choice), algorithm-safe (paper 000, Alg. 5/6)",
    models=("LDiversity", "KAnonymity"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "scheme": "generalization (default, Alg. 5) | bucketization (Alg. 6)",
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: str | Scheme = Scheme.GENERALIZATION,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian++ (paper 000 Algorithms 5 and 6; spec ``asap.md`` 2.9): :func:`mondrian_plus`,
    then stratified pick-up (:func:`kerckhoffs.algorithms.pickup.pickup`, seeded by ``seed``)
    inside every group of at least ``2 l`` rows.

    The pick-up groups hold pairwise distinct SA values and ``l' .. 2 l' - 1`` rows, with
    ``l' = max(ceil(l), k)`` (``k`` from a :class:`~kerckhoffs.models.KAnonymity` given on top,
    else 0), so they satisfy both models; the paper has no ``k`` and ``l' = l``. Pick-up reads
    only each Mondrian+ group's SA multiset, which stays published (the group is the union of
    its pick-up groups), so the release stays algorithm-safe (Theorem 7.2). Published by
    generalization (``scheme="generalization"``, each pick-up group with its own generalized
    QI) or bucketization (``scheme="bucketization"``, exact QIs + group ids and per-group SA
    counts). ``seed``: an int (tests, experiments), a :class:`numpy.random.Generator`, or None
    (default) for fresh randomness from the operating system (:mod:`kerckhoffs.randomness`).
    """
    scheme = parse_scheme(scheme, "mondrian++")
    rule, params = plus_rule_from_models(table, models, "mondrian++")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    l_pick = max(math.ceil(float(params["l"]) - EPS), int(params.get("k", 0)), 1)
    rng = generator(seed)
    part = pickup(table, group, l_pick, rng, sa_log=sa_log)
    params.update(median=median, cuts=cuts, scheme=scheme.value, pickup_l=l_pick)
    return Release(table, part, scheme, table.sa, Provenance("mondrian++", params))


__all__ = [
    "AllCuts",
    "CutRule",
    "CutStats",
    "FunctionCut",
    "KAnonymityCut",
    "LDiversityCut",
    "LevelHistogram",
    "LookAheadCut",
    "MedianCuts",
    "as_rule",
    "level_histogram",
    "median_cuts",
    "mondrian",
    "mondrian_groups",
    "mondrian_plus",
    "mondrian_plus_plus",
]
