"""The registered ``lattice`` algorithm: search the lattice, publish the chosen node.

**Published cells.** The release carries its cells (:func:`full_domain_cells`): each group
publishes the label of its node at the chosen level (``[35-39]``, ``university``,
``Person``), not the lowest common ancestor of the rows it happens to hold, so the file is the
full-domain table of paper 001's attack-by-mechanism example
(``docs/theory/minimality.md#worked-examples``; Table XVIII(a) publishes ``Person`` for a
group of women only). Suppressed rows form one group whose QI cells are the roots (``*``).
The provenance records the chosen level vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.lattice.disclosure import DISCLOSURES, decide
from kerckhoffs.algorithms.lattice.evaluate import MONOTONE_MODELS, evaluator
from kerckhoffs.algorithms.lattice.search import evaluate_node, search_lattice
from kerckhoffs.algorithms.registry import register
from kerckhoffs.data.lattice import Lattice, Node
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InternalError, NothingReleased, ParameterError
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
        if h is None:
            raise InternalError(f"lattice: column {col.name!r} has no hierarchy")
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


_OPTIONS = {
    "suppression": "fraction of rows that may be suppressed (default 0); they form one "
    "group with every QI at its root, which must satisfy the models too",
    "metric": "loss (paper 001 Definition 7, default) | discernibility | height",
    "strategy": "two-way (default: bottom-up and top-down tagging) | incognito (bottom-up) "
    "| samarati (binary search on height) | naive (every node); same result but samarati",
    "disclosure": "naive (default: release the first node that passes) | exclusive | "
    "inclusive (paper 002: release only if safe on the disclosure set; else nothing, exit 1)",
}


@register(
    "lattice",
    minimal=True,
    summary="full-domain generalization over the hierarchy lattice (Samarati, Incognito): "
    "the minimal satisfying node of least information loss",
    models=tuple(m.__name__ for m in MONOTONE_MODELS),
    options=_OPTIONS,
)
def lattice(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    suppression: float = 0.0,
    metric: str = "loss",
    strategy: str = "two-way",
    disclosure: str = "naive",
) -> Release:
    """Full-domain generalization: publish the minimal lattice node of least ``metric``.

    Accepts the monotone models :data:`MONOTONE_MODELS` (any combination; all must hold).
    Raises :class:`~kerckhoffs.errors.ParameterError` with one line for other models,
    parameters no node can meet, or bad options; a numeric QI without a hierarchy raises
    :class:`~kerckhoffs.errors.SchemaError` naming it. Deterministic: ``seed`` is
    not used. The provenance records the chosen level vector (``levels``), the suppressed
    rows and the metric value.

    ``disclosure`` (paper 002, :mod:`.disclosure`): ``"naive"`` (default) is the algorithm as
    it always was; ``"exclusive"`` releases its choice only if the models hold on the
    disclosure set of an adversary who knows the algorithm, ``"inclusive"`` releases the first
    node whose disclosure set passes; when the strategy releases nothing it raises
    :class:`~kerckhoffs.errors.NothingReleased`. Both need ``suppression=0`` and a strategy
    other than samarati (the published node must be the first passing node of
    :func:`generalization_sequence`), and record ``disclosure`` and ``released_index`` (the
    node's position in that public sequence) in the provenance.
    """
    return _lattice("lattice", table, models, suppression, metric, strategy, disclosure=disclosure)


def _lattice(
    name: str,
    table: Table,
    models: list[PrivacyModel],
    suppression: float,
    metric: str,
    strategy: str,
    *,
    disclosure: str,
) -> Release:
    if disclosure not in DISCLOSURES:
        raise ParameterError(
            f"{name}: disclosure must be one of {', '.join(DISCLOSURES)}, got {disclosure!r}"
        )
    if disclosure != "naive" and float(suppression) != 0.0:
        raise ParameterError(
            f"{name}: disclosure={disclosure} needs suppression=0 (suppressed rows depend on "
            "the sensitive values, outside paper 002's model)"
        )
    if disclosure != "naive" and strategy == "samarati":
        raise ParameterError(
            f"{name}: disclosure={disclosure} needs a strategy other than samarati (its choice "
            "is not the first passing node of the generalization sequence)"
        )
    found = search_lattice(
        table, models, suppression=suppression, metric=metric, strategy=strategy, name=name
    )
    lat = found.lattice
    chosen = found.chosen
    extra: dict[str, Any] = {}
    if disclosure != "naive":
        check = decide(table, models, chosen, disclosure, metric=metric, name=name)
        if check.node is None:
            why = (
                f"the first passing node {chosen} fails the models on its disclosure set"
                if disclosure == "exclusive"
                else "no candidate node passes the models on its disclosure set"
            )
            share = (
                f" (a person's value share reaches {check.max_share})"
                if (check.max_share is not None)
                else ""
            )
            raise NothingReleased(f"{name} releases nothing: {why}{share}")
        chosen = check.node
        extra = {"disclosure": disclosure, "released_index": check.released}
    res = (
        found.chosen_result
        if chosen == found.chosen
        else evaluate_node(table, models, chosen, metric=metric)
    )
    params: dict[str, Any] = {"models": [m.to_dict() for m in models]}
    params.update(
        levels=dict(zip(lat.names, chosen, strict=True)),
        metric=metric,
        metric_value=res.loss,
        strategy=strategy,
        suppression=float(suppression),
        suppressed_rows=res.violating,
        **extra,
    )  # never the search's own counts (nodes evaluated, minimal nodes found): how many other
    # candidates pass is what an adversary who knows the search order would read (paper 002)
    return release_at(
        table,
        chosen,
        models if res.violating else None,
        suppression=suppression,
        provenance=Provenance(name, params),
    )


def _variant(disclosure: str) -> Any:
    def run(
        table: Table,
        models: list[PrivacyModel],
        *,
        seed: Seed = None,
        metric: str = "loss",
        strategy: str = "two-way",
    ) -> Release:
        return _lattice(
            f"lattice-{disclosure}", table, models, 0.0, metric, strategy, disclosure=disclosure
        )

    run.__doc__ = (
        f"``lattice`` with ``disclosure={disclosure}`` (paper 002): the lattice's choice is "
        "released only if safe against an adversary who knows the algorithm; raises "
        ":class:`~kerckhoffs.errors.NothingReleased` when nothing is released."
    )
    return run


lattice_exclusive = register(
    "lattice-exclusive",
    minimal=True,
    family="lattice",
    base="lattice",
    summary="lattice under paper 002's exclusive strategy: its choice, released only if the "
    "models hold on the disclosure set (else nothing)",
    models=tuple(m.__name__ for m in MONOTONE_MODELS),
    options={k: _OPTIONS[k] for k in ("metric", "strategy")},
)(_variant("exclusive"))

lattice_inclusive = register(
    "lattice-inclusive",
    minimal=True,
    family="lattice",
    base="lattice",
    summary="lattice under paper 002's inclusive strategy: the first node whose disclosure "
    "set passes the models (else nothing)",
    models=tuple(m.__name__ for m in MONOTONE_MODELS),
    options={k: _OPTIONS[k] for k in ("metric", "strategy")},
)(_variant("inclusive"))


__all__ = [
    "full_domain_cells",
    "lattice",
    "lattice_exclusive",
    "lattice_inclusive",
    "release_at",
]
