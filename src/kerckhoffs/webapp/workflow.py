"""The steward's workflow as calls into the library: open a table, give its columns roles and
hierarchies, run an algorithm, measure and report, write the release. Nothing here decides
anything about privacy: the schema, the algorithms, the checks, the risks and the report are
the library's (:func:`kerckhoffs.anonymize`, :func:`kerckhoffs.measure`,
:func:`kerckhoffs.reporting.build_report`, :meth:`Release.write
<kerckhoffs.release.Release.write>`, which writes only when the models hold on the files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kerckhoffs.algorithms.registry import REGISTRY, get
from kerckhoffs.data.io import read_columns, read_table
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.release import Release, Scheme

Progress = Callable[[str, float], None]

ROLES = ("quasi", "sensitive", "identifier", "other", "provider")
"""The roles offered per column (``other``: insensitive, carried along, not published)."""

HIERARCHY_BUILDERS = ("intervals", "quantile_intervals", "masking", "grouping", "dates")
"""The library's builders the roles page offers, each with one list of numbers or levels."""


@dataclass(frozen=True)
class Dataset:
    """A table opened from the folder: its path (resolved, inside the folder), the name shown,
    its columns and the first rows (shown only on the local page, never published)."""

    path: Path
    name: str
    columns: tuple[str, ...]
    preview: pd.DataFrame


def open_dataset(path: Path, name: str) -> Dataset:
    """Read the header and the first rows of a CSV or Parquet file (the library's reader)."""
    columns = tuple(read_columns(path))
    frame = read_table(path, text_columns=columns)
    return Dataset(path, name, columns, frame.head(8))


def column_values(ds: Dataset, column: str, *, text: bool) -> pd.Series:
    """Every value of one column (as text, or as the reader infers it)."""
    frame = read_table(ds.path, columns=[column], text_columns=[column] if text else [])
    return frame[column]


@dataclass(frozen=True)
class HierarchyChoice:
    """How a quasi-identifier generalizes: ``auto`` (the library infers: intervals for numbers,
    one level to ``*`` for categories), ``file`` (an ARX CSV file in the folder) or a builder of
    :mod:`kerckhoffs.data.hierarchy_build` with its parameters as text (``5, 10, 20``)."""

    how: str = "auto"
    file: Path | None = None
    parameters: str = ""


def _numbers(text: str, what: str) -> list[int]:
    try:
        return [int(t) for t in text.replace(";", ",").split(",") if t.strip()]
    except ValueError:
        raise InputError(f"{what}: give whole numbers separated by commas, got {text!r}") from None


def build_hierarchy(ds: Dataset, column: str, choice: HierarchyChoice) -> Any:
    """The hierarchy ``choice`` names for ``column``: a file path, a built
    :class:`~kerckhoffs.data.hierarchy.Hierarchy`, or None (the library's default)."""
    from kerckhoffs.data import hierarchy_build as hb

    what = f"column {column!r}, {choice.how}"
    if choice.how == "auto":
        return None
    if choice.how == "file":
        return choice.file
    if choice.how == "intervals":
        widths = _numbers(choice.parameters, what) or [5, 10, 20]
        return hb.intervals(column_values(ds, column, text=False), widths, name=column)
    if choice.how == "quantile_intervals":
        levels = _numbers(choice.parameters, what) or [10, 4, 2]
        return hb.quantile_intervals(column_values(ds, column, text=False), levels, name=column)
    if choice.how == "masking":
        masked = _numbers(choice.parameters, what) or None
        return hb.masking(column_values(ds, column, text=True), levels=masked, name=column)
    if choice.how == "grouping":
        sizes = _numbers(choice.parameters, what) or [2, 4]
        return hb.grouping(column_values(ds, column, text=True).unique(), sizes, name=column)
    if choice.how == "dates":
        steps = [t.strip() for t in choice.parameters.split(",") if t.strip()]
        values = column_values(ds, column, text=True)
        return hb.dates(values, steps or ["month", "year", "decade"], name=column)
    raise InputError(f"{what}: unknown hierarchy choice")


_BUILT_KIND = {
    "intervals": "numeric",
    "quantile_intervals": "numeric",
    "masking": "categorical",
    "grouping": "categorical",
    "dates": "categorical",
    "file": "categorical",
}
"""The kind a hierarchy choice implies when none is given: a hierarchy of codes or labels
reads its column as text (``02116`` keeps its leading zero)."""


def build_schema(
    ds: Dataset,
    roles: Mapping[str, str],
    kinds: Mapping[str, str],
    hierarchies: Mapping[str, HierarchyChoice],
) -> Schema:
    """The schema the roles page describes (the library's :class:`Schema` validates it: one
    sensitive column, at least one quasi-identifier, at most one provider)."""
    columns = []
    for name in ds.columns:
        role = roles.get(name, "other")
        if role not in ROLES:
            raise InputError(f"column {name!r}: unknown role {role!r}")
        if role != "quasi":
            columns.append(Column(name, Role(role)))
            continue
        choice = hierarchies.get(name, HierarchyChoice())
        kind = kinds.get(name) or _BUILT_KIND.get(choice.how)
        column = Column(name, Role.QUASI, Kind(kind) if kind else None)
        if choice.how != "auto":
            built = build_hierarchy(ds, name, choice)
            column = Column(name, Role.QUASI, column.kind, hierarchy=built)
        columns.append(column)
    if not any(c.role == Role.SENSITIVE for c in columns):
        raise InputError("choose one sensitive column (the attribute the models protect)")
    return Schema(tuple(columns))


def roles_of(schema: Schema) -> dict[str, str]:
    """The role of each column a schema names (to fill the roles page from a TOML file)."""
    return {c.name: c.role.value for c in schema.columns}


@dataclass(frozen=True)
class SchemaForm:
    """What the roles page shows of a loaded schema: each column's role, kind and hierarchy
    choice, and the columns whose settings the form has no field for (``bounds``, ``bins``,
    ``values``, ``missing``, a hierarchy object): those hold while the loaded schema is used
    as it is, and are lost if the form is submitted again."""

    roles: dict[str, str]
    kinds: dict[str, str]
    hierarchies: dict[str, HierarchyChoice]
    not_shown: tuple[str, ...]


def form_of(schema: Schema, base: Path) -> SchemaForm:
    """The roles page's fields for ``schema`` read from a TOML file in the folder ``base``
    (a hierarchy file becomes the ``file`` choice, ``widths`` the ``intervals`` builder with
    those widths). The form describes quasi-identifiers only, so a kind or hierarchy of another
    column (the sensitive attribute's, say) is among the settings it does not show."""
    kinds, hierarchies, not_shown = {}, {}, []
    for c in schema.columns:
        if c.kind is not None:
            kinds[c.name] = c.kind.value
        if c.role != Role.QUASI:
            if c.kind is not None or c.hierarchy is not None:
                not_shown.append(c.name)
            continue
        if isinstance(c.hierarchy, str | Path):
            hierarchies[c.name] = HierarchyChoice("file", base / c.hierarchy)
        elif c.widths is not None:
            hierarchies[c.name] = HierarchyChoice("intervals", None, ", ".join(map(str, c.widths)))
        if (c.hierarchy is not None and c.name not in hierarchies) or any(
            v is not None for v in (c.bounds, c.bins, c.values, c.missing)
        ):
            not_shown.append(c.name)
    return SchemaForm(roles_of(schema), kinds, hierarchies, tuple(not_shown))


# -- algorithms ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlgorithmChoice:
    """One algorithm as the page lists it: the registry's name and one-line summary, the models
    it enforces, how it publishes, and whether it is marked safe against an adversary who knows
    the algorithm."""

    name: str
    summary: str
    models: str
    schemes: tuple[str, ...]
    algorithm_safe: bool
    randomized: bool


def algorithm_choices() -> list[AlgorithmChoice]:
    """Every registered algorithm, algorithm-safe ones first, then by name."""
    from kerckhoffs.models.parse import SYNTAX

    out = [
        AlgorithmChoice(
            info.name,
            info.summary,
            ", ".join(SYNTAX.get(m, m) for m in info.models),
            tuple(s.value for s in info.schemes),
            info.algorithm_safe,
            info.randomized,
        )
        for info in REGISTRY.values()
    ]
    return sorted(out, key=lambda a: (not a.algorithm_safe, a.name))


@dataclass(frozen=True)
class RunConfig:
    """What to run: the algorithm, its models as written (``k=5``), the scheme (None: the
    algorithm's own) and its options as ``KEY=VALUE`` texts (read as the command line reads
    ``--option``)."""

    algorithm: str
    models: tuple[str, ...]
    scheme: str | None = None
    options: tuple[str, ...] = ()

    def label(self) -> str:
        """``mondrian k=5 l=3`` (what the comparison shows)."""
        return " ".join([self.algorithm, *self.models, *self.options])

    def parsed_options(self) -> dict[str, Any]:
        """The options as values (:meth:`OptionSpec.from_text
        <kerckhoffs.algorithms.registry.OptionSpec.from_text>`)."""
        info = get(self.algorithm)
        out: dict[str, Any] = {}
        for text in self.options:
            key, sep, raw = text.partition("=")
            if not sep:
                raise ParameterError(f"option {text!r}: write KEY=VALUE")
            spec = info.spec(key.strip())
            out[key.strip()] = spec.from_text(raw.strip()) if spec else raw.strip()
        return out


@dataclass
class RunResult:
    """A finished run: the release (in memory, checked), its measures (None for a DP
    release), the report, and its numbers by key."""

    config: RunConfig
    release: Release
    measures: Any
    report: Any
    knowledge: Any
    schema: Schema
    written: dict[str, Path] = field(default_factory=dict)

    def values(self) -> dict[str, float | int | str]:
        """Every number of the report, by key."""
        return dict(self.report.values())

    def verdicts(self) -> list[tuple[str, str]]:
        """Every verdict line of the report (models, attacks, the audit), as the library
        states it."""
        return [(v.label, v.text) for s in self.report.sections for v in s.verdicts]


def run(ds: Dataset, schema: Schema, config: RunConfig, progress: Progress) -> RunResult:
    """Anonymize, measure and report (what the run page's background job does)."""
    import kerckhoffs as kh
    from kerckhoffs.attacks.knowledge import Knowledge
    from kerckhoffs.reporting import build_report

    progress("anonymizing", 0.05)
    release = kh.anonymize(
        ds.path,
        schema=schema,
        algorithm=config.algorithm,
        models=list(config.models),
        scheme=config.scheme or None,
        **config.parsed_options(),
    )
    progress("reading the adversary's knowledge (the input's quasi-identifiers)", 0.3)
    knowledge = Knowledge.from_path(ds.path)
    measures = None
    if release.scheme not in (Scheme.DP, Scheme.SYNTHETIC):
        progress("measuring", 0.35)
        measures = kh.measure(release, population=knowledge.population)

    def report_progress(step: str, fraction: float) -> None:
        progress(f"report: {step}", 0.4 + 0.55 * fraction)

    report = build_report(release, knowledge=knowledge, schema=schema, progress=report_progress)
    return RunResult(config, release, measures, report, knowledge, schema)


def write(result: RunResult, ws: Any, name: str) -> dict[str, Path]:
    """Write the release into ``releases/NAME`` of the folder (only if every model holds on
    the files written: :meth:`Release.write`), then its report beside it
    (``releases/NAME-report.html``, built from the written files)."""
    from kerckhoffs.reporting import build_report

    target = ws.new_dir(name)
    report_path = ws.resolve(f"releases/{name}-report.html")
    if report_path.exists() or report_path.is_symlink():
        raise InputError(f"releases/{name}-report.html exists: choose another name")
    target.parent.mkdir(exist_ok=True)
    ws.remember(target)
    result.release.write(target)
    report = build_report(target, knowledge=result.knowledge, schema=result.schema)
    report.write(report_path)
    ws.remember(report_path)
    result.report = report  # the report of the files written, with their seal
    result.written = {"release": target, "report": report_path}
    return result.written
