"""An audit's verdict is a claim: SAFE only when every attack that applies ran on all of its
input and every piece of knowledge given was taken into account (the CLI's faults are in
``faults_audit.py``)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kerckhoffs as kh
from kerckhoffs.api import AuditReport
from kerckhoffs.attacks import register_all
from kerckhoffs.attacks.knowledge import Coalition, DistributionRule, Knowledge, NotHaving
from kerckhoffs.attacks.negative_association import negative_association_attack
from kerckhoffs.attacks.registry import ATTACKS, KNOWLEDGE_KINDS
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError

QI = ["age", "sex", "zip"]
RULE = DistributionRule({"age": {"max": 25}}, "Flu", 0.1)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return generate_hospital(300, seed=0)


@pytest.fixture(scope="module")
def mondrian(df: pd.DataFrame) -> kh.Release:
    """k=3 and l=2: no group is homogeneous, so intersecting it with itself discloses nothing."""
    return kh.anonymize(
        df, quasi=QI, sensitive="disease", algorithm="mondrian", models=["k=3", "l=2"]
    )


def _result(disclosed: bool, located: bool, gap: bool) -> AttackResult:
    tuples = tuple_table(np.arange(3), ["a", "b", "c"], [0.2, 1.0 if disclosed else 0.2, 0.2],
                         [False, disclosed, False])  # fmt: skip
    return AttackResult("x", tuples, 3, 0.5, not_located=0 if located else 1,
                        gaps=["rule[0] not tested on 1 group"] if gap else [])  # fmt: skip


def test_the_verdict_follows_its_definition() -> None:
    """Every combination of what one attack found and what was left out, against the
    definition: UNSAFE when a row is disclosed; else SAFE only when something ran and nothing
    was left out; else INCOMPLETE (also when nothing ran to the end because an attack that
    applies could not run), or NO VERDICT when no attack applies."""
    for ran, disclosed, located, gap, failed, unused in itertools.product([0, 1], repeat=6):
        if not ran and (disclosed or not located or gap):
            continue
        results = [_result(bool(disclosed), bool(located), bool(gap))] if ran else []
        report = AuditReport(
            results,
            [("y", "does not apply")],
            [("z", "it broke")] if failed else [],
            [("1 distribution rule", "nobody reads it")] if unused else [],
        )
        left_out = (not located) or gap or failed or unused
        expect_safe = bool(ran) and not disclosed and not left_out
        assert report.safe is expect_safe
        word = report.verdict.split(":")[0]
        if not ran:  # an attack that could not run is a gap, not "nothing applies"
            assert word == ("INCOMPLETE" if failed else "NO VERDICT")
        elif disclosed:
            assert word == "UNSAFE"
        else:
            assert word == ("INCOMPLETE" if left_out else "SAFE")
        if word == "INCOMPLETE":  # it says what was left out
            assert ("not located" in report.verdict) == (not located)
            assert ("could not run" in report.verdict) == bool(failed)
            assert ("not used" in report.verdict) == bool(unused)


def test_every_kind_of_knowledge_is_read_by_some_attack() -> None:
    register_all()
    read = set().union(*(info.reads for info in ATTACKS.values()))
    assert read == set(KNOWLEDGE_KINDS)
    assert all(info.reads <= set(KNOWLEDGE_KINDS) for info in ATTACKS.values())


def _unused_kinds(df: pd.DataFrame, mondrian: kh.Release) -> dict[str, Knowledge]:
    pop = df[QI].reset_index(drop=True)
    return {
        "rules": Knowledge(population=pop, rules=[RULE]),
        "coalition": Knowledge(population=pop, coalition=Coalition(providers=("P1",))),
        "not_having": Knowledge(population=pop, not_having=[NotHaving(0, "Flu")]),
        "population": Knowledge(population=pop),
    }


@pytest.mark.parametrize("kind", ["rules", "coalition", "not_having", "population"])
def test_knowledge_no_attack_reads_is_never_safe(
    kind: str, df: pd.DataFrame, mondrian: kh.Release
) -> None:
    """A Mondrian release: no attack that runs on it reads rules, a coalition given by
    provider ids (the release has no provider column), or (without another release) the
    population and negative facts. The verdict names what was not used and is not SAFE."""
    know = _unused_kinds(df, mondrian)[kind]
    others = [mondrian] if kind in {"rules", "coalition"} else []
    report = kh.audit(mondrian, knowledge=know, others=others)
    assert not report.safe and not report.unsafe
    assert report.verdict.startswith("INCOMPLETE" if others else "NO VERDICT")
    words = {"rules": "distribution rule", "coalition": "coalition",
             "not_having": "negative fact", "population": "population"}  # fmt: skip
    assert f"{words[kind]}" in report.verdict and "not used" in report.verdict


def test_used_knowledge_gives_a_claim(df: pd.DataFrame, mondrian: kh.Release) -> None:
    """The release composed with itself, with the population: the intersection attack reads
    both. No group is homogeneous (l=2: checked here on the published histogram), so every
    value set a target is located in (its group's values, or the union of several groups')
    holds two values or more: nothing can be disclosed, and nothing was left out: SAFE."""
    counts = mondrian.histogram().counts
    assert ((counts > 0).sum(axis=1) >= 2).all()
    report = kh.audit(mondrian, knowledge=df[QI], others=[mondrian])
    assert not report.gaps and report.safe
    assert report.verdict == "SAFE: no row disclosed by the 1 attack(s) that apply (intersection)"


def test_knowledge_the_release_cannot_use_is_refused(
    df: pd.DataFrame, mondrian: kh.Release
) -> None:
    cases = [
        (Knowledge(population=df[["patient_id", "disease"]]), "no column 'age'"),
        (Knowledge(rules=[DistributionRule({"agee": {"max": 1}}, "Flu", 0.1)]), "'agee'"),
        (Knowledge(rules=[DistributionRule({"age": {"max": 1}}, "Flux", 0.1)]), "'Flux'"),
        (Knowledge(rules=[DistributionRule({"age": {"max": float("nan")}}, "Flu", 0.1)]),
         "finite"),
        (Knowledge(rules=[DistributionRule({"sex": {"max": 1}}, "Flu", 0.1)]), "categorical"),
        (Knowledge(rules=[DistributionRule({"sex": ["X"]}, "Flu", 0.1)]), "'X'"),
        (Knowledge(rules=[DistributionRule({"age": ["old"]}, "Flu", 0.1)]), "'old'"),
    ]  # fmt: skip
    for know, match in cases:
        with pytest.raises(InputError, match=match):
            kh.audit(mondrian, knowledge=know)
        with pytest.raises(InputError, match=match):
            kh.attack(mondrian, "intersection", knowledge=know, others=[mondrian])


def test_nan_in_a_knowledge_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "k.toml"
    f.write_text('[[rule]]\nvalue = "Flu"\nshare = 0.1\nwhere = { age = { max = nan } }\n')
    with pytest.raises(InputError, match=r"k.toml: rule\[0\]: where.age: max must be a finite"):
        Knowledge.from_path(f)


def test_a_rule_not_tested_on_unreadable_cells_is_incomplete(df: pd.DataFrame) -> None:
    """MASK's release with a rule that reads the sex column as numbers: its cells (F, M) are
    no intervals, so no group can be tested; the attack says so instead of SAFE."""
    with pytest.warns(kh.KnownSeedWarning):  # a fixed seed, for a test only
        mask = kh.anonymize(df, quasi=QI, sensitive="disease", algorithm="mask",
                            models=["k=3", "m=2"], seed=0)  # fmt: skip
    rule = DistributionRule({"sex": {"max": 1}}, "Flu", 0.0)
    result = negative_association_attack(mask, [rule])
    counts = mask.histogram().counts
    flu = list(mask.table.sa_column.labels).index("Flu")
    over = int((counts[:, flu] > 0).sum())  # share 0: every group holding Flu would be tested
    assert result.tuples.empty and not result.safe and not result.complete
    assert result.gaps == [f"rule[0] not tested on {over:,} groups whose cells could not be read"]
    assert result.verdict().startswith("INCOMPLETE: no row disclosed by negative-association")


def test_a_rule_on_a_value_no_row_holds_flags_nothing(df: pd.DataFrame) -> None:
    """A value of the SA's hierarchy that no row of the release holds: no group publishes
    more of it than the rule allows, so the rule flags nothing (and nothing is left out)."""
    from kerckhoffs.datasets import hospital_schema

    with pytest.warns(kh.KnownSeedWarning):  # a fixed seed, for a test only
        mask = kh.anonymize(df[df.disease != "HIV"], schema=hospital_schema(),
                            algorithm="mask", models=["k=3", "m=2"], seed=0)  # fmt: skip
    result = negative_association_attack(mask, [DistributionRule({"age": {"max": 25}}, "HIV",
                                                                 0.0)])  # fmt: skip
    assert result.safe and result.tuples.empty
