"""Disclosure sets for the lattice publisher: the exclusive and inclusive strategies of paper 002
(Zhang, Wang, Jajodia and Brodsky, "Exclusive Strategy for Generalization Algorithms in Micro-Data
Disclosure", DBSec 2008, sections 3-4; ``docs/theory/disclosure-sets.md#disclosure-set``,
``docs/theory/disclosure-sets.md#exclusive`` and ``docs/theory/disclosure-sets.md#edge-cases``).

The ``lattice`` algorithm is the paper's **naive** publisher: without suppression it releases the
first node of :func:`~kerckhoffs.algorithms.lattice.generalization_sequence` whose groups satisfy
the models (``docs/theory/disclosure-sets.md#naive``). An adversary who knows this learns that every
earlier node failed, which rules out original tables; what remains is the **disclosure set**
``DS = {X in PER(G_c) : no earlier node passes on X}`` (``DS_excl``,
``docs/theory/disclosure-sets.md#exclusive``, equal to the naive adversary's knowledge). The
**exclusive** strategy releases the naive choice only if the models' CHK holds on that set, else
nothing; the **inclusive** strategy releases the first node whose (recursive) disclosure set passes.

**Candidates that can never pass.** A node with a group smaller than the least group size the models
allow (``k`` for k-anonymity; for the l-diversity models the fewest rows their CHK can pass with,
:func:`~kerckhoffs.disclosure.least_group_size`; :func:`min_group_size`) fails on *every* possible
table, and on every set of them, since the partition depends only on the QIs (the paper does not say
that generalization functions read only the QIs; we assume they do:
``docs/theory/disclosure-sets.md#err-qi-only``). Such nodes remove no table from any disclosure set
and are never released under any strategy, so dropping them from the sequence changes no outcome.

**The exact shortcut.** If every node before the naive choice ``c`` can never pass,
``DS = PER(G_c)`` for both strategies, and CHK on ``PER(G_c)`` is the naive check itself (in ``PER``
each person takes each value with the group's share, ``docs/theory/disclosure-sets.md#per``): the
release is provably as safe as its naive check, and no table is enumerated. This is what decides
real data, where ``|PER|`` has thousands of digits. Otherwise the disclosure set is enumerated by
the engine (:mod:`kerckhoffs.disclosure`) on the candidates that can pass, and refused with one line
(its size as ``about 10^N``) when ``|PER|`` exceeds the bound.

Earlier nodes are examined top-down by height: a node that can never pass has only such
nodes below it (the least group size only grows under generalization), so its whole
down-set is skipped; the first earlier node that can pass ends the shortcut test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from kerckhoffs.data.lattice import Lattice, Node
from kerckhoffs.data.table import Table
from kerckhoffs.disclosure import (
    DEFAULT_LIMIT,
    AllOf,
    Chk,
    GeneralizationSequence,
    TooManyInstances,
    chk_from_model,
    exclusive,
    inclusive,
    least_group_size,
    magnitude,
    per_size,
    signature,
)
from kerckhoffs.disclosure.chk import ShareRule
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.metrics.lattice_loss import generalization_sequence
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    LDiversity,
    RecursiveCLDiversity,
)
from kerckhoffs.tolerance import TOLERANCE

DISCLOSURES = ("naive", "exclusive", "inclusive")
"""The lattice publisher's strategies (option ``disclosure``)."""

MAX_INCLUSIVE_NODES = 64
"""Most candidate nodes the inclusive strategy walks with enumeration (its disclosure sets are
recursive, paper 002's cost of the inclusive strategy,
``docs/theory/disclosure-sets.md#complexity``: exponential in the number of candidates)."""


@dataclass(frozen=True)
class DisclosureCheck:
    """How a strategy decided on the lattice's naive choice.

    ``strategy``; ``naive_index``: position of the naive choice in the generalization sequence
    (0-based); ``released``: the released node's position, or None (nothing); ``node``: the
    released node (None if nothing); ``shortcut``: decided by the exact shortcut (no
    enumeration; ``DS = PER``); ``candidates``: earlier nodes some table could make pass (0
    with the shortcut; on the enumerated path, all of them); ``disclosure_size`` and
    ``max_share``: the deciding disclosure set's size and the largest share of any value for
    any person over it (None with the shortcut, where they are ``|PER|`` and the group shares).
    These counts read the secret table: they are for the publisher, never published.
    """

    strategy: str
    naive_index: int
    released: int | None
    node: Node | None
    shortcut: bool
    candidates: int
    disclosure_size: int | None = None
    max_share: Fraction | None = None


def min_group_size(models: list[PrivacyModel], table: Table) -> int:
    """The least group size with which some table could satisfy every model: ``k``
    (k-anonymity, (alpha, k)-anonymity); for frequency l-diversity (when every SA value is
    sensitive), distinct l-diversity and recursive (c, l)-diversity the least size of their
    CHK (:func:`~kerckhoffs.disclosure.least_group_size`: ``ceil(l)``, ``l``, ``l``);
    ``ceil(l)`` for entropy l-diversity (``H <= log(distinct)``); else 1."""
    all_sensitive = bool(np.all(table.sensitive))
    out = 1
    for m in models:
        if isinstance(m, KAnonymity | AlphaKAnonymity):
            out = max(out, m.k)
        elif (isinstance(m, LDiversity) and all_sensitive) or isinstance(
            m, DistinctLDiversity | RecursiveCLDiversity
        ):
            out = max(out, least_group_size(chk_from_model(m)))
        elif isinstance(m, EntropyLDiversity):
            out = max(out, math.ceil(m.l - TOLERANCE))
    return out


def models_chk(models: list[PrivacyModel], table: Table, name: str = "lattice") -> Chk:
    """The CHK on a set of tables that the models' naive check is on a PER set: the
    l-diversity models as share rules (:func:`kerckhoffs.disclosure.chk_from_model`);
    k-anonymity is a property of the partition alone (constant over the set). Refused in one
    line for models with no such rule, or a sensitive subset (the share rules read every
    value)."""
    rules: list[ShareRule] = []
    for m in models:
        if isinstance(m, KAnonymity):
            continue
        if isinstance(m, LDiversity) and not bool(np.all(table.sensitive)):
            raise ParameterError(
                f"{name}: the disclosure set cannot be checked for l-diversity on a sensitive "
                "subset of the SA values (the exact shortcut does not apply here)"
            )
        try:
            rule = chk_from_model(m)
        except ParameterError:
            raise ParameterError(
                f"{name}: no disclosure-set check for the model {m.name} (use k-anonymity, "
                "l-diversity or distinct l-diversity; the exact shortcut does not apply here)"
            ) from None
        if not isinstance(rule, ShareRule):
            raise InternalError(f"{name}: the check of {m.name} is not a share rule")
        rules.append(rule)
    if not rules:
        raise ParameterError(f"{name}: the models put no constraint on the sensitive values")
    return rules[0] if len(rules) == 1 else AllOf(tuple(rules))


def _can_pass(lat: Lattice, nodes: np.ndarray, least: int) -> np.ndarray:
    """For the lattice indices ``nodes``: does some group size reach ``least`` everywhere
    (bool per node; one grouping per node)."""
    return np.array(
        [int(lat.partition(lat.node(int(i))).sizes.min()) >= least for i in nodes], dtype=bool
    )


def passable_before(
    lat: Lattice, order: list[int], pos: int, least: int, *, first_only: bool
) -> list[int]:
    """Lattice indices of the nodes before position ``pos`` of ``order`` (the generalization
    sequence as lattice indices) whose groups all have at least ``least`` rows (the nodes some
    table could make pass), in sequence order. With ``first_only``, stop at the first found
    (the shortcut test). Top-down by height, skipping the down-set of every node that cannot
    pass (module docstring)."""
    if least <= 1:
        return list(order[:pos]) if not first_only else list(order[: min(pos, 1)])
    earlier = np.zeros(lat.size, dtype=bool)
    earlier[order[:pos]] = True
    seq_pos = np.empty(lat.size, dtype=np.int64)
    seq_pos[order] = np.arange(len(order))
    never = np.zeros(lat.size, dtype=bool)  # known: some group smaller than least
    levels = lat.levels
    heights = lat.heights
    strides = lat.strides.tolist()
    found: list[int] = []
    for layer in reversed(lat.by_height()):
        for j, stride in enumerate(strides):  # below a node that cannot pass
            can = layer[levels[layer, j] < heights[j]]
            never[can] |= never[can + stride]
        todo = layer[earlier[layer] & ~never[layer]]
        if not todo.size:
            continue
        ok = _can_pass(lat, todo, least)
        never[todo[~ok]] = True
        if ok.any():
            found += todo[ok].tolist()
            if first_only:
                return found[:1]
    return sorted(found, key=lambda i: int(seq_pos[i]))


def decide(
    table: Table,
    models: list[PrivacyModel],
    chosen: Node,
    strategy: str,
    *,
    metric: str = "loss",
    limit: int = DEFAULT_LIMIT,
    name: str = "lattice",
) -> DisclosureCheck:
    """What ``strategy`` (``"exclusive"`` or ``"inclusive"``) releases, given the naive lattice
    choice ``chosen`` (the first node of the generalization sequence satisfying ``models``,
    no suppression). Exact shortcut first, else enumeration bounded by ``limit`` (module
    docstring). Raises :class:`~kerckhoffs.errors.ParameterError` (one line) when the
    disclosure set is too large to decide; returns ``released=None`` for "nothing"."""
    if strategy not in ("exclusive", "inclusive"):
        raise ParameterError(f"{name}: disclosure must be one of {', '.join(DISCLOSURES)}")
    lat = Lattice.of(table)
    order = [lat.index(n) for n in generalization_sequence(table, metric)]
    c = lat.index(lat.check_node(chosen))
    pos = order.index(c)
    least = min_group_size(models, table)
    first = passable_before(lat, order, pos, least, first_only=True)
    if not first:
        return DisclosureCheck(strategy, pos, pos, lat.node(c), True, 0)
    chk = models_chk(models, table, name)
    own = GeneralizationSequence.from_lattice(table, [lat.node(c)])
    size = per_size(own, 0, signature(own, 0, table.sa, table.n_sa))
    if size > limit:
        raise ParameterError(
            f"{name}: cannot decide the disclosure set: the release has {magnitude(size)} possible "
            f"tables (bound {limit:,}) and the exact shortcut does not apply (node "
            f"{lat.node(first[0])} comes earlier and has every group of at least {least} "
            "rows)"
        )
    earlier = passable_before(lat, order, pos, least, first_only=False)
    later: list[int] = []
    if strategy == "inclusive":
        rest = np.array(order[pos + 1 :], dtype=np.int64)
        later = rest[_can_pass(lat, rest, least)].tolist() if rest.size else []
        if len(earlier) + 1 + len(later) > MAX_INCLUSIVE_NODES:
            raise ParameterError(
                f"{name}: the inclusive strategy would walk {len(earlier) + 1 + len(later)} "
                f"candidate nodes (at most {MAX_INCLUSIVE_NODES}): its disclosure sets are "
                "recursive; use disclosure=exclusive"
            )
    nodes = [*earlier, c, *later]
    seq = GeneralizationSequence.from_lattice(table, [lat.node(i) for i in nodes])
    ci = len(earlier)
    sa = table.sa.astype(np.int64)
    try:
        if strategy == "exclusive":
            out = exclusive(seq, sa, chk, limit=limit)
        else:
            out = inclusive(seq, sa, chk, limit=limit)
    except TooManyInstances as e:
        raise ParameterError(f"{name}: cannot decide the disclosure set: {e}") from None
    top = max(out.max_share) if out.max_share else None
    if out.released is None:
        return DisclosureCheck(
            strategy, pos, None, None, False, len(earlier), out.disclosure_size, top
        )
    if strategy == "exclusive" and out.released != ci:
        raise InternalError("the exclusive strategy released a node the naive one did not")
    idx = nodes[out.released]
    return DisclosureCheck(
        strategy,
        pos,
        order.index(idx),
        lat.node(idx),
        False,
        len(earlier),
        out.disclosure_size,
        top,
    )


__all__ = [
    "DISCLOSURES",
    "MAX_INCLUSIVE_NODES",
    "AllOf",
    "DisclosureCheck",
    "decide",
    "magnitude",
    "min_group_size",
    "models_chk",
    "passable_before",
]
