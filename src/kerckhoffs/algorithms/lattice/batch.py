"""Judging the nodes of one lattice layer together: one ``bincount`` for many nodes.

A layer the search visits top-down (:func:`~kerckhoffs.algorithms.lattice.search.search_lattice`,
strategy ``"two-way"``) keeps none of its nodes' frequency sets, and what one of its nodes learns
changes nothing for the others until the whole layer is visited (tags are carried afterwards).
Its nodes are therefore independent: those that roll up from the same source (an anchor, a kept
node, the table's cells; :meth:`.Evaluator.prepare`) are judged in one pass over a
``[nodes, cells]`` key matrix instead of one pass of twenty-odd small numpy calls each.

Node ``i`` maps each source cell to its mixed-radix group key exactly as
:meth:`.Evaluator._group` does (the QIs in order, a QI at a one-node level adding nothing), offset
by the key domains of the nodes before it, so node ``i``'s groups occupy their own slice of one
``bincount``; per-node sums (rows of violating groups, group counts, the discernibility sum) are
``reduceat`` over those slices. Only the rows of groups are counted, never their numbering, so a
node's verdict, group count, violating rows and metric are the per-node path's (the tests compare
both with a brute-force grouping of the rows).

Batched: k-anonymity and distinct l-diversity (they read group sizes and distinct SA values),
nodes whose key domain is small next to the source (the dense case of the per-node path). Any other
node, and a node that leaves violating rows within the suppression limit (its suppressed group is
judged on its own), goes through :meth:`.Evaluator.evaluate`.
"""

from __future__ import annotations

import math
import numpy as np

from kerckhoffs.algorithms.lattice.evaluate import (
    DENSE_FACTOR,
    DENSE_SLACK,
    Evaluator,
    FrequencySet,
    NodeResult,
)
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity

BATCH_CELLS = 1 << 21
"""Most key-matrix entries (nodes x source cells) judged in one pass."""
BATCH_MODELS = (KAnonymity, DistinctLDiversity)
"""Models judged in a batch: group sizes and distinct SA values per group."""


def batch_ok(ev: Evaluator) -> bool:
    """Whether ``ev``'s models can be judged in a batch (:data:`BATCH_MODELS` only)."""
    return all(type(m) in BATCH_MODELS for m in ev.models)


def judge_layer(ev: Evaluator, indices: list[int]) -> list[NodeResult]:
    """The results of nodes ``indices`` (one layer, none of them to be kept), in order, each
    the result :meth:`.Evaluator.evaluate` gives it (module docstring)."""
    if not batch_ok(ev) or len(indices) < 2:
        return [ev.evaluate(i)[0] for i in indices]
    lat = ev.lattice
    sizes = [c.coverage for c in lat.columns]
    results: dict[int, NodeResult] = {}
    plans: dict[int, tuple[FrequencySet, list[tuple[int, tuple[int, ...], list[int]]]]] = {}
    for idx in indices:
        src = ev._source(idx)
        node = lat.node(idx)
        radix = [sizes[j][lvl].size for j, lvl in enumerate(node)]
        domain = math.prod(radix) * ev.n_sa
        if (
            src.count is None
            or src.levels == node
            or domain > DENSE_FACTOR * src.size + DENSE_SLACK
        ):
            results[idx] = ev.evaluate(idx, src)[0]
            continue
        plans.setdefault(id(src), (src, []))[1].append((idx, node, radix))
    for src, items in plans.values():
        per = max(1, BATCH_CELLS // max(src.size, 1))
        for start in range(0, len(items), per):
            _judge(ev, src, items[start : start + per], results)
    return [results[i] for i in indices]


def _judge(
    ev: Evaluator,
    src: FrequencySet,
    items: list[tuple[int, tuple[int, ...], list[int]]],
    results: dict[int, NodeResult],
) -> None:
    """Judge ``items`` (index, node, radix per QI) from ``src`` in one pass (no suppression
    judged here: a node with violating rows within the limit goes back to the per-node path)."""
    n_nodes, m, n_sa = len(items), src.size, ev.n_sa
    radix = np.array([r for _, _, r in items], dtype=np.int64)  # [nodes, d]
    levels = np.array([node for _, node, _ in items], dtype=np.int64)
    # the key of a cell is sum_j node_id_j * mult_j, mult_j the product of the later radixes
    # (a QI at a one-node level contributes 0, as in the per-node key)
    mult = np.ones_like(radix)
    mult[:, :-1] = np.cumprod(radix[:, :0:-1], axis=1)[:, ::-1]
    domains = radix.prod(axis=1)
    offsets = np.zeros(n_nodes, dtype=np.int64)
    np.cumsum(domains[:-1], out=offsets[1:])
    key = np.repeat(offsets[:, None], m, axis=1)
    for j, (col, a) in enumerate(zip(src.cols, src.levels, strict=True)):
        rows = np.flatnonzero(radix[:, j] > 1)  # the nodes this QI adds to
        if rows.size == 0:
            continue
        maps = ev._level_maps(j, a)  # [levels, nodes at level a]: node id at each level
        weighted = maps[levels[rows, j]] * mult[rows, j, None]
        if rows.size == n_nodes:
            key += np.take(weighted, col, axis=1)
        else:
            key[rows] += np.take(weighted, col, axis=1)
    if n_sa > 1:
        key *= n_sa
        key += src.sa
    total = int(domains.sum())
    weights = np.broadcast_to(src.weights, (n_nodes, m)).ravel()  # type: ignore[arg-type]
    counts = np.bincount(key.ravel(), weights=weights, minlength=total * n_sa)
    counts = counts.astype(np.int64).reshape(total, n_sa)
    size = counts.sum(axis=1) if n_sa > 1 else counts[:, 0]
    present = size > 0
    bad = np.zeros(total, dtype=bool)
    for model in ev.models:
        if type(model) is KAnonymity:
            bad |= size < model.k
        else:
            bad |= np.count_nonzero(counts, axis=1) < model.l  # type: ignore[attr-defined]
    bad &= present
    violating = np.add.reduceat(np.where(bad, size, 0), offsets).tolist()
    groups = np.add.reduceat(present.astype(np.int64), offsets).tolist()
    squares = None
    if ev.metric == "discernibility":
        squares = np.add.reduceat(np.where(present & ~bad, size * size, 0), offsets).tolist()
    ev.evaluations += n_nodes
    for i, (idx, node, _) in enumerate(items):
        v = int(violating[i])
        if v:
            if v <= ev.limit:  # the suppressed group is judged on its own
                ev.evaluations -= 1
                results[idx] = ev.evaluate(idx, src)[0]
            else:
                results[idx] = NodeResult(node, False, True, int(groups[i]), v)
            continue
        if ev.metric == "loss":
            key_i = ev.loss.node_key(node)
            loss = ev.loss.value(key_i)
        elif squares is not None:
            key_i = int(squares[i])
            loss = float(key_i)
        else:
            key_i = sum(node)
            loss = float(key_i)
        ev.keys[idx] = key_i
        results[idx] = NodeResult(node, True, True, int(groups[i]), 0, loss)


__all__ = ["BATCH_CELLS", "BATCH_MODELS", "batch_ok", "judge_layer"]
