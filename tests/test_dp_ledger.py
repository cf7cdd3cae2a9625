"""The per-person privacy ledger across releases (issue 14 item 3; spec ``composition.md`` 2.11
basic composition, property P19), ``kerckhoffs budget`` and ``anonymize --ledger --budget``.

Expected totals are hand-derived (or brute-forced with a plain loop over people and
releases), never recomputed with the ledger. The CLI tests use a stand-in DP algorithm
registered only inside the test: a release that reports ``privacy_loss()`` as the DP releases
of issue 14 do, so the command's accounting is tested apart from any real mechanism.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from cli_runner import run_cli
from kerckhoffs import Partition, Provenance, Release
from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo
from kerckhoffs.dp.ledger import (
    BudgetExceeded,
    Ledger,
    group_delta_factor,
    parse_budget,
)
from kerckhoffs.errors import InputError, ParameterError


# -- composition on overlapping populations (hand vectors) -------------------------------------
def test_basic_composition_overlapping_populations() -> None:
    # Table 1's setting: two hospitals whose patients overlap. Release A (eps 0.5) holds
    # ann, bob, cid; release B (eps 0.25, delta 1e-6) holds bob, cid, dan; release C (eps 1)
    # holds cid only. Hand sums: ann 0.5; bob 0.75; cid 1.75; dan 0.25.
    led = Ledger()
    led.record("A", 0.5, 0.0, ["ann", "bob", "cid"])
    led.record("B", 0.25, 1e-6, ["bob", "cid", "dan"])
    led.record("C", 1.0, 0.0, ["cid"])
    s = led.spent()
    assert s["epsilon"].to_dict() == {"ann": 0.5, "bob": 0.75, "cid": 1.75, "dan": 0.25}
    assert s["delta"].to_dict() == {"ann": 0.0, "bob": 1e-6, "cid": 1e-6, "dan": 1e-6}
    assert s["releases"].to_dict() == {"ann": 1, "bob": 2, "cid": 3, "dan": 1}


def test_repeated_rows_pay_group_privacy() -> None:
    # bob has 3 rows in a (eps=ln 2, delta=0.01) release: 3 eps, and delta * (1 + 2 + 4) = 0.07
    led = Ledger()
    led.record("visits", math.log(2), 0.01, ["bob", "ann", "bob", "bob"])
    s = led.spent()
    assert s.loc["bob", "epsilon"] == pytest.approx(3 * math.log(2))
    assert s.loc["bob", "delta"] == pytest.approx(0.07)
    assert s.loc["ann", "delta"] == pytest.approx(0.01)
    assert group_delta_factor(np.array([0, 1, 4]), 0.0).tolist() == [0, 1, 4]


def test_ids_are_kept_as_given() -> None:
    led = Ledger()
    led.record("r", 1.0, 0.0, ["007", 7])  # "007" and 7 are different people
    assert sorted(led.spent().index) == ["007", "7"]
    with pytest.raises(InputError, match="missing"):
        led.record("r2", 1.0, 0.0, ["a", None])


# -- would_exceed boundaries --------------------------------------------------------------------
def test_exactly_at_budget_is_allowed() -> None:
    led = Ledger()
    led.record("A", 0.5, 0.0, ["ann", "bob"])
    assert not led.would_exceed(["ann"], 0.5, 0.0, 1.0)  # 0.5 + 0.5 = 1: at the budget
    check = led.would_exceed(["ann", "cid"], 0.5000001, 0.0, 1.0)
    assert check and list(check.over.index) == ["ann"]
    assert check.over.loc["ann", "epsilon"] == pytest.approx(1.0000001)
    # decimal sums that binary floating point rounds up still meet the budget exactly
    led2 = Ledger()
    led2.record("x", 0.1, 0.0, ["p"])
    assert not led2.would_exceed(["p"], 0.2, 0.0, 0.3)
    assert led2.would_exceed(["p"], 0.2001, 0.0, 0.3)


def test_delta_budget() -> None:
    led = Ledger()
    led.record("A", 0.1, 1e-6, ["ann"])
    assert led.would_exceed(["bob"], 0.1, 1e-9, 1.0)  # pure budget: any delta > 0 exceeds
    assert not led.would_exceed(["ann"], 0.1, 1e-6, "1,2e-6")  # exactly 2e-6
    assert led.would_exceed(["ann"], 0.1, 1.1e-6, "1,2e-6")
    # two rows of one person in the new release: 2 eps counts
    assert led.would_exceed(["bob", "bob"], 0.6, 0.0, 1.0)
    assert not led.would_exceed(["bob", "cid"], 0.6, 0.0, 1.0)


def test_record_with_budget_refuses_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    led = Ledger.load(path, create=True)
    led.record("A", 0.75, 0.0, ["ann", "bob"], budget=1.0)
    before = path.read_bytes()
    with pytest.raises(BudgetExceeded, match="1 person"):
        led.record("B", 0.5, 0.0, ["ann", "new"], budget=1.0)
    assert path.read_bytes() == before
    assert led.people == ["ann", "bob"] and len(led.entries) == 1


@pytest.mark.parametrize("bad", ["0", "-1", "x", "1,1", "1,2,3", "nan"])
def test_bad_budgets(bad: str) -> None:
    with pytest.raises(ParameterError):
        parse_budget(bad)


def test_parse_budget() -> None:
    assert parse_budget("1") == (1.0, 0.0)
    assert parse_budget("0.5, 1e-6") == (0.5, 1e-6)


# -- property: totals equal a brute-force sum -----------------------------------------------------
@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
            st.sampled_from([0.0, 1e-6, 1e-3]),
            st.lists(st.sampled_from(list("abcdefg")), min_size=1, max_size=10),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_spent_matches_brute_force(releases: list[tuple[float, float, list[str]]]) -> None:
    led = Ledger()
    for i, (eps, delta, people) in enumerate(releases):
        led.record(f"r{i}", eps, delta, people)
    s = led.spent()
    for person in s.index:
        e_sum = d_sum = 0.0
        for eps, delta, people in releases:
            k = people.count(person)
            e_sum += k * eps
            d_sum += delta * sum(math.exp(j * eps) for j in range(k))
        assert s.loc[person, "epsilon"] == pytest.approx(e_sum)
        assert s.loc[person, "delta"] == pytest.approx(d_sum)
        assert s.loc[person, "releases"] == sum(person in p for _, _, p in releases)
    # would_exceed agrees with the brute-force totals plus one more 0.5 release for everyone
    check = led.would_exceed(list(s.index), 0.5, 0.0, (1.0, 0.01))
    expect = {
        p
        for p in s.index
        if s.loc[p, "epsilon"] + 0.5 > 1.0 * (1 + 1e-9) or s.loc[p, "delta"] > 0.01 * (1 + 1e-9)
    }
    assert set(check.over.index) == expect


# -- the file: round trip, atomic, sealed ---------------------------------------------------------
def test_round_trip_and_seal(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    assert not path.exists()  # nothing written until something is recorded
    led.record("A", 0.5, 1e-7, ["ann", "bob"], path="/rel/A", digest="sha256:" + "a" * 64)
    back = Ledger.load(path)
    assert back.spent().equals(led.spent())
    assert back.entries[0].path == "/rel/A" and back.entries[0].digest == "sha256:" + "a" * 64
    doc = json.loads(path.read_text())
    assert doc["format"] == "kerckhoffs-ledger" and doc["version"] == 1
    # an edit that gives budget back (0.5 -> 0.1) is refused
    path.write_text(path.read_text().replace('"epsilon":0.5', '"epsilon":0.1'))
    with pytest.raises(InputError, match="changed outside kerckhoffs"):
        Ledger.load(path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "not valid JSON"),
        (b"{truncated", "not valid JSON"),
        (b'{"format": "other"}', "not a kerckhoffs ledger"),
        (b'{"format": "kerckhoffs-ledger", "version": 99}', "version 99"),
        (b'{"format": "kerckhoffs-ledger", "version": 1}', "integrity record is missing"),
    ],
)
def test_bad_ledger_files(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words) as exc:
        Ledger.load(path)
    assert "\n" not in str(exc.value)


def test_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    led.record("A", 0.5, 0.0, ["ann"])
    before = path.read_bytes()

    def boom(self: Ledger) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Ledger, "to_bytes", boom)
    with pytest.raises(OSError):
        led.record("B", 0.5, 0.0, ["bob"])
    assert path.read_bytes() == before
    assert led.people == ["ann"] and len(led.entries) == 1  # memory rolled back too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.json"]  # no temporary left


def test_concurrent_change_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    Ledger.load(path, create=True).record("A", 0.5, 0.0, ["ann"])
    one, two = Ledger.load(path), Ledger.load(path)
    one.record("B", 0.5, 0.0, ["ann"])
    with pytest.raises(InputError, match="changed by another process"):
        two.record("C", 0.5, 0.0, ["ann"])  # would have lost B: ann's total would read 1.0
    assert Ledger.load(path).spent().loc["ann", "epsilon"] == 1.0


# -- the command line ---------------------------------------------------------------------------
class StubDPRelease(Release):
    """A release that states its privacy loss, as issue 14's DP releases do."""

    loss: tuple[float, float] = (0.5, 0.0)

    def privacy_loss(self) -> tuple[float, float] | None:
        return self.loss


def stub_dp(table, models, *, seed=None, eps=0.5, delta=0.0):  # type: ignore[no-untyped-def]
    """Stand-in: one group (passes k-anonymity) reporting (eps, delta)."""
    rel = StubDPRelease(table, Partition.single(table.n), provenance=Provenance("dp-stub", {}))
    rel.loss = (float(eps), float(delta))
    return rel


def not_dp(table, models, *, seed=None):  # type: ignore[no-untyped-def]
    return Release(table, Partition.single(table.n), provenance=Provenance("not-dp", {}))


@pytest.fixture
def stubs(monkeypatch: pytest.MonkeyPatch) -> None:
    opts = {"eps": "epsilon", "delta": "delta"}
    monkeypatch.setitem(
        REGISTRY,
        "dp-stub",
        AlgorithmInfo("dp-stub", stub_dp, "stub", ("KAnonymity",), options=opts),
    )
    monkeypatch.setitem(
        REGISTRY, "not-dp", AlgorithmInfo("not-dp", not_dp, "stub", ("KAnonymity",))
    )


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "h.csv"
    f.write_text(
        "pid,age,sex,disease\n007,30,M,flu\nP2,31,F,cold\nP3,32,M,flu\nP4,33,F,hiv\nP2,34,F,cold\n"
    )
    s = tmp_path / "s.toml"
    s.write_text(
        '[columns.pid]\nrole = "identifier"\n[columns.age]\nrole = "quasi"\n'
        '[columns.sex]\nrole = "quasi"\n[columns.disease]\nrole = "sensitive"\n'
    )
    return f, s


def anonymize(monkeypatch, capsys, data, out, *extra):  # type: ignore[no-untyped-def]
    f, s = data
    return run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "dp-stub", "-m", "k=2", "-o", out,
        "--format", "csv", *extra,
    )  # fmt: skip


def test_anonymize_records_then_refuses_over_budget(stubs, data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    ledger = tmp_path / "private" / "ledger.json"
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert "a new ledger starts there" in err and "recorded epsilon=0.5" in out
    led = Ledger.load(ledger)
    # "007" kept as written (not 7); P2 has two rows: 2 * 0.5
    assert led.spent()["epsilon"].to_dict() == {"007": 0.5, "P2": 1.0, "P3": 0.5, "P4": 0.5}
    entry = led.entries[0]
    meta = json.loads((tmp_path / "r1" / "release.json").read_text())
    assert entry.name == "r1" and entry.digest == meta["integrity"]
    assert entry.path == str((tmp_path / "r1").resolve())
    assert "007" not in (tmp_path / "r1" / "release.csv").read_text()  # ids never published

    before = ledger.read_bytes()
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r2", "--ledger", ledger, "--budget", "1",
        "-O", "eps=0.25",
    )  # fmt: skip
    assert code == 2
    assert err.startswith("error: release") and "over the budget" in err and "P2" in err
    assert err.count("\n") == 1
    assert ledger.read_bytes() == before and not (tmp_path / "r2").exists()

    # exactly at the budget: 007, P3, P4 reach 1.0 with 0.5 more, P2 is not in this data
    f = data[0]
    f.write_text("pid,age,sex,disease\n007,30,M,flu\nP3,32,M,flu\nP4,33,F,hiv\n")
    code, _, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r3", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert Ledger.load(ledger).spent()["epsilon"].max() == 1.0


def test_anonymize_ledger_refusals(stubs, data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    f, s = data
    ledger = tmp_path / "l.json"
    out = tmp_path / "rel"
    # a release that does not state its loss
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "not-dp", "-m", "k=2", "-o", out,
        "--ledger", ledger,
    )  # fmt: skip
    assert code == 2 and "--ledger needs a DP release" in err
    assert not out.exists() and not ledger.exists()
    # the ledger inside the release directory would publish people's ids
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", out / "l.json")
    assert code == 2 and "must never be published" in err
    # --budget alone
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--budget", "1")
    assert code == 2 and "--budget needs --ledger" in err
    # a damaged ledger: one line, nothing written
    ledger.write_text("{}")
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger)
    assert code == 2 and "not a kerckhoffs ledger" in err and not out.exists()
    ledger.unlink()
    # no identifier column
    s.write_text(
        '[columns.age]\nrole = "quasi"\n[columns.sex]\nrole = "quasi"\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger)
    assert code == 2 and "no column of role identifier" in err
    assert not out.exists() and not ledger.exists()


def test_release_removed_when_it_cannot_be_recorded(stubs, data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    ledger = tmp_path / "l.json"

    def boom(self: Ledger) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Ledger, "to_bytes", boom)
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "rel", "--ledger", ledger)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "was removed" in errors[0]
    assert not (tmp_path / "rel").exists() and not ledger.exists()


def test_budget_command(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    led.record("A", 0.5, 0.0, ["ann", "bob", "cid"])
    led.record("B", 0.25, 1e-6, ["bob", "cid", "dan"])
    led.record("C", 1.0, 0.0, ["cid"])
    code, out, err = run_cli(monkeypatch, capsys, "budget", path, "--worst", "2")
    assert code == 0, err
    assert "3 release(s), 4 people" in out
    lines = out.splitlines()
    worst = lines[next(i for i, x in enumerate(lines) if x.startswith("worst-off 2")) :]
    body = " ".join(worst)
    assert "cid" in body and "1.75" in body and "bob" in body and "ann" not in body
    # histogram of totals: 0.25 (dan), 0.5 (ann), 0.75 (bob), 1.75 (cid): one person each
    assert "median" in out and "1.75" in out
    code, out, _ = run_cli(monkeypatch, capsys, "budget", path, "--budget", "1,1e-6")
    assert code == 1 and "1 people over, 3 within" in out
    code, out, _ = run_cli(monkeypatch, capsys, "budget", path, "--budget", "2,1e-6")
    assert code == 0 and "0 people over" in out


def test_budget_command_errors(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    code, _, err = run_cli(monkeypatch, capsys, "budget", tmp_path / "none.json")
    assert code == 2 and err == f"error: ledger {tmp_path / 'none.json'}: no such file\n"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    code, _, err = run_cli(monkeypatch, capsys, "budget", bad)
    assert code == 2 and "not valid JSON" in err and err.count("\n") == 1
    code, _, err = run_cli(monkeypatch, capsys, "budget", bad, "--budget", "x")
    assert code == 2 and "budget 'x'" in err


def test_spec_4_3_ledger_vector() -> None:
    """Spec composition.md 4.3: releases (0.5, 0) and (0.3, 1e-6) give (0.8, 1e-6) to the
    people in both and (0.5, 0) to those only in the first (basic composition)."""
    led = Ledger()
    led.record("first", 0.5, 0.0, ["ann", "bob", "cid"])
    led.record("second", 0.3, 1e-6, ["bob", "cid"])
    s = led.spent()
    assert s.loc["bob", "epsilon"] == pytest.approx(0.8) and s.loc["bob", "delta"] == 1e-6
    assert s.loc["cid", "epsilon"] == pytest.approx(0.8) and s.loc["cid", "delta"] == 1e-6
    assert (s.loc["ann", "epsilon"], s.loc["ann", "delta"]) == (0.5, 0.0)
