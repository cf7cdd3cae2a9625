"""The one contract every release implements: provenance, the models it was made for, an
independent check, the fail-closed write, the metadata written beside it and, for a release
whose privacy composes (differential privacy, paper 004), its privacy loss.

Implementations (each a frozen dataclass: a release is never changed once built; ``with_...``
methods return a new one):

- :class:`~kerckhoffs.release.grouped.GroupedRelease`: a partition of a table into groups,
  published by generalization or bucketization (Anatomy, Xiao & Tao 2006);
- :class:`~kerckhoffs.release.count.DPRelease`: a noisy count table over a public cell domain
  (scheme ``dp``);
- :class:`~kerckhoffs.engines.dask_run.DaskRelease`: a generalization whose rows stay on Dask
  workers.

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
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from kerckhoffs.data.external import read_external
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, ParameterError, PrivacyCheckFailed, input_error
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.release.format import Scheme
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.reader import naming, read_directory

_READERS: dict[Scheme, type[Release]] = {}
"""The implementation that reads each scheme back (filled by ``__init_subclass__``)."""
_DEFAULT: list[type[Release]] = []
"""The implementation ``Release(...)`` builds (the first registered with ``default=True``)."""


class Release(ABC):
    """A published table and what is known of it (module docstring).

    Every implementation has the attributes :attr:`scheme`, :attr:`provenance`,
    :attr:`models` (the privacy models it was made for: :meth:`check`, :meth:`verify` and
    :meth:`write` use them when given none), :attr:`notes` (what a reader of it should know)
    and :attr:`published_metadata` (the metadata exactly as read from the files; None for a
    release made in-process: what an adversary reading the release sees, for audits such as
    ``seed-replay``).
    """

    scheme: Scheme
    provenance: Provenance
    models: tuple[PrivacyModel, ...]
    notes: list[str]
    published_metadata: dict[str, Any] | None

    _schemes: ClassVar[tuple[Scheme, ...]] = ()

    def __init_subclass__(
        cls, schemes: Sequence[Scheme] = (), default: bool = False, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if schemes:
            cls._schemes = tuple(schemes)
            for s in schemes:
                _READERS[s] = cls
        if default and not _DEFAULT:
            _DEFAULT.append(cls)

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """``Release(...)``: the default implementation (a grouped release)."""
        if cls is Release:
            if not _DEFAULT:  # pragma: no cover (the package imports its implementations)
                raise TypeError("Release is abstract and no implementation is registered")
            cls = _DEFAULT[0]  # type: ignore[assignment]
        return super().__new__(cls)

    # -- the contract --------------------------------------------------------------------------
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

    # -- shared by the implementations ---------------------------------------------------------
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
            raise input_error(f"{path}: reading a table made by another tool needs --schema")
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


__all__ = ["Release", "refuse_failed"]
