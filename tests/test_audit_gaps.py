"""An attack that could not run is a gap in the audit, never an abort nor a pass.

- ``kh.audit`` lists an attack that could not run (its own error, from judging whether it
  applies or from running) and runs every other one; the verdict is INCOMPLETE naming it, or
  UNSAFE when another attack disclosed; a bug in an attack still surfaces.
- The disclosure-set attack (paper 002) runs on a naive ``lattice`` release read from files
  when the population's QIs and the schema are given, and finds what it finds on the release
  in the process that made it (a property test, with a brute-force oracle: every table
  consistent with the release re-run through the lattice publisher).
- An in-process ``sequence`` release is placed by its published cells.
- What the audit and check print of ``sequence`` and DP releases.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kerckhoffs as kh
from budget import examples
from cli_runner import run_cli
from kerckhoffs.algorithms.lattice import Lattice, generalization_sequence
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import ATTACKS, AttackInfo, applicable
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import CannotRun, KerckhoffsError, ParameterError
from kerckhoffs.models import parse_model
from kerckhoffs.release import Release

ROOT = Path(__file__).resolve().parents[1]
DISCLOSURE = ROOT / "examples" / "disclosure"
DEMO_SCHEMA = ROOT / "examples" / "demo" / "schema.toml"

# -- a naive sequence release too large to decide ------------------------------------------------
SEQUENCE = """
[[generalization]]
name = "decades"
age = [[0, 9], [10, 19], [20, 29], [30, 39], [40, 49],
       [50, 59], [60, 69], [70, 79], [80, 89], [90, 99]]

[[generalization]]
name = "twenty-years"
age = [[0, 19], [20, 39], [40, 59], [60, 79], [80, 99]]

[[generalization]]
name = "halves"
age = [[0, 49], [50, 99]]
"""
AGE_SCHEMA = """
[columns.name]
role = "identifier"

[columns.age]
role = "quasi"
kind = "numeric"

[columns.disease]
role = "sensitive"
kind = "categorical"
"""


def too_large_table() -> pd.DataFrame:
    """30 people: ten aged 5, all with flu (so decades and twenty-years fail l=2), ten aged 35
    and ten aged 75 with distinct values. Halves pass; twenty-years could pass on another
    table, so the disclosure set must be enumerated, and its PER set has 20!/10! * 10!
    (about 10^18) tables."""
    ages = [5] * 10 + [35] * 10 + [75] * 10
    values = ["flu"] * 10 + [f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)]
    names = [f"p{i:02d}" for i in range(30)]
    return pd.DataFrame({"name": names, "age": ages, "disease": values})


@pytest.fixture(scope="module")
def too_large(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ws = tmp_path_factory.mktemp("too_large")
    too_large_table().to_csv(ws / "people.csv", index=False)
    (ws / "schema.toml").write_text(AGE_SCHEMA)
    (ws / "sequence.toml").write_text(SEQUENCE)
    rel = kh.anonymize(
        ws / "people.csv",
        schema=ws / "schema.toml",
        algorithm="sequence",
        sequence=str(ws / "sequence.toml"),
        models=["l=2"],
    )
    assert rel.provenance.parameters["released"] == "halves"
    rel.write(ws / "R")
    return {
        "dir": ws,
        "release": ws / "R",
        "people": ws / "people.csv",
        "schema": ws / "schema.toml",
    }


def test_an_attack_too_large_to_run_makes_the_audit_incomplete(too_large: dict[str, Path]) -> None:
    """The audit used to raise the disclosure-set refusal, hiding every other attack."""
    report = kh.audit(
        too_large["release"], knowledge=too_large["people"], schema=too_large["schema"]
    )
    failed = dict(report.failed)
    assert "about 10^18 possible tables" in failed["disclosure-set"]
    assert not report.safe and not report.unsafe
    assert report.verdict.startswith("INCOMPLETE")
    assert "disclosure-set could not run" in report.verdict
    skipped = dict(report.skipped)  # every other attack was considered and says why not
    assert set(skipped) | set(failed) == set(ATTACKS)


def test_the_cli_lists_every_attack_and_exits_1(
    too_large: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "audit",
        "--release",
        too_large["release"],
        "--knowledge",
        too_large["people"],
        "--schema",
        too_large["schema"],
    )
    assert code == 1, err
    assert "error:" not in err
    flat = " ".join(out.split())
    assert "disclosure-set: could not run: the release has about 10^18" in flat
    for name in ATTACKS.keys() - {"disclosure-set"}:
        assert f"{name}: not run:" in flat
    last = out.strip().splitlines()[-1]
    assert last.startswith("INCOMPLETE") and "disclosure-set could not run" in last
    # the header names the candidates, not their bins
    assert "sequence=3 candidates (decades; twenty-years; halves)" in flat
    assert "[0, 9]" not in out and "0+9" not in out


# -- every attack, both steps ---------------------------------------------------------------------
def _result(name: str, disclosed: bool) -> AttackResult:
    tuples = tuple_table(
        np.arange(2), ["a", "b"], [1.0 if disclosed else 0.2, 0.2], [disclosed, False]
    )
    return AttackResult(name, tuples, 2, 0.5)


def _fake(monkeypatch: pytest.MonkeyPatch, name: str, applies: Any, run: Any = None) -> None:
    """Register a fake attack for the length of one test."""
    register_all_first()
    monkeypatch.setitem(
        ATTACKS,
        name,
        AttackInfo(name, run or (lambda r, k, **o: _result(name, False)), "fake", applies),
    )


def register_all_first() -> None:
    from kerckhoffs.attacks import register_all

    register_all()


def _mondrian() -> Release:
    from kerckhoffs.datasets import generate_hospital

    df = generate_hospital(120, seed=3)
    return kh.anonymize(
        df, quasi=["age", "sex"], sensitive="disease", algorithm="mondrian", models=["k=3"]
    )


def _cannot(name: str) -> Any:
    def applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
        raise CannotRun(f"{name}: the files lack what it reads")

    return applies


def test_could_not_run_at_either_step_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An attack's own error, when judging whether it applies or when running, is a gap:
    INCOMPLETE naming it; another attack's disclosure makes the verdict UNSAFE all the same."""

    def boom(releases: Sequence[Release], knowledge: Knowledge, **o: Any) -> AttackResult:
        raise ParameterError("zz-run: too large to decide")

    _fake(monkeypatch, "zz-applies", _cannot("zz-applies"))
    _fake(monkeypatch, "zz-run", lambda r, k: None, boom)
    _fake(monkeypatch, "zz-clean", lambda r, k: None)
    rel = _mondrian()
    report = kh.audit(rel)
    failed = dict(report.failed)
    assert failed == {"zz-applies": "the files lack what it reads", "zz-run": "too large to decide"}
    assert [r.attack for r in report.results] == ["zz-clean"]
    assert report.verdict.startswith("INCOMPLETE")
    assert "zz-applies could not run" in report.verdict and "zz-run could not run" in report.verdict
    # judged with the others by the registry: the error is returned, not raised
    found = {info.name: why for info, why in applicable([rel], Knowledge())}
    assert isinstance(found["zz-applies"], CannotRun) and found["zz-clean"] is None
    # a disclosure elsewhere is UNSAFE, whatever could not run
    _fake(monkeypatch, "zz-leak", lambda r, k: None, lambda r, k, **o: _result("zz-leak", True))
    assert kh.audit(rel).verdict.startswith("UNSAFE: 1 of 2 rows disclosed by zz-leak")
    # kh.attack says why in one error
    with pytest.raises(CannotRun, match="zz-applies: the files lack"):
        kh.attack(rel, "zz-applies")


@pytest.mark.parametrize("step", ["applies", "run"])
def test_a_bug_in_an_attack_still_surfaces(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    def bug(*a: Any, **o: Any) -> Any:
        raise KeyError("a bug")

    if step == "applies":
        _fake(monkeypatch, "zz-bug", bug)
    else:
        _fake(monkeypatch, "zz-bug", lambda r, k: None, bug)
    with pytest.raises(KeyError, match="a bug"):
        kh.audit(_mondrian())


def test_nothing_ran_but_something_could_not_is_incomplete(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(ATTACKS):
        info = ATTACKS[name]
        monkeypatch.setitem(
            ATTACKS, name, AttackInfo(name, info.run, info.summary, lambda r, k: "not this one")
        )
    _fake(monkeypatch, "zz-applies", _cannot("zz-applies"))
    report = kh.audit(_mondrian())
    assert not report.results
    assert report.verdict.startswith("INCOMPLETE: no attack ran to the end")
    assert "zz-applies could not run: the files lack what it reads" in report.verdict


def test_the_registry_sorts_each_reason() -> None:
    """Could not run: the adversary fits, the input lacks what the attack needs. Does not
    apply: another algorithm, or knowledge the adversary is assumed to have is not given."""
    from kerckhoffs.algorithms.lattice import release_at
    from kerckhoffs.algorithms.mask import mask
    from kerckhoffs.data.table import Table
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.models import DistinctLDiversity
    from kerckhoffs.release import Provenance

    register_all_first()
    t = Table.encode(generate_hospital(60, seed=1), hospital_schema())
    lat = release_at(
        t,
        {"age": 3, "zip": 3, "sex": 1, "nationality": 1},
        provenance=Provenance(
            "lattice", {"models": [DistinctLDiversity(2).to_dict()], "levels": {}}
        ),
    )
    with pytest.raises(CannotRun, match=r"minimality: .*distinct l-diversity"):
        ATTACKS["minimality"].applies([lat], Knowledge())
    masked = mask(t, [parse_model("k=5"), parse_model("m=2")], seed=1)
    no_m = Release(
        masked.table,
        masked.partition,
        masked.scheme,
        masked.sa_published,
        Provenance(masked.provenance.algorithm, {}),
    )
    rules = Knowledge.from_path(_rule_file())
    with pytest.raises(CannotRun, match="does not record m"):
        ATTACKS["negative-association"].applies([no_m], rules)
    assert "needs a rule" in (ATTACKS["negative-association"].applies([masked], Knowledge()) or "")


def _rule_file() -> Path:
    import tempfile

    f = Path(tempfile.mkdtemp()) / "k.toml"
    f.write_text('[[rule]]\nvalue = "Flu"\nshare = 0.1\nwhere = { age = { max = 25 } }\n')
    return f


# -- a naive lattice release read from files ------------------------------------------------------
# ten rows of the demo hospital (the QA reproduction): in memory the lattice's l=2 release is
# UNSAFE by disclosure-set (Bronchitis at 6/7 for two people); read from files it said SAFE
LAT_8_10 = """patient_id,age,sex,zip,nationality,disease
P000001,33,M,47524,United States,Bronchitis
P000002,87,F,13035,United States,Flu
P000003,32,F,13058,United States,Bronchitis
P000004,62,F,14801,United States,Gastritis
P000005,83,F,13024,United States,Dyspepsia
P000006,36,F,14850,United States,Flu
P000007,48,F,14856,United States,Gastric ulcer
P000008,38,F,02111,Canada,Bronchitis
P000009,12,M,02113,United States,Bronchitis
P000010,54,F,13021,United States,Diabetes
"""


def test_lattice_from_files_equals_in_memory_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "lat.csv"
    data.write_text(LAT_8_10)
    df = pd.read_csv(data, dtype={"zip": str})
    inside = kh.audit(
        kh.anonymize(df, schema=DEMO_SCHEMA, algorithm="lattice", models=["l=2"]), knowledge=df
    )
    want = "P000001 and P000009 (rows 0 and 8) hold Bronchitis with share 6/7"
    assert inside.verdict.startswith(f"UNSAFE by disclosure-set: {want}")
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "anonymize",
        data,
        "--schema",
        DEMO_SCHEMA,
        "--algorithm",
        "lattice",
        "--model",
        "l=2",
        "--out",
        tmp_path / "R",
    )
    assert code == 0, err
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "audit",
        "--release",
        tmp_path / "R",
        "--knowledge",
        data,
        "--schema",
        DEMO_SCHEMA,
    )
    assert code == 1, err
    last = " ".join(out.split()).split("; knowledge")[-1]
    assert f"UNSAFE by disclosure-set: {want}" in last
    assert "SAFE:" not in out
    # without the schema, the attack fits but cannot place anyone: could not run, INCOMPLETE
    back = Release.from_published(tmp_path / "R")
    report = kh.audit(back, knowledge=df)
    assert "schema" in dict(report.failed)["disclosure-set"]
    assert report.verdict.startswith("INCOMPLETE")
    # a population that is not the released one: could not run, never SAFE
    report = kh.audit(tmp_path / "R", knowledge=df.iloc[1:], schema=DEMO_SCHEMA)
    assert "does not match the release" in dict(report.failed)["disclosure-set"]
    assert not report.safe


FLAT_SCHEMA = {
    "columns": {
        "age": {"role": "quasi", "kind": "numeric", "widths": [2, 4]},
        "sex": {"role": "quasi", "kind": "categorical"},
        "cond": {"role": "sensitive", "kind": "categorical"},
    }
}
MODELS = ("l=2", "l=1.5", "distinct-l=2", "distinct-l=3", "k=2;l=2")


@st.composite
def small_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, str, list[int]]:
    """4-6 rows, two QIs, three values each at most a third of the rows (so the top node
    satisfies every model), one model, and an order of the people."""
    n = draw(st.integers(4, 6))
    ages = draw(st.lists(st.integers(0, 7), min_size=n, max_size=n))
    sexes = draw(st.lists(st.sampled_from("FM"), min_size=n, max_size=n))
    conds = draw(st.permutations(["abc"[i % 3] for i in range(n)]))
    order = draw(st.permutations(range(n)))
    df = pd.DataFrame({"age": ages, "sex": sexes, "cond": conds})
    return df, draw(st.sampled_from(MODELS)), list(order)


def _group_passes(model: str, values: list[int]) -> bool:
    """One group's SA values against the model, from the definitions: k (size), frequency
    l (size at least l times the most frequent value's count), distinct l."""
    counts = Counter(values)
    for part in model.split(";"):
        key, text = part.split("=")
        if key == "k" and len(values) < int(text):
            return False
        if key == "l" and len(values) < Fraction(text) * max(counts.values()):
            return False
        if key == "distinct-l" and len(counts) < int(text):
            return False
    return True


def _brute_force(rel: Release, model: str) -> np.ndarray:
    """Per row, the largest value share over the disclosure set, by its definition: every
    table with the release's SA multiset in each group on which the naive publisher (the first
    node of the public generalization sequence whose every group passes) picks the released
    node."""
    table = rel.table
    lat = Lattice.of(table)
    nodes = generalization_sequence(table)
    labels = [lat.partition(node).group.tolist() for node in nodes]
    released = rel.partition.group.tolist()

    def first_passing(x: tuple[int, ...]) -> int | None:
        for i, lab in enumerate(labels):
            groups: dict[int, list[int]] = {}
            for g, v in zip(lab, x, strict=True):
                groups.setdefault(g, []).append(v)
            if all(_group_passes(model, vals) for vals in groups.values()):
                return i
        return None

    mine = next(i for i, lab in enumerate(labels) if _same_groups(lab, released))
    groups = [np.flatnonzero(rel.partition.group == g) for g in range(rel.partition.n_groups)]
    perms = [sorted(set(itertools.permutations(table.sa[g].tolist()))) for g in groups]
    kept = []
    for combo in itertools.product(*perms):
        x = table.sa.copy()
        for g, vals in zip(groups, combo, strict=True):
            x[g] = vals
        if first_passing(tuple(x.tolist())) == mine:
            kept.append(x)
    ds = np.array(kept)
    return np.array([np.bincount(ds[:, r]).max() / len(ds) for r in range(table.n)])


def _same_groups(a: list[int], b: list[int]) -> bool:
    return len(set(zip(a, b, strict=True))) == len(set(a)) == len(set(b))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_tables())
def test_lattice_from_files_equals_in_memory_and_brute_force(
    case: tuple[pd.DataFrame, str, list[int]],
) -> None:
    """On random small tables: the attack on the release read back from its files, with the
    population's QIs in a random order and the schema, gives every person the shares the
    attack on the release in memory gives its row, which are brute force's."""
    df, model, order = case
    schema = Schema.from_dict(FLAT_SCHEMA)
    models = [parse_model(m) for m in model.split(";")]
    try:
        rel = kh.anonymize(df, schema=schema, algorithm="lattice", models=models)
        inside = kh.attack(rel, "disclosure-set")
    except KerckhoffsError:
        return  # no node satisfies the models, or no disclosure-set check for them
    frames = rel.frames()
    back = Release.from_frames(frames, rel.metadata(rel.check()), schema)
    people = df[["age", "sex"]].iloc[order].reset_index(drop=True)
    files = kh.attack(back, "disclosure-set", knowledge=people, schema=schema)
    by_row = files.tuples.set_index(np.asarray(order)).sort_index()  # person i is row order[i]
    want = inside.tuples.sort_values("row")
    assert np.allclose(by_row["posterior"].to_numpy(), want["posterior"].to_numpy())
    assert by_row["breached"].tolist() == want["breached"].tolist()
    assert files.details["disclosure_size"] == inside.details["disclosure_size"]
    assert np.allclose(want["posterior"].to_numpy(), _brute_force(rel, model))


# -- an in-process sequence release ---------------------------------------------------------------
def test_in_process_sequence_release_is_placed_by_its_cells() -> None:
    """It was refused: 'people fall in group [20-29], which the release does not publish'
    (the people were matched against its original ages, not its published cells)."""
    r = kh.anonymize(
        pd.read_csv(DISCLOSURE / "table1.csv"),
        schema=DISCLOSURE / "schema.toml",
        algorithm="sequence",
        sequence=str(DISCLOSURE / "sequence_by_age.toml"),
        models=["recursive-cl=2,2"],
    )
    people = pd.read_csv(DISCLOSURE / "people.csv")
    report = kh.audit(r, knowledge=DISCLOSURE / "people.csv")
    assert report.verdict.startswith(
        "UNSAFE by disclosure-set: Ellen and Fen (rows 4 and 5) hold gastritis with share 1"
    )
    for know in (people, people[["age"]]):
        res = kh.attack(r, "disclosure-set", knowledge=know)
        hit = res.tuples[res.tuples["breached"]]
        assert hit["row"].tolist() == [4, 5] and hit["posterior"].tolist() == [1, 1]


# -- what is printed ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dp_release() -> Release:
    from kerckhoffs.datasets import generate_hospital

    return kh.anonymize(
        generate_hospital(400, seed=0),
        schema=DEMO_SCHEMA,
        algorithm="dp-histogram",
        models=["dp=1"],
        levels="age:4,sex:1,zip:1,nationality:1",
    )


def test_check_of_a_dp_release_counts_cells(dp_release: Release) -> None:
    head = repr(kh.check(dp_release)).splitlines()[0]
    n = dp_release.table.n
    assert head == f"CheckReport: all models hold ({n:,} cells of noisy counts)"
    assert "rows" not in head and "groups" not in head


def test_measure_refuses_a_dp_release(dp_release: Release) -> None:
    with pytest.raises(ParameterError, match="noisy counts of cells, not groups") as e:
        kh.measure(dp_release)
    assert "\n" not in str(e.value)


def test_check_of_a_table_says_one_row() -> None:
    from kerckhoffs.datasets import generate_hospital

    report = kh.check(
        generate_hospital(1, seed=0), quasi=["age"], sensitive="disease", models=["k=1"]
    )
    assert "(1 row, 1 group)" in repr(report)
