"""Mondrian's counting step: one level of the recursion decided from histograms.

Per level, one ``bincount`` over ``(group, QI, code)`` cells gives every group's code
histogram on every quasi-identifier (code domains side by side, :func:`level_histogram`), from
which the normalized ranges, the medians and ``|L|`` follow (:func:`median_cuts`,
:func:`level_candidates`); the SA statistics are one ``bincount`` over (group, SA) cells
(:class:`PairCells`), and the halves' SA counts one more over the cells of the left rows of the
candidates being decided (:func:`halves_stats`). Each step is a pure function of arrays, so a
level computed on chunks of a table sums: the in-memory partitioner
(:mod:`kerckhoffs.algorithms.mondrian.partition`) and the Dask engine
(:mod:`kerckhoffs.engines.dask_mondrian`) share every function here. The bounded count ``c(G)``
is :class:`kerckhoffs.models.histogram.BoundedCount`, the checker's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian.cuts import CutRule, CutStats
from kerckhoffs.models.histogram import BoundedCount
from kerckhoffs.segments import exclusive_cumsum, segment_ranges

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
    """The (group, cell) histogram of one level (Mondrian's counting step).

    See ``docs/theory/choices.md#performance``.

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
    cols: Sequence[int] = columns if columns is not None else ()
    d = 1 if cells.ndim == 1 else len(cols)
    if buffer is not None and d == 1 and buffer.size >= n:
        key = np.multiply(group, width, out=buffer[:n])
    else:
        key = group * width
    if first_cell:
        key -= first_cell
    if cells.ndim == 1:
        key += cells
    else:
        base = key
        key = np.empty((d, n), dtype=np.int64)
        for i, j in enumerate(cols):
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
    strict cuts ``L`` is ``{code <= v}`` (lower median, or a column cut by its values) or
    ``{code < v}`` (upper); under relaxed cuts it is ``{code < v}`` plus the first
    ``left - below`` rows with code ``v``. ``n_values``: the distinct codes in the group.
    """

    spread: np.ndarray
    value: np.ndarray
    below: np.ndarray
    left: np.ndarray
    n_values: np.ndarray | None = None


def median_cuts(
    hist: LevelHistogram,
    sizes: np.ndarray,
    domains: Sequence[int],
    lower: bool,
    strict: bool,
    *,
    offsets: np.ndarray | None = None,
    by_values: np.ndarray | None = None,
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

    ``by_values`` (bool per column, strict cuts): those columns are cut by their distinct
    values instead of their rows: ``v`` is the ``max(floor(m / 2), 1)``-th of the group's ``m``
    distinct codes and ``L = {code <= v}`` (anonypyx's and Ghinita et al.'s categorical
    split, here along the hierarchy order of the codes).
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
    n_values = last - first + 1
    if by_values is not None:
        values_col = np.tile(np.asarray(by_values, dtype=bool), n_groups)
        at[values_col] = (first + np.maximum(n_values // 2, 1) - 1)[values_col]
    upto = cum[at] - before
    below = upto - hist.count[at]
    cut = spread > 0
    left = m.copy()  # |L| = |G|: not a cut
    if strict:
        left_strict = upto if lower else below
        if by_values is not None and not lower:
            left_strict = np.where(values_col, upto, below)
        left[cut] = left_strict[cut]
    else:
        half = (m + 1) // 2 if lower else m // 2
        left[cut] = half[cut]
    shape = (n_groups, d)
    return MedianCuts(
        spread.reshape(shape),
        (hist.key[at] - seg_start).reshape(shape),
        below.reshape(shape),
        left.reshape(shape),
        n_values.reshape(shape),
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


@dataclass(frozen=True, eq=False)
class PairCells:
    """A level's (group, SA) cells: the summed histogram, each group's first cell and cell
    count, and each cell's SA code."""

    hist: LevelHistogram
    first: np.ndarray
    count: np.ndarray
    sa: np.ndarray


def halves_stats(
    rule: CutRule,
    pairs: PairCells,
    todo: np.ndarray,
    size: np.ndarray,
    left: np.ndarray,
    bounded: np.ndarray,
    left_counts: np.ndarray,
    bounded_count: BoundedCount,
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
    sa_at = pairs.sa[at]
    h_left = h_right = None
    if rule.reads_halves_hist:  # full histograms of the halves
        cand_of_pair = np.repeat(np.arange(todo.size), pc)
        h_left = np.zeros((todo.size, n_sa), dtype=np.int64)
        h_left[cand_of_pair, sa_at] = cnt
        h_right = np.zeros_like(h_left)
        h_right[cand_of_pair, sa_at] = rest
    return CutStats(
        size,
        left,
        bounded,
        bounded_count.of_cells(cnt, sa_at, local_first),
        bounded_count.of_cells(rest, sa_at, local_first),
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


@dataclass(frozen=True, eq=False)
class OtherMedians:
    """``categorical_cuts="values"``: per (group, QI) of one level (arrays ``[n_groups, d]``),
    the other median of the rows (the one not named by ``median``: its code and ``|L|``) and
    the group's distinct codes (1 on a QI with one value in every group), as
    :func:`median_cuts` gives them."""

    code: np.ndarray
    left: np.ndarray
    n_values: np.ndarray


def cut_candidates(
    live: Sequence[int],
    first: MedianCuts,
    other: OtherMedians | None,
    sizes: np.ndarray,
    widths: np.ndarray,
    offsets: np.ndarray,
    categorical: np.ndarray,
    lower: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A level's candidate cuts and rows sent left: :func:`values_candidates` when the values
    cut's other medians were computed, else :func:`level_candidates` (one engine's step, in
    memory or on Dask)."""
    if other is not None:
        return values_candidates(live, first, other, sizes, widths, offsets, categorical, lower)
    norm, value, ties, cand = level_candidates(
        first.spread, first.value, first.below, first.left, sizes, widths, offsets, live
    )  # (value in cell space, as ``codes``)
    return norm, value, ties, cand, first.left


def values_candidates(
    live: Sequence[int],
    first: MedianCuts,
    other: OtherMedians,
    sizes: np.ndarray,
    widths: np.ndarray,
    offsets: np.ndarray,
    categorical: np.ndarray,
    lower: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidate cuts of ``categorical_cuts="values"``
    (:func:`~kerckhoffs.algorithms.mondrian.partition.mondrian_groups`): two per QI,
    interleaved (column ``2j`` the QI's first cut, ``first``, a categorical QI's by its
    distinct values; column ``2j + 1`` the other median of its rows, when it differs), every
    cut as ``L = {cell <= value}`` (an upper median ``{code < v}`` is ``{code <= v - 1}``:
    codes are integers). The normalized range of a categorical QI counts its distinct values
    (anonypyx's and Ghinita et al.'s ranking). Returns normalized range, cut cell, ties (all
    0: strict cuts), whether each is a cut, and ``|L|``; the in-memory and the Dask engine
    share it, so both cut alike."""
    ranged = np.where(categorical, other.n_values, first.spread)
    norm, value, _ties, cand = level_candidates(
        ranged, first.value, first.below, first.left, sizes, widths, offsets, live
    )
    cand &= first.spread > 0
    alt_value = other.code + offsets
    if lower:  # the other median is the upper one: {code < v}
        alt_value -= 1
    else:  # the first cut of a numeric QI is the upper median
        value = np.where(categorical, value, value - 1)
    alt_cand = (other.left > 0) & (other.left < sizes[:, None])
    alt_cand &= other.left != first.left
    g, d = norm.shape

    def interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty((g, 2 * d), dtype=a.dtype)
        out[:, 0::2], out[:, 1::2] = a, b
        return out

    return (
        interleave(norm, norm),
        interleave(value, alt_value),
        np.zeros((g, 2 * d), dtype=np.int64),
        interleave(cand, alt_cand),
        interleave(first.left, other.left),
    )


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
