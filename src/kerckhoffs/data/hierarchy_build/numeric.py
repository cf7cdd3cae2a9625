"""Interval hierarchies of numbers: fixed widths (ARX's interval-based builder) and quantiles."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np

from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.hierarchy_build.values import (
    build,
    check_choice,
    nested_sizes,
    numbers,
)
from kerckhoffs.errors import HierarchyError

INTERVAL_LABELS = ("arx", "inclusive")
"""``arx``: ``[20, 25[``; ``inclusive``: ``[20-24]`` (whole numbers)."""


def _interval_label(lo: float, hi: float, label: str, closed: bool = False) -> str:
    """``[lo, hi[`` (ARX's interval, ``[lo, hi]`` when ``closed``) or ``[lo-(hi-1)]`` (whole
    numbers, both ends included: the form of the library's own interval hierarchies)."""
    if label == "inclusive":
        return f"[{format_value(lo)}-{format_value(hi if closed else hi - 1)}]"
    return f"[{format_value(lo)}, {format_value(hi)}{']' if closed else '['}"


def intervals(
    values: Iterable[object],
    widths: Sequence[int] = (5, 10, 20),
    *,
    start: float | None = None,
    label: str = "arx",
    name: str = "intervals",
) -> Hierarchy:
    """Numbers into nested intervals of the given widths, then ``*`` (ARX's interval-based
    builder with one interval width per level).

    Level ``j`` cuts the axis into intervals of ``widths[j]`` starting at ``start`` (default
    0, so bins sit at multiples of the width); each width must be a multiple of the one
    before, so the next level merges whole intervals. Labels: ``label="arx"`` gives ARX's
    ``[20, 25[`` (lower end in, upper end out); ``"inclusive"`` gives ``[20-24]`` for whole
    numbers (the form ``widths`` in a schema builds). Leaves are the distinct values, sorted.

    >>> intervals([17, 23, 38], widths=[5, 10]).rows()[0]
    ['17', '[15, 20[', '[10, 20[', '*']
    >>> intervals([17], widths=[5, 10], label="inclusive").rows()[0]
    ['17', '[15-19]', '[10-19]', '*']
    """
    check_choice(label, INTERVAL_LABELS, "label", name)
    ws = nested_sizes(widths, "width", name)
    arr = np.unique(numbers(values, name))
    origin = 0.0 if start is None else float(start)
    if not math.isfinite(origin):
        raise HierarchyError(f"{name}: start must be a finite number, got {start!r}")
    if label == "inclusive" and not (np.all(arr == np.floor(arr)) and origin.is_integer()):
        raise HierarchyError(
            f"{name}: label 'inclusive' needs whole numbers (and a whole start); use 'arx'"
        )
    columns = [np.array([format_value(v) for v in arr], dtype=object)]
    for w in ws:
        lows, inverse = np.unique(origin + np.floor((arr - origin) / w) * w, return_inverse=True)
        labels = np.array([_interval_label(lo, lo + w, label) for lo in lows], dtype=object)
        columns.append(labels[inverse])
    return build(columns, name)


def _snap(edges: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each target, the nearest of ``edges`` (sorted); the distinct ones found."""
    right = np.clip(np.searchsorted(edges, targets), 0, len(edges) - 1)
    left = np.clip(right - 1, 0, len(edges) - 1)
    pick = np.where(np.abs(edges[left] - targets) <= np.abs(edges[right] - targets), left, right)
    return np.unique(edges[pick])


def quantile_intervals(
    values: Iterable[object],
    levels: Sequence[int] = (10, 4, 2),
    *,
    label: str = "arx",
    name: str = "quantile intervals",
) -> Hierarchy:
    """Numbers into intervals holding about equal shares of the values, ``levels[j]`` bins at
    level ``j`` (decreasing), then ``*``.

    The finest level's edges are the quantiles ``i / levels[0]`` of ``values`` (repeats
    count: give the column, not its distinct values; whole numbers get whole edges); each
    coarser level keeps, for each of its quantiles, the nearest edge of the level below, so
    the levels nest. Tied values may leave fewer bins than asked. Labels as in
    :func:`intervals`; the last bin includes the largest value.

    **The bins read the data**: a hierarchy built from the private table is a function of it
    (its edges show where that table's quantiles lie). Build it from public data or an earlier
    release when that matters; which values are public is the user's choice.

    >>> [r[1] for r in quantile_intervals([1, 2, 3, 4], levels=[2]).rows()]
    ['[1, 3[', '[1, 3[', '[3, 5[', '[3, 5[']
    """
    check_choice(label, INTERVAL_LABELS, "label", name)
    try:
        counts = [int(n) for n in levels]
    except (TypeError, ValueError):
        raise HierarchyError(f"{name}: levels must be integers, got {list(levels)!r}") from None
    if (
        not counts
        or any(n < 1 for n in counts)
        or any(b >= a for a, b in itertools.pairwise(counts))
    ):
        raise HierarchyError(
            f"{name}: levels must be positive bin counts, decreasing (e.g. 10, 4, 2), got {counts}"
        )
    data = numbers(values, name)
    whole = bool(np.all(data == np.floor(data)))
    if label == "inclusive" and not whole:
        raise HierarchyError(f"{name}: label 'inclusive' needs whole numbers; use 'arx'")
    lo, hi = float(data.min()), float(data.max())

    def inner(n: int) -> np.ndarray:
        q = np.quantile(data, np.linspace(0.0, 1.0, n + 1)[1:-1])
        q = np.ceil(q) if whole else q
        return np.unique(q[(q > lo) & (q <= hi)])

    arr = np.unique(data)
    top = hi + 1 if whole else hi  # whole numbers: every bin half-open; else the last closed
    columns = [np.array([format_value(v) for v in arr], dtype=object)]
    edges = inner(counts[0])
    for j, n in enumerate(counts):
        if j > 0 and len(edges):
            edges = _snap(edges, inner(n))
        bounds = np.r_[lo, edges, top]
        names = [
            _interval_label(a, b, label, closed=not whole and i == len(bounds) - 2)
            for i, (a, b) in enumerate(itertools.pairwise(bounds))
        ]
        columns.append(np.array(names, dtype=object)[np.searchsorted(edges, arr, side="right")])
    return build(columns, name)
