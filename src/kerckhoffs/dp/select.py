"""Choosing the generalization levels of a DP count table privately: a greedy top-down search
whose every step is OpenDP's report-noisy-max (the exponential mechanism of F. McSherry and
K. Talwar, "Mechanism Design via Differential Privacy", FOCS 2007; paper 004 ref. [28];
``docs/theory/composition.md#dp-mechanisms``).

Picking the levels by looking at the data without noise leaks (paper 002: a data-dependent
lattice search tells the adversary about the data through the level it chose), so the choice
is itself differentially private and charged to the budget. Enumerating every level vector
does not scale (Adult's 8 QIs: 15,332 vectors under a cell cap); instead the search refines
one QI by one level at a time, from the root down, the shape of B. C. M. Fung, K. Wang and
P. S. Yu, "Top-Down Specialization for Information and Privacy Preservation" (ICDE 2005),
made DP as in N. Mohammed, R. Chen, B. C. M. Fung and P. S. Yu, "Differentially Private Data
Release for Data Mining" (KDD 2011), which picks each specialization with the exponential
mechanism:

1. *Path.* Start with every QI at its root (a pinned QI at its pin). Each round, the
   candidates are "refine QI ``j`` by one level" for every QI whose domain is public
   (:attr:`~kerckhoffs.data.schema.Column.public_domain`) and not yet at its leaves, whose
   cell domain stays within the public cap ``max_cells``; while some of them are still at
   their root, only those (breadth first: every QI gets its chance above ``*`` before any is
   refined twice, the order chosen by the data). OpenDP's noisy max picks one. The path ends
   after ``R`` rounds (:data:`ROUNDS_PER_QI` per public QI, public) or when no candidate is
   left; each round spends ``ε_path / R``.
2. *Stop.* OpenDP's noisy max over the path's level vectors, scored by the same utility,
   picks where to stop (``ε_pick``, :data:`PICK_SHARE` of the selection budget): a QI refined
   on the path but after the stop stays at ``*``, which is DP choosing so.

Everything but the scores comes from the schema (candidates, cell counts, ``R``); the rounds
compose by basic composition of pure-DP mechanisms, adaptively (each round's candidates are a
function of the previous rounds' published choices only), so the choice is
``(ε_path + ε_pick)``-DP; the claim counts every round, run or not, and each round's map is
recorded in ``noise.parts``.

Utility of a level vector ``L`` with ``|L|`` possible cells (impossible nodes left out,
:mod:`kerckhoffs.dp.domain`), counts ``c``, a public threshold ``τ`` (an integer, by default
:data:`THRESHOLD_SCALES` times the count noise's scale: a count that stands out of the noise)
and an empty cell's cost ``κ = ceil(τ/5)``::

    u(L) = 2 · Σ_cells min(c, τ)  -  κ · |L|

A cell scores between ``-κ`` (empty) and ``2τ - κ`` (at least ``τ`` rows), so refining pays
when it splits populated cells into cells that still stand out of the noise and costs when
it scatters them into empty ones: a QI that splits the rows (marital status, occupation) is
kept, a level that splits off a handful of rows (Adult's workclass "Unpaid") is not.
Measured on Adult at epsilon 1 (``benchmarks/dp_levels_adult.py``). Sensitivity (L-infinity
over the candidates) is 2 under both neighbour notions: one record changed, added or removed
moves at most two cell counts by one, each ``min(c, τ)`` by at most one, one down and one
up, so ``Σ min(c, τ)`` by at most 1 and ``u`` by at most 2 (``|L|`` is public), in either
direction for different candidates (not monotonic).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.data.schema import DECLARE_DOMAIN
from kerckhoffs.data.table import EncodedColumn, Table
from kerckhoffs.dp import opendp_core
from kerckhoffs.dp.domain import axis_codes, axis_labels, cell_domain, is_public, root_level
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed

UTILITY_SENSITIVITY = 2
THRESHOLD_SCALES = 9
"""The threshold ``τ`` in scales of the counts' noise: a count of ``τ`` has a relative noise
of about 15 % (Laplace/geometric sd = sqrt(2) scale)."""
ROUNDS_PER_QI = 2
"""The rounds ``R`` of the path per QI the search may refine (public)."""
AUTO_MAX_CELLS = 100_000
"""The public cap on the cells of a level vector the search may choose (``max_cells`` lowers
it)."""
PICK_SHARE = 0.25
"""The fraction of the selection budget spent choosing where to stop on the path."""
SELECTION = "level selection"
"""The name of the part of ``noise.parts`` that records the choice."""


def empty_cost(threshold: int) -> int:
    """What an empty cell costs in the utility: ``ceil(τ / 5)``, so a cell adds to it when its
    count is above a tenth of the threshold."""
    return max(1, math.ceil(int(threshold) / 5))


def utility(
    counts: np.ndarray, threshold: int, cells: int | None = None, cost: int | None = None
) -> int:
    """``2 · Σ min(count, τ) - cost · cells`` (sensitivity 2; module docstring; ``cost``
    defaults to :func:`empty_cost`). ``counts`` may leave out empty cells when ``cells`` says
    how many there are."""
    tau = int(threshold)
    size = counts.size if cells is None else int(cells)
    cost = empty_cost(tau) if cost is None else int(cost)
    return int(2 * np.minimum(counts, tau).sum() - cost * size)


def noisy_max_measurement(
    candidates: int, epsilon: float, sensitivity: int = UTILITY_SENSITIVITY
) -> tuple[Any, float, float]:
    """OpenDP's report-noisy-max (exponential noise) over ``candidates`` integer scores of
    L-infinity ``sensitivity``, not monotonic: scale ``2Δ/ε`` nudged up until OpenDP's map is
    at most ``epsilon``. Returns (measurement, scale, map)."""
    scale = 2 * sensitivity / epsilon
    for _ in range(64):
        meas, loss = _noisy_max(candidates, scale, sensitivity)
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
    dp = opendp_core.core()

    dp.enable_features("contrib")
    space = (
        dp.vector_domain(dp.atom_domain(T="i64"), size=candidates),
        dp.linf_distance(T="i64", monotonic=False),
    )
    meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=scale)
    return meas, float(meas.map(sensitivity))


@dataclass
class _Axes:
    """The cell axes of the search (QIs, then the SA if crossed): each axis's possible node
    count and rows' axis codes per level, computed once; and the current key of every row."""

    table: Table
    columns: list[EncodedColumn]
    codes: list[np.ndarray]
    levels: list[int]
    _cache: dict[tuple[int, int], tuple[int, np.ndarray | None]]

    def size(self, j: int, level: int) -> int:
        """Possible nodes of axis ``j`` at ``level`` (schema only)."""
        if (j, level) not in self._cache:
            labels, _ = axis_labels(self.table, self.columns[j], level)
            self._cache[(j, level)] = (len(labels), None)
        return self._cache[(j, level)][0]

    def rows(self, j: int, level: int) -> np.ndarray:
        """Each row's axis code on axis ``j`` at ``level``."""
        _, found = self._cache.get((j, level), (0, None))
        if found is None:
            labels, remap = axis_labels(self.table, self.columns[j], level)
            found = axis_codes(self.columns[j], self.codes[j], level, remap)
            self._cache[(j, level)] = (len(labels), found)
        return found

    def root(self, j: int) -> int:
        return root_level(self.columns[j])

    def cells(self, levels: list[int]) -> int:
        return math.prod(self.size(j, lv) for j, lv in enumerate(levels))

    def key(self, levels: list[int]) -> np.ndarray:
        """Each row's cell at ``levels`` (mixed radix, first axis most significant)."""
        key = np.zeros(self.table.n, dtype=np.int64)
        for j, lv in enumerate(levels):
            key = key * self.size(j, lv) + self.rows(j, lv)
        return key

    def refined_key(self, key: np.ndarray, levels: list[int], j: int, new: int) -> np.ndarray:
        """:meth:`key` with axis ``j`` moved to level ``new`` (axis ``j`` last: the cell
        numbering differs, the counts do not), in O(n)."""
        stride = math.prod(self.size(i, lv) for i, lv in enumerate(levels) if i > j)
        radix = self.size(j, levels[j])
        rest = key // (stride * radix) * stride + key % stride
        return rest * self.size(j, new) + self.rows(j, new)


def search_rounds(table: Table, pinned: Mapping[str, int]) -> int:
    """``R``: the most rounds the path may take, :data:`ROUNDS_PER_QI` per public QI that is
    not pinned, at most the levels between their roots and leaves (schema only)."""
    free = [c for c in table.qi_columns if c.name not in pinned and is_public(table, c.name)]
    return min(ROUNDS_PER_QI * sum(root_level(c) > 0 for c in free), sum(map(root_level, free)))


def _start(
    table: Table, pinned: Mapping[str, int], with_sa: bool, sa_level: int, cap: int
) -> tuple[_Axes, list[int]]:
    """The search's axes and the QIs it may refine (public, not pinned); the start's domain
    (every QI at its root or pin, the SA at ``sa_level``) checks the pins and the cap."""
    columns = [*table.qi_columns, *([table.sa_column] if with_sa else [])]
    start = {c.name: pinned.get(c.name, root_level(c)) for c in table.qi_columns}
    if with_sa:
        start[table.sa_name] = sa_level
    cell_domain(table, start, with_sa=with_sa, max_cells=cap)
    axes = _Axes(
        table,
        columns,
        [table.qi[:, j] for j in range(table.d)] + ([table.sa] if with_sa else []),
        [start[c.name] for c in columns],
        {},
    )
    free = [
        j
        for j, c in enumerate(table.qi_columns)
        if c.name not in pinned and is_public(table, c.name) and root_level(c) > 0
    ]
    return axes, free


def _options(axes: _Axes, levels: list[int], free: list[int], cap: int) -> list[tuple[int, int]]:
    """A round's candidates (schema only): refine one QI by one level within the cap; while
    some QI that fits is still at its root, only those (breadth first)."""
    options = [
        (j, levels[j] - 1)
        for j in free
        if levels[j] > 0 and axes.cells(_moved(levels, j, levels[j] - 1)) <= cap
    ]
    fresh = [(j, lv) for j, lv in options if levels[j] == axes.root(j)]
    return fresh or options


def choose_levels(
    table: Table,
    epsilon: float,
    *,
    count_scale: float,
    with_sa: bool = False,
    sa_level: int = 0,
    max_cells: int = AUTO_MAX_CELLS,
    threshold: int | None = None,
    fixed: Mapping[str, int] | None = None,
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """The level vector the DP top-down search picks (module docstring) and the record of the
    choice: a summary part (named :data:`SELECTION`: mechanism, utility, threshold, rounds,
    epsilon, privacy map = the sum of every round's and the stop's map bounds, the choice, its
    cell count) and one part per round run and for the stop (candidates, scale, epsilon, map,
    choice; never a score). Refuses, before any epsilon is spent, a table no QI of which has a
    public domain. ``count_scale``: the scale of the counts' noise (sets the threshold)."""
    pinned = dict(fixed or {})
    rounds = search_rounds(table, pinned)
    if rounds == 0:
        raise ParameterError(
            "levels=auto: no quasi-identifier left to choose has a public domain, so every "
            "one could only be counted at its root (one cell); to count a column finer, "
            + DECLARE_DOMAIN
        )
    cap = min(int(max_cells), AUTO_MAX_CELLS)
    tau = (
        math.ceil(round(THRESHOLD_SCALES * count_scale, 9)) if threshold is None else int(threshold)
    )
    if tau < 1:
        raise ParameterError(f"threshold must be at least 1, got {threshold!r}")
    cost = empty_cost(tau)
    axes, free = _start(table, pinned, with_sa, sa_level, cap)
    eps_pick = epsilon * PICK_SHARE
    eps_round = (epsilon - eps_pick) / rounds * (1 - 1e-12)  # the sum stays <= epsilon
    levels = list(axes.levels)
    key = axes.key(levels)
    path = [(list(levels), utility(np.bincount(key), tau, axes.cells(levels), cost))]
    parts: list[dict[str, Any]] = []
    for r in range(rounds):
        options = _options(axes, levels, free, cap)
        if not options:
            break
        scores = [
            utility(
                np.bincount(axes.refined_key(key, levels, j, lv)),
                tau,
                axes.cells(_moved(levels, j, lv)),
                cost,
            )
            for j, lv in options
        ]
        meas, scale, loss = noisy_max_measurement(len(options), eps_round)
        pick = int(meas(scores))
        j, lv = options[pick]
        levels = _moved(levels, j, lv)
        key = axes.key(levels)
        path.append((list(levels), scores[pick]))
        parts.append(
            _round_part(
                f"{SELECTION}: round {r + 1}",
                len(options),
                scale,
                eps_round,
                loss,
                f"{axes.columns[j].name}:{lv}",
            )
        )
    if len(path) > 1:
        meas, scale, loss = noisy_max_measurement(len(path), eps_pick)
        stop = int(meas([score for _, score in path]))
    else:  # no refinement fits under the cap: nothing read, nothing to choose
        stop, scale, loss = 0, 0.0, 0.0
    chosen_levels = path[stop][0]
    chosen = {c.name: lv for c, lv in zip(axes.columns, chosen_levels, strict=True)}
    parts.append(
        _round_part(f"{SELECTION}: stop", len(path), scale, eps_pick, loss, f"after round {stop}")
    )
    # the claim: every round's map bound, run or not, and the stop's (OpenDP's map of noisy
    # max depends on the scale only, so each run round's map is checked against the bound)
    round_bound = noisy_max_measurement(2, eps_round)[2]
    pick_bound = noisy_max_measurement(2, eps_pick)[2]
    claim = rounds * round_bound + pick_bound
    if (
        any(p["privacy_map"] > round_bound for p in parts[:-1])
        or loss > pick_bound
        or claim > epsilon * (1 + 1e-12)
    ):  # pragma: no cover (each map is at most its share)
        raise PrivacyCheckFailed(f"level selection maps exceed epsilon {epsilon}")
    summary = {
        "name": SELECTION,
        "mechanism": "report-noisy-max (exponential noise): greedy top-down rounds, then stop",
        "utility": "2 * sum(min(count, threshold)) - empty_cost * #cells",
        "threshold": tau,
        "empty_cost": cost,
        "rounds": rounds,
        "rounds_run": len(path) - 1,
        "max_cells": cap,
        "sensitivity": UTILITY_SENSITIVITY,
        "epsilon": epsilon,
        "delta": 0.0,
        "privacy_map": claim,
        "chosen": chosen,
        "levels": describe(chosen, {c.name: root_level(c) for c in axes.columns}),
        "cells": axes.cells(chosen_levels),
    }
    return chosen, [summary, *parts]


def _moved(levels: list[int], j: int, level: int) -> list[int]:
    out = list(levels)
    out[j] = level
    return out


def _round_part(
    name: str, candidates: int, scale: float, epsilon: float, loss: float, chosen: str
) -> dict[str, Any]:
    return {
        "name": name,
        "candidates": candidates,
        "sensitivity": UTILITY_SENSITIVITY,
        "scale": scale,
        "epsilon": epsilon,
        "delta": 0.0,
        "privacy_map": loss,
        "chosen": chosen,
    }


def describe(levels: Mapping[str, int], roots: Mapping[str, int]) -> str:
    """``age:2 workclass:1 sex:*``: each column's level, ``*`` at its root."""
    return " ".join(
        f"{name}:{'*' if lv == roots.get(name, -1) else lv}" for name, lv in levels.items()
    )


def selection_line(parts: Sequence[Mapping[str, Any]], epsilon: float) -> str | None:
    """``levels chosen with DP (epsilon 0.1 of 1): age:3 ... (720 cells)`` from a release's
    ``noise.parts`` (``epsilon``: the release's), or None when the levels were given."""
    part = next((p for p in parts if p.get("name") == SELECTION), None)
    if part is None:
        return None
    return (
        f"levels chosen with DP (epsilon {part['privacy_map']:.3g} of {epsilon:.3g}): "
        f"{part['levels']} ({int(part['cells']):,} cells)"
    )


__all__ = [
    "AUTO_MAX_CELLS",
    "PICK_SHARE",
    "SELECTION",
    "UTILITY_SENSITIVITY",
    "choose_levels",
    "describe",
    "empty_cost",
    "noisy_max_measurement",
    "search_rounds",
    "selection_line",
    "utility",
]
