"""Choosing the generalization levels of a DP count table privately with the exponential
mechanism (F. McSherry and K. Talwar, "Mechanism Design via Differential Privacy", FOCS 2007;
paper 004 ref. [28]; ``docs/theory/composition.md#dp-mechanisms``).

Picking the levels by looking at the data without noise leaks (paper 002: a data-dependent
lattice search tells the adversary about the data through the level it chose). So
``levels=auto`` makes the choice itself differentially private and charges it to the
budget: OpenDP's report-noisy-max (``make_noisy_max`` under max-divergence, which adds
exponential noise to each score; its Gumbel form, exactly the exponential mechanism, is the
zCDP variant) over the candidate level vectors.

Candidates: every combination of each QI's public levels (all the levels of a hierarchy the
schema gives; the root only for a column without one), whose domain has at most
``max_cells`` cells. They come from the schema alone.

Utility of a candidate ``L``, with a public threshold ``τ`` (default three times the count
noise's scale, so a cell "counts" when its count stands out of the noise)::

    u(L) = #{cells c of L : count_c >= τ} - #{cells c of L : count_c < τ}
         = 2 · populated(L) - |cells(L)|

Sensitivity (L-infinity over the candidates) is 2 under both neighbour notions: changing or
adding/removing one record changes at most two cell counts by one each, one down and one up,
so at most one cell leaves the populated set and at most one enters it; ``populated(L)``
moves by at most 1 (a loss and a gain cancel), ``|cells(L)|`` is public, ``u(L)`` moves by at
most 2, in either direction for different candidates (not monotonic).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.dp.domain import cell_domain
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed

UTILITY_SENSITIVITY = 2
MAX_CANDIDATES = 4096


def candidate_levels(
    table: Table, max_cells: int, fixed: Mapping[str, int] | None = None
) -> list[dict[str, int]]:
    """Every public level vector of the QIs (``fixed`` names pin a level) whose domain has at
    most ``max_cells`` cells, finest first; from the schema only."""
    fixed = dict(fixed or {})
    axes: list[list[tuple[str, int, int]]] = []
    for col in table.qi_columns:
        h = col.hierarchy
        height = h.height if h is not None else 0
        given = table.schema.column(col.name).hierarchy is not None
        options = (
            [fixed[col.name]]
            if col.name in fixed
            else (list(range(height + 1)) if given else [height])
        )
        axes.append(
            [(col.name, lv, len(h.node_labels(lv)) if h is not None else 1) for lv in options]
        )
    out = []
    for combo in itertools.product(*axes):
        if math.prod(size for _, _, size in combo) <= max_cells:
            out.append({name: lv for name, lv, _ in combo})
    if not out:
        raise ParameterError(f"levels=auto: no candidate has at most max_cells={max_cells:,} cells")
    if len(out) > MAX_CANDIDATES:
        raise ParameterError(
            f"levels=auto: {len(out):,} candidate level vectors (more than {MAX_CANDIDATES:,}); "
            "pin some levels, e.g. levels=auto,age:2"
        )
    return out


def utility(counts: np.ndarray, threshold: float) -> int:
    """``2 · #{count >= threshold} - #cells`` (sensitivity 2; module docstring)."""
    return int(2 * np.count_nonzero(counts >= threshold) - counts.size)


def noisy_max_measurement(candidates: int, epsilon: float) -> tuple[Any, float, float]:
    """OpenDP's report-noisy-max (exponential noise) over ``candidates`` integer scores of
    L-infinity sensitivity 2, not monotonic: scale ``2Δ/ε`` nudged up until OpenDP's map is at most
    ``epsilon``. Returns (measurement, scale, map)."""
    scale = 2 * UTILITY_SENSITIVITY / epsilon
    for _ in range(64):
        meas, loss = _noisy_max(candidates, scale, UTILITY_SENSITIVITY)
        if loss <= epsilon:
            return meas, scale, loss
        scale = float(np.nextafter(scale, np.inf))
    raise PrivacyCheckFailed(  # pragma: no cover
        f"OpenDP's privacy map {loss} stays above epsilon {epsilon}"
    )


@functools.lru_cache(maxsize=64)
def _noisy_max(candidates: int, scale: float, sensitivity: int) -> tuple[Any, float]:
    """OpenDP's report-noisy-max over ``candidates`` scores (exponential noise of ``scale``,
    not monotonic) and its map at ``sensitivity``; remembered by its arguments (an OpenDP
    measurement draws afresh on every call)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (
        dp.vector_domain(dp.atom_domain(T="i64"), size=candidates),
        dp.linf_distance(T="i64", monotonic=False),
    )
    meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=scale)
    return meas, float(meas.map(sensitivity))


def choose_levels(
    table: Table,
    epsilon: float,
    *,
    count_scale: float,
    with_sa: bool = False,
    sa_level: int = 0,
    max_cells: int,
    threshold: float | None = None,
    fixed: Mapping[str, int] | None = None,
) -> tuple[dict[str, int], dict[str, Any]]:
    """The level vector OpenDP's noisy max picks among :func:`candidate_levels`, and the
    record of the choice (mechanism, candidates, threshold, sensitivity, scale, epsilon,
    privacy map; never a score)."""
    tau = 3 * count_scale if threshold is None else float(threshold)
    cands = candidate_levels(table, max_cells, fixed)
    extra = {table.sa_name: sa_level} if with_sa else {}
    # the first candidate's domain checks the pinned levels (the SA's too); every candidate
    # comes from the schema, so the others need no check: each row's node at each (column,
    # level) is looked up once, and a candidate's counts are one bincount of their mix
    cell_domain(table, cands[0] | extra, with_sa=with_sa, max_cells=max_cells)
    nodes: dict[tuple[int, int], tuple[int, np.ndarray]] = {}

    def node_codes(j: int, level: int) -> tuple[int, np.ndarray]:
        if (j, level) not in nodes:
            col = table.sa_column if j == table.d else table.qi_columns[j]
            code = table.sa if j == table.d else table.qi[:, j]
            h = col.hierarchy
            if h is None:  # pragma: no cover (every encoded column has a hierarchy)
                raise ParameterError(f"column {col.name!r} has no hierarchy")
            ids = h.node_ids[level]
            nodes[(j, level)] = (int(ids[-1]) + 1, ids[col.leaves(code)].astype(np.int64))
        return nodes[(j, level)]

    scores = []
    for lv in cands:  # a loop over candidates (a few hundred), one bincount each
        axes = [node_codes(j, lv[c.name]) for j, c in enumerate(table.qi_columns)]
        if with_sa:
            axes.append(node_codes(table.d, sa_level))
        key = np.zeros(table.n, dtype=np.int64)
        for radix, codes in axes:
            key = key * radix + codes
        size = math.prod(radix for radix, _ in axes)
        scores.append(utility(np.bincount(key, minlength=size), tau))
    meas, scale, loss = noisy_max_measurement(len(cands), epsilon)
    chosen = cands[int(meas(np.asarray(scores, dtype=np.int64).tolist()))]
    part = {
        "name": "level selection",
        "mechanism": "report-noisy-max (exponential noise)",
        "utility": "2 * #cells with count >= threshold - #cells",
        "threshold": tau,
        "candidates": len(cands),
        "sensitivity": UTILITY_SENSITIVITY,
        "scale": scale,
        "epsilon": epsilon,
        "delta": 0.0,
        "privacy_map": loss,
        "chosen": chosen | extra,
    }
    return chosen | extra, part


__all__ = [
    "MAX_CANDIDATES",
    "UTILITY_SENSITIVITY",
    "candidate_levels",
    "choose_levels",
    "noisy_max_measurement",
    "utility",
]
