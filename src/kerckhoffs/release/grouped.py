"""A release of groups: a partition of a :class:`~kerckhoffs.data.table.Table`, a publishing
scheme, the published SA column (equal to the original unless an algorithm perturbs it, as
MASK does) and provenance (``docs/concepts.md#release``). It materializes as

- *generalization*: one table, each row's QI cells replaced by its group's cells: the
  ``[lo-hi]`` interval for numeric columns (the value when lo = hi), the lowest common
  hierarchy node for categorical ones; plus the published SA and a ``group`` column;
- *bucketization* (Anatomy, Xiao & Tao 2006): a QI table (original QIs + group id) and an
  SA table (group id, SA value, count).

Rows are written sorted by group and, inside a group, by published SA (generalization) or
QI codes (bucketization), so the file order carries nothing the groups do not.

:meth:`GroupedRelease.write` is fail-closed: it materializes the frames, reads them back from
the staged files and writes the files only if every requested privacy model holds on what was
read back, checked by the same code that reads other tools' releases
(:meth:`Release.from_frames`), or, for the models of the (groups x SA values) histogram when
they all hold, with numpy on the table read back (:mod:`kerckhoffs.release.light`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from kerckhoffs.data.io import release_memory
from kerckhoffs.data.schema import Kind, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, InternalError, ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.scope import with_scope
from kerckhoffs.release.contract import Release, refuse_failed
from kerckhoffs.release.format import COUNT, FORMAT, FORMAT_VERSION, GROUP, Scheme
from kerckhoffs.release.integrity import checked_models
from kerckhoffs.release.light import check_read_back
from kerckhoffs.release.partition import (
    Partition,
    mix64,
    stable_order,
)
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.reader import read_grouped
from kerckhoffs.release.writer import (
    TEXT_DTYPE,
    checks_json,
    text_columns,
    writable_models,
    write_release_files,
)


@dataclass(frozen=True, eq=False)
class GroupedRelease(Release, schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION), default=True):
    """A partition of a table, published under a scheme (see the module docstring).

    Frozen: :meth:`with_scheme`, :meth:`with_providers` and the contract's ``with_...``
    methods return a new release, so the cached histogram always describes the release."""

    table: Table
    partition: Partition
    scheme: Scheme = Scheme.GENERALIZATION
    sa_published: np.ndarray = None  # type: ignore[assignment]  # None: the table's own SA
    provenance: Provenance = field(default_factory=lambda: Provenance("manual"))
    cells: pd.DataFrame | None = field(default=None, repr=False)
    published_metadata: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The metadata exactly as read from the files (None for a release made in-process):
    what an adversary reading the release sees, for audits such as ``seed-replay``."""
    notes: list[str] = field(default_factory=list, repr=False, compare=False)
    """What the reader of a published release should know (e.g. files not verified)."""
    models: tuple[PrivacyModel, ...] = field(default=(), compare=False)
    """The privacy models the release was made for: :meth:`check`, :meth:`verify` and
    :meth:`write` use them when given none (:func:`kerckhoffs.anonymize` sets them)."""
    _hist: GroupHistogram | None = field(default=None, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        models = ", ".join(m.parameter for m in self.models) or "none recorded"
        return (
            f"Release({self.provenance.algorithm}, {self.scheme.value}, {self.table.n:,} rows, "
            f"{self.partition.n_groups:,} groups; models: {models})"
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "scheme", Scheme(self.scheme))
        if self.partition.n != self.table.n:
            raise ValueError(f"partition has {self.partition.n} rows, table has {self.table.n}")
        if self.cells is not None and len(self.cells) != self.partition.n_groups:
            raise ValueError(
                f"cells has {len(self.cells)} rows, the partition {self.partition.n_groups} groups"
            )
        if self.sa_published is None:
            object.__setattr__(self, "sa_published", self.table.sa)
        elif self.sa_published.shape != self.table.sa.shape:
            raise ValueError("sa_published must have one value per row")

    # -- statistics --------------------------------------------------------------------------
    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Evaluate ``models`` (default: the models the release was made for) on its groups."""
        hist = self.histogram()
        chosen = self.chosen_models(models)
        return with_scope([m.evaluate(hist) for m in chosen], chosen, self.table)

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """The independent check :meth:`write` makes: materialize the files' tables, read them
        back as another tool's release would be read (:meth:`from_frames`) and evaluate the
        models there, not on the algorithm's own arrays. Raises
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` when one fails (fail closed)."""
        chosen = self.chosen_models(models)
        frames, rows = self._frames_and_rows(False)
        return self._verified(chosen, frames, self.metadata(), self._providers_of(chosen, rows))

    def _providers_of(self, models: Sequence[PrivacyModel], rows: np.ndarray) -> np.ndarray | None:
        """The provider of each published row, when a model needs it (m-privacy): the files
        never hold it, so the independent check gets it beside them, in file order."""
        t = self.table
        if not any(m.needs_providers for m in models) or t.provider is None:
            return None
        if t.provider_values is None:
            raise InternalError("a table with provider codes has no provider values")
        return np.asarray(t.provider_values)[t.provider[rows]]

    @staticmethod
    def _verified(
        models: list[PrivacyModel],
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        providers: np.ndarray | None = None,
    ) -> list[ModelResult]:
        results = Release.from_frames(frames, meta, providers=providers).check(models)
        refuse_failed(results)
        return results

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
        models are evaluated on that (for the models of the (groups x SA values) histogram,
        with numpy on the table read back: :mod:`kerckhoffs.release.light`, the full reader
        when a model fails or the case is not plain). If any fails, nothing is written and
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` is raised. ``release.json``
        records the SHA-256 of every file and of itself (:mod:`kerckhoffs.data.manifest`), so
        a release edited afterwards is refused when read back. An existing ``out_dir`` is
        replaced only with ``overwrite`` and only if it is a kerckhoffs release holding nothing
        else (:mod:`kerckhoffs.data.output`).
        """
        chosen = writable_models(self.models if models is None else models, formats)
        release_memory()  # what the algorithm freed, before the release tables are built
        frames, rows = self._frames_and_rows(include_other, compact=True)
        text = text_columns(frames, self._compact_names())
        providers = self._providers_of(chosen, rows)
        del rows
        results: list[ModelResult] = []

        def check(written: dict[str, pd.DataFrame]) -> dict[str, Any]:
            meta = self.metadata()
            light = None
            if providers is None and "release" in written:  # the plain case, numpy alone
                light = check_read_back(chosen, written["release"], meta)
            results.extend(light or self._verified(chosen, written, meta, providers))
            return self.metadata(results, chosen)

        write_release_files(
            out_dir, frames, self.metadata(), formats, overwrite, check=check, text=text
        )
        return results

    def _compact_names(self) -> set[str]:
        """Columns :meth:`_frames_and_rows` may turn into categoricals (QI cells and SA)."""
        return {*self.table.qi_names, self.table.sa_name}

    def with_providers(self, providers: Sequence[Any] | np.ndarray) -> GroupedRelease:
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
        return self._replaced(table=table)

    # -- reading back --------------------------------------------------------------------------
    @classmethod
    def read_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> GroupedRelease:
        """A generalization or bucketization read back (:meth:`Release.from_frames`)."""
        table, partition, scheme, provenance = read_grouped(frames, meta, schema)
        release = cls(
            table,
            partition,
            scheme,
            table.sa,
            provenance,
            published_metadata=meta,
            models=checked_models(meta),
        )
        return release if providers is None else release.with_providers(providers)


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


__all__ = ["Bucketized", "GroupedRelease"]
