"""The registered Mondrian algorithms: ``mondrian`` (LeFevre, DeWitt, Ramakrishnan 2006),
``mondrian+`` and ``mondrian++`` (paper 000 sections 6-7, the algorithm-safe variants).

Each reads its models, checks that the whole table can satisfy them, builds the cut rule
(:mod:`kerckhoffs.algorithms.mondrian.cuts`) and runs the partitioner
(:mod:`kerckhoffs.algorithms.mondrian.partition`, or
:mod:`kerckhoffs.algorithms.mondrian.hierarchy` for ``categorical_cuts="hierarchy"``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian.cuts import (
    AllCuts,
    CutRule,
    EntropyLDiversityCut,
    KAnonymityCut,
    LDiversityCut,
    LookAheadCut,
    TClosenessCut,
)
from kerckhoffs.algorithms.mondrian.hierarchy import CATEGORICAL_CUTS, hierarchy_cut_groups
from kerckhoffs.algorithms.mondrian.partition import mondrian_groups
from kerckhoffs.algorithms.pickup import pickup
from kerckhoffs.algorithms.registry import parse_scheme, pick, refuse_others, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import EntropyLDiversity, LDiversity
from kerckhoffs.models.t_closeness import TCloseness
from kerckhoffs.randomness import Seed, generator
from kerckhoffs.release import Partition, Provenance, Release, Scheme
from kerckhoffs.tolerance import TOLERANCE


def rule_from_models(
    table: Table, models: list[PrivacyModel], name: str, whole: GroupHistogram | None = None
) -> tuple[CutRule, dict[str, Any]]:
    """The cut rule of ``models`` and the parameters a release records, after checking that
    the whole table can satisfy them. ``whole``: the table's one-group SA histogram, when the
    rows are elsewhere (a Dask table passes the summed histogram and a table without rows for
    the encodings)."""
    refuse_others(models, (KAnonymity, LDiversity, EntropyLDiversity, TCloseness), name)
    k_model = pick(models, KAnonymity, name)
    l_model = pick(models, LDiversity, name)
    e_model = pick(models, EntropyLDiversity, name)
    t_model = pick(models, TCloseness, name)
    if k_model is None and l_model is None and e_model is None and t_model is None:
        raise ParameterError(
            f"{name} needs a k-anonymity (k=K), l-diversity (l=L), entropy l-diversity "
            "(entropy-l=L) or t-closeness (t=T) model"
        )
    hist = (
        whole
        if whole is not None
        else GroupHistogram.from_codes(
            np.zeros(table.n, dtype=np.int64),
            table.sa,
            1,
            table.n_sa,
            table.sensitive,
            table.schema.sensitive_mode,
            table.sa_column.kind,
        )
    )
    n = hist.n
    rules: list[CutRule] = []
    params: dict[str, Any] = {}
    if k_model is not None:
        k_model.validate(hist, table.sa_name)
        rules.append(KAnonymityCut(k_model.k))
        params["k"] = k_model.k
    if l_model is not None:
        l_model.validate(hist, table.sa_name)
        c = int(hist.sensitive_count[0])
        if n + TOLERANCE < l_model.l * c:
            what = "S_max" if hist.all_sensitive else "its sensitive count"
            raise ParameterError(
                f"{name}: the table is not l-eligible for l={format_number(l_model.l)}: "
                f"{n} rows < l * {what} ({c}) = {format_number(l_model.l * c)}"
            )
        rules.append(LDiversityCut(l_model.l))
        params["l"] = l_model.l
    if e_model is not None:
        e_model.validate(hist, table.sa_name)
        on_table = e_model.evaluate(hist)
        if not on_table.satisfied:
            raise ParameterError(
                f"{name}: the whole table is not entropy {format_number(e_model.l)}-diverse "
                f"(its entropy allows l = {format_number(on_table.achieved)})"
            )
        rules.append(EntropyLDiversityCut(e_model.l))
        params["entropy_l"] = e_model.l
    if t_model is not None:
        rules.append(TClosenessCut(t_model.t, hist.totals, table.sa_column.kind == Kind.NUMERIC))
        params["t"] = t_model.t
    return (rules[0] if len(rules) == 1 else AllCuts(rules)), params


@register(
    "mondrian",
    summary="Mondrian multidimensional median partitioning (LeFevre et al. 2006)",
    models=("KAnonymity", "LDiversity", "EntropyLDiversity", "TCloseness"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
        "categorical_cuts": "values (default under strict cuts) | median (default under relaxed "
        "cuts) | hierarchy: cut a categorical QI into halves of its distinct values (then the "
        "other median of a dimension before the next), at its median code (the earlier "
        "default, which the paper reproductions name), or into the children of its common "
        "hierarchy node (cells never overlap)",
    },
)
def mondrian(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    categorical_cuts: str | None = None,
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian for k-anonymity, frequency l-diversity (paper 000 section 6.2.1,
    ``docs/theory/asap.md#mondrian``), entropy l-diversity and t-closeness (paper 004's
    constrained Mondrian, ``docs/theory/composition.md#mondrian``).

    Reads ``k`` from :class:`~kerckhoffs.models.KAnonymity`, ``l`` from
    :class:`~kerckhoffs.models.LDiversity`, entropy ``l`` from
    :class:`~kerckhoffs.models.EntropyLDiversity` and ``t`` from
    :class:`~kerckhoffs.models.TCloseness`; a cut is allowed only when both halves satisfy
    every model given (the last two read the halves' full SA histograms). Raises
    :class:`~kerckhoffs.errors.ParameterError` for other models, ``k`` above the table size, or
    a table that is not l-eligible (``|T| < l * c(T)``). Deterministic: ``seed`` is
    not used. Returns a generalization release whose every group satisfies the models.

    ``sa_log`` records the SA statistics read (information-flow audit,
    ``docs/theory/asap.md#audits``):
    under l-diversity, ``S_max`` of the whole table and of every candidate half; a rejected
    cut's halves are never published, so the audit fails wherever a cut was rejected on them.

    ``categorical_cuts``: ``"values"`` (the default under strict cuts) ranks a categorical QI
    by its group's distinct values and cuts it into halves of them (hierarchy order; the
    categorical split of anonypyx and of Ghinita et al. 2007), and tries the other median of a
    dimension's rows before the next dimension
    (:func:`~kerckhoffs.algorithms.mondrian.partition.mondrian_groups`, ``values``): on Adult
    k = 10 its tool-neutral NCP and discernibility are below anonypyx's
    (``benchmarks/bench_mondrian.py``). ``"median"`` (the default under relaxed cuts, and
    the only cut of earlier versions) cuts a categorical QI at the median of its
    hierarchy-ordered codes and ranks it by its code range. Under both, two groups may
    publish the same or nested cells;
    ``"hierarchy"`` splits it into the children of the group's common hierarchy node
    (LeFevre's categorical split; published cells never overlap, so every person's cells
    locate their group: :mod:`kerckhoffs.algorithms.mondrian.hierarchy`).
    """
    if categorical_cuts is None:
        categorical_cuts = "values" if cuts == "strict" else "median"
    if categorical_cuts not in CATEGORICAL_CUTS:
        raise ParameterError(
            f"mondrian: categorical_cuts must be one of {', '.join(CATEGORICAL_CUTS)}, "
            f"got {categorical_cuts!r}"
        )
    rule, params = rule_from_models(table, models, "mondrian")
    if sa_log is not None and "l" in params:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    if categorical_cuts == "hierarchy":
        group = hierarchy_cut_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    else:
        group = mondrian_groups(
            table,
            rule,
            median=median,
            cuts=cuts,
            sa_log=sa_log,
            values=categorical_cuts == "values",
        )
    params.update(median=median, cuts=cuts)
    if categorical_cuts != "median":  # not recorded for the cut of older releases
        params["categorical_cuts"] = categorical_cuts
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian", params),
    )


# -- Mondrian+ and Mondrian++ (paper 000 sections 6-7: the algorithm-safe variants) -------------
def plus_rule_from_models(
    table: Table, models: list[PrivacyModel], name: str, whole: GroupHistogram | None = None
) -> tuple[CutRule, dict[str, Any]]:
    """:func:`rule_from_models` (same checks) with the l-diversity cut replaced by the
    look-ahead; an l-diversity model is required."""
    refuse_others(models, (KAnonymity, LDiversity), name)
    if not any(isinstance(m, LDiversity) for m in models):
        raise ParameterError(f"{name} needs an l-diversity model (l=L)")
    rule, params = rule_from_models(table, models, name, whole)
    rules = rule.rules if isinstance(rule, AllCuts) else (rule,)
    swapped = [LookAheadCut(r.l) if isinstance(r, LDiversityCut) else r for r in rules]
    return (swapped[0] if len(swapped) == 1 else AllCuts(swapped)), params


@register(
    "mondrian+",
    algorithm_safe=True,
    family="mondrian",
    base="mondrian",
    summary="Mondrian+ (global look-ahead, algorithm-safe): cut G only when both halves "
    "have >= l * S_max(G) rows (paper 000, Alg. 1)",
    models=("LDiversity", "KAnonymity"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian+ (paper 000 Algorithm 1, Theorem 6.1; ``docs/theory/asap.md#mondrian-plus``),
    one cut per step (``docs/theory/asap.md#err-single-cut``).

    Mondrian with ONE different cut rule, :class:`LookAheadCut`: a cut of ``G`` is allowed
    only when both halves have at least ``l * S_max(G)`` rows (``c(G)`` under a sensitive
    subset), instead of original Mondrian's "both halves are l-diverse". The only SA statistic
    read is ``S_max`` of the groups being cut (and of the table, for l-eligibility), each a
    union of published groups, so the release is algorithm-safe (Theorem 5.3) and ``sa_log``
    (information-flow audit) finds no violation. The printed Algorithm 1 is not executable
    (``G1, G2`` used before defined, ``InputSet`` never updated:
    ``docs/theory/asap.md#err-mondrian-plus-listing``); this is its canonical recursion, whose
    output does not depend on the order groups are processed in.

    Requires :class:`~kerckhoffs.models.LDiversity`; a :class:`~kerckhoffs.models.KAnonymity`
    given on top also bounds every half by ``k``. Same checks and refusals as :func:`mondrian`
    (one-line :class:`~kerckhoffs.errors.ParameterError`, e.g. a table that is not
    l-eligible, one of our edge-case vectors in ``docs/theory/asap.md#worked-examples``).
    Deterministic: ``seed`` is not used. Groups are
    coarser than Mondrian's (lower utility, paper 000 Figure 10i); Mondrian++ refines them.
    """
    rule, params = plus_rule_from_models(table, models, "mondrian+")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    params.update(median=median, cuts=cuts)
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian+", params),
    )


@register(
    "mondrian++",
    algorithm_safe=True,
    family="mondrian",
    base="mondrian+",
    summary="Mondrian++: Mondrian+ then stratified pick-up (Anatomy inside each group of "
    ">= 2l rows, random choice), algorithm-safe (paper 000, Alg. 5/6)",
    models=("LDiversity", "KAnonymity"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "scheme": "generalization (default, Alg. 5) | bucketization (Alg. 6)",
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: str | Scheme = Scheme.GENERALIZATION,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian++ (paper 000 Algorithms 5 and 6; ``docs/theory/asap.md#plus-plus``):
    :func:`mondrian_plus`, then stratified pick-up (:func:`kerckhoffs.algorithms.pickup.pickup`,
    seeded by ``seed``) inside every group of at least ``2 l`` rows.

    The pick-up groups hold pairwise distinct SA values and ``l' .. 2 l' - 1`` rows, with
    ``l' = max(ceil(l), k)`` (``k`` from a :class:`~kerckhoffs.models.KAnonymity` given on top,
    else 0), so they satisfy both models; the paper has no ``k`` and ``l' = l``. Pick-up reads
    only each Mondrian+ group's SA multiset, which stays published (the group is the union of
    its pick-up groups), so the release stays algorithm-safe (Theorem 7.2). Published by
    generalization (``scheme="generalization"``, each pick-up group with its own generalized
    QI) or bucketization (``scheme="bucketization"``, exact QIs + group ids and per-group SA
    counts). ``seed``: an int (tests, experiments), a :class:`numpy.random.Generator`, or None
    (default) for fresh randomness from the operating system (:mod:`kerckhoffs.randomness`).
    """
    scheme = parse_scheme(scheme, "mondrian++")
    rule, params = plus_rule_from_models(table, models, "mondrian++")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    l_pick = max(math.ceil(float(params["l"]) - TOLERANCE), int(params.get("k", 0)), 1)
    rng = generator(seed)
    part = pickup(table, group, l_pick, rng, sa_log=sa_log)
    params.update(median=median, cuts=cuts, scheme=scheme.value, pickup_l=l_pick)
    return Release(table, part, scheme, table.sa, Provenance("mondrian++", params))
