"""The lattice search: which nodes to evaluate, in which order, and the minimal ones.

**Strategies.** All return the same minimal nodes (except ``"samarati"``, below) and so the
same published node; they differ in how many nodes they evaluate.

- ``"incognito"``: bottom-up breadth-first by height with *predictive tagging* (LeFevre et
  al. 2005, section 3): nodes are visited by height, inside a height in lexicographic order of
  their level vector; a node above a satisfying node is tagged satisfying without evaluation;
  every other node is evaluated, from the frequency set of a child.
- ``"two-way"`` (default): the same bottom-up frontier plus a top-down one, which tags every
  specialization of a violating node as violating (the contrapositive of the generalization
  property); at each step the frontier whose next height has fewer untagged nodes advances.
  On Adult with k = 5 the minimal nodes sit near the top of the lattice (no suppression: every
  rare value must be generalized away), so bottom-up alone evaluates 15,269 of the 15,360
  nodes and two-way about 450.
- ``"samarati"``: Samarati's binary search on the height for the lowest height holding a
  satisfying node (sound because, for a monotone predicate, a satisfying node at height ``h``
  has a satisfying parent at ``h + 1``), then every node of that height is evaluated; the
  minimal nodes it returns are the satisfying nodes of that height only, and its choice is
  the best of those. Refused with ``suppression > 0``.
- ``"naive"``: the reference, every node evaluated from the table's frequency set, no pruning.

Tagging never makes the minimal set wrong, whatever the predicate: a node is minimal iff it
satisfies and no node below it does, and the search keeps only evaluated satisfying nodes
with no evaluated satisfying node below them. A tag "satisfying" only ever marks nodes strictly
above a satisfying node (not minimal); a tag "violating" relies on monotonicity, and is only
used where it holds: always without suppression, and with suppression only under
k-anonymity / distinct l-diversity alone, where the number of violating rows cannot grow
upward (the package docstring explains why suppression breaks monotonicity).

The chosen node is the minimal node of least metric (:mod:`.loss`), ties to the
lexicographically lowest level vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity

from .evaluate import (
    Evaluator,
    NodeResult,
    check_feasible,
    evaluator,
)
from .nodes import Lattice, Node, above

STRATEGIES = ("two-way", "incognito", "samarati", "naive")


@dataclass(frozen=True, eq=False)
class LatticeSearch:
    """The outcome of a lattice search.

    ``visits`` lists the nodes in the order the algorithm visited them (tagged nodes
    included, with ``evaluated=False``); ``minimal`` the minimal satisfying nodes found, in
    lexicographic order (for ``"samarati"``: those of the lowest satisfying height);
    ``chosen`` the published node; ``losses`` the metric value of each minimal node.
    """

    lattice: Lattice
    strategy: str
    metric: str
    suppression: float
    visits: tuple[NodeResult, ...]
    minimal: tuple[Node, ...]
    losses: dict[Node, float]
    chosen: Node

    @property
    def evaluated(self) -> int:
        """Number of nodes evaluated (not tagged)."""
        return sum(v.evaluated for v in self.visits)

    @property
    def chosen_result(self) -> NodeResult:
        """The visit that evaluated the chosen node."""
        return next(v for v in self.visits if v.levels == self.chosen and v.evaluated)


def _sweep(ev: Evaluator, two_way: bool) -> tuple[list[NodeResult], list[int]]:
    """Bottom-up by height with predictive tagging (Incognito); with ``two_way`` also a
    top-down frontier tagging the specializations of violating nodes, the two frontiers
    advancing on the side with fewer untagged nodes next (module docstring)."""
    lat = ev.lattice
    # "violating" tags need monotone violation: always without suppression; with it, only if
    # the violating rows cannot grow upward (every model holds on a superset of a good group)
    tag_down = ev.limit == 0 or all(
        isinstance(m, KAnonymity | DistinctLDiversity) for m in ev.models
    )
    two_way = two_way and tag_down  # without those tags a top-down frontier prunes nothing
    levels = lat.levels
    strides = lat.strides.tolist()
    heights = lat.heights
    layers = lat.by_height()
    up = np.zeros(lat.size, dtype=bool)  # >= an evaluated satisfying node
    down = np.zeros(lat.size, dtype=bool)  # <= a node with too many violating rows
    qsat = np.zeros(lat.size, dtype=bool)
    visits: list[NodeResult] = []
    lo, hi = 0, len(layers) - 1
    last_kept: list[int] = []
    while lo <= hi:
        if two_way and lo < hi:
            n_lo = int(np.count_nonzero(~(up[layers[lo]] | down[layers[lo]])))
            n_hi = int(np.count_nonzero(~(up[layers[hi]] | down[layers[hi]])))
            bottom = n_lo <= n_hi
        else:
            bottom = True
        nodes = layers[lo] if bottom else layers[hi]
        new_up = new_down = False
        kept: list[int] = []
        for idx in nodes.tolist():
            if up[idx] or down[idx]:
                visits.append(NodeResult(lat.node(idx), bool(up[idx]), evaluated=False))
                continue
            res, grouped = ev.evaluate(idx)
            visits.append(res)
            if res.satisfied:
                up[idx] = qsat[idx] = new_up = True
            else:
                if tag_down and res.violating > ev.limit:
                    down[idx] = new_down = True
                if bottom:
                    ev.keep(idx, grouped)
                    kept.append(idx)
        if bottom:
            ev.forget(last_kept)
            last_kept = kept
            lo += 1
            if new_up:  # carry the new tags through the unvisited heights
                for h in range(lo, hi + 1):
                    for j, stride in enumerate(strides):
                        can = layers[h][levels[layers[h], j] > 0]
                        up[can] |= up[can - stride]
        else:
            hi -= 1
            if new_down:
                for h in range(hi, lo - 1, -1):
                    for j, stride in enumerate(strides):
                        can = layers[h][levels[layers[h], j] < heights[j]]
                        down[can] |= down[can + stride]
    ev.forget(last_kept)
    minimal = np.flatnonzero(qsat & ~above(lat, qsat, layers, strict=True))
    return visits, minimal.tolist()


def _samarati(ev: Evaluator) -> tuple[list[NodeResult], list[int]]:
    layers = ev.lattice.by_height()
    done: dict[int, NodeResult] = {}
    visits: list[NodeResult] = []

    def judge(idx: int) -> NodeResult:
        if idx not in done:
            done[idx] = ev.evaluate(idx)[0]
            visits.append(done[idx])
        return done[idx]

    lo, hi = 0, len(layers) - 1  # the top satisfies (checked before the search)
    while lo < hi:
        mid = (lo + hi) // 2
        if any(judge(i).satisfied for i in layers[mid].tolist()):
            hi = mid
        else:
            lo = mid + 1
    minimal = [i for i in layers[lo].tolist() if judge(i).satisfied]
    return visits, minimal


def _naive(ev: Evaluator) -> tuple[list[NodeResult], list[int]]:
    lat = ev.lattice
    visits = [ev.evaluate(i, ev.base)[0] for i in range(lat.size)]
    sat = np.array([v.satisfied for v in visits], dtype=bool)
    layers = lat.by_height()
    return visits, np.flatnonzero(sat & ~above(lat, sat, layers, strict=True)).tolist()


def search_lattice(
    table: Table,
    models: list[PrivacyModel],
    *,
    suppression: float = 0.0,
    metric: str = "loss",
    strategy: str = "two-way",
    name: str = "lattice",
) -> LatticeSearch:
    """Search the lattice of ``table`` for the minimal nodes satisfying every model and choose
    one by ``metric`` (strategies: this module's docstring; metrics: :mod:`.loss`; suppression:
    the package docstring).

    Raises :class:`~kerckhoffs.errors.ParameterError` (one line) for models that are not
    monotone, unknown options, or models that even the top node cannot satisfy.
    """
    if strategy not in STRATEGIES:
        raise ParameterError(
            f"{name}: strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}"
        )
    ev = evaluator(table, models, suppression, metric, name)
    if strategy == "samarati" and ev.limit > 0:
        raise ParameterError(
            f"{name}: strategy 'samarati' needs suppression=0 (its binary search needs a "
            "monotone predicate); use strategy 'two-way' or 'incognito'"
        )
    check_feasible(ev, name)
    if strategy in ("two-way", "incognito"):
        visits, minimal = _sweep(ev, two_way=strategy == "two-way")
    elif strategy == "samarati":
        visits, minimal = _samarati(ev)
    else:
        visits, minimal = _naive(ev)
    lat = ev.lattice
    chosen = min(minimal, key=lambda i: (ev.keys[i], i))
    evaluated = {v.levels: v for v in visits if v.evaluated}
    return LatticeSearch(
        lat,
        strategy,
        metric,
        float(suppression),
        tuple(visits),
        tuple(lat.node(i) for i in minimal),
        {lat.node(i): evaluated[lat.node(i)].loss for i in minimal},
        lat.node(chosen),
    )


def evaluate_node(
    table: Table,
    models: list[PrivacyModel],
    node: Node | dict[str, int],
    *,
    suppression: float = 0.0,
    metric: str = "loss",
) -> NodeResult:
    """Judge one node from the rows (the reference the search's frequency sets must match):
    does it satisfy every model, suppressing at most ``floor(suppression * |T|)`` rows whose
    suppressed group satisfies the models too?"""
    ev = evaluator(table, models, suppression, metric, "lattice")
    idx = ev.lattice.index(ev.lattice.check_node(node))
    return ev.evaluate(idx, ev.rows)[0]


def minimal_nodes(table: Table, models: list[PrivacyModel], **options: Any) -> list[Node]:
    """The minimal satisfying nodes (no satisfying specialization), lexicographic order."""
    return list(search_lattice(table, models, **options).minimal)


def visiting_order(table: Table, models: list[PrivacyModel], **options: Any) -> list[NodeResult]:
    """Every node the search visits, in the algorithm's order (tagged ones included)."""
    return list(search_lattice(table, models, **options).visits)


def chosen_node(table: Table, models: list[PrivacyModel], **options: Any) -> Node:
    """The node the algorithm publishes."""
    return search_lattice(table, models, **options).chosen


__all__ = [
    "STRATEGIES",
    "LatticeSearch",
    "chosen_node",
    "evaluate_node",
    "minimal_nodes",
    "search_lattice",
    "visiting_order",
]
