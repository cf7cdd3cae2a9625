"""What the hierarchy builders share: reading values (missing ones dropped), checking their
parameters (one-line errors naming the builder) and making the :class:`Hierarchy` with its root.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import ROOT, Hierarchy, format_value
from kerckhoffs.errors import HierarchyError


def present(values: Iterable[object]) -> pd.Series:
    """The values as a Series without the missing ones (``None``, NaN, blank text): a column
    is taken as it is (no Python loop over its rows), anything else is listed first."""
    if isinstance(values, pd.Series | pd.Index | np.ndarray):
        found = pd.Series(np.asarray(values))
    else:
        found = pd.Series(list(values))
    found = found[found.notna()]
    if found.dtype == object or pd.api.types.is_string_dtype(found.dtype):
        text = found.astype(str).str.strip()
        found = found[(text != "").to_numpy()]
    return found


def labels_of(values: Iterable[object]) -> list[str]:
    """The distinct values as hierarchy labels (:func:`format_value`, stripped), missing ones
    dropped, in order of first appearance (only the distinct values are formatted one by
    one)."""
    labels = (format_value(v).strip() for v in pd.unique(present(values)))
    return list(dict.fromkeys(labels))


def distinct(values: Iterable[object], name: str) -> list[str]:
    """:func:`labels_of`, where none at all is an error."""
    found = labels_of(values)
    if not found:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    return found


def numbers(values: Iterable[object], name: str) -> np.ndarray:
    """The values as finite floats, repeats kept (quantiles count them); a value that is no
    number is an error naming it."""
    found = present(values)
    if found.empty:
        raise HierarchyError(f"{name}: no values to build a hierarchy from")
    if found.dtype.kind in "biuf":
        arr = found.to_numpy(dtype=float)
    else:
        text = found.astype(str).str.strip()
        arr = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
        unread = np.isnan(arr) & (text.str.lower() != "nan").to_numpy()
        if unread.any():
            bad = text.iloc[int(np.argmax(unread))]
            raise HierarchyError(f"{name}: value {bad!r} is not a number")
    if not np.isfinite(arr).all():
        bad = format_value(found.iloc[int(np.argmin(np.isfinite(arr)))])
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
