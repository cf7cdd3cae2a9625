"""Models recorded as data (PrivacyModel.to_dict / from_dict, Provenance.models, the old string
form of release.json format_version 2 still read), the algorithm properties the attacks read
from the registry, and MASK's refusal as its own exception class."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Table
from kerckhoffs.algorithms.lattice import lattice
from kerckhoffs.algorithms.mask import mask
from kerckhoffs.algorithms.registry import get, names_where
from kerckhoffs.attacks.hilb.order import FRONTIER_ALGORITHMS, STRICT_ALGORITHMS
from kerckhoffs.attacks.minimality import Requirement, requirement_of
from kerckhoffs.errors import CannotPublish, ParameterError
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from kerckhoffs.release import Provenance

RECORDS = [
    (KAnonymity(5), {"model": "k-anonymity", "k": 5}),
    (AlphaKAnonymity(0.25, 3), {"model": "(alpha,k)-anonymity", "alpha": 0.25, "k": 3}),
    (LDiversity(2.5), {"model": "l-diversity", "l": 2.5}),
    (DistinctLDiversity(3), {"model": "distinct l-diversity", "l": 3}),
    (EntropyLDiversity(2.0), {"model": "entropy l-diversity", "l": 2.0}),
    (RecursiveCLDiversity(3.0, 2), {"model": "recursive (c,l)-diversity", "c": 3.0, "l": 2}),
    (TCloseness(0.2), {"model": "t-closeness", "t": 0.2}),
    (MConfidentiality(4), {"model": "m-confidentiality (per group)", "m": 4}),
]


@pytest.mark.parametrize(("model", "record"), RECORDS)
def test_models_round_trip_as_data(model: PrivacyModel, record: dict) -> None:
    assert model.to_dict() == record
    back = PrivacyModel.from_dict(json.loads(json.dumps(record)))
    assert type(back) is type(model)
    assert back.to_dict() == record and back.parameter == model.parameter


def test_bad_records_are_one_line_errors() -> None:
    with pytest.raises(ParameterError) as exc:
        PrivacyModel.from_dict({"model": "x-anonymity", "x": 1})
    assert str(exc.value) == "unknown recorded model 'x-anonymity'"
    with pytest.raises(ParameterError) as exc:
        PrivacyModel.from_dict({"model": "(alpha,k)-anonymity", "k": 2})
    assert str(exc.value) == "recorded model '(alpha,k)-anonymity' needs alpha, k, got k"
    with pytest.raises(ParameterError, match=r"^recorded model 'k-anonymity': cannot read 'k5'$"):
        PrivacyModel.from_legacy("k-anonymity", "k5")


def test_provenance_reads_recorded_models_and_the_old_string_form() -> None:
    new = Provenance("lattice", {"models": [r for _, r in RECORDS[:2]], "metric": "loss"})
    assert [m.to_dict() for m in new.models()] == [r for _, r in RECORDS[:2]]
    old = Provenance(
        "lattice",
        {
            "(alpha,k)-anonymity": "alpha=0.25, k=3",
            "m-confidentiality (per group)": "m=4",
            "metric": "loss",
        },
    )
    assert [m.to_dict() for m in old.models()] == [RECORDS[1][1], RECORDS[7][1]]
    assert Provenance("mondrian", {"k": 5}).models() == []


def _table() -> Table:
    h = Hierarchy([["a", "A", "*"], ["b", "A", "*"], ["c", "C", "*"], ["d", "C", "*"]], "q")
    schema = Schema((Column("q", Role.QUASI, Kind.CATEGORICAL, h), Column("s", Role.SENSITIVE)))
    df = pd.DataFrame({"q": list("aabbccdd"), "s": ["x", "y", "x", "y", "x", "x", "y", "z"]})
    return Table.encode(df, schema)


def test_requirement_from_recorded_models_equals_the_old_form() -> None:
    t = _table()
    part = Partition.by_qi(t)
    new = Provenance("lattice", {"models": [AlphaKAnonymity(0.25, 3).to_dict(), {"model":
                     "m-confidentiality (per group)", "m": 2}]})  # fmt: skip
    old = Provenance("lattice", {"(alpha,k)-anonymity": "alpha=0.25, k=3",
                                 "m-confidentiality (per group)": "m=2"})  # fmt: skip
    for prov in (new, old):  # l = max(1/alpha, m) = 4, k = 3, promise m = 2
        assert requirement_of(Release(t, part, provenance=prov)) == (Requirement(4.0, 3), 2.0)
    other = Provenance("lattice", {"models": [TCloseness(0.2).to_dict()]})
    assert requirement_of(Release(t, part, provenance=other)) == (
        "lattice release enforcing t-closeness (t=0.2): the minimality attack's engine needs "
        "frequency l-diversity, (alpha,k)-anonymity, m or k (use "
        "kerckhoffs.attacks.minimality.possible_worlds for other models)"
    )


def test_lattice_records_its_models_in_release_json(tmp_path: Path) -> None:
    t = _table()
    rel = lattice(t, [KAnonymity(2), LDiversity(2)])
    rel.write(tmp_path / "r", [KAnonymity(2)], formats=("csv",))
    meta = json.loads((tmp_path / "r" / "release.json").read_text())
    assert meta["provenance"]["parameters"]["models"] == [
        {"model": "k-anonymity", "k": 2},
        {"model": "l-diversity", "l": 2.0},
    ]
    back = Release.from_published(tmp_path / "r")
    assert requirement_of(back) == (Requirement(2.0, 2), 2.0)


def test_algorithm_properties_come_from_the_registry() -> None:
    assert names_where(lambda a: a.minimal) == (
        "lattice",
        "lattice-exclusive",
        "lattice-inclusive",
        "local-recoding",
    )
    assert names_where(lambda a: a.sa_blind) == ("mask", "mask+", "mask++")
    assert FRONTIER_ALGORITHMS == ("hilb", "hilb+", "hilb++")
    assert STRICT_ALGORITHMS == ("hilb++strict", "hilb+strict")
    bases = {n: get(n).base for n in ("hilb++", "hilb++strict", "mask++", "mondrian++", "hilb")}
    assert bases == {
        "hilb++": "hilb+",
        "hilb++strict": "hilb+strict",
        "mask++": "mask+",
        "mondrian++": "mondrian+",
        "hilb": None,
    }
    assert {get(n).family for n in ("mondrian", "mondrian+", "mondrian++")} == {"mondrian"}
    t = _table()
    found = requirement_of(Release(t, Partition.by_qi(t), provenance=Provenance("mondrian", {})))
    assert isinstance(found, str)
    assert found.startswith("'mondrian' is not a minimal-generalization")


def test_mask_refusal_is_its_own_exception() -> None:
    t = _table()  # every group but one violates m = 2 for some value: nothing to copy from
    df = pd.DataFrame({"q": list("aabbccdd"), "s": ["x", "x", "x", "x", "x", "x", "y", "z"]})
    t = Table.encode(df, t.schema)
    with pytest.raises(CannotPublish, match=r"cannot be published with these k and m$"):
        mask(t, [KAnonymity(2), MConfidentiality(2)], seed=0, partition=Partition.by_qi(t))
    assert issubclass(CannotPublish, ParameterError)  # the CLI still exits 2
