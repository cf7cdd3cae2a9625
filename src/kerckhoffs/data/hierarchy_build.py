"""Hierarchy builders: generalization hierarchies generated from values, written as ARX CSV.

Each builder is a pure function from the values of a column (or its distinct values) and a few
parameters to a :class:`~kerckhoffs.data.hierarchy.Hierarchy` the rest of the library accepts
unchanged; :func:`write_csv` writes it in the ARX format (``leaf;level1;...;*``) and reads the
written file back before it takes its place. They follow the builders of ARX (Prasser and
Kohlmayer, "Putting statistical disclosure control into practice: the ARX data anonymization
tool", 2015; ``HierarchyBuilderIntervalBased``, ``HierarchyBuilderRedactionBased``,
``HierarchyBuilderGroupingBased`` and ``HierarchyBuilderDate``), with one difference everywhere:
the top level is the single root ``*``, which the library's hierarchies require.

**Which builders read the data.** A hierarchy is public (an adversary who knows the algorithm
knows it). :func:`intervals`, :func:`masking`, :func:`grouping`, :func:`grouping_by` and
:func:`dates` place a value by the value alone (and the parameters): the data only decide which
leaves are listed. :func:`quantile_intervals` puts its bin edges at quantiles of the values it
is given, so a hierarchy built from the private table is itself a function of that table;
build it from public or earlier data when that matters (the choice is the user's).

Missing values (``None``, NaN, empty strings) are no leaves and are skipped.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from kerckhoffs.data.hierarchy import ROOT, Hierarchy, format_value
from kerckhoffs.data.io import atomic_file
from kerckhoffs.errors import HierarchyError, InternalError

BUILDERS: dict[str, str] = {
    "intervals": "Numbers into nested intervals of fixed widths (e.g. 5, 10, 20 years), then *.",
    "quantile_intervals": "Numbers into intervals holding about equal shares of the values "
    "(quantiles: the bins depend on the data given), then *.",
    "masking": "Codes masked one more character per level (02116, 0211*, 021**), then *.",
    "grouping": "Ordered categories into consecutive groups of growing sizes (2, 4), then *.",
    "grouping_by": "Explicit groups per level (Flu and Bronchitis under Respiratory), then *.",
    "dates": "ISO dates (2024-03-15) into month, quarter, year, decade or century, then *.",
}
"""One line per builder, for a user choosing one (the command line's and the app's help)."""

INTERVAL_LABELS = ("arx", "inclusive")
GROUP_LABELS = ("bounds", "set")
DATE_LEVELS = ("month", "quarter", "year", "decade", "century")


# -- values ------------------------------------------------------------------------------------
def _texts(values: Iterable[object]) -> list[str]:
    """The values as hierarchy labels (:func:`format_value`, stripped), missing ones dropped,
    in the given order with repeats."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float | np.floating) and math.isnan(v)):
            continue
        text = format_value(v).strip()
        if text:
            out.append(text)
    return out


def _distinct(values: Iterable[object], name: str) -> list[str]:
    """Distinct labels in order of first appearance; none at all is an error."""
    found = list(dict.fromkeys(_texts(values)))
    if not found:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    return found


def _numbers(values: Iterable[object], name: str) -> np.ndarray:
    """The values as finite floats (repeats kept); a value that is no number is an error."""
    texts = _texts(values)
    if not texts:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    try:
        arr = np.asarray(texts, dtype=float)
    except ValueError:
        bad = next(t for t in texts if not _is_number(t))
        raise HierarchyError(f"{name}: value {bad!r} is not a number") from None
    if not np.isfinite(arr).all():
        bad = texts[int(np.argmin(np.isfinite(arr)))]
        raise HierarchyError(f"{name}: value {bad!r} is not a finite number")
    return arr


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _nested_sizes(sizes: Sequence[int], what: str, name: str) -> list[int]:
    """Positive integers, each a multiple of the one before (so every group has one parent)."""
    try:
        out = [int(s) for s in sizes]
    except (TypeError, ValueError):
        raise HierarchyError(f"{name}: {what} must be integers, got {list(sizes)!r}") from None
    if any(s < 1 for s in out) or any(
        float(s) != float(t) for s, t in zip(out, sizes, strict=True)
    ):
        raise HierarchyError(f"{name}: {what} must be positive integers, got {list(sizes)!r}")
    for a, b in itertools.pairwise(out):
        if b <= a or b % a:
            raise HierarchyError(
                f"{name}: {what} {b} is not a larger multiple of {a} (each level must merge "
                "whole groups of the level below)"
            )
    return out


def _increasing(levels: Sequence[int], name: str) -> list[int]:
    """Positive integers, strictly increasing (characters masked per level)."""
    try:
        out = [int(k) for k in levels]
    except (TypeError, ValueError):
        raise HierarchyError(f"{name}: levels must be integers, got {list(levels)!r}") from None
    if any(k < 1 for k in out) or any(b <= a for a, b in itertools.pairwise(out)):
        raise HierarchyError(f"{name}: levels must be positive and increasing, got {out}")
    return out


def _check_choice(value: str, choices: Sequence[str], what: str, name: str) -> None:
    if value not in choices:
        raise HierarchyError(f"{name}: {what} {value!r} is not one of {', '.join(choices)}")


def _build(columns: list[np.ndarray], name: str) -> Hierarchy:
    """The hierarchy whose level ``j`` labels are ``columns[j]`` (one entry per leaf), with
    the root ``*`` on top; validated by :class:`Hierarchy` itself."""
    root = np.full(len(columns[0]), ROOT, dtype=object)
    rows = np.stack([*columns, root], axis=1)
    return Hierarchy(rows.tolist(), name=name)


# -- intervals ---------------------------------------------------------------------------------
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
    _check_choice(label, INTERVAL_LABELS, "label", name)
    ws = _nested_sizes(widths, "width", name)
    arr = np.unique(_numbers(values, name))
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
    return _build(columns, name)


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
    _check_choice(label, INTERVAL_LABELS, "label", name)
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
    data = _numbers(values, name)
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
    return _build(columns, name)


# -- masking -----------------------------------------------------------------------------------
def masking(
    codes: Iterable[object],
    *,
    levels: Sequence[int] | None = None,
    char: str = "*",
    align: str = "right",
    pad: str | None = None,
    sort: bool = True,
    name: str = "masking",
) -> Hierarchy:
    """Codes masked one more character per level, then ``*`` (ARX's redaction-based builder):
    ``02116`` -> ``0211*`` -> ``021**`` -> ... -> ``*``.

    ``align="right"`` masks from the right end, keeping prefixes (ZIP and ICD codes);
    ``"left"`` masks from the left end, keeping suffixes. ``levels`` are the numbers of
    characters masked at each level (increasing, each below the code length); by default
    1, 2, ..., length - 1. Codes of unequal length are refused unless ``pad`` gives a
    character to fill the shorter ones on the masked side (ARX pads the same way; the leaf
    keeps the code as given). Leaves are sorted unless ``sort=False`` (then in the order
    given).

    >>> masking(["02116", "02139"], levels=[1, 2]).rows()[1]
    ['02139', '0213*', '021**', '*']
    """
    _check_choice(align, ("right", "left"), "align", name)
    if len(char) != 1 or char.isspace():
        raise HierarchyError(f"{name}: char must be one visible character, got {char!r}")
    if pad is not None and (len(pad) != 1 or pad.isspace()):
        raise HierarchyError(f"{name}: pad must be one visible character, got {pad!r}")
    leaves = _distinct(codes, name)
    if sort:
        leaves.sort()
    lengths = np.array([len(c) for c in leaves])
    width = int(lengths.max())
    if pad is None and (lengths != width).any():
        short = leaves[int(np.argmin(lengths))]
        long_ = leaves[int(np.argmax(lengths))]
        raise HierarchyError(
            f"{name}: codes of unequal length ({short!r} has {len(short)} characters, "
            f"{long_!r} {len(long_)}); give pad (e.g. '0' or '*') to fill the shorter ones"
        )
    steps = list(range(1, width)) if levels is None else _increasing(levels, name)
    if steps and steps[-1] >= width:
        raise HierarchyError(
            f"{name}: masking {steps[-1]} characters of {width}-character codes leaves nothing "
            "(the root * follows the last level)"
        )
    fill = pad or char
    base = [c + fill * (width - len(c)) if align == "right" else fill * (width - len(c)) + c
            for c in leaves]  # fmt: skip
    columns = [np.array(leaves, dtype=object)]
    for k in steps:
        if align == "right":
            masked = [b[: width - k] + char * k for b in base]
        else:
            masked = [char * k + b[k:] for b in base]
        columns.append(np.array(masked, dtype=object))
    return _build(columns, name)


# -- grouping ----------------------------------------------------------------------------------
def _group_label(members: Sequence[str], label: str) -> str:
    """ARX's aggregate of a group: ``[first, last]`` (bounds) or ``{a, b, c}`` (set)."""
    if label == "set":
        return "{" + ", ".join(members) + "}"
    return f"[{members[0]}, {members[-1]}]"


def grouping(
    ordered_values: Iterable[object],
    sizes: Sequence[int] = (2, 4),
    *,
    label: str = "bounds",
    name: str = "grouping",
) -> Hierarchy:
    """Ordered categories into consecutive groups, then ``*`` (ARX's order-based builder).

    Level ``j`` puts ``sizes[j]`` consecutive values into one group (the last group of a level
    may hold fewer); each size must be a multiple of the one before, so a group of level
    ``j + 1`` is whole groups of level ``j``. No sizes: every value directly under ``*``.
    Labels: ``label="bounds"`` gives ``[first, last]``, ``"set"`` gives ``{a, b}`` (ARX's
    aggregate functions of those names). Leaves in the order given.

    >>> grouping(["Preschool", "1st-4th", "5th-6th"], sizes=[2]).rows()[2]
    ['5th-6th', '[5th-6th, 5th-6th]', '*']
    """
    _check_choice(label, GROUP_LABELS, "label", name)
    leaves = _distinct(ordered_values, name)
    columns = [np.array(leaves, dtype=object)]
    position = np.arange(len(leaves))
    for size in _nested_sizes(sizes, "size", name):
        group = position // size
        names = [
            _group_label(leaves[g * size : (g + 1) * size], label) for g in range(group[-1] + 1)
        ]
        columns.append(np.array(names, dtype=object)[group])
    return _build(columns, name)


def grouping_by(
    groups: Mapping[str, Mapping[str, Sequence[object]]] | Sequence[Mapping[str, Sequence[object]]],
    *,
    values: Iterable[object] | None = None,
    name: str = "grouping",
) -> Hierarchy:
    """A hierarchy from explicit groups per level, then ``*`` (ARX's hand-made hierarchies).

    ``groups`` lists the levels bottom up, each a mapping from a group's label to its members:
    level 1's members are the values, level ``j + 1``'s are level ``j``'s labels; every member
    must be in exactly one group of its level. Given as a list, or as a mapping of level names
    to levels (a TOML file's tables, in order). A last level holding the single group ``*`` is
    the root. ``values``, if given, must all be leaves. Leaves in the order listed.

    >>> grouping_by([{"Respiratory": ["Flu", "Bronchitis"], "Digestive": ["Gastritis"]}]).rows()[2]
    ['Gastritis', 'Digestive', '*']
    """
    levels = list(groups.values()) if isinstance(groups, Mapping) else list(groups)
    if levels and list(levels[-1]) == [ROOT]:
        levels = levels[:-1]
    if not levels or not all(isinstance(level, Mapping) and level for level in levels):
        raise HierarchyError(f"{name}: give at least one level of groups (label = [members])")
    parents: list[dict[str, str]] = []
    below: list[str] | None = None
    for j, level in enumerate(levels, start=1):
        parent: dict[str, str] = {}
        for group, members in level.items():
            if isinstance(members, str) or not isinstance(members, Sequence):
                raise HierarchyError(f"{name}: level {j} group {group!r}: members must be a list")
            for m in _texts(members):
                if m in parent:
                    raise HierarchyError(
                        f"{name}: level {j}: {m!r} is in two groups, {parent[m]!r} and {group!r}"
                    )
                parent[m] = str(group).strip()
        if below is not None:
            unknown = [m for m in parent if m not in set(below)]
            missing = [b for b in below if b not in parent]
            if unknown or missing:
                what = f"{unknown[0]!r} is no group of level {j - 1}" if unknown else (
                    f"group {missing[0]!r} of level {j - 1} is in no group")  # fmt: skip
                raise HierarchyError(f"{name}: level {j}: {what}")
        below = list(dict.fromkeys(parent.values()))
        parents.append(parent)
    leaves = list(parents[0])
    if values is not None:
        absent = [v for v in dict.fromkeys(_texts(values)) if v not in parents[0]]
        if absent:
            raise HierarchyError(
                f"{name}: value {absent[0]!r} is in no group of level 1"
                + (f" ({len(absent)} values are not)" if len(absent) > 1 else "")
            )
    columns = [np.array(leaves, dtype=object)]
    for parent in parents:
        columns.append(np.array([parent[c] for c in columns[-1]], dtype=object))
    return _build(columns, name)


# -- dates -------------------------------------------------------------------------------------
def dates(
    values: Iterable[object],
    levels: Sequence[str] = ("month", "year", "decade"),
    *,
    name: str = "dates",
) -> Hierarchy:
    """ISO dates (``2024-03-15``) into calendar units, then ``*`` (ARX's date builder).

    ``levels`` from the finest, each coarser than the one before: ``month`` (``2024-03``),
    ``quarter`` (``2024-Q1``), ``year`` (``2024``), ``decade`` (``[2020, 2030[``, ARX's
    label) and ``century`` (``[2000, 2100[``). Leaves are the distinct dates, in date order.

    >>> dates(["2024-03-15"], levels=["month", "quarter", "year"]).rows()[0]
    ['2024-03-15', '2024-03', '2024-Q1', '2024', '*']
    """
    order = [DATE_LEVELS.index(x) if x in DATE_LEVELS else -1 for x in levels]
    if not order or -1 in order or order != sorted(set(order)):
        raise HierarchyError(
            f"{name}: levels must be distinct and coarser each, from {', '.join(DATE_LEVELS)}; "
            f"got {list(levels)}"
        )
    texts = _distinct(values, name)
    try:
        days = np.array(texts, dtype="datetime64[D]")
    except ValueError:
        bad = next(t for t in texts if not _is_date(t))
        raise HierarchyError(f"{name}: value {bad!r} is not an ISO date (YYYY-MM-DD)") from None
    bad_form = [t for t in texts if len(t) != 10]
    if bad_form:
        raise HierarchyError(f"{name}: value {bad_form[0]!r} is not an ISO date (YYYY-MM-DD)")
    order_by = np.argsort(days, kind="stable")
    days = days[order_by]
    year = days.astype("datetime64[Y]").astype(np.int64) + 1970
    month = days.astype("datetime64[M]").astype(np.int64) % 12 + 1
    columns = [np.array(texts, dtype=object)[order_by]]
    for level in levels:
        if level == "month":
            names = [f"{y:04d}-{m:02d}" for y, m in zip(year, month, strict=True)]
        elif level == "quarter":
            names = [f"{y:04d}-Q{(m - 1) // 3 + 1}" for y, m in zip(year, month, strict=True)]
        elif level == "year":
            names = [f"{y:04d}" for y in year]
        else:
            span = 10 if level == "decade" else 100
            names = [f"[{y // span * span}, {y // span * span + span}[" for y in year]
        columns.append(np.array(names, dtype=object))
    return _build(columns, name)


def _is_date(text: str) -> bool:
    try:
        np.datetime64(text, "D")
    except ValueError:
        return False
    return True


# -- writing -----------------------------------------------------------------------------------
def write_csv(
    hierarchy: Hierarchy, path: str | Path, sep: str = ";", *, overwrite: bool = False
) -> Path:
    """Write ``hierarchy`` as an ARX CSV file (``leaf;level1;...;*``, no header, UTF-8).

    Refused (one line, nothing written): an existing file without ``overwrite``, a label
    holding the separator or a line break (the file could not be read back). The file is
    read back with :meth:`Hierarchy.read_csv` before it replaces ``path``: what is written is
    what was built.
    """
    target = Path(path)
    if len(sep) != 1 or sep in "\r\n":
        raise HierarchyError(f"{hierarchy.name}: separator must be one character, got {sep!r}")
    if target.exists() and not overwrite:
        raise HierarchyError(f"{target} already exists (overwrite=True replaces it)")
    if target.is_dir():
        raise HierarchyError(f"{target} is a directory; give a file name")
    rows = hierarchy.rows()
    for row in rows:
        for cell in row:
            if sep in cell or "\n" in cell or "\r" in cell:
                raise HierarchyError(
                    f"{hierarchy.name}: label {cell!r} holds the separator {sep!r} or a line "
                    "break; choose another separator"
                )
    with atomic_file(target) as tmp:
        tmp.write_text("".join(sep.join(r) + "\n" for r in rows), encoding="utf-8")
        if Hierarchy.read_csv(tmp, sep=sep).rows() != rows:
            raise InternalError(f"{target}: the hierarchy read back differs from the one built")
    return target


__all__ = [
    "BUILDERS",
    "dates",
    "grouping",
    "grouping_by",
    "intervals",
    "masking",
    "quantile_intervals",
    "write_csv",
]
