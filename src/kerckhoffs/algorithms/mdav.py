"""MDAV microaggregation (Domingo-Ferrer & Mateo-Sanz 2002; spec ``composition.md`` 3.5).

One of paper 004's k-anonymizers. Maximum Distance to Average Vector, on the QIs encoded as
numbers (numeric QIs by value, categorical ones by their hierarchy-ordered codes) and z-scored
per column (paper 004 leaves the encoding open: spec ``composition.md`` section 8, AMB-13; a
constant column stays 0), with Euclidean distance:

```
while |R| >= 3k:
    c = centroid(R); r = farthest from c; group r + its k-1 nearest; remove them
    s = farthest from r (in what remains); group s + its k-1 nearest; remove them
if |R| >= 2k: c = centroid(R); r = farthest from c; group r + its k-1 nearest; remove them
the rest (k .. 2k-1 rows) is the last group
```

Every group has between ``k`` and ``2k - 1`` rows. Ties in distance are broken by row id (the
lowest first), so the output is deterministic and ``seed`` is unused. Each round is ``O(n d)``
numpy work (one centroid, two farthest points, two partial selections) and there are about
``n / (2k)`` rounds: ``O(n^2 d / k)`` in all, fine for tests and moderate ``n``.

Publication. The spec (3.5) has each group publish its *centroid* as the QI summary (the
classic microaggregation output, which paper 004's nearest-centroid locator attacks). A
:class:`~kerckhoffs.release.Release` has no centroid scheme, so ``mdav`` publishes the groups by
**generalization** (each group's cells: ``[lo-hi]`` for numeric QIs, the lowest common
hierarchy node for categorical ones), exactly like the other partitioning algorithms, and the
SA multiset is untouched. The centroids the spec describes are available from
:func:`mdav_centroids` (same encoding as the grouping), for the nearest-centroid locator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import pick, refuse_others, register
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release


def mdav_encode(table: Table) -> np.ndarray:
    """The QIs as z-scored float64 [n, d] (C order): what MDAV measures distances on.

    Numeric QIs by their values, categorical ones by their hierarchy-ordered codes (paper 004
    leaves the encoding open, spec ``composition.md`` AMB-13); then every column is z-scored.
    """
    x = np.empty(table.qi.shape, dtype=np.float64)
    for j, col in enumerate(table.qi_columns):
        codes = table.qi[:, j]
        x[:, j] = col.values[codes].astype(np.float64) if col.kind == Kind.NUMERIC else codes
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    return (x - mean) / std


def mdav_centroids(release: Release) -> np.ndarray:
    """Each group's centroid in :func:`mdav_encode` space: float64 [groups, d]."""
    x = mdav_encode(release.table)
    g = release.partition.group
    sums = np.zeros((release.partition.n_groups, x.shape[1]))
    np.add.at(sums, g, x)
    return sums / release.partition.sizes[:, None]


def _nearest(d: np.ndarray, first: int, k: int) -> np.ndarray:
    """Positions of ``first`` and the ``k - 1`` other points nearest to it (ties: lowest
    position, i.e. lowest row id since positions keep row order). Overwrites ``d[first]``."""
    d[first] = -1.0
    if k >= d.size:
        return np.arange(d.size)
    thr = np.partition(d, k - 1)[k - 1]
    below = np.flatnonzero(d < thr)
    at = np.flatnonzero(d == thr)[: k - below.size]
    return np.concatenate([below, at])


def _sq_dist(cols: np.ndarray, point: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance of every column of ``cols`` ([d, n]) to ``point`` ([d])."""
    out.fill(0.0)
    for j in range(cols.shape[0]):
        np.subtract(cols[j], point[j], out=tmp)
        np.multiply(tmp, tmp, out=tmp)
        out += tmp
    return out


def mdav_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Group id per row of ``x`` (float [n, d]) by MDAV; ids in order of formation.

    The points are kept transposed ([d, n], each coordinate contiguous) in row order, so
    ``argmax`` and the partial selection break ties by row id. Grouped points are masked out
    (distance -1 for the farthest search, +inf for the nearest) and the arrays are compacted
    once a quarter of them is dead, so each round costs a few passes over the live points.
    """
    n = x.shape[0]
    group = np.full(n, -1, dtype=np.int32)
    ids = np.arange(n)
    cols = np.ascontiguousarray(x.T, dtype=np.float64)
    alive = np.ones(n, dtype=np.float64)  # 1.0 live, 0.0 grouped (a weight for the centroid)
    n_alive = n
    buf_out = np.empty(n)
    buf_tmp = np.empty(n)
    cols_w = np.empty_like(cols)
    next_id = 0

    def dist(point: np.ndarray) -> np.ndarray:
        m = ids.size
        return _sq_dist(cols, point, buf_out[:m], buf_tmp[:m])

    def centroid() -> np.ndarray:
        # numpy's own (pairwise) sum, not a BLAS product: BLAS may split the sum over threads
        # differently from run to run and machine to machine, and the last bit of the centroid
        # decides ties in the farthest-point search
        return np.multiply(cols, alive, out=cols_w).sum(axis=1) / n_alive

    def farthest_from(point: np.ndarray) -> int:
        d = dist(point)
        d[alive == 0.0] = -1.0
        return int(np.argmax(d))

    def take(center: int) -> None:
        nonlocal next_id, ids, cols, cols_w, alive, n_alive
        d = dist(cols[:, center].copy())
        d[alive == 0.0] = np.inf
        sel = _nearest(d, center, k)
        group[ids[sel]] = next_id
        next_id += 1
        alive[sel] = 0.0
        n_alive -= sel.size
        if n_alive < 0.75 * ids.size:
            keep = alive > 0.0
            ids, cols, alive = ids[keep], np.ascontiguousarray(cols[:, keep]), alive[keep]
            cols_w = np.empty_like(cols)

    while n_alive >= 3 * k:
        r = farthest_from(centroid())
        r_point = cols[:, r].copy()
        take(r)
        take(farthest_from(r_point))
    if n_alive >= 2 * k:
        take(farthest_from(centroid()))
    rest = ids[alive > 0.0]
    if rest.size:
        group[rest] = next_id
    return group


@register(
    "mdav",
    summary="MDAV microaggregation (paper 004): groups of k..2k-1 rows around the points "
    "farthest from the centroid, published by generalization",
    models=("KAnonymity",),
)
def mdav(table: Table, models: list[PrivacyModel], *, seed: Seed = None, **options: Any) -> Release:
    """MDAV with ``k`` from :class:`KAnonymity`; deterministic (``seed`` is not used)."""
    if options:
        raise ParameterError(f"mdav: unknown option {sorted(options)[0]!r}")
    refuse_others(models, (KAnonymity,), "mdav")
    km = pick(models, KAnonymity, "mdav")
    if km is None:
        raise ParameterError("mdav needs k-anonymity (e.g. k=5)")
    whole = Release(table, Partition.single(table.n)).histogram()
    km.validate(whole, table.sa_name)
    group = mdav_groups(mdav_encode(table), km.k)
    return Release(
        table,
        Partition.from_labels(group),
        provenance=Provenance("mdav", {"k": km.k, "encoding": "z-scored values"}),
    )
