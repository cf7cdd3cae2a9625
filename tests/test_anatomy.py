"""Anatomy: the spec's worked examples as exact vectors (asap.md 2.7, 3.4, 3.6 X3), the
profile-based group creation against the step-by-step greedy, group properties (hypothesis),
seeded determinism, refusals, and a Census smoke run."""

from __future__ import annotations

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
from kerckhoffs.algorithms.anatomy import (
    _schedule_pool,
    _schedule_stepwise,
    anatomy,
    anatomy_groups,
    anatomy_schedule,
    sa_buckets,
)
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, LDiversity
from kerckhoffs.release import Scheme
from partition_sets import T, groups_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def table_of(sa: list[str], qi: list[int] | None = None, **schema_kw: object) -> Table:
    df = pd.DataFrame({"q": qi if qi is not None else list(range(len(sa))), "s": sa})
    return Table.encode(df, Schema.build({"q": {"kind": "numeric"}}, "s", **schema_kw))


def step_reference(counts: list[int], l: int) -> tuple[list[list[int]], list[int]]:  # noqa: E741
    """Spec 2.7's group creation literally: the l fullest buckets, ties by initial size then id."""
    left = dict(enumerate(counts))
    key = {b: (-c, b) for b, c in left.items()}
    groups = []
    while sum(1 for c in left.values() if c) >= l:
        take = sorted((b for b in left if left[b]), key=lambda b: (-left[b], key[b]))[:l]
        for b in take:
            left[b] -= 1
        groups.append(take)
    return groups, sorted(b for b, c in left.items() if c)


# -- worked examples -------------------------------------------------------------------------------
def test_x3_lowest_row_pick_is_deterministic_and_leaks() -> None:
    # spec 3.6 X3: l = 2, rows a < b < c < d with SA X, X, Y, Z: "first tuple" picks give
    # {a, c} = {X, Y} and {b, d} = {X, Z}, whatever the seed
    table = table_of(["X", "X", "Y", "Z"])
    for seed in (0, 1, 2):
        release = anatomy(table, [LDiversity(2)], seed=seed, pick="lowest-row")
        assert groups_of(release.partition.group) == {T(1, 3), T(2, 4)}
    assert release.provenance.parameters == {"l": 2, "pick": "lowest-row"}


def test_pickup_on_mondrian_plus_group_1_is_one_of_two_pairings_at_random() -> None:
    # spec 3.4 (Fig. 5a -> 5b): {t4, t5, t7, t8} = cancer, cancer, gastritis, gastritis, l = 2
    # -> {t4,t8},{t5,t7} (the paper's "possible output") or {t4,t7},{t5,t8}, each with
    # probability 1/2 under the random pick (rows here: t4, t5, t7, t8 = 1, 2, 3, 4)
    table = table_of(["cancer", "cancer", "gastritis", "gastritis"])
    seen = Counter(
        frozenset(groups_of(anatomy(table, [LDiversity(2)], seed=s).partition.group))
        for s in range(400)
    )
    assert set(seen) == {
        frozenset({T(1, 4), T(2, 3)}),
        frozenset({T(1, 3), T(2, 4)}),
    }
    assert min(seen.values()) >= 150  # about 200 each


def test_hilb_plus_plus_group_splits_by_bucket_size_then_sa_order() -> None:
    # spec 3.4 Hilb++: {t5, t6, t7, t8} = cancer, mumps, gastritis, gastritis; gastritis is the
    # largest bucket, cancer precedes mumps -> {t5, t7|t8}, {t6, t8|t7}
    table = table_of(["cancer", "mumps", "gastritis", "gastritis"])
    outs = set()
    for seed in range(40):
        groups = groups_of(anatomy(table, [LDiversity(2)], seed=seed).partition.group)
        assert groups in ({T(1, 3), T(2, 4)}, {T(1, 4), T(2, 3)})
        outs.add(frozenset(groups))
    assert len(outs) == 2
    sched = anatomy_schedule(np.bincount(table.sa), 2)
    labels = table.sa_column.labels.tolist()
    assert [[labels[b] for b in g] for g in sched.members()] == [
        ["gastritis", "cancer"],
        ["gastritis", "mumps"],
    ]


def test_ties_follow_initial_size_not_sa_code() -> None:
    # buckets 0..4 of sizes 2, 1, 1, 2, 2 at l = 3. Ties by SA code would give {0,3,4},{0,1,2}
    # and strand both residues (3 and 4) in the second group; ties by initial size give
    # {0,3,4} twice and residues 1, 2, which go to different groups
    sched = anatomy_schedule(np.array([2, 1, 1, 2, 2]), 3)
    assert sched.members() == [[0, 3, 4], [0, 3, 4]]
    assert sorted(sched.residues().tolist()) == [1, 2]
    bucket = np.repeat(np.arange(5), [2, 1, 1, 2, 2])
    for seed in range(10):
        group = anatomy_groups(bucket, 3, seed=np.random.default_rng(seed))
        assert np.bincount(group).tolist() == [4, 4]


def test_residues_share_a_group_only_when_the_greedy_leaves_no_choice() -> None:
    # sizes 4, 4, 2, 4, 4, 4, 2 at l = 5 (24 rows, 4 groups, 4 residues): the greedy's groups
    # are {0,1,3,4,5} x 3 and {0,1,2,3,6}; the residues 4 and 5 can only join the last group,
    # so one group has 7 = 2l - 3 rows (Theorem 7.1's bound 2l - 1 holds, "l or l + 1" cannot)
    sched = anatomy_schedule(np.array([4, 4, 2, 4, 4, 4, 2]), 5)
    assert [sorted(g) for g in sched.members()] == [[0, 1, 3, 4, 5]] * 3 + [[0, 1, 2, 3, 6]]
    assert sorted(sched.residues().tolist()) == [2, 4, 5, 6]
    bucket = np.repeat(np.arange(7), [4, 4, 2, 4, 4, 4, 2])
    group = anatomy_groups(bucket, 5, seed=np.random.default_rng(0))
    assert sorted(np.bincount(group).tolist()) == [5, 6, 6, 7]
    # fewer groups than residues: 5 distinct values at l = 3 make one group of 5
    assert np.bincount(anatomy_groups(np.arange(5), 3, seed=np.random.default_rng(0))).tolist() == [
        5
    ]


# -- group creation from the profile equals the step-by-step greedy --------------------------------
@st.composite
def profiles(draw: st.DrawFn) -> tuple[list[int], int]:
    l = draw(st.integers(1, 12))  # noqa: E741
    m = draw(st.integers(1, 40))
    shape = draw(st.sampled_from(["uniform", "flat", "skewed"]))
    if shape == "uniform":
        counts = draw(st.lists(st.integers(1, 80), min_size=m, max_size=m))
    elif shape == "flat":
        base = draw(st.integers(1, 60))
        counts = [base + d for d in draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))]
    else:
        counts = draw(st.lists(st.integers(1, 12), min_size=m, max_size=m))
        counts[0] = draw(st.integers(1, 150))
    total, top = sum(counts), max(counts)
    if total < l * top:  # l-eligible: add distinct single-row buckets
        counts += [1] * (l * top - total)
    return counts, l


@settings(max_examples=examples(250), deadline=None)
@given(profiles())
def test_profile_schedule_equals_the_stepwise_greedy(profile: tuple[list[int], int]) -> None:
    counts, l = profile  # noqa: E741
    c = np.array(sorted(counts, reverse=True), dtype=np.int64)
    steps, total = _schedule_stepwise(c, l)
    fast = _schedule_pool(c, l)
    assert fast is not None
    assert fast[1] == total == sum(counts) // l
    assert np.array_equal(fast[0], steps)
    # and both are the spec's greedy
    groups, residues = step_reference(counts, l)
    sched = anatomy_schedule(np.array(counts), l)
    assert [sorted(g) for g in sched.members()] == [sorted(g) for g in groups]
    assert sorted(sched.residues().tolist()) == residues


# -- properties of the released groups -------------------------------------------------------------
@st.composite
def random_tables(draw: st.DrawFn) -> tuple[Table, int]:
    l = draw(st.integers(1, 5))  # noqa: E741
    n = draw(st.integers(1, 80))
    alphabet = draw(st.integers(1, 10))
    sa = draw(st.lists(st.integers(0, alphabet - 1), min_size=n, max_size=n))
    top = max(Counter(sa).values())
    sa += list(range(alphabet, alphabet + max(0, l * top - n)))
    qi = draw(st.lists(st.integers(0, 20), min_size=len(sa), max_size=len(sa)))
    return table_of([f"v{v:02d}" for v in sa], qi), l


def residue_matching_exists(bucket: np.ndarray, l: int) -> bool:  # noqa: E741
    """Can the greedy's residues join distinct groups without their value? (Kuhn matching)"""
    sched = anatomy_schedule(np.bincount(bucket), l)
    members = [set(g) for g in sched.members()]
    res = sched.residues().tolist()
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for g, mem in enumerate(members):
            if res[i] in mem or g in seen:
                continue
            seen.add(g)
            if g not in owner or place(owner[g], seen):
                owner[g] = i
                return True
        return False

    return all(place(i, set()) for i in range(len(res)))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(), st.integers(0, 2**32 - 1))
def test_properties(tab: tuple[Table, int], seed: int) -> None:
    table, l = tab  # noqa: E741
    release = anatomy(table, [LDiversity(l)], seed=seed)
    part = release.partition
    assert release.scheme == Scheme.BUCKETIZATION
    assert part.n == table.n
    assert release.check([LDiversity(l)])[0].satisfied
    hist = release.histogram()
    assert (hist.counts.max(axis=1) == 1).all()  # distinct SA values in every group
    sizes = part.sizes
    assert part.n_groups == table.n // l
    assert sizes.min() >= l and sizes.max() <= max(2 * l - 1, 1)  # Theorem 7.1
    assert int((sizes > l).sum()) <= table.n % l
    if residue_matching_exists(table.sa, l):
        assert set(sizes.tolist()) <= {l, l + 1}  # Xiao & Tao's l or l + 1
    assert np.array_equal(release.sa_published, table.sa)  # SA untouched
    np.testing.assert_array_equal(
        np.sort(table.sa), np.sort(release.sa_published)
    )  # the SA multiset, trivially
    again = anatomy(table, [LDiversity(l)], seed=seed)
    assert np.array_equal(again.partition.group, part.group)  # same seed, same groups
    det = anatomy(table, [LDiversity(l)], seed=seed, pick="lowest-row")
    assert det.check([LDiversity(l)])[0].satisfied
    det_again = anatomy(table, [LDiversity(l)], pick="lowest-row")
    assert np.array_equal(det.partition.group, det_again.partition.group)


def test_different_seeds_give_different_groups() -> None:
    rng = np.random.default_rng(0)
    table = table_of(list(rng.choice(list("abcdef"), 60)))
    a = anatomy(table, [LDiversity(3)], seed=1)
    b = anatomy(table, [LDiversity(3)], seed=2)
    assert not a.partition.same_as(b.partition)
    # but the same bucket composition: group creation reads the SA histogram only
    assert sorted(map(tuple, a.histogram().counts.tolist())) == sorted(
        map(tuple, b.histogram().counts.tolist())
    )


def test_sensitive_subset_in_set_mode_is_one_bucket() -> None:
    sa = ["flu", "hiv", "cancer", "flu", "cold", "cold", "hiv", "flu", "cold", "acne"]
    table = table_of(sa, sensitive_values=["hiv", "cancer"])
    bucket, labels = sa_buckets(table)
    assert len(set(bucket[np.isin(sa, ["hiv", "cancer"])].tolist())) == 1
    assert "sensitive values" in labels[int(bucket[1])]
    release = anatomy(table, [LDiversity(3)], seed=0)
    assert release.check([LDiversity(3)])[0].satisfied
    hist = release.histogram()
    assert (hist.sensitive_count <= 1).all()


# -- refusals ----------------------------------------------------------------------------------
def test_l_ineligible_refusal_names_l_the_value_and_its_count() -> None:
    table = table_of(["flu", "flu", "flu", "cold", "acne", "hiv"])
    with pytest.raises(ParameterError) as err:
        anatomy(table, [LDiversity(3)], seed=0)
    msg = str(err.value)
    assert msg == (
        "anatomy: the table is not l-eligible for l=3: 6 rows < l * S_max = 3 * 3 = 9 "
        "(s 'flu' occurs 3 times)"
    )
    anatomy(table, [LDiversity(2)], seed=0)  # 6 >= 2 * 3


def test_other_refusals() -> None:
    table = table_of(["a", "b", "c", "d"])
    with pytest.raises(ParameterError, match="cannot enforce k-anonymity"):
        anatomy(table, [KAnonymity(2)])
    with pytest.raises(ParameterError, match="needs an l-diversity model"):
        anatomy(table, [])
    with pytest.raises(ParameterError, match="give LDiversity once"):
        anatomy(table, [LDiversity(2), LDiversity(3)])
    with pytest.raises(ParameterError, match="whole number"):
        anatomy(table, [LDiversity(1.5)])
    with pytest.raises(ParameterError, match="pick must be one of random, lowest-row"):
        anatomy(table, [LDiversity(2)], pick="first")


def test_registered() -> None:
    info = get("anatomy")
    assert info.run is anatomy
    assert info.schemes == (Scheme.BUCKETIZATION,)
    assert info.randomized
    assert info.models == ("LDiversity",)


def test_writes_qi_and_sa_tables(tmp_path: Path) -> None:
    table = table_of(["a", "b", "c", "a", "b", "c", "d"], [5, 1, 4, 2, 2, 7, 0])
    release = anatomy(table, [LDiversity(3)], seed=4)
    release.write(tmp_path / "out", [LDiversity(3)], formats=("csv",))
    back = Release.from_published(tmp_path / "out")
    assert back.scheme == Scheme.BUCKETIZATION
    assert Partition.from_labels(back.partition.group).n_groups == 2
    assert back.check([LDiversity(3)])[0].satisfied


# -- real data -------------------------------------------------------------------------------------
@pytest.mark.skipif(not (DATA / "census").is_dir(), reason="no shared data")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_census_l4() -> None:
    from kerckhoffs.datasets import load_census

    table = Table.encode(
        load_census(DATA / "census"), Schema.from_toml(EXAMPLES / "census" / "schema.toml")
    )
    release = anatomy(table, [LDiversity(4)], seed=0)
    assert release.check([LDiversity(4)])[0].satisfied
    assert release.histogram().counts.max() == 1
    sizes = release.partition.sizes
    assert release.partition.n_groups == table.n // 4
    assert set(sizes.tolist()) == {4, 5} and int((sizes == 5).sum()) == table.n % 4
