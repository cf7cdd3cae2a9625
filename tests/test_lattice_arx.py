"""Golden settings of the lattice search on real data (issue 15 item 1): the chosen node and the
minimal nodes of today's search (recorded from main at b4b9aba, before the search was made
cheaper) must not change.

ARX's Adult: the 30,162-row training split ``adult.csv`` with ARX's own hierarchies
``adult_hierarchy_*.csv``, QIs in the file's (ARX's) column order. ARX 3.9 (Flash, k = 5, no
suppression) publishes ``[0,4,0,2,3,2,2,1]`` on the 8 QIs sex, age, race, marital-status,
education, native-country, workclass, occupation; that is our choice too, and in ARX's order.

Settings: (a) k = 5, those 8 QIs, SA salary-class (6,480 nodes); (b) k = 5 and (c) k = 100 with
salary-class as a 9th QI (12,960 nodes; the SA is a constant column, k-anonymity never reads
it); (d) entropy l = 5: salary-class has 2 values, so ``l = 5`` cannot hold on it, and the
setting uses ARX's benchmark convention instead, SA occupation and the 8 other columns as QIs
(4,320 nodes). Plus the 45,222-row Adult of ``examples/adult/schema.toml`` with k = 5 (15,360
nodes, ``benchmarks/bench_lattice.py``).

The small default-suite check of the same property is ``test_lattice.py``'s brute-force
comparisons plus :func:`test_same_visits_as_the_kept_baseline` here (today's search kept in
``benchmarks/baselines/lattice_v0``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.lattice import search_lattice
from kerckhoffs.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "adult"
ARX_QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
]

# setting -> (chosen node, minimal nodes), level vectors written as digit strings
GOLDEN = {
    "a": (
        "04023221",
        "01123222 04013222 04023221 04103222 04111222 04113122 04113221 04120222 04121221 "
        "04123121 04123202 04123220 11113222 11123221 12113221 14013221 14021222 14102222 "
        "14110222 14111221 14113121 14113202 14122122",
    ),
    "b": (
        "041132210",
        "011232221 040132221 040232211 041032221 041112221 041131221 041132210 041202221 "
        "041212211 041231211 041232020 041232201 111132221 111232211 121132211 140132211 "
        "140212221 140232220 141022221 141032220 141102221 141112211 141131211 141132020 "
        "141202220 141221221 141231220",
    ),
    "c": (
        "041232210",
        "041132211 041132220 041212221 041232210 140232221 141112221 141132210",
    ),
    "d": (
        "04013221",
        "02123221 04013221 04113220 04122221 04123121 11113221 14023220 14103220 14112221 "
        "14113121 14122220 14123201 14123210",
    ),
    "adult45k": (
        "43131030",
        "13232131 13331131 23322131 23332031 33132131 33222131 33232031 40232131 40332031 "
        "43022131 43032031 43032130 43102131 43111131 43112031 43121031 43122121 43122130 "
        "43130031 43131030 43132021 43132111 43132120 43212130 43220031 43221130 43222021 "
        "43222030 43230130 43231121 43232011 43232020 43302031 43310131 43311031 43312121 "
        "43321030 43322111 43322120 43330030 43331020 43332110",
    ),
}
# Samarati's binary search publishes the best node of the lowest satisfying height
SAMARATI = {"a": "04121221", "b": "041132210", "c": "041232210", "d": "11113221"}


def arx_table(df: pd.DataFrame, qis: list[str], sa: str) -> Table:
    """The training split with ARX's hierarchy files (age numeric, the rest categorical)."""
    spec = {
        q: {
            "kind": "numeric" if q == "age" else "categorical",
            "hierarchy": str(DATA / f"adult_hierarchy_{q}.csv"),
        }
        for q in qis
    }
    return Table.encode(df, Schema.build(spec, sa))


def settings() -> dict[str, tuple[Table, list]]:
    from kerckhoffs.datasets import load_adult, load_adult_training

    df = load_adult_training(DATA)
    df["none"] = "*"
    t8 = arx_table(df, ARX_QIS, "salary-class")
    t9 = arx_table(df, [*ARX_QIS, "salary-class"], "none")
    others = [q for q in ARX_QIS if q != "occupation"] + ["salary-class"]
    td = arx_table(df, others, "occupation")
    t45 = Table.encode(load_adult(DATA), Schema.from_toml(ROOT / "examples/adult/schema.toml"))
    return {
        "a": (t8, [KAnonymity(5)]),
        "b": (t9, [KAnonymity(5)]),
        "c": (t9, [KAnonymity(100)]),
        "d": (td, [EntropyLDiversity(5)]),
        "adult45k": (t45, [KAnonymity(5)]),
    }


def digits(node: tuple[int, ...]) -> str:
    return "".join(map(str, node))


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult_hierarchy_age.csv").is_file(), reason="no shared data")
def test_golden_settings_choose_todays_nodes() -> None:
    cases = settings()
    t8 = cases["a"][0]
    assert t8.qi_names == ARX_QIS
    found = search_lattice(*cases["a"])
    assert found.lattice.size == 6480
    assert list(found.chosen) == [0, 4, 0, 2, 3, 2, 2, 1]  # ARX 3.9's optimum, ARX's order
    for name, (table, models) in cases.items():
        found = search_lattice(table, models)
        chosen, minimal = GOLDEN[name]
        assert digits(found.chosen) == chosen, name
        assert " ".join(digits(n) for n in found.minimal) == minimal, name
        if name in SAMARATI:
            assert (
                digits(search_lattice(table, models, strategy="samarati").chosen) == SAMARATI[name]
            )


def _baseline() -> object:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module("baselines.lattice_v0")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def facts(visits: tuple) -> list[tuple]:
    """Each visit's fields (``nan`` as None: the baseline's NodeResult is another class)."""
    return [
        (
            v.levels,
            v.satisfied,
            v.evaluated,
            v.groups,
            v.violating,
            None if v.loss != v.loss else v.loss,
        )
        for v in visits
    ]


@pytest.mark.parametrize("strategy", ["two-way", "incognito", "samarati"])
def test_same_results_as_the_kept_baseline(strategy: str) -> None:
    """Today's search against the search before issue 15 (kept verbatim), on generated data
    with and without suppression, every metric: the minimal nodes, their losses and the choice
    are identical; every node evaluated gets the baseline's verdict, group count, violating
    rows and loss (from the baseline's naive scan, which evaluates every node from the table);
    incognito and samarati visit exactly the baseline's nodes in its order (two-way visits
    fewer: its frontiers now favour the top-down side)."""
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    base = _baseline()
    t = Table.encode(generate_hospital(700, seed=5), hospital_schema(sensitive_subset=True))
    for models, suppression in [
        ([KAnonymity(5)], 0.0),
        ([KAnonymity(4)], 0.02),
        ([LDiversity(2)], 0.0),
        ([DistinctLDiversity(2), MConfidentiality(2)], 0.0),
        ([KAnonymity(2), LDiversity(2)], 0.01),
    ]:
        if strategy == "samarati" and suppression:
            continue
        for metric in ("loss", "discernibility", "height"):
            new = search_lattice(
                t, models, suppression=suppression, metric=metric, strategy=strategy
            )
            old = base.search_lattice(  # type: ignore[attr-defined]
                t, models, suppression=suppression, metric=metric, strategy=strategy
            )
            assert new.minimal == old.minimal and new.chosen == old.chosen
            assert new.losses == old.losses
            if strategy == "two-way":
                naive = base.search_lattice(  # type: ignore[attr-defined]
                    t, models, suppression=suppression, metric=metric, strategy="naive"
                )
                truth = {v[0]: v for v in facts(naive.visits)}
                assert all(v == truth[v[0]] for v in facts(new.visits) if v[2])
                assert new.evaluated <= old.evaluated
            else:
                assert facts(new.visits) == facts(old.visits), (models, suppression, metric)


@pytest.mark.parametrize("max_anchors", [1, 16])
def test_rolling_up_from_anchors_changes_nothing(
    max_anchors: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Top-down layers rolled up from anchors (their meet's frequency set), forced on every
    layer (kept whatever their size) and with one or many kept at once: every evaluated node
    gets the baseline's naive-scan result, and the minimal nodes and choice are the
    baseline's."""
    from kerckhoffs.algorithms.lattice import evaluate as module
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    monkeypatch.setattr(module, "ANCHOR_SHARE", 2.0)
    monkeypatch.setattr(module, "MAX_ANCHORS", max_anchors)
    made = []
    prepare = module.Evaluator.prepare

    def counting(self: module.Evaluator, indices: list[int]) -> None:
        before = len(self.anchors)
        prepare(self, indices)
        made.append(len(self.anchors) > before)

    monkeypatch.setattr(module.Evaluator, "prepare", counting)
    base = _baseline()
    t = Table.encode(generate_hospital(500, seed=8), hospital_schema(sensitive_subset=True))
    for models in ([KAnonymity(3)], [LDiversity(2)], [KAnonymity(2), LDiversity(1.5)]):
        new = search_lattice(t, models)
        naive = base.search_lattice(t, models, strategy="naive")  # type: ignore[attr-defined]
        truth = {v[0]: v for v in facts(naive.visits)}
        assert all(v == truth[v[0]] for v in facts(new.visits) if v[2])
        assert new.minimal == naive.minimal and new.chosen == naive.chosen
    assert any(made)


def test_lattice_shape_is_shared_read_only_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node arrays are built once per shape and cannot be written through; a lattice
    above SHAPE_CACHE_NODES gets its own (not kept between searches)."""
    from kerckhoffs.data import lattice as nodes

    a, b = nodes.lattice_shape((1, 3, 2)), nodes.lattice_shape((1, 3, 2))
    assert a is b and a.levels.shape == (24, 3)
    assert a.nodes[a.layers[1][0]] == (0, 0, 1)  # height 1, lexicographic first
    assert [len(x) for x in a.layers] == [1, 3, 5, 6, 5, 3, 1]
    with pytest.raises(ValueError, match="read-only"):
        a.levels[0, 0] = 1
    monkeypatch.setattr(nodes, "SHAPE_CACHE_NODES", 10)
    assert nodes.lattice_shape((1, 3, 2)) is not nodes.lattice_shape((1, 3, 2))
