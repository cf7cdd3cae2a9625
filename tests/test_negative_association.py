"""The negative-association (PhD-25) attack on MASK (paper 000 section 8.2.1; spec asap.md 2.13
and 3.2): the Table 2 vector exactly, soundness of the posterior bound against the original
data (hypothesis), no breach on MASK+ / MASK++, the PhD-25 attack on Adult, releases read back
from files, refusals."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.algorithms.registry import get
from kerckhoffs.attacks.knowledge import DistributionRule, Knowledge
from kerckhoffs.attacks.negative_association import (
    negative_association_attack,
    rule_flags,
)
from kerckhoffs.attacks.registry import get_attack
from kerckhoffs.data.cells import numeric_cell
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import KAnonymity, MConfidentiality
from kerckhoffs.release import Provenance, Scheme

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


# -- Table 2 / Table 4 (spec 3.2) ------------------------------------------------------------------
def table_2(published: list[str]) -> Release:
    df = pd.DataFrame(
        {
            "age": [46, 49, 32, 35, 24, 38, 25, 37],
            "sex": list("FFFFFFMM"),
            "country": ["Mexico"] * 4 + ["Japan"] * 4,
            "disease": ["cancer", "heart disease", "heart disease"] + ["AIDS"] * 5,
        }
    )
    schema = Schema.build(
        {"age": {"kind": "numeric"}, "sex": {}, "country": {}},
        "disease",
        sensitive_values={"AIDS"},
    )
    t = Table.encode(df, schema)
    labels = [str(x) for x in t.sa_column.labels.tolist()]
    pub = np.array([labels.index(v) for v in published], dtype=t.sa.dtype)
    part = Partition(np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    return Release(t, part, sa_published=pub, provenance=Provenance("mask", {"k": 4, "m": 2}))


TABLE_2C = ["cancer", "heart disease", "heart disease", "AIDS"]
TABLE_2C += ["cancer", "cancer", "heart disease", "AIDS"]
JAPAN_RARELY_HEART = DistributionRule({"country": ["Japan"]}, "heart disease", 0.05)


def test_table_2_tom_has_aids_with_probability_at_least_three_quarters() -> None:
    # Sam: MASK only perturbs violating groups, so the Japan group had >= 3 AIDS: Pr >= 3/4
    result = negative_association_attack(table_2(TABLE_2C), [JAPAN_RARELY_HEART])
    t = result.tuples
    assert t["row"].tolist() == [4, 5, 6, 7]
    assert set(t["sa_value"]) == {"AIDS"}
    assert all(Fraction(p).limit_denominator(100) == Fraction(3, 4) for p in t["posterior"])
    assert t["breached"].all() and t["perturbed"].all()
    assert result.details["precision"] == 1.0 and result.details["recall"] == 1.0
    assert result.verdict() == "UNSAFE: 4 of 8 rows disclosed by negative-association"
    # a second rule ("Japanese rarely have cancer") pins it: both fake cancers were AIDS
    both = [JAPAN_RARELY_HEART, DistributionRule({"country": ["Japan"]}, "cancer", 0.0)]
    assert (negative_association_attack(table_2(TABLE_2C), both).tuples["posterior"] == 1).all()


def test_unflagged_and_outside_groups() -> None:
    release = table_2(TABLE_2C)
    # the Mexico group publishes 2 heart diseases of 4 but is not inside "country = Japan"
    assert not rule_flags(release, [JAPAN_RARELY_HEART])[0][0]
    # a generous rule flags nothing
    lax = DistributionRule({"country": ["Japan"]}, "heart disease", 0.25)
    assert negative_association_attack(release, [lax]).tuples.empty
    # numeric ranges: the Japan cell is [24-38]; "age <= 38" covers it, "age <= 37" does not
    for hi, hit in ((38, True), (37, False)):
        rule = DistributionRule({"age": {"max": hi}}, "heart disease", 0.05)
        assert bool(rule_flags(release, [rule])[0][1]) is hit


def test_cell_ranges() -> None:
    """The rule's "inside" test reads cells with the shared reader (kerckhoffs.data.cells):
    an ARX half-open interval ``[20, 30[`` excludes 30, so a rule "age <= 29.99" holds on it."""
    assert numeric_cell("[17-25]") == (17, 25)
    assert numeric_cell("[-5--1]") == (-5, -1)
    lo, hi = numeric_cell("[20, 30[")  # type: ignore[misc]
    assert lo == 20 and 29.999 < hi < 30
    assert numeric_cell("25") == (25, 25)
    assert numeric_cell("<=25") == (-np.inf, 25)
    assert numeric_cell("*") == (-np.inf, np.inf)
    assert numeric_cell("Japan") is None


# -- random MASK releases with rules that hold ----------------------------------------------------
def random_mask(
    seed: int, mode: str, algorithm: str = "mask", scheme: str = "generalization"
) -> tuple[Release, DistributionRule, int]:
    """A random 150-300 row table (age, c; SA over six letters, A frequent among the young, F
    held by nobody under 30), a MASK-family release of it, and the true rule "nobody aged
    29 or less has F" (the PhD-25 setting)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 301))
    age = rng.integers(17, 50, size=n)
    young = age < 30
    s = np.where(
        young,
        rng.choice(list("ABCDE"), size=n, p=[0.4, 0.15, 0.15, 0.15, 0.15]),
        rng.choice(list("ABCDEF"), size=n, p=[0.1, 0.15, 0.15, 0.2, 0.2, 0.2]),
    )
    s[:2] = ["F", "A"]
    age[0] = 45  # F and A occur
    df = pd.DataFrame({"age": age, "c": rng.choice(list("pqr"), size=n), "s": s})
    sens = {"set": ["A"], "each": ["A", "B"], "all": None}[mode]
    schema = Schema.build(
        {"age": {"kind": "numeric"}, "c": {}},
        "s",
        sensitive_values=sens,
        sensitive_mode="each" if mode == "each" else "set",
    )
    table = Table.encode(df, schema)
    k = int(rng.integers(4, 9))
    m = int(rng.integers(2, 4))
    opts = {"replacement": "uniform"} if algorithm == "mask" else {}
    release = get(algorithm).run(
        table, [KAnonymity(k), MConfidentiality(m)], seed=seed, scheme=scheme, **opts
    )
    return release, DistributionRule({"age": {"max": 29}}, "F", 0.0), m


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    mode=st.sampled_from(["set", "each", "all"]),
    scheme=st.sampled_from(["generalization", "bucketization"]),
)
def test_mask_bound_is_sound_and_flags_only_perturbed_groups(
    seed: int, mode: str, scheme: str
) -> None:
    try:
        release, rule, m = random_mask(seed, mode, "mask", scheme)
    except ParameterError:
        return  # MASK cannot publish this table with these k and m
    result = negative_association_attack(release, [rule])
    t = result.tuples
    if t.empty:
        return
    assert t["perturbed"].all()  # no false positive when the rule is true
    assert result.details["precision"] == 1.0
    table = release.table
    labels = [str(x) for x in table.sa_column.labels.tolist()]
    for g in np.unique(t["group"]):
        rows = release.partition.group == g
        mine = t[t["group"] == g]
        p = float(mine["posterior"].iloc[0])
        value = str(mine["sa_value"].iloc[0])
        if value.startswith("one of "):  # several sets could have violated: union bound
            assert not mine["breached"].any()
            members = [labels.index(x) for x in value.removeprefix("one of ").split("|")]
        else:
            members = [labels.index(x) for x in value.split("|")]
            assert mine["breached"].all() and p * m > 1
        true_share = np.isin(table.sa[rows], members).mean()
        assert p <= true_share + 1e-12  # a lower bound on the original share


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    mode=st.sampled_from(["set", "each", "all"]),
    algorithm=st.sampled_from(["mask+", "mask++"]),
)
def test_mask_plus_flags_carry_no_breach(seed: int, mode: str, algorithm: str) -> None:
    try:
        release, rule, m = random_mask(seed, mode, algorithm)
    except ParameterError:
        return
    result = negative_association_attack(release, [rule])
    assert result.safe
    assert (result.tuples["posterior"] * m <= 1 + 1e-12).all()
    assert result.tuples["perturbed"].all()
    if not result.tuples.empty:
        assert "Theorem 5.4" in result.details["reason"]


# -- files, registry, refusals --------------------------------------------------------------------
def test_release_read_back_from_files(tmp_path: Path) -> None:
    release, rule, m = random_mask(7, "set")
    direct = negative_association_attack(release, [rule])
    for scheme in ("generalization", "bucketization"):
        r = Release(
            release.table,
            release.partition,
            Scheme(scheme),
            release.sa_published,
            release.provenance,
        )
        r.write(tmp_path / scheme, [MConfidentiality(m)], formats=("csv",))
        back = Release.from_published(tmp_path / scheme)
        res = negative_association_attack(back, [rule])
        assert "precision" not in res.details  # no ground truth in files
        assert res.details["flagged_groups"] == direct.details["flagged_groups"]
        assert sorted(res.tuples["posterior"]) == sorted(direct.tuples["posterior"])


def test_registered_and_applies() -> None:
    info = get_attack("negative-association")
    release = table_2(TABLE_2C)
    knowledge = Knowledge(rules=[JAPAN_RARELY_HEART])
    assert info.applies([release], knowledge) is None
    assert "needs a rule" in info.applies([release], Knowledge())
    assert "one release" in info.applies([release, release], knowledge)
    other = Release(release.table, release.partition, provenance=Provenance("mondrian"))
    assert "not by MASK" in info.applies([other], knowledge)
    assert info.run([release], knowledge).compromised == 4
    with pytest.raises(ParameterError, match="unknown option 'l'"):
        info.run([release], knowledge, l=2)


def test_refusals_are_one_line() -> None:
    release = table_2(TABLE_2C)
    bad = [
        ([], "at least one rule"),
        ([DistributionRule({"zip": ["1"]}, "cancer", 0.1)], "column 'zip'"),
        ([DistributionRule({"sex": ["F"]}, "flu", 0.1)], "value 'flu'"),
        ([DistributionRule({"sex": ["F"]}, "cancer", 1.5)], "share"),
    ]
    for rules, match in bad:
        with pytest.raises(ParameterError, match=match) as exc:
            negative_association_attack(release, rules)
        assert "\n" not in str(exc.value)
    no_m = Release(release.table, release.partition, provenance=Provenance("mask"))
    with pytest.raises(ParameterError, match="m must be"):
        negative_association_attack(no_m, [JAPAN_RARELY_HEART])
    bucketized, _, _ = random_mask(7, "set", scheme="bucketization")
    with pytest.raises(ParameterError, match="column 'c' a numeric range"):
        negative_association_attack(bucketized, [DistributionRule({"c": {"max": 3}}, "F", 0.1)])


# -- PhD-25 on Adult (paper 000 Figure 6) ---------------------------------------------------------
@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no Adult data")
def test_phd_25_on_adult() -> None:
    from kerckhoffs.datasets import load_adult

    schema = Schema.from_toml(EXAMPLES / "adult" / "schema.toml")
    table = Table.encode(load_adult(DATA / "adult"), schema)
    phd25 = DistributionRule({"age": {"max": 25}}, "Doctorate", 0.1)
    models = [KAnonymity(5), MConfidentiality(3)]
    release = get("mask").run(table, models, seed=1, replacement="uniform")
    result = negative_association_attack(release, [phd25])
    assert result.compromised > 0
    assert result.details["precision"] == 1.0  # paper 000: never a false positive
    assert (result.tuples["posterior"] > 1 / 3).all()
    assert set(result.tuples["sa_value"]) == {"Preschool|1st-4th|5th-6th|7th-8th"}
    plus = negative_association_attack(get("mask+").run(table, models, seed=1), [phd25])
    assert plus.safe
