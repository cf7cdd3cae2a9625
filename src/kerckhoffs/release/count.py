"""A differentially private count table (scheme ``dp``; paper 004): every cell of a public
cell domain with its noisy count, and the noise record ``release.json`` keeps (epsilon,
delta, neighbour notion, sensitivity, mechanism, scale, OpenDP's privacy map, OpenDP
version; never a seed, the number of rows or a true count). How the counts are made is
:mod:`kerckhoffs.dp.counts`; this module is what is published and read back.

Each count comes with its interval at a stated level (:mod:`kerckhoffs.dp.accuracy`;
``release.json`` records the level, the half-widths and how they were computed, under
``dp.accuracy``), and ``dp.estimator`` says which estimator the counts are (``unbiased``: may
be negative; ``clamped`` for releases written before, which still read back).

A :class:`DPRelease` holds the published cell table itself as its :attr:`~DPRelease.table`
(one row per cell, each its own group), in memory as when read back: no statistic computed on
it can reach the input rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.accuracy import (
    ACCURACY_LEVEL,
    UNBIASED,
    cell_half_widths,
    check_level,
    count_accuracy,
    rr_intervals,
)
from kerckhoffs.dp.loss import PrivacyLoss
from kerckhoffs.dp.mechanisms import NoiseSpec, parse_neighbours
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.differential_privacy import DPTarget
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.release.contract import Release, refuse_failed
from kerckhoffs.release.format import COUNT, FORMAT, FORMAT_VERSION, Scheme
from kerckhoffs.release.integrity import checked_models
from kerckhoffs.release.partition import (
    Partition,
)
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.writer import checks_json, writable_models, write_release_files

COUNTS = "counts"
"""The published table's name (``counts.csv`` / ``counts.parquet``)."""
COUNT_LOWER = "count_lower"
"""Published column: the lower end of each noisy count's interval
(:mod:`kerckhoffs.dp.accuracy`)."""
COUNT_UPPER = "count_upper"
"""Published column: the upper end of each noisy count's interval."""
CONSISTENT = "consistent"
"""Published column of dp-marginals with ``consistent=True``: the counts post-processed to one
common total (clamped at 0, scaled, rounded); a second estimator beside ``count``, with no
stated interval."""
ESTIMATE = "estimate_count"
"""dp-rr: the unbiased estimate of the number of records in each cell (from the responses)."""
ESTIMATE_LOWER = "estimate_lower"
"""dp-rr: the lower end of the estimate's interval (Hoeffding; :mod:`kerckhoffs.dp.accuracy`)."""
ESTIMATE_UPPER = "estimate_upper"
"""dp-rr: the upper end of the estimate's interval."""
DERIVED = (COUNT_LOWER, COUNT_UPPER, ESTIMATE, ESTIMATE_LOWER, ESTIMATE_UPPER)
"""Published columns computed from ``count`` and release.json alone: read back, they are
recomputed and must match."""


@dataclass(frozen=True, eq=False)
class DPRelease(Release, schemes=(Scheme.DP,)):
    """A DP count table (scheme ``dp``): :attr:`counts` (cell labels + noisy ``count``, every
    cell of the public domain) and :attr:`noise` (the :class:`NoiseSpec` release.json
    records). Its :attr:`table` is the cell table and :attr:`partition` puts each cell in a
    group of its own, so code written for tables never touches input rows."""

    table: Table
    partition: Partition
    scheme: Scheme = Scheme.DP
    provenance: Provenance = field(default_factory=lambda: Provenance("manual"))
    counts: pd.DataFrame = field(kw_only=True, repr=False)
    noise: NoiseSpec = field(kw_only=True)
    axes: list[dict[str, Any]] = field(default_factory=list, repr=False, kw_only=True)
    published_metadata: dict[str, Any] | None = field(
        default=None, repr=False, compare=False, kw_only=True
    )
    notes: list[str] = field(default_factory=list, repr=False, compare=False, kw_only=True)
    models: tuple[PrivacyModel, ...] = field(default=(), compare=False, kw_only=True)
    sa_published: np.ndarray = field(init=False, repr=False, compare=False)
    """The cell table's SA column (the SA axis's labels, or ``*``): nothing is perturbed."""
    cells: None = field(default=None, init=False, repr=False, compare=False)
    """No cells of its own: the published cells are the count table's labels."""
    _hist: GroupHistogram | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if Scheme(self.scheme) != Scheme.DP:
            raise ValueError(f"a count release publishes by scheme dp, not {self.scheme!r}")
        object.__setattr__(self, "scheme", Scheme.DP)
        object.__setattr__(self, "sa_published", self.table.sa)
        if self.partition.n != self.table.n:
            raise ValueError(f"partition has {self.partition.n} rows, table has {self.table.n}")

    def __repr__(self) -> str:
        n = self.noise
        return (
            f"DPRelease({self.provenance.algorithm}, {n.cells:,} cells, {n.mechanism.value} "
            f"scale {n.scale:g}, epsilon {n.privacy_map:g} ({n.neighbours.value}))"
        )

    @property
    def levels_chosen(self) -> dict[str, Any] | None:
        """The record of a choice of levels made with DP (``chosen``, ``levels`` as text such
        as ``age:3 sex:*``, ``cells``, ``epsilon``, ``privacy_map``): the ``level selection``
        part of :attr:`noise`; None when the levels were given."""
        return next((p for p in self.noise.parts if p.get("name") == "level selection"), None)

    def privacy_loss(self) -> tuple[float, float]:
        """``(epsilon, delta)`` of this release under its neighbour notion
        (``noise.neighbours``: substitution, add-remove, or sensitive-value for dp-rr with
        perturb=sa, which is not DP under the other two): the privacy map OpenDP reported
        for the release's sensitivity, and the delta it was fixed at (0 for the pure
        epsilon-DP mechanisms: Laplace, geometric, randomized response; > 0 for the
        Gaussian)."""
        return (self.noise.privacy_map, self.noise.delta)

    def accounting(self) -> PrivacyLoss:
        """What a privacy ledger charges for this release (:mod:`kerckhoffs.dp.ledger`): its
        :meth:`privacy_loss`, neighbour notion, measure (zCDP for the Gaussian, with its
        rho), and the rows per person its map was computed for."""
        n = self.noise
        return PrivacyLoss(
            n.privacy_map, n.delta, n.neighbours.value, n.measure, n.rho, n.contributions
        )

    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Compare the recorded privacy loss and neighbour notion with each DP target
        (:class:`~kerckhoffs.models.DifferentialPrivacy`: substitution or add/remove only;
        :class:`~kerckhoffs.models.LabelDifferentialPrivacy`); a group model (k, l, t, ...)
        is a one-line ParameterError: a DP release has no groups."""
        loss = self.privacy_loss()
        out = []
        for m in self.chosen_models(models):
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

    def to_pandas(self) -> pd.DataFrame:
        """The published count table, for analysis in Python: one row per cell in domain
        order, the cell labels (and ``marginal`` for dp-marginals), ``count`` and its interval.

        Noisy counts (dp-histogram, dp-marginals): ``count`` is the unbiased noisy count (may
        be negative; ``noise.estimator``), ``count_lower``/``count_upper`` its interval at
        ``noise.accuracy["level"]`` (each covers its true count with at least that
        probability, cell by cell; :mod:`kerckhoffs.dp.accuracy`). dp-marginals with
        ``consistent=True`` adds ``consistent`` (one common total; no interval stated).
        dp-rr: ``count`` is of randomized responses; ``estimate_count`` estimates the number
        of records in the cell and ``estimate_lower``/``estimate_upper`` is its interval.
        A release written before intervals were stated has ``count`` only.

        >>> # dp_histogram(table, 1.0).to_pandas()[["count", "count_lower", "count_upper"]]
        """
        out = self.counts.copy()
        acc = self.noise.accuracy
        if acc is None:
            return out
        count = out[COUNT].to_numpy(dtype=np.int64)
        level = check_level(acc.get("level", ACCURACY_LEVEL))
        if acc.get("of") == "estimate":
            part = next((p for p in self.noise.parts if "keep_probability" in p), {})
            k, keep = part.get("categories"), part.get("keep_probability")
            if (
                not isinstance(k, int)
                or isinstance(k, bool)
                or k < 2
                or count.size % k
                or isinstance(keep, bool)
                or not isinstance(keep, int | float)
                or not 0 < keep < 1
            ):
                raise ParameterError("release.json: dp-rr parts do not describe the cells")
            est, lo, hi = rr_intervals(count, k, float(keep), level)
            out[ESTIMATE], out[ESTIMATE_LOWER], out[ESTIMATE_UPPER] = est, lo, hi
            return out
        h = cell_half_widths(acc, count.size)
        out[COUNT_LOWER], out[COUNT_UPPER] = count - h, count + h
        return out

    def frames(self, include_other: bool = False) -> dict[str, pd.DataFrame]:
        """``{"counts": ...}``: the published table (:meth:`to_pandas`: counts and their
        intervals)."""
        if include_other:
            raise ParameterError("a DP release publishes counts only, never row-level columns")
        return {COUNTS: self.to_pandas()}

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Read the metadata and table about to be written back (:meth:`from_counts`) and
        check the models there; :class:`PrivacyCheckFailed` when one fails (fail closed)."""
        chosen = self.chosen_models(models)
        back = DPRelease.from_counts(self.counts, self.metadata())
        results = back.check(chosen)
        refuse_failed(results)
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
        signed = noise.estimator == UNBIASED  # unbiased counts may be negative
        if not (
            np.isfinite(raw).all() and (signed or (raw >= 0).all()) and (raw == np.rint(raw)).all()
        ):
            kind = "integers" if signed else "non-negative integers"
            raise InputError(f"count table: counts must be {kind}")
        frame = counts[names].astype(str).reset_index(drop=True)
        if "marginal" in counts.columns:  # dp-marginals: which marginal each cell is in
            frame.insert(0, "marginal", counts["marginal"].astype(str).to_numpy(dtype=object))
        frame[COUNT] = raw.astype(np.int64)
        if CONSISTENT in counts.columns:
            second = pd.to_numeric(counts[CONSISTENT], errors="coerce").to_numpy(np.float64)
            if not (np.isfinite(second).all() and (second == np.rint(second)).all()):
                raise InputError(f"count table: column {CONSISTENT!r} must hold integers")
            frame[CONSISTENT] = second.astype(np.int64)
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
            models=checked_models(meta),
        )
        _check_derived(release, counts)
        if corrected:
            notes = [
                f"release.json records neighbours {recorded}, but its randomized response "
                "changes only each record's sensitive value (perturb=sa; QI cell totals exact): "
                f"read as {noise.neighbours.value} neighbours (label DP), not DP under "
                "substitution or add-remove"
            ]
            release = release.with_notes(notes)
        return release

    @classmethod
    def read_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> DPRelease:
        """A count table read back (:meth:`Release.from_frames`); ``schema`` and
        ``providers`` are not used: the cells are the published labels, no row is published."""
        if COUNTS not in frames:
            raise InputError("DP release: no count table")
        # what the seed-replay attack reads
        return cls.from_counts(frames[COUNTS], meta).with_published_metadata(meta)


def _check_derived(release: DPRelease, counts: pd.DataFrame) -> None:
    """A published interval or estimate column must be what ``count`` and release.json give
    (:meth:`DPRelease.to_pandas`); otherwise a one-line InputError naming the column."""
    present = [c for c in DERIVED if c in counts.columns]
    if release.noise.accuracy is None:
        if present:
            raise InputError(f"count table: column {present[0]!r} but no dp.accuracy")
        return
    try:
        expected = release.to_pandas()
        _check_stated_widths(release.noise)
    except ParameterError as e:
        raise InputError(str(e)) from None
    for col in present:
        got = pd.to_numeric(counts[col], errors="coerce").to_numpy(dtype=np.float64)
        want = (
            expected[col].to_numpy(dtype=np.float64)
            if col in expected.columns
            else np.full(got.size, np.nan)
        )
        if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
            raise InputError(
                f"count table: column {col!r} does not match the counts and the accuracy "
                "release.json records"
            )


def _check_stated_widths(noise: NoiseSpec) -> None:
    """The half-widths release.json states must be those OpenDP's accuracy functions give
    for its mechanism, scales and level (:func:`~kerckhoffs.dp.accuracy.count_accuracy`):
    an interval is a claim, so it is recomputed, not trusted. A one-line ParameterError
    otherwise."""
    acc = noise.accuracy
    if acc is None or acc.get("of") == "estimate":
        return
    marginals = [p for p in noise.parts if p.get("name") == "marginal"]
    raw = [p.get("scale") for p in marginals] if marginals else [noise.scale]
    scales = [float(v) for v in raw if isinstance(v, int | float) and not isinstance(v, bool)]
    runs = acc.get("cells")
    if len(scales) != len(raw) or not isinstance(runs, list):
        raise ParameterError("release.json: dp.parts scales are not numbers")
    level = acc.get("level", ACCURACY_LEVEL)
    want = count_accuracy(noise.mechanism.value, scales, runs, level)
    if want["half_width"] != acc.get("half_width"):
        raise ParameterError(
            "release.json: dp.accuracy.half_width is not what OpenDP's accuracy gives for "
            f"the recorded scale and level ({want['half_width'][:3]})"
        )


def cell_table(cells: pd.DataFrame, quasi: list[str], sa: str | None, sa_name: str) -> Table:
    """The cell table: one row per cell, each axis a categorical column of its labels (an
    SA left out of the cells is the constant ``*``)."""
    df = cells.copy()
    if sa is None:
        df[sa_name] = "*"
    cols = [Column(q, Role.QUASI, kind=Kind.CATEGORICAL) for q in quasi]
    cols.append(Column(sa_name, Role.SENSITIVE, kind=Kind.CATEGORICAL))
    return Table.encode(df, Schema(tuple(cols)), strict_sensitive=False)


__all__ = [
    "CONSISTENT",
    "COUNT",
    "COUNTS",
    "COUNT_LOWER",
    "COUNT_UPPER",
    "ESTIMATE",
    "ESTIMATE_LOWER",
    "ESTIMATE_UPPER",
    "DPRelease",
    "cell_table",
]
