"""The one contract every release implements (:class:`BaseRelease`): provenance, the models
it was made for, an independent check, the fail-closed write, the metadata written beside it
and, for a release whose privacy composes (differential privacy, paper 004), its privacy loss.

:class:`Release` is a release held in memory (a table, its partition into groups and the
views every check, attack and metric reads). Implementations:

- :class:`~kerckhoffs.release.grouped.GroupedRelease` (a :class:`Release`): a partition of a
  table into groups, published by generalization or bucketization (Anatomy, Xiao & Tao
  2006);
- :class:`~kerckhoffs.release.count.DPRelease` (a :class:`Release`): a noisy count table over
  a public cell domain (scheme ``dp``);
- :class:`~kerckhoffs.engines.dask_run.DaskRelease` (a :class:`BaseRelease` only): a
  generalization whose rows stay on Dask workers.

The releases in memory are frozen dataclasses: a release is never changed once built (it
caches its histogram); the ``with_...`` methods return a new one.

``Release(table, partition, ...)`` builds a grouped release, as ``pathlib.Path(...)`` builds
the path class of the running system. Each implementation names the schemes it reads back
(``class GroupedRelease(Release, schemes=...)``), so :meth:`Release.from_frames` lets the
release type read its own tables instead of branching on the scheme.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
import pandas as pd

from kerckhoffs.data.external import read_external
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import (
    NEEDS_SCHEMA,
    InputError,
    ParameterError,
    PrivacyCheckFailed,
    input_error,
)
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.release.format import Scheme
from kerckhoffs.release.partition import Partition, group_bounds, group_histogram, tightest_cells
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.reader import naming, read_directory

_READERS: dict[Scheme, type[Release]] = {}
"""The implementation that reads each scheme back (filled by ``__init_subclass__``)."""
_DEFAULT: list[type[Release]] = []
"""The implementation ``Release(...)`` builds (the one registered with ``default=True``)."""


class BaseRelease(ABC):
    """The contract of every release, in memory or on Dask workers (module docstring).

    Every implementation has the attributes :attr:`scheme`, :attr:`provenance`,
    :attr:`models` (the privacy models it was made for: :meth:`check`, :meth:`verify` and
    :meth:`write` use them when given none), :attr:`notes` (what a reader of it should know)
    and :attr:`published_metadata` (the metadata exactly as read from the files; None for a
    release made in-process: what an adversary reading the release sees, for audits such as
    ``seed-replay``). Implementations are dataclasses (those in memory frozen, since they
    cache statistics of their fields).
    """

    scheme: Scheme
    provenance: Provenance
    models: tuple[PrivacyModel, ...]
    notes: list[str]
    published_metadata: dict[str, Any] | None

    _schemes: ClassVar[tuple[Scheme, ...]] = ()
    """The schemes the implementation publishes (and, in memory, reads back)."""

    @abstractmethod
    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Evaluate ``models`` (default: :attr:`models`) on the release as built."""

    @abstractmethod
    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """The independent check :meth:`write` makes, on what the files will hold; raises
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` when a model fails (fail closed)."""

    @abstractmethod
    def write(
        self,
        out_dir: str | Path,
        models: Sequence[PrivacyModel] | None = None,
        *,
        overwrite: bool = False,
    ) -> list[ModelResult]:
        """Write the release to ``out_dir`` if every model holds on the files written;
        otherwise nothing is written and :class:`~kerckhoffs.errors.PrivacyCheckFailed` is
        raised."""

    @abstractmethod
    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """The ``release.json`` written beside the tables (no timestamps, never a seed)."""

    def privacy_loss(self) -> tuple[float, float] | None:
        """``(epsilon, delta)`` of a differentially private release; None for a release of
        groups, whose privacy is not a loss that composes (paper 004)."""
        return None

    def chosen_models(self, models: Sequence[PrivacyModel] | None) -> list[PrivacyModel]:
        """``models``, or the release's own when None; a one-line ParameterError when that
        leaves none."""
        chosen = list(self.models if models is None else models)
        if not chosen:
            raise ParameterError(
                "no privacy model to check: this release records none; pass models, e.g. "
                "[KAnonymity(5)]"
            )
        return chosen

    # -- a new release, never a changed one --------------------------------------------------
    def with_models(self, models: Sequence[PrivacyModel]) -> Self:
        """This release, made for ``models``."""
        return self._replaced(models=tuple(models))

    def with_provenance(self, provenance: Provenance) -> Self:
        """This release with another provenance record."""
        return self._replaced(provenance=provenance)

    def with_scheme(self, scheme: Scheme | str) -> Self:
        """This release published under another ``scheme`` its implementation publishes
        (a release of groups: generalization or bucketization, the same groups in other
        files), its provenance recording the scheme."""
        scheme = Scheme(scheme)
        if scheme not in self._schemes:
            raise ParameterError(
                f"{type(self).__name__} publishes by "
                f"{', '.join(s.value for s in self._schemes) or 'its own files'}, "
                f"not {scheme.value!r}"
            )
        prov = self.provenance
        provenance = dataclasses.replace(
            prov, parameters={**prov.parameters, "scheme": scheme.value}
        )
        return self._replaced(scheme=scheme, provenance=provenance)

    def with_notes(self, notes: Sequence[str]) -> Self:
        """This release with ``notes`` added to its own."""
        return self._replaced(notes=[*self.notes, *notes])

    def with_published_metadata(self, meta: dict[str, Any] | None) -> Self:
        """This release with the metadata its files carried (what the seed-replay attack
        reads)."""
        return self._replaced(published_metadata=meta)

    def _replaced(self, **changes: Any) -> Self:
        """A copy with ``changes`` (every implementation is a dataclass); caches start empty."""
        changes.setdefault("notes", list(self.notes))
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


_IN_MEMORY_CONTRACT = ("check", "verify", "write", "metadata", "frames", "published_numbering")
"""What every implementation of :class:`Release` defines itself (refused at class creation
otherwise)."""


class Release(BaseRelease):
    """A release held in memory: a :attr:`table` (the input encoded, or the published cells
    read back), its :attr:`partition` into groups and the published SA codes; what every
    algorithm returns and every check, attack and metric reads.

    ``Release(table, partition, scheme, sa_published, provenance, cells)`` builds a
    :class:`~kerckhoffs.release.grouped.GroupedRelease`. An implementation names the schemes
    it reads back (``class GroupedRelease(Release, schemes=...)``) and defines
    ``check``, ``verify``, ``write``, ``metadata``, ``frames`` and ``published_numbering``
    itself: a class that does not is refused when it is created (earlier than an abstract
    method would be, and ``Release(...)`` stays a constructor).
    """

    table: Table
    partition: Partition
    sa_published: np.ndarray
    cells: pd.DataFrame | None
    _hist: GroupHistogram | None

    if TYPE_CHECKING:  # what ``Release(...)`` takes: a grouped release's fields

        def __init__(
            self,
            table: Table,
            partition: Partition,
            scheme: Scheme = Scheme.GENERALIZATION,
            sa_published: np.ndarray | None = None,
            provenance: Provenance = ...,
            cells: pd.DataFrame | None = None,
            published_metadata: dict[str, Any] | None = None,
            notes: list[str] = ...,
            models: tuple[PrivacyModel, ...] = (),
        ) -> None: ...

    def __init_subclass__(
        cls, schemes: Sequence[Scheme] = (), default: bool = False, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if not schemes:
            return
        missing = [name for name in _IN_MEMORY_CONTRACT if name not in cls.__dict__]
        if missing:
            raise TypeError(f"{cls.__name__} implements Release without {', '.join(missing)}")
        cls._schemes = tuple(schemes)
        for s in schemes:
            _READERS[s] = cls
        if default:
            _DEFAULT[:] = [cls]

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """``Release(...)``: the default implementation (a grouped release)."""
        if cls is Release:
            if not _DEFAULT:  # pragma: no cover (the package imports its implementations)
                raise TypeError("no implementation of Release is registered")
            cls = _DEFAULT[0]  # type: ignore[assignment]
        return super().__new__(cls)

    # -- the contract, defined by each implementation ----------------------------------------
    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Evaluate ``models`` (default: :attr:`models`) on the release as built."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """The independent check :meth:`write` makes, on the tables the files will hold."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    def write(
        self,
        out_dir: str | Path,
        models: Sequence[PrivacyModel] | None = None,
        *,
        formats: tuple[str, ...] = ("csv", "parquet"),
        include_other: bool = False,
        overwrite: bool = False,
    ) -> list[ModelResult]:
        """Write ``formats`` of the release to ``out_dir`` if every model holds on them."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """The ``release.json`` written beside the tables."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    def frames(self, include_other: bool = False) -> dict[str, pd.DataFrame]:
        """The published tables, by name."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    def published_numbering(self, cells: pd.DataFrame | None = None) -> np.ndarray:
        """The id each group is published under."""
        raise NotImplementedError  # every implementation defines it (__init_subclass__)

    # -- views every release in memory shares ------------------------------------------------
    @property
    def perturbed(self) -> np.ndarray:
        """Rows whose published SA differs from the original."""
        return np.asarray(self.sa_published != self.table.sa, dtype=bool)

    def histogram(self) -> GroupHistogram:
        """Per-group counts of the *published* SA (computed once)."""
        if self._hist is None:
            hist = group_histogram(self.table, self.partition, self.sa_published)
            object.__setattr__(self, "_hist", hist)  # a cache: the release itself is frozen
            return hist
        return self._hist

    def group_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest code of each QI in each group: two int32 [groups, d]."""
        return group_bounds(self.table, self.partition)

    def generalized_cells(self) -> pd.DataFrame:
        """Each group's published QI cells, one row per group (generalization scheme).

        By default the tightest cells (interval / lowest common node of the group's rows);
        an algorithm that decides its cells itself passes them as ``cells`` (full-domain
        generalization publishes every group at its lattice node's levels).
        """
        if self.cells is not None:
            return self.cells
        return tightest_cells(self.table, self.partition)

    def published_providers(self) -> np.ndarray:
        """The data provider of each published row, in file order (a release that publishes
        rows; this one has none)."""
        raise ParameterError("this release's table has no provider column")

    def with_providers(self, providers: Sequence[Any] | np.ndarray) -> Self:
        """This release with the data provider of each row (generalizations only)."""
        raise ParameterError(
            "m-privacy is checked on generalized releases only: a "
            f"{self.scheme.value} release does not publish which row holds which sensitive value"
        )

    # -- reading back --------------------------------------------------------------------------
    @classmethod
    def from_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None = None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> Release:
        """Rebuild a release from published tables and their metadata, by the implementation
        that reads its scheme.

        ``providers``: the data provider of each row of the release table, in file order
        (paper 003's collaborative setting; the files never hold it), so that m-privacy can be
        checked; see :meth:`~kerckhoffs.release.grouped.GroupedRelease.with_providers`.

        Generalization: groups are the ``group`` column when present, else the rows with
        identical QI cells (what an adversary sees as one QI-group); the QI columns become
        categorical columns over the published cells. Bucketization: the QI table keeps its
        original values; since the SA table hides which row holds which value, each group's
        SA values are laid on its rows in a fixed order: per-group histograms are exact, the
        row-level pairing is not information the release contains. DP: the count table and
        its noise record.
        """
        scheme = Scheme(meta.get("scheme", Scheme.GENERALIZATION))
        return _READERS[scheme].read_frames(frames, meta, schema, providers=providers)

    @classmethod
    def read_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> Release:
        """The implementation's own reader (:meth:`from_frames` dispatches to it)."""
        raise InputError(f"{cls.__name__} does not read published tables")

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
            frames, meta, notes = read_directory(path, verify)
            try:
                release = cls.from_frames(frames, meta, schema)
            except InputError as exc:  # say which release the tables came from
                raise naming(path, exc) from None
            return release.with_notes(notes) if notes else release
        if schema is None:
            raise input_error(f"{path}: reading a table made by another tool ", NEEDS_SCHEMA)
        df, meta = read_external(path, schema, sep)
        try:
            return cls.from_frames({"release": df}, meta, schema)
        except InputError as exc:  # say which file the table came from
            raise naming(path, exc) from None


def refuse_failed(results: list[ModelResult], what: str = "release not written") -> None:
    """Raise :class:`~kerckhoffs.errors.PrivacyCheckFailed` naming every failed result."""
    failed = [r for r in results if not r.satisfied]
    if failed:
        raise PrivacyCheckFailed(f"{what}: " + "; ".join(r.summary() for r in failed))


__all__ = ["BaseRelease", "Release", "refuse_failed"]
