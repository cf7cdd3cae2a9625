"""Full-domain generalization over the hierarchy lattice: the paper 001 examples that use a
global-recoding algorithm as exact vectors (spec ``minimality.md`` 4.1, 4.5, 4.12 Tables
XVI-XVIII, 4.14 Table XX), and hypothesis properties against a brute-force scan of the whole
lattice built only from ``Partition.by_levels`` and ``Release.check``."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Hierarchy, Partition, Release, Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.lattice import (
    Lattice,
    chosen_node,
    evaluate_node,
    generalization_sequence,
    information_loss,
    lattice,
    minimal_nodes,
    release_at,
    search_lattice,
    visiting_order,
)
from kerckhoffs.errors import ParameterError, SchemaError
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    RecursiveCLDiversity,
    TCloseness,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# Fig. 1 education taxonomy, reconstructed (spec 2.2): nine leaves, coverage(university) = 2.
FIG1_EDUCATION = [
    ["1st-4th", "elementary", "without-post-secondary", "*"],
    ["5th-6th", "elementary", "without-post-secondary", "*"],
    ["7th-8th", "elementary", "without-post-secondary", "*"],
    ["9th-10th", "secondary", "without-post-secondary", "*"],
    ["11th-12th", "secondary", "without-post-secondary", "*"],
    ["HS-grad", "secondary", "without-post-secondary", "*"],
    ["undergraduate", "university", "post-secondary", "*"],
    ["postgraduate", "university", "post-secondary", "*"],
    ["vocational", "vocational-training", "post-secondary", "*"],
]
GENDER = [["Male", "Person"], ["Female", "Person"]]


def table_xvi() -> Table:
    rows = [
        ("Male", "postgraduate", "HIV"),
        ("Female", "undergraduate", "HIV"),
        ("Female", "postgraduate", "non"),
        ("Female", "undergraduate", "non"),
        ("Female", "undergraduate", "non"),
    ]
    df = pd.DataFrame(rows, columns=["gender", "education", "disease"])
    schema = Schema.build(
        {
            "gender": {"hierarchy": Hierarchy(GENDER, "gender")},
            "education": {"hierarchy": Hierarchy(FIG1_EDUCATION, "education")},
        },
        "disease",
        sensitive_values=["HIV"],
    )
    return Table.encode(df, schema)


def one_qi_table(qids: list[str], diseases: list[str], leaves: list[str]) -> Table:
    """Table I / V style: one QI ``q`` whose leaves generalize to Q, then *."""
    df = pd.DataFrame({"q": qids, "disease": diseases})
    h = Hierarchy([[leaf, "Q", "*"] for leaf in leaves], "q")
    schema = Schema.build({"q": {"hierarchy": h}}, "disease", sensitive_values=["HIV"])
    return Table.encode(df, schema)


def published(release: Release) -> list[tuple[str, ...]]:
    """The published rows (QI cells + SA), sorted."""
    t = release.table
    df = release.frames()["release"]
    return sorted(map(tuple, df[[*t.qi_names, t.sa_name]].astype(str).to_numpy().tolist()))


# -- spec 4.12: Tables XVI-XVIII (attack by mechanism on an Incognito-like algorithm) ----------
def test_table_xvi_information_loss_of_the_four_nodes() -> None:
    t = table_xvi()
    assert information_loss(t, (0, 0)) == 0.0
    assert information_loss(t, (0, 1)) == 0.0625  # Table XVII
    assert information_loss(t, (1, 0)) == 0.5  # Table XVIII(a)
    assert information_loss(t, (1, 1)) == 0.5625  # Table XVIII(b)
    assert information_loss(t, {"gender": 1}) == 0.5
    # a suppressed row counts 1 (every attribute at the root)
    assert (
        information_loss(t, (0, 1), suppressed=np.array([1, 0, 0, 0, 0], bool))
        == (0.0625 * 4 + 1) / 5
    )


def test_table_xvii_violates_and_xviii_satisfies() -> None:
    t = table_xvi()
    l2 = [LDiversity(2)]
    assert not evaluate_node(t, l2, (0, 0)).satisfied
    r = evaluate_node(t, l2, (0, 1))
    assert (r.satisfied, r.groups, r.violating) == (False, 2, 1)  # the Male EC: 1/1 HIV
    assert evaluate_node(t, l2, (1, 0)).satisfied
    assert evaluate_node(t, l2, (1, 1)).satisfied
    assert evaluate_node(t, l2, (1, 0)).loss == 0.5
    assert published(release_at(t, (0, 1))) == sorted(
        [("Male", "university", "HIV"), ("Female", "university", "HIV")]
        + [("Female", "university", "non")] * 3
    )
    assert published(release_at(t, (1, 1))) == sorted(
        [("Person", "university", "HIV")] * 2 + [("Person", "university", "non")] * 3
    )


def test_algorithm_publishes_table_xviii_a() -> None:
    t = table_xvi()
    rel = lattice(t, [LDiversity(2)])
    assert rel.cells is not None
    assert published(rel) == sorted(
        [
            ("Person", "postgraduate", "HIV"),
            ("Person", "undergraduate", "HIV"),
            ("Person", "postgraduate", "non"),
            ("Person", "undergraduate", "non"),
            ("Person", "undergraduate", "non"),
        ]
    )
    assert rel.provenance.algorithm == "lattice"
    assert rel.provenance.parameters["levels"] == {"gender": 1, "education": 0}
    assert rel.provenance.parameters["metric_value"] == 0.5
    # the search's own counts would tell how many other candidates pass (paper 002)
    assert not {"minimal_nodes", "evaluated_nodes"} & set(rel.provenance.parameters)
    assert all(r.satisfied for r in rel.check([LDiversity(2)]))
    for strategy in ("two-way", "incognito", "samarati", "naive"):
        found = search_lattice(t, [LDiversity(2)], strategy=strategy)
        assert found.minimal == ((1, 0),) and found.chosen == (1, 0)
        assert found.losses == {(1, 0): 0.5}
    # the adversary's view (spec 4.12): every node of lower loss violates
    seq = generalization_sequence(t)
    assert seq[:4] == [(0, 0), (0, 1), (0, 2), (0, 3)]  # losses 0, 1/16, 1/8, 1/2
    before = seq[: seq.index((1, 0))]
    assert all(not evaluate_node(t, [LDiversity(2)], n).satisfied for n in before)


def test_incognito_visiting_order_on_table_xvi() -> None:
    visits = visiting_order(table_xvi(), [LDiversity(2)], strategy="incognito")
    assert [(v.levels, v.evaluated, v.satisfied) for v in visits] == [
        ((0, 0), True, False),
        ((0, 1), True, False),
        ((1, 0), True, True),
        ((0, 2), True, False),
        ((1, 1), False, True),
        ((0, 3), True, False),
        ((1, 2), False, True),
        ((1, 3), False, True),
    ]


# -- spec 4.1 Table I(b) -> (c), 4.14 Table XX, 4.5 Table V -> VI ------------------------------
def test_table_i_global_recoding_and_table_xx_sequence() -> None:
    t = one_qi_table(["q1", "q1"] + ["q2"] * 6, ["HIV", "HIV"] + ["non"] * 6, ["q1", "q2"])
    assert generalization_sequence(t) == [(0,), (1,), (2,)]  # T0, T1 = XX(a), T2 = XX(b)
    assert minimal_nodes(t, [LDiversity(2)]) == [(1,)]
    rel = lattice(t, [LDiversity(2)])
    assert published(rel) == sorted([("Q", "HIV")] * 2 + [("Q", "non")] * 6)  # Table I(c)
    assert published(release_at(t, (2,))) == sorted([("*", "HIV")] * 2 + [("*", "non")] * 6)


def test_table_v_published_as_table_vi() -> None:
    qids = ["q1", "q1", "q2", "q2"] + ["q3"] * 10
    sa = ["HIV", "HIV", "HIV", "non", "HIV", "HIV"] + ["non"] * 8
    t = one_qi_table(qids, sa, ["q1", "q2", "q3"])
    rel = lattice(t, [LDiversity(2)])
    assert rel.provenance.parameters["levels"] == {"q": 1}
    assert published(rel) == sorted([("Q", "HIV")] * 5 + [("Q", "non")] * 9)


def test_table_i_a_is_published_as_it_is() -> None:
    t = one_qi_table(["q1", "q1"] + ["q2"] * 6, ["HIV", "non", "HIV"] + ["non"] * 5, ["q1", "q2"])
    assert chosen_node(t, [LDiversity(2)]) == (0,)  # minimality: nothing to generalize


# -- refusals --------------------------------------------------------------------------------------
def test_refusals_are_one_line() -> None:
    t = table_xvi()
    cases = [
        ([LDiversity(3)], {}, "l=3"),  # 2 HIV of 5: even the root has 5 < 3 * 2
        ([KAnonymity(6)], {}, "k=6"),
        ([DistinctLDiversity(3)], {}, "l=3"),
        ([TCloseness(0.2)], {}, "t-closeness"),
        ([RecursiveCLDiversity(2, 2)], {}, "recursive"),
        ([], {}, "needs a privacy model"),
        ([KAnonymity(2)], {"suppression": 1.5}, "suppression"),
        ([KAnonymity(2)], {"suppression": 0.2, "strategy": "samarati"}, "samarati"),
        ([KAnonymity(2)], {"strategy": "flash"}, "strategy"),
        ([KAnonymity(2)], {"metric": "ncp"}, "metric"),
    ]
    for models, opts, word in cases:
        with pytest.raises(ParameterError) as exc:
            lattice(t, models, **opts)
        msg = str(exc.value)
        assert word in msg and "\n" not in msg, msg
    with pytest.raises(ParameterError, match="root"):
        lattice(t, [LDiversity(3)])


def test_numeric_qi_without_hierarchy_is_refused_naming_it() -> None:
    df = pd.DataFrame({"age": [30, 31, 32, 33], "zip": ["a", "b", "a", "b"], "s": list("xyxy")})
    t = Table.encode(df, Schema.build({"age": {"kind": "numeric"}, "zip": {}}, "s"))
    with pytest.raises(SchemaError, match="'age'") as exc:
        lattice(t, [KAnonymity(2)])
    assert "\n" not in str(exc.value)


def test_registered_for_the_cli() -> None:
    info = get("lattice")
    assert info.run is lattice
    assert set(info.models) == {
        "KAnonymity",
        "LDiversity",
        "DistinctLDiversity",
        "EntropyLDiversity",
        "AlphaKAnonymity",
        "MConfidentiality",
    }


# -- suppression ----------------------------------------------------------------------------------
def suppression_table() -> Table:
    """Ages 20-29 x4, 30-39 x4 and three outliers alone in their decades: 3-anonymous at the
    decades once the outliers are suppressed (a 3-row group of their own at the root)."""
    ages = [21, 22, 23, 24, 31, 32, 33, 34, 61, 85, 98]
    df = pd.DataFrame({"age": ages, "s": list("abababababa")})
    schema = Schema.build({"age": {"kind": "numeric", "widths": (10,)}}, "s")
    return Table.encode(df, schema)


def test_suppressed_rows_form_one_root_group() -> None:
    t = suppression_table()
    assert chosen_node(t, [KAnonymity(3)]) == (2,)  # no suppression: everything at *
    rel = lattice(t, [KAnonymity(3)], suppression=0.3)  # limit floor(3.3) = 3 rows
    assert rel.provenance.parameters["levels"] == {"age": 1}
    assert rel.provenance.parameters["suppressed_rows"] == 3
    cells = rel.generalized_cells()["age"].tolist()
    sizes = rel.partition.sizes.tolist()
    assert sorted(zip(cells, sizes, strict=True)) == [("*", 3), ("[20-29]", 4), ("[30-39]", 4)]
    assert all(r.satisfied for r in rel.check([KAnonymity(3)]))
    assert rel.provenance.parameters["metric_value"] == information_loss(
        t, (1,), suppressed=np.isin(t.decode_qi(0), [61, 85, 98])
    )
    # a limit of 2 rows cannot suppress the three outliers
    assert chosen_node(t, [KAnonymity(3)], suppression=0.2) == (2,)
    # k = 4: the 3 suppressed rows would form a group of 3 < 4, so the node does not satisfy
    assert not evaluate_node(t, [KAnonymity(4)], (1,), suppression=0.3).satisfied
    assert chosen_node(t, [KAnonymity(4)], suppression=0.3) == (2,)


def test_write_round_trip_checks_the_suppressed_group(tmp_path: Path) -> None:
    t = suppression_table()
    rel = lattice(t, [KAnonymity(3)], suppression=0.3)
    rel.write(tmp_path / "out", [KAnonymity(3)])
    back = Release.from_published(tmp_path / "out")
    assert sorted(back.partition.sizes.tolist()) == [3, 4, 4]
    text = (tmp_path / "out" / "release.csv").read_text()
    assert "[20-29]" in text and "*" in text


# -- hypothesis: against a brute-force scan of the whole lattice ---------------------------------
@st.composite
def hierarchy_rows(draw: st.DrawFn, j: int) -> list[list[str]]:
    """A random hierarchy over 1-6 leaves, 1-3 levels above them (siblings contiguous)."""
    n_leaves = draw(st.integers(1, 6))
    height = draw(st.integers(1, 3))
    nodes = [f"c{j}v{i}" for i in range(n_leaves)]
    cols = [nodes]
    parent_of = list(range(n_leaves))
    current = n_leaves
    for lvl in range(1, height):
        cuts = sorted(draw(st.sets(st.integers(1, max(current - 1, 1)), max_size=current - 1)))
        cuts = [c for c in cuts if 0 < c < current]
        ids = np.searchsorted(np.array(cuts, dtype=int), np.arange(current), side="right")
        parent_of = [int(ids[p]) for p in parent_of]
        cols.append([f"c{j}l{lvl}n{p}" for p in parent_of])
        current = int(ids.max()) + 1 if current else 0
    cols.append(["*"] * n_leaves)
    return [list(r) for r in zip(*cols, strict=True)]


@st.composite
def random_case(draw: st.DrawFn) -> tuple[Table, list, float]:
    d = draw(st.integers(1, 3))
    n = draw(st.integers(1, 24))
    quasi: dict[str, dict] = {}
    data: dict[str, list] = {}
    for j in range(d):
        if draw(st.booleans()):
            rows = draw(hierarchy_rows(j))
            leaves = [r[0] for r in rows]
            quasi[f"q{j}"] = {"hierarchy": Hierarchy(rows, f"q{j}"), "kind": "categorical"}
            data[f"q{j}"] = draw(st.lists(st.sampled_from(leaves), min_size=n, max_size=n))
        else:
            widths = draw(st.sampled_from([(2,), (2, 4), (3, 6, 12), (4, 8)]))
            quasi[f"q{j}"] = {"kind": "numeric", "widths": widths}
            data[f"q{j}"] = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n))
    data["s"] = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
    subset = draw(st.sampled_from([None, ["a"], ["a", "b"]]))
    if subset is not None:
        subset = [v for v in subset if v in data["s"]] or None
    schema = Schema.build(quasi, "s", sensitive_values=subset)
    table = Table.encode(pd.DataFrame(data), schema)
    pool = [
        KAnonymity(draw(st.integers(1, 4))),
        LDiversity(draw(st.sampled_from([1, 1.5, 2, 3]))),
        DistinctLDiversity(draw(st.integers(1, 3))),
        EntropyLDiversity(draw(st.sampled_from([1, 1.5, 2]))),
        AlphaKAnonymity(draw(st.sampled_from([0.5, 0.67, 1.0])), draw(st.integers(1, 3))),
        MConfidentiality(draw(st.integers(1, 3))),
    ]
    idx = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=2, unique=True))
    suppression = draw(st.sampled_from([0.0, 0.0, 0.1, 0.25]))
    return table, [pool[i] for i in idx], suppression


def brute_force(table: Table, models: list, suppression: float) -> dict[tuple, tuple]:
    """Every node: (satisfies?, violating rows, partition with the suppressed group, rows in
    violating groups)."""
    names = table.qi_names
    heights = [c.hierarchy.height for c in table.qi_columns]
    limit = math.floor(suppression * table.n + 1e-9)
    out = {}
    for node in itertools.product(*(range(h + 1) for h in heights)):
        part = Partition.by_levels(table, dict(zip(names, node, strict=True)))
        ok = np.logical_and.reduce([r.group_ok for r in Release(table, part).check(models)])
        bad_rows = ~ok[part.group]
        violating = int(bad_rows.sum())
        if violating == 0:
            out[node] = (True, 0, part, bad_rows)
            continue
        labels = part.group.astype(np.int64)
        labels[bad_rows] = -1
        sup_part = Partition.from_labels(labels)
        sup_ok = all(r.satisfied for r in Release(table, sup_part).check(models))
        out[node] = (violating <= limit and sup_ok, violating, sup_part, bad_rows)
    return out


def minimal_of(sat: set[tuple]) -> list[tuple]:
    return sorted(
        a
        for a in sat
        if not any(b != a and all(x <= y for x, y in zip(b, a, strict=True)) for b in sat)
    )


def exact_loss(table: Table, node: tuple, suppressed: np.ndarray) -> Fraction:
    """Definition 7 per row from the hierarchy labels (independent of the module)."""
    total = Fraction(0)
    d = table.d
    for j, col in enumerate(table.qi_columns):
        h = col.hierarchy
        leaves = col.leaves(np.arange(col.size))
        labels = np.asarray(h.labels[node[j]], dtype=object)
        domain_labels = labels[leaves].tolist()
        base = col.size
        if base <= 1:
            continue
        for i in range(table.n):
            if suppressed[i]:
                continue
            label = labels[col.leaves(table.qi[i : i + 1, j])[0]]
            total += Fraction(domain_labels.count(label) - 1, base - 1) / d
    return (total + int(suppressed.sum())) / table.n


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_case())
def test_minimal_nodes_match_brute_force(case: tuple[Table, list, float]) -> None:
    table, models, suppression = case
    truth = brute_force(table, models, suppression)
    sat = {node for node, (ok, *_) in truth.items() if ok}
    if not sat:
        with pytest.raises(ParameterError):
            lattice(table, models, suppression=suppression)
        return
    expected = minimal_of(sat)
    strategies = ["two-way", "incognito", "naive"]
    if suppression == 0.0 or math.floor(suppression * table.n + 1e-9) == 0:
        strategies.append("samarati")
    for strategy in strategies:
        found = search_lattice(table, models, suppression=suppression, strategy=strategy)
        if strategy == "samarati":
            h = min(sum(n) for n in expected)
            assert list(found.minimal) == [n for n in expected if sum(n) == h]
        else:
            assert list(found.minimal) == expected, strategy
        # the search's frequency-set evaluations agree with the rows
        for v in found.visits:
            if v.evaluated:
                ok, violating, *_ = truth[v.levels]
                assert (v.satisfied, v.violating) == (ok, violating)
                ref = evaluate_node(table, models, v.levels, suppression=suppression)
                assert (ref.satisfied, ref.groups, ref.violating) == (ok, v.groups, violating)
    # the choice: least Definition 7 loss among the minimal nodes, ties lexicographic
    losses = {node: exact_loss(table, node, truth[node][3]) for node in expected}
    best = min(expected, key=lambda n: (losses[n], n))
    rel = lattice(table, models, suppression=suppression)
    levels = rel.provenance.parameters["levels"]
    assert tuple(levels[c] for c in table.qi_names) == best
    assert rel.provenance.parameters["metric_value"] == pytest.approx(float(losses[best]))
    # the release: satisfies every model (its suppressed group too), partitions the rows,
    # leaves the SA untouched, suppresses within the limit, is deterministic
    assert all(r.satisfied for r in rel.check(models))
    assert rel.partition.n == table.n and rel.partition.sizes.sum() == table.n
    assert rel.partition.same_as(truth[best][2])
    assert np.array_equal(rel.sa_published, table.sa)
    assert rel.provenance.parameters["suppressed_rows"] <= math.floor(suppression * table.n + 1e-9)
    again = lattice(table, models, suppression=suppression)
    assert again.frames()["release"].equals(rel.frames()["release"])
    assert again.provenance == rel.provenance


@settings(max_examples=examples(40), deadline=None)
@given(random_case(), st.sampled_from(["loss", "discernibility", "height"]))
def test_choice_is_first_satisfying_node_of_the_sequence(
    case: tuple[Table, list, float], metric: str
) -> None:
    """Without suppression, the algorithm is the naive algorithm of paper 002 over
    generalization_sequence: it publishes the first node of the sequence that satisfies."""
    table, models, _ = case
    truth = brute_force(table, models, 0.0)
    if not any(ok for ok, *_ in truth.values()):
        return
    seq = generalization_sequence(table, metric)
    assert sorted(seq) == sorted(truth)
    first = next(n for n in seq if truth[n][0])
    assert chosen_node(table, models, metric=metric) == first


def test_lattice_shape_and_indexing() -> None:
    t = table_xvi()
    lat = Lattice.of(t)
    assert lat.heights == (1, 3) and lat.size == 8 and lat.top == (1, 3)
    assert [lat.node(i) for i in range(lat.size)] == [(g, e) for g in range(2) for e in range(4)]
    assert all(lat.index(lat.node(i)) == i for i in range(lat.size))
    with pytest.raises(ParameterError, match="level 4"):
        lat.check_node((0, 4))


# -- real data (skipped without ../shared/data) --------------------------------------------------
@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared data absent")
def test_adult_sample_k5() -> None:
    from kerckhoffs.datasets import load_adult

    df = load_adult(DATA / "adult").head(3000)
    t = Table.encode(df, Schema.from_toml(EXAMPLES / "adult" / "schema.toml"))
    rel = lattice(t, [KAnonymity(5)])
    assert all(r.satisfied for r in rel.check([KAnonymity(5)]))
    levels = rel.provenance.parameters["levels"]
    assert set(levels) == set(t.qi_names)
    assert rel.generalized_cells().shape == (rel.partition.n_groups, 8)


@pytest.mark.parametrize(
    "patch",
    [{}, {"CACHE_CELLS": 0}, {"DENSE_FACTOR": 0, "DENSE_SLACK": 0}, {"KEY_LIMIT": 0}],
    ids=["default", "no-kept-sets", "hashed-keys", "factorized-rows"],
)
def test_strategies_agree_on_demo_data(patch: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 120-node lattice on 600 generated rows: every grouping path of the evaluator and
    every exact strategy find the brute-force minimal nodes."""
    from kerckhoffs.algorithms.lattice import evaluate as module
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    for name, value in patch.items():
        monkeypatch.setattr(module, name, value)
    t = Table.encode(generate_hospital(600, seed=3), hospital_schema(sensitive_subset=True))
    for models, suppression in [
        ([KAnonymity(5)], 0.0),
        ([KAnonymity(4)], 0.02),
        ([LDiversity(2)], 0.0),
        ([KAnonymity(2), LDiversity(2)], 0.01),
    ]:
        truth = brute_force(t, models, suppression)
        expected = minimal_of({n for n, (ok, *_) in truth.items() if ok})
        for strategy in ("two-way", "incognito", "naive"):
            found = search_lattice(t, models, suppression=suppression, strategy=strategy)
            assert list(found.minimal) == expected, (models, suppression, strategy)
