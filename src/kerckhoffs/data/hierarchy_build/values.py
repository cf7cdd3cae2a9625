"""What the hierarchy builders share: reading values (missing ones dropped), checking their
parameters (one-line errors naming the builder) and making the :class:`Hierarchy` with its root.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np

from kerckhoffs.data.hierarchy import ROOT, Hierarchy, format_value
from kerckhoffs.errors import HierarchyError


def labels_of(values: Iterable[object]) -> list[str]:
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


def distinct(values: Iterable[object], name: str) -> list[str]:
    """Distinct labels in order of first appearance; none at all is an error."""
    found = list(dict.fromkeys(labels_of(values)))
    if not found:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    return found


def numbers(values: Iterable[object], name: str) -> np.ndarray:
    """The values as finite floats (repeats kept); a value that is no number is an error."""
    found = labels_of(values)
    if not found:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    try:
        arr = np.asarray(found, dtype=float)
    except ValueError:
        bad = next(t for t in found if not is_number(t))
        raise HierarchyError(f"{name}: value {bad!r} is not a number") from None
    if not np.isfinite(arr).all():
        bad = found[int(np.argmin(np.isfinite(arr)))]
        raise HierarchyError(f"{name}: value {bad!r} is not a finite number")
    return arr


def is_number(text: str) -> bool:
    """Whether ``float`` reads ``text``."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def nested_sizes(sizes: Sequence[int], what: str, name: str) -> list[int]:
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


def increasing(levels: Sequence[int], name: str) -> list[int]:
    """Positive integers, strictly increasing (characters masked per level)."""
    try:
        out = [int(k) for k in levels]
    except (TypeError, ValueError):
        raise HierarchyError(f"{name}: levels must be integers, got {list(levels)!r}") from None
    if any(k < 1 for k in out) or any(b <= a for a, b in itertools.pairwise(out)):
        raise HierarchyError(f"{name}: levels must be positive and increasing, got {out}")
    return out


def check_choice(value: str, choices: Sequence[str], what: str, name: str) -> None:
    if value not in choices:
        raise HierarchyError(f"{name}: {what} {value!r} is not one of {', '.join(choices)}")


def build(columns: list[np.ndarray], name: str) -> Hierarchy:
    """The hierarchy whose level ``j`` labels are ``columns[j]`` (one entry per leaf), with
    the root ``*`` on top; validated by :class:`Hierarchy` itself."""
    root = np.full(len(columns[0]), ROOT, dtype=object)
    rows = np.stack([*columns, root], axis=1)
    return Hierarchy(rows.tolist(), name=name)
