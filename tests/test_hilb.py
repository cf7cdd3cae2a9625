"""Hilb and its Hilbert curve: the paper's worked examples as exact vectors (spec asap.md 3.4,
3.5, 3.6), a literal transcription of spec 2.5 as oracle (hypothesis), the curve's defining
properties, refusals, and a Census smoke run."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.algorithms.hilb import hilb, hilb_groups, table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import (
    hilbert_bits,
    hilbert_index,
    hilbert_order,
)
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Scheme
from partition_sets import T, groups_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


# -- the Hilbert curve -----------------------------------------------------------------------------
def skilling_scalar(coords: tuple[int, ...], bits: int) -> int:
    """Skilling's AxestoTranspose on one point, Python ints, axis 0 = the last coordinate
    (the module's convention), index bits read most significant first."""
    x = list(reversed(coords))
    n = len(x)
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = 1 << (bits - 1)
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [v ^ t for v in x]
    h = 0
    for b in range(bits - 1, -1, -1):
        for i in range(n):
            h = (h << 1) | ((x[i] >> b) & 1)
    return h


def wikipedia_xy2d(side: int, x: int, y: int) -> int:
    """Wikipedia's xy2d (the spec's 3.4 convention is xy2d(8, y, x))."""
    d = 0
    s = side // 2
    while s > 0:
        rx = 1 if x & s else 0
        ry = 1 if y & s else 0
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        s //= 2
    return d


RUNNING_XY = [(6, 0), (7, 0), (7, 1), (5, 3), (5, 2), (6, 4), (2, 6), (0, 4)]


def test_spec_running_example_hilbert_indices() -> None:
    # spec 3.4: t1..t8 on the 8x8 grid get 20, 21, 22, 28, 29, 36, 50, 58
    got = hilbert_index(np.array(RUNNING_XY), 3)
    assert got.tolist() == [20, 21, 22, 28, 29, 36, 50, 58]
    assert got.dtype == np.uint64


def test_two_dims_is_wikipedia_xy2d_with_swapped_axes() -> None:
    for bits in (1, 2, 3, 4):
        side = 1 << bits
        pts = np.array(list(itertools.product(range(side), repeat=2)))
        got = hilbert_index(pts, bits).tolist()
        assert got == [wikipedia_xy2d(side, int(y), int(x)) for x, y in pts]
    # the curve starts at the origin, steps along the first QI, ends at (0, 2^p - 1)
    pts = np.array(list(itertools.product(range(8), repeat=2)))
    order = pts[np.argsort(hilbert_index(pts, 3))]
    assert order[:3].tolist() == [[0, 0], [1, 0], [1, 1]]
    assert order[-1].tolist() == [0, 7]


@pytest.mark.parametrize(("d", "bits"), [(1, 5), (2, 4), (3, 3), (4, 2), (5, 2), (3, 4)])
def test_curve_visits_every_cell_once_in_unit_steps(d: int, bits: int) -> None:
    grid = np.array(list(itertools.product(range(1 << bits), repeat=d)))
    h = hilbert_index(grid, bits)
    assert sorted(h.tolist()) == list(range(1 << (d * bits)))
    walk = grid[np.argsort(h)]
    assert (np.abs(np.diff(walk, axis=0)).sum(axis=1) == 1).all()
    assert (walk[0] == 0).all()
    if d == 1:
        assert h.tolist() == grid[:, 0].tolist()


@pytest.mark.parametrize(("d", "bits"), [(3, 7), (7, 7), (5, 20), (9, 9), (4, 40)])
def test_index_matches_scalar_reference_including_multiword(d: int, bits: int) -> None:
    rng = np.random.default_rng(d * 100 + bits)
    pts = rng.integers(0, 1 << bits, size=(300, d))
    h = hilbert_index(pts, bits)
    if d * bits <= 64:
        assert h.ndim == 1
        got = [int(v) for v in h.tolist()]
    else:
        words = h.shape[1]
        assert words == (d * bits + 63) // 64
        got = [
            sum(int(w) << (64 * (words - 1 - j)) for j, w in enumerate(row)) for row in h.tolist()
        ]
    want = [skilling_scalar(tuple(int(v) for v in p), bits) for p in pts]
    assert got == want
    order = hilbert_order(pts, bits)
    assert [want[i] for i in order] == sorted(want)


def test_order_breaks_ties_by_row_id_and_bits() -> None:
    pts = np.array([[3, 1], [0, 0], [3, 1], [0, 0], [1, 0]])
    assert hilbert_order(pts, 2).tolist() == [1, 3, 4, 0, 2]
    assert hilbert_order(index=np.array([5, 1, 5, 1])).tolist() == [1, 3, 0, 2]
    assert hilbert_bits([76, 2, 17]) == 7
    assert hilbert_bits([64]) == 6
    assert hilbert_bits([1]) == 1
    with pytest.raises(ValueError, match="fit in 2 bits"):
        hilbert_index(np.array([[4, 0]]), 2)
    with pytest.raises(ValueError, match="non-negative"):
        hilbert_index(np.array([[-1, 0]]), 2)


# -- Hilb on the paper's examples ------------------------------------------------------------------
DISEASES = [
    "AIDS",
    "diabetes",
    "heart disease",
    "cancer",
    "cancer",
    "mumps",
    "gastritis",
    "gastritis",
]


def grid_table(sa: list[str]) -> Table:
    """The running example with both axes over the code domain 0..7 (codes = coordinates)."""
    axis = Hierarchy.flat(range(8), name="0..7", keep_order=True)
    df = pd.DataFrame({"x": [x for x, _ in RUNNING_XY], "y": [y for _, y in RUNNING_XY], "s": sa})
    quasi = {
        "x": {"kind": "categorical", "hierarchy": axis},
        "y": {"kind": "categorical", "hierarchy": axis},
    }
    return Table.encode(df, Schema.build(quasi, "s"))


def test_running_example_hilb_l2() -> None:
    # spec 3.4 / Fig. 3a: {t1,t2}, {t3,t4} greedy; {t5,t7} by roll-back; {t6,t8}
    table = grid_table(DISEASES)
    assert table_hilbert_index(table).tolist() == [20, 21, 22, 28, 29, 36, 50, 58]
    release = hilb(table, [LDiversity(2)])
    assert groups_of(release.partition.group) == {T(1, 2), T(3, 4), T(5, 7), T(6, 8)}
    assert release.scheme == Scheme.GENERALIZATION
    assert release.provenance.parameters == {"l": 2, "bits": 3}
    assert release.check([LDiversity(2)])[0].satisfied
    # with Q_T(t_i) = i given directly: same groups, emitted in this order, the third rolled back
    result = hilb_groups(table.sa, np.arange(8), 2)
    assert result.group.tolist() == [0, 0, 1, 1, 2, 3, 2, 3]
    assert result.rolled_back.tolist() == [False, False, True, False]
    given_index = hilb(table, [LDiversity(2)], hilbert_index=np.arange(8))
    assert given_index.partition.same_as(release.partition)
    assert given_index.provenance.parameters == {"l": 2, "hilbert_index": "given"}


def test_running_example_with_rank_codes_follows_its_own_curve() -> None:
    # numeric QIs encode to ranks (x: 0,2,5,6,7 -> 0..4): another grid, still 2-diverse
    df = pd.DataFrame({"x": [x for x, _ in RUNNING_XY], "y": [y for _, y in RUNNING_XY]})
    table = Table.encode(
        df.assign(s=DISEASES), Schema.build({"x": {"kind": "numeric"}, "y": {}}, "s")
    )
    release = hilb(table, [LDiversity(2)])
    assert release.check([LDiversity(2)])[0].satisfied
    q = table_hilbert_index(table)
    order = hilbert_order(index=q)
    assert release.partition.same_as(Partition(hilb_groups(table.sa, order, 2).group))


def test_figure_8_reconstruction() -> None:
    # spec 3.5: Q_T(t_i) = i; groups {t1,t3}, {t2,t4} greedy, {t5,t7} roll-back, {t6,t8}
    sa = ["gastritis", "gastritis", "heart disease", "diabetes", "cancer", "mumps", "AIDS", "AIDS"]
    table = grid_table(sa)
    result = hilb_groups(table.sa, np.arange(8), 2)
    assert groups_of(result.group) == {T(1, 3), T(2, 4), T(5, 7), T(6, 8)}
    assert result.group.tolist() == [0, 1, 0, 1, 2, 3, 2, 3]
    assert result.rolled_back.tolist() == [False, False, True, False]
    release = hilb(table, [LDiversity(2)], hilbert_index=np.arange(8) * 10)
    assert groups_of(release.partition.group) == {T(1, 3), T(2, 4), T(5, 7), T(6, 8)}


def test_x2_hilb_on_aabcbc() -> None:
    # spec 3.6 X2: l = 2, SA in Q_T order A, A, B, C, B, C -> {t1,t3}, {t2,t4}, {t5,t6}
    result = hilb_groups(np.array([0, 0, 1, 2, 1, 2]), np.arange(6), 2)
    assert groups_of(result.group) == {T(1, 3), T(2, 4), T(5, 6)}
    assert not result.rolled_back.any()


def test_greedy_grows_s_and_roll_back_takes_the_fullest_buckets() -> None:
    # Q_T order A A B B C, l = 2: {A, B} leaves A B C (3 >= 2); then s = 2 leaves {C}
    # (1 < 2), s = 3 takes the whole rest {A, B, C} as one greedy group
    result = hilb_groups(np.array([0, 0, 1, 1, 2]), np.arange(5), 2)
    assert groups_of(result.group) == {T(1, 3), T(2, 4, 5)}
    assert not result.rolled_back.any()
    # Q_T order A B C C: {A,B} leaves C C (2 < 4), {A,B,C} leaves C (1 < 2), frontier
    # exhausted -> roll-back: C is fullest, A and B tie -> lowest head A: {t1, t3}
    result = hilb_groups(np.array([0, 1, 2, 2]), np.arange(4), 2)
    assert result.group.tolist() == [0, 1, 0, 1]
    assert result.rolled_back.tolist() == [True, False]


# -- the literal transcription of spec 2.5 as oracle -----------------------------------------------
def hilb_reference(sa: list[int], qt: list[int], l: int) -> tuple[list[list[int]], list[bool]]:  # noqa: E741
    """Spec 2.5 line by line, with sets and S_max recomputed from scratch every time."""
    order = sorted(range(len(sa)), key=lambda i: (qt[i], i))
    pos = {row: p for p, row in enumerate(order)}

    def smax(rows: list[int]) -> int:
        return max(Counter(sa[i] for i in rows).values(), default=0)

    remaining = list(order)
    out: list[list[int]] = []
    flags: list[bool] = []
    while remaining:
        buckets: dict[int, list[int]] = {}
        for row in remaining:
            buckets.setdefault(sa[row], []).append(row)
        frontier = sorted((b[0] for b in buckets.values()), key=pos.__getitem__)
        emitted = None
        s = l
        while not (s > len(frontier) or s > len(buckets)):
            g1 = frontier[:s]
            rest = [r for r in remaining if r not in g1]
            if len(remaining) - s >= l * smax(rest):
                emitted = g1
                break
            s += 1
        rolled = emitted is None
        if emitted is None:
            s = l
            while True:
                fullest = sorted(buckets.values(), key=lambda b: (-len(b), pos[b[0]]))[:s]
                g1 = [b[0] for b in fullest]
                rest = [r for r in remaining if r not in g1]
                if len(remaining) - s >= l * smax(rest):
                    emitted = g1
                    break
                s += 1
                assert s <= len(buckets)
        out.append(sorted(emitted))
        flags.append(rolled)
        remaining = [r for r in remaining if r not in emitted]
    return out, flags


@st.composite
def hilb_inputs(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    l = draw(st.integers(1, 4))  # noqa: E741
    n = draw(st.integers(1, 40))
    alphabet = draw(st.integers(1, 7))
    sa = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    qt = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n))
    smax = max(Counter(sa).values())
    if n < l * smax:  # make it l-eligible by adding distinct fresh values
        extra = l * smax - n
        sa += list(range(alphabet, alphabet + extra))
        qt += draw(st.lists(st.integers(0, 15), min_size=extra, max_size=extra))
    return sa, qt, l


@settings(max_examples=examples(400), deadline=None)
@given(hilb_inputs())
def test_matches_the_literal_spec(inputs: tuple[list[int], list[int], int]) -> None:
    sa, qt, l = inputs  # noqa: E741
    order = hilbert_order(index=np.asarray(qt))
    result = hilb_groups(np.asarray(sa), order, l)
    got = [sorted(np.flatnonzero(result.group == g).tolist()) for g in range(result.n_groups)]
    want, flags = hilb_reference(sa, qt, l)
    assert got == want
    assert result.rolled_back.tolist() == flags


# -- properties on tables --------------------------------------------------------------------------
@st.composite
def random_tables(draw: st.DrawFn) -> tuple[Table, int]:
    l = draw(st.integers(1, 4))  # noqa: E741
    n = draw(st.integers(1, 60))
    alphabet = draw(st.integers(1, 8))
    sa = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    smax = max(Counter(sa).values())
    sa += list(range(alphabet, alphabet + max(0, l * smax - n)))
    m = len(sa)
    cols = {
        f"q{j}": draw(st.lists(st.integers(0, draw(st.integers(0, 30))), min_size=m, max_size=m))
        for j in range(draw(st.integers(1, 4)))
    }
    df = pd.DataFrame({**cols, "s": [f"v{v}" for v in sa]})
    schema = Schema.build({c: {"kind": "numeric"} for c in cols}, "s")
    return Table.encode(df, schema), l


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables())
def test_properties(tab: tuple[Table, int]) -> None:
    table, l = tab  # noqa: E741
    release = hilb(table, [LDiversity(l)])
    part = release.partition
    assert part.n == table.n and part.sizes.min() >= 1
    assert part.same_as(Partition.from_labels(part.group))
    assert release.check([LDiversity(l)])[0].satisfied
    hist = release.histogram()
    assert (hist.counts.max(axis=1) == 1).all()  # every group's SA values are distinct
    assert (part.sizes >= l).all()
    assert np.array_equal(release.sa_published, table.sa)  # SA untouched
    again = hilb(table, [LDiversity(l)], seed=7)
    assert np.array_equal(again.partition.group, part.group)  # deterministic; seed unused


def test_independent_of_row_order_when_qi_vectors_differ() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "a": rng.permutation(60),
            "b": rng.integers(0, 9, 60),
            "s": rng.choice(list("pqrstu"), 60),
        }
    )
    schema = Schema.build({"a": {"kind": "numeric"}, "b": {"kind": "numeric"}}, "s")
    base = hilb(Table.encode(df, schema), [LDiversity(3)])
    perm = rng.permutation(60)
    shuffled = hilb(Table.encode(df.iloc[perm].reset_index(drop=True), schema), [LDiversity(3)])
    back = np.empty(60, dtype=np.int32)
    back[perm] = shuffled.partition.group
    assert Partition(back).same_as(base.partition)


def test_sensitive_subset_in_set_mode_counts_as_one_value() -> None:
    rng = np.random.default_rng(5)
    sa = list(rng.choice(["flu", "cold", "acne", "hiv", "cancer", "mumps"], 90))
    df = pd.DataFrame({"a": rng.integers(0, 30, 90), "b": rng.integers(0, 5, 90), "s": sa})
    schema = Schema.build(
        {"a": {"kind": "numeric"}, "b": {"kind": "numeric"}},
        "s",
        sensitive_values=["hiv", "cancer"],
    )
    release = hilb(Table.encode(df, schema), [LDiversity(3)])
    assert release.check([LDiversity(3)])[0].satisfied
    assert (release.histogram().sensitive_count <= 1).all()


# -- refusals -------------------------------------------------------------------------------------
def test_refusals_are_one_line() -> None:
    table = grid_table(DISEASES)  # S_max = 2, n = 8
    with pytest.raises(ParameterError) as err:
        hilb(table, [LDiversity(5)])
    msg = str(err.value)
    assert "\n" not in msg
    assert "l=5" in msg and "'cancer'" in msg and "2 times" in msg and "8 rows" in msg
    with pytest.raises(ParameterError, match="cannot enforce k-anonymity"):
        hilb(table, [LDiversity(2), KAnonymity(2)])
    with pytest.raises(ParameterError, match="needs an l-diversity model"):
        hilb(table, [])
    with pytest.raises(ParameterError, match="whole number"):
        hilb(table, [LDiversity(2.5)])
    with pytest.raises(ParameterError, match="3 values for 8 rows"):
        hilb(table, [LDiversity(2)], hilbert_index=np.arange(3))
    with pytest.raises(ParameterError, match="bits=2 is too few"):
        hilb(table, [LDiversity(2)], bits=2)


def test_registered() -> None:
    info = get("hilb")
    assert info.run is hilb
    assert info.models == ("LDiversity",)
    assert info.schemes == (Scheme.GENERALIZATION, Scheme.BUCKETIZATION)
    assert not info.randomized
    table = grid_table(DISEASES)
    gen = hilb(table, [LDiversity(2)])
    bucket = hilb(table, [LDiversity(2)], scheme="bucketization")
    assert bucket.scheme == Scheme.BUCKETIZATION and gen.scheme == Scheme.GENERALIZATION
    assert bucket.partition.same_as(gen.partition)  # the scheme changes the files, not groups
    with pytest.raises(ParameterError, match="scheme must be one of"):
        hilb(table, [LDiversity(2)], scheme="suppression")


def test_release_writes_and_reads_back(tmp_path: Path) -> None:
    release = hilb(grid_table(DISEASES), [LDiversity(2)])
    release.write(tmp_path / "out", [LDiversity(2)], formats=("csv",))
    back = Release.from_published(tmp_path / "out")
    assert back.partition.n_groups == 4
    assert back.check([LDiversity(2)])[0].satisfied


# -- real data -------------------------------------------------------------------------------------
@pytest.mark.skipif(not (DATA / "census").is_dir(), reason="no shared data")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_census_l4() -> None:
    from kerckhoffs.datasets import load_census

    table = Table.encode(
        load_census(DATA / "census"), Schema.from_toml(EXAMPLES / "census" / "schema.toml")
    )
    assert table.n == 148_318
    release = hilb(table, [LDiversity(4)])
    assert release.check([LDiversity(4)])[0].satisfied
    assert release.histogram().counts.max() == 1
    sizes = release.partition.sizes
    assert sizes.min() >= 4 and release.partition.n_groups >= 36_000
