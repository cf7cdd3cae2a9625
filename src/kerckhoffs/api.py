"""The Python entry points: anonymize, check, measure, attack and audit in one call each.

>>> import kerckhoffs as kh
>>> from kerckhoffs.datasets import generate_hospital
>>> df = generate_hospital(600, seed=0)
>>> release = kh.anonymize(df, quasi=["age", "sex", "zip"], sensitive="disease",
...                        algorithm="mondrian", models=["k=5", "l=3"])
>>> release.to_pandas().index.equals(df.index)        # input order, input index
True
>>> kh.check(df, quasi=["age", "sex", "zip"], sensitive="disease", models=["k=2"]).satisfied
False

These functions hold the pipeline the command line runs (the CLI is a thin layer over them):
the whole-table validation of :meth:`Table.encode <kerckhoffs.data.table.Table.encode>`, the
refusal of models no release of the table can meet, the algorithm's options checked before
any work, the publishing scheme, and the fail-closed check: :func:`anonymize` returns a release
only after the models were checked again on its materialized tables, read back the way another
tool's release is read (:meth:`Release.verify <kerckhoffs.release.Release.verify>`), and
:meth:`Release.write <kerckhoffs.release.Release.write>` checks once more before writing.

Randomness follows scikit-learn's ``random_state`` convention with one difference of meaning:
``seed=None`` (the default) draws fresh secret randomness from the operating system, and an int or a
``numpy.random.Generator`` is for tests and experiments only, since an adversary who knows the seed
re-runs the algorithm and undoes its random choices (``docs/theory/choices.md#secret-randomness``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from kerckhoffs.algorithms.registry import AlgorithmInfo, get
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, ParameterError
from kerckhoffs.models import PrivacyModel, combine_m_privacy
from kerckhoffs.pipelines.arguments import (
    DataLike,
    HierarchyLike,
    ModelLike,
    ProvidersLike,
    as_models,
    dask_client,
    is_dask_frame,
    schema_of,
    table_of,
)
from kerckhoffs.pipelines.audit import AuditReport, KnowledgeLike, attack, audit
from kerckhoffs.pipelines.check import CheckReport, Measures, check, measure, read_release
from kerckhoffs.randomness import Seed, check_seed
from kerckhoffs.release import Partition, Release, Scheme

__all__ = [
    "AuditReport",
    "CheckReport",
    "KnownSeedWarning",
    "Measures",
    "Plan",
    "anonymize",
    "anonymize_table",
    "as_models",
    "attack",
    "audit",
    "check",
    "measure",
    "plan",
    "read_release",
]

if TYPE_CHECKING:
    from dask.dataframe import DataFrame as DaskFrame

    from kerckhoffs.engines.dask_run import DaskRelease

# the argument types, named here too: the signatures of the public functions use them
__aliases__ = (DataLike, HierarchyLike, KnowledgeLike, ModelLike, ProvidersLike)


class KnownSeedWarning(UserWarning):
    """A randomized algorithm ran with a given seed: anyone who learns it can undo the random
    choices, so the release is only as safe as the seed is secret."""


# -- anonymize -------------------------------------------------------------------------------
@overload
def anonymize(
    data: DaskFrame,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    algorithm: str,
    models: ModelLike | Iterable[ModelLike],
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    seed: Seed = None,
    scheme: Scheme | str | None = None,
    **options: Any,
) -> DaskRelease: ...


@overload
def anonymize(
    data: DataLike,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    algorithm: str,
    models: ModelLike | Iterable[ModelLike],
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    seed: Seed = None,
    scheme: Scheme | str | None = None,
    **options: Any,
) -> Release: ...


def anonymize(
    data: DataLike | DaskFrame,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    algorithm: str,
    models: ModelLike | Iterable[ModelLike],
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    seed: Seed = None,
    scheme: Scheme | str | None = None,
    **options: Any,
) -> Release | DaskRelease:
    """Anonymize ``data`` with ``algorithm`` so that every model holds; return the release.

    ``data``: a DataFrame (or a CSV/Parquet path), or a Dask DataFrame: then the work runs on
    the current ``dask.distributed`` client's workers (``mondrian``, ``mondrian+``,
    ``provider-aware``, ``mondrian-mprivacy``; :mod:`kerckhoffs.engines.dask_run`) and a
    :class:`~kerckhoffs.engines.dask_run.DaskRelease` comes back, its rows still on the
    workers (``.write(dir)`` publishes it, checked from the files). Columns are named by
    ``quasi`` and ``sensitive`` (kinds inferred; ``hierarchies`` maps a QI to an ARX-format
    hierarchy file, a :class:`~kerckhoffs.data.hierarchy.Hierarchy` or column options such as
    ``{"widths": [5, 10, 20]}``), or by a ``schema``. ``algorithm``: a registered name
    (``kerckhoffs algorithms`` lists them, e.g. ``"mondrian"``, ``"mondrian++"``, ``"anatomy"``,
    ``"hilb++strict"``). ``models``: ``["k=5", "l=3"]`` or model objects. ``seed``: ``None``
    draws fresh secret randomness; a given seed warns (:class:`KnownSeedWarning`).
    ``scheme``: ``"generalization"`` or ``"bucketization"`` where the algorithm offers both.
    Other keywords are the algorithm's options (an unknown one is refused, naming those it
    accepts).

    The release remembers its models (``release.check()``, ``release.write(dir)``) and was
    checked independently before it is returned (:meth:`Release.verify`): a
    :class:`~kerckhoffs.errors.PrivacyCheckFailed` is raised rather than a release that does
    not hold.

    >>> import kerckhoffs as kh
    >>> from kerckhoffs.datasets import generate_hospital
    >>> r = kh.anonymize(generate_hospital(600, seed=0), quasi=["age", "zip"],
    ...                  sensitive="disease", algorithm="mondrian", models=["k=5", "l=3"])
    >>> [x.satisfied for x in r.check()]
    [True, True]
    """
    sch = schema_of(quasi, sensitive, schema, hierarchies)
    chosen = as_models(models)
    checked = plan(algorithm, seed=seed, options=options)
    if checked.seed_reproducible:
        warnings.warn(
            f"seed makes {checked.info.name}'s random choices reproducible; anyone who learns "
            "it can re-run the algorithm and undo them: use it for tests and experiments only, "
            "and keep it secret (it is never written into the release)",
            KnownSeedWarning,
            stacklevel=2,
        )
    if is_dask_frame(data):
        return _anonymize_dask(data, sch, algorithm, chosen, scheme, options)
    table = table_of(data, sch)
    return anonymize_table(table, algorithm, chosen, seed=seed, scheme=scheme, options=options)


def _anonymize_dask(
    ddf: Any,
    schema: Schema,
    algorithm: str,
    models: list[PrivacyModel],
    scheme: Scheme | str | None,
    options: Mapping[str, Any],
) -> DaskRelease:
    """:func:`anonymize` of a Dask DataFrame on the current client's workers."""
    from kerckhoffs.engines.dask_run import check_request, run_dask
    from kerckhoffs.engines.dask_table import encode_dask

    if scheme is not None and str(scheme) != Scheme.GENERALIZATION.value:
        raise ParameterError(f"on Dask, {algorithm} publishes by generalization, not {scheme!r}")
    client = dask_client("anonymized")
    check_request(algorithm, models, options)
    dt = encode_dask(ddf, schema, client)
    return run_dask(dt, algorithm, models, options)


def anonymize_table(
    table: Table,
    algorithm: str,
    models: Sequence[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: Scheme | str | None = None,
    options: Mapping[str, Any] | None = None,
    verify: bool = True,
) -> Release:
    """The anonymization pipeline on an encoded table (what :func:`anonymize` and the
    ``anonymize`` command share): options and seed checked before any work, models no release
    of the table can meet refused (k above the table size, l above the SA domain), the
    algorithm run, the scheme applied, and (``verify``) the independent check."""
    checked = plan(algorithm, seed=seed, scheme=scheme, options=options)
    info, wanted, opts = checked.info, checked.scheme, dict(checked.options)
    if not models:
        raise ParameterError("give at least one privacy model, e.g. models=['k=5']")
    models = combine_m_privacy(models)
    hist = Release(table, Partition.single(table.n)).histogram()
    for m in models:
        m.validate(hist, repr(table.sa_name))
    if wanted is not None and "scheme" in info.options:
        opts.setdefault("scheme", wanted.value)
    release = info.run(table, list(models), seed=seed, **opts)
    if wanted is not None and release.scheme != wanted:
        release = release.with_scheme(wanted)
    release = release.with_models(models)
    if verify:
        release.verify()
    return release


# -- the request, checked before any work ------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """An anonymization request checked before any work (:func:`plan`): the algorithm, its
    options, the seed and the publishing scheme asked for (None: the algorithm's own)."""

    info: AlgorithmInfo
    options: Mapping[str, Any] = field(default_factory=dict)
    seed: Seed = None
    scheme: Scheme | None = None

    @property
    def seed_reproducible(self) -> bool:
        """A seed was given to a randomized algorithm: its random choices can be re-run by
        whoever learns the seed (the front ends warn: :class:`KnownSeedWarning`)."""
        return self.seed is not None and self.info.randomized

    @property
    def seed_ignored(self) -> bool:
        """A seed was given to a deterministic algorithm: it has no effect."""
        return self.seed is not None and not self.info.randomized


def plan(
    algorithm: str,
    *,
    seed: Seed = None,
    scheme: Scheme | str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Plan:
    """Check an anonymization request before any work, in this order, each refusal one line:
    the algorithm's name, its options (:meth:`AlgorithmInfo.check_options
    <kerckhoffs.algorithms.registry.AlgorithmInfo.check_options>`: their names, then
    :meth:`~kerckhoffs.algorithms.registry.AlgorithmInfo.check_values`: their types and
    ranges), the seed (a non-negative
    int or a ``numpy.random.Generator``; refused for an algorithm whose randomness cannot be
    seeded), and the scheme (one the algorithm publishes by). What :func:`anonymize`,
    :func:`anonymize_table` and ``kerckhoffs anonymize`` run first.

    >>> plan("mondrian", options={"median": "upper"}).info.name
    'mondrian'
    >>> plan("mondrian", options={"depth": 3})
    Traceback (most recent call last):
    kerckhoffs.errors.ArgumentError: option depth=3: mondrian has no option 'depth' (...)
    """
    info = get(algorithm)
    opts = dict(options or {})
    info.check_options(opts)
    info.check_values(opts)
    if seed is not None and not isinstance(seed, np.random.Generator):
        check_seed(seed)
    if seed is not None and not info.seedable:
        raise ArgumentError(
            "seed",
            reason=f"{info.name} cannot be seeded (OpenDP draws its noise from a secure generator)",
        )
    wanted = None
    if scheme is not None:
        allowed = [s.value for s in info.schemes]
        if str(scheme) not in allowed:
            raise ParameterError(f"{info.name} publishes by {', '.join(allowed)}, not {scheme!r}")
        wanted = Scheme(scheme)
    return Plan(info, opts, seed, wanted)
