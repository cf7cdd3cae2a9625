"""The m-privacy model (paper 003 Definition 2.1) as the checks and the CLI use it:
``m-privacy=M`` with respect to the other models given, on Table I (spec mprivacy.md 4.1)."""

from __future__ import annotations

import pandas as pd
import pytest

import kerckhoffs as kh
from kerckhoffs import api
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import (
    DistinctLDiversity,
    KAnonymity,
    LDiversity,
    MPrivacy,
    PrivacyModel,
    TCloseness,
    combine_m_privacy,
    parse_model,
)
from kerckhoffs.models.parse import SYNTAX

# Table I with the group of each record in T_a* and T_b* as a QI label
TABLE_ONE = pd.DataFrame(
    {
        "name": [
            "Alice",
            "Bob",
            "Emily",
            "Dorothy",
            "Mark",
            "John",
            "Sara",
            "Cecilia",
            "Olga",
            "Frank",
        ],
        "hospital": ["P1", "P1", "P1", "P2", "P2", "P2", "P3", "P3", "P4", "P4"],
        "disease": [
            "Cancer",
            "Asthma",
            "Asthma",
            "Cancer",
            "Flu",
            "Flu",
            "Epilepsy",
            "Flu",
            "Cancer",
            "Asthma",
        ],
        "ta": [
            "20-30",
            "31-35",
            "20-30",
            "36-40",
            "36-40",
            "31-35",
            "20-30",
            "36-40",
            "31-35",
            "31-35",
        ],
        "tb": [
            "*****",
            "123**",
            "987**",
            "987**",
            "*****",
            "123**",
            "*****",
            "987**",
            "123**",
            "123**",
        ],
    }
)


def report(qi: str, models: list[str]) -> api.CheckReport:
    schema = Schema.build([qi], "disease", provider="hospital")
    return kh.check(TABLE_ONE[[qi, "hospital", "disease"]], schema=schema, models=models)


def m_result(rep: api.CheckReport):  # type: ignore[no-untyped-def]
    return next(r for r in rep.results if r.model == "m-privacy")


def test_paper_attack_on_ta() -> None:
    rep = report("ta", ["k=3", "distinct-l=2", "m-privacy=1"])
    r = m_result(rep)
    assert r.achieved == 0 and not r.satisfied and r.violating == 3
    assert rep.achieved["m-privacy"] == 0
    # T_a* itself is 3-anonymous and 2-diverse
    assert all(x.satisfied for x in rep.results if x.model != "m-privacy")


def test_tb_is_not_one_private_for_k3_l2_but_is_for_k2_l2() -> None:
    # the paper claims T_b* 1-private for (3, 2); Tb1 has 3 records from 3 providers
    assert m_result(report("tb", ["k=3", "distinct-l=2", "m-privacy=1"])).achieved == 0
    r = m_result(report("tb", ["k=2", "distinct-l=2", "m-privacy=1"]))
    assert r.achieved == 1 and r.satisfied
    assert sorted(r.group_values.tolist()) == [1, 1, 1]
    assert not m_result(report("tb", ["k=2", "distinct-l=2", "m-privacy=2"])).satisfied


def test_frequency_l_with_m_privacy() -> None:
    # Tb3 = Bob(P1 Asthma), Olga(P4 Cancer), Frank(P4 Asthma), John(P2 Flu): removing P2
    # leaves Asthma, Cancer, Asthma, 3 < 2 * 2; Tb1 and Tb2 survive one provider, not two
    r = m_result(report("tb", ["l=2", "m-privacy=1"]))
    assert sorted(r.group_values.tolist()) == [0, 1, 1]
    assert r.achieved == 0 and r.violating == 1


def test_whole_table_is_three_private_for_k2_l2() -> None:
    df = TABLE_ONE.assign(all="x")
    schema = Schema.build(["all"], "disease", provider="hospital")
    rep = kh.check(
        df[["all", "hospital", "disease"]],
        schema=schema,
        models=["k=3", "distinct-l=2", "m-privacy=3"],
    )
    assert m_result(rep).achieved == 2
    rep = kh.check(
        df[["all", "hospital", "disease"]],
        schema=schema,
        models=["k=2", "distinct-l=2", "m-privacy=9"],
    )
    r = m_result(rep)
    assert r.achieved == 3 and r.satisfied and "m read as 3" in r.detail


def test_without_provider_column_is_refused() -> None:
    with pytest.raises(ParameterError, match="provider column"):
        kh.check(TABLE_ONE, quasi=["ta"], sensitive="disease", models=["k=2", "m-privacy=1"])


def test_needs_a_constraint() -> None:
    with pytest.raises(ParameterError, match="needs a constraint"):
        combine_m_privacy([parse_model("m-privacy=2")])
    with pytest.raises(ParameterError, match="t-closeness"):
        combine_m_privacy([parse_model("m-privacy=2"), TCloseness(0.2)])


def test_parse_and_combine() -> None:
    assert SYNTAX["MPrivacy"] == "m-privacy"
    m = parse_model("m-privacy=3")
    assert isinstance(m, MPrivacy) and m.m == 3 and m.models == ()
    with pytest.raises(ParameterError):
        parse_model("m-privacy=1.5")
    combined = combine_m_privacy([KAnonymity(30), m, DistinctLDiversity(4)])
    assert [type(x) for x in combined] == [KAnonymity, MPrivacy, DistinctLDiversity]
    mp = combined[1]
    assert isinstance(mp, MPrivacy)
    assert [x.to_dict() for x in mp.models] == [
        KAnonymity(30).to_dict(),
        DistinctLDiversity(4).to_dict(),
    ]
    assert mp.parameter == "m=3 w.r.t. k=30, distinct-l=4"


def test_round_trip() -> None:
    mp = MPrivacy(3, [KAnonymity(30), LDiversity(2.5)])
    data = mp.to_dict()
    assert data == {
        "model": "m-privacy",
        "m": 3,
        "models": [{"model": "k-anonymity", "k": 30}, {"model": "l-diversity", "l": 2.5}],
    }
    back = PrivacyModel.from_dict(data)
    assert isinstance(back, MPrivacy) and back.to_dict() == data


def test_eg_monotonic_flags() -> None:
    from kerckhoffs.mprivacy.constraints import constraint_from_models

    assert constraint_from_models([KAnonymity(3), DistinctLDiversity(2)]).eg_monotonic
    assert not constraint_from_models([KAnonymity(3), LDiversity(2)]).eg_monotonic
