"""Hierarchies of codes and categories: masking (ARX's redaction-based builder), groups of
ordered values (its order-based builder) and explicit groups per level."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from kerckhoffs.data.hierarchy import ROOT, Hierarchy
from kerckhoffs.data.hierarchy_build.values import (
    build,
    check_choice,
    distinct,
    increasing,
    labels_of,
    nested_sizes,
)
from kerckhoffs.errors import HierarchyError

GROUP_LABELS = ("bounds", "set")
"""``bounds``: ``[first, last]``; ``set``: ``{a, b, c}`` (ARX's aggregate functions)."""


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
    check_choice(align, ("right", "left"), "align", name)
    if len(char) != 1 or char.isspace():
        raise HierarchyError(f"{name}: char must be one visible character, got {char!r}")
    if pad is not None and (len(pad) != 1 or pad.isspace()):
        raise HierarchyError(f"{name}: pad must be one visible character, got {pad!r}")
    leaves = distinct(codes, name)
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
    steps = list(range(1, width)) if levels is None else increasing(levels, name)
    if steps and steps[-1] >= width:
        raise HierarchyError(
            f"{name}: masking {steps[-1]} characters of {width}-character codes leaves nothing "
            "(the root * follows the last level)"
        )
    fill = pad or char
    if align == "right":
        base = [c + fill * (width - len(c)) for c in leaves]
    else:
        base = [fill * (width - len(c)) + c for c in leaves]
    columns = [np.array(leaves, dtype=object)]
    for k in steps:
        if align == "right":
            masked = [b[: width - k] + char * k for b in base]
        else:
            masked = [char * k + b[k:] for b in base]
        columns.append(np.array(masked, dtype=object))
    return build(columns, name)


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
    check_choice(label, GROUP_LABELS, "label", name)
    leaves = distinct(ordered_values, name)
    columns = [np.array(leaves, dtype=object)]
    position = np.arange(len(leaves))
    for size in nested_sizes(sizes, "size", name):
        group = position // size
        names = [
            _group_label(leaves[g * size : (g + 1) * size], label) for g in range(group[-1] + 1)
        ]
        columns.append(np.array(names, dtype=object)[group])
    return build(columns, name)


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
            for m in labels_of(members):
                if m in parent:
                    raise HierarchyError(
                        f"{name}: level {j}: {m!r} is in two groups, {parent[m]!r} and {group!r}"
                    )
                parent[m] = str(group).strip()
        if below is not None:
            unknown = [m for m in parent if m not in set(below)]
            missing = [b for b in below if b not in parent]
            if unknown or missing:
                if unknown:
                    what = f"{unknown[0]!r} is no group of level {j - 1}"
                else:
                    what = f"group {missing[0]!r} of level {j - 1} is in no group"
                raise HierarchyError(f"{name}: level {j}: {what}")
        below = list(dict.fromkeys(parent.values()))
        parents.append(parent)
    leaves = list(parents[0])
    if values is not None:
        absent = [v for v in labels_of(values) if v not in parents[0]]
        if absent:
            raise HierarchyError(
                f"{name}: value {absent[0]!r} is in no group of level 1"
                + (f" ({len(absent)} values are not)" if len(absent) > 1 else "")
            )
    columns = [np.array(leaves, dtype=object)]
    for parent in parents:
        columns.append(np.array([parent[c] for c in columns[-1]], dtype=object))
    return build(columns, name)
