"""The composition (intersection) attack (paper 004 Algorithm 1; spec composition.md 2.8, 3.2,
3.6, 4.1-4.2, 7): the two hospitals' exact vectors, overlapping Mondrian releases of the demo
data (in-process with the oracle locator, and written to disk, read back and located by their
cells), the registered attack with knowledge, and hypothesis properties P2-P5 and P9 against a
per-target Python reference."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.attacks.composition import (
    OverlappingReleases,
    intersect,
    intersection_attack,
    make_subsets,
    max_values,
    overlapping_releases,
    take_rows,
)
from kerckhoffs.attacks.knowledge import Knowledge, NotHaving
from kerckhoffs.attacks.locate import Location, locate
from kerckhoffs.attacks.registry import applicable, get_attack
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import KAnonymity

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCHEMA = ROOT / "examples" / "demo" / "schema.toml"
F = Fraction

# -- spec 4.1: Table 1, the two hospitals ---------------------------------------------------------
H1_AGES = ["<30"] * 4 + ["≥40"] * 4 + ["3*"] * 4
H1_CONDITIONS = ["AIDS", "Heart Disease", "Viral Infection", "Viral Infection"]
H1_CONDITIONS += ["Cancer", "Heart Disease", "Viral Infection", "Viral Infection"]
H1_CONDITIONS += ["Cancer"] * 4
H2_AGES = ["<35"] * 6 + ["≥35"] * 6
H2_CONDITIONS = ["AIDS", "Tuberculosis", "Flu", "Tuberculosis", "Cancer", "Cancer"]
H2_CONDITIONS += ["Cancer", "Cancer", "Cancer", "Tuberculosis"]
H2_CONDITIONS += ["Viral Infection", "Viral Infection"]
QI = ["zip", "age", "nationality"]
K = {"H1": 4, "H2": 6}


def hospital(tmp: Path, name: str, ages: list[str], conditions: list[str]) -> Release:
    """A hospital's 12-row release as the paper prints it, read back as another tool's table."""
    df = pd.DataFrame(
        {"zip": ["130**"] * 12, "age": ages, "nationality": ["*"] * 12, "condition": conditions}
    )
    df.to_csv(tmp / f"{name}.csv", index=False)
    rel = Release.from_published(tmp / f"{name}.csv", Schema.build(QI, "condition"))
    return rel


@pytest.fixture
def hospitals(tmp_path: Path) -> list[Release]:
    return [
        hospital(tmp_path, "H1", H1_AGES, H1_CONDITIONS),
        hospital(tmp_path, "H2", H2_AGES, H2_CONDITIONS),
    ]


def people(ages: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"zip": [13012] * len(ages), "age": ages, "nationality": ["?"] * len(ages)})


def test_alice_is_breached(hospitals: list[Release]) -> None:
    """Spec 4.2: Alice, 28, zip 13012: s_1 = {AIDS, HD, VI}, s_2 = {AIDS, TB, Flu, Cancer},
    S = {AIDS}, drop 2, confidence 100 %, promised anonymity 4 and 6."""
    alice = people([28])
    locs = [locate(r, alice) for r in hospitals]
    inter = intersect(hospitals, locs)
    assert inter.value_sets() == [frozenset({"AIDS"})]
    assert inter.prior.tolist() == [[3, 4]]
    assert inter.drop.tolist() == [2]
    res = intersection_attack(hospitals, locs)
    row = res.tuples.iloc[0]
    assert (row.sa_value, row.posterior, bool(row.breached)) == ("AIDS", 1.0, True)
    assert res.details["presumed_anonymity"] == [4, 6]
    assert res.verdict() == "UNSAFE: 1 of 1 rows disclosed by intersection"


def test_four_person_overlap(hospitals: list[Release]) -> None:
    """Spec 4.2's four-person table and its aggregates, exactly."""
    pop = people([28, 32, 37, 45])
    locs = [locate(r, pop) for r in hospitals]
    res = intersection_attack(hospitals, locs, true_values=["AIDS", "Cancer", "Cancer", "Cancer"])
    t = res.tuples
    inter = intersect(hospitals, locs)
    assert inter.value_sets() == [
        {"AIDS"},
        {"Cancer"},
        {"Cancer"},
        {"Cancer", "Viral Infection"},
    ]
    assert t.ea_0.tolist() == [3, 1, 1, 3] and t.ea_1.tolist() == [4, 4, 3, 3]
    assert t.n_values.tolist() == [1, 1, 1, 2]
    assert t.anonymity_drop.tolist() == [2, 0, 0, 1]
    assert [F(p).limit_denominator() for p in t.posterior] == [1, 1, 1, F(1, 2)]
    assert t.breached.tolist() == [True, True, True, False]  # VP_100%
    d = res.details
    in_vp = (t.anonymity_drop > 0).tolist()
    assert in_vp == [True, False, False, True] and d["vulnerable"] == 2
    assert F(d["vulnerable_share"]) == F(1, 2)
    assert F(d["perfect_breach_share"]) == F(3, 4)
    assert d["breach_by_confidence"]["50%"] == 1.0
    assert F(d["effective_anonymity_after"]) == F(5, 4)
    assert [F(x) for x in d["prior_anonymity"]] == [2, F(7, 2)]
    assert [F(x) for x in d["drop_per_release"]] == [F(3, 4), F(9, 4)]
    assert F(d["anonymity_drop"]) == F(3, 4)
    assert d["partition_size"] == [4.0, 6.0]
    assert F(d["presumed_drop"]) == F(11, 4)
    assert d["truth_in_set"] == 1.0 and d["inconsistent"] == 0
    # the most likely of {Cancer, VI} for the 45-year-old: VI 2/4 * 2/6 > Cancer 1/4 * 3/6
    assert t.sa_value.tolist() == ["AIDS", "Cancer", "Cancer", "Viral Infection"]
    at_half = intersection_attack(hospitals, locs, confidence=0.5)
    assert at_half.tuples.breached.all() and at_half.compromised == 4


def test_targets_missing_from_the_releases_are_not_located(hospitals: list[Release]) -> None:
    """A target no class covers (zip 14000 is outside 130**) learns nothing from the releases
    and is not attacked: the verdict says so instead of a clean SAFE or UNSAFE."""
    pop = pd.concat(
        [people([28, 32]), pd.DataFrame({"zip": [14000], "age": [30], "nationality": ["?"]})]
    )
    locs = [locate(r, pop) for r in hospitals]
    res = intersection_attack(hospitals, locs)
    assert res.tuples.n_values.tolist() == [1, 1, 3]  # {AIDS, Cancer, VI} for the stranger
    assert res.not_located == 1 and res.details["unlocated"] == [1, 1]
    assert res.verdict() == (
        "UNSAFE: 2 of 3 rows disclosed by intersection; 1 of 3 targets not located in some release"
    )
    safe = intersection_attack(hospitals, [locate(r, pop.iloc[[2]]) for r in hospitals])
    # nothing disclosed, but not every target was attacked with every release: never SAFE
    assert not safe.safe and not safe.disclosed and not safe.complete
    assert safe.verdict() == (
        "INCOMPLETE: no row disclosed by intersection for the targets it could place (max "
        "posterior 0.333); 1 of 1 targets not located in some release"
    )
    located = intersection_attack(hospitals, [locate(r, pop.iloc[:2]) for r in hospitals])
    assert located.not_located == 0
    assert located.verdict() == "UNSAFE: 2 of 2 rows disclosed by intersection"


def test_one_release_is_homogeneity_only(hospitals: list[Release]) -> None:
    """P5: with one release the drop is 0 and the perfect breaches are exactly the people in
    homogeneous classes (H1's 3* class: 4-anonymous, yet everyone in it has Cancer)."""
    pop = people([28, 32, 37, 45])
    h1 = hospitals[:1]
    res = intersection_attack(h1, [locate(h1[0], pop)])
    assert res.tuples.anonymity_drop.tolist() == [0, 0, 0, 0]
    assert res.tuples.breached.tolist() == [False, True, True, False]
    assert res.details["vulnerable"] == 0


def test_negative_knowledge_completes_a_breach(hospitals: list[Release]) -> None:
    pop = people([28, 32, 37, 45]).assign(id=["alice", "bob", "carol", "dave"])
    locs = [locate(r, pop) for r in hospitals]
    said = [NotHaving("dave", "Viral Infection"), NotHaving("bob", "Measles")]
    res = intersection_attack(hospitals, locs, not_having=said, ids=pop.id.to_numpy())
    assert res.tuples.breached.tolist() == [True, True, True, True]
    assert res.tuples.sa_value.iloc[3] == "Cancer"
    assert (res.details["not_having_applied"], res.details["not_having_ignored"]) == (1, 1)
    assert res.tuples.id.tolist() == ["alice", "bob", "carol", "dave"]
    # by position when there are no ids; an unknown target is an error
    by_pos = intersection_attack(hospitals, locs, not_having=[NotHaving(3, "Viral Infection")])
    assert by_pos.tuples.breached.all()
    with pytest.raises(InputError, match="id 'eve' is not a population id"):
        intersection_attack(hospitals, locs, not_having=[NotHaving("eve", "Flu")], ids=pop.id)


def test_confidence_thresholds_are_exact() -> None:
    assert [max_values(c) for c in (1.0, 0.5, 1 / 3, 0.25, 0.2, 0.34)] == [1, 2, 3, 4, 5, 2]
    for bad in (0.0, -1.0, 1.5, math.nan):
        with pytest.raises(ParameterError, match="confidence"):
            max_values(bad)


def test_empty_population_gives_nan_shares(hospitals: list[Release]) -> None:
    locs = [locate(r, people([])) for r in hospitals]
    res = intersection_attack(hospitals, locs)
    assert len(res.tuples) == 0 and math.isnan(res.details["perfect_breach_share"])
    assert res.safe


def test_bad_arguments(hospitals: list[Release], tmp_path: Path) -> None:
    pop = people([28])
    locs = [locate(r, pop) for r in hospitals]
    with pytest.raises(ParameterError, match="2 release"):
        intersection_attack(hospitals, locs[:1])
    with pytest.raises(ParameterError, match="at least one release"):
        intersection_attack([], [])
    other = pd.DataFrame({"zip": ["130**"], "age": ["*"], "nationality": ["*"], "x": ["a"]})
    other.to_csv(tmp_path / "o.csv", index=False)
    rel = Release.from_published(tmp_path / "o.csv", Schema.build(QI, "x"))
    with pytest.raises(ParameterError, match="sensitive attribute 'x'"):
        intersection_attack([hospitals[0], rel], [locs[0], locate(rel, pop)])


# -- overlapping Mondrian releases of the demo data ---------------------------------------------
@pytest.fixture(scope="module")
def demo() -> tuple[pd.DataFrame, Table, Schema]:
    schema = Schema.from_toml(DEMO_SCHEMA)
    df = generate_hospital(2000, 1)
    return df, Table.encode(df, schema), schema


def test_demo_mondrian_oracle(demo: tuple[pd.DataFrame, Table, Schema]) -> None:
    _, table, _ = demo
    ov = overlapping_releases(table, 2, 1200, "mondrian", [KAnonymity(5)], seed=0)
    assert [r.provenance.algorithm for r in ov.releases] == ["mondrian", "mondrian"]
    res = intersection_attack(ov.releases, ov.locations(), true_values=ov.true_values())
    d = res.details
    assert d["perfect_breach"] > 0 and d["vulnerable"] > 0
    assert d["truth_in_set"] == 1.0 and d["inconsistent"] == 0  # P2 under the oracle
    assert d["effective_anonymity_after"] < d["effective_anonymity_before"]
    assert not res.safe and res.compromised == d["perfect_breach"]


def test_demo_mondrian_from_disk(demo: tuple[pd.DataFrame, Table, Schema], tmp_path: Path) -> None:
    """Releases written by Release.write, read back with from_published and attacked through
    their published cells (the locator reads [lo-hi], 1302*, Europe ...)."""
    df, table, schema = demo
    ov = overlapping_releases(table, 2, 1500, "mondrian", [KAnonymity(2)], seed=0)
    for j, r in enumerate(ov.releases):
        r.write(tmp_path / f"r{j}", [KAnonymity(2)])
    back = [Release.from_published(tmp_path / f"r{j}") for j in range(2)]
    pop = ov.population()
    locs = [locate(r, pop, schema) for r in back]
    res = intersection_attack(back, locs, true_values=ov.true_values())
    d = res.details
    assert d["perfect_breach"] > 0 and d["truth_in_set"] == 1.0
    assert d["notes"] == []
    # cells cover more than the true class, so the adversary learns at most the oracle's S_i
    oracle = intersect(ov.releases, ov.locations()).value_sets()
    region = intersect(back, locs).value_sets()
    assert all(o <= r for o, r in zip(oracle, region, strict=True))

    # the registered attack: the attacked release, knowledge naming the other one
    voters = df.iloc[ov.overlap].rename(columns={"patient_id": "id"})
    voters.to_csv(tmp_path / "voters.csv", index=False)
    (tmp_path / "k.toml").write_text(
        f'releases = ["r1"]\n[population]\nfile = "voters.csv"\nschema = "{DEMO_SCHEMA}"\n'
    )
    knowledge = Knowledge.from_path(tmp_path / "k.toml")
    verdicts = dict((info.name, why) for info, why in applicable(back[:1], knowledge))
    assert verdicts["intersection"] is None
    via_cli = get_attack("intersection").run(back[:1], knowledge)
    assert via_cli.details["perfect_breach"] == d["perfect_breach"]
    assert via_cli.details["truth_in_set"] == 1.0  # the voters file holds the disease
    assert via_cli.verdict().startswith(f"UNSAFE: {d['perfect_breach']:,} of 1,500 rows")


def test_registered_attack_applies(demo: tuple[pd.DataFrame, Table, Schema]) -> None:
    _, table, _ = demo
    rel = overlapping_releases(table, 1, 500, "mondrian", [KAnonymity(5)], seed=1).releases[0]
    why = dict((i.name, w) for i, w in applicable([rel], Knowledge()))["intersection"]
    assert why is not None and "two releases" in why
    why = dict((i.name, w) for i, w in applicable([rel, rel], Knowledge()))["intersection"]
    assert why is not None and "population" in why
    info = get_attack("intersection")
    with pytest.raises(ParameterError, match="unknown option 'k'"):
        info.run([rel, rel], Knowledge(), k=3)


# -- hypothesis: properties P2-P5 against a per-target reference ----------------------------------
def random_source(seed: int, n: int, n_sa: int) -> Table:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x": rng.integers(0, 6, n), "s": rng.choice([f"v{i}" for i in range(n_sa)], n)}
    )
    return Table.encode(df, Schema.build({"x": {"kind": "numeric"}}, "s"))


def random_overlap(seed: int, n: int, n_rel: int, overlap: int, n_sa: int) -> OverlappingReleases:
    """Random subsets with random partitions (any grouping: the attack does not care how the
    classes were made)."""
    rng = np.random.default_rng(seed + 1)
    source = random_source(seed, n, n_sa)
    subsets, common = make_subsets(n, n_rel, overlap, seed)
    releases = [
        Release(take_rows(source, sub), Partition.from_labels(rng.integers(0, 4, sub.size)))
        for sub in subsets
    ]
    return OverlappingReleases(source, releases, subsets, common)


def reference(releases: list[Release], locations: list[Location]) -> list[set[str]]:
    """Spec 3.2 Algorithm 1, literally: per target, per release, the union of the candidate
    classes' distinct values (the whole release when none), then the intersection."""
    out = []
    for i in range(locations[0].n):
        s: set[str] | None = None
        for rel, loc in zip(releases, locations, strict=True):
            labels = rel.table.decode_sa(rel.sa_published).tolist()
            cands = set(loc.candidates_of(i).tolist())
            rows = [r for r in range(rel.table.n) if not cands or rel.partition.group[r] in cands]
            vals = {str(labels[r]) for r in rows}
            s = vals if s is None else s & vals
        out.append(s or set())
    return out


SETTINGS = settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 40),
    n_rel=st.integers(1, 4),
    n_sa=st.integers(1, 5),
    share=st.floats(0.1, 1.0),
)
def test_oracle_properties(seed: int, n: int, n_rel: int, n_sa: int, share: float) -> None:
    overlap = max(1, int(n * share / 2))
    ov = random_overlap(seed, n, n_rel, overlap, n_sa)
    locs = ov.locations()
    inter = intersect(ov.releases, locs)
    # the reference gives the same sets
    assert [set(s) for s in inter.value_sets()] == reference(ov.releases, locs)
    post = inter.posterior_anonymity
    # P2: posterior <= every prior, drop >= 0, the true value survives, |S_i| >= 1
    assert (post[:, None] <= inter.prior).all() and (inter.drop >= 0).all()
    truth = ov.true_values()
    assert all(t in s for t, s in zip(truth, inter.value_sets(), strict=True))
    assert (post >= 1).all()
    # P3: breach sets shrink as the confidence rises, 100 % counts exactly |S| = 1
    res = {c: intersection_attack(ov.releases, locs, confidence=c) for c in (1.0, 1 / 2, 1 / 3)}
    b1, b2, b3 = (res[c].tuples.breached.to_numpy() for c in (1.0, 1 / 2, 1 / 3))
    assert (b1 <= b2).all() and (b2 <= b3).all()
    assert np.array_equal(b1, post == 1) and np.array_equal(b3, post <= 3)
    vp = res[1.0].tuples.anonymity_drop.to_numpy() > 0
    assert res[1.0].details["vulnerable"] == vp.sum()
    # P4: nested prefixes of the releases only shrink S_i
    prev = None
    for r in range(1, n_rel + 1):
        cur = intersect(ov.releases[:r], locs[:r]).possible
        if prev is not None:
            assert (cur <= prev).all()
        prev = cur
    # P5: one release, no drop; perfect breaches = members of homogeneous classes
    one = intersection_attack(ov.releases[:1], locs[:1])
    assert (one.tuples.anonymity_drop == 0).all()
    rel = ov.releases[0]
    distinct = (rel.histogram().counts > 0).sum(axis=1)
    homogeneous = distinct[locs[0].group] == 1
    assert np.array_equal(one.tuples.breached.to_numpy(), homogeneous)


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(4, 30), n_rel=st.integers(1, 3))
def test_ambiguous_locations_take_the_union(seed: int, n: int, n_rel: int) -> None:
    """[AMB-20] (paper 004 Definition 6; composition.md section 8): several candidate classes ->
    the union of their values; none -> the whole
    release. Random candidate sets (possibly empty) against the reference."""
    ov = random_overlap(seed, n, n_rel, max(1, n // 3), 4)
    rng = np.random.default_rng(seed)
    locs = []
    for rel in ov.releases:
        g = rel.partition.n_groups
        m = ov.overlap.size
        counts = rng.integers(0, min(g, 3) + 1, m)
        who = np.repeat(np.arange(m), counts)
        locs.append(Location.from_pairs(m, who, rng.integers(0, g, who.size)))
    inter = intersect(ov.releases, locs)
    assert [set(s) for s in inter.value_sets()] == reference(ov.releases, locs)
    res = intersection_attack(ov.releases, locs)
    empty = inter.posterior_anonymity == 0
    assert res.details["inconsistent"] == empty.sum()
    assert not res.tuples.breached.to_numpy()[empty].any()
    assert (res.tuples.posterior.to_numpy()[empty] == 0).all()


# -- P9: the subset builder ---------------------------------------------------------------------
@settings(max_examples=examples(50), deadline=None)
@given(
    n=st.integers(1, 300),
    n_rel=st.integers(1, 5),
    frac=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1),
)
def test_make_subsets(n: int, n_rel: int, frac: float, seed: int) -> None:
    overlap = int(n * frac)
    subsets, common = make_subsets(n, n_rel, overlap, seed)
    assert common.size == overlap and np.array_equal(common, np.unique(common))
    chunks = [np.setdiff1d(s, common) for s in subsets]
    for s, c in zip(subsets, chunks, strict=True):
        assert np.isin(common, s).all()
        assert c.size == (n - overlap) // n_rel
        assert np.array_equal(s, np.sort(s))
    everything = np.concatenate(chunks)
    assert np.unique(everything).size == everything.size  # chunks pairwise disjoint
    again, common2 = make_subsets(n, n_rel, overlap, seed)
    assert np.array_equal(common, common2)
    assert all(np.array_equal(a, b) for a, b in zip(subsets, again, strict=True))


def test_make_subsets_with_a_size() -> None:
    subsets, common = make_subsets(45_222, 5, 26_195, 0, size=30_000)
    assert [s.size for s in subsets] == [30_000] * 5 and common.size == 26_195
    with pytest.raises(ParameterError, match="need"):
        make_subsets(100, 3, 50, 0, size=80)
    with pytest.raises(ParameterError, match="larger than the table"):
        make_subsets(10, 2, 11, 0)
