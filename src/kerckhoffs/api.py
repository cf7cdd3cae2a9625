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
``seed=None`` (the default) draws fresh secret randomness from the operating system, and an
int or a ``numpy.random.Generator`` is for tests and experiments only, since an adversary who
knows the seed re-runs the algorithm and undoes its random choices (DESIGN.md section 5).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import numpy as np
import pandas as pd

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.provider_rows import read_provider_rows, release_integrity
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, KerckhoffsError, ParameterError
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
    parse_model,
)
from kerckhoffs.models.base import format_number
from kerckhoffs.models.parse import SYNTAX
from kerckhoffs.models.scope import sensitive_values
from kerckhoffs.randomness import Seed, check_seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme

__all__ = [
    "AuditReport",
    "CheckReport",
    "KnownSeedWarning",
    "Measures",
    "anonymize",
    "anonymize_table",
    "as_models",
    "attack",
    "audit",
    "check",
    "measure",
    "read_release",
]

if TYPE_CHECKING:
    from dask.dataframe import DataFrame as DaskFrame

    from kerckhoffs.engines.dask_run import DaskRelease

ModelLike: TypeAlias = str | PrivacyModel
"""A privacy model as an object (``KAnonymity(5)``) or as the command line writes it
(``"k=5"``, ``"l=3"``, ``"alpha-k=0.5,5"``: :func:`kerckhoffs.models.parse_model`)."""
DataLike: TypeAlias = pd.DataFrame | str | Path
HierarchyLike: TypeAlias = str | Path | Hierarchy | Mapping[str, Any]
ProvidersLike: TypeAlias = str | Path | Sequence[Any] | np.ndarray
"""The data provider of each published row: a providers file
(:mod:`kerckhoffs.data.provider_rows`) or one label per row of the release table."""


class KnownSeedWarning(UserWarning):
    """A randomized algorithm ran with a given seed: anyone who learns it can undo the random
    choices, so the release is only as safe as the seed is secret."""


# -- arguments ------------------------------------------------------------------------------
def as_models(
    models: ModelLike | Iterable[ModelLike], *, combine: bool = True
) -> list[PrivacyModel]:
    """Model objects from objects or command-line texts; at least one is required. With
    ``combine``, an m-privacy model without a constraint takes the other models as its
    constraint (:func:`~kerckhoffs.models.combine_m_privacy`)."""
    if isinstance(models, str | PrivacyModel):
        models = [models]
    out: list[PrivacyModel] = []
    for m in models:
        if isinstance(m, PrivacyModel):
            out.append(m)
        elif isinstance(m, str):
            out.append(parse_model(m))
        else:
            raise ParameterError(
                f"a model is a PrivacyModel or a text such as 'k=5', got {type(m).__name__}"
            )
    if not out:
        raise ParameterError("give at least one privacy model, e.g. models=['k=5']")
    return combine_m_privacy(out) if combine else out


def _release_constraint(models: list[PrivacyModel], release: Release) -> list[PrivacyModel]:
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


def _schema(
    quasi: Sequence[str] | None,
    sensitive: str | None,
    schema: Schema | str | Path | None,
    hierarchies: Mapping[str, HierarchyLike] | None,
) -> Schema:
    """The schema given, or one built from ``quasi``, ``sensitive`` and ``hierarchies``."""
    if schema is not None:
        if quasi is not None or sensitive is not None or hierarchies is not None:
            raise ParameterError(
                "give either schema or quasi/sensitive/hierarchies, not both (the schema "
                "already says which columns are quasi-identifiers and which is sensitive)"
            )
        return schema if isinstance(schema, Schema) else Schema.from_toml(schema)
    if quasi is None or sensitive is None:
        raise ParameterError(
            "say which columns are quasi-identifiers and which is sensitive: "
            "quasi=[...], sensitive='...' (or schema=Schema...)"
        )
    if isinstance(quasi, str):
        quasi = [quasi]
    hier = dict(hierarchies or {})
    unknown = sorted(set(hier) - set(quasi))
    if unknown:
        raise ParameterError(f"hierarchies names {unknown[0]!r}, which is not in quasi")
    cols: dict[str, dict[str, Any]] = {}
    for name in quasi:
        h = hier.get(name)
        if h is None:
            cols[name] = {}
        elif isinstance(h, Mapping):  # column options: {"widths": [5, 10]}, {"kind": ...}
            cols[name] = dict(h)
        else:
            cols[name] = {"hierarchy": h}
    return Schema.build(cols, sensitive)


def _table(data: DataLike | Table, schema: Schema) -> Table:
    if isinstance(data, Table):
        return data
    if isinstance(data, pd.DataFrame):
        return Table.encode(data, schema)
    if isinstance(data, str | Path):
        return Table.from_csv(data, schema)
    raise ParameterError(
        f"data must be a pandas DataFrame, a CSV/Parquet path or a Table, got {type(data).__name__}"
    )


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
    sch = _schema(quasi, sensitive, schema, hierarchies)
    chosen = as_models(models)
    from kerckhoffs.algorithms import get

    info = get(algorithm)
    info.check_options(options)
    if seed is not None and info.randomized:
        warnings.warn(
            f"seed makes {info.name}'s random choices reproducible; anyone who learns it can "
            "re-run the algorithm and undo them: use it for tests and experiments only, and "
            "keep it secret (it is never written into the release)",
            KnownSeedWarning,
            stacklevel=2,
        )
    if _is_dask_frame(data):
        return _anonymize_dask(data, sch, algorithm, chosen, scheme, options)
    table = _table(data, sch)
    return anonymize_table(table, algorithm, chosen, seed=seed, scheme=scheme, options=options)


def _check_dask(
    ddf: Any, schema: Schema, models: ModelLike | Iterable[ModelLike] | None
) -> CheckReport:
    """:func:`check` of a Dask DataFrame as it stands, on the current client's workers."""
    if models is None:
        raise ParameterError("checking a Dask DataFrame needs models, e.g. models=['k=5']")
    chosen = combine_m_privacy(as_models(models, combine=False))
    from kerckhoffs.engines.dask_check import check_dask
    from kerckhoffs.engines.dask_table import encode_dask

    result = check_dask(encode_dask(ddf, schema, _dask_client("checked")), chosen)
    return CheckReport(None, result.results, _keys(chosen), sizes=result.sizes)


def _dask_client(what: str) -> Any:
    """The current ``dask.distributed`` client, or a one-line error saying how to start one."""
    try:
        from distributed import get_client
    except ImportError:  # pragma: no cover - dask without distributed
        raise ParameterError(
            "a Dask DataFrame needs dask.distributed: pip install 'kerckhoffs[dask]'"
        ) from None
    try:
        return get_client()
    except ValueError:
        raise ParameterError(
            f"a Dask DataFrame is {what} on a dask.distributed client's workers: start one "
            "first (distributed.Client() for this machine, Client('tcp://host:8786') for a "
            "cluster)"
        ) from None


def _is_dask_frame(data: object) -> bool:
    """A Dask DataFrame, told without importing Dask (an optional extra)."""
    return type(data).__module__.startswith("dask.") and hasattr(data, "to_delayed")


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
    client = _dask_client("anonymized")
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
    from kerckhoffs.algorithms import get

    info = get(algorithm)
    opts = dict(options or {})
    info.check_options(opts)
    if seed is not None and not isinstance(seed, np.random.Generator):
        check_seed(seed)
    wanted = None
    if scheme is not None:
        allowed = [s.value for s in info.schemes]
        if str(scheme) not in allowed:
            raise ParameterError(f"{info.name} publishes by {', '.join(allowed)}, not {scheme!r}")
        wanted = Scheme(scheme)
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


def read_release(
    path: str | Path,
    schema: Schema | str | Path | None = None,
    *,
    verify: bool = True,
    providers: ProvidersLike | None = None,
) -> Release:
    """A published release read back: a kerckhoffs release directory (its files verified
    against the SHA-256 digests of ``release.json`` unless ``verify=False``) or another tool's
    table (needs the ``schema``, whose hierarchies say what each cell covers).

    ``providers``: the data provider of each published row, which the files never hold, so
    that m-privacy (paper 003) can be checked: a providers file (the CSV ``anonymize
    --provider-rows`` writes, :mod:`kerckhoffs.data.provider_rows`; it names the release it
    belongs to and another release's file is refused) or one label per row of the release
    table, in file order."""
    sch = None if schema is None else _schema(None, None, schema, None)
    release = Release.from_published(path, sch, verify=verify)
    return release if providers is None else _with_providers(release, providers)


def _with_providers(release: Release, providers: ProvidersLike) -> Release:
    if isinstance(providers, str | Path):
        bound_to = release_integrity(release.published_metadata)
        providers = read_provider_rows(providers, release.table.n, release=bound_to)
    return release.with_providers(np.asarray(providers))


# -- check and measure -----------------------------------------------------------------------
def _release_of(
    data: DataLike | Release | Table,
    quasi: Sequence[str] | None,
    sensitive: str | None,
    schema: Schema | str | Path | None,
    hierarchies: Mapping[str, HierarchyLike] | None,
    providers: ProvidersLike | None = None,
) -> Release:
    """What :func:`check` and :func:`measure` evaluate: a release as it is, a release
    directory read back, or a table as it stands (each distinct QI vector one group)."""
    if isinstance(data, Release):
        return data if providers is None else _with_providers(data, providers)
    if isinstance(data, str | Path) and Path(data).is_dir():
        return read_release(data, schema, providers=providers)
    if providers is not None:
        raise ParameterError(
            "providers= is for a release; a table gives its providers in a column with the "
            "schema role 'provider'"
        )
    table = _table(data, _schema(quasi, sensitive, schema, hierarchies))
    return Release(table, Partition.by_qi(table), provenance=Provenance("none"))


def _keys(models: Sequence[PrivacyModel]) -> list[str]:
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
    if _is_dask_frame(data):
        if providers is not None:
            raise ParameterError(
                "providers= is for a release; a Dask DataFrame gives its providers in a column "
                "with the schema role 'provider'"
            )
        return _check_dask(data, _schema(quasi, sensitive, schema, hierarchies), models)
    release = _release_of(data, quasi, sensitive, schema, hierarchies, providers)
    given = None
    if models is not None:
        given = combine_m_privacy(_release_constraint(as_models(models, combine=False), release))
    chosen = release.chosen_models(given)
    hist = release.histogram()
    for m in chosen:
        m.validate(hist, repr(release.table.sa_name))
    results = release.check(chosen)
    return CheckReport(release, results, _keys(chosen))


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
    m-confidentiality.
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

    def to_dict(self) -> dict[str, float]:
        """The measures as a plain dict."""
        return dataclasses.asdict(self)

    def __repr__(self) -> str:
        parts = [f"{k}={format_number(float(v))}" for k, v in self.to_dict().items()]
        return f"Measures({', '.join(parts)})"


def measure(
    data: DataLike | Release,
    quasi: Sequence[str] | None = None,
    sensitive: str | None = None,
    *,
    schema: Schema | str | Path | None = None,
    hierarchies: Mapping[str, HierarchyLike] | None = None,
) -> Measures:
    """The achieved k, l (frequency, distinct, entropy, recursive), t, alpha and m of a table
    as it stands, a release, or a release directory: :class:`Measures`. A differentially
    private release (noisy counts of cells: no groups) is refused in one line.

    >>> import kerckhoffs as kh
    >>> from kerckhoffs.datasets import generate_hospital
    >>> kh.measure(generate_hospital(600, seed=0), ["age", "zip"], "disease").k
    1
    """
    release = _release_of(data, quasi, sensitive, schema, hierarchies)
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
    )


# -- attack and audit ------------------------------------------------------------------------
KnowledgeLike: TypeAlias = Knowledge | pd.DataFrame | str | Path | None


def _knowledge(
    knowledge: KnowledgeLike,
    schema: Schema | str | Path | None,
    others: Iterable[Release | str | Path],
) -> Knowledge:
    if knowledge is None:
        know = Knowledge()
    elif isinstance(knowledge, Knowledge):
        know = knowledge
    elif isinstance(knowledge, pd.DataFrame):
        know = Knowledge(population=knowledge.reset_index(drop=True))
    elif isinstance(knowledge, str | Path):
        know = Knowledge.from_path(knowledge)
    else:
        raise ParameterError(
            "knowledge is a Knowledge, a DataFrame of the population's QIs or a path (TOML or "
            f"CSV), got {type(knowledge).__name__}"
        )
    if schema is not None:
        sch = schema if isinstance(schema, Schema) else Path(schema)
        know = dataclasses.replace(know, schema=sch)
    extra = [r if isinstance(r, Release) else Path(r) for r in others]
    if extra:
        know = dataclasses.replace(know, releases=[*know.releases, *extra])
    return know


def _attacked(release: Release | str | Path, know: Knowledge) -> Release:
    if isinstance(release, Release):
        return release
    if not Path(release).exists():
        raise InputError(f"release not found: {release}")
    return Release.from_published(release, know.load_schema())


def attack(
    release: Release | str | Path,
    name: str,
    *,
    knowledge: KnowledgeLike = None,
    schema: Schema | str | Path | None = None,
    others: Iterable[Release | str | Path] = (),
    options: Mapping[str, Any] | None = None,
) -> AttackResult:
    """Run the attack ``name`` (``kerckhoffs audit --list``: ``minimality``, ``hilb-order``,
    ``negative-association``, ``intersection``, ``seed-replay``) on a release and return what
    the adversary learns, tuple by tuple (:class:`~kerckhoffs.attacks.result.AttackResult`:
    ``.verdict()``, ``.safe``, ``.to_pandas()``).

    ``knowledge``: the adversary's knowledge: a DataFrame of the population's QIs, a path
    (a CSV of them, or a TOML knowledge file) or a
    :class:`~kerckhoffs.attacks.knowledge.Knowledge`. ``others``: other releases of
    overlapping populations (for the intersection attack). ``schema``: needed for a release
    read from files whose cells must be looked up in hierarchies. ``options``: the attack's
    own options (e.g. ``{"confidence": 0.9}`` for the intersection attack). An attack that
    does not apply raises :class:`~kerckhoffs.errors.ParameterError` saying why; one that
    applies but cannot run on this input raises :class:`~kerckhoffs.errors.CannotRun` (or
    the error it met) saying what it lacks.
    """
    from kerckhoffs.attacks.knowledge_check import check_knowledge
    from kerckhoffs.attacks.registry import get_attack

    info = get_attack(name)
    know = _knowledge(knowledge, schema, others)
    rel = _attacked(release, know)
    check_knowledge(know, rel)
    reason = info.applies([rel], know)
    if reason is not None:
        raise ParameterError(f"attack {name} does not apply: {reason}")
    return info.run([rel], know, **dict(options or {}))


@dataclass(eq=False)
class AuditReport:
    """The outcome of :func:`audit`: every attack that applied, with its result.

    ``results``: the attacks that ran. ``skipped``: (attack, why it does not apply).
    ``failed``: (attack, why it could not run). ``unused``: (knowledge, why no attack that ran
    takes it into account). ``sensitive``: the sensitive values the release protects, when
    its schema names a subset of the SA's values (empty otherwise).

    A verdict is a claim. ``unsafe``: some attack disclosed a row (UNSAFE holds whatever else
    could not run). ``safe``: some attack ran, none disclosed anything, and nothing was left
    out: every attack that applies ran on every target, and every piece of knowledge given
    was taken into account by one of them. Otherwise the verdict is INCOMPLETE (something was
    left out, and the line says what: an attack that could not run, even when none ran) or
    NO VERDICT (no attack applies).
    """

    results: list[AttackResult]
    skipped: list[tuple[str, str]]
    failed: list[tuple[str, str]]
    unused: list[tuple[str, str]] = field(default_factory=list)
    sensitive: str = ""

    @property
    def unsafe(self) -> bool:
        """Some attack disclosed a row (or found the release unsafe by its metadata)."""
        return any(r.disclosed for r in self.results)

    @property
    def gaps(self) -> list[str]:
        """What the audit left out, one phrase each: attacks that could not run, targets or
        knowledge an attack could not use, knowledge no attack that ran reads."""
        out = [f"{a} could not run: {why}" for a, why in self.failed]
        out += [f"{r.attack}: {gap}" for r in self.results for gap in r.coverage()]
        out += [f"{what} not used ({why})" for what, why in self.unused]
        return out

    @property
    def safe(self) -> bool:
        """Some attack ran, none found the release unsafe, and nothing was left out."""
        return bool(self.results) and not self.unsafe and not self.gaps

    @property
    def verdict(self) -> str:
        """One line a non-expert can read (what ``kerckhoffs audit`` ends with)."""
        scope = (
            f" (the release protects only the sensitive values {self.sensitive})"
            if self.sensitive
            else ""
        )
        if not self.results and self.failed:
            return (
                "INCOMPLETE: no attack ran to the end, so nothing was tested: "
                + "; ".join(self.gaps)
                + scope
            )
        if not self.results:
            left = "".join(f"; {gap}" for gap in self.gaps)
            return (
                f"NO VERDICT: none of the {len(self.skipped)} attacks applies to this release "
                "with this knowledge (each says why it does not; give the knowledge it needs)"
                + left
            )
        if self.unsafe:
            unsafe = [r for r in self.results if r.disclosed]
            worst = max(unsafe, key=lambda r: (r.compromised, r.finding is not None))
            also = [r.attack for r in unsafe if r is not worst]
            tail = f"; also UNSAFE by {', '.join(also)}" if also else ""
            return worst.verdict() + tail + scope
        ran = ", ".join(r.attack for r in self.results)
        relied = "".join(
            f"; {r.attack} relied on: {a}" for r in self.results for a in r.assumptions
        )
        if self.gaps:
            return (
                f"INCOMPLETE: no row disclosed by the {len(self.results)} attack(s) that ran "
                f"({ran}), but not everything was tested: " + "; ".join(self.gaps) + relied + scope
            )
        return (
            f"SAFE: no row disclosed by the {len(self.results)} attack(s) that apply "
            f"({ran})" + relied + scope
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per attack considered: its verdict and headline figures."""
        rows: list[dict[str, Any]] = [
            {
                "attack": r.attack,
                "ran": True,
                "safe": r.safe,
                "complete": r.complete,
                "compromised": r.compromised,
                "rows": r.n_rows,
                "not_located": r.not_located,
                "max_posterior": r.max_posterior,
                "verdict": r.verdict(),
            }
            for r in self.results
        ]
        rows += [
            {"attack": a, "ran": False, "verdict": f"could not run: {why}"}
            for a, why in self.failed
        ]
        rows += [
            {"attack": a, "ran": False, "verdict": f"not run: {why}"} for a, why in self.skipped
        ]
        rows += [
            {"attack": None, "ran": False, "verdict": f"{what} not used ({why})"}
            for what, why in self.unused
        ]
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return f"AuditReport: {self.verdict}"


def audit(
    release: Release | str | Path,
    *,
    knowledge: KnowledgeLike = None,
    schema: Schema | str | Path | None = None,
    others: Iterable[Release | str | Path] = (),
    on_result: Callable[[str, AttackResult | None, str | None], None] | None = None,
) -> AuditReport:
    """Run every attack that applies to a release (judged from its algorithm, scheme and the
    knowledge given) and return an :class:`AuditReport` (``.safe``, ``.verdict``,
    ``.to_pandas()``). Arguments as :func:`attack`; ``on_result(attack, result, error)`` is
    called as each attack finishes (the command line prints from it). An attack that could
    not run (its own :class:`~kerckhoffs.errors.KerckhoffsError`, from judging whether it
    applies or from running: a release too large to decide, files that lack what it reads)
    is reported in ``failed`` and the other attacks still run; the verdict is then INCOMPLETE,
    or UNSAFE when another attack disclosed. Any other exception is a bug and propagates.

    Knowledge that cannot be used on this release (a rule naming a column it does not have,
    a population without its quasi-identifiers) is refused first
    (:func:`~kerckhoffs.attacks.knowledge_check.check_knowledge`); knowledge that is valid
    but that no attack that runs takes into account makes the verdict INCOMPLETE, never SAFE.
    """
    from kerckhoffs.attacks.knowledge_check import check_knowledge, given_knowledge
    from kerckhoffs.attacks.registry import applicable

    know = _knowledge(knowledge, schema, others)
    rel = _attacked(release, know)
    check_knowledge(know, rel)
    results: list[AttackResult] = []
    skipped: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []

    def could_not_run(name: str, exc: KerckhoffsError) -> None:
        failed.append((name, str(exc).removeprefix(f"{name}: ")))
        if on_result is not None:
            on_result(name, None, exc.cli_message.removeprefix(f"{name}: "))

    considered = applicable([rel], know)
    for info, reason in considered:
        if isinstance(reason, KerckhoffsError):  # it applies, but this input lacks something
            could_not_run(info.name, reason)
            continue
        if reason is not None:
            skipped.append((info.name, reason))
            continue
        try:
            result = info.run([rel], know)
        except KerckhoffsError as exc:  # one attack failing must not hide the others
            could_not_run(info.name, exc)
            continue
        results.append(result)
        if on_result is not None:
            on_result(info.name, result, None)
    ran = {r.attack for r in results}
    unused = []  # knowledge given that no attack that ran takes into account
    for kind, what in given_knowledge(know).items():
        readers = {info.name for info, _ in considered if kind in info.reads}
        if readers & ran:
            continue
        reasons = [f"{a} does not apply: {r}" for a, r in skipped if a in readers]
        reasons += [f"{a} could not run" for a, _ in failed if a in readers]
        if len(reasons) > 1:  # each attack's own line says why
            reasons = [f"none of the attacks that read it ran: {', '.join(sorted(readers))}"]
        unused.append((what, "; ".join(reasons) or "no attack reads it"))
    return AuditReport(results, skipped, failed, unused, sensitive_values(rel.table))
