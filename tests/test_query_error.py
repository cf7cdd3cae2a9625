"""Query-workload relative error (spec asap.md 2.14, 6 item 14; minimality.md 3.9 and 7 item
31): hand-computed estimates as exact fractions, a pure-Python oracle on random releases, the
three evaluation methods against each other and against the per-query reference, and the
properties the issue names (exact on the identity release, same seed same workload,
bucketization = generalization on single-point groups)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Hierarchy, Partition, Release, Schema, Scheme, Table
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics import Workload, actual_counts, estimate, query_error
from kerckhoffs.metrics.query_error import (
    predicate_width,
    reference_actual,
    reference_estimate,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
METHODS = ("cube", "dense", "sparse")

# letter: a, b under X; c, d, e under Y (e is in the domain, never in the data)
LETTER = Hierarchy(
    [["a", "X", "*"], ["b", "X", "*"], ["c", "Y", "*"], ["d", "Y", "*"], ["e", "Y", "*"]],
    name="letter",
)
PARENT = {"a": "X", "b": "X", "c": "Y", "d": "Y", "e": "Y"}


def encode(df: pd.DataFrame, sa: str = "s") -> Table:
    quasi = {}
    for name in df.columns:
        if name == sa:
            continue
        if name == "letter":
            quasi[name] = {"kind": "categorical", "hierarchy": LETTER}
        else:
            quasi[name] = {"kind": "numeric"}
    return Table.encode(df, Schema.build(quasi, sa))


def all_methods(release: Release, workload: Workload) -> np.ndarray:
    """Every method and the reference agree; returns the estimates."""
    ref = reference_estimate(release, workload)
    for m in ("auto", *METHODS):
        np.testing.assert_allclose(estimate(release, workload, method=m), ref, rtol=1e-9, atol=1e-9)
    return ref


# -- spec asap.md 6 item 14 --------------------------------------------------------------------
def age_table() -> Table:
    """Ages 20..34, one row each (codes 0..14); SA x on ages 20, 22, 27, 31, else y."""
    ages = list(range(20, 35))
    s = ["x" if a in (20, 22, 27, 31) else "y" for a in ages]
    return encode(pd.DataFrame({"age": ages, "s": s}))


def test_spec_item_14_factor_one_half() -> None:
    table = age_table()
    # group 0 = ages 20..29 (published [20-29], 10 values), group 1 = ages 30..34
    groups = np.array([0] * 10 + [1] * 5)
    rel = Release(table, Partition(groups))
    # age in [25, 34] (codes 5..14), SA in {x} (code 0): group 0 holds 3 x's, factor 5/10;
    # group 1 holds 1 x, factor 5/5
    w = Workload.from_ranges(table, [[0]], [[5]], [[14]], [0], [0])
    assert w.actual.tolist() == [2]  # ages 27 and 31
    est = all_methods(rel, w)
    assert Fraction(est[0]).limit_denominator(100) == 3 * Fraction(5, 10) + 1
    res = query_error(rel, w)
    assert Fraction(res.errors[0]).limit_denominator(100) == Fraction(1, 4)  # |2 - 2.5| / 2
    # the same query with SA in {x, y}: every row of age 25..34 -> Est 10 * 1/2 + 5 = Act
    w2 = Workload.from_ranges(table, [[0]], [[5]], [[14]], [0], [1])
    assert all_methods(rel, w2).tolist() == pytest.approx([10.0])
    assert query_error(rel, w2).errors.tolist() == pytest.approx([0.0])


def test_act_zero_is_refused_and_redrawn() -> None:
    table = age_table()
    with pytest.raises(ParameterError, match="Act = 0"):
        Workload.from_ranges(table, [[0]], [[10]], [[10]], [0], [0])  # age 30 has y only
    # 15 ages and 2 SA values, qd = 1, sel = 0.05: b = ceil(15 * 0.05^(1/2)) = 4 ages, SA 1
    # value; many draws have no row, and none of them is kept
    w = Workload.draw(table, 300, qd=1, selectivity=0.05, seed=3)
    assert w.widths.tolist() == [4] and w.sa_width == 1
    assert w.drawn > w.n_queries == 300
    assert (w.actual > 0).all()
    np.testing.assert_array_equal(w.actual, reference_actual(table, w))


def test_predicate_width_is_anatomys_rule() -> None:
    assert predicate_width(74, 3, 0.05) == int(np.ceil(74 * 0.05**0.25))  # 35
    assert predicate_width(2, 3, 0.05) == 1
    assert predicate_width(100, 0, 0.05) == 5  # exact product, no round-up
    assert predicate_width(7, 8, 1.0) == 7


# -- a pure-Python oracle with exact fractions -------------------------------------------------
def oracle_cover(table: Table, rows: list[int], j: int) -> set[int]:
    """Codes a group publishes on QI j: [min, max] for numeric, every leaf under the LCA."""
    col = table.qi_columns[j]
    codes = [int(table.qi[r, j]) for r in rows]
    if col.name != "letter":
        return set(range(min(codes), max(codes) + 1))
    leaves = [str(col.values[c]) for c in codes]
    if len(set(leaves)) == 1:
        return {codes[0]}
    parents = {PARENT[x] for x in leaves}
    if len(parents) == 1:
        p = parents.pop()
        return {c for c in range(col.size) if PARENT[str(col.values[c])] == p}
    return set(range(col.size))


def oracle(release: Release, w: Workload, i: int) -> Fraction:
    table = release.table
    pub = release.sa_published
    cols = w.columns[i].tolist()
    ranges = [set(range(w.lo[i, k], w.hi[i, k] + 1)) for k in range(w.qd)]
    sa_range = set(range(w.sa_lo[i], w.sa_hi[i] + 1))
    total = Fraction(0)
    for rows in release.partition.groups():
        rows = rows.tolist()
        in_sa = sum(1 for r in rows if pub[r] in sa_range)
        if release.scheme == Scheme.GENERALIZATION:
            f = Fraction(in_sa)
            for k, j in enumerate(cols):
                cover = oracle_cover(table, rows, j)
                f *= Fraction(len(cover & ranges[k]), len(cover))
        else:
            match = sum(
                1 for r in rows if all(table.qi[r, j] in ranges[k] for k, j in enumerate(cols))
            )
            f = Fraction(match * in_sa, len(rows))
        total += f
    return total


@st.composite
def releases(draw: st.DrawFn, max_rows: int = 25) -> Release:
    n = draw(st.integers(1, max_rows))
    ints = st.lists(st.integers(0, 6), min_size=n, max_size=n)
    df = pd.DataFrame(
        {
            "age": draw(ints),
            "letter": draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n)),
            "zip": draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from("pqrs"), min_size=n, max_size=n)),
        }
    )
    table = encode(df)
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    scheme = draw(st.sampled_from([Scheme.GENERALIZATION, Scheme.BUCKETIZATION]))
    sa_pub = table.sa.copy()
    if draw(st.booleans()):  # a MASK-like perturbation of the published SA
        flip = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        sa_pub[flip] = (sa_pub[flip] + 1) % table.n_sa
    return Release(table, Partition.from_labels(labels), scheme, sa_pub)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.integers(0, 3), st.sampled_from([0.05, 0.3, 1.0]), st.integers(0, 99))
def test_estimates_equal_exact_oracle(rel: Release, qd: int, sel: float, seed: int) -> None:
    w = Workload.draw(rel.table, 12, qd=qd, selectivity=sel, seed=seed)
    np.testing.assert_array_equal(w.actual, reference_actual(rel.table, w))
    for m in ("dense", "sparse", "cube"):
        np.testing.assert_array_equal(actual_counts(rel.table, w, method=m), w.actual)
    est = all_methods(rel, w)
    for i in range(w.n_queries):
        assert est[i] == pytest.approx(float(oracle(rel, w, i)), rel=1e-9, abs=1e-9)


# -- properties the issue names ----------------------------------------------------------------
@settings(max_examples=examples(30), deadline=None)
@given(releases(), st.integers(0, 3), st.integers(0, 99))
def test_identity_release_has_zero_error(rel: Release, qd: int, seed: int) -> None:
    table = rel.table
    w = Workload.draw(table, 20, qd=qd, selectivity=0.2, seed=seed)
    for part in (Partition.by_qi(table), Partition(np.arange(table.n, dtype=np.int32))):
        for scheme in Scheme:
            res = query_error(Release(table, part, scheme), w)
            np.testing.assert_allclose(res.errors, 0.0, atol=1e-12)
            assert res.mean == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(releases(), st.integers(1, 3), st.integers(0, 99))
def test_bucketization_equals_generalization_on_point_groups(
    rel: Release, qd: int, seed: int
) -> None:
    """Groups that are single QI points: both estimators read the same published counts
    (here possibly perturbed, so neither need equal Act)."""
    table = rel.table
    part = Partition.by_qi(table)
    w = Workload.draw(table, 20, qd=qd, selectivity=0.2, seed=seed)
    gen = Release(table, part, Scheme.GENERALIZATION, rel.sa_published)
    buc = Release(table, part, Scheme.BUCKETIZATION, rel.sa_published)
    np.testing.assert_allclose(estimate(gen, w), estimate(buc, w), rtol=1e-12, atol=1e-12)


@settings(max_examples=examples(20), deadline=None)
@given(releases(), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_same_seed_same_workload(rel: Release, qd: int, seed: int) -> None:
    a = Workload.draw(rel.table, 30, qd=qd, selectivity=0.1, seed=seed)
    b = Workload.draw(rel.table, 30, qd=qd, selectivity=0.1, seed=seed)
    for name in ("columns", "lo", "hi", "sa_lo", "sa_hi", "actual"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.drawn == b.drawn
    # the columns of a query are distinct and ascending, its ranges b_A wide
    assert (np.diff(a.columns, axis=1) > 0).all()
    np.testing.assert_array_equal(a.hi - a.lo + 1, a.widths[a.columns])
    np.testing.assert_array_equal(a.sa_hi - a.sa_lo + 1, a.sa_width)


def test_query_covering_whole_groups_is_exact() -> None:
    """Cells entirely inside (or outside) the query contribute exactly: Est = Act."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 20, 200),
            "letter": rng.choice(list("abcd"), 200),
            "s": rng.choice(list("pqrs"), 200),
        }
    )
    table = encode(df)
    age = table.qi[:, 0]
    letter_x = np.isin(table.decode_qi(1), ["a", "b"])
    # groups never straddle age 10 or the X / Y split
    labels = (age >= 10) * 2 + letter_x + 4 * (age % 3 == 0)
    rel = Release(table, Partition.from_labels(labels))
    ten = int(np.searchsorted(table.qi_columns[0].values, 10))
    queries = [
        ([[0, 1]], [[0, 0]], [[ten - 1, 1]]),  # age < 10 and letter in X (codes a, b)
        ([[0, 1]], [[ten, 2]], [[table.qi_columns[0].size - 1, 4]]),  # age >= 10, Y
        (
            [[1]],
            [[0]],
            [[1]],
        ),
    ]
    for cols, lo, hi in queries:
        w = Workload.from_ranges(table, cols, lo, hi, [0], [table.n_sa - 1])
        np.testing.assert_allclose(all_methods(rel, w), w.actual, rtol=1e-12)


def test_full_domain_release_uses_the_published_node() -> None:
    """A lattice release publishes the node of its level even when its rows span less of it."""
    from kerckhoffs.algorithms.lattice import release_at

    df = pd.DataFrame({"letter": ["a", "a", "c", "c"], "s": ["p", "q", "p", "q"]})
    table = encode(df)
    rel = release_at(table, {"letter": 1})  # cells X and Y (rows hold only a and c)
    assert list(rel.generalized_cells()["letter"]) == ["X", "Y"]
    # letter = a: group X (2 rows, cover {a, b}) contributes 2 * 1/2
    w = Workload.from_ranges(table, [[0]], [[0]], [[0]], [0], [1])
    assert all_methods(rel, w).tolist() == pytest.approx([1.0])
    # letter in {a, b, c}: X fully (2), Y (cover c, d, e) 2 * 1/3
    w = Workload.from_ranges(table, [[0]], [[0]], [[2]], [0], [1])
    assert all_methods(rel, w).tolist() == pytest.approx([2 + 2 / 3])


def test_mask_release_is_scored_on_published_sa() -> None:
    df = pd.DataFrame({"age": [1, 2, 3, 4], "s": ["p", "p", "q", "q"]})
    table = encode(df)
    pub = np.array([1, 0, 1, 1], dtype=np.int32)  # row 0 p -> q, row 1 unchanged
    rel = Release(table, Partition.single(4), Scheme.GENERALIZATION, pub)
    w = Workload.from_ranges(table, [[0]], [[0]], [[3]], [0], [0])  # SA = p: Act 2
    # published: one p in the group of 4, whole age range -> Est 1
    assert all_methods(rel, w).tolist() == pytest.approx([1.0])
    assert query_error(rel, w).errors.tolist() == pytest.approx([0.5])


def test_release_read_back_from_files(tmp_path: Path) -> None:
    """A bucketized release read back (rows listed by group, SA values re-coded in sorted
    order instead of the SA hierarchy's) gives the in-process estimates; a generalized one
    read back holds only its cells and is refused."""
    from kerckhoffs import Column, Kind, Role
    from kerckhoffs.models import KAnonymity

    sa_h = Hierarchy([["r", "*"], ["p", "*"], ["q", "*"]], name="s")
    schema = Schema(
        (
            Column("age", Role.QUASI, Kind.NUMERIC),
            Column("letter", Role.QUASI, Kind.CATEGORICAL, LETTER),
            Column("s", Role.SENSITIVE, Kind.CATEGORICAL, sa_h),
        )
    )
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 9, 60),
            "letter": rng.choice(list("abcd"), 60),
            "s": rng.choice(list("pqr"), 60),
        }
    )
    table = Table.encode(df, schema)
    assert [str(v) for v in table.sa_column.values] == ["r", "p", "q"]
    part = Partition.from_labels(np.arange(60) % 10)  # 10 groups of 6 rows
    w = Workload.draw(table, 40, qd=2, selectivity=0.3, seed=0)
    bucket = Release(table, part, Scheme.BUCKETIZATION)
    bucket.write(tmp_path / "b", [KAnonymity(2)])
    back = Release.from_published(tmp_path / "b", schema)
    np.testing.assert_allclose(estimate(back, w), estimate(bucket, w), rtol=1e-12)
    np.testing.assert_allclose(reference_estimate(back, w), estimate(bucket, w), rtol=1e-12)
    Release(table, part).write(tmp_path / "g", [KAnonymity(2)])
    with pytest.raises(InputError, match="published cells"):
        estimate(Release.from_published(tmp_path / "g", schema), w)


def test_workload_summary_and_subset() -> None:
    table = age_table()
    rel = Release(table, Partition(np.array([0] * 10 + [1] * 5)))
    w = Workload.draw(table, 50, qd=1, selectivity=0.5, seed=0)
    res = query_error(rel, w)
    assert res.mean == pytest.approx(float(np.mean(res.errors)))
    assert res.median == pytest.approx(float(np.median(res.errors)))
    assert len(w.subset(slice(0, 10))) == 10
    assert "queries=50" in repr(res) and "qd=1" in repr(w)
    # drawn on the table directly
    res2 = query_error(rel, n_queries=50, qd=1, selectivity=0.5, seed=0)
    np.testing.assert_allclose(res2.errors, res.errors)


def test_bad_input() -> None:
    table = age_table()
    with pytest.raises(ParameterError, match="qd"):
        Workload.draw(table, 10, qd=2)
    with pytest.raises(ParameterError, match="selectivity"):
        Workload.draw(table, 10, qd=1, selectivity=0)
    with pytest.raises(ParameterError, match="n_queries"):
        Workload.draw(table, 0)
    with pytest.raises(ParameterError, match="quasi-identifier 'zip'"):
        Workload.draw(table, 10, qd=1, attributes=["zip"])
    with pytest.raises(ParameterError, match="method"):
        Workload.draw(table, 10, qd=1, method="fast")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="query 0"):
        Workload.from_ranges(table, [[0]], [[3]], [[2]], [0], [0])
    with pytest.raises(ParameterError, match="SA range"):
        Workload.from_ranges(table, [[0]], [[0]], [[2]], [0], [5])
    w = Workload.draw(table, 10, qd=1, seed=0)
    other = encode(pd.DataFrame({"age": list(range(21, 36)), "s": ["x", "y"] * 7 + ["x"]}))
    with pytest.raises(InputError, match="workload's table"):
        estimate(Release(other, Partition.single(other.n)), w)


def test_attributes_restrict_the_columns() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 9, 60),
            "zip": rng.integers(0, 5, 60),
            "s": rng.choice(["p", "q"], 60),
        }
    )
    table = encode(df)
    w = Workload.draw(table, 40, qd=1, selectivity=0.5, seed=1, attributes=["zip"])
    assert set(w.columns.ravel().tolist()) == {1}


def test_every_column_set_and_qd_zero() -> None:
    """qd = 0 (an SA-only query) and qd = d both run on every method."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 9, 80),
            "letter": rng.choice(list("abcd"), 80),
            "zip": rng.integers(0, 4, 80),
            "s": rng.choice(list("pqrs"), 80),
        }
    )
    table = encode(df)
    rel = Release(table, Partition.from_labels(rng.integers(0, 7, 80)))
    for qd in (0, 3):
        w = Workload.draw(table, 25, qd=qd, selectivity=0.3, seed=qd)
        all_methods(rel, w)
        combos = {tuple(c) for c in w.columns.tolist()}
        assert len(combos) == 1


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared Adult data absent")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_adult_smoke() -> None:
    from kerckhoffs.algorithms import registry
    from kerckhoffs.datasets import load_adult
    from kerckhoffs.models import KAnonymity

    table = Table.encode(
        load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult" / "schema.toml")
    )
    rel = registry.get("mondrian").run(table, [KAnonymity(50)])
    w = Workload.draw(table, 300, qd=3, selectivity=0.05, seed=0)
    sub = w.subset(slice(0, 40))
    np.testing.assert_array_equal(reference_actual(table, sub), sub.actual)
    np.testing.assert_allclose(estimate(rel, sub), reference_estimate(rel, sub), rtol=1e-9)
    res = query_error(rel, w)
    assert 0.0 < res.median < 10.0 and np.isfinite(res.mean)
    # the identity release answers every query exactly
    assert query_error(Release(table, Partition.by_qi(table)), w).mean == pytest.approx(0.0)


def test_columns_sets_cover_all_pairs() -> None:
    """Over many queries every qd-subset of the QIs appears (uniform choice of columns)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "age": rng.integers(0, 9, 50),
            "letter": rng.choice(list("abcd"), 50),
            "zip": rng.integers(0, 4, 50),
            "s": rng.choice(list("pq"), 50),
        }
    )
    w = Workload.draw(encode(df), 600, qd=2, selectivity=0.5, seed=0)
    seen = {tuple(c) for c in w.columns.tolist()}
    assert seen == set(itertools.combinations(range(3), 2))
