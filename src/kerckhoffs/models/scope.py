"""Which sensitive values a verdict was computed on.

A schema may name a subset of the sensitive attribute's values (``sensitive_values``, paper
001's setting: education below high school). Frequency l-diversity, m-confidentiality and
(alpha, k)-anonymity then bound only those values: a group of one row holding another value
passes ``l=4``, and its row is published exactly. A verdict such as ``l=4 ok`` is true of the
subset and says nothing of the other values, so every verdict line computed on a subset names
it (:func:`with_scope`), and :func:`singletons` counts the rows published in a group of their
own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.schema import Schema, SensitiveMode
from kerckhoffs.data.table import EncodedColumn

if TYPE_CHECKING:
    from kerckhoffs.models.base import ModelResult, PrivacyModel

__all__ = ["SensitiveSubset", "sensitive_values", "singletons", "with_scope"]


class SensitiveSubset(Protocol):
    """What a verdict's scope reads of a table: its schema, its SA column and which SA codes
    are sensitive. A :class:`~kerckhoffs.data.table.Table` in memory and a
    :class:`~kerckhoffs.engines.dask_table.DaskTable` on workers both have them."""

    @property
    def schema(self) -> Schema: ...

    @property
    def sa_column(self) -> EncodedColumn: ...

    @property
    def sensitive(self) -> np.ndarray: ...


MAX_SHOWN = 8
"""How many sensitive values a verdict line names before "and N more"."""


def sensitive_values(table: SensitiveSubset) -> str:
    """The schema's sensitive subset as a phrase (``{Preschool, 1st-4th}``; ``each of ...``
    in ``each`` mode), or ``""`` when every value of the SA is sensitive."""
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.size == 0 or sens.all():
        return ""
    labels = [format_value(x) for x in np.asarray(table.sa_column.labels)[sens].tolist()]
    if not labels:
        return "{} (no value of the sensitive subset occurs)"
    shown = ", ".join(labels[:MAX_SHOWN])
    if len(labels) > MAX_SHOWN:
        shown += f" and {len(labels) - MAX_SHOWN:,} more"
    if table.schema.sensitive_mode == SensitiveMode.EACH:
        return f"each of {{{shown}}}"
    return f"{{{shown}}}"


def with_scope(
    results: Sequence[ModelResult], models: Sequence[PrivacyModel], table: SensitiveSubset
) -> list[ModelResult]:
    """``results`` with the sensitive subset named in the ``scope`` of those computed on it:
    the results of ``models`` whose ``reads_subset`` is set (matched by model name, so
    ``results`` may hold them in another order or combined)."""
    scope = sensitive_values(table)
    subset = {m.name for m in models if getattr(m, "reads_subset", False)}
    if not scope or not subset:
        return list(results)
    return [
        dataclasses.replace(r, scope=f"on {scope}") if r.model in subset else r for r in results
    ]


def singletons(group: np.ndarray) -> int:
    """How many rows are published in a group of their own (their QI cells exact for a
    generalization; ``group``: the group id of each row)."""
    sizes = np.bincount(np.asarray(group, dtype=np.int64))
    return int(np.count_nonzero(sizes == 1))
