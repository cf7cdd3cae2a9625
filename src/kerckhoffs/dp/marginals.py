"""Several marginal count tables under one budget (paper 004's contingency-table release [4];
``docs/theory/composition.md#dp-mechanisms`` and basic composition, ``#dp-composition``).

A marginal over an attribute set (``age+sex``) is the histogram of the table with every other
quasi-identifier at its hierarchy's root: :func:`~kerckhoffs.dp.counts.cell_domain` with those
levels, so each marginal lists every cell of its public domain, empty ones too. ``q`` marginals
released together have L1 sensitivity ``2q`` under substitution (``q`` under add/remove): one
person's record moves one unit in each. Here each marginal gets its own OpenDP measurement with
budget ``epsilon_j`` (an equal split, or proportional to ``weights``) and scale ``Δ/epsilon_j``; by
basic composition (Dwork-Roth 2014; ``docs/theory/composition.md#dp-composition``) the release is
``(sum epsilon_j)``-DP, and the sum of the maps OpenDP reports is what ``release.json`` records and
the fail-closed check compares with the target. With an equal split this is the same noise as one
joint call with ``Δ = 2q`` (the same guarantee; ``docs/theory/composition.md#dp-mechanisms``).

The published ``counts`` table stacks the marginals: a ``marginal`` column names each
(``age+sex``), the attribute columns hold cell labels, ``*`` for an attribute the marginal
does not cross; ``count`` is the unbiased noisy count with its interval
(``count_lower``/``count_upper``, :mod:`kerckhoffs.dp.accuracy`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.table import Table
from kerckhoffs.dp.accuracy import ACCURACY_LEVEL, count_accuracy
from kerckhoffs.dp.contributions import bound_contributions
from kerckhoffs.dp.counts import (
    COUNT,
    MAX_CELLS,
    CellDomain,
    DPRelease,
    cached_layout,
    cell_domain,
    cell_table,
    parse_levels,
    refuse_missing_drop,
    true_counts,
)
from kerckhoffs.dp.mechanisms import (
    ROUND,
    Mechanism,
    Neighbours,
    NoiseSpec,
    add_noise,
    check_budget,
    consistent_totals,
    count_measurement,
    count_neighbours,
    opendp_version,
    parse_mechanism,
    post_process,
)
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Partition, Provenance, Scheme
from kerckhoffs.release.count import CONSISTENT

MARGINAL = "marginal"
"""The published column naming each cell's marginal."""


def parse_marginals(marginals: str | Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """``[("age", "sex"), ("zip", "disease")]`` from the option text ``age+sex;zip+disease``
    or a list of attribute lists; an empty or repeated set, or an attribute repeated inside
    a set, is a one-line ParameterError."""
    if isinstance(marginals, str):
        sets = [tuple(a.strip() for a in part.split("+")) for part in marginals.split(";")]
    else:
        sets = [tuple(str(a).strip() for a in m) for m in marginals]
    if not sets:
        raise ParameterError("marginals: give at least one attribute set, e.g. age+sex;zip")
    seen: set[frozenset[str]] = set()
    for s in sets:
        if not s or any(not a for a in s):
            raise ParameterError(
                f"marginals {marginals!r}: expected NAME+NAME;NAME..., e.g. age+sex;zip"
            )
        if len(set(s)) != len(s):
            raise ParameterError(f"marginals: {'+'.join(s)} names an attribute twice")
        if frozenset(s) in seen:
            raise ParameterError(f"marginals: {'+'.join(s)} is given twice")
        seen.add(frozenset(s))
    return sets


def split_budget(
    epsilon: float, parts: int, weights: Sequence[float] | str | None = None
) -> list[float]:
    """``epsilon`` split into ``parts`` shares, equal or proportional to positive
    ``weights`` (option text ``1,2``)."""
    if weights is None or weights == "":
        w = [1.0] * parts
    else:
        raw = weights.split(",") if isinstance(weights, str) else list(weights)
        try:
            w = [float(x) for x in raw]
        except (TypeError, ValueError):
            raise ParameterError(f"weights {weights!r}: expected numbers, e.g. 1,2") from None
        if len(w) != parts:
            raise ParameterError(f"weights: {len(w)} given for {parts} marginals")
        if not all(math.isfinite(x) and x > 0 for x in w):
            raise ParameterError(f"weights {weights!r}: each must be a positive number")
    total = math.fsum(w)
    return [epsilon * x / total for x in w]


def split_delta(delta: float, shares: Sequence[float]) -> list[float]:
    """``delta`` split in proportion to the epsilon ``shares``, each share nudged down one
    ulp at a time until their exact sum is at most ``delta``: the parts' deltas add up by
    basic composition, and ``1e-6 / 3`` three times sums to ``1.0000000000000002e-06``.

    >>> sum(split_delta(1e-6, [5 / 3] * 3)) <= 1e-6
    True
    """
    total = math.fsum(shares)
    parts = [delta * e / total for e in shares] if delta > 0 else [0.0] * len(shares)
    while exact_sum(parts) > delta:
        parts = [float(np.nextafter(d, 0.0)) for d in parts]
    return parts


def exact_sum(values: Sequence[float]) -> Fraction:
    """The sum of ``values`` without rounding (each float is a fraction): a composed loss is
    compared with its target exactly, since even ``math.fsum`` rounds its result to a float,
    which may land on the target when the true sum is above it."""
    return sum((Fraction(v) for v in values), Fraction(0))


def sum_up(values: Sequence[float]) -> float:
    """The float nearest above the exact sum of ``values`` (what a release records as its
    composed loss: never less than the true sum; at most a target that the exact sum is
    within, since the target is a float)."""
    exact = exact_sum(values)
    total = math.fsum(values)
    return total if Fraction(total) >= exact else float(np.nextafter(total, math.inf))


def _measure(
    cells: Sequence[int],
    epsilons: Sequence[float],
    deltas: Sequence[float],
    mechanism: Mechanism,
    neighbours: Neighbours,
    target: float,
    target_delta: float = 0.0,
    contributions: int = 1,
) -> tuple[list[Any], list[NoiseSpec]]:
    """One OpenDP measurement per part; the shares shrink by a relative 1e-12 (a few
    times at most) if the exact sum of OpenDP's maps (:func:`exact_sum`) exceeds the target by
    float rounding (the single mechanisms nudge their scale the same way). The deltas must
    already sum to at most ``target_delta`` (:func:`split_delta`); a sum above it fails
    closed."""
    if exact_sum(deltas) > target_delta:  # pragma: no cover (split_delta ensures it)
        raise PrivacyCheckFailed(f"the marginals' deltas add up to more than {target_delta!r}")
    for attempt in range(4):
        shrink = (1 - 1e-12) ** attempt
        built = [
            count_measurement(c, e * shrink, mechanism, neighbours, d, contributions)
            for c, e, d in zip(cells, epsilons, deltas, strict=True)
        ]
        if exact_sum([s.privacy_map for _, s in built]) <= target:
            return [m for m, _ in built], [s for _, s in built]
    raise PrivacyCheckFailed(  # pragma: no cover (a relative 3e-12 is always enough)
        f"the marginals' privacy maps add up to more than epsilon {target}"
    )


def marginal_domain(
    table: Table, attributes: Sequence[str], levels: Mapping[str, int], max_cells: int = MAX_CELLS
) -> tuple[CellDomain, np.ndarray]:
    """The public cell domain of one marginal and each row's cell in it: its own
    ``attributes`` at ``levels`` (0 by default), every other QI at its root (what the release
    and the stochastic tester both count)."""
    own = {a: levels.get(a, 0) for a in attributes}
    others = {
        c.name: c.hierarchy.height if c.hierarchy is not None else 0
        for c in table.qi_columns
        if c.name not in attributes
    }
    return cell_domain(
        table, own | others, with_sa=table.sa_name in attributes, max_cells=max_cells
    )


def dp_marginals(
    table: Table,
    epsilon: float,
    marginals: str | Sequence[Sequence[str]],
    *,
    levels: Mapping[str, int] | str | None = None,
    weights: Sequence[float] | str | None = None,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    max_cells: int = MAX_CELLS,
    models: Sequence[PrivacyModel] = (),
    provenance: Provenance | None = None,
    delta: float = 0.0,
    consistent: bool = False,
    accuracy: float = ACCURACY_LEVEL,
    contributions: int = 1,
    persons: np.ndarray | None = None,
) -> DPRelease:
    """An ``(epsilon, delta)``-DP release of several marginal count tables of ``table``.

    ``count`` is each cell's unbiased noisy count (rounded, not clamped: it may be negative)
    with its interval at level ``accuracy`` (:mod:`kerckhoffs.dp.accuracy`; half-widths per
    marginal, since their scales differ with ``weights``). ``consistent=True`` adds a second
    estimator, the column ``consistent``: the marginals post-processed to one common total
    (:func:`~kerckhoffs.dp.mechanisms.consistent_totals`: clamped at 0, scaled, rounded), so
    they sum consistently; it is biased (clamping) and no interval is stated for it.

    ``marginals`` names the attribute sets (QIs and the SA); ``levels`` the hierarchy level
    of each attribute (0 = leaves; the level must be public, as for
    :func:`~kerckhoffs.dp.counts.dp_histogram`); ``weights`` splits epsilon (and a Gaussian's
    delta) unequally. Each marginal lists every cell of its public domain. The recorded
    privacy map is the sum of OpenDP's maps (basic composition); a sum above ``epsilon``
    fails closed. ``contributions=N`` with ``persons``: at most ``N`` rows per person, maps at
    ``N`` rows (:mod:`kerckhoffs.dp.contributions`).

    >>> # dp_marginals(table, 1.0, "age+sex;zip+disease", levels="age:2")
    """
    refuse_missing_drop(table, "dp-marginals")
    table, rows = bound_contributions(table, persons, contributions)
    eps, dlt = check_budget(epsilon, delta)
    mech, nb = parse_mechanism(mechanism), count_neighbours(neighbours)
    sets = parse_marginals(marginals)
    lv = parse_levels(levels)
    names_used = _attributes_used(table, sets, lv)
    pairs = [marginal_domain(table, s, lv, max_cells) for s in sets]
    domains, keys = [d for d, _ in pairs], [k for _, k in pairs]
    total_cells = sum(d.size for d in domains)
    if total_cells > max_cells:
        raise ParameterError(
            f"the marginals have {total_cells:,} cells (more than max_cells={max_cells:,}); "
            "generalize with levels=NAME:LEVEL,... or raise max_cells"
        )
    shares = split_budget(eps, len(sets), weights)
    dshares = split_delta(dlt, shares)
    sizes = [d.size for d in domains]
    meas, specs = _measure(sizes, shares, dshares, mech, nb, eps, dlt, rows)
    raw = [
        add_noise(true_counts(k, d.size), m, spec)
        for d, k, m, spec in zip(domains, keys, meas, specs, strict=True)
    ]
    joint = consistent and len(raw) > 1
    counts, cells_table = _stacked(table, sets, domains, names_used)
    counts[COUNT] = np.concatenate([post_process(r) for r in raw])
    if joint:  # a second estimator beside the unbiased counts, read from them only
        per_cell = 1.0 if mech == Mechanism.GAUSSIAN else 2.0  # sigma^2, or Laplace's 2 b^2
        variances = [d.size * per_cell * s.scale**2 for d, s in zip(domains, specs, strict=True)]
        counts[CONSISTENT] = np.concatenate(consistent_totals(raw, variances))
    noise = _composed_noise(sets, lv, specs, mech, nb, eps, dlt, total_cells, joint)
    noise = replace(
        noise,
        accuracy=count_accuracy(
            mech.value, [s.scale for s in specs], [d.size for d in domains], accuracy
        ),
    )
    if noise.privacy_map > eps or noise.delta > dlt:  # pragma: no cover (_measure ensures it)
        raise PrivacyCheckFailed(f"the marginals' privacy maps exceed epsilon {eps!r}")
    columns = {c.name: c for c in [*table.qi_columns, table.sa_column]}
    axes = [
        {
            "role": "sensitive" if a == table.sa_name else "quasi",
            "name": a,
            "kind": columns[a].kind.value,
            "level": lv.get(a, 0),
        }
        for a in names_used
    ]
    release = DPRelease(
        cells_table,
        Partition(np.arange(total_cells, dtype=np.int32)),
        Scheme.DP,
        provenance=provenance or Provenance("dp-marginals"),
        counts=counts,
        noise=noise,
        axes=axes,
    )
    release = release.with_models(models)
    return release


def _attributes_used(
    table: Table, sets: Sequence[tuple[str, ...]], levels: Mapping[str, int]
) -> list[str]:
    """The table's attributes (QIs in order, then the SA) that some marginal crosses; an
    unknown attribute, or a level for an attribute in no marginal, is refused."""
    known = [*(c.name for c in table.qi_columns), table.sa_name]
    for s in sets:
        for a in s:
            if a not in known:
                raise ParameterError(f"marginals: no attribute {a!r} (have {known})")
    names_used = [a for a in known if any(a in s for s in sets)]
    stray = sorted(set(levels) - set(names_used))
    if stray:
        raise ParameterError(f"levels: {stray[0]!r} is in no marginal")
    return names_used


def _stacked(
    table: Table,
    sets: Sequence[tuple[str, ...]],
    domains: Sequence[CellDomain],
    names_used: Sequence[str],
) -> tuple[pd.DataFrame, Table]:
    """The published ``counts`` frame (counts still zero) and its cell table: the marginals'
    cells stacked, a ``marginal`` column naming each, ``*`` for an attribute a marginal does
    not cross. A function of the public domains only, so it is cached by them."""
    quasi = [a for a in names_used if a != table.sa_name]
    with_sa = table.sa_name in names_used

    def layout() -> tuple[pd.DataFrame, Table]:
        frames = []
        for s, d in zip(sets, domains, strict=True):
            f = d.frame()
            out = pd.DataFrame({MARGINAL: np.full(d.size, "+".join(s), dtype=object)})
            for a in names_used:
                out[a] = f[a].to_numpy() if a in s else np.full(d.size, "*", dtype=object)
            frames.append(out)
        labels = pd.concat(frames, ignore_index=True)
        sa = table.sa_name if with_sa else None
        cells = cell_table(labels[list(names_used)], quasi, sa, table.sa_name)
        labels[COUNT] = np.zeros(len(labels), dtype=np.int64)
        return labels, cells

    key = (
        "marginals",
        tuple(sets),
        tuple(names_used),
        tuple(tuple(tuple(map(str, lab)) for lab in d.labels) for d in domains),
        tuple(d.levels for d in domains),
        table.sa_name,
    )
    return cached_layout(key, sum(d.size for d in domains), layout)


def _composed_noise(
    sets: Sequence[tuple[str, ...]],
    levels: Mapping[str, int],
    specs: Sequence[NoiseSpec],
    mechanism: Mechanism,
    neighbours: Neighbours,
    epsilon: float,
    delta: float,
    cells: int,
    joint: bool,
) -> NoiseSpec:
    """What ``release.json`` records of the marginals' noise: one part per marginal, the
        sum of their privacy maps and deltas (basic composition, rounded up: :func:`sum_up`),
        and the post-processing (``joint``: a second column with one common total for every
    marginal)."""
    parts = tuple(
        {
            "name": "marginal",
            "attributes": list(s),
            "levels": {a: levels.get(a, 0) for a in s},
            "epsilon": spec.epsilon,
            "delta": spec.delta,
            "scale": spec.scale,
            "sensitivity": spec.sensitivity,
            "privacy_map": spec.privacy_map,
            "cells": spec.cells,
        }
        for s, spec in zip(sets, specs, strict=True)
    )
    return NoiseSpec(
        mechanism,
        neighbours,
        sum(s.sensitivity for s in specs),
        min(s.scale for s in specs),
        epsilon,
        sum_up([s.delta for s in specs]) if delta else 0.0,
        sum_up([s.privacy_map for s in specs]),
        opendp_version(),
        cells,
        parts,
        specs[0].norm,
        (
            f"{ROUND}; column consistent: one common total for every marginal "
            "(inverse-variance weighted mean of their noisy sums), then clamped at 0, scaled "
            "to that total and rounded by largest remainders (biased; no interval stated)"
            if joint
            else ROUND
        ),
        measure=specs[0].measure,
        rho=None if specs[0].rho is None else sum_up([s.rho or 0.0 for s in specs]),
        contributions=specs[0].contributions,
    )


__all__ = [
    "MARGINAL",
    "dp_marginals",
    "exact_sum",
    "marginal_domain",
    "parse_marginals",
    "split_budget",
    "split_delta",
    "sum_up",
]
