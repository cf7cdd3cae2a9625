"""The information-flow audit (spec asap.md 1.10 item 2, 6 item 4): every SA statistic an
algorithm reads must be computed on a union of published groups."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.registry import REGISTRY, get
from kerckhoffs.attacks import audit
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import LDiversity

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def line_table(sa: str) -> Table:
    df = pd.DataFrame({"x": list(range(len(sa))), "s": list(sa)})
    return Table.encode(df, Schema.build({"x": {"kind": "numeric"}}, "s"))


def test_x10_mondrian_reads_the_halves_of_a_rejected_cut() -> None:
    table = line_table("AABBC")
    res = audit("mondrian", table, [LDiversity(2)])
    assert res.release.partition.n_groups == 1 and not res.passed
    assert sum(count for _, count in res.violations) >= 1
    plus = audit("mondrian+", table, [LDiversity(2)])
    assert plus.passed and plus.reads >= 1
    assert "passes" in plus.describe() and "FAILS" in res.describe()
    assert res.not_unions == res.violations  # no SA value changed: row sets only
    assert "set(s) not a union of groups" in res.describe()


def test_x2_hilb_fails_and_strict_hilb_plus_passes() -> None:
    table = line_table("AABCBC")
    opts = {"hilbert_index": np.arange(6)}
    assert not audit("hilb", table, [LDiversity(2)], **opts).passed
    assert not audit("hilb+", table, [LDiversity(2)], **opts).passed  # frontier reads (spec 2.6)
    assert audit("hilb+strict", table, [LDiversity(2)], **opts).passed


def test_an_algorithm_without_a_log_is_refused() -> None:
    get("mdav")
    assert "mdav" in REGISTRY
    with pytest.raises(ParameterError, match="does not log"):
        audit("mdav", line_table("AB"), [LDiversity(1)])
    with pytest.raises(ParameterError, match="sa_log is the information-flow audit's own"):
        audit("mondrian", line_table("AB"), [LDiversity(1)], sa_log=None)


@pytest.mark.skipif(not (DATA / "adult").exists(), reason="shared data absent")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_adult_mondrian_fails_mondrian_plus_passes() -> None:
    from kerckhoffs.datasets import load_adult

    table = Table.encode(
        load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult" / "schema.toml")
    )
    t0 = time.perf_counter()
    orig = audit("mondrian", table, [LDiversity(4)])
    plus = audit("mondrian+", table, [LDiversity(4)])
    assert time.perf_counter() - t0 < 3.0
    assert not orig.passed and plus.passed
    assert plus.release.check([LDiversity(4)])[0].satisfied


def test_mask_fails_on_the_counts_it_distorts_and_mask_plus_passes() -> None:
    # spec 1.8 / 6 item 7: MASK reads whole groups (a union test alone passes it), but the
    # sensitive counts it reads are not the ones the distorted groups publish
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.models import KAnonymity, MConfidentiality

    table = Table.encode(generate_hospital(600, seed=3), hospital_schema())
    models = [KAnonymity(10), MConfidentiality(3)]
    orig = audit("mask", table, models, seed=1)
    assert orig.release.perturbed.any()
    assert not orig.passed
    assert all("counts read differ" in what for what, _ in orig.violations)
    assert orig.not_unions == []  # every set read is a group: only the counts differ
    text = orig.describe()
    assert "whose counts are not published" in text and "not a union" not in text
    for name in ("mask+", "mask++"):
        res = audit(name, table, models, seed=1)
        assert res.passed, res.describe()
        assert res.release.perturbed.any()  # it changed values, but none that it read


def test_counts_read_are_compared_only_where_recorded() -> None:
    from kerckhoffs.algorithms.sa_reads import SAReadLog

    sa = np.array([0, 0, 1, 1])
    group = np.array([0, 0, 1, 1])
    log = SAReadLog()
    log.record(np.arange(4), group, "count of value 0", counted=np.array([True, False]), sa=sa)
    assert log.violations(group, sa) == []
    assert log.violations(group) == []  # no published SA given: union test only
    moved = np.array([0, 1, 1, 1])  # group 0 now publishes one 0 instead of two
    assert log.violations(group, moved) == [
        ("count of value 0 (counts read differ from the published ones)", 1)
    ]
    changed_unread = np.array([0, 0, 1, 0])  # value 1's count was never read on group 1...
    assert log.violations(group, changed_unread) == [
        ("count of value 0 (counts read differ from the published ones)", 1)
    ]  # ...but value 0's count was (0 before, 1 now)
