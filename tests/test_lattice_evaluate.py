"""The lattice evaluator's grouping against a brute-force oracle written from the definition.

A node's equivalence classes are the rows with equal generalized QI values (each QI's label at
the node's level); the oracle builds those labels from the hierarchies and groups the rows with
pandas, independent of :mod:`kerckhoffs.algorithms.lattice`. The evaluator must give the same
multiset of group sizes (and, when a model reads the SA, of per-group SA histograms) whether it
groups the table's rows, the table's frequency set, or the frequency set of a node below
(rolled up), with k-anonymity alone (cells without the SA) and with distinct l-diversity (cells
with it); and the same verdict and violating rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.lattice import evaluate as ev_mod
from kerckhoffs.algorithms.lattice.evaluate import evaluator
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.models import DistinctLDiversity, KAnonymity


@st.composite
def small_case(draw: st.DrawFn) -> tuple[Table, list]:
    """A table of 1-40 rows over 1-3 QIs with 1-2 level hierarchies, SA in a-d."""
    d = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    quasi: dict[str, dict] = {}
    data: dict[str, list] = {}
    for j in range(d):
        n_leaves = draw(st.integers(1, 6))
        mid = draw(st.integers(1, n_leaves))
        rows = [[f"v{j}_{i}", f"m{j}_{i * mid // n_leaves}", "*"] for i in range(n_leaves)]
        quasi[f"q{j}"] = {"hierarchy": Hierarchy(rows, f"q{j}"), "kind": "categorical"}
        data[f"q{j}"] = draw(
            st.lists(st.sampled_from([r[0] for r in rows]), min_size=n, max_size=n)
        )
    data["s"] = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
    table = Table.encode(pd.DataFrame(data), Schema.build(quasi, "s"))
    k = draw(st.integers(1, 4))
    models: list = [KAnonymity(k)]
    if draw(st.booleans()):
        models.append(DistinctLDiversity(draw(st.integers(1, 3))))
    return table, models


def oracle(table: Table, node: tuple[int, ...]) -> pd.DataFrame:
    """Per class at ``node``: its count of each SA code, the rows grouped on their labels."""
    labels = {}
    for j, col in enumerate(table.qi_columns):
        h = col.hierarchy
        assert h is not None
        labels[f"g{j}"] = np.asarray(h.labels[node[j]], dtype=object)[col.leaves(table.qi[:, j])]
    frame = pd.DataFrame(labels)
    codes = [f"s{c}" for c in range(table.n_sa)]
    for c, name in enumerate(codes):
        frame[name] = (table.sa == c).astype(int)
    return frame.groupby(list(labels), sort=False)[codes].sum()


def multiset(rows: np.ndarray) -> list[tuple[int, ...]]:
    return sorted(tuple(int(x) for x in r) for r in rows)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_case())
def test_groups_match_a_groupby_of_generalized_rows(case: tuple[Table, list]) -> None:
    table, models = case
    ev = evaluator(table, models, 0.0, "loss", "lattice")
    lat = ev.lattice
    k = models[0].k
    distinct = models[1].l if len(models) > 1 else 1
    for idx in range(lat.size):
        node = lat.node(idx)
        truth = oracle(table, node)
        sizes = truth.sum(axis=1).to_numpy()
        ok = (sizes >= k) & ((truth > 0).sum(axis=1).to_numpy() >= distinct)
        # every source below the node: the rows, the table's cells, each node below's cells
        below = [
            ev._group(ev.base, lat.node(i)).freq()
            for i in range(lat.size)
            if all(a <= b for a, b in zip(lat.node(i), node, strict=True))
        ]
        for src in [ev.rows, ev.base, *below]:
            g = ev._group(src, node)
            assert sorted(g.sizes.tolist()) == sorted(sizes.tolist())
            if not ev.sa_blind:  # the SA histogram of each class
                assert multiset(g.hist) == multiset(truth.to_numpy())
            res, _ = ev.evaluate(idx, src)
            assert res.groups == len(sizes)
            assert res.violating == int(sizes[~ok].sum())
            assert res.satisfied == bool(ok.all())
    # k-anonymity alone never reads the SA: its cells are the distinct QI vectors
    if len(models) == 1:
        distinct_qi = {tuple(r) for r in table.qi.tolist()}
        assert ev.base.size == len(distinct_qi)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_case(), st.sampled_from([0.0, 0.25]))
def test_hashed_keys_and_sa_pairs_match_the_oracle(
    case: tuple[Table, list], suppression: float
) -> None:
    """The paths large tables take, forced on small ones: group keys hashed (not ranked
    densely) and, for k-anonymity with distinct l-diversity, the (group, SA) pairs instead of
    the dense histogram; with suppression, the suppressed rows' group judged from the pairs."""
    table, models = case
    saved = (ev_mod.DENSE_FACTOR, ev_mod.DENSE_SLACK, ev_mod.SPARSE_FACTOR)
    ev_mod.DENSE_FACTOR = ev_mod.DENSE_SLACK = ev_mod.SPARSE_FACTOR = 0
    try:
        ev = evaluator(table, models, suppression, "loss", "lattice")
        lat = ev.lattice
        k = models[0].k
        distinct = models[1].l if len(models) > 1 else 1
        limit = int(np.floor(suppression * table.n))
        for idx in range(lat.size):
            node = lat.node(idx)
            truth = oracle(table, node)
            sizes = truth.sum(axis=1).to_numpy()
            ok = (sizes >= k) & ((truth > 0).sum(axis=1).to_numpy() >= distinct)
            violating = int(sizes[~ok].sum())
            rest = truth.to_numpy()[~ok].sum(axis=0)
            held = violating == 0 or (
                violating <= limit and rest.sum() >= k and (rest > 0).sum() >= distinct
            )
            for src in [ev.rows, ev.base, ev._group(ev.base, node).freq()]:
                g = ev._group(src, node)
                if not ev.sa_blind:
                    assert (g.pairs is not None) == (len(models) > 1 and table.n_sa > 1)
                    assert multiset(g.hist) == multiset(truth.to_numpy())
                    assert sorted(g.distinct.tolist()) == sorted((truth > 0).sum(axis=1))
                res, _ = ev.evaluate(idx, src)
                assert res.groups == len(sizes)
                assert res.violating == violating
                assert res.satisfied == held
    finally:
        ev_mod.DENSE_FACTOR, ev_mod.DENSE_SLACK, ev_mod.SPARSE_FACTOR = saved
