"""The per-person privacy ledger across releases (basic composition, Dwork and Roth 2014 Thm
3.16), its neighbour notions, its file, ``kerckhoffs budget`` and the DP publication
transaction of ``anonymize --ledger [--budget]`` (:mod:`kerckhoffs.dp.publish`).

Expected totals are hand-derived, brute-forced with a plain loop over people and releases,
or read off exact probability mass functions, never recomputed with the ledger. The command
line runs the real ``dp-histogram`` on a five-row table; where a release must state
something no shipped algorithm states (a label-DP notion, rows dropped for missing values), a
stand-in algorithm registered inside the test returns a real DP release of a fixed table.
Crash ordering (kill -9 at injected points) is in ``test_ledger_crash.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import signal
import stat
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from cli_runner import run_cli
from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo
from kerckhoffs.data import manifest
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.composition import BudgetExceeded, group_delta_factor, parse_budget
from kerckhoffs.dp.counts import dp_histogram
from kerckhoffs.dp.ledger import Ledger
from kerckhoffs.dp.ledger_file import lock
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import DifferentialPrivacy
from kerckhoffs.release import Scheme


# -- composition on overlapping populations (hand vectors) -----------------------------------------
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


# -- would_exceed boundaries -----------------------------------------------------------------------
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


@pytest.mark.parametrize("bad", ["0", "-1", "x", "1,1", "1,2,3", "nan", "inf", "1" + "0" * 400])
def test_bad_budgets(bad: str) -> None:
    with pytest.raises(ParameterError):
        parse_budget(bad)


def test_budget_given_as_a_huge_integer_is_one_line() -> None:
    with pytest.raises(ParameterError, match="budget"):
        parse_budget(10**400)  # float(10**400) raises OverflowError
    with pytest.raises(ParameterError, match="budget"):
        parse_budget((1, 10**400))


def test_parse_budget() -> None:
    assert parse_budget("1") == (1.0, 0.0)
    assert parse_budget("0.5, 1e-6") == (0.5, 1e-6)


# -- property: totals equal a brute-force sum ------------------------------------------------------
def brute_force_totals(
    releases: list[tuple[float, float, list[str], str]], person: str
) -> tuple[float, float]:
    """A person's (epsilon, delta) under substitution, from the definitions: with k rows in
    a release under substitution, k steps; under add-remove, 2k (each substitution is a
    removal and an addition); group privacy over s steps costs s eps and delta sum_{j<s}
    e^(j eps)."""
    e_sum = d_sum = 0.0
    for eps, delta, people, notion in releases:
        steps = people.count(person) * (2 if notion == "add-remove" else 1)
        e_sum += steps * eps
        d_sum += delta * sum(math.exp(j * eps) for j in range(steps))
    return e_sum, d_sum


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
            st.sampled_from([0.0, 1e-6, 1e-3]),
            st.lists(st.sampled_from(list("abcdefg")), min_size=1, max_size=10),
            st.sampled_from(["substitution", "add-remove"]),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_spent_matches_brute_force(releases: list[tuple[float, float, list[str], str]]) -> None:
    led = Ledger()
    for i, (eps, delta, people, notion) in enumerate(releases):
        led.record(f"r{i}", eps, delta, people, neighbours=notion)
    s = led.spent()
    for person in s.index:
        e_sum, d_sum = brute_force_totals(releases, person)
        assert s.loc[person, "epsilon"] == pytest.approx(e_sum)
        assert s.loc[person, "delta"] == pytest.approx(d_sum)
        assert s.loc[person, "releases"] == sum(person in p for _, _, p, _ in releases)
    # would_exceed agrees with the brute-force totals plus one more 0.5 release for everyone
    check = led.would_exceed(list(s.index), 0.5, 0.0, (1.0, 0.01))
    expect = {
        p
        for p in s.index
        if brute_force_totals(releases, p)[0] + 0.5 > 1.0 * (1 + 1e-9)
        or brute_force_totals(releases, p)[1] > 0.01 * (1 + 1e-9)
    }
    assert set(check.over.index) == expect


# -- neighbour notions -----------------------------------------------------------------------------
def test_add_remove_release_costs_twice_under_substitution() -> None:
    """An add-remove release at (0.5, 1e-6): one row pays (1, (1 + e^0.5) 1e-6) against a
    substitution budget; two rows, four steps: (2, 1e-6 (1 + e^0.5 + e^1 + e^1.5))."""
    led = Ledger()
    led.record("ar", 0.5, 1e-6, ["ann", "bob", "bob"], neighbours="add-remove")
    s = led.spent()
    assert s.loc["ann", "epsilon"] == pytest.approx(1.0)
    assert s.loc["ann", "delta"] == pytest.approx(1e-6 * (1 + math.exp(0.5)))
    assert s.loc["bob", "epsilon"] == pytest.approx(2.0)
    assert s.loc["bob", "delta"] == pytest.approx(
        1e-6 * (1 + math.exp(0.5) + math.exp(1) + math.exp(1.5))
    )
    # an add-remove release at 0.5 is 1.0 under substitution (it was charged 0.5): a second
    # one takes ann to 2 > 1.5
    assert led.would_exceed(["ann"], 0.5, 0.0, "1.5", neighbours="add-remove")
    assert not led.would_exceed(["ann"], 0.5, 0.0, "2,1e-5", neighbours="add-remove")
    # on an add-remove ledger the same release costs its own (0.5, 1e-6) per row
    own = Ledger(neighbours="add-remove")
    own.record("ar", 0.5, 1e-6, ["ann"], neighbours="add-remove")
    assert own.spent().loc["ann", "epsilon"] == 0.5


def test_the_conversion_is_what_a_mechanism_meets() -> None:
    """The factor 2 is not slack: the geometric mechanism (two-sided, P(z) ~ e^(-eps |z|)) on
    a 2-cell histogram at add-remove sensitivity 1 is eps-DP when a row is added or removed,
    and exactly 2 eps-DP when a row moves from one cell to the other (a substitution). Worst
    log-ratio of the exact output pmfs over a grid of outputs."""
    eps = 0.7

    def log_pmf(out: tuple[int, int], counts: tuple[int, int]) -> float:
        return -eps * sum(abs(o - c) for o, c in zip(out, counts, strict=True))

    grid = [(a, b) for a in range(-6, 12) for b in range(-6, 12)]
    d, removed, substituted = (3, 2), (2, 2), (2, 3)
    worst_remove = max(abs(log_pmf(o, d) - log_pmf(o, removed)) for o in grid)
    worst_substitute = max(abs(log_pmf(o, d) - log_pmf(o, substituted)) for o in grid)
    assert worst_remove == pytest.approx(eps)
    assert worst_substitute == pytest.approx(2 * eps)
    led = Ledger()
    led.record("geometric", eps, 0.0, ["p"], neighbours="add-remove")
    assert led.spent().loc["p", "epsilon"] == pytest.approx(worst_substitute)


def test_substitution_release_refused_on_an_add_remove_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ar.json"
    led = Ledger.load(path, create=True, neighbours="add-remove")
    led.record("A", 0.5, 0.0, ["ann"], neighbours="add-remove")
    before = path.read_bytes()
    with pytest.raises(ParameterError, match="number of rows"):
        led.record("B", 0.5, 0.0, ["ann"], neighbours="substitution")
    assert path.read_bytes() == before and len(led.entries) == 1
    assert json.loads(before)["neighbours"] == "add-remove"
    # the ledger keeps its notion: asking for another one is refused
    with pytest.raises(ParameterError, match="add-remove"):
        Ledger.load(path, neighbours="substitution")


@pytest.mark.parametrize("notion", ["sensitive-value", "label", "user-level"])
def test_other_notions_refused_on_every_ledger(notion: str) -> None:
    for ledger_notion in ("substitution", "add-remove"):
        led = Ledger(neighbours=ledger_notion)
        with pytest.raises(ParameterError, match="substitution or add-remove"):
            led.record("rr", 0.5, 0.0, ["ann"], neighbours=notion)
        assert led.entries == [] and led.people == []
    with pytest.raises(ParameterError):
        Ledger(neighbours=notion)


# -- never NaN, never an overflow ------------------------------------------------------------------
def test_many_rows_of_a_pure_release_cost_no_delta() -> None:
    """A person with many rows in a pure-DP release had delta 0 * inf = NaN,
    and a later Gaussian release was admitted over the delta budget."""
    led = Ledger()
    led.record("pure", 1.0, 0.0, ["p"] * 1000)
    s = led.spent()
    assert s.loc["p", "delta"] == 0.0 and s.loc["p", "epsilon"] == 1000.0
    assert led.would_exceed(["p"], 0.1, 1e-6, (2000.0, 1e-7))  # the Gaussian's delta is over
    assert not led.would_exceed(["p"], 0.1, 1e-8, (2000.0, 1e-7))


def test_epsilon_of_710_and_more(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """e^710 is no float: math.exp raised OverflowError in the ledger and in every later
    command on it. Now the totals saturate at inf and the file stays readable."""
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    led.record("huge", 710.0, 1e-9, ["a", "a", "b"])
    led.record("huger", 1e308, 0.0, ["c", "c"])
    back = Ledger.load(path)
    s = back.spent()
    assert s.loc["a", "epsilon"] == 1420.0 and s.loc["a", "delta"] == math.inf
    assert s.loc["b", "delta"] == pytest.approx(1e-9)
    assert s.loc["c", "epsilon"] == math.inf and s.loc["c", "delta"] == 0.0
    assert not s.isna().any().any()
    assert back.would_exceed(["b"], 1.0, 0.0, 1e6)
    code, out, err = run_cli(monkeypatch, capsys, "budget", path, "--budget", "1")
    assert code == 1, err
    assert "nan" not in out.lower() and "inf" in out


# -- the file: round trip, atomic, sealed, strict --------------------------------------------------
def test_round_trip_and_seal(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    assert not path.exists()  # nothing written until something is recorded
    led.record("A", 0.5, 1e-7, ["ann", "bob"], path="/rel/A", digest="sha256:" + "a" * 64)
    back = Ledger.load(path)
    assert back.spent().equals(led.spent())
    assert back.entries[0].path == "/rel/A" and back.entries[0].digest == "sha256:" + "a" * 64
    doc = json.loads(path.read_text())
    assert doc["format"] == "kerckhoffs-ledger" and doc["version"] == 3
    assert doc["neighbours"] == "substitution"
    assert doc["releases"][0]["neighbours"] == "substitution"
    # an edit that gives budget back (0.5 -> 0.1) is refused
    path.write_text(path.read_text().replace('"epsilon":0.5', '"epsilon":0.1'))
    with pytest.raises(InputError, match="changed outside kerckhoffs"):
        Ledger.load(path)


def seal(text: str) -> bytes:
    """A ledger file's bytes sealed as the format says: the SHA-256 of the text with the
    placeholder where the digest goes (what someone re-sealing an edit would do)."""
    raw = text.encode("utf-8")
    assert raw.count(manifest.PLACEHOLDER.encode()) == 1
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    return raw.replace(manifest.PLACEHOLDER.encode(), digest.encode())


def v2_text(releases: str, *, version: str = "2", people: str = '["ann","bob"]') -> str:
    return (
        f'{{"format":"kerckhoffs-ledger","version":{version},"composition":"basic",'
        f'"neighbours":"substitution","people":{people},"releases":{releases},'
        f'"integrity":"{manifest.PLACEHOLDER}"}}\n'
    )


def entry_text(
    members: str = "[0,1]", epsilon: str = "0.5", neighbours: str = "substitution"
) -> str:
    return (
        f'{{"name":"A","path":null,"digest":null,"epsilon":{epsilon},"delta":0.0,'
        f'"neighbours":"{neighbours}","recorded":"","members":{members}}}'
    )


def test_a_resealed_file_of_our_own_format_is_read(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(seal(v2_text(f"[{entry_text()}]")))
    assert Ledger.load(path).spent()["epsilon"].to_dict() == {"ann": 0.5, "bob": 0.5}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # JSON keeps the last of two "releases": the second (empty) one would give budget back
        (
            v2_text(f'[{entry_text()}],"releases":[]'),
            "'releases' is given twice",
        ),
        (v2_text(f"[{entry_text(members='[0.0,1]')}]"), "members must be a list of integers"),
        (v2_text(f"[{entry_text(members='[true,1]')}]"), "members must be a list of integers"),
        (v2_text(f"[{entry_text(members='[0,7]')}]"), "not a person of the ledger"),
        (v2_text(f"[{entry_text()}]", version="true"), "version True"),
        (v2_text(f"[{entry_text()}]", version="2.0"), "version 2.0"),
        (v2_text(f"[{entry_text(epsilon='NaN')}]"), "NaN"),
        (v2_text(f"[{entry_text(epsilon='1' + '0' * 400)}]"), "epsilon is out of range"),
        (v2_text(f"[{entry_text(epsilon='-1')}]"), "epsilon"),
        (v2_text(f"[{entry_text(neighbours='sensitive-value')}]"), "sensitive-value"),
        (v2_text("[]", people='["ann",3]'), "'people' must be a list of texts"),
        (v2_text("[]", people='["ann","ann"]'), "listed twice"),
        (v2_text("[]", people="[" * 100_000 + "]" * 100_000), "nested too deeply"),
    ],
)
def test_strict_reading_of_a_resealed_file(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(seal(text))
    with pytest.raises(InputError, match="ledger") as exc:
        Ledger.load(path)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_substitution_entry_on_an_add_remove_ledger_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    text = v2_text(f"[{entry_text()}]").replace(
        '"neighbours":"substitution","people"', '"neighbours":"add-remove","people"'
    )
    path.write_bytes(seal(text))
    with pytest.raises(InputError, match="cannot hold"):
        Ledger.load(path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "not valid JSON"),
        (b"{truncated", "not valid JSON"),
        (b'{"format": "other"}', "not a kerckhoffs ledger"),
        (b'{"format": "kerckhoffs-ledger", "version": 99}', "version 99"),
        (b'{"format": "kerckhoffs-ledger", "version": 2}', "integrity record is missing"),
    ],
)
def test_bad_ledger_files(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words) as exc:
        Ledger.load(path)
    assert "\n" not in str(exc.value)


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (TimeoutError) instead of hanging when the block takes longer than ``seconds``."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with within(10), pytest.raises(InputError, match="not a regular file"):
            Ledger.load(path)
        with within(10):
            code, _, err = run_cli(monkeypatch, capsys, "budget", path)
        assert code == 2 and "not a regular file" in err and err.count("\n") == 1


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


# -- a ledger behind a symbolic link; file modes ---------------------------------------------------
def test_a_ledger_behind_a_symlink_is_one_ledger(tmp_path: Path) -> None:
    real_dir = tmp_path / "vault"
    real_dir.mkdir()
    real = real_dir / "ledger.json"
    link = tmp_path / "ledger.json"
    link.symlink_to(real)
    Ledger.load(link, create=True).record("A", 0.5, 0.0, ["ann"])
    assert link.is_symlink() and real.is_file()
    Ledger.load(real).record("B", 0.25, 0.0, ["ann"])
    Ledger.load(link).record("C", 0.25, 0.0, ["ann"])
    assert link.is_symlink()
    assert Ledger.load(real).spent().loc["ann", "epsilon"] == 1.0
    # one lock for both names: beside the real file
    with lock(link):
        assert (real_dir / ".ledger.json.kerckhoffs-lock").exists()
        assert not (tmp_path / ".ledger.json.kerckhoffs-lock").exists()
        with lock(real):  # the same lock (re-entrant in this process), not a second one
            pass
    assert sorted(p.name for p in real_dir.iterdir()) == ["ledger.json"]


def test_private_files_are_0600_and_keep_their_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "l.json"
        led = Ledger.load(path, create=True)
        led.record("A", 0.5, 0.0, ["ann"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        path.chmod(0o640)  # the owner's choice
        led.record("B", 0.5, 0.0, ["ann"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
        path.chmod(0o600)
        Ledger.load(path).record("C", 0.5, 0.0, ["ann"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # was rewritten 0644
    finally:
        os.umask(old)


# -- version 1 ledgers -----------------------------------------------------------------------------
def v1_file(path: Path) -> None:
    """A version-1 ledger as kerckhoffs wrote it before entries recorded their notion."""
    text = (
        '{"format":"kerckhoffs-ledger","version":1,"composition":"basic",'
        '"people":["ann","bob"],"releases":[{"name":"old","path":"/r/old","digest":null,'
        '"epsilon":0.5,"delta":1e-06,"recorded":"2025-01-01T00:00:00Z","members":[0,1,1]}],'
        f'"integrity":"{manifest.PLACEHOLDER}"}}\n'
    )
    path.write_bytes(seal(text))


def test_version_1_is_read_and_charged_conservatively(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "l.json"
    v1_file(path)
    led = Ledger.load(path)
    assert led.legacy and led.neighbours == "substitution"
    assert led.entries[0].neighbours == "unknown"
    s = led.spent()
    # unknown notion: charged as add-remove converted to substitution, the larger charge
    assert s.loc["ann", "epsilon"] == pytest.approx(1.0)
    assert s.loc["ann", "delta"] == pytest.approx(1e-6 * (1 + math.exp(0.5)))
    assert s.loc["bob", "epsilon"] == pytest.approx(2.0)
    code, out, err = run_cli(monkeypatch, capsys, "budget", path)
    assert code == 0, err
    assert "older kerckhoffs" in " ".join(out.split()) and "conservatively" in out
    led.record("new", 0.25, 0.0, ["ann"])
    doc = json.loads(path.read_text())
    assert doc["version"] == 3
    assert [e["neighbours"] for e in doc["releases"]] == ["unknown", "substitution"]
    assert Ledger.load(path).spent().loc["ann", "epsilon"] == pytest.approx(1.25)


# -- the command line: the DP publication transaction ----------------------------------------------
ROWS = "pid,age,sex,disease\n007,30,M,flu\nP2,31,F,cold\nP3,32,M,flu\nP4,33,F,hiv\nP2,34,F,cold\n"
SCHEMA_TOML = (
    '[columns.pid]\nrole = "identifier"\n[columns.age]\nrole = "quasi"\nkind = "categorical"\n'
    '[columns.sex]\nrole = "quasi"\n[columns.disease]\nrole = "sensitive"\n'
)


def errors(err: str) -> int:
    """How many lines of stderr are errors (notes may precede the one error line)."""
    assert "Traceback" not in err
    return sum(line.startswith("error:") for line in err.splitlines())


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "h.csv"
    f.write_text(ROWS)
    s = tmp_path / "s.toml"
    s.write_text(SCHEMA_TOML)
    return f, s


def anonymize(monkeypatch, capsys, data, out, *extra, eps="0.5"):  # type: ignore[no-untyped-def]
    f, s = data
    return run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "dp-histogram", "-m", f"dp={eps}",
        "-O", "levels=age:1,sex:1", "-o", out, "--format", "csv", *extra,
    )  # fmt: skip


def test_anonymize_records_before_publishing(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    ledger = tmp_path / "private" / "ledger.json"
    ledger.parent.mkdir()
    seen: list[bool] = []
    save = Ledger.save

    def spy(self: Ledger, path: Path | None = None) -> Path:
        seen.append((tmp_path / "r1").exists())  # is the release in place while charged?
        return save(self, path)

    monkeypatch.setattr(Ledger, "save", spy)
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert seen == [False]  # write-ahead: charged first, then published
    assert "a new ledger starts there" in err and "recorded epsilon=0.5" in out
    led = Ledger.load(ledger)
    # "007" kept as written (not 7); P2 has two rows: 2 * 0.5
    assert led.spent()["epsilon"].to_dict() == {"007": 0.5, "P2": 1.0, "P3": 0.5, "P4": 0.5}
    entry = led.entries[0]
    meta = json.loads((tmp_path / "r1" / "release.json").read_text())
    assert entry.name == "r1" and entry.digest == meta["integrity"]
    assert entry.path == str((tmp_path / "r1").resolve()) and entry.neighbours == "substitution"
    assert "007" not in (tmp_path / "r1" / "counts.csv").read_text()  # ids never published
    assert stat.S_IMODE(ledger.stat().st_mode) == 0o600


def test_people_over_budget_are_left_out(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """An individual filter: P2 (two rows) reaches 1.0 in the first release; in the second,
    P2 would reach 2.0 > 1 and is left out (charged nothing), the others reach exactly 1.0
    and are charged. Nothing printed names P2 or says how many were left out."""
    ledger = tmp_path / "l.json"
    assert anonymize(monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger,
                     "--budget", "1")[0] == 0  # fmt: skip
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r2", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert (tmp_path / "r2" / "release.json").is_file()
    led = Ledger.load(ledger)
    second = led.entries[1]
    assert sorted(led.people[i] for i in second.members) == ["007", "P3", "P4"]
    assert led.spent()["epsilon"].to_dict() == {"007": 1.0, "P2": 1.0, "P3": 1.0, "P4": 1.0}
    text = (out + err).replace(str(tmp_path), "")
    assert "P2" not in text and "left out" not in text and "people" not in text
    meta = (tmp_path / "r2" / "release.json").read_text()
    assert "P2" not in meta and "left" not in meta
    # a third release: everyone is at the budget, so everyone is left out and it is still
    # published (its existence says nothing about who is in the data), charging nobody
    code, _, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r3", "--ledger", ledger, "--budget", "1"
    )
    assert code == 0, err
    assert Ledger.load(ledger).entries[2].members.size == 0


def test_a_release_appears_whether_or_not_an_exhausted_person_is_in_it(  # type: ignore[no-untyped-def]
    data, tmp_path, monkeypatch, capsys
) -> None:
    """A refusal revealed membership: P1 at budget 1; a table holding P1 and the same table
    without P1 are both published, with the same files and the same output lines."""
    f, _ = data
    ledger = tmp_path / "l.json"
    led = Ledger.load(ledger, create=True)
    led.record("earlier", 1.0, 0.0, ["P1"])
    f.write_text(ROWS + "P1,35,M,flu\n")
    with_p1 = anonymize(monkeypatch, capsys, data, tmp_path / "with", "--ledger", ledger,
                        "--budget", "1")  # fmt: skip
    f.write_text(ROWS)
    without = anonymize(monkeypatch, capsys, data, tmp_path / "without", "--ledger", ledger,
                        "--budget", "1")  # fmt: skip
    assert with_p1[0] == without[0] == 0, (with_p1, without)

    def shape(text: str) -> str:  # the words, numbers, paths and line breaks aside (the
        # paths differ in length, so the lines wrap at different words)
        return "".join(c for c in text if c.isalpha())

    assert shape(with_p1[1].replace("with", "X")) == shape(without[1].replace("without", "X"))
    files = [sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("with", "without")]
    assert files[0] == files[1]
    assert Ledger.load(ledger).spent().loc["P1", "epsilon"] == 1.0  # charged nothing more


def test_over_budget_refuse_refuses_the_whole_release(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    ledger = tmp_path / "l.json"
    assert anonymize(monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger,
                     "--budget", "1")[0] == 0  # fmt: skip
    before = ledger.read_bytes()
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "r2", "--ledger", ledger,
                             "--budget", "1", "--over-budget", "refuse")  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: release r2") and "over the budget" in err and "P2" in err
    assert ledger.read_bytes() == before and not (tmp_path / "r2").exists()


def test_individual_filter_keeps_n_under_substitution_and_removes_under_add_remove() -> None:
    """Left-out rows: under substitution replaced (n kept) by records drawn uniformly from the
    public domain (the hierarchy's leaves), whatever the rows held; under add-remove
    removed. A chi-square-style bound on 6,000 replaced rows over the 13 diseases."""
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.dp.individual_filter import with_public_records, without_rows

    df = generate_hospital(6000, 0)
    df["disease"] = df["disease"].iloc[0]  # every row the same disease: nothing to copy
    table = Table.encode(df, hospital_schema())
    everyone = np.ones(table.n, dtype=bool)
    replaced = with_public_records(table, everyone)
    assert replaced.n == table.n
    leaves = len(table.sa_column.hierarchy.leaves)
    counts = np.bincount(replaced.sa, minlength=leaves)
    expected = table.n / leaves
    assert (np.abs(counts - expected) < 5 * math.sqrt(expected)).all(), counts
    zip_j = replaced.qi_names.index("zip")
    zips = np.bincount(replaced.qi[:, zip_j], minlength=table.qi_columns[zip_j].size)
    assert (zips > 0).mean() > 0.9  # spread over the zip leaves, not the data's values
    half = np.arange(table.n) % 2 == 0
    kept = with_public_records(table, half)
    assert (kept.qi[~half] == table.qi[~half]).all() and (kept.sa[~half] == table.sa[~half]).all()
    assert without_rows(table, half).n == table.n - int(half.sum())


def test_numeric_column_with_a_hierarchy_file_draws_from_its_leaves(tmp_path: Path) -> None:
    """A numeric column's codes are the ranks of the values present; its replaced rows draw
    from the hierarchy file's leaves, values no row holds included."""
    h = tmp_path / "age.csv"
    h.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)))
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\nhierarchy = "age.csv"\n'
        '[columns.d]\nrole = "sensitive"\n'
    )
    schema = Schema.from_toml(toml)
    from kerckhoffs.dp.individual_filter import with_public_records

    df = pd.DataFrame({"age": [30] * 400, "d": ["x", "y"] * 200})
    table = Table.encode(df, schema)
    out = with_public_records(table, np.ones(table.n, dtype=bool))
    values = set(out.decode_qi(0).tolist())
    assert len(values) > 30 and values <= set(range(20, 60))


# a stand-in DP algorithm: a real DP count table of a fixed table, whatever its input holds, that
# states the epsilon of its dp= model and a neighbour notion chosen by the test
FIXED = pd.DataFrame({"a": ["x", "y", "x"], "d": ["u", "v", "v"]})
FIXED_SCHEMA = Schema.build(["a"], "d")


def stub_dp(table, models, *, seed=None, notion="substitution"):  # type: ignore[no-untyped-def]
    target = next(m for m in models if isinstance(m, DifferentialPrivacy))
    fixed = Table.encode(FIXED, FIXED_SCHEMA)
    release = dp_histogram(fixed, target.epsilon, levels="a:1", models=models)
    if notion != "substitution":  # a notion no shipped algorithm states (yet)
        release = dataclasses.replace(
            release,
            noise=dataclasses.replace(
                release.noise, neighbours=types.SimpleNamespace(value=notion)
            ),
        )
    return release


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        REGISTRY,
        "dp-stub",
        AlgorithmInfo(
            "dp-stub", stub_dp, "stub", ("DifferentialPrivacy",), schemes=(Scheme.DP,),
            options={"notion": "the notion the release states"}, seedable=False,
        ),
    )  # fmt: skip


def test_rows_dropped_for_missing_values_are_charged(stub, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """A row dropped by ``missing = "drop"`` decided the output too (by being
    dropped): its person pays."""
    f = tmp_path / "h.csv"
    f.write_text(ROWS + "P9,,M,flu\n")
    s = tmp_path / "s.toml"
    s.write_text('missing = "drop"\n' + SCHEMA_TOML)
    ledger = tmp_path / "l.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "dp-stub", "-m", "dp=0.5", "-o",
        tmp_path / "r", "--ledger", ledger,
    )  # fmt: skip
    assert code == 0, err
    assert Ledger.load(ledger).spent().loc["P9", "epsilon"] == 0.5


def test_a_release_under_another_notion_is_refused(stub, data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """A release DP only when the sensitive value changes (label DP, as dp-rr publishes) is
    charged nowhere: one line, nothing written, no ledger made."""
    f, s = data
    ledger = tmp_path / "l.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "dp-stub", "-m", "dp=0.5", "-O",
        "notion=sensitive-value", "-o", tmp_path / "r", "--ledger", ledger,
    )  # fmt: skip
    assert code == 2 and errors(err) == 1 and "sensitive-value" in err, err
    assert not (tmp_path / "r").exists() and not ledger.exists()


def test_add_remove_ledger(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    ledger = tmp_path / "ar.json"
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger, "--ledger-neighbours",
        "add-remove", "-O", "neighbours=add-remove",
    )  # fmt: skip
    assert code == 0, err
    assert "add-remove neighbours" in out
    led = Ledger.load(ledger)
    assert led.neighbours == "add-remove" and led.spent().loc["P3", "epsilon"] == 0.5
    before = ledger.read_bytes()
    # a substitution release (dp-histogram's default) cannot be charged to it: before any work
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "r2", "--ledger", ledger)
    assert code == 2 and "number of rows" in err and err.count("\n") == 1
    assert ledger.read_bytes() == before and not (tmp_path / "r2").exists()
    # an existing ledger keeps its notion
    code, _, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r2", "--ledger", ledger, "--ledger-neighbours",
        "substitution", "-O", "neighbours=add-remove",
    )  # fmt: skip
    assert code == 2 and "keeps its budget under add-remove" in err
    # an add-remove release on a substitution ledger: charged 2 epsilon a row
    sub = tmp_path / "sub.json"
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "r3", "--ledger", sub,
                             "-O", "neighbours=add-remove")  # fmt: skip
    assert code == 0, err
    assert Ledger.load(sub).spent()["epsilon"].to_dict() == {
        "007": 1.0, "P2": 2.0, "P3": 1.0, "P4": 1.0
    }  # fmt: skip


def test_anonymize_ledger_refusals(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    f, s = data
    ledger = tmp_path / "l.json"
    out = tmp_path / "rel"
    # a release that does not state its loss
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", f, "-s", s, "-a", "mondrian", "-m", "k=2", "-o", out,
        "--ledger", ledger,
    )  # fmt: skip
    assert code == 2 and "--ledger needs a DP release" in err
    assert not out.exists() and not ledger.exists()
    # the ledger inside the release directory would publish people's ids
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", out / "l.json")
    assert code == 2 and "must never be published" in err
    # --budget alone, --over-budget without --budget, a bad --over-budget
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--budget", "1")
    assert code == 2 and "--budget needs --ledger" in err
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger,
                             "--over-budget", "refuse")  # fmt: skip
    assert code == 2 and "--over-budget needs --budget" in err
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger,
                             "--budget", "1", "--over-budget", "maybe")  # fmt: skip
    assert code == 2 and "--over-budget maybe" in err
    # a damaged ledger: one line, nothing written
    ledger.write_text("{}")
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger)
    assert code == 2 and "not a kerckhoffs ledger" in err and not out.exists()
    ledger.unlink()
    # no identifier column
    s.write_text(
        '[columns.age]\nrole = "quasi"\nkind = "categorical"\n[columns.sex]\nrole = "quasi"\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    code, _, err = anonymize(monkeypatch, capsys, data, out, "--ledger", ledger)
    assert code == 2 and "no column of role identifier" in err
    assert not out.exists() and not ledger.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "s.toml"]


def test_ledger_or_providers_file_in_another_release_folder_is_refused(  # type: ignore[no-untyped-def]
    data, tmp_path, monkeypatch, capsys
) -> None:
    """Only the current --out was guarded; a ledger written into another release's
    folder is published by whoever copies that folder."""
    assert anonymize(monkeypatch, capsys, data, tmp_path / "old")[0] == 0
    before = sorted(p.name for p in (tmp_path / "old").iterdir())
    for target in (tmp_path / "old" / "ledger.json", tmp_path / "old" / "sub" / "l.json"):
        code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "new", "--ledger", target)
        assert code == 2 and "release.json" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == before
    assert not (tmp_path / "new").exists()


def test_overwrite_with_a_failed_charge_keeps_the_previous_release(  # type: ignore[no-untyped-def]
    data, tmp_path, monkeypatch, capsys
) -> None:
    """The previous, recorded release was deleted when the new one's charge failed.
    Write-ahead: the charge fails before anything is renamed, so it stays as it was."""
    ledger = tmp_path / "l.json"
    rel = tmp_path / "rel"
    assert anonymize(monkeypatch, capsys, data, rel, "--ledger", ledger)[0] == 0
    before = {p.name: p.read_bytes() for p in rel.iterdir()}
    ledger_before = ledger.read_bytes()

    def boom(self: Ledger) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Ledger, "to_bytes", boom)
    code, _, err = anonymize(monkeypatch, capsys, data, rel, "--ledger", ledger, "--overwrite")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "No space left" in errors[0]
    assert {p.name: p.read_bytes() for p in rel.iterdir()} == before
    assert ledger.read_bytes() == ledger_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "l.json", "rel", "s.toml"]


def test_a_charge_without_a_release_is_said(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """The rename into place fails after the charge: the safe failure, and the error says so."""
    import kerckhoffs.data.output as output

    ledger = tmp_path / "l.json"
    real_replace = os.replace

    def failing(src, dst):  # type: ignore[no-untyped-def]
        if Path(dst) == tmp_path / "rel":
            raise OSError(5, "Input/output error", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(output.os, "replace", failing)
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "rel", "--ledger", ledger)
    monkeypatch.setattr(output.os, "replace", real_replace)
    assert code == 2 and errors(err) == 1
    assert "charges the release" in err and "was not published" in err
    assert not (tmp_path / "rel").exists()
    assert len(Ledger.load(ledger).entries) == 1  # the safe failure: spent, nothing out
    code, out, _ = run_cli(monkeypatch, capsys, "budget", ledger)
    assert code == 0 and "charged but never published" in " ".join(out.split())


# -- leftovers of killed runs; providers files -----------------------------------------------------
def test_leftovers_of_a_killed_run_are_cleaned_by_the_next(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """A staging folder, lock files and a ledger's temporary file left by kill -9
    are removed by the next run writing there (under its locks); what is not ours stays."""
    (tmp_path / ".rel.kerckhoffs-staging-abcd1234").mkdir()
    (tmp_path / ".rel.kerckhoffs-staging-abcd1234" / "counts.csv").write_text("x\n")
    (tmp_path / ".rel.kerckhoffs-lock").write_text("")
    (tmp_path / ".l.json.kerckhoffs-lock").write_text("")
    (tmp_path / ".l.json.kerckhoffs-tmp-zz9_k2ab").write_text("{partial")
    (tmp_path / ".rel.kerckhoffs-staging-mine").mkdir()  # not a name we make: stays
    code, _, err = anonymize(monkeypatch, capsys, data, tmp_path / "rel", "--ledger",
                             tmp_path / "l.json")  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".rel.kerckhoffs-staging-mine", "h.csv", "l.json", "rel", "s.toml"
    ]  # fmt: skip


def test_a_previous_release_moved_aside_is_put_back(data, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """Killed between moving the previous release aside and renaming the new one in: the next
    run that claims the target finds it empty and puts the previous release back."""
    from kerckhoffs.data.output import output_directory

    rel = tmp_path / "rel"
    assert anonymize(monkeypatch, capsys, data, rel)[0] == 0
    before = {p.name: p.read_bytes() for p in rel.iterdir()}
    rel.rename(tmp_path / ".rel.kerckhoffs-old-x1y2z3w4")
    with output_directory(rel, overwrite=True):
        pass
    assert {p.name: p.read_bytes() for p in rel.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "rel", "s.toml"]


def test_provider_rows_refusals_before_any_work(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """A DP algorithm with --provider-rows wrote the release, charged the ledger,
    then failed; --out a/b --provider-rows a left the release and named a temporary path."""
    from kerckhoffs.datasets import generate_hospital

    root = Path(__file__).resolve().parents[1] / "examples" / "demo"
    df = generate_hospital(60, 0)
    df["provider"] = [f"H{i % 3}" for i in range(len(df))]
    df.to_csv(tmp_path / "d.csv", index=False)
    monkeypatch.chdir(tmp_path)
    base = ["anonymize", "d.csv", "-s", root / "schema_providers.toml"]
    code, _, err = run_cli(
        monkeypatch, capsys, *base, "-a", "dp-histogram", "-m", "dp=1", "-O",
        "levels=age:4,sex:1,zip:1,nationality:1", "-o", "r", "--provider-rows", "p.csv",
        "--ledger", "l.json",
    )  # fmt: skip
    assert code == 2 and "no rows to list" in err and err.count("\n") == 1
    code, _, err = run_cli(monkeypatch, capsys, *base, "-a", "mondrian", "-m", "k=3",
                           "-o", "a/b", "--provider-rows", "a")  # fmt: skip
    assert code == 2 and "--provider-rows a" in err and err.count("\n") == 1
    assert ".kerckhoffs-tmp" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]
    # written 0600, and rewritten keeping its mode
    old = os.umask(0o022)
    try:
        args = [*base, "-a", "mondrian", "-m", "k=3", "--provider-rows", "p.csv"]
        assert run_cli(monkeypatch, capsys, *args, "-o", "r1")[0] == 0
        assert stat.S_IMODE((tmp_path / "p.csv").stat().st_mode) == 0o600
        (tmp_path / "p.csv").chmod(0o640)
        assert run_cli(monkeypatch, capsys, *args, "-o", "r2", "--overwrite")[0] == 0
        assert stat.S_IMODE((tmp_path / "p.csv").stat().st_mode) == 0o640
        code, _, err = run_cli(monkeypatch, capsys, *base, "-a", "mondrian", "-m", "k=3",
                               "-o", "r3", "--provider-rows", "r1/p.csv")  # fmt: skip
        assert code == 2 and "release.json" in err
    finally:
        os.umask(old)


# -- the budget command ----------------------------------------------------------------------------
def test_budget_command(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    led.record("A", 0.5, 0.0, ["ann", "bob", "cid"])
    led.record("B", 0.25, 1e-6, ["bob", "cid", "dan"])
    led.record("C", 1.0, 0.0, ["cid"])
    code, out, err = run_cli(monkeypatch, capsys, "budget", path, "--worst", "2")
    assert code == 0, err
    assert "3 release(s), 4 people" in out and "substitution neighbours" in out
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


def test_budget_quantiles_and_histogram_with_infinite_totals(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    path = tmp_path / "l.json"
    led = Ledger.load(path, create=True)
    led.record("many", 0.5, 0.0, [f"p{i}" for i in range(20) for _ in range(i + 1)])
    led.record("huge", 1e308, 0.0, ["p0", "p0", "p1", "p1"])
    code, out, err = run_cli(monkeypatch, capsys, "budget", path)
    assert code == 0, err
    assert "nan" not in out.lower()
    hist = out[out.index("epsilon spent") :]
    assert "inf" in hist


def test_budget_command_errors(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    code, _, err = run_cli(monkeypatch, capsys, "budget", tmp_path / "none.json")
    assert code == 2 and err == f"error: ledger {tmp_path / 'none.json'}: no such file\n"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    code, _, err = run_cli(monkeypatch, capsys, "budget", bad)
    assert code == 2 and "not valid JSON" in err and err.count("\n") == 1
    code, _, err = run_cli(monkeypatch, capsys, "budget", bad, "--budget", "x")
    assert code == 2 and "budget 'x'" in err


def test_composition_vector_of_two_releases() -> None:
    """Releases (0.5, 0) and (0.3, 1e-6) give (0.8, 1e-6) to the people in both and (0.5, 0)
    to those only in the first (basic composition)."""
    led = Ledger()
    led.record("first", 0.5, 0.0, ["ann", "bob", "cid"])
    led.record("second", 0.3, 1e-6, ["bob", "cid"])
    s = led.spent()
    assert s.loc["bob", "epsilon"] == pytest.approx(0.8) and s.loc["bob", "delta"] == 1e-6
    assert s.loc["cid", "epsilon"] == pytest.approx(0.8) and s.loc["cid", "delta"] == 1e-6
    assert (s.loc["ann", "epsilon"], s.loc["ann", "delta"]) == (0.5, 0.0)


def test_docstring_examples_run() -> None:
    """The examples of :class:`Ledger` and :func:`kerckhoffs.publish` run as written."""
    import doctest

    import kerckhoffs.dp.ledger
    import kerckhoffs.dp.publish

    for module in (kerckhoffs.dp.ledger, kerckhoffs.dp.publish):
        failed, tried = doctest.testmod(module)
        assert tried > 0 and failed == 0, module.__name__


def test_anonymize_with_a_bound_charges_p2_once_and_budget_shows_the_measure(  # type: ignore[no-untyped-def]
    data, tmp_path, monkeypatch, capsys
):
    """``-O contributions=2`` with ``--ledger``: the release keeps at most two rows of each
    person (P2 has two), computes its map at two rows, and P2 pays once (not 2 x 0.5 as in
    :func:`test_anonymize_records_before_publishing`). Without --ledger there are no ids to
    bound by: one error line, nothing written."""
    ledger = tmp_path / "l.json"
    code, out, err = anonymize(
        monkeypatch, capsys, data, tmp_path / "r1", "--ledger", ledger, "--budget", "1",
        "-O", "contributions=2",
    )  # fmt: skip
    assert code == 0, err
    led = Ledger.load(ledger)
    assert led.entries[0].contributions == 2
    assert led.spent()["epsilon"].to_dict() == pytest.approx(
        {"007": 0.5, "P2": 0.5, "P3": 0.5, "P4": 0.5}
    )
    meta = json.loads((tmp_path / "r1" / "release.json").read_text())
    assert meta["dp"]["contributions"] == 2 and meta["dp"]["sensitivity"] == 4
    code, out, err = run_cli(monkeypatch, capsys, "budget", ledger)
    assert code == 0, err
    assert "pure" in out and "rows/person" in " ".join(out.split())
    code, out, err = anonymize(monkeypatch, capsys, data, tmp_path / "r2", "-O", "contributions=2")
    assert code == 2 and errors(err) == 1 and "identifier column" in err
    assert not (tmp_path / "r2").exists()
