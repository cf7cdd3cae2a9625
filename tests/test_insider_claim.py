"""The insider attack from files relying on the release's recorded m-privacy check (paper 003;
:mod:`kerckhoffs.attacks.insider.claim`): the search for a placement that keeps the recorded
constraint in every group against a brute force over every placement; Table I's 2-private
release SAFE against each hospital from its files, as with the providers known; random
provider-aware m-private releases attacked from their files equal the attack with the
providers known; a release whose recorded check is false is never SAFE."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from cli_runner import run_cli
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.attacks.insider import insider_attack
from kerckhoffs.attacks.insider.claim import RecordedCheck, coalition_size, settle
from kerckhoffs.attacks.insider.placement import place
from kerckhoffs.attacks.knowledge import Coalition
from kerckhoffs.data import manifest
from kerckhoffs.models import DistinctLDiversity, KAnonymity, LDiversity, MPrivacy

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "providers"


# -- the search, against every placement ---------------------------------------------------------
@st.composite
def grouped_instances(draw: st.DrawFn) -> dict[str, Any]:
    """Published counts (groups x values) and records, each of one value, that fit some of
    the groups holding it."""
    n_groups = draw(st.integers(1, 4))
    n_sa = draw(st.integers(1, 2))
    counts = np.array(
        draw(st.lists(st.integers(0, 3), min_size=n_groups * n_sa, max_size=n_groups * n_sa))
    ).reshape(n_groups, n_sa)
    n_records = draw(st.integers(0, 5))
    record, cell = [], []
    for r in range(n_records):
        v = draw(st.integers(0, n_sa - 1))
        for g in draw(st.lists(st.integers(0, n_groups - 1), min_size=1, max_size=3)):
            record.append(r)
            cell.append(g * n_sa + v)
    k = draw(st.integers(1, 3))
    return {"counts": counts, "record": record, "cell": cell, "n": n_records, "k": k}


def all_loads(case: dict[str, Any]) -> set[tuple[int, ...]]:
    """Every load vector of a maximum placement (each record in one of its cells, or none)."""
    counts = case["counts"]
    options = [
        sorted({c for r, c in zip(case["record"], case["cell"], strict=True) if r == i} | {-1})
        for i in range(case["n"])
    ]
    best, loads = -1, set()
    for choice in product(*options):
        load = np.zeros(counts.size, dtype=np.int64)
        for c in choice:
            if c >= 0:
                load[c] += 1
        if (load > counts.ravel()).any():
            continue
        if int(load.sum()) > best:
            best, loads = int(load.sum()), set()
        if int(load.sum()) == best:
            loads.add(tuple(load.tolist()))
    return loads


def too_few(k: int) -> Callable[[np.ndarray], np.ndarray]:
    """A test's constraint: fewer than ``k`` rows left."""
    return lambda rem: rem.sum(axis=1) < k


@settings(max_examples=examples(400), deadline=None)
@given(grouped_instances())
def test_search_equals_brute_force(case: dict[str, Any]) -> None:
    """The recorded check is relied on exactly when some maximum placement leaves every group
    with at least k rows or none; a group is then settled exactly when every removal of it
    that some placement makes and that keeps the check also keeps the promise (here: at
    least k + 1 rows left, or none, wherever the coalition removed a row)."""
    counts, k = case["counts"], case["k"]
    n_groups = counts.shape[0]
    p = place(
        np.array(case["record"], dtype=np.int64),
        np.array(case["cell"], dtype=np.int64),
        case["n"],
        counts.ravel(),
    )
    low, high = p.low.reshape(counts.shape), p.high.reshape(counts.shape)
    check = RecordedCheck("the release's recorded m-privacy=1 check", (KAnonymity(k),))
    got = settle(counts, low, high, p, too_few(k + 1), check, too_few(k))
    loads = [np.array(lv).reshape(counts.shape) for lv in all_loads(case)]

    def keeps(rem: np.ndarray) -> bool:  # the recorded check: k rows left, or none
        return rem.sum() == 0 or rem.sum() >= k

    def promised(g: int, r: tuple[int, ...]) -> bool:  # where a row was removed: k + 1, or none
        left = (counts[g] - np.array(r)).sum()
        return sum(r) == 0 or left == 0 or left >= k + 1

    exists = any(all(keeps(counts[g] - lv[g]) for g in range(n_groups)) for lv in loads)
    undecided = (high > low).any(axis=1)
    if not undecided.any():
        return  # nothing to settle: the attack does not ask
    assert got.status == ("relied" if exists else "false"), got.reason
    for g in np.flatnonzero(undecided).tolist():
        removals = {tuple(lv[g].tolist()) for lv in loads}
        assert got.safe[g] == all(promised(g, r) for r in removals)
        allowed = [r for r in removals if keeps(counts[g] - np.array(r))]
        settled = exists and bool(allowed) and all(promised(g, r) for r in allowed)
        assert bool(got.safe[g] or got.by_claim[g]) == (got.safe[g] or settled)


def test_coalition_size_from_what_says_it() -> None:
    schema = Schema.from_toml(EXAMPLE / "schema.toml")
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    two = df[df["hospital"].isin(["P1", "P2"])]
    assert coalition_size(Coalition(records=two), schema) == 2
    assert coalition_size(Coalition(records=two), None) is None  # which column says?
    assert coalition_size(Coalition(records=two.drop(columns="hospital")), schema) is None
    assert coalition_size(Coalition(records=two.drop(columns="hospital"), m=1), schema) == 1
    assert coalition_size(Coalition(providers=("P1",), records=two), schema) == 2  # the largest
    blank = two.assign(hospital=["P1", "", "P1", "P2", "P2", "P2"][: len(two)])
    assert coalition_size(Coalition(records=blank), schema) is None


# -- Table I's 2-private release, from its files, the README's commands ---------------------------
def _reseal(folder: Path, checks: list[dict[str, Any]]) -> None:
    """Add ``checks`` to ``folder/release.json`` and seal it again, as anyone can (the seal is
    a digest, not a signature)."""
    f = folder / "release.json"
    meta = json.loads(f.read_text())
    meta.pop("integrity", None)
    meta["checks"] += checks
    f.write_bytes(manifest.seal(meta))


def _claim(m: int, k: int) -> dict[str, Any]:
    """A passed m-privacy=m w.r.t. k check, as release.json records one."""
    return {
        "model": "m-privacy",
        "parameter": f"m={m} w.r.t. k={k}",
        "achieved": None,
        "satisfied": True,
        "spec": {"model": "m-privacy", "m": m, "models": [{"model": "k-anonymity", "k": k}]},
    }


def _coalition_file(tmp: Path, hospitals: list[str], name: str) -> Path:
    """The README's coalition: the hospitals' rows of table_i.csv (with the provider column)
    and a knowledge file naming them."""
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    df[df["hospital"].isin(hospitals)].to_csv(tmp / f"{name}.csv", index=False)
    (tmp / f"{name}.toml").write_text(f'[coalition]\nrecords = "{name}.csv"\n')
    return tmp / f"{name}.toml"


@pytest.mark.parametrize("hospital", ["P1", "P2", "P3", "P4"])
def test_table_i_two_private_release_is_safe_from_its_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    hospital: str,
) -> None:
    """The README's commands: provider-aware k=2, distinct-l=2, m-privacy=2 on Table I, then
    `audit` with one hospital's records. SAFE, exit 0, as with the providers known. P2 and P4
    cannot place all their records from the boxes alone (Mark and John, Flu, fit group 0's
    Flu row as well as group 2's; Frank, Asthma, group 1's as well as group 3's), but a
    placement leaving group 0 (or 3) one row breaks k=2, which the release's recorded check
    rules out for any coalition of up to 2 hospitals: the line says it relied on it."""
    from kerckhoffs import api

    schema = EXAMPLE / "schema.toml"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", EXAMPLE / "table_i.csv", "--schema", schema,
        "--algorithm", "provider-aware", "--model", "k=2", "--model", "distinct-l=2",
        "--model", "m-privacy=2", "--out", tmp_path / "hm",
        "--provider-rows", tmp_path / "hm-rows.csv",
    )  # fmt: skip
    assert code == 0, err
    know = _coalition_file(tmp_path, [hospital], "coalition")
    code, out, err = run_cli(
        monkeypatch, capsys, "audit", "--release", tmp_path / "hm", "--knowledge", know,
        "--schema", schema,
    )  # fmt: skip
    line = " ".join(out.split())
    verdict = line[line.index("SAFE: no row disclosed") :]  # the audit's last line, wrapped
    assert code == 0 and "UNSAFE" not in line and "INCOMPLETE" not in line, out + err
    settled = {"P2": 2, "P4": 1}.get(hospital)
    if settled:
        assert (
            f"{settled} group(s) with more than one placement settled by the release's "
            "recorded m-privacy=2 check"
        ) in line
        # the audit's verdict itself says what it relied on
        assert verdict.endswith(
            "insider relied on: the release's recorded m-privacy=2 check settled "
            f"{settled} group(s) the coalition's records fit in more than one way"
        ), verdict
    else:  # P1 and P3 place their records exactly: nothing to rely on
        assert "recorded" not in line and "relied" not in verdict
    pooled = api.anonymize(
        EXAMPLE / "table_i.csv",
        schema=schema,
        algorithm="provider-aware",
        models=["k=2", "distinct-l=2", "m-privacy=2"],
    )
    known = insider_attack(pooled, Coalition(providers=(hospital,)))
    read = Release.from_published(tmp_path / "hm")
    got = insider_attack(
        read,
        Coalition(records=pd.read_csv(tmp_path / "coalition.csv")),
        schema=Schema.from_toml(schema),
    )
    assert known.safe and got.safe and got.compromised == known.compromised == 0


def test_a_coalition_larger_than_the_check_covers_is_not_settled_by_it(tmp_path: Path) -> None:
    """Three hospitals against the 2-private release: the check says nothing about them, so
    their ambiguous groups stay undecided, and the line says why."""
    from kerckhoffs import api

    rel = api.anonymize(
        EXAMPLE / "table_i.csv",
        schema=EXAMPLE / "schema.toml",
        algorithm="provider-aware",
        models=["k=2", "distinct-l=2", "m-privacy=2"],
    )
    rel.write(tmp_path / "hm")
    read = Release.from_published(tmp_path / "hm")
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    three = df[df["hospital"].isin(["P2", "P3", "P4"])]
    schema = Schema.from_toml(EXAMPLE / "schema.toml")
    got = insider_attack(read, Coalition(records=three), schema=schema)
    v = got.verdict()
    assert v.startswith("INCOMPLETE") and not got.safe
    assert "not relied on: it covers coalitions of up to 2 provider(s); this one has 3" in v
    # the same records, their size unknown (no provider column): not relied on either
    anon = insider_attack(read, Coalition(records=three.drop(columns="hospital")), schema=schema)
    assert "number of providers is not known" in anon.verdict() and not anon.safe


# -- a release whose recorded check is false -------------------------------------------------------
def test_a_forged_check_on_a_k2_release_is_contradicted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's mondrian k=2 release of Table I, its release.json edited to record a
    passed m-privacy=1 check and resealed: hospital P2 still finds Cecilia (UNSAFE), and the
    line says its records contradict the recorded check."""
    schema = EXAMPLE / "schema.toml"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", EXAMPLE / "table_i.csv", "--schema", schema,
        "--algorithm", "mondrian", "--model", "k=2", "--out", tmp_path / "h",
    )  # fmt: skip
    assert code == 0, err
    _reseal(tmp_path / "h", [_claim(1, 2)])
    know = _coalition_file(tmp_path, ["P2"], "p2")
    code, out, _ = run_cli(
        monkeypatch, capsys, "audit", "--release", tmp_path / "h", "--knowledge", know,
        "--schema", schema,
    )  # fmt: skip
    line = " ".join(out.split())
    assert code == 1 and "UNSAFE" in out.strip().splitlines()[-1]
    assert "contradict the release's recorded m-privacy=1 check" in line


def _overlapping_lie(tmp: Path) -> tuple[Path, Release, pd.DataFrame, Schema]:
    """Two groups of two whose boxes overlap: A = (27, a, P1), (20, b, P2), box [20-27];
    B = (25, a, P2), (35, c, P2), box [25-35]. P1's one record fits both boxes and both
    publish an ``a``. The release is 2-anonymous but not 1-private (P1 removing its record
    leaves one row in A); its release.json is edited to say it is, and resealed."""
    df = pd.DataFrame(
        {"age": [27, 20, 25, 35], "disease": list("abac"), "hospital": ["P1", "P2", "P2", "P2"]}
    )
    schema = Schema.build({"age": {"kind": "numeric"}}, "disease", provider="hospital")
    t = Table.encode(df, schema)
    rel = Release(t, Partition(np.array([0, 0, 1, 1], dtype=np.int32)), models=(KAnonymity(2),))
    rel.write(tmp / "lie")
    _reseal(tmp / "lie", [_claim(1, 2)])
    return tmp / "lie", rel, df, schema


def test_a_forged_check_no_placement_keeps_is_never_safe(tmp_path: Path) -> None:
    """Each group alone has a placement keeping k=2 (P1's record in the other one), so a
    group-by-group reading of the recorded check would settle both and say SAFE; but the
    record is in one of them, so every placement breaks k=2 somewhere: the check is false,
    the groups stay undecided, the verdict is not SAFE. With the providers known: UNSAFE."""
    folder, rel, df, schema = _overlapping_lie(tmp_path)
    known = insider_attack(rel, Coalition(providers=("P1",)))
    assert known.compromised == 1  # (20, b), left alone in A
    read = Release.from_published(folder)
    assert any(isinstance(x, MPrivacy) for x in read.models)
    got = insider_attack(read, Coalition(records=df[df["hospital"] == "P1"]), schema=schema)
    v = got.verdict()
    assert not got.safe and not v.startswith("SAFE")
    assert "2 group(s) (4 of 4 rows) not attacked" in v
    assert "no placement of its records keeps k=2 in every group at once" in v
    assert got.details["recorded_check"].startswith("false")


# -- random m-private releases: from files equals the truth, the check covering the coalition ----
@st.composite
def covered_cases(draw: st.DrawFn) -> tuple[pd.DataFrame, list[str], int, int, int, str]:
    """Small tables of four providers with few QI values (boxes overlap often), a coalition
    of at most m providers, m-privacy=m w.r.t. k and distinct or frequency l."""
    n = draw(st.integers(8, 30))
    span = draw(st.sampled_from([2, 4, 8]))
    rows = draw(
        st.lists(
            st.tuples(
                st.integers(0, span),
                st.integers(0, span),
                st.sampled_from("abc"),
                st.sampled_from(["P1", "P2", "P3", "P4"]),
            ),
            min_size=n,
            max_size=n,
        )
    )
    df = pd.DataFrame(rows, columns=["q1", "q2", "s", "p"])
    m = draw(st.integers(1, 2))
    coalition = draw(
        st.lists(st.sampled_from(sorted(set(df["p"]))), min_size=1, max_size=m, unique=True)
    )
    k, l = draw(st.integers(1, 2)), draw(st.integers(1, 2))  # noqa: E741
    return df, coalition, m, k, l, draw(st.sampled_from(["distinct", "frequency"]))


@settings(max_examples=examples(90), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(covered_cases())
def test_covered_coalitions_from_files_equal_the_truth(case: tuple) -> None:
    """From the files (the coalition's records with their provider column, the metadata
    recording the checks passed) the verdict equals the verdict with the providers known:
    every group decided, SAFE, the same tuples in the groups placed exactly."""
    from collections import Counter

    from kerckhoffs.algorithms.mprivacy_anonymize import provider_aware
    from kerckhoffs.errors import ParameterError

    df, coalition, m, k, l, kind = case  # noqa: E741
    schema = Schema.build({"q1": {"kind": "numeric"}, "q2": {"kind": "numeric"}}, "s", provider="p")
    diversity = LDiversity(l) if kind == "frequency" else DistinctLDiversity(l)
    recorded = [MPrivacy(m, [KAnonymity(k), diversity])]
    try:
        pooled = provider_aware(Table.encode(df, schema), recorded)
    except ParameterError:
        return  # the whole table is not m-private: nothing published
    results = pooled.check(recorded)
    promise = [KAnonymity(k), diversity]
    known = insider_attack(pooled, Coalition(providers=tuple(coalition)), models=promise)
    frames = pooled.frames()
    read = Release.from_frames(frames, pooled.metadata(results, recorded))
    records = df[df["p"].isin(coalition)]
    got = insider_attack(read, Coalition(records=records), models=promise, schema=schema)
    assert got.details.get("recorded_check", "relied") == "relied", got.verdict()
    assert got.undecided_groups == 0 and got.details["records_unplaced"] == 0
    assert known.safe and got.safe and got.compromised == known.compromised == 0
    file_group = frames["release"]["group"].to_numpy()
    pooled_group = pooled.published_group()
    rows_got = Counter(
        (int(file_group[r]), v, round(float(p), 9))
        for r, v, p in got.tuples[["row", "sa_value", "posterior"]].itertuples(index=False)
    )
    rows_known = Counter(
        (int(pooled_group[r]), v, round(float(p), 9))
        for r, v, p in known.tuples[["row", "sa_value", "posterior"]].itertuples(index=False)
    )
    assert rows_got <= rows_known  # the settled groups show no posterior; the others the truth's
