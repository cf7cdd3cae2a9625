"""The fail-closed check of a generalization's files for the models that read only the
(groups x SA values) histogram, on the table read back from the staged files with numpy
alone: the common case of ``anonymize``, where the full reader
(:meth:`~kerckhoffs.release.Release.from_frames`: every column encoded again into a
:class:`~kerckhoffs.data.table.Table`, the partition factorized from the labels) costs more
than the check itself.

Like the full reader it is independent of the anonymizer: the groups are the ``group`` column
as read from the file (numbered by first appearance, as
:meth:`~kerckhoffs.release.Partition.from_labels` numbers them), every group must show one
combination of QI cells (else the full reader refuses the release), and the SA is the column
read back. It answers only when every model holds; anything else (another scheme or model, a
sensitive subset, a missing cell, a column of another type, a failed model) returns None and
the full reader runs, so its refusals and messages stay the only ones. The results are the
full reader's (tested against it: same group numbering, same per-group values).

This module loads no pandas (``kerckhoffs check`` of a release uses it before pandas loads).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from kerckhoffs.models.base import ModelResult, PrivacyModel

PLAIN_MODELS = frozenset(
    {
        "KAnonymity",
        "LDiversity",
        "DistinctLDiversity",
        "EntropyLDiversity",
        "RecursiveCLDiversity",
    }
)
"""The models the light checks evaluate: each reads only the (groups x SA values) histogram
and its verdict does not depend on the order of the SA codes."""


def plain_models(models: Sequence[PrivacyModel]) -> bool:
    """Whether every model is one the light checks evaluate (:data:`PLAIN_MODELS`)."""
    return all(type(m).__name__ in PLAIN_MODELS for m in models)


def first_appearance(labels: np.ndarray) -> np.ndarray:
    """Group ids ``0 ..`` numbered by each label's first row (as
    :meth:`~kerckhoffs.release.Partition.from_labels` numbers them). Labels already in
    non-decreasing order (a release's rows are written by group) are ranked in one pass,
    without sorting."""
    import numpy as np

    labels = np.asarray(labels)
    if labels.shape[0] == 0:
        return np.zeros(0, dtype=np.int32)
    if labels.dtype.kind in "iu" and bool(np.all(labels[1:] >= labels[:-1])):
        new = np.empty(labels.shape[0], dtype=np.int32)
        new[0] = 0
        np.cumsum(labels[1:] != labels[:-1], out=new[1:])
        return new
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int32)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0], dtype=np.int32)
    return rank[inverse.reshape(-1)]


def one_cell_per_group(group: np.ndarray, codes: list[np.ndarray]) -> bool:
    """Whether every group (ids ``0 .. max``) has one combination of QI cells (``codes``:
    one code per row and column); else the full reader refuses the release. Rows in order of
    group (as a release lists them): each row's codes against the previous row's where the
    group is the same; otherwise each row's code against its group's first row's code."""
    import numpy as np

    if group.shape[0] == 0:
        return True
    if bool(np.all(group[1:] >= group[:-1])):
        same = group[1:] == group[:-1]
        return all(bool(np.all((c[1:] == c[:-1]) | ~same)) for c in codes)
    n_groups = int(group.max()) + 1
    reverse = group[::-1]
    for c in codes:
        first = np.empty(n_groups, dtype=c.dtype)
        first[reverse] = c[::-1]  # the last write wins: each group's first row's code
        if not np.array_equal(first[group], c):
            return False
    return True


def sorted_codes(codes: np.ndarray, labels: list[str]) -> tuple[np.ndarray, list[str]]:
    """``codes`` into ``labels`` (no code missing) renumbered to the used labels in sorted
    order: what :meth:`~kerckhoffs.data.table.Table.encode` gives a column of text."""
    import numpy as np

    used = np.bincount(codes, minlength=len(labels)) > 0
    kept = [i for i in range(len(labels)) if used[i]]
    order = sorted(kept, key=labels.__getitem__)
    rank = np.full(len(labels), -1, dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[codes], [labels[i] for i in order]


def histogram_results(
    models: Sequence[PrivacyModel],
    group: np.ndarray,
    sa: np.ndarray,
    n_sa: int,
    mode: Any,
) -> list[ModelResult] | None:
    """The models evaluated on the histogram of SA codes ``sa`` per ``group`` (ids ``0 ..``,
    every SA value sensitive), or None unless every one holds."""
    from kerckhoffs.data.schema import Kind, SensitiveMode
    from kerckhoffs.models.histogram import GroupHistogram

    n_groups = int(group.max()) + 1 if group.shape[0] else 0
    hist = GroupHistogram.from_codes(
        group, sa, n_groups, n_sa, None, SensitiveMode(mode), Kind.CATEGORICAL
    )
    results = [m.evaluate(hist) for m in models]
    return results if all(r.satisfied for r in results) else None


def check_read_back(
    models: Sequence[PrivacyModel], df: Any, meta: dict[str, Any]
) -> list[ModelResult] | None:
    """The fail-closed check of the release table ``df`` read back from a staged Parquet
    file (text columns as pandas categoricals), or None when it is not the plain case or a
    model fails (the full reader then runs; see the module docstring)."""
    import numpy as np

    from kerckhoffs.data.schema import Kind
    from kerckhoffs.release.format import GROUP, Scheme

    if meta.get("scheme") != Scheme.GENERALIZATION or meta.get("sensitive_values"):
        return None
    if not models or not plain_models(models):
        return None
    sa_info = meta["sensitive"]
    if sa_info.get("kind", Kind.CATEGORICAL) != Kind.CATEGORICAL:
        return None
    qi_names = [q["name"] for q in meta["quasi"]]
    names = [GROUP, *qi_names, sa_info["name"]]
    columns = [str(c) for c in df.columns]
    if len(set(names)) != len(names) or len(set(columns)) != len(columns):
        return None
    if not set(names) <= set(columns) or len(df) == 0:
        return None
    labels = df[GROUP].to_numpy()
    if labels.dtype.kind not in "iu":
        return None
    cells = []
    for name in names[1:]:
        column = df[name]
        if getattr(column.dtype, "name", "") != "category":
            return None
        codes = np.asarray(column.cat.codes.to_numpy())
        texts = list(column.cat.categories)
        if (codes < 0).any() or not all(isinstance(t, str) for t in texts):
            return None  # a missing cell, or cells that are not text
        cells.append((codes, texts))
    group = first_appearance(labels)
    if not one_cell_per_group(group, [codes for codes, _ in cells[:-1]]):
        return None
    sa, sa_labels = sorted_codes(*cells[-1])
    return histogram_results(models, group, sa, len(sa_labels), meta.get("sensitive_mode", "set"))


__all__ = [
    "PLAIN_MODELS",
    "check_read_back",
    "first_appearance",
    "histogram_results",
    "one_cell_per_group",
    "plain_models",
    "sorted_codes",
]
