"""Noisy count tables over a public cell domain: the DP release (scheme ``dp``; paper 004's
histogram / contingency-table release, ``docs/theory/composition.md#dp-mechanisms``).

The cell domain is the cross product of each quasi-identifier's nodes at a chosen hierarchy
level (a lattice node's generalized cells), optionally crossed with the sensitive attribute.
It must be *public*: a level's nodes come from a hierarchy the user gave in the schema, or
the level is the root (one cell, ``*``). A domain built from the data (distinct values
present, intervals from ``widths`` over the data's range) would tell which values occur, so
it is refused. EVERY cell of the domain is published, empty ones too (releasing only
non-empty cells leaks; ``docs/theory/composition.md#dp-mechanisms``).

Counting is one ``np.bincount`` over mixed-radix cell codes; the noise is OpenDP's
(:mod:`kerckhoffs.dp.mechanisms`); post-processing (rounding, no clamping: the counts are unbiased)
sees only the noisy vector. The published files are ``counts.csv`` / ``counts.parquet`` (cell
labels + noisy ``count`` + its interval ``count_lower``/``count_upper``, cells in domain order,
a function of the public domain only) and ``release.json`` (epsilon, delta, neighbour
notion, sensitivity, mechanism, scale, OpenDP's privacy map, OpenDP version; never a seed,
the number of rows or a true count).

The release itself, what is published and read back, is a
:class:`~kerckhoffs.release.count.DPRelease` (re-exported here); the cell domain is
:mod:`kerckhoffs.dp.domain`.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import MissingPolicy
from kerckhoffs.data.table import Table
from kerckhoffs.dp.accuracy import ACCURACY_LEVEL, count_accuracy
from kerckhoffs.dp.contributions import bound_contributions, selection_per_person
from kerckhoffs.dp.domain import MAX_CELLS, CellDomain, cell_domain, parse_levels, root_level
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    add_noise,
    count_measurement,
    post_process,
    with_pure_part,
)
from kerckhoffs.dp.select import AUTO_MAX_CELLS, choose_levels
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release.count import COUNT, COUNTS, DPRelease, cell_table
from kerckhoffs.release.format import Scheme
from kerckhoffs.release.partition import Partition
from kerckhoffs.release.provenance import Provenance


def refuse_missing_drop(table: Table, algorithm: str) -> None:
    """Refuse a table encoded under ``missing = "drop"`` in a column it reads (schema-wide or
    for that column), before any count: a one-line ParameterError naming the column that sets
    it, or the schema-wide setting when no column does.

    Dropping a row because one of its values is missing is not a function of the public cell
    domain: a neighbour whose only change is one value turned missing loses the whole row, so
    ``n`` and every count it was in change (measured on dp-rr: a lower bound on epsilon of
    5.9 against a claimed 1). Under ``missing = "category"`` a missing cell is the value
    ``"?"``, one more value of the domain: a change to or from it is an ordinary change of one
    value, which the noise covers, and the value is public because a cell domain comes from a
    hierarchy file (the file must list ``"?"``; the encoding refuses it otherwise) or is the
    root. The decision reads the schema only, never the data, so whether it refuses says
    nothing about the rows.
    """
    schema = table.schema
    used = [*schema.quasi, schema.sensitive]
    if schema.provider is not None:
        used.append(schema.provider)
    own = [c.name for c in used if c.missing == MissingPolicy.DROP]
    inherited = [c.name for c in used if c.missing is None and schema.missing == MissingPolicy.DROP]
    if own or inherited:
        where = (
            f'column {own[0]!r} sets missing = "drop"'
            if own
            else 'the schema-wide setting missing = "drop" (at the top of the schema, for every '
            "column without its own)"
        )
        raise ParameterError(
            f"{algorithm}: {where}, which a DP release cannot use: "
            "dropping a row for one missing value changes n and its cells, so a neighbour "
            'that turns one value missing is told apart; use missing = "category" (missing '
            'becomes the value "?", which the column\'s hierarchy file must list)'
        )


def true_counts(key: np.ndarray, cells: int) -> np.ndarray:
    """Rows per cell, every cell included (one ``np.bincount``)."""
    return np.bincount(key, minlength=cells).astype(np.int64)


LEAVES = "leaves"
"""``levels="leaves"``: every column at level 0, its leaves (the default before levels were
chosen with DP)."""


def parse_auto(levels: Mapping[str, int] | str | None) -> tuple[bool, dict[str, int]]:
    """``(True, pinned levels)`` when the levels are to be chosen with DP: none given,
    ``auto``, or ``auto,age:2`` pinning some; ``(False, explicit levels)`` otherwise
    (``leaves``: every level 0)."""
    if levels is None or (isinstance(levels, str) and not levels.strip()):
        return True, {}
    if not isinstance(levels, str):
        return False, parse_levels(levels)
    head, _, rest = levels.strip().partition(",")
    if head.strip().lower() == LEAVES:
        return False, parse_levels(rest)
    if head.strip().lower() != "auto":
        return False, parse_levels(levels)
    return True, parse_levels(rest)


def all_at_root(table: Table, levels: Mapping[str, int]) -> bool:
    """Whether every QI of ``levels`` is at its root (one cell per SA node, if crossed)."""
    return all(levels.get(c.name, 0) == root_level(c) for c in table.qi_columns)


def selection_note(table: Table, levels: Mapping[str, int]) -> list[str]:
    """The note a release whose DP-chosen levels put every QI at its root carries (never a
    one-cell answer silently)."""
    if not all_at_root(table, levels):
        return []
    return [
        "levels chosen with DP: every quasi-identifier at its root *, so the table has one "
        "cell (per sensitive value if crossed); the data are too few for finer cells at this "
        "epsilon, or pin levels (levels=auto,NAME:LEVEL) or give a larger epsilon"
    ]


CACHED_CELLS = 4096
"""Largest layout :func:`cached_layout` remembers (measured: about 0.7 KB a cell with its
cell table, so at most about 3 MB each, and :data:`CACHED_LAYOUTS` of them)."""
CACHED_LAYOUTS = 8
"""How many layouts :func:`cached_layout` remembers (the most recently used)."""
_LAYOUTS: OrderedDict[Hashable, tuple[pd.DataFrame, Table]] = OrderedDict()


def cached_layout(
    key: Hashable, cells: int, build: Callable[[], tuple[pd.DataFrame, Table]]
) -> tuple[pd.DataFrame, Table]:
    """The published layout of a count table: its cell labels (one row per cell, and a
    ``count`` column of zeros for the caller to fill) and its cell table (:func:`cell_table`),
    from ``build()``, remembered by ``key`` for layouts of at most :data:`CACHED_CELLS` cells
    (the last :data:`CACHED_LAYOUTS`).

    A layout is a function of the public domain only (hierarchy labels and levels, never a
    row), so remembering it holds nothing private; encoding the cell table is most of a
    small release's cost (about 2 ms of 4). The caller gets its own copy of the labels (it
    writes the counts) and of the table record (its arrays are never written to)."""
    if cells > CACHED_CELLS:
        return build()
    hit = _LAYOUTS.get(key)
    if hit is None:
        hit = _LAYOUTS[key] = build()
        while len(_LAYOUTS) > CACHED_LAYOUTS:
            _LAYOUTS.popitem(last=False)
    else:
        _LAYOUTS.move_to_end(key)
    labels, table = hit
    return labels.copy(), dataclasses.replace(table, notes=list(table.notes))


def domain_cells(domain: CellDomain, n_quasi: int, sa_name: str) -> tuple[pd.DataFrame, Table]:
    """The labels of every cell of ``domain`` (:meth:`CellDomain.frame`) and its cell table:
    its first ``n_quasi`` axes are QIs, the last the SA ``sa_name`` if the domain crosses it
    (:func:`cached_layout`)."""
    key = (
        "domain",
        domain.names,
        domain.levels,
        tuple(tuple(map(str, lab)) for lab in domain.labels),
        domain.with_sa,
        n_quasi,
        sa_name,
    )

    def build() -> tuple[pd.DataFrame, Table]:
        frame = domain.frame()
        names = list(domain.names)
        sa = sa_name if len(names) > n_quasi else None
        table = cell_table(frame[names], names[:n_quasi], sa, sa_name)
        frame[COUNT] = np.zeros(domain.size, dtype=np.int64)
        return frame, table

    return cached_layout(key, domain.size, build)


def dp_histogram(
    table: Table,
    epsilon: float,
    *,
    levels: Mapping[str, int] | str | None = None,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    max_cells: int = MAX_CELLS,
    models: Sequence[PrivacyModel] = (),
    provenance: Provenance | None = None,
    delta: float = 0.0,
    selection: float = 0.1,
    accuracy: float = ACCURACY_LEVEL,
    contributions: int = 1,
    persons: np.ndarray | None = None,
) -> DPRelease:
    """An ``epsilon``-DP noisy count table of ``table`` over a public cell domain.

    Counts every cell (:func:`cell_domain`, :func:`true_counts`), adds OpenDP's noise with
    scale ``Δ/ε`` (``Δ`` = 2 under substitution, 1 under add/remove) and rounds: each count is
    the unbiased noisy count (not clamped; it may be negative), with its interval at level
    ``accuracy`` (:mod:`kerckhoffs.dp.accuracy`; columns ``count_lower``/``count_upper`` of
    :meth:`DPRelease.to_pandas` and of the published files).
    Fails closed (:class:`PrivacyCheckFailed`) if OpenDP's privacy map exceeds ``epsilon``.
    ``mechanism="gaussian"`` needs ``delta > 0`` and is ``(epsilon, delta)``-DP
    (:func:`~kerckhoffs.dp.mechanisms.gaussian_measurement`).

    With no ``levels`` (or ``"auto"``, or ``"auto,age:2"`` pinning some) the QI levels are
    chosen with DP (:func:`kerckhoffs.dp.select.choose_levels`: a greedy top-down search,
    each step OpenDP's noisy max, within ``min(max_cells, AUTO_MAX_CELLS)`` cells) spending
    the fraction ``selection`` of epsilon on the choice and the rest on the counts; the
    recorded privacy map is the sum of both, each round's recorded in ``noise.parts``. A
    choice with every QI at its root says so in the release's notes; no QI with a public
    domain is refused before any epsilon is spent. ``levels="age:2,sex:0"`` gives them
    (missing names: 0); ``levels="leaves"`` puts every column at its leaves.
    ``contributions=N`` with ``persons`` (each row's identifier) keeps at most ``N`` rows per
    person and computes every map at ``N`` rows (:mod:`kerckhoffs.dp.contributions`), so
    ``epsilon`` is per person.
    """
    refuse_missing_drop(table, "dp-histogram")
    table, rows = bound_contributions(table, persons, contributions)
    auto, pinned = parse_auto(levels)
    if not auto:
        levels = pinned
    eps_total = float(epsilon)
    choice: list[dict[str, Any]] | None = None
    if auto:
        if not (0 < float(selection) < 1):
            raise ParameterError(f"selection must be a fraction in (0, 1), got {selection!r}")
        eps_sel = eps_total * float(selection)
        epsilon = (eps_total - eps_sel) * (1 - 1e-12)  # the two maps' sum stays <= eps_total
        _, probe = count_measurement(1, epsilon, mechanism, neighbours, delta, rows)
        sa_level = pinned.pop(table.sa_name, 0)
        levels, choice = choose_levels(
            table,
            eps_sel / rows,
            count_scale=probe.scale,
            with_sa=with_sa,
            sa_level=sa_level,
            max_cells=min(max_cells, AUTO_MAX_CELLS),
            fixed=pinned,
        )
        choice = [selection_per_person(p, rows) if "privacy_map" in p else p for p in choice]
    domain, key = cell_domain(table, levels, with_sa=with_sa, max_cells=max_cells)
    measurement, noise = count_measurement(
        domain.size, epsilon, mechanism, neighbours, delta, contributions=rows
    )
    if choice is not None:
        counts_part = {
            "name": "counts",
            "epsilon": noise.epsilon,
            "scale": noise.scale,
            "privacy_map": noise.privacy_map,
        }
        noise = replace(
            noise,
            epsilon=eps_total,
            privacy_map=noise.privacy_map + choice[0]["privacy_map"],
            parts=(*choice, counts_part, *noise.parts),
            rho=with_pure_part(noise.rho, choice[0]["privacy_map"]),
        )
        if noise.privacy_map > eps_total:  # pragma: no cover (1e-12 headroom above)
            raise PrivacyCheckFailed(
                f"selection + counts privacy maps {noise.privacy_map} exceed {eps_total}"
            )
    if noise.privacy_map > noise.epsilon:  # pragma: no cover (count_measurement ensures it)
        raise PrivacyCheckFailed(
            f"OpenDP's privacy map {noise.privacy_map} exceeds epsilon {noise.epsilon}"
        )
    noise = replace(
        noise,
        accuracy=count_accuracy(noise.mechanism.value, [noise.scale], [domain.size], accuracy),
    )
    published = post_process(add_noise(true_counts(key, domain.size), measurement, noise))
    n_q = table.d
    frame, cells_table = domain_cells(domain, n_q, table.sa_name)
    frame[COUNT] = published
    axes = [
        {
            "role": "quasi" if i < n_q else "sensitive",
            "name": name,
            "kind": domain.kinds[i].value,
            "level": domain.levels[i],
        }
        for i, name in enumerate(domain.names)
    ]
    release = DPRelease(
        cells_table,
        Partition(np.arange(domain.size, dtype=np.int32)),
        Scheme.DP,
        provenance=provenance or Provenance("dp-histogram"),
        counts=frame,
        noise=noise,
        axes=axes,
        models=tuple(models),
    )
    if choice is not None:
        release = release.with_notes(selection_note(table, choice[0]["chosen"]))
    return release


__all__ = [
    "COUNT",
    "COUNTS",
    "LEAVES",
    "MAX_CELLS",
    "CellDomain",
    "DPRelease",
    "all_at_root",
    "cached_layout",
    "cell_domain",
    "cell_table",
    "domain_cells",
    "dp_histogram",
    "parse_auto",
    "parse_levels",
    "refuse_missing_drop",
    "selection_note",
    "true_counts",
]
