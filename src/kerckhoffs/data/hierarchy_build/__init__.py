"""Hierarchy builders: generalization hierarchies generated from values, written as ARX CSV.

Each builder is a pure function from the values of a column (or its distinct values) and a few
parameters to a :class:`~kerckhoffs.data.hierarchy.Hierarchy` the rest of the library accepts
unchanged; :func:`write_csv` writes it in the ARX format (``leaf;level1;...;*``) and reads the
written file back before it takes its place. They follow the builders of ARX (Prasser and
Kohlmayer, "Putting statistical disclosure control into practice: the ARX data anonymization
tool", 2015; ``HierarchyBuilderIntervalBased``, ``HierarchyBuilderRedactionBased``,
``HierarchyBuilderOrderBased`` (a ``HierarchyBuilderGroupingBased``) and
``HierarchyBuilderDate``), with one difference everywhere: the top level is the single root
``*``, which the library's hierarchies require.

**Which builders read the data.** A hierarchy is public (an adversary who knows the algorithm
knows it). :func:`intervals`, :func:`masking`, :func:`grouping`, :func:`grouping_by` and
:func:`dates` place a value by the value alone (and the parameters): the data only decide which
leaves are listed (and, when ``levels`` is not given, how many characters :func:`masking`
masks: one less than the longest code, at most). :func:`quantile_intervals` puts its bin
edges at quantiles of the values it is given, so a hierarchy built from the private table is
itself a function of that table; build it from public or earlier data when that matters (the
choice is the user's).

Missing values (``None``, NaN, empty strings) are no leaves and are skipped.
"""

from __future__ import annotations

from pathlib import Path

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.hierarchy_build.calendar import DATE_LEVELS, dates
from kerckhoffs.data.hierarchy_build.codes import GROUP_LABELS, grouping, grouping_by, masking
from kerckhoffs.data.hierarchy_build.numeric import INTERVAL_LABELS, intervals, quantile_intervals
from kerckhoffs.data.io import atomic_file
from kerckhoffs.errors import OUT, REPLACE_HINT, HierarchyError, InternalError, input_error

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
    if target.is_dir():
        raise input_error(OUT, f" {target} is a directory; give a file name")
    if target.exists() and not overwrite:
        raise input_error(OUT, f" {target} already exists (", REPLACE_HINT, ")")
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
    "DATE_LEVELS",
    "GROUP_LABELS",
    "INTERVAL_LABELS",
    "dates",
    "grouping",
    "grouping_by",
    "intervals",
    "masking",
    "quantile_intervals",
    "write_csv",
]
