"""Knowledge checked against the release it is used on, before any attack runs.

:mod:`kerckhoffs.attacks.knowledge` refuses what is malformed in itself (a share of ``ten``, a
range whose minimum is above its maximum, ``max = nan``). What is wrong only with respect to
the attacked release is refused here: a rule or a population that names a column the release
does not have, a value its column never holds, a range over a categorical column, a
population missing one of the release's quasi-identifiers. Such knowledge cannot be used; if
it were skipped, an audit would call the release SAFE against knowledge nobody tested (a typo
in a column name would silently make every release pass). Each refusal is one
:class:`~kerckhoffs.errors.InputError` line naming the item, the column and the value.

:func:`given_knowledge` lists the kinds of knowledge given, for the audit to say which of them
no attack took into account (:data:`kerckhoffs.attacks.registry.KNOWLEDGE_KINDS`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.schema import Kind
from kerckhoffs.errors import HierarchyError, InputError

if TYPE_CHECKING:
    from kerckhoffs.attacks.knowledge import DistributionRule, Knowledge
    from kerckhoffs.data.schema import Schema
    from kerckhoffs.data.table import EncodedColumn
    from kerckhoffs.release import Release

__all__ = ["check_knowledge", "given_knowledge"]

MAX_LISTED = 8
"""How many known values an error line lists before "..."."""


def given_knowledge(knowledge: Knowledge) -> dict[str, str]:
    """The kinds of knowledge ``knowledge`` holds (the registry's names) -> how to say them
    (``{"rules": "2 distribution rules"}``)."""
    given: dict[str, str] = {}
    if knowledge.population is not None:
        given["population"] = f"the population ({_count(len(knowledge.population), 'row')})"
    if knowledge.not_having:
        given["not_having"] = _count(len(knowledge.not_having), "negative fact")
    if knowledge.rules:
        given["rules"] = _count(len(knowledge.rules), "distribution rule")
    if knowledge.releases:
        given["releases"] = _count(len(knowledge.releases), "other release")
    if knowledge.coalition is not None:
        given["coalition"] = "the coalition"
    return given


def check_knowledge(knowledge: Knowledge, release: Release) -> None:
    """Refuse knowledge that cannot be used on ``release`` (module docstring): one
    :class:`InputError` naming the knowledge's source (its file), the item and the value."""
    source = knowledge.source
    schema = knowledge.load_schema()
    if knowledge.population is not None:
        _check_population(knowledge, release, source)
    sa_values = _sa_domain(release, schema)
    for i, rule in enumerate(knowledge.rules):
        _check_rule(rule, i, release, schema, sa_values, source)
    for i, fact in enumerate(knowledge.not_having):
        if sa_values is not None and format_value(fact.value) not in sa_values:
            raise InputError(
                f"{source}: not_having[{i}]: value {fact.value!r} is not a value of "
                f"{release.table.sa_name!r} ({_known(sa_values)})"
            )


def _check_population(knowledge: Knowledge, release: Release, source: str) -> None:
    pop = knowledge.population
    if pop is None:
        return
    names = release.table.qi_names
    missing = [n for n in names if n not in pop.columns]
    if missing:
        have = ", ".join(map(str, pop.columns[:MAX_LISTED])) or "none"
        raise InputError(
            f"{source}: the population has no column {missing[0]!r}"
            + (f" (nor {', '.join(map(repr, missing[1:]))})" if len(missing) > 1 else "")
            + f": every quasi-identifier of the release is needed ({', '.join(names)}); "
            f"its columns: {have}"
        )
    if len(pop) == 0:
        raise InputError(f"{source}: the population has no rows")


def _check_rule(
    rule: DistributionRule,
    i: int,
    release: Release,
    schema: Schema | None,
    sa_values: set[str] | None,
    source: str,
) -> None:
    where = f"{source}: rule[{i}]"
    share = rule.share
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise InputError(f"{where}: share must be a number in [0, 1], got {share!r}")
    if sa_values is not None and format_value(rule.value) not in sa_values:
        raise InputError(
            f"{where}: value {rule.value!r} is not a value of {release.table.sa_name!r} "
            f"({_known(sa_values)})"
        )
    names = release.table.qi_names
    for name, cond in rule.where.items():
        if name not in names:
            raise InputError(
                f"{where}: where names column {name!r}, which is not a quasi-identifier of "
                f"the release ({', '.join(names)})"
            )
        col = release.table.qi_columns[names.index(name)]
        kind = _kind(name, col.kind, schema)
        here = f"{where}: where.{name}"
        if isinstance(cond, dict):
            for key, bound in cond.items():
                if isinstance(bound, bool) or not isinstance(bound, int | float):
                    raise InputError(f"{here}: {key} must be a number, got {bound!r}")
                if not math.isfinite(bound):
                    raise InputError(f"{here}: {key} must be a finite number, got {bound!r}")
            if kind == Kind.CATEGORICAL:
                raise InputError(
                    f"{here}: a range (min/max) needs a numeric column; {name!r} is "
                    "categorical: list its values instead"
                )
            continue
        values = list(cond) if isinstance(cond, list | tuple) else [cond]
        if kind == Kind.NUMERIC:
            for v in values:
                if not _number(v):
                    raise InputError(f"{here}: {v!r} is not a number ({name!r} is numeric)")
            continue
        domain = _labels(name, col, schema)
        if domain is None:
            continue
        for v in values:
            if format_value(v) not in domain:
                raise InputError(
                    f"{here}: {format_value(v)!r} is not a value of column {name!r} "
                    f"({_known(domain)})"
                )


def _kind(name: str, kind: Kind, schema: Schema | None) -> Kind | None:
    """The column's kind as the anonymizer saw it: the schema's, else the release's when it
    was made in this process (a release read back without a schema holds published cells
    only: its kind is unknown)."""
    if schema is not None:
        col = next((c for c in schema.columns if c.name == name), None)
        if col is not None and col.kind is not None:
            return col.kind
        if col is not None and (col.widths is not None):
            return Kind.NUMERIC
    return kind


def _labels(name: str, col: EncodedColumn, schema: Schema | None) -> set[str] | None:
    """Every label a rule may list for this column: its values and the nodes of its
    hierarchy, from the release and the schema's hierarchy file (None: unknown)."""
    out = {format_value(x) for x in col.labels.tolist()}
    h = getattr(col, "hierarchy", None)
    if isinstance(h, Hierarchy):
        out |= _hierarchy_labels(h)
    schema_h = _schema_hierarchy(name, schema)
    if schema_h is not None:
        out |= _hierarchy_labels(schema_h)
    return out or None


def _hierarchy_labels(h: Hierarchy) -> set[str]:
    return {format_value(x) for level in h.labels for x in level.tolist()}


def _schema_hierarchy(name: str, schema: Schema | None) -> Hierarchy | None:
    if schema is None:
        return None
    col = next((c for c in schema.columns if c.name == name), None)
    if col is None or col.hierarchy is None:
        return None
    if isinstance(col.hierarchy, Hierarchy):
        return col.hierarchy
    path = Path(col.hierarchy)
    if not path.is_absolute() and schema.base_dir is not None:
        path = schema.base_dir / path
    try:
        return Hierarchy.read_csv(path)
    except HierarchyError as exc:
        raise InputError(f"column {name!r}: {exc}") from None


def _sa_domain(release: Release, schema: Schema | None) -> set[str] | None:
    """The values the sensitive attribute may hold: the release's, and the leaves of the
    schema's hierarchy for it (a value no row of this release holds is still a value)."""
    t = release.table
    out = {format_value(x) for x in t.sa_column.labels.tolist()}
    h = _schema_hierarchy(t.sa_name, schema)
    if h is not None:
        out |= {format_value(x) for x in h.leaves.tolist()}
    return out or None


def _number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int | float):
        return math.isfinite(v)
    try:
        return math.isfinite(float(str(v)))
    except ValueError:
        return False


def _known(values: set[str]) -> str:
    shown = sorted(values)[:MAX_LISTED]
    more = ", ..." if len(values) > MAX_LISTED else ""
    return f"known: {', '.join(shown)}{more}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
