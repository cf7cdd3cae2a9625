"""Noisy count tables over a public cell domain: the DP release (scheme ``dp``; paper 004,
spec ``composition.md`` 3.8 ``laplace_histogram`` / ``contingency_table``).

The cell domain is the cross product of each quasi-identifier's nodes at a chosen hierarchy
level (a lattice node's generalized cells), optionally crossed with the sensitive attribute.
It must be *public*: a level's nodes come from a hierarchy the user gave in the schema, or
the level is the root (one cell, ``*``). A domain built from the data (distinct values
present, intervals from ``widths`` over the data's range) would tell which values occur, so
it is refused. EVERY cell of the domain is published, empty ones too (spec 3.8: releasing
only non-empty cells leaks).

Counting is one ``np.bincount`` over mixed-radix cell codes; the noise is OpenDP's
(:mod:`kerckhoffs.dp.mechanisms`); post-processing sees only the noisy vector. The published
files are ``counts.csv`` / ``counts.parquet`` (cell labels + noisy ``count``, cells in domain
order, a function of the public domain only) and ``release.json`` (epsilon, delta, neighbour
notion, sensitivity, mechanism, scale, OpenDP's privacy map, OpenDP version; never a seed,
the number of rows or a true count).

A :class:`DPRelease` is a :class:`~kerckhoffs.release.Release` whose table is the published
cell table itself (one row per cell, each its own group), in memory as when read back: no
statistic computed on it can reach the input rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Column, Kind, MissingPolicy, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    NoiseSpec,
    add_noise,
    count_measurement,
    parse_neighbours,
    post_process,
)
from kerckhoffs.errors import InputError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.differential_privacy import DPTarget
from kerckhoffs.release import (
    FORMAT,
    FORMAT_VERSION,
    Partition,
    Provenance,
    Release,
    Scheme,
    checked_models,
    checks_json,
    writable_models,
    write_release_files,
)

COUNT = "count"
COUNTS = "counts"
"""The published table's name (``counts.csv`` / ``counts.parquet``)."""
MAX_CELLS = 10_000_000
"""Largest cell domain built by default (``max_cells`` raises it)."""


@dataclass(frozen=True)
class CellDomain:
    """A public cell domain: for each axis (QIs, then optionally the SA) its name, kind,
    hierarchy level and node labels; cells are numbered in mixed radix, first axis most
    significant."""

    names: tuple[str, ...]
    kinds: tuple[Kind, ...]
    levels: tuple[int, ...]
    labels: tuple[np.ndarray, ...]
    with_sa: bool

    @property
    def radix(self) -> tuple[int, ...]:
        """Number of nodes on each axis."""
        return tuple(len(x) for x in self.labels)

    @property
    def size(self) -> int:
        """Number of cells."""
        return math.prod(self.radix)

    def frame(self) -> pd.DataFrame:
        """One row per cell, in cell-code order: each axis's node label (text)."""
        n = self.size
        out: dict[str, Any] = {}
        inner = n
        for name, lab in zip(self.names, self.labels, strict=True):
            inner //= len(lab)
            outer = n // (len(lab) * inner)
            out[name] = np.tile(np.repeat(np.asarray(lab, dtype=object), inner), outer)
        return pd.DataFrame(out)


def parse_levels(levels: Mapping[str, int] | str | None) -> dict[str, int]:
    """``{"age": 2, "zip": 1}`` from a mapping or the option text ``age:2,zip:1``."""
    if levels is None or levels == "":
        return {}
    items: list[tuple[str, object]]
    if isinstance(levels, Mapping):
        items = list(levels.items())
    else:
        items = []
        for part in str(levels).split(","):
            key, sep, text = part.partition(":")
            if not sep or not key.strip():
                raise ParameterError(f"levels {levels!r}: expected NAME:LEVEL,... e.g. age:2,zip:1")
            items.append((key.strip(), text.strip()))
    out: dict[str, int] = {}
    for name, raw in items:
        try:
            level = int(str(raw))
        except (TypeError, ValueError):
            raise ParameterError(f"levels: {name}:{raw} is not an integer level") from None
        if level < 0:
            raise ParameterError(f"levels: {name}:{level} must be 0 or more")
        out[str(name)] = level
    return out


def cell_domain(
    table: Table,
    levels: Mapping[str, int] | str | None = None,
    *,
    with_sa: bool = False,
    max_cells: int = MAX_CELLS,
) -> tuple[CellDomain, np.ndarray]:
    """The public cell domain and each row's cell code (int64).

    ``levels`` maps QI (and SA) names to hierarchy levels (0 = leaves; missing names: 0).
    A level is public if the schema gives the column a hierarchy file or the level is the
    root; anything else, an unknown name, a level above the hierarchy or a domain over
    ``max_cells`` cells is a one-line ParameterError.
    """
    lv = parse_levels(levels)
    columns = list(table.qi_columns) + ([table.sa_column] if with_sa else [])
    codes = [table.qi[:, j] for j in range(table.d)] + ([table.sa] if with_sa else [])
    known = [c.name for c in columns]
    unknown = sorted(set(lv) - set(known))
    if unknown:
        raise ParameterError(f"levels: no column {unknown[0]!r} in the cell domain (have {known})")
    names, kinds, used, labels, node_codes = [], [], [], [], []
    for col, code in zip(columns, codes, strict=True):
        h = col.hierarchy
        level = lv.get(col.name, 0)
        height = h.height if h is not None else 0
        if h is None or level > height:
            raise ParameterError(
                f"levels: column {col.name!r} has "
                + (f"levels 0..{height}, not {level}" if h is not None else "no hierarchy")
            )
        given = table.schema.column(col.name).hierarchy is not None
        if not given and level != height:
            raise ParameterError(
                f"column {col.name!r}: its cells at level {level} come from the data, not a "
                "hierarchy file, so the domain is not public; give the schema a hierarchy for "
                f"it or use its root (levels={col.name}:{height})"
            )
        names.append(col.name)
        kinds.append(col.kind)
        used.append(level)
        labels.append(np.asarray(h.node_labels(level)))
        node_codes.append(h.node_ids[level][col.leaves(code)])
    domain = CellDomain(tuple(names), tuple(kinds), tuple(used), tuple(labels), with_sa)
    if domain.size > max_cells:
        raise ParameterError(
            f"the cell domain has {domain.size:,} cells (more than max_cells={max_cells:,}); "
            "generalize with levels=NAME:LEVEL,... or raise max_cells"
        )
    key = np.zeros(table.n, dtype=np.int64)
    for radix, nc in zip(domain.radix, node_codes, strict=True):
        key = key * radix + nc
    return domain, key


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


@dataclass(eq=False, kw_only=True)
class DPRelease(Release):
    """A DP count table (scheme ``dp``): :attr:`counts` (cell labels + noisy ``count``, every
    cell of the public domain) and :attr:`noise` (the :class:`NoiseSpec` release.json
    records). Its :attr:`table` is the cell table, one row per cell, so the generic release
    machinery never touches input rows."""

    counts: pd.DataFrame = field(repr=False)
    noise: NoiseSpec
    axes: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        n = self.noise
        return (
            f"DPRelease({self.provenance.algorithm}, {n.cells:,} cells, {n.mechanism.value} "
            f"scale {n.scale:g}, epsilon {n.privacy_map:g} ({n.neighbours.value}))"
        )

    def privacy_loss(self) -> tuple[float, float]:
        """``(epsilon, delta)`` of this release under its neighbour notion
        (``noise.neighbours``: substitution, add-remove, or sensitive-value for dp-rr with
        perturb=sa, which is not DP under the other two): the privacy map OpenDP reported
        for the release's sensitivity, and the delta it was fixed at (0 for the pure
        epsilon-DP mechanisms: Laplace, geometric, randomized response; > 0 for the
        Gaussian)."""
        return (self.noise.privacy_map, self.noise.delta)

    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Compare the recorded privacy loss and neighbour notion with each DP target
        (:class:`~kerckhoffs.models.DifferentialPrivacy`: substitution or add/remove only;
        :class:`~kerckhoffs.models.LabelDifferentialPrivacy`); a group model (k, l, t, ...)
        is a one-line ParameterError: a DP release has no groups."""
        loss = self.privacy_loss()
        out = []
        for m in self._models(models):
            if not isinstance(m, DPTarget):
                raise ParameterError(
                    f"{m.name} ({m.parameter}) is a property of groups; a DP release publishes "
                    "noisy counts: check it with dp=EPS (or label-dp=EPS)"
                )
            out.append(m.evaluate_loss(loss, self.noise.neighbours))
        return out

    def published_numbering(self, cells: pd.DataFrame | None = None) -> np.ndarray:
        """Cells are published in domain order."""
        return np.arange(len(self.counts), dtype=np.int32)

    def frames(self, include_other: bool = False) -> dict[str, pd.DataFrame]:
        """``{"counts": ...}``: the published table."""
        if include_other:
            raise ParameterError("a DP release publishes counts only, never row-level columns")
        return {COUNTS: self.counts}

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Read the metadata and table about to be written back (:meth:`from_counts`) and
        check the models there; :class:`PrivacyCheckFailed` when one fails (fail closed)."""
        chosen = self._models(models)
        back = DPRelease.from_counts(self.counts, self.metadata())
        results = back.check(chosen)
        failed = [r for r in results if not r.satisfied]
        if failed:
            raise PrivacyCheckFailed(
                "release not written: " + "; ".join(r.summary() for r in failed)
            )
        return results

    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """``release.json``: format, scheme ``dp``, provenance, the cell axes, the noise
        record and the checks; no row count, no true count, no seed."""
        quasi = [a for a in self.axes if a["role"] == "quasi"]
        sa = [a for a in self.axes if a["role"] == "sensitive"]
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "scheme": Scheme.DP.value,
            "provenance": self.provenance.to_dict(),
            "quasi": [{k: a[k] for k in ("name", "kind", "level")} for a in quasi],
            "sensitive": (
                {k: sa[0][k] for k in ("name", "kind", "level")} | {"in_cells": True}
                if sa
                else {"name": self.table.sa_name, "kind": "categorical", "in_cells": False}
            ),
            "dp": self.noise.to_dict(),
            "checks": checks_json(checks, models),
        }

    def write(
        self,
        out_dir: str | Path,
        models: Sequence[PrivacyModel] | None = None,
        *,
        formats: tuple[str, ...] = ("csv", "parquet"),
        include_other: bool = False,
        overwrite: bool = False,
    ) -> list[ModelResult]:
        """Write ``counts.csv`` / ``counts.parquet`` and ``release.json`` (with the SHA-256
        of every file) if every DP target holds on the privacy loss recorded in the metadata
        about to be written; otherwise nothing is written and
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` is raised."""
        chosen = writable_models(self.models if models is None else models, formats)
        frames = self.frames(include_other)
        results = self.verify(chosen)
        write_release_files(out_dir, frames, self.metadata(results, chosen), formats, overwrite)
        return results

    @classmethod
    def from_counts(cls, counts: pd.DataFrame, meta: dict[str, Any]) -> DPRelease:
        """The release a published count table and its metadata describe (what
        :meth:`Release.from_published` returns for scheme ``dp``)."""
        where = "release.json"
        if not isinstance(meta.get("dp"), dict):
            raise InputError(f"{where}: field 'dp' is missing or not an object")
        try:
            noise = NoiseSpec.from_dict(meta["dp"], where)
        except ParameterError as e:
            raise InputError(str(e)) from None
        sa = meta.get("sensitive") or {}
        axes = [
            {
                "role": "quasi",
                "name": q["name"],
                "kind": q.get("kind", "categorical"),
                "level": q.get("level", 0),
            }
            for q in meta["quasi"]
        ]
        if sa.get("in_cells"):
            axes.append(
                {
                    "role": "sensitive",
                    "name": sa["name"],
                    "kind": sa.get("kind", "categorical"),
                    "level": sa.get("level", 0),
                }
            )
        names = [a["name"] for a in axes]
        missing = [c for c in [*names, COUNT] if c not in counts.columns]
        if missing:
            raise InputError(f"count table: column {missing[0]!r} is missing")
        if len(counts) != noise.cells:
            raise InputError(
                f"count table has {len(counts):,} cells, release.json says {noise.cells:,}"
            )
        raw = pd.to_numeric(counts[COUNT], errors="coerce").to_numpy(dtype=np.float64)
        if not (np.isfinite(raw).all() and (raw >= 0).all() and (raw == np.rint(raw)).all()):
            raise InputError("count table: counts must be non-negative integers")
        frame = counts[names].astype(str).reset_index(drop=True)
        if "marginal" in counts.columns:  # dp-marginals: which marginal each cell is in
            frame.insert(0, "marginal", counts["marginal"].astype(str).to_numpy(dtype=object))
        frame[COUNT] = raw.astype(np.int64)
        sa_name = str(sa.get("name", "sensitive"))
        table = cell_table(
            frame[names],
            [a["name"] for a in axes if a["role"] == "quasi"],
            sa_name if sa.get("in_cells") else None,
            sa_name,
        )
        prov = meta.get("provenance") or {}
        params = dict(prov.get("parameters") or {})
        recorded = str(meta["dp"].get("neighbours", ""))
        corrected = parse_neighbours(recorded) != noise.neighbours
        if corrected and "neighbours" in params:
            params["neighbours"] = noise.neighbours.value
        provenance = Provenance(
            prov.get("algorithm", "unknown"), params, prov.get("version", "unknown")
        )
        release = cls(
            table,
            Partition(np.arange(len(frame), dtype=np.int32)),
            Scheme.DP,
            provenance=provenance,
            counts=frame,
            noise=noise,
            axes=axes,
        )
        if corrected:
            release.notes.append(
                f"release.json records neighbours {recorded}, but its randomized response "
                "changes only each record's sensitive value (perturb=sa; QI cell totals exact): "
                f"read as {noise.neighbours.value} neighbours (label DP), not DP under "
                "substitution or add-remove"
            )
        release.models = checked_models(meta)
        return release


def _parse_auto(levels: Mapping[str, int] | str | None) -> tuple[bool, dict[str, int]]:
    """``(True, pinned levels)`` for ``auto`` / ``auto,age:2``; ``(False, {})`` otherwise."""
    if not isinstance(levels, str):
        return False, {}
    head, _, rest = levels.strip().partition(",")
    if head.strip().lower() != "auto":
        return False, {}
    return True, parse_levels(rest)


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


def cell_table(cells: pd.DataFrame, quasi: list[str], sa: str | None, sa_name: str) -> Table:
    """The cell table: one row per cell, each axis a categorical column of its labels (an
    SA left out of the cells is the constant ``*``)."""
    df = cells.copy()
    if sa is None:
        df[sa_name] = "*"
    cols = [Column(q, Role.QUASI, kind=Kind.CATEGORICAL) for q in quasi]
    cols.append(Column(sa_name, Role.SENSITIVE, kind=Kind.CATEGORICAL))
    return Table.encode(df, Schema(tuple(cols)), strict_sensitive=False)


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
) -> DPRelease:
    """An ``epsilon``-DP noisy count table of ``table`` over a public cell domain.

    Counts every cell (:func:`cell_domain`, :func:`true_counts`), adds OpenDP's noise with
    scale ``Δ/ε`` (``Δ`` = 2 under substitution, 1 under add/remove), clamps at 0 and rounds.
    Fails closed (:class:`PrivacyCheckFailed`) if OpenDP's privacy map exceeds ``epsilon``.
    ``mechanism="gaussian"`` needs ``delta > 0`` and is ``(epsilon, delta)``-DP
    (:func:`~kerckhoffs.dp.mechanisms.gaussian_measurement`).

    ``levels="auto"`` (or ``"auto,age:2"`` pinning some) chooses the QI levels with DP
    (:func:`kerckhoffs.dp.select.choose_levels`, OpenDP's noisy max) spending the fraction
    ``selection`` of epsilon on the choice and the rest on the counts; the recorded privacy
    map is the sum of both maps, each recorded in ``noise.parts``.
    """
    refuse_missing_drop(table, "dp-histogram")
    auto, pinned = _parse_auto(levels)
    eps_total = float(epsilon)
    choice: dict[str, Any] | None = None
    if auto:
        if not (0 < float(selection) < 1):
            raise ParameterError(f"selection must be a fraction in (0, 1), got {selection!r}")
        from kerckhoffs.dp.select import choose_levels

        eps_sel = eps_total * float(selection)
        epsilon = (eps_total - eps_sel) * (1 - 1e-12)  # the two maps' sum stays <= eps_total
        _, probe = count_measurement(1, epsilon, mechanism, neighbours, delta)
        sa_level = pinned.pop(table.sa_name, 0)
        levels, choice = choose_levels(
            table,
            eps_sel,
            count_scale=probe.scale,
            with_sa=with_sa,
            sa_level=sa_level,
            max_cells=max_cells,
            fixed=pinned,
        )
    domain, key = cell_domain(table, levels, with_sa=with_sa, max_cells=max_cells)
    measurement, noise = count_measurement(domain.size, epsilon, mechanism, neighbours, delta)
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
            privacy_map=noise.privacy_map + choice["privacy_map"],
            parts=(choice, counts_part, *noise.parts),
        )
        if noise.privacy_map > eps_total:  # pragma: no cover (1e-12 headroom above)
            raise PrivacyCheckFailed(
                f"selection + counts privacy maps {noise.privacy_map} exceed {eps_total}"
            )
    if noise.privacy_map > noise.epsilon:  # pragma: no cover (count_measurement ensures it)
        raise PrivacyCheckFailed(
            f"OpenDP's privacy map {noise.privacy_map} exceeds epsilon {noise.epsilon}"
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
    )
    release.models = tuple(models)
    return release


__all__ = [
    "COUNT",
    "COUNTS",
    "MAX_CELLS",
    "CellDomain",
    "DPRelease",
    "cached_layout",
    "cell_domain",
    "cell_table",
    "domain_cells",
    "dp_histogram",
    "parse_levels",
    "refuse_missing_drop",
    "true_counts",
]
