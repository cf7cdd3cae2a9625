"""The minimality attack (Wong, Fu, Wang, Pei; paper 001 sections 4 and 7.1): the public names
and the adapter that registers it with :mod:`kerckhoffs.attacks.registry`.

The attack lives in three modules with one job each:
:mod:`~kerckhoffs.attacks.minimality.structure` (what each published class covers),
:mod:`~kerckhoffs.attacks.minimality.driver` (the requirement, the credibility of every
individual, the report) and this one (the registry adapter: options and knowledge in, the
driver's result out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kerckhoffs.algorithms.registry import lookup
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.minimality.driver import (
    NAME,
    Requirement,
    credibility_sets,
    minimality_attack,
    near_minimality_attack,
    requirement_of,
)
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.schema import Kind, Schema
from kerckhoffs.errors import CannotRun, ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = [
    "Requirement",
    "credibility_sets",
    "minimality_attack",
    "near_minimality_attack",
    "requirement_of",
    "run_minimality",
]


# -- registry -------------------------------------------------------------------------------------
def _looks_read_back(release: Release) -> bool:
    """A generalized release read from files: its QI columns are the published cells (the
    reader declares them categorical, without hierarchies)."""
    return release.scheme == Scheme.GENERALIZATION and all(
        c.kind == Kind.CATEGORICAL and c.hierarchy is None for c in release.table.schema.quasi
    )


def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    """``None``, a reason the attack does not apply (not a minimal-generalization algorithm;
    a release read from files without the population's QIs), or :class:`CannotRun` when the
    release is a minimal algorithm's but the attack cannot run on it (its engine does not
    handle the recorded model; no schema to read the published cells)."""
    if not releases:
        return "needs a release"
    release = releases[0]
    found = requirement_of(release)
    if isinstance(found, str):
        info = lookup(release.provenance.algorithm)
        if info is not None and info.minimal:  # the adversary fits; the engine does not
            raise CannotRun(f"{NAME}: {found}")
        return found
    if _looks_read_back(release) and knowledge.population is None:
        return (
            "a generalized release read from files holds only its published cells: give the "
            "population's original QIs as knowledge (and the schema)"
        )
    if _looks_read_back(release) and getattr(knowledge, "schema", None) is None:
        raise CannotRun(
            f"{NAME}: needs the schema whose hierarchies say what each published cell covers"
        )
    return None


@register_attack(
    NAME,
    summary="minimality attack (paper 001): undo minimal generalization, per-class "
    "credibility of each sensitive set vs 1/m",
    applies=_applies,
    reads=("population",),
)
def run_minimality(
    releases: Sequence[Release], knowledge: Knowledge, **options: Any
) -> AttackResult:
    """Registry adapter: options ``l``, ``k`` (assume this requirement instead of the
    provenance's), ``l_enforced`` (near-minimality: reason with it, breach at ``1/m``), ``m``,
    ``local_mode``, ``schema`` (a :class:`Schema` or a TOML path, with a population; default
    the knowledge's schema)."""
    if not releases:
        raise ParameterError("minimality: needs a release")
    opts = dict(options)
    schema = opts.pop("schema", None)
    if schema is None:
        schema = getattr(knowledge, "schema", None)
    if schema is not None and not isinstance(schema, Schema):
        schema = Schema.from_toml(schema)
    l_opt = opts.pop("l", None)
    l_enf = opts.pop("l_enforced", None)
    k_opt = opts.pop("k", None)
    m = opts.pop("m", None)
    local_mode = opts.pop("local_mode", "whole_class")
    if opts:
        raise ParameterError(f"minimality: unknown option {sorted(opts)[0]!r}")
    requirement = None
    if l_opt is not None or l_enf is not None or k_opt is not None:
        lv = l_enf if l_enf is not None else l_opt
        requirement = Requirement(
            float(lv) if lv is not None else None, int(k_opt) if k_opt is not None else 1
        )
        if m is None and l_enf is not None and l_opt is not None:
            m = float(l_opt)
    release = releases[0]
    population = knowledge.population if _looks_read_back(release) else None
    return minimality_attack(
        release,
        requirement,
        m=float(m) if m is not None else None,
        local_mode=local_mode,
        population=population,
        schema=schema,
    )
