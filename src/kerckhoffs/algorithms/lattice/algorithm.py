"""The registered ``lattice`` algorithm: search the lattice, publish the chosen node.

**Published cells.** The release carries its cells (:func:`full_domain_cells`): each group
publishes the label of its node at the chosen level (``[35-39]``, ``university``,
``Person``), not the lowest common ancestor of the rows it happens to hold, so the file is the
full-domain table of spec ``minimality.md`` 4.12 (Table XVIII(a) publishes ``Person`` for a
group of women only). Suppressed rows form one group whose QI cells are the roots (``*``).
The provenance records the chosen level vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.lattice.evaluate import MONOTONE_MODELS, evaluator
from kerckhoffs.algorithms.lattice.nodes import Lattice, Node
from kerckhoffs.algorithms.lattice.search import search_lattice
from kerckhoffs.algorithms.registry import register
from kerckhoffs.data.table import Table
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme


def full_domain_cells(
    table: Table, partition: Partition, levels: Node, suppressed_group: int = -1
) -> pd.DataFrame:
    """Each group's cells at ``levels``: the label of its node at the chosen level of every QI
    (``suppressed_group``, -1 if none, publishes every QI's root)."""
    first = partition.order()[partition.starts()]
    data = {}
    for j, col in enumerate(table.qi_columns):
        h = col.hierarchy
        assert h is not None
        cells = np.asarray(h.labels[levels[j]], dtype=object)[col.leaves(table.qi[first, j])]
        if suppressed_group >= 0:
            cells[suppressed_group] = h.labels[h.height][0]
        data[col.name] = pd.array(cells.astype(str), dtype="str")
    return pd.DataFrame(data)


def release_at(
    table: Table,
    node: Node | dict[str, int],
    models: list[PrivacyModel] | None = None,
    *,
    suppression: float = 0.0,
    provenance: Provenance | None = None,
) -> Release:
    """The release of ``table`` at one lattice node. With ``models``, rows of groups that
    violate them form the suppressed group (it is not checked here: see
    :func:`search_lattice` for which nodes may be published)."""
    lat = Lattice.of(table)
    node = lat.check_node(node)
    part = lat.partition(node)
    sup_group = -1
    if models:
        ev = evaluator(table, models, suppression, "loss", "lattice")
        hist = GroupHistogram.from_codes(
            part.group, table.sa, part.n_groups, table.n_sa, ev.sensitive, ev.mode, ev.sa_kind
        )
        bad = ~ev.ok_groups(hist.counts)
        rows = bad[part.group]
        if rows.any():
            labels = part.group.astype(np.int64)
            labels[rows] = -1
            part = Partition.from_labels(labels)
            sup_group = int(part.group[int(np.argmax(rows))])
    return Release(
        table,
        part,
        Scheme.GENERALIZATION,
        table.sa,
        provenance or Provenance("lattice", {"levels": dict(zip(lat.names, node, strict=True))}),
        cells=full_domain_cells(table, part, node, sup_group),
    )


@register(
    "lattice",
    minimal=True,
    summary="full-domain generalization over the hierarchy lattice (Samarati, Incognito): "
    "the minimal satisfying node of least information loss",
    models=tuple(m.__name__ for m in MONOTONE_MODELS),
    options={
        "suppression": "fraction of rows that may be suppressed (default 0); they form one "
        "group with every QI at its root, which must satisfy the models too",
        "metric": "loss (paper 001 Definition 7, default) | discernibility | height",
        "strategy": "two-way (default: bottom-up and top-down tagging) | incognito (bottom-up) "
        "| samarati (binary search on height) | naive (every node); same result but samarati",
    },
)
def lattice(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    suppression: float = 0.0,
    metric: str = "loss",
    strategy: str = "two-way",
) -> Release:
    """Full-domain generalization: publish the minimal lattice node of least ``metric``.

    Accepts the monotone models :data:`MONOTONE_MODELS` (any combination; all must hold).
    Raises :class:`~kerckhoffs.errors.ParameterError` with one line for other models,
    parameters no node can meet, or bad options; a numeric QI without a hierarchy raises
    :class:`~kerckhoffs.errors.SchemaError` naming it. Deterministic: ``seed`` is
    not used. The provenance records the chosen level vector (``levels``), the suppressed
    rows and the metric value.
    """
    found = search_lattice(table, models, suppression=suppression, metric=metric, strategy=strategy)
    lat = found.lattice
    res = found.chosen_result
    params: dict[str, Any] = {"models": [m.to_dict() for m in models]}
    params.update(
        levels=dict(zip(lat.names, found.chosen, strict=True)),
        metric=metric,
        metric_value=res.loss,
        strategy=strategy,
        suppression=float(suppression),
        suppressed_rows=res.violating,
        minimal_nodes=len(found.minimal),
        evaluated_nodes=found.evaluated,
    )
    return release_at(
        table,
        found.chosen,
        models if res.violating else None,
        suppression=suppression,
        provenance=Provenance("lattice", params),
    )


__all__ = ["full_domain_cells", "lattice", "release_at"]
