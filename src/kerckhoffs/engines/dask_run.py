"""The anonymization pipeline on Dask, shared by ``kh.anonymize(ddf, ...)`` and ``kerckhoffs
anonymize --engine dask``: the algorithm picked and its options checked before any work, the
partition found on the workers, and a :class:`DaskRelease` that is checked before it is handed
back and again from its files when it is written (fail closed, as the in-memory pipeline of
:mod:`kerckhoffs.api`).

Algorithms: ``mondrian`` and ``mondrian+`` (:mod:`kerckhoffs.engines.dask_mondrian`; options
``median`` and ``cuts``), ``provider-aware`` and ``mondrian-mprivacy`` (paper 003, one site per
provider: :mod:`kerckhoffs.engines.dask_providers`; the in-memory algorithms' options). All four
are deterministic: there is no random choice to keep secret.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.mprivacy_anonymize import setting_from_models
from kerckhoffs.engines.dask_check import check_dask
from kerckhoffs.engines.dask_mondrian import DaskGroups, mondrian_dask
from kerckhoffs.engines.dask_providers import mprivacy_dask
from kerckhoffs.engines.dask_release import dask_metadata, write_dask_release
from kerckhoffs.engines.dask_table import DaskTable
from kerckhoffs.errors import ParameterError
from kerckhoffs.model_syntax import written
from kerckhoffs.models import ModelResult, PrivacyModel, combine_m_privacy
from kerckhoffs.models.parse import written_model
from kerckhoffs.release import BaseRelease, Provenance, Scheme, refuse_failed

__all__ = ["ALGORITHMS", "DaskRelease", "check_request", "run_dask"]

MONDRIAN = ("mondrian", "mondrian+")
PROVIDERS = ("provider-aware", "mondrian-mprivacy")
ALGORITHMS = (*MONDRIAN, *PROVIDERS)


@dataclass(eq=False)
class DaskRelease(BaseRelease):
    """A generalization release whose rows stay on the Dask workers: the encoded table, the
    group of every row (one future per partition), the models it was made for and what the
    release records of the run. It implements the release contract
    (:class:`~kerckhoffs.release.BaseRelease`): ``check()`` evaluates models on the workers,
    ``verify()`` refuses a partition that fails one, ``write(dir)`` publishes Parquet parts
    plus ``release.json``, checked from the written files first. ``notes`` says what else
    happened (a provider run's message count). It is not a :class:`~kerckhoffs.release.Release`:
    its rows are never in this process. Unlike the releases in memory it is not frozen: it
    caches nothing computed from its fields (its ``with_...`` methods still return a copy)."""

    table: DaskTable
    groups: DaskGroups
    models: tuple[PrivacyModel, ...]
    provenance: Provenance
    notes: list[str] = field(default_factory=list)
    scheme: Scheme = field(default=Scheme.GENERALIZATION, init=False)
    published_metadata: dict[str, Any] | None = field(default=None, init=False, repr=False)

    _schemes: ClassVar[tuple[Scheme, ...]] = (Scheme.GENERALIZATION,)

    @property
    def n(self) -> int:
        """Rows published."""
        return self.table.n

    @property
    def n_groups(self) -> int:
        return self.groups.n_groups

    def __repr__(self) -> str:
        return (
            f"DaskRelease({self.provenance.algorithm}, n={self.n}, groups={self.n_groups}, "
            f"models={list(self.models)!r})"
        )

    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Evaluate ``models`` (default: the release's) on its groups, on the workers."""
        chosen = list(self.models if models is None else models)
        return check_dask(self.table, chosen, self.groups.groups, self.n_groups).results

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """:meth:`check`, refusing a partition that fails a model
        (:class:`~kerckhoffs.errors.PrivacyCheckFailed`); the files are checked again when
        they are written."""
        results = self.check(models)
        refuse_failed(results, "the partition does not hold")
        return results

    def write(
        self,
        out_dir: str | Path,
        models: Sequence[PrivacyModel] | None = None,
        *,
        overwrite: bool = False,
        protect: Sequence[str | Path] = (),
    ) -> list[ModelResult]:
        """Write the release to ``out_dir`` (Parquet parts and ``release.json``) if every model
        (default: the release's) holds on the written files; raises
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` and leaves nothing otherwise
        (:func:`~kerckhoffs.engines.dask_release.write_dask_release`). ``overwrite`` replaces
        an earlier kerckhoffs release there, never a folder holding the input or a path in
        ``protect``."""
        chosen = self.models if models is None else tuple(models)
        return write_dask_release(
            self.table, self.groups, chosen, out_dir, self.provenance,
            overwrite=overwrite, protect=protect,
        )  # fmt: skip

    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """The ``release.json`` of the release, without the parts' digests (those are known
        once the parts are written)."""
        return dask_metadata(self.table, self.n_groups, self.provenance, checks, models)


def check_request(
    algorithm: str, models: Sequence[PrivacyModel], options: Mapping[str, Any] | None
) -> None:
    """Refuse, in one line and before a cluster is started, an algorithm the Dask engine does
    not run, an option it does not take, no model, or a model the algorithm cannot enforce
    (the m-privacy anonymizers: also m-privacy missing or without a constraint)."""
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"{algorithm}: the Dask engine runs {', '.join(ALGORITHMS)}")
    opts = dict(options or {})
    info = get(algorithm)
    if algorithm in MONDRIAN:
        takes = {"median", "cuts"} | ({"categorical_cuts"} if algorithm == "mondrian" else set())
        unknown = sorted(set(opts) - takes)
        cat = opts.get("categorical_cuts")
        if cat is not None and str(cat) not in ("values", "median"):
            unknown = [f"categorical_cuts={cat}"]
        if unknown:
            also = ", and categorical_cuts values or median" if algorithm == "mondrian" else ""
            raise ParameterError(
                f"option {unknown[0]!r}: {algorithm} on Dask takes median and cuts{also}"
            )
    else:
        info.check_options(opts)
    if not models:
        raise ParameterError("give at least one privacy model, e.g. models=['k=5']")
    for m in models:
        if type(m).__name__ not in info.models:
            raise ParameterError(
                f"{algorithm} cannot enforce {m.name} ({written_model(m)}); it enforces: "
                f"{', '.join(written(name) for name in info.models)}"
            )
    if algorithm in PROVIDERS:
        setting_from_models(combine_m_privacy(list(models)), algorithm)


def run_dask(
    dt: DaskTable,
    algorithm: str,
    models: Sequence[PrivacyModel],
    options: Mapping[str, Any] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    verify: bool = True,
) -> DaskRelease:
    """Run ``algorithm`` on ``dt`` for ``models`` and return the release, checked on the
    workers (``verify``) before it is returned. ``progress(level, open_groups)`` is called per
    level. Unknown algorithms and options are refused in one line before any work."""
    check_request(algorithm, models, options)
    opts = dict(options or {})
    models = list(models)
    notes: list[str] = []
    if algorithm in MONDRIAN:
        groups = mondrian_dask(
            dt, models, plus=algorithm == "mondrian+", median=str(opts.get("median", "lower")),
            cuts=str(opts.get("cuts", "strict")), progress=progress,
            categorical_cuts=None if "categorical_cuts" not in opts
            else str(opts["categorical_cuts"]),
        )  # fmt: skip
        notes.append(f"{groups.levels} levels on the partitions")
    else:
        models = combine_m_privacy(models)
        groups, providers = mprivacy_dask(dt, models, algorithm, progress=progress, **opts)
        counted = [r for r in providers.replies if r.kind != "generalize_and_submit"]
        queries = len(counted) // max(providers.n_providers, 1)
        notes.append(
            f"{groups.levels} levels; {providers.n_providers} providers on "
            f"{len(set(providers.workers))} worker(s) answered {queries:,} count queries "
            f"({sum(r.bytes for r in counted) / 1e3:,.1f} KB of counts, no record), then "
            "submitted their generalized records"
        )
    release = DaskRelease(dt, groups, tuple(models), Provenance(algorithm, groups.params), notes)
    if verify:
        release.verify()
    return release
