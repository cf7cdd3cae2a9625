"""What the Hilbert-order attack reads off a release (paper 000, Jin, Zhang, Das, Algorithm 7,
section 8.3.1): each row's place in Hilb's order (``Q_T``, recomputed from the QI codes), the
published SA buckets Hilb groups by, the diversity parameter ``l`` and the tie rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kerckhoffs.algorithms.hilb import table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import hilbert_bits, hilbert_order
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = [
    "ATTACK",
    "TIES",
    "check_ties",
    "hilbert_keys",
    "l_of",
    "published_buckets",
    "qi_constant_in_groups",
    "whole_number",
]

ATTACK = "hilb-order"
TIES = ("row", "unordered")
"""How tied ``Q_T`` (identical QI vectors) are ordered (:mod:`kerckhoffs.attacks.hilb.order`)."""


def check_ties(ties: str) -> str:
    if ties not in TIES:
        raise ParameterError(f"{ATTACK}: ties must be one of {', '.join(TIES)}, got {ties!r}")
    return ties


def whole_number(value: Any, name: str) -> int:
    """A whole number >= 1 from an int, an integral float or such a string (CLI options)."""
    try:
        ok = not isinstance(value, bool) and float(value).is_integer() and float(value) >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"{ATTACK}: {name} must be a whole number >= 1, got {value!r}")
    return int(float(value))


def l_of(release: Release, l: Any) -> int:  # noqa: E741
    """``l`` given, else the release's recorded ``l``, else its smallest group (Hilb's groups
    have ``l`` rows)."""
    if l is None:
        l = release.provenance.parameters.get("l")  # noqa: E741
    if l is None:
        l = int(release.partition.sizes.min()) if release.partition.n else 1  # noqa: E741
    return whole_number(l, "l")


def qi_constant_in_groups(release: Release) -> bool:
    """Every group has one QI vector: the table holds published cells, not exact QIs."""
    part = release.partition
    n = part.n
    if n == 0 or part.n_groups == n:
        return False
    first = np.empty(part.n_groups, dtype=np.int64)
    first[part.group[::-1]] = np.arange(n - 1, -1, -1)  # each group's first row
    qi = release.table.qi
    return bool((qi == qi[first[part.group]]).all())


def hilbert_keys(
    release: Release,
    population: Table | None,
    hilbert_index: np.ndarray | None,
    bits: int | None,
    input_order: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's position in ``(Q_T, row id)`` order and the dense rank of its ``Q_T``; the
    row id is ``input_order`` when given (the row's index in the anonymizer's input)."""
    n = release.table.n
    params = release.provenance.parameters
    if hilbert_index is not None:
        index = np.asarray(hilbert_index)
        if index.shape[0] != n:
            raise ParameterError(
                f"{ATTACK}: hilbert_index has {index.shape[0]} values for {n} rows"
            )
    else:
        if params.get("hilbert_index") == "given":
            raise ParameterError(
                f"{ATTACK}: the release was made with a given Hilbert index; pass it as "
                "hilbert_index"
            )
        source = population if population is not None else release.table
        if population is not None:
            if population.n != n:
                raise ParameterError(
                    f"{ATTACK}: the population has {population.n} rows, the release {n}"
                )
        elif release.scheme == Scheme.GENERALIZATION and qi_constant_in_groups(release):
            raise ParameterError(
                f"{ATTACK}: the release holds only generalized cells; pass the population's "
                "exact QIs (row-aligned with the release), or align the population with the "
                "cells (alignment=kerckhoffs.attacks.hilb.align.align(...))"
            )
        need = hilbert_bits([c.size for c in source.qi_columns])
        if bits is None:
            bits = params.get("bits")
        bits = need if bits is None else whole_number(bits, "bits")
        if bits < need:
            raise ParameterError(
                f"{ATTACK}: bits={bits} is too few for the QI codes (the largest domain needs "
                f"{need}); are these the anonymizer's codes?"
            )
        index = table_hilbert_index(source, bits)
    if input_order is None:
        order = hilbert_order(index=index)
    else:
        tie = np.asarray(input_order)
        if tie.shape != (n,) or np.unique(tie).size != n:
            raise ParameterError(
                f"{ATTACK}: input_order must give each of the {n} rows a distinct index"
            )
        words = [index] if index.ndim == 1 else [index[:, w] for w in range(index.shape[1])]
        order = np.lexsort((tie, *words[::-1]))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n, dtype=np.int64)
    sorted_index = index[order]
    if sorted_index.ndim == 1:
        change = sorted_index[1:] != sorted_index[:-1]
    else:
        change = (sorted_index[1:] != sorted_index[:-1]).any(axis=1)
    qrank_by_pos = np.concatenate([[0], np.cumsum(change)]).astype(np.int64)
    return pos, qrank_by_pos[pos] if n else qrank_by_pos


def published_buckets(release: Release) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Published SA bucket per row, whether each bucket is bounded, and bucket labels.

    One bucket per SA code, except that a sensitive subset in ``set`` mode is one bucket (what
    :func:`kerckhoffs.algorithms.anatomy.sa_buckets` does for Hilb). Bounded buckets are those
    l-diversity bounds: every value without a subset, else the sensitive ones.
    """
    t = release.table
    labels = [str(v) for v in t.sa_column.labels.tolist()]
    sens = np.asarray(t.sensitive, dtype=bool)
    mapping = np.arange(t.n_sa, dtype=np.int64)
    bounded = np.ones(t.n_sa, dtype=bool)
    if not sens.all():
        bounded = sens.copy()
        if t.schema.sensitive_mode == SensitiveMode.SET and sens.any():
            merged = int(np.flatnonzero(sens)[0])
            mapping[sens] = merged
            names = "|".join(labels[i] for i in np.flatnonzero(sens))
            labels[merged] = names
    bucket = mapping[np.asarray(release.sa_published, dtype=np.int64)]
    return bucket, bounded, labels
