"""Partitions and releases: the one representation every algorithm, check and attack shares.

A :class:`Partition` is a group id per row. A :class:`Release` is a partition of a
:class:`~kerckhoffs.data.table.Table`, a publishing scheme, the published SA column (equal to
the original unless an algorithm perturbs it, as MASK does) and provenance (DESIGN.md
section 2). It materializes as

- *generalization*: one table, each row's QI cells replaced by its group's cells: the
  ``[lo-hi]`` interval for numeric columns (the value when lo = hi), the lowest common
  hierarchy node for categorical ones; plus the published SA and a ``group`` column;
- *bucketization* (Anatomy, Xiao & Tao 2006): a QI table (original QIs + group id) and an
  SA table (group id, SA value, count).

Rows are written sorted by group and, inside a group, by published SA (generalization) or
QI codes (bucketization), so the file order carries nothing the groups do not.

:meth:`Release.write` is fail-closed: it materializes the frames, reads them back with the
same code that reads other tools' releases (:meth:`Release.from_frames`) and writes the files
only if every requested privacy model holds on what was read back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from kerckhoffs.data import csv_cells, manifest
from kerckhoffs.data.external import read_external
from kerckhoffs.data.io import (
    read_parquet_texts_as_categories,
    read_regular,
    read_table,
    release_memory,
    write_csv,
)
from kerckhoffs.data.output import output_directory
from kerckhoffs.data.schema import Column, Kind, Role, Schema, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import (
    NEEDS_SCHEMA,
    NO_VERIFY_HINT,
    WITH_SCHEMA,
    InputError,
    ParameterError,
    PrivacyCheckFailed,
    input_error,
)
from kerckhoffs.models.base import ModelResult, PrivacyModel, model_classes
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.scope import with_scope

GROUP = "group"
COUNT = "count"
META = "release.json"
FORMAT = "kerckhoffs-release"
FORMAT_VERSION = 2
SEED_KEYS = frozenset({"seed", "random_state", "rng", "random_seed"})
"""Names under which metadata could reveal a seed (refused on write, reported by audit)."""


class Scheme(StrEnum):
    """How a release publishes its groups."""

    GENERALIZATION = "generalization"
    BUCKETIZATION = "bucketization"
    DP = "dp"
    """A noisy count table over a public cell domain (paper 004; :mod:`kerckhoffs.dp.counts`)."""


def _version() -> str:
    from kerckhoffs import __version__

    return __version__


@dataclass(frozen=True, eq=False)
class Partition:
    """Group id per row; ids are ``0..n_groups-1`` and every id has at least one row.

    Anything else is refused with a one-line ``ValueError`` naming the first id with no row
    (or a negative id): a gap would be an empty group, which every per-group statistic would
    count (``Partition([0, 0, 7, 7])`` would have six empty groups and k = 0).
    :meth:`from_labels` takes arbitrary labels; :meth:`canonical` orders ids by first
    appearance.
    """

    group: np.ndarray

    def __post_init__(self) -> None:
        g = np.asarray(self.group)
        if g.ndim != 1:
            raise ValueError("a partition is one group id per row")
        n = g.shape[0]
        if n:
            if g.dtype.kind not in "iub":
                raise ValueError(f"group ids must be integers, got dtype {g.dtype}")
            lo, hi = int(g.min()), int(g.max())
            if lo < 0:
                raise ValueError(
                    f"group id {lo} is negative: ids must be 0..n_groups-1 "
                    "(Partition.from_labels relabels arbitrary labels)"
                )
            # n rows use at most n ids, so an id >= n leaves one of 0..n-1 unused: counting
            # the ids below n finds it without a bincount as long as the largest id
            used = np.bincount(g if hi < n else g[g < n], minlength=min(hi + 1, n))
            missing = np.flatnonzero(used == 0)
            if missing.size:
                raise ValueError(
                    f"group ids must be 0..n_groups-1 with every id used: id {missing[0]} has "
                    f"no row (largest id {hi}; Partition.from_labels relabels arbitrary labels)"
                )
        object.__setattr__(self, "group", g.astype(np.int32, copy=False))

    @classmethod
    def from_labels(cls, labels: np.ndarray | list) -> Partition:
        """Canonical partition from any hashable labels (relabelled by first appearance)."""
        codes, _ = pd.factorize(np.asarray(labels), sort=False)
        if (codes < 0).any():
            raise ValueError("group labels must not be missing")
        return cls(codes.astype(np.int32))

    @classmethod
    def from_columns(cls, codes: np.ndarray) -> Partition:
        """Rows with identical code vectors (an int array [n, d]) form one group.

        Columns are folded into one int64 key (mixed radix, re-compressed by factorize
        whenever the next column could overflow), so this is a few factorizes of int64 arrays;
        the key is updated in place (one int64 array of temporaries, however many columns:
        Mondrian folds 10M-row tables with it). Group ids are in order of first appearance.
        """
        codes = np.asarray(codes)
        if codes.ndim == 1:
            codes = codes[:, None]
        n = codes.shape[0]
        key = np.zeros(n, dtype=np.int64)
        span = 1
        for j in range(codes.shape[1]):
            col = codes[:, j]
            radix = int(col.max()) + 1 if n else 1
            if span * radix >= 2**62:
                folded, uniques = pd.factorize(key)
                key = folded.astype(np.int64, copy=False)
                span = max(len(uniques), 1)
            key *= radix
            key += col
            span *= radix
        return cls(pd.factorize(key)[0].astype(np.int32))

    @classmethod
    def by_qi(cls, table: Table) -> Partition:
        """Each distinct QI vector is a group: the table published as it is."""
        return cls.from_columns(table.qi)

    @classmethod
    def by_levels(cls, table: Table, levels: dict[str, int]) -> Partition:
        """Groups of a full-domain generalization: each QI cut at a hierarchy level.

        ``levels`` maps QI names to a level (0 = leaf; missing names stay at 0). Numeric QIs
        need a hierarchy (or ``widths``) in the schema to be cut above level 0.
        """
        unknown = sorted(set(levels) - set(table.qi_names))
        if unknown:
            raise InputError(f"no quasi-identifier {unknown[0]!r} (have {table.qi_names})")
        cols = []
        for j, col in enumerate(table.qi_columns):
            level = int(levels.get(col.name, 0))
            if level == 0:
                cols.append(table.qi[:, j])
                continue
            if col.hierarchy is None:
                raise InputError(f"column {col.name!r} has no hierarchy to generalize with")
            if not 0 <= level <= col.hierarchy.height:
                raise InputError(
                    f"column {col.name!r}: level {level} outside 0..{col.hierarchy.height}"
                )
            node = col.hierarchy.node_ids[level]
            cols.append(node[col.leaves(table.qi[:, j])])
        return cls.from_columns(np.stack(cols, axis=1))

    @classmethod
    def single(cls, n: int) -> Partition:
        """Every row in one group."""
        return cls(np.zeros(n, dtype=np.int32))

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.group.shape[0])

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return int(self.group.max()) + 1 if self.n else 0

    @property
    def sizes(self) -> np.ndarray:
        """Rows per group."""
        return np.bincount(self.group, minlength=self.n_groups)

    def order(self) -> np.ndarray:
        """Row indices sorted by group (stable), with :meth:`starts` the group boundaries."""
        return stable_order(self.group)

    def starts(self) -> np.ndarray:
        """Offset of each group's first row in :meth:`order`."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def groups(self) -> list[np.ndarray]:
        """The row indices of each group (a list; for tests and small tables)."""
        return np.split(self.order(), np.cumsum(self.sizes)[:-1])

    def canonical(self) -> Partition:
        """The same partition with ids relabelled by first appearance."""
        return Partition.from_labels(self.group)

    def same_as(self, other: Partition) -> bool:
        """Whether both put the same rows together (ids may differ)."""
        return self.n == other.n and np.array_equal(self.canonical().group, other.canonical().group)


@dataclass(frozen=True)
class Provenance:
    """Who made a release and how: algorithm, its parameters, library version.

    Never the seed of a randomized algorithm: an adversary who knows the algorithm and its
    seed re-runs it on each candidate table and undoes the random choices (DESIGN.md section
    5; :mod:`kerckhoffs.randomness`).
    """

    algorithm: str
    parameters: dict[str, Any] = field(default_factory=dict)
    version: str = field(default_factory=_version)

    def __post_init__(self) -> None:
        seeds = sorted(k for k in self.parameters if k.lower() in SEED_KEYS)
        if seeds:
            raise ValueError(f"provenance must not carry a seed (parameter {seeds[0]!r})")

    def models(self) -> list[PrivacyModel]:
        """The privacy models the algorithm recorded as data: ``parameters["models"]``, a
        list of :meth:`PrivacyModel.to_dict` records (a one-line ParameterError if one is
        malformed). Releases written before models were recorded as data (release.json
        format_version 2) held one ``{model name: display string}`` parameter per model, e.g.
        ``"k-anonymity": "k=5"``; those are read by :meth:`PrivacyModel.from_legacy`. Empty
        when the algorithm recorded no models (most record their own numeric parameters)."""
        recorded = self.parameters.get("models")
        if isinstance(recorded, list):
            return [PrivacyModel.from_dict(m) for m in recorded]
        known = model_classes()
        return [
            PrivacyModel.from_legacy(name, text)
            for name, text in self.parameters.items()
            if name in known and isinstance(text, str)
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for the JSON metadata."""
        return {
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "version": self.version,
        }


@dataclass(eq=False)
class Release:
    """A partition of a table, published under a scheme (see the module docstring)."""

    table: Table
    partition: Partition
    scheme: Scheme = Scheme.GENERALIZATION
    sa_published: np.ndarray = None  # type: ignore[assignment]  # None: the table's own SA
    provenance: Provenance = field(default_factory=lambda: Provenance("manual"))
    cells: pd.DataFrame | None = field(default=None, repr=False)
    _hist: GroupHistogram | None = field(default=None, repr=False)
    published_metadata: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The metadata exactly as read from the files (None for a release made in-process):
    what an adversary reading the release sees, for audits such as ``seed-replay``."""
    notes: list[str] = field(default_factory=list, repr=False, compare=False)
    """What the reader of a published release should know (e.g. files not verified)."""
    models: tuple[PrivacyModel, ...] = field(default=(), compare=False)
    """The privacy models the release was made for: :meth:`check`, :meth:`verify` and
    :meth:`write` use them when given none (:func:`kerckhoffs.anonymize` sets them)."""

    def __repr__(self) -> str:
        models = ", ".join(m.parameter for m in self.models) or "none recorded"
        return (
            f"Release({self.provenance.algorithm}, {self.scheme.value}, {self.table.n:,} rows, "
            f"{self.partition.n_groups:,} groups; models: {models})"
        )

    def __post_init__(self) -> None:
        self.scheme = Scheme(self.scheme)
        if self.partition.n != self.table.n:
            raise ValueError(f"partition has {self.partition.n} rows, table has {self.table.n}")
        if self.cells is not None and len(self.cells) != self.partition.n_groups:
            raise ValueError(
                f"cells has {len(self.cells)} rows, the partition {self.partition.n_groups} groups"
            )
        if self.sa_published is None:
            self.sa_published = self.table.sa
        elif self.sa_published.shape != self.table.sa.shape:
            raise ValueError("sa_published must have one value per row")

    @property
    def perturbed(self) -> np.ndarray:
        """Rows whose published SA differs from the original."""
        return np.asarray(self.sa_published != self.table.sa, dtype=bool)

    def privacy_loss(self) -> tuple[float, float] | None:
        """``(epsilon, delta)`` of a differentially private release (scheme ``dp``: the
        privacy map OpenDP reported, as ``release.json`` records it); None for a release of
        groups, whose privacy is not a loss that composes (paper 004)."""
        return None

    # -- statistics --------------------------------------------------------------------------
    def histogram(self) -> GroupHistogram:
        """Per-group counts of the *published* SA (computed once)."""
        if self._hist is None:
            t = self.table
            mode = t.schema.sensitive_mode
            self._hist = GroupHistogram.from_codes(
                self.partition.group,
                self.sa_published,
                self.partition.n_groups,
                t.n_sa,
                t.sensitive,
                mode,
                t.sa_column.kind,
                t.provider,
                0 if t.provider_values is None else len(t.provider_values),
            )
        return self._hist

    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Evaluate ``models`` (default: the models the release was made for) on its groups."""
        hist = self.histogram()
        chosen = self._models(models)
        return with_scope([m.evaluate(hist) for m in chosen], chosen, self.table)

    def _models(self, models: Sequence[PrivacyModel] | None) -> list[PrivacyModel]:
        chosen = list(self.models if models is None else models)
        if not chosen:
            raise ParameterError(
                "no privacy model to check: this release records none; pass models, e.g. "
                "[KAnonymity(5)]"
            )
        return chosen

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """The independent check :meth:`write` makes: materialize the files' tables, read them
        back as another tool's release would be read (:meth:`from_frames`) and evaluate the
        models there, not on the algorithm's own arrays. Raises
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` when one fails (fail closed)."""
        chosen = self._models(models)
        frames, rows = self._frames_and_rows(False)
        return self._verified(chosen, frames, self.metadata(), self._providers_of(chosen, rows))

    def _providers_of(self, models: Sequence[PrivacyModel], rows: np.ndarray) -> np.ndarray | None:
        """The provider of each published row, when a model needs it (m-privacy): the files
        never hold it, so the independent check gets it beside them, in file order."""
        t = self.table
        if not any(m.needs_providers for m in models) or t.provider is None:
            return None
        assert t.provider_values is not None
        return np.asarray(t.provider_values)[t.provider[rows]]

    @staticmethod
    def _verified(
        models: list[PrivacyModel],
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        providers: np.ndarray | None = None,
    ) -> list[ModelResult]:
        results = Release.from_frames(frames, meta, providers=providers).check(models)
        failed = [r for r in results if not r.satisfied]
        if failed:
            raise PrivacyCheckFailed(
                "release not written: " + "; ".join(r.summary() for r in failed)
            )
        return results

    def group_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest code of each QI in each group: two int32 [groups, d]."""
        order = self.partition.order()
        starts = self.partition.starts()
        sorted_qi = self.table.qi[order]
        lo = np.minimum.reduceat(sorted_qi, starts, axis=0)
        hi = np.maximum.reduceat(sorted_qi, starts, axis=0)
        return lo, hi

    def generalized_cells(self) -> pd.DataFrame:
        """Each group's published QI cells, one row per group (generalization scheme).

        By default the tightest cells (interval / lowest common node of the group's rows);
        an algorithm that decides its cells itself passes them as ``cells`` (full-domain
        generalization publishes every group at its lattice node's levels).
        """
        if self.cells is not None:
            return self.cells
        lo, hi = self.group_bounds()
        return pd.DataFrame(
            {
                col.name: pd.array(col.generalize(lo[:, j], hi[:, j]), dtype="str")
                for j, col in enumerate(self.table.qi_columns)
            }
        )

    # -- materialization ---------------------------------------------------------------------
    def published_numbering(self, cells: pd.DataFrame | None = None) -> np.ndarray:
        """The id each group is published under: groups ranked by what the files show of them
        (``cells``: the generalized cells, when the caller has them already).

        The partition numbers groups by the first appearance of a row in the anonymizer's
        input, so publishing those ids would tell an adversary who knows the input order
        (a hospital's admission order, a file sorted by name) which group holds its first
        rows. Published ids are instead ranks of the groups' published content: generalized
        cells (as text), then size and the published SA multiset; for bucketization the
        smallest member QI vector, size, the SA multiset and the multiset of member QI vectors.
        Groups that tie show the same content, so their order reveals nothing.
        """
        part = self.partition
        n_groups = part.n_groups
        if n_groups == 0:
            return np.zeros(0, dtype=np.int32)
        order, starts = part.order(), part.starts()
        sa_hash = np.add.reduceat(mix64(self.sa_published[order].astype(np.uint64)), starts)
        keys: list[np.ndarray] = []
        if self.scheme == Scheme.GENERALIZATION:
            cells = self.generalized_cells() if cells is None else cells
            keys += [pd.factorize(cells[c].astype(str), sort=True)[0] for c in cells.columns]
            keys += [part.sizes, sa_hash]
        else:
            qi = self.table.qi
            by_qi = stable_order(part.group, *(qi[:, j] for j in range(qi.shape[1])))
            first = by_qi[starts]
            row = np.zeros(qi.shape[0], dtype=np.uint64)
            for j in range(qi.shape[1]):
                row = mix64(row ^ (qi[:, j].astype(np.uint64) + np.uint64(j << 40)))
            members = np.add.reduceat(row[order], starts)
            keys += [qi[first, j] for j in range(qi.shape[1])]
            keys += [part.sizes, sa_hash, members]
        rank = np.lexsort(keys[::-1])  # the first key is the primary one
        published = np.empty(n_groups, dtype=np.int32)
        published[rank] = np.arange(n_groups, dtype=np.int32)
        return published

    def published_group(self) -> np.ndarray:
        """Each row's group id as the files publish it (:meth:`published_numbering`)."""
        return self.published_numbering()[self.partition.group]

    def frames(self, include_other: bool = False) -> dict[str, pd.DataFrame]:
        """The published tables: ``{"release": ...}`` or ``{"qit": ..., "st": ...}``, with
        groups under their published ids (:meth:`published_numbering`)."""
        return self._frames_and_rows(include_other)[0]

    def published_providers(self) -> np.ndarray:
        """The data provider of each published row, in file order: what ``anonymize
        --provider-rows`` writes (:mod:`kerckhoffs.data.provider_rows`), never the release."""
        t = self.table
        if t.provider is None or t.provider_values is None:
            raise ParameterError("this release's table has no provider column")
        return np.asarray(t.provider_values)[t.provider[self.published_rows()]]

    def published_rows(self) -> np.ndarray:
        """The row of :attr:`table` behind each row of the published row table (the release
        table of a generalization, the QI table of a bucketization), in file order."""
        return self._frames_and_rows(False)[1]

    def _frames_and_rows(
        self, include_other: bool, compact: bool = False
    ) -> tuple[dict[str, pd.DataFrame], np.ndarray]:
        """The published tables and the row of :attr:`table` behind each published row.

        ``compact`` (for :meth:`write`): text columns of the release table that pandas holds
        as ``str`` (the QI cells, the SA) come as categoricals of the same text instead, a
        code per row rather than a string; :func:`write_release_files` writes them as text,
        a Parquet row group at a time, so the files are the same bytes.
        """
        t = self.table
        cells = self.generalized_cells() if self.scheme == Scheme.GENERALIZATION else None
        numbering = self.published_numbering(cells)
        own = self.partition.group  # the ids that index cells and histograms
        group = numbering[own]
        if self.scheme == Scheme.GENERALIZATION:
            order = stable_order(group, self.sa_published)
            assert cells is not None
            rows_group = own[order]
            if compact:
                df = pd.DataFrame({GROUP: group[order]})
                for c in cells.columns:
                    if cells[c].dtype == TEXT_DTYPE:
                        codes, labels = pd.factorize(cells[c])
                        df[c] = pd.Categorical.from_codes(codes[rows_group], categories=labels)
                    else:
                        df[c] = cells[c].iloc[rows_group].reset_index(drop=True)
            else:
                df = cells.iloc[rows_group].reset_index(drop=True)
                df.insert(0, GROUP, group[order])
            # the SA's few values as a pandas array once, then taken row by row (the dtype
            # pandas infers for the decoded column, without converting a million objects)
            sa_values = pd.Series(t.sa_column.values).array
            if compact and sa_values.dtype == TEXT_DTYPE and pd.Index(sa_values).is_unique:
                df[t.sa_name] = pd.Categorical.from_codes(
                    self.sa_published[order], categories=pd.Index(sa_values)
                )
            else:
                df[t.sa_name] = sa_values.take(self.sa_published[order])
            if include_other and t.other is not None:
                df = pd.concat([df, t.other.iloc[order].reset_index(drop=True)], axis=1)
            return {"release": df}, order
        order = stable_order(group, *(t.qi[:, j] for j in range(t.d)))
        qit = pd.DataFrame({GROUP: group[order]})
        for j, col in enumerate(t.qi_columns):
            qit[col.name] = col.decode(t.qi[order, j])
        if include_other and t.other is not None:
            qit = pd.concat([qit, t.other.iloc[order].reset_index(drop=True)], axis=1)
        counts = np.empty_like(self.histogram().counts)
        counts[numbering] = self.histogram().counts
        g_idx, s_idx = np.nonzero(counts)
        st = pd.DataFrame(
            {
                GROUP: g_idx.astype(np.int32),
                t.sa_name: t.sa_column.decode(s_idx),
                COUNT: counts[g_idx, s_idx],
            }
        )
        return {"qit": qit, "st": st}, order

    def to_pandas(self, order: str = "input") -> pd.DataFrame | Bucketized:
        """The release as pandas objects, for analysis in Python.

        Generalization: one DataFrame with the ``group`` column (the published ids), each QI's
        published cell and the SA as published. A numeric QI whose cell is the group's
        tightest interval (every algorithm but full-domain generalization, which publishes
        hierarchy levels) becomes a pandas ``Interval`` column (closed on both sides: ``[20-29]``
        is ``[20, 29]``); other cells are ``category`` columns of the published text.
        ``order="input"``: one row per input row, in input order, with the input DataFrame's
        index (rows the schema's missing-value policy dropped are absent); ``order="group"``:
        the rows as the files list them (by group), with a fresh index.

        Bucketization: a :class:`Bucketized` pair ``(qit, st)``: the QI table (exact QIs and
        ``group``; input order and index with ``order="input"``) and the SA table (``group``,
        SA value, ``count``), whose pairing with rows the release does not publish.
        """
        if order not in {"input", "group"}:
            raise ParameterError(f"order must be 'input' or 'group', got {order!r}")
        t = self.table
        group = self.published_group()
        index = t.index if t.index is not None else pd.RangeIndex(t.n)
        if self.scheme == Scheme.BUCKETIZATION:
            frames = self.frames()
            if order == "group":
                return Bucketized(frames["qit"], frames["st"])
            qit = pd.DataFrame({GROUP: group}, index=index)
            for j, col in enumerate(t.qi_columns):
                qit[col.name] = col.decode(t.qi[:, j])
            return Bucketized(qit, frames["st"])
        own = self.partition.group
        cells = self.generalized_cells()
        tight = self.cells is None
        lo, hi = self.group_bounds() if tight else (None, None)
        df = pd.DataFrame({GROUP: group}, index=index)
        for j, col in enumerate(t.qi_columns):
            numeric = col.kind == Kind.NUMERIC and np.issubdtype(
                np.asarray(col.values).dtype, np.number
            )
            if tight and numeric:
                assert lo is not None and hi is not None
                values = np.asarray(col.values)
                df[col.name] = pd.arrays.IntervalArray.from_arrays(
                    values[lo[own, j]], values[hi[own, j]], closed="both"
                )
            else:
                labels = np.asarray(cells[col.name].astype(str))
                df[col.name] = pd.Categorical.from_codes(*_codes_and_categories(labels, own))
        df[t.sa_name] = t.sa_column.decode(self.sa_published)
        if order == "group":
            rows = stable_order(group, self.sa_published)
            df = df.iloc[rows].reset_index(drop=True)
        return df

    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """The JSON provenance written beside the tables (no timestamps: same input, same bytes).

        ``checks`` (with the ``models`` they checked, recorded as data) are the independent
        checks that passed: a release read back remembers its models from them.

        It never says how many SA values an algorithm perturbed: that count is what MASK's
        safety argument (paper 001, Theorem 4) assumes the reader cannot know.
        """
        t = self.table
        sv = t.schema.sensitive_values
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "scheme": self.scheme.value,
            "provenance": self.provenance.to_dict(),
            "quasi": [{"name": c.name, "kind": c.kind.value} for c in t.qi_columns],
            "sensitive": {"name": t.sa_name, "kind": t.sa_column.kind.value},
            "sensitive_values": sorted(sv) if sv is not None else None,
            "sensitive_mode": t.schema.sensitive_mode.value,
            "rows": t.n,
            "groups": self.partition.n_groups,
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
        """Write the release to ``out_dir`` if every model (default: the models it was made
        for) holds on the materialized files.

        The check is independent of the algorithm: the files are written into a staging
        directory, read back (:func:`write_release_files`: the Parquet file, the CSV verified
        by its SHA-256 against the table read back) and rebuilt by :meth:`from_frames`, and the
        models are evaluated on that. If any fails, nothing is written and
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` is raised. ``release.json``
        records the SHA-256 of every file and of itself (:mod:`kerckhoffs.data.manifest`), so
        a release edited afterwards is refused when read back. An existing ``out_dir`` is
        replaced only with ``overwrite`` and only if it is a kerckhoffs release holding nothing
        else (:mod:`kerckhoffs.data.output`).
        """
        chosen = writable_models(self.models if models is None else models, formats)
        release_memory()  # what the algorithm freed, before the release tables are built
        frames, rows = self._frames_and_rows(include_other, compact=True)
        text = {
            name: [c for c in df.columns if c in self._compact_names() and _is_categorical(df[c])]
            for name, df in frames.items()
        }
        providers = self._providers_of(chosen, rows)
        del rows
        results: list[ModelResult] = []

        def check(written: dict[str, pd.DataFrame]) -> dict[str, Any]:
            results.extend(self._verified(chosen, written, self.metadata(), providers))
            return self.metadata(results, chosen)

        write_release_files(
            out_dir, frames, self.metadata(), formats, overwrite, check=check, text=text
        )
        return results

    def _compact_names(self) -> set[str]:
        """Columns :meth:`_frames_and_rows` may turn into categoricals (QI cells and SA)."""
        return {*self.table.qi_names, self.table.sa_name}

    # -- reading back ------------------------------------------------------------------------
    @classmethod
    def from_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None = None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> Release:
        """Rebuild a release from published tables and their metadata.

        ``providers``: the data provider of each row of the release table, in file order
        (paper 003's collaborative setting; the files never hold it), so that m-privacy can be
        checked; see :meth:`with_providers`.

        Generalization: groups are the ``group`` column when present, else the rows with
        identical QI cells (what an adversary sees as one QI-group); the QI columns become
        categorical columns over the published cells. Bucketization: the QI table keeps its
        original values; since the SA table hides which row holds which value, each group's
        SA values are laid on its rows in a fixed order: per-group histograms are exact, the
        row-level pairing is not information the release contains.
        """
        scheme = Scheme(meta.get("scheme", Scheme.GENERALIZATION))
        if scheme == Scheme.DP:
            from kerckhoffs.dp.counts import COUNTS, DPRelease

            if COUNTS not in frames:
                raise InputError("DP release: no count table")
            dp_release = DPRelease.from_counts(frames[COUNTS], meta)
            dp_release.published_metadata = meta  # what the seed-replay attack reads
            return dp_release
        qi_names = [q["name"] for q in meta["quasi"]]
        sa_info = meta["sensitive"]
        sa_name = sa_info["name"]
        sa_kind = Kind(sa_info.get("kind", Kind.CATEGORICAL))
        if scheme == Scheme.GENERALIZATION:
            df = frames.get("release")
            if df is None:
                raise InputError("generalized release: no release table")
            _need_columns(df, [*qi_names, sa_name], "release table")
            # each QI column's cells as text once (its distinct values converted, not its rows)
            qi_frame = pd.DataFrame({c: text_categories(df[c]) for c in qi_names})
            codes = [qi_frame[c].cat.codes.to_numpy() for c in qi_names]  # -1: missing
            if GROUP in df.columns:
                partition = Partition.from_labels(_group_labels(df[GROUP], "release table"))
                if partition.n:
                    order, starts = partition.order(), partition.starts()
                    for c in codes:
                        by_group = c[order]
                        lo = np.minimum.reduceat(by_group, starts)
                        if not np.array_equal(lo, np.maximum.reduceat(by_group, starts)):
                            raise InputError(
                                "release table: some group has more than one combination of "
                                "QI cells"
                            )
            else:  # rows with the same cells form a group (numbered by first appearance)
                partition = Partition.from_columns(np.stack([c + 1 for c in codes], axis=1))
            qi_kinds = dict.fromkeys(qi_names, Kind.CATEGORICAL)
            sa_values = df[sa_name]
        else:
            qit, st = frames.get("qit"), frames.get("st")
            if qit is None or st is None:
                raise InputError("bucketized release: needs both the QI table and the SA table")
            _need_columns(qit, [GROUP, *qi_names], "QI table")
            _need_columns(st, [GROUP, sa_name, COUNT], "SA table")
            partition = Partition.from_labels(_group_labels(qit[GROUP], "QI table"))
            g_codes = pd.Index(pd.unique(qit[GROUP].to_numpy()))
            st_group = g_codes.get_indexer(st[GROUP].to_numpy())
            if (st_group < 0).any():
                raise InputError("SA table names a group that is not in the QI table")
            counts = st[COUNT].to_numpy().astype(np.int64)
            if (counts <= 0).any():
                raise InputError("SA table: counts must be positive")
            per_group = np.bincount(st_group, weights=counts, minlength=partition.n_groups)
            if not np.array_equal(per_group.astype(np.int64), partition.sizes):
                bad = int(np.argmax(per_group != partition.sizes))
                raise InputError(
                    f"SA table counts for group {g_codes[bad]!r} add up to {int(per_group[bad])}, "
                    f"but the QI table has {int(partition.sizes[bad])} rows in it"
                )
            st_order = np.argsort(st_group, kind="stable")
            sa_per_slot = np.repeat(st[sa_name].to_numpy()[st_order], counts[st_order])
            sa_values = pd.Series(np.empty(partition.n, dtype=object))
            sa_values.iloc[partition.order()] = sa_per_slot
            kinds = {q["name"]: Kind(q.get("kind", Kind.CATEGORICAL)) for q in meta["quasi"]}
            qi_kinds = kinds
            qi_frame = qit[qi_names]
        table = _published_table(qi_frame, qi_kinds, sa_values, sa_name, sa_kind, meta, schema)
        prov = meta.get("provenance") or {}
        params = {
            k: v for k, v in (prov.get("parameters") or {}).items() if k.lower() not in SEED_KEYS
        }
        provenance = Provenance(
            prov.get("algorithm", "unknown"), params, prov.get("version", "unknown")
        )
        release = cls(table, partition, scheme, table.sa, provenance)
        release.published_metadata = meta
        release.models = checked_models(meta)
        return release if providers is None else release.with_providers(providers)

    def with_providers(self, providers: Sequence[Any] | np.ndarray) -> Release:
        """This release with the data provider of each row of :attr:`table` (for a release
        read back: each row of the release table, in file order), so that m-privacy (paper
        003) can be checked: the published files never say which provider a row came from.

        Only for generalizations: a bucketization does not publish which row holds which
        sensitive value, so its files cannot be paired with the providers' rows.
        """
        labels = np.asarray(providers)
        if labels.ndim != 1 or labels.shape[0] != self.table.n:
            got = labels.shape[0] if labels.ndim == 1 else labels.shape
            raise InputError(
                f"providers: need one provider per published row ({self.table.n:,}), got {got}"
            )
        if self.scheme != Scheme.GENERALIZATION:
            raise ParameterError(
                "m-privacy is checked on generalized releases only: a bucketization does not "
                "publish which row holds which sensitive value"
            )
        codes, values = pd.factorize(pd.Series(labels), sort=True)
        if (codes < 0).any():
            raise InputError(f"providers: row {int(np.argmax(codes < 0))} has no provider")
        table = dataclasses.replace(
            self.table, provider=codes.astype(np.int32), provider_values=np.asarray(values)
        )
        return dataclasses.replace(self, table=table, _hist=None, notes=list(self.notes))

    @classmethod
    def _from_directory(cls, path: Path, schema: Schema | None, verify: bool) -> Release:
        meta, notes = read_manifest(path, verify=verify)
        names = {
            Scheme.GENERALIZATION: ["release"],
            Scheme.BUCKETIZATION: ["qit", "st"],
            Scheme.DP: ["counts"],
        }[Scheme(meta["scheme"])]
        # only files the manifest lists are read: a table dropped into the folder afterwards
        # (a forged release.parquet beside a CSV-only release) is never taken for the release
        listed = listed_files(meta)
        order = ("parquet", "csv") if verify else ("csv", "parquet")
        text = [q["name"] for q in meta["quasi"]]
        cells = {"release": text, "counts": [*text, meta["sensitive"]["name"]]}
        frames = {}
        for name in names:
            whole = [
                f
                for f in (f"{name}.{ext}" for ext in order)
                if (listed is None or f in listed) and os.path.lexists(path / f)
            ]
            if whole:  # generalized cells are text ("[20-29]" beside "25")
                frames[name] = read_table(path / whole[0], text_columns=cells.get(name, ()))
                if whole[0].endswith(".csv"):
                    frames[name] = csv_text(frames[name], meta)
                continue
            parts = release_parts(meta, name)  # a release written in parts (the Dask engine)
            if not parts:
                raise InputError(
                    f"{path}: missing {name}.csv or {name}.parquet"
                    + ("" if listed is None else f" (of the files {META} lists)")
                )
            frames[name] = pd.concat(
                [read_table(path / f, text_columns=cells.get(name, ())) for f in parts],
                ignore_index=True,
            )
        try:
            release = cls.from_frames(frames, meta, schema)
        except InputError as exc:  # say which release the tables came from
            raise _naming(path, exc) from None
        release.notes.extend(notes)
        return release

    @classmethod
    def from_published(
        cls,
        path: str | Path,
        schema: Schema | None = None,
        *,
        sep: str | None = None,
        verify: bool = True,
    ) -> Release:
        """Read a published release back so checks and attacks can run on it.

        ``path`` is a directory written by :meth:`write` (with ``release.json``), or a single
        generalized CSV/Parquet table made by another tool, in which case ``schema`` says which
        columns are quasi-identifiers and which is sensitive.

        A directory is verified against its manifest first: a file missing, changed or
        truncated since it was written is a one-line :class:`~kerckhoffs.errors.InputError`.
        ``verify=False`` reads what is there (the CSV when both formats exist: the file a
        person edits) and says so in :attr:`notes`; only the files ``release.json`` lists are
        read, and with verification a data file it does not list is refused. Releases of format
        1 (kerckhoffs 0.1) record no digests: they are read only with ``verify=False``.
        """
        path = Path(path)
        if path.is_dir():
            return cls._from_directory(path, schema, verify)
        if schema is None:
            raise input_error(f"{path}: reading a table made by another tool ", NEEDS_SCHEMA)
        df, meta = read_external(path, schema, sep)
        try:
            return cls.from_frames({"release": df}, meta, schema)
        except InputError as exc:  # say which file the table came from
            raise _naming(path, exc) from None


def _naming(path: Path, exc: InputError) -> InputError:
    """``exc`` with its message (and command-line message) prefixed by ``path``, unless it
    names it already."""
    if str(exc).startswith(str(path)):
        return exc
    return type(exc)(f"{path}: {exc}", cli=f"{path}: {exc.cli_message}")


class Bucketized(NamedTuple):
    """A bucketized release as pandas: the QI table and the SA table (Anatomy, Xiao & Tao
    2006): ``qit`` has each row's exact QIs and group, ``st`` each group's SA values and
    counts; which row holds which SA value is not published."""

    qit: pd.DataFrame
    st: pd.DataFrame


def _codes_and_categories(labels: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per-row category codes of the groups' cell ``labels`` (sorted categories)."""
    codes, uniques = pd.factorize(labels, sort=True)
    return codes[own], [str(u) for u in uniques]


def read_manifest(
    path: Path, *, verify: bool = True, files: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """The ``release.json`` of release directory ``path``, checked: a kerckhoffs release of a
    format this version reads, sealed (its own digest), no data file in the folder that it
    does not list and, with ``files``, every file it lists there byte for byte; its fields
    of the right types. Returns it with the notes a reader should print (``verify=False``:
    nothing verified). One-line :class:`~kerckhoffs.errors.InputError` otherwise.

    A release of format 1 (kerckhoffs 0.1) records no digests, so nothing shows that its files
    are the ones written, and a ``release.json`` whose ``format_version`` was lowered to 1
    would look the same: it is refused unless verification is turned off (``verify=False``),
    which reads it with a note."""
    meta_path = path / META
    if not os.path.lexists(meta_path):
        raise input_error(
            f"{path}: a directory without {META}, so not a kerckhoffs release (to check "
            "another tool's table, pass the table file ",
            WITH_SCHEMA,
        )
    raw = read_regular(meta_path, META)
    meta = manifest.parse(raw, meta_path)
    if meta.get("format") != FORMAT:
        raise InputError(f'{meta_path}: not a kerckhoffs release (no "format": "{FORMAT}")')
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{meta_path}: format_version {version!r} is not a known version")
    if version > FORMAT_VERSION:
        raise InputError(
            f"{meta_path}: written by a newer kerckhoffs (format {version}, this one reads "
            f"up to {FORMAT_VERSION}); upgrade kerckhoffs to read it"
        )
    notes = []
    unlisted = unlisted_files(path, meta)
    if not verify:
        notes.append(
            f"{path}: files not verified against release.json (verification turned off): "
            "reading them as they are"
            if version >= 2 or manifest.sealed(meta)
            else f"{path}: format {version} (kerckhoffs 0.1) records no file digests; read "
            "unverified (verification turned off)"
        )
        if unlisted and listed_files(meta) is not None:
            notes.append(f"{path}: ignoring {', '.join(unlisted)}: not listed in {META}")
    elif version >= 2 or manifest.sealed(meta):
        manifest.verify_self(raw, meta, meta_path)
        if unlisted:
            what = (
                f"{path / unlisted[0]}: a data file {META} does not list (not part of the "
                "sealed release: added after it was written); refusing the release"
            )
            raise InputError(
                f"{what} (verify=False reads only the files it lists)",
                cli=f"{what} (--no-verify reads only the files it lists)",
            )
        if files:
            manifest.verify_files(path, meta, meta_path)
    else:
        raise input_error(
            f"{meta_path}: format {version} (kerckhoffs 0.1) records no file digests, so "
            "nothing shows its files are the ones written; refusing it ",
            NO_VERIFY_HINT,
        )
    _check_meta(meta, meta_path)
    return meta, notes


TABLE_SUFFIXES = frozenset({".csv", ".tsv", ".parquet", ".pq", ".json", ".feather", ".arrow"})
"""Names a reader could take for a release's table (or its metadata): in a release folder,
every such file must be listed in ``release.json``."""


def listed_files(meta: dict[str, Any]) -> set[str] | None:
    """The file names ``release.json`` lists (a digest per name; format 1 may hold a plain
    list), or None when it lists none."""
    files = meta.get("files")
    if isinstance(files, dict | list) and files:
        return {str(f) for f in files}
    return None


def unlisted_files(path: Path, meta: dict[str, Any]) -> list[str]:
    """Data files (:data:`TABLE_SUFFIXES`) in release folder ``path`` that ``release.json``
    does not list, sorted. Hidden names (``.DS_Store``, the ``._NAME`` files macOS leaves
    on copied folders) are not counted: the reader never opens an unlisted file anyway, the
    refusal only says that someone added a table to a sealed release."""
    listed = listed_files(meta) or set()
    return sorted(
        p.name
        for p in path.iterdir()
        if p.name != META
        and p.name not in listed
        and not p.name.startswith(".")
        and p.suffix.lower() in TABLE_SUFFIXES
    )


def checked_models(meta: dict[str, Any]) -> tuple[PrivacyModel, ...]:
    """The models a release was checked for at write time, as its metadata records them
    (none for releases written before they were recorded as data, or by other tools)."""
    checks = meta.get("checks")
    if not isinstance(checks, list):
        return ()
    specs = [c.get("spec") for c in checks if isinstance(c, dict)]
    records = [s for s in specs if isinstance(s, dict)]
    if not records or len(records) != len(specs):
        return ()
    models = []
    for i, record in enumerate(records):
        try:
            models.append(PrivacyModel.from_dict(record))
        except (ParameterError, TypeError, ValueError, OverflowError) as exc:
            # a model's parameter of the wrong type or out of range (an edited, resealed file)
            text = " ".join(str(exc).split())[:200]
            raise InputError(
                f"{META}: checks[{i}].spec: not a model kerckhoffs reads ({text})"
            ) from None
    return tuple(models)


def release_parts(meta: dict[str, Any], name: str) -> list[str]:
    """The parts ``NAME-00000.parquet``, ... a release lists in its manifest, in order."""
    files = meta.get("files")
    names = files if isinstance(files, dict) else {}
    pattern = re.compile(rf"^{re.escape(name)}-\d{{5}}\.parquet$")
    return sorted(str(f) for f in names if pattern.match(str(f)))


def _check_meta(meta: dict[str, Any], where: Path | str) -> None:
    """Refuse metadata whose fields the reader needs are missing or of the wrong type (an
    edited file may hold any JSON value anywhere: a list where a name was, a number where a
    kind was)."""

    def bad(key: str, want: str) -> InputError:
        return InputError(f"{where}: field {key!r} is missing or not {want}")

    def one_of(value: Any, allowed: set[str]) -> bool:
        return isinstance(value, str) and value in allowed

    if not one_of(meta.get("scheme"), {s.value for s in Scheme}):
        raise bad("scheme", "one of " + ", ".join(s.value for s in Scheme))
    quasi = meta.get("quasi")
    if not isinstance(quasi, list) or not quasi:
        raise bad("quasi", "a non-empty list")
    kinds = {k.value for k in Kind}
    for i, q in enumerate(quasi):
        if not isinstance(q, dict) or not isinstance(q.get("name"), str):
            raise bad(f"quasi[{i}].name", "a column name")
        if not one_of(q.get("kind", Kind.CATEGORICAL.value), kinds):
            raise bad(f"quasi[{i}].kind", "numeric or categorical")
    sa = meta.get("sensitive")
    if not isinstance(sa, dict) or not isinstance(sa.get("name"), str):
        raise bad("sensitive.name", "a column name")
    if not one_of(sa.get("kind", Kind.CATEGORICAL.value), kinds):
        raise bad("sensitive.kind", "numeric or categorical")
    sv = meta.get("sensitive_values")
    if sv is not None and not (isinstance(sv, list) and all(isinstance(v, str) for v in sv)):
        raise bad("sensitive_values", "a list of values")
    modes = {m.value for m in SensitiveMode}
    if not one_of(meta.get("sensitive_mode", SensitiveMode.SET.value), modes):
        raise bad("sensitive_mode", "set or each")
    prov = meta.get("provenance", {})
    if (
        not isinstance(prov, dict)
        or not isinstance(prov.get("parameters", {}), dict)
        or not all(isinstance(prov.get(k, ""), str) for k in ("algorithm", "version"))
    ):
        raise bad("provenance", "an object with an algorithm (a name) and parameters")


def stable_order(*keys: np.ndarray) -> np.ndarray:
    """Row indices sorted by the non-negative integer ``keys`` (the first is the primary
    one), ties kept in row order: exactly ``np.lexsort(keys[::-1])``.

    When the keys and the row index fit together in 63 bits they are packed into one int64
    per row and sorted once (numpy's SIMD sort; about 6x faster than a stable argsort or
    lexsort of 1M rows, issue 15); otherwise lexsort.
    """
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    bits = [int(k.max()).bit_length() for k in keys]
    index_bits = (n - 1).bit_length()
    if sum(bits) + index_bits > 63 or any(int(k.min()) < 0 for k in keys):
        return np.lexsort(keys[::-1])
    packed = np.zeros(n, dtype=np.int64)
    for k, b in zip(keys, bits, strict=True):
        packed <<= b
        packed |= k.astype(np.int64, copy=False)
    packed <<= index_bits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    packed &= (1 << index_bits) - 1
    return packed.astype(np.intp, copy=False)


def mix64(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing function (splitmix64's finalizer), elementwise on uint64 (wraps)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _json_num(x: float) -> float | str:
    return "inf" if x == np.inf else float(x)


def text_categories(column: pd.Series) -> pd.Categorical:
    """``column.astype(str)`` as a categorical: each distinct value converted to text once
    (values whose texts coincide, such as ``1`` and ``"1"``, become one category), missing
    cells missing. The published cells of a release, without a string per row."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # read back as a dictionary: its codes
        codes = column.cat.codes.to_numpy()
        uniques = column.cat.categories
    else:
        codes, uniques = pd.factorize(column)
    text = pd.Series(uniques).astype(str)
    t_codes, t_uniques = pd.factorize(text)
    if len(t_codes) == len(uniques) and np.array_equal(t_codes, np.arange(len(uniques))):
        merged = codes  # every category a text of its own, in order: the codes stand
    else:
        merged = np.where(codes < 0, -1, t_codes[np.maximum(codes, 0)] if len(t_codes) else -1)
    return pd.Categorical.from_codes(merged, categories=pd.Index(t_uniques))


def _group_labels(column: pd.Series, what: str) -> np.ndarray:
    """The published ``group`` labels of a table, or a one-line InputError naming the first
    data row (1-based, the header not counted) whose group cell is blank: a row with no
    group cannot be placed in any group a check would count."""
    blank = column.isna().to_numpy()
    if blank.any():
        row = int(np.argmax(blank)) + 1
        raise InputError(
            f"{what}: column {GROUP!r}, data row {row}: the group is blank (every row must "
            "name its group)"
        )
    return column.to_numpy()


def _need_columns(df: pd.DataFrame, names: list[str], what: str) -> None:
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise InputError(f"{what}: column {missing[0]!r} is missing")


def _published_table(
    qi_frame: pd.DataFrame,
    qi_kinds: dict[str, Kind],
    sa_values: pd.Series,
    sa_name: str,
    sa_kind: Kind,
    meta: dict[str, Any],
    schema: Schema | None,
) -> Table:
    """Encode the published columns into a Table (QI cells of generalized releases are
    categorical values of their own)."""
    cols = []
    for name, kind in qi_kinds.items():
        hierarchy = None
        if kind == Kind.CATEGORICAL and schema is not None and meta["scheme"] != "generalization":
            hierarchy = next((c.hierarchy for c in schema.quasi if c.name == name), None)
        cols.append(Column(name, Role.QUASI, kind=kind, hierarchy=hierarchy))
    sv = meta.get("sensitive_values")
    cols.append(Column(sa_name, Role.SENSITIVE, kind=sa_kind))
    pub_schema = Schema(
        tuple(cols),
        frozenset(sv) if sv else None,
        sensitive_mode=SensitiveMode(meta.get("sensitive_mode", SensitiveMode.SET)),
        base_dir=schema.base_dir if schema is not None else None,
    )
    df = qi_frame.copy()
    categorical = isinstance(sa_values.dtype, pd.CategoricalDtype)
    df[sa_name] = sa_values.array if categorical else sa_values.to_numpy()
    if len(df) == 0:
        raise InputError("the published table has no rows")
    return Table.encode(df.reset_index(drop=True), pub_schema, strict_sensitive=False)


def checks_json(
    checks: list[ModelResult] | None, models: Sequence[PrivacyModel] | None
) -> list[dict[str, Any]]:
    """The ``checks`` field of ``release.json``: each independent check that passed, with
    its model recorded as data when the models are given (a release read back remembers
    them).

    ``achieved`` is what a reader of the release can recompute (k, l, t, ... from the
    published groups), except for a model that reads the data providers (m-privacy, paper
    003): its achieved m comes from provider counts the release does not show (for instance
    that some coalition of m + 1 providers breaks a group), so it is withheld (``null``); the
    verdict at the required m is published."""
    classes = model_classes()
    out = []
    for i, r in enumerate(checks or []):
        model = models[i] if models is not None else None
        cls = type(model) if model is not None else classes.get(r.model)
        private = cls is not None and cls.needs_providers
        entry = {
            "model": r.model,
            "parameter": r.parameter,
            "achieved": None if private else _json_num(r.achieved),
            "satisfied": r.satisfied,
        }
        out.append(entry | ({"spec": model.to_dict()} if model is not None else {}))
    return out


def writable_models(models: Sequence[PrivacyModel], formats: tuple[str, ...]) -> list[PrivacyModel]:
    """The models a write checks (at least one: nothing is published unchecked), after
    refusing an unknown output format; both before any work."""
    chosen = list(models)
    if not chosen:
        raise PrivacyCheckFailed("refusing to write a release without a privacy model to check")
    bad = sorted(set(formats) - {"csv", "parquet"})
    if bad:
        raise InputError(f"unknown output format {bad[0]!r} (csv, parquet)")
    return chosen


def write_release_files(
    out_dir: str | Path,
    frames: dict[str, pd.DataFrame],
    meta: dict[str, Any],
    formats: tuple[str, ...],
    overwrite: bool,
    check: Callable[[dict[str, pd.DataFrame]], dict[str, Any]] | None = None,
    text: dict[str, list[str]] | None = None,
) -> None:
    """Write checked ``frames`` and their ``release.json`` (sealed, with the SHA-256 of every
    file) into ``out_dir`` through a staging directory, so a failed write leaves nothing
    (:mod:`kerckhoffs.data.output`).

    ``check`` is the fail-closed check on what was written: it gets the tables read back from
    the staged files and returns the metadata to seal (raising leaves nothing written). The
    tables are read from the Parquet files when they were written (text columns as
    dictionaries: no string per row), and each CSV file is then rendered from the table read
    back (:func:`~kerckhoffs.data.io.write_csv`) and its bytes on disk compared by SHA-256
    with the bytes rendered, so it is the checked table without being parsed; with CSV
    alone, the CSV is written first and parsed back. ``frames`` is emptied once written, so
    their memory is free for the read-back.
    ``text``: per table, categorical columns that stand for pandas ``str`` columns (see
    :meth:`Release._frames_and_rows`), written as the ``str`` column would be.
    """
    names = [f"{name}.{fmt}" for name in frames for fmt in formats]
    tables = list(frames)
    if "csv" in formats:  # text cells a spreadsheet would run as formulas are kept text
        meta = dict(meta, **{csv_cells.META_KEY: csv_cells.PREFIX})
    # With a check and a Parquet file, the CSV is rendered once, from the table read back from
    # the Parquet file (the table the check sees), and the bytes that reach the disk are
    # compared with the bytes rendered: the CSV is the checked table by construction
    render_from_parquet = check is not None and "parquet" in formats and "csv" in formats
    with (
        output_directory(out_dir, kind="release", overwrite=overwrite) as claim,
        claim.staging() as tmp,
    ):
        for name, df in frames.items():
            if "csv" in formats and not render_from_parquet:
                write_csv(csv_cells.protect_formulas(df), tmp / f"{name}.csv")
            if "parquet" in formats:
                write_parquet(df, tmp / f"{name}.parquet", (text or {}).get(name, []))
        frames.clear()
        del df
        release_memory()  # the tables' memory, before they are read back
        written: dict[str, pd.DataFrame] = {}
        rendered: dict[str, str] = {}
        if check is not None:
            written = {name: read_back(tmp, name, meta, formats) for name in tables}
        if render_from_parquet:
            for name in tables:
                digest = hashlib.sha256()
                with open(tmp / f"{name}.csv", "wb") as fh:
                    write_csv(csv_cells.protect_formulas(written[name]), _Tee(fh, digest))
                rendered[f"{name}.csv"] = f"{manifest.ALGO}:{digest.hexdigest()}"
        meta["files"] = {f: manifest.file_digest(tmp / f) for f in sorted(names)}
        for f, want in rendered.items():
            if meta["files"][f] != want:
                raise PrivacyCheckFailed(
                    f"release not written: {f} on disk is not the CSV rendering of the checked "
                    "table"
                )
        if check is not None:
            sealed = {k: meta[k] for k in ("files", csv_cells.META_KEY) if k in meta}
            meta = dict(check(written), **sealed)
        (tmp / META).write_bytes(manifest.seal(meta))


PARQUET_ROW_GROUP = 1024 * 1024
"""pyarrow's default largest row group (rows), which ``DataFrame.to_parquet`` writes with."""

TEXT_DTYPE = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' default ``str`` dtype: the dtype of the published text columns."""


def _is_categorical(column: pd.Series) -> bool:
    return isinstance(column.dtype, pd.CategoricalDtype)


def write_parquet(df: pd.DataFrame, path: Path, text: list[str]) -> None:
    """``df.to_parquet(path, index=False)`` with the categorical columns ``text`` written as
    pandas ``str`` columns: the same bytes as for the frame holding them as ``str`` (arrow
    decodes the categories; no Python string per row), with the text of one row group
    (:data:`PARQUET_ROW_GROUP` rows) in memory at a time."""
    if len(df) <= PARQUET_ROW_GROUP:
        _as_text(df, text).to_parquet(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    head = _as_text(df.head(0), text)
    schema = pa.Table.from_pandas(head, preserve_index=False).schema
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, len(df), PARQUET_ROW_GROUP):
            part = _as_text(df.iloc[start : start + PARQUET_ROW_GROUP], text)
            writer.write_table(pa.Table.from_pandas(part, preserve_index=False, schema=schema))
            del part
            pa.default_memory_pool().release_unused()  # the row group's text, back to the OS


def _as_text(df: pd.DataFrame, text: list[str]) -> pd.DataFrame:
    """``df`` with the categorical columns ``text`` as pandas ``str`` columns (decoded by
    arrow)."""
    if not text:
        return df
    import pyarrow as pa

    columns = {}
    for name in text:
        decoded = pa.array(df[name].array).cast(pa.large_string())
        columns[name] = pd.arrays.ArrowStringArray(pa.chunked_array([decoded]), dtype=TEXT_DTYPE)
    return df.assign(**columns)


def csv_text(df: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """A release table read from its CSV file, with the quotes that kept formula-like text
    cells text removed when ``meta`` says they were added (:mod:`kerckhoffs.data.csv_cells`)."""
    prefix = meta.get(csv_cells.META_KEY)
    if prefix is None:  # written before the protection: the cells are as they were
        return df
    if prefix != csv_cells.PREFIX:
        raise InputError(
            f"{META}: field {csv_cells.META_KEY!r} is {prefix!r}, not {csv_cells.PREFIX!r}"
        )
    return csv_cells.restore_formulas(df)


def read_back(
    folder: Path, name: str, meta: dict[str, Any], formats: tuple[str, ...]
) -> pd.DataFrame:
    """The table ``name`` as written into ``folder``: its Parquet file (string columns as
    pandas categoricals) when one was written, else its CSV, parsed."""
    if "parquet" not in formats:
        text = [q["name"] for q in meta["quasi"]]
        cells = {"release": text, "counts": [*text, meta["sensitive"]["name"]]}
        df = read_table(folder / f"{name}.csv", text_columns=cells.get(name, ()))
        return csv_text(df, meta)
    return read_parquet_texts_as_categories(folder / f"{name}.parquet")


class _Tee:
    """A binary sink that writes to a file and hashes what it writes."""

    def __init__(self, fh: Any, digest: Any) -> None:
        self.fh = fh
        self.digest = digest
        self.closed = False

    def write(self, data: bytes | memoryview) -> int:
        self.digest.update(data)
        return int(self.fh.write(data))

    def flush(self) -> None:
        self.fh.flush()


__all__ = [
    "Partition",
    "Provenance",
    "Release",
    "Scheme",
]
