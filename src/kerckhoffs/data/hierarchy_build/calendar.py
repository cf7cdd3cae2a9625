"""Date hierarchies (ARX's date builder): ISO dates into months, quarters, years, decades."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.hierarchy_build.values import build, distinct
from kerckhoffs.errors import HierarchyError

DATE_LEVELS = ("month", "quarter", "year", "decade", "century")
"""The levels a date hierarchy may have, finest first."""

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
"""The form of a date leaf (a calendar date, checked by numpy)."""


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
    texts = distinct(values, name)
    bad = next((t for t in texts if not ISO_DATE.fullmatch(t) or not _is_date(t)), None)
    if bad is not None:  # numpy alone also reads "today", "2024-03" and "NaT"
        raise HierarchyError(f"{name}: value {bad!r} is not an ISO date (YYYY-MM-DD)")
    days = np.array(texts, dtype="datetime64[D]")
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
    return build(columns, name)


def _is_date(text: str) -> bool:
    try:
        np.datetime64(text, "D")
    except ValueError:
        return False
    return True
