"""Test helpers: a partition as a set of row sets, with rows numbered from 1 (t1..t8 in the
specs' worked examples)."""

from __future__ import annotations

import numpy as np

from kerckhoffs import Partition, Release


def groups_of(x: Release | Partition | np.ndarray) -> set[frozenset[int]]:
    """The partition of a release, a partition or a group-id array as a set of row sets."""
    if isinstance(x, Release):
        x = x.partition
    g = x.group if isinstance(x, Partition) else np.asarray(x)
    out: dict[int, set[int]] = {}
    for row, gid in enumerate(g.tolist()):
        out.setdefault(gid, set()).add(row + 1)
    return {frozenset(s) for s in out.values()}


def T(*rows: int) -> frozenset[int]:
    """The row set {t_rows...}."""
    return frozenset(rows)
