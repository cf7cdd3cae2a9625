"""The lattice search: which nodes to evaluate, in which order, and the minimal ones.

**Strategies.** All return the same minimal nodes (except ``"samarati"``, below) and so the
same published node; they differ in how many nodes they evaluate.

- ``"incognito"``: bottom-up breadth-first by height with *predictive tagging* (LeFevre et
  al. 2005, section 3): nodes are visited by height, inside a height in lexicographic order of
  their level vector; a node above a satisfying node is tagged satisfying without evaluation;
  every other node is evaluated, from the frequency set of a child.
- ``"two-way"`` (default): the same bottom-up frontier plus a top-down one, which tags every
  specialization of a violating node as violating (the contrapositive of the generalization
  property); at each step the top-down frontier advances unless the next bottom layer has at most
  ``1/TOP_DOWN_BIAS`` (1/8) as many untagged nodes as the next top layer. The bias is measured, not
  derived: a top-down node is cheap (near the top few QIs are left below their root, and the layer
  rolls up from one small *anchor*, :meth:`.Evaluator.prepare`) and a violating one tags its whole
  down-set, while the lowest layers are the most expensive to evaluate (frequency sets nearly the
  table's size) and, under k-anonymity on real data, rarely satisfy. On Adult with k = 5 the minimal
  nodes sit near the top of the lattice (no suppression: every rare value must be generalized away),
  so bottom-up alone evaluates 15,269 of the 15,360 nodes, two-way with equal weights (bias 1, the
  starting point of our speed work, ``docs/theory/choices.md#performance``) 450 and with bias 8 208;
  on ARX's Adult (6,480 nodes, k = 5) 208 -> 111 (ARX 3.9's Flash checks 142). Tried on eleven
  settings (the five of ``tests/test_lattice_arx.py``; ARX's Adult and the 45,222-row Adult with k =
  2; the latter with l = 2; distinct l = 3 on SA occupation; 5,000 generated hospital rows with k =
  2 and 5), bias 8 evaluates 28-54% fewer nodes than bias 1 on every one, and biases 32 or 1,000
  save at most 3 more nodes on the five. Any bias gives the same minimal nodes: it only changes
  which frontier tags a node first.
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
from functools import cached_property
from typing import Any

import numpy as np

from kerckhoffs.algorithms.lattice.evaluate import (
    Evaluator,
    NodeResult,
    check_feasible,
    evaluator,
)
from kerckhoffs.data.lattice import Lattice, Node, above
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity

STRATEGIES = ("two-way", "incognito", "samarati", "naive")
TOP_DOWN_BIAS = 8
"""The two-way search advances bottom-up only when the next bottom layer has at most
``1/TOP_DOWN_BIAS`` as many untagged nodes as the next top layer (module docstring)."""


@dataclass(frozen=True, eq=False)
class LatticeSearch:
    """The outcome of a lattice search.

    ``visits`` lists the nodes in the order the algorithm visited them (tagged nodes
    included, with ``evaluated=False``); ``minimal`` the minimal satisfying nodes found, in
    lexicographic order (for ``"samarati"``: those of the lowest satisfying height);
    ``chosen`` the published node; ``losses`` the metric value of each minimal node.

    The search records its visits compactly (``order``: node indices in visiting order;
    ``tags``: -1 evaluated, 1 tagged satisfying, 0 tagged violating; ``results``: the
    evaluated nodes' results by index) and builds ``visits`` only when asked: on Adult a
    search evaluates about 200 of 6,480 nodes and nobody reads the other 6,280.
    """

    lattice: Lattice
    strategy: str
    metric: str
    suppression: float
    order: np.ndarray
    tags: np.ndarray
    results: dict[int, NodeResult]
    minimal: tuple[Node, ...]
    losses: dict[Node, float]
    chosen: Node

    @cached_property
    def visits(self) -> tuple[NodeResult, ...]:
        """Every visited node's result, in visiting order (tagged ones with unknown fields)."""
        node = self.lattice.node
        return tuple(
            self.results[i] if t < 0 else NodeResult(node(i), bool(t), evaluated=False)
            for i, t in zip(self.order.tolist(), self.tags.tolist(), strict=True)
        )

    @property
    def evaluated(self) -> int:
        """Number of nodes evaluated (not tagged)."""
        return int(np.count_nonzero(self.tags < 0))

    @property
    def chosen_result(self) -> NodeResult:
        """The visit that evaluated the chosen node."""
        return self.results[self.lattice.index(self.chosen)]


class _Trace:
    """Visits recorded per layer (node indices, tags) plus the evaluated results."""

    def __init__(self) -> None:
        self.order: list[np.ndarray] = []
        self.tags: list[np.ndarray] = []
        self.results: dict[int, NodeResult] = {}

    def add(self, nodes: np.ndarray, tags: np.ndarray) -> None:
        self.order.append(nodes)
        self.tags.append(tags)

    def evaluated(self, idx: int, res: NodeResult) -> None:
        self.order.append(np.array([idx], dtype=np.int64))
        self.tags.append(np.array([-1], dtype=np.int8))
        self.results[idx] = res

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.order:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8)
        return np.concatenate(self.order).astype(np.int64), np.concatenate(self.tags)


def _sweep(ev: Evaluator, two_way: bool) -> tuple[_Trace, list[int]]:
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
    layers = lat.by_height()
    up = np.zeros(lat.size, dtype=bool)  # >= an evaluated satisfying node
    down = np.zeros(lat.size, dtype=bool)  # <= a node with too many violating rows
    qsat = np.zeros(lat.size, dtype=bool)
    trace = _Trace()
    lo, hi = 0, len(layers) - 1
    last_kept: list[int] = []

    while lo <= hi:
        if two_way and lo < hi:
            n_lo = int(np.count_nonzero(~(up[layers[lo]] | down[layers[lo]])))
            n_hi = int(np.count_nonzero(~(up[layers[hi]] | down[layers[hi]])))
            bottom = n_lo * TOP_DOWN_BIAS <= n_hi
        else:
            bottom = True
        nodes = layers[lo] if bottom else layers[hi]
        # tags of a layer's nodes do not change while the layer is visited (an evaluation
        # tags only the node itself; the carry to other heights comes after the layer)
        tags = np.where(up[nodes], 1, np.where(down[nodes], 0, -1)).astype(np.int8)
        trace.add(nodes, tags)
        new_up = new_down = False
        kept: list[int] = []
        todo = nodes[tags < 0].tolist()
        if not bottom:
            ev.prepare(todo)
        for idx in todo:
            res, grouped = ev.evaluate(idx)
            trace.results[idx] = res
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
            if new_up:  # carry the new tags up (to the unvisited heights among others)
                _close(up, lat.heights, upward=True)
        else:
            hi -= 1
            if new_down:
                _close(down, lat.heights, upward=False)
    ev.forget(last_kept)
    ev.release_anchors()
    return trace, _minimal(lat, qsat, layers)


def _close(mask: np.ndarray, heights: tuple[int, ...], *, upward: bool) -> None:
    """Mark, in place, every node above (``upward``) or below some marked node. Nodes are
    numbered in mixed radix (C order of the level grid), so the nodes ``>=`` a marked one are
    a running OR along each QI's axis in turn (a node is above a marked one iff it can be
    reached from it by raising one level at a time): one pass per QI over the lattice instead
    of one gather per QI and height. Only the unvisited heights are read afterwards; the
    visited ones may gain marks, which nothing reads."""
    grid = mask.reshape(tuple(h + 1 for h in heights))
    for axis in range(grid.ndim):
        view = grid if upward else np.flip(grid, axis=axis)
        np.logical_or.accumulate(view, axis=axis, out=view)


PAIRWISE_MINIMAL = 2_000
"""Up to this many satisfying nodes, the minimal ones are found by comparing them pairwise."""


def _minimal(lat: Lattice, sat: np.ndarray, layers: list[np.ndarray]) -> list[int]:
    """The nodes of ``sat`` with no other node of ``sat`` below them, in index (lexicographic)
    order. The evaluated satisfying nodes are few (tens to hundreds of thousands of nodes in
    the lattice): comparing their level vectors pairwise costs less than a sweep of the
    whole lattice (:func:`above`), which remains for many."""
    ids = np.flatnonzero(sat)
    if ids.size > PAIRWISE_MINIMAL:
        return np.flatnonzero(sat & ~above(lat, sat, layers, strict=True)).tolist()
    lv = lat.levels[ids]
    below = np.asarray((lv[None, :, :] <= lv[:, None, :]).all(axis=2))  # [x, y]: y <= x
    np.fill_diagonal(below, False)
    return ids[~below.any(axis=1)].tolist()


def _samarati(ev: Evaluator) -> tuple[_Trace, list[int]]:
    layers = ev.lattice.by_height()
    trace = _Trace()

    def judge(idx: int) -> NodeResult:
        if idx not in trace.results:
            trace.evaluated(idx, ev.evaluate(idx)[0])
        return trace.results[idx]

    lo, hi = 0, len(layers) - 1  # the top satisfies (checked before the search)
    while lo < hi:
        mid = (lo + hi) // 2
        if any(judge(i).satisfied for i in layers[mid].tolist()):
            hi = mid
        else:
            lo = mid + 1
    minimal = [i for i in layers[lo].tolist() if judge(i).satisfied]
    return trace, minimal


def _naive(ev: Evaluator) -> tuple[_Trace, list[int]]:
    lat = ev.lattice
    trace = _Trace()
    for i in range(lat.size):
        trace.results[i] = ev.evaluate(i, ev.base)[0]
    trace.add(np.arange(lat.size, dtype=np.int64), np.full(lat.size, -1, dtype=np.int8))
    sat = np.array([trace.results[i].satisfied for i in range(lat.size)], dtype=bool)
    layers = lat.by_height()
    return trace, np.flatnonzero(sat & ~above(lat, sat, layers, strict=True)).tolist()


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
        trace, minimal = _sweep(ev, two_way=strategy == "two-way")
    elif strategy == "samarati":
        trace, minimal = _samarati(ev)
    else:
        trace, minimal = _naive(ev)
    lat = ev.lattice
    chosen = min(minimal, key=lambda i: (ev.keys[i], i))
    order, tags = trace.arrays()
    return LatticeSearch(
        lat,
        strategy,
        metric,
        float(suppression),
        order,
        tags,
        trace.results,
        tuple(lat.node(i) for i in minimal),
        {lat.node(i): trace.results[i].loss for i in minimal},
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
    "PAIRWISE_MINIMAL",
    "STRATEGIES",
    "LatticeSearch",
    "chosen_node",
    "evaluate_node",
    "minimal_nodes",
    "search_lattice",
    "visiting_order",
]
