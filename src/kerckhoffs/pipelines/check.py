"""Checking privacy models and measuring what a table or a release achieves: the pipelines
behind :func:`kerckhoffs.check`, :func:`kerckhoffs.measure` and
:func:`kerckhoffs.read_release`, and behind ``kerckhoffs check`` on the command line.

What is checked is a release (:func:`as_release`): a :class:`Release` as it is, a release
directory read back (its files verified against ``release.json``), a table published by
another tool, or a table as it stands (each distinct QI vector one group).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kerckhoffs.data.provider_rows import read_provider_rows, release_integrity
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.metrics.reidentification import (
    DEFAULT_THRESHOLD,
    ReidentificationRisk,
    reidentification_risk,
)
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    ModelResult,
    MPrivacy,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
    combine_m_privacy,
)
from kerckhoffs.models.base import format_number
from kerckhoffs.models.parse import SYNTAX
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
from kerckhoffs.release import Partition, Provenance, Release, Scheme

if TYPE_CHECKING:
    from dask.dataframe import DataFrame as DaskFrame


def read_release(
    path: str | Path,
    schema: Schema | str | Path | None = None,
    *,
    verify: bool = True,
    providers: ProvidersLike | None = None,
    sep: str | None = None,
) -> Release:
    """A published release read back: a kerckhoffs release directory (its files verified
    against the SHA-256 digests of ``release.json`` unless ``verify=False``) or another tool's
    table (needs the ``schema``, whose hierarchies say what each cell covers; ``sep``: its CSV
    delimiter, detected by default).

    ``providers``: the data provider of each published row, which the files never hold, so
    that m-privacy (paper 003) can be checked: a providers file (the CSV ``anonymize
    --provider-rows`` writes, :mod:`kerckhoffs.data.provider_rows`; it names the release it
    belongs to and another release's file is refused) or one label per row of the release
    table, in file order."""
    sch = None if schema is None else schema_of(None, None, schema, None)
    release = Release.from_published(path, sch, sep=sep, verify=verify)
    return release if providers is None else with_providers(release, providers, where=path)


def with_providers(
    release: Release, providers: ProvidersLike, *, where: str | Path = "the release"
) -> Release:
    """``release`` with the data provider of each published row: labels, or a providers file
    bound to the release's ``release.json`` (``where`` names the release in an error)."""
    if isinstance(providers, str | Path):
        bound_to = release_integrity(release.published_metadata, where)
        providers = read_provider_rows(providers, release.table.n, release=bound_to)
    return release.with_providers(np.asarray(providers))


def as_release(
    data: DataLike | Release | Table,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    providers: ProvidersLike | None = None,
    *,
    published: bool = False,
    verify: bool = True,
    sep: str | None = None,
) -> Release:
    """What :func:`check` and :func:`measure` evaluate (and ``kerckhoffs check``): a release
    as it is, a release directory read back (``verify``: against ``release.json``), a table
    published by another tool (``published``: rows with the same QI cells form a group), or
    a table as it stands (each distinct QI vector one group). ``sep``: a CSV's delimiter."""
    if isinstance(data, Release):
        return data if providers is None else with_providers(data, providers)
    if isinstance(data, str | Path) and Path(data).is_dir():
        return read_release(data, schema, verify=verify, providers=providers)
    if providers is not None:
        raise ParameterError(
            "providers= is for a release; a table gives its providers in a column with the "
            "schema role 'provider'"
        )
    sch = schema_of(quasi, sensitive, schema, hierarchies)
    if published and isinstance(data, str | Path):
        return read_release(data, sch, sep=sep)
    table = table_of(data, sch, sep=sep)
    return Release(table, Partition.by_qi(table), provenance=Provenance("none"))


def model_keys(models: Sequence[PrivacyModel]) -> list[str]:
    """Each model's short name (``"k"``, ``"l"``, ...), with its parameter when two share it."""
    taken: set[str] = set()
    keys = []
    for model in models:
        key = SYNTAX.get(type(model).__name__, model.name)
        if key in taken:
            key = f"{key} ({model.parameter})"
        taken.add(key)
        keys.append(key)
    return keys


@dataclass(eq=False)
class CheckReport:
    """The outcome of :func:`check`: one :class:`~kerckhoffs.models.ModelResult` per model.

    ``satisfied``: every model holds in every group. ``achieved``: each model's release-wide
    value (the worst group's), keyed by the model's short name (``"k"``, ``"l"``,
    ``"entropy-l"``, ...). ``groups``: one row per group (its published id) with its size and
    each model's measure and verdict (``"<name> ok"``), worst groups easy to sort out.

    ``release`` is what was checked; ``None`` for a Dask DataFrame checked on the workers,
    whose rows stay there: then ``sizes`` gives each group's size and ``groups`` numbers the
    groups ``0 ..`` in order of first appearance, as :meth:`Partition.by_qi` does.
    """

    release: Release | None = field(repr=False)
    results: list[ModelResult]
    keys: list[str]
    sizes: np.ndarray | None = field(default=None, repr=False)

    @property
    def satisfied(self) -> bool:
        """Whether every model holds."""
        return all(r.satisfied for r in self.results)

    @property
    def achieved(self) -> dict[str, float]:
        """Each model's achieved value (the worst group's)."""
        return {k: r.achieved for k, r in zip(self.keys, self.results, strict=True)}

    @property
    def groups(self) -> pd.DataFrame:
        """Per-group measures and verdicts, indexed by the published group id."""
        sizes = self._sizes()
        if self.release is not None:
            numbering = self.release.published_numbering()
        else:
            numbering = np.arange(sizes.shape[0])
        df = pd.DataFrame({"size": sizes})
        for k, r in zip(self.keys, self.results, strict=True):
            df[k] = r.group_values
            df[f"{k} ok"] = r.group_ok
        df.index = pd.Index(numbering, name="group")
        return df.sort_index()

    def _sizes(self) -> np.ndarray:
        if self.release is not None:
            return self.release.partition.sizes
        if self.sizes is None:
            raise ParameterError("a CheckReport needs the release or the groups' sizes")
        return self.sizes

    def __repr__(self) -> str:
        sizes = self._sizes()
        if self.release is not None and self.release.scheme == Scheme.DP:
            # noisy counts of a public domain of cells: no rows, no groups are published
            n = sizes.shape[0]
            what = f"{n:,} cell{'' if n == 1 else 's'} of noisy counts"
        else:
            rows, groups = int(sizes.sum()), sizes.shape[0]
            what = f"{rows:,} row{'' if rows == 1 else 's'}, {groups:,} group" + (
                "" if groups == 1 else "s"
            )
        head = f"CheckReport: {'all models hold' if self.satisfied else 'VIOLATED'} ({what})"
        return "\n".join([head, *(f"  {r.summary()}" for r in self.results)])


def release_constraint(models: list[PrivacyModel], release: Release) -> list[PrivacyModel]:
    """``models`` with an m-privacy model given alone (``--model m-privacy=3`` on a release)
    taking its constraint from the release's own models: the constraint of the m-privacy it
    was made for, else its other models."""
    if any(not isinstance(m, MPrivacy) for m in models):
        return models
    recorded = [m for m in release.models if isinstance(m, MPrivacy) and m.models]
    others = [m for m in release.models if not isinstance(m, MPrivacy)]
    constraint = list(recorded[0].models) if recorded else others
    if not constraint:
        return models
    return [
        m.with_models(constraint) if isinstance(m, MPrivacy) and not m.models else m for m in models
    ]


def check(
    data: DataLike | Release | DaskFrame,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    models: ModelLike | Iterable[ModelLike] | None = None,
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    providers: ProvidersLike | None = None,
) -> CheckReport:
    """Check privacy models on a table as it stands, a :class:`Release`, or a release
    directory (read back and verified); ``models`` defaults to a release's own models.

    m-privacy (paper 003) needs each row's data provider: a table's provider column, or for a
    release ``providers`` (see :func:`read_release`). An m-privacy model given alone
    (``models="m-privacy=3"``) on a release is checked w.r.t. the release's own models.

    A table as it stands is published unchanged: the rows with the same QI values form a
    group (what ``kerckhoffs check data.csv`` does). A Dask DataFrame is checked so on the
    current ``dask.distributed`` client's workers, from per-group SA histograms (what
    ``kerckhoffs check DATA --engine dask`` does; :func:`kerckhoffs.engines.check_dask`);
    ``models`` are then required.

    >>> import kerckhoffs as kh
    >>> from kerckhoffs.datasets import generate_hospital
    >>> report = kh.check(generate_hospital(600, seed=0), quasi=["age", "zip"],
    ...                   sensitive="disease", models=["k=2", "l=2"])
    >>> report.satisfied, sorted(report.achieved)
    (False, ['k', 'l'])
    """
    if is_dask_frame(data):
        if providers is not None:
            raise ParameterError(
                "providers= is for a release; a Dask DataFrame gives its providers in a column "
                "with the schema role 'provider'"
            )
        return check_dask_frame(data, schema_of(quasi, sensitive, schema, hierarchies), models)
    release = as_release(data, quasi, sensitive, schema, hierarchies, providers)
    given = None
    if models is not None:
        given = combine_m_privacy(release_constraint(as_models(models, combine=False), release))
    chosen = release.chosen_models(given)
    hist = release.histogram()
    for m in chosen:
        m.validate(hist, repr(release.table.sa_name))
    results = release.check(chosen)
    return CheckReport(release, results, model_keys(chosen))


def check_dask_frame(
    ddf: Any, schema: Schema, models: ModelLike | Iterable[ModelLike] | None
) -> CheckReport:
    """:func:`check` of a Dask DataFrame as it stands, on the current client's workers."""
    if models is None:
        raise ParameterError("checking a Dask DataFrame needs models, e.g. models=['k=5']")
    chosen = combine_m_privacy(as_models(models, combine=False))
    from kerckhoffs.engines.dask_check import check_dask
    from kerckhoffs.engines.dask_table import encode_dask

    result = check_dask(encode_dask(ddf, schema, dask_client("checked")), chosen)
    return CheckReport(None, result.results, model_keys(chosen), sizes=result.sizes)


@dataclass(frozen=True)
class Measures:
    """What a table or release achieves, with no threshold (what pycanon's functions return).

    ``k``: the smallest group. ``l``: frequency l-diversity, ``min |G| / S_max(G)`` (the
    papers' definition). ``distinct_l``: the fewest distinct SA values in a group.
    ``entropy_l``: ``exp`` of the smallest group SA entropy. ``recursive_c`` for
    ``recursive_l``: the smallest c with ``r_1 < c (r_l + ... + r_q)`` in every group (``l`` is
    ``distinct_l``, as pycanon reports it; ``inf`` below 2). ``t``: the largest EMD between a
    group's SA distribution and the table's. ``alpha``: the largest share of sensitive values in
    a group ((alpha, k)-anonymity's alpha; its k is ``k``). ``m``: the largest m of per-group
    m-confidentiality. ``risk``: the prosecutor, marketer and (given a population) journalist
    re-identification risks (:class:`~kerckhoffs.metrics.reidentification.ReidentificationRisk`).
    """

    rows: int
    groups: int
    k: int
    l: float  # noqa: E741
    distinct_l: int
    entropy_l: float
    recursive_c: float
    recursive_l: int
    t: float
    alpha: float
    m: int
    risk: ReidentificationRisk | None = None

    def to_dict(self) -> dict[str, float]:
        """The privacy measures as a plain dict (the risks: ``risk.to_dict()``)."""
        out = dataclasses.asdict(self)
        out.pop("risk")
        return out

    def __repr__(self) -> str:
        parts = [f"{k}={format_number(float(v))}" for k, v in self.to_dict().items()]
        if self.risk is not None:
            parts.append(f"risk={self.risk!r}")
        return f"Measures({', '.join(parts)})"


def measure(
    data: DataLike | Release,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
    population: pd.DataFrame | None = None,
    risk_threshold: float = DEFAULT_THRESHOLD,
) -> Measures:
    """The achieved k, l (frequency, distinct, entropy, recursive), t, alpha and m of a table
    as it stands, a release, or a release directory, and its re-identification risks
    (prosecutor, marketer; journalist when ``population`` holds every released person among
    others; a record is at risk above ``risk_threshold``): :class:`Measures`. A differentially
    private release (noisy counts of cells: no groups) is refused in one line.

    >>> import kerckhoffs as kh
    >>> from kerckhoffs.datasets import generate_hospital
    >>> kh.measure(generate_hospital(600, seed=0), ["age", "zip"], "disease").k
    1
    """
    release = as_release(data, quasi, sensitive, schema, hierarchies)
    if release.scheme == Scheme.DP:
        raise ParameterError(
            "measure: a differentially private release publishes noisy counts of cells, not "
            "groups of rows, so k, l, t, alpha and m are not defined on it (its guarantee is "
            "its epsilon: check it with kh.check(release))"
        )
    hist = release.histogram()

    def achieved(model: PrivacyModel) -> float:
        return float(model.evaluate(hist).achieved)

    distinct = int(achieved(DistinctLDiversity(1)))
    rec_l = max(distinct, 2)
    return Measures(
        rows=release.table.n,
        groups=release.partition.n_groups,
        k=int(achieved(KAnonymity(1))),
        l=achieved(LDiversity(1)),
        distinct_l=distinct,
        entropy_l=achieved(EntropyLDiversity(1)),
        recursive_c=achieved(RecursiveCLDiversity(1, rec_l)),
        recursive_l=rec_l,
        t=achieved(TCloseness(1.0)),
        alpha=achieved(AlphaKAnonymity(1.0, 1)),
        m=int(achieved(MConfidentiality(1))),
        risk=reidentification_risk(
            release, population, threshold=risk_threshold, schema=_schema_object(schema)
        ),
    )


def _schema_object(schema: Schema | str | Path | None) -> Schema | None:
    """A schema given as an object or a TOML path (for reading published cells)."""
    if schema is None or isinstance(schema, Schema):
        return schema
    return Schema.from_toml(schema)


__all__ = [
    "CheckReport",
    "Measures",
    "as_release",
    "check",
    "measure",
    "model_keys",
    "read_release",
    "with_providers",
]
