"""The Hilb attack on generalized releases read back from files, with the population given
(paper 000 section 8.3.1, Algorithm 7; spec asap.md 2.12): the population aligned with the
published cells (kerckhoffs.attacks.hilb.align) as exact vectors, individuals in no cell or in
an undetermined group counted as not attacked, soundness of every conclusion against the truth
on random releases, the registry and the audit command, and Adult (the l = 3 run is slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.algorithms.anatomy import sa_buckets
from kerckhoffs.algorithms.hilb import hilb, table_hilbert_index
from kerckhoffs.algorithms.registry import get
from kerckhoffs.attacks.hilb.align import align
from kerckhoffs.attacks.hilb.order import algorithm7, hilb_order_attack
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import get_attack
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.errors import CannotRun, InputError, ParameterError
from kerckhoffs.models import LDiversity
from kerckhoffs.release import Provenance

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FIG8 = ["gastritis", "gastritis", "heart disease", "diabetes", "cancer", "mumps", "AIDS", "AIDS"]
FIG8_SCHEMA = """
[columns.x]
role = "quasi"
kind = "numeric"

[columns.s]
role = "sensitive"
kind = "categorical"
"""
FIG8_DISCLOSED = {  # t1 = t2 = gastritis, t3 = heart disease, t4 = diabetes (Figure 8)
    0: ("gastritis", 1.0, True),
    1: ("gastritis", 1.0, True),
    2: ("heart disease", 1.0, True),
    3: ("diabetes", 1.0, True),
}


def by_row(result: AttackResult) -> dict[int, tuple[str, float, bool]]:
    t = result.tuples
    return {
        int(r): (str(v), float(p), bool(b))
        for r, v, p, b in zip(t["row"], t["sa_value"], t["posterior"], t["breached"], strict=True)
    }


# -- Figure 8 written to files ---------------------------------------------------------------------
def figure_8_files(tmp_path: Path) -> tuple[pd.DataFrame, Path, Release]:
    """Figure 8 with a numeric QI x = 0..7 (in one dimension the Hilbert index is x itself),
    published by Hilb at l = 2: groups {t1,t3} [0-2], {t2,t4} [1-3], {t5,t7} [4-6], {t6,t8}
    [5-7]; returns the population, the schema file and the release read back."""
    df = pd.DataFrame({"x": range(8), "s": FIG8})
    schema_path = tmp_path / "schema.toml"
    schema_path.write_text(FIG8_SCHEMA)
    schema = Schema.from_toml(schema_path)
    release = hilb(Table.encode(df, schema), [LDiversity(2)])
    assert release.generalized_cells()["x"].tolist() == ["[0-2]", "[1-3]", "[4-6]", "[5-7]"]
    release.write(tmp_path / "r", [LDiversity(2)], formats=("csv",))
    return df, schema_path, Release.from_published(tmp_path / "r", schema)


def test_figure_8_alignment_exact(tmp_path: Path) -> None:
    df, schema_path, back = figure_8_files(tmp_path)
    schema = Schema.from_toml(schema_path)
    a = align(back, df, schema)
    # t2, t3 lie in [0-2] and [1-3], t6, t7 in [4-6] and [5-7]; sizes alone leave them open,
    # the tight cells fix them: [0-2] holds a 0 and a 2, [1-3] a 1 and a 3 (and so on)
    assert a.counts == {
        "located": 8,
        "not_located": 0,
        "ambiguous": 4,
        "resolved": 4,
        "unresolved": 0,
        "split": 0,
        "types": 8,
        "pairs": 12,
        "rounds": 3,
        "resolved_groups": 4,
    }
    assert back.partition.group.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert a.individual.tolist() == [0, 2, 1, 3, 4, 6, 5, 7]
    assert a.settled.all() and a.type_settled.all() and a.open_type.size == 0
    loose = align(back, df, schema, tight=False)
    assert (loose.counts["resolved"], loose.counts["unresolved"]) == (0, 4)
    assert loose.unresolved.tolist() == [1, 2, 5, 6]
    assert loose.settled.tolist() == [True, False, True, False, True, False, True, False]
    open_pairs = zip(loose.open_type.tolist(), loose.open_group.tolist(), strict=True)
    assert sorted(open_pairs) == [
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 1),
        (5, 2),
        (5, 3),
        (6, 2),
        (6, 3),
    ]


def test_figure_8_from_files_is_attacked_exactly(tmp_path: Path) -> None:
    df, schema_path, back = figure_8_files(tmp_path)
    info = get_attack("hilb-order")
    knowledge = Knowledge(population=df, schema=schema_path)
    assert info.applies([back], knowledge) is None
    result = info.run([back], knowledge)
    assert by_row(result) == FIG8_DISCLOSED
    assert result.tuples["group"].tolist() == [0, 1, 0, 1]
    assert result.details["ties"] == "unordered"
    assert result.details["compromised_union"] == 4 and result.details["vulnerable_groups"] == 1
    assert result.not_located == 0
    assert result.verdict() == "UNSAFE: 4 of 8 rows disclosed by hilb-order"
    # the population in another order: the same individuals are disclosed
    perm = np.array([5, 2, 7, 0, 3, 6, 1, 4])
    shuffled = info.run([back], Knowledge(population=df.iloc[perm], schema=schema_path))
    where = {int(p): i for i, p in enumerate(perm)}
    assert by_row(shuffled) == {where[r]: v for r, v in FIG8_DISCLOSED.items()}


def test_a_population_row_in_no_cell_is_not_located(tmp_path: Path) -> None:
    df, schema_path, back = figure_8_files(tmp_path)
    extra = pd.concat([df, pd.DataFrame({"x": [100], "s": ["mumps"]})], ignore_index=True)
    a = align(back, extra, Schema.from_toml(schema_path))
    assert a.not_located.tolist() == [8] and a.person_type[8] == -1
    assert a.counts["located"] == 8 and a.counts["not_located"] == 1
    result = get_attack("hilb-order").run([back], Knowledge(population=extra, schema=schema_path))
    assert by_row(result) == FIG8_DISCLOSED
    assert (result.n_rows, result.not_located) == (9, 1)
    assert result.verdict() == (
        "UNSAFE: 4 of 9 rows disclosed by hilb-order; 1 of 9 targets not located (not attacked)"
    )


def test_undetermined_rows_are_not_attacked(tmp_path: Path) -> None:
    # without tight cells (a release from another tool), t2/t3 and t6/t7 may swap groups: the
    # groups' ranges are unknown, so no group can be G1, and the four are not attacked
    df, schema_path, back = figure_8_files(tmp_path)
    loose = align(back, df, Schema.from_toml(schema_path), tight=False)
    a7 = algorithm7(back, ties="unordered", alignment=loose)
    # {t1, .} and {., t4} pass line 5 whatever t2 and t3 do (their first Q_T lie in [0, 0] and
    # [1, 2]); {t5, .} may fail it (4 rows after it against 2 * S_max 2), so the walk ends
    assert a7.deterministic == 2
    assert not a7.vulnerable.any() and a7.pair_row.size == 0
    result = hilb_order_attack(back, ties="unordered", alignment=loose)
    assert result.tuples.empty and result.not_located == 4
    assert result.verdict() == (
        "INCOMPLETE: no row disclosed by hilb-order for the targets it could place (max "
        "posterior 0 <= bound 0.5); 4 of 8 targets not located (not attacked)"
    )
    external = Release.from_published(tmp_path / "r" / "release.csv", Schema.from_toml(schema_path))
    assert external.provenance.algorithm.startswith("external")
    result = get_attack("hilb-order").run([external], Knowledge(population=df, schema=schema_path))
    assert result.details["alignment_unresolved"] == 4
    assert not result.disclosed and not result.safe  # 4 rows not attacked: not SAFE


def test_a_categorical_cell_fixes_its_members_through_its_children() -> None:
    # group {a1, a2} publishes "A", group {a2, b1} publishes "*" (published first: ids are
    # ranks of the published cells); by sizes alone the "A" group could be {a2, a2}: a lowest
    # common node "A" needs members under two of its children
    axis = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"]], name="ab")
    schema = Schema.build({"x": {"kind": "categorical", "hierarchy": axis}}, "s")
    df = pd.DataFrame({"x": ["a1", "a2", "a2", "b1"], "s": ["p", "q", "p", "q"]})
    release = Release(
        Table.encode(df, schema), Partition(np.array([0, 0, 1, 1])), provenance=Provenance("hilb")
    )
    frames = release.frames()
    back = Release.from_frames(frames, release.metadata(), schema)
    assert frames["release"]["x"].tolist() == ["*", "*", "A", "A"]
    tight = align(back, df, schema)
    assert tight.counts["unresolved"] == 0
    assert tight.individual.tolist() == [1, 3, 0, 2]  # a2, b1 | a1, a2 (the two a2 are alike)
    loose = align(back, df, schema, tight=False)
    assert loose.unresolved.tolist() == [0, 1, 2]


def test_populations_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    df, schema_path, back = figure_8_files(tmp_path)
    schema = Schema.from_toml(schema_path)
    with pytest.raises(InputError, match="exactly the release's individuals") as exc:
        align(back, df.iloc[:7], schema)  # t8 missing: seven individuals for eight rows
    assert "\n" not in str(exc.value)
    with pytest.raises(InputError, match="does not fit"):
        align(back, df.assign(x=[0, 1, 1, 3, 4, 5, 6, 7]), schema)  # no one of 2 for [0-2]
    with pytest.raises(InputError, match="column 'x'"):
        align(back, df.drop(columns="x"), schema)
    with pytest.raises(ParameterError, match="needs the schema"):
        align(back, df, None)
    info = get_attack("hilb-order")
    with pytest.raises(CannotRun, match="--schema"):  # it applies, but cannot read the cells
        info.applies([back], Knowledge(population=df))
    with pytest.raises(ParameterError, match="ties=unordered"):
        hilb_order_attack(back, alignment=align(back, df, schema), ties="row")


# -- soundness against the truth -------------------------------------------------------------------
def hospital(n: int, seed: int) -> tuple[pd.DataFrame, Table]:
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    df = generate_hospital(n, seed=seed)
    return df, Table.encode(df, hospital_schema())


@pytest.mark.parametrize("seed", range(18))
def test_every_conclusion_holds_on_the_true_alignment(tmp_path: Path, seed: int) -> None:
    """Random hospital releases (Hilb, Hilb+, Hilb++; l = 2, 3) written to files and aligned
    with the population in a random order: every inference names a skip that happened, every
    vulnerable group is vulnerable on the true alignment, every pinned value is the truth."""
    from kerckhoffs.datasets import hospital_schema

    rng = np.random.default_rng(seed)
    n, l = int(rng.integers(40, 300)), int(rng.integers(2, 4))  # noqa: E741
    algorithm = ("hilb", "hilb+", "hilb++")[seed % 3]
    df, table = hospital(n, seed)
    release = get(algorithm).run(table, [LDiversity(l)], seed=seed)
    release.write(tmp_path / "r", [LDiversity(l)], formats=("csv",))
    schema = hospital_schema()
    back = Release.from_published(tmp_path / "r", schema)
    perm = rng.permutation(n)
    a = align(back, df.iloc[perm].reset_index(drop=True), schema, tight=seed % 4 != 0)
    truth = release.published_group()[perm]  # each individual's group, as the files number it
    bucket = sa_buckets(table)[0][perm]
    a7 = algorithm7(back, ties="unordered", alignment=a)
    index = table_hilbert_index(a.table, release.provenance.parameters["bits"])
    qt = np.empty(n, dtype=np.int64)  # each individual's Q_T rank (ties equal)
    qt[a.individual] = np.unique(index, return_inverse=True)[1]
    for g1, u, k in zip(a7.pair_group, a7.pair_row, a7.pair_prefix, strict=True):
        assert a.settled[u]
        members = np.flatnonzero(truth == g1)
        before = members[qt[members] <= qt[a.individual[u]]]
        assert before.size == k
        same = np.flatnonzero((a.person_type == a.row_type[u]) & (truth == back.partition.group[u]))
        assert same.size and set(bucket[same].tolist()) <= set(bucket[before].tolist())
        # the k members before u are settled rows of G1 (the posteriors' "first k" columns),
        # also when G1 holds rows whose individual is not known
        rows_g1 = np.flatnonzero(back.partition.group == g1)
        early = qt[a.individual[rows_g1]] <= qt[a.individual[u]]
        assert (a.settled[rows_g1] & early).sum() == k
    exact = algorithm7(release, ties="row")  # the true emission order: the walk goes furthest
    exact_vulnerable = release.published_numbering()[exact.vulnerable_groups]
    assert set(a7.vulnerable_groups.tolist()) <= set(exact_vulnerable.tolist())
    # every G1 inferred from passes line 5 in the true emission order (the walk's cut from the
    # files' bounds on the groups' first rows is never past the first group that fails it)
    passed = release.published_numbering()[exact.order[: exact.deterministic]]
    assert set(a7.pair_group.tolist()) <= set(passed.tolist())
    result = hilb_order_attack(back, ties="unordered", alignment=a)
    truth_sa = df[table.sa_name].astype(str).to_numpy()[perm]
    pinned = result.tuples[result.tuples["posterior"] >= 1 - 1e-12]
    for row, value in zip(pinned["row"], pinned["sa_value"], strict=True):
        assert truth_sa[row] in value.split("|")  # a value, or the merged sensitive set
    assert result.not_located == a.counts["unresolved"]


def _propagate_every_segment() -> Any:
    """The propagation recomputing every type and every group in each round, as it was before
    dirty segments: the benchmark's kept baseline (``benchmarks/baselines/
    hilb_propagate_v0.py``), the reference here."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "baselines" / "hilb_propagate_v0.py"
    spec = importlib.util.spec_from_file_location("hilb_propagate_v0", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._propagate


@pytest.mark.parametrize("seed", range(6))
def test_dirty_segment_propagation_equals_recomputing_every_segment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Propagation recomputes only the types and groups whose pairs changed: the same bounds
    and the same number of rounds as recomputing all of them, on random hospital releases."""
    import kerckhoffs.attacks.hilb.align as hilb_align
    from kerckhoffs.datasets import hospital_schema

    rng = np.random.default_rng(100 + seed)
    n, l = int(rng.integers(60, 400)), int(rng.integers(2, 4))  # noqa: E741
    df, table = hospital(n, seed)
    release = get(("hilb", "hilb++")[seed % 2]).run(table, [LDiversity(l)], seed=seed)
    release.write(tmp_path / "r", [LDiversity(l)], formats=("csv",))
    back = Release.from_published(tmp_path / "r", hospital_schema())
    seen = []
    propagate = hilb_align._propagate

    def record(*args):  # type: ignore[no-untyped-def]
        seen.append(args)
        return propagate(*args)

    monkeypatch.setattr(hilb_align, "_propagate", record)
    align(back, df, hospital_schema(), tight=seed % 3 != 0)
    (args,) = seen
    lo, hi, rounds = propagate(*args)
    lo_ref, hi_ref, rounds_ref = _propagate_every_segment()(*args)
    assert rounds == rounds_ref and rounds >= 2
    assert np.array_equal(lo, lo_ref) and np.array_equal(hi, hi_ref)
    assert (lo < hi).any()  # some counts stay open: the rounds had work to do


def test_fully_aligned_releases_are_attacked_as_with_the_true_alignment() -> None:
    """Random one-QI releases (distinct values, Hilb / Hilb+ / Hilb++, l = 2, 3) read back
    through their cells: when the tight cells fix every group, each individual gets the
    posterior the attack gives on the true alignment (ties="unordered"), and the same value
    wherever it is the single most likely one (at 1/2 or below, two values tie and the files'
    SA order picks another)."""
    schema = Schema.build({"x": {"kind": "numeric"}}, "s")
    aligned = attacked = 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        n, l = int(rng.integers(8, 16)), int(rng.integers(2, 4))  # noqa: E741
        sa = rng.integers(0, l + 2, size=n)
        if n < l * np.bincount(sa).max():
            continue
        df = pd.DataFrame({"x": rng.permutation(n) * 3, "s": [chr(65 + v) for v in sa]})
        try:
            release = get(("hilb", "hilb+", "hilb++")[seed % 3]).run(
                Table.encode(df, schema), [LDiversity(l)], seed=seed
            )
        except ParameterError:
            continue
        back = Release.from_frames(release.frames(), release.metadata(), schema)
        a = align(back, df, schema)
        if a.counts["unresolved"]:
            continue
        aligned += 1
        ours = by_row(hilb_order_attack(back, ties="unordered", alignment=a))
        truth = by_row(hilb_order_attack(release, ties="unordered"))
        assert {r: v[1:] for r, v in ours.items()} == {r: v[1:] for r, v in truth.items()}
        assert all(ours[r][0] == v[0] for r, v in truth.items() if v[1] > 0.5)
        attacked += any(v[2] for v in truth.values())
    assert (aligned, attacked) == (83, 18)


def test_hospital_vector() -> None:
    """The demo hospital table (600 rows) through Hilb at l = 3, written and read back: the
    figures of the module docstring."""
    from kerckhoffs.datasets import hospital_schema

    df, table = hospital(600, 3)
    release = hilb(table, [LDiversity(3)])
    frames = release.frames()
    back = Release.from_frames(frames, release.metadata(), hospital_schema())
    a = align(back, df, hospital_schema())
    assert a.counts == {
        "located": 600,
        "not_located": 0,
        "ambiguous": 583,
        "resolved": 252,
        "unresolved": 331,
        "split": 8,
        "types": 584,
        "pairs": 3153,
        "rounds": 7,
        "resolved_groups": 43,
    }
    # one inference comes from a group whose first member is known but not all its members
    a7 = algorithm7(back, ties="unordered", alignment=a)
    g = back.partition.group
    partly = [g1 for g1 in a7.pair_group.tolist() if not a.settled[g == g1].all()]
    assert (len(a7.pair_group), len(partly)) == (17, 1)
    result = hilb_order_attack(back, ties="unordered", alignment=a)
    assert result.verdict() == (
        "UNSAFE: 48 of 600 rows disclosed by hilb-order; 331 of 600 targets not located "
        "(not attacked)"
    )
    # on the true alignment: 342 in the anonymizer's row order, 336 whatever the order of ties
    assert hilb_order_attack(release).compromised == 342
    assert hilb_order_attack(release, ties="unordered").compromised == 336


def test_population_with_missing_values_is_aligned_as_the_anonymizer_read_it(
    tmp_path: Path,
) -> None:
    """A QI whose missing cells the schema publishes as "?" (``missing = "category"``): the
    population's missing cells are aligned where the "?" rows went, as if they were "?"."""
    rng = np.random.default_rng(3)
    city = rng.choice(["a", "b", "c"], 60).astype(object)
    city[::4] = None
    df = pd.DataFrame(
        {"x": rng.integers(0, 30, 60), "city": city, "s": rng.choice(list("pqrs"), 60)}
    )
    schema = Schema.build({"x": {}, "city": {"kind": "categorical", "missing": "category"}}, "s")
    release = hilb(Table.encode(df, schema), [LDiversity(2)])
    release.write(tmp_path / "r", [LDiversity(2)], formats=("csv",))
    back = Release.from_published(tmp_path / "r", schema)
    a, filled = align(back, df, schema), align(back, df.assign(city=df.city.fillna("?")), schema)
    assert a.counts == filled.counts and a.counts["not_located"] == 0
    assert np.array_equal(a.individual, filled.individual)


# -- the audit command -----------------------------------------------------------------------------
def test_audit_command_on_figure_8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    df, schema_path, _ = figure_8_files(tmp_path)
    df[["x"]].to_csv(tmp_path / "population.csv", index=False)  # QIs only: no SA needed
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "audit",
        "--release",
        tmp_path / "r",
        "--knowledge",
        tmp_path / "population.csv",
        "--schema",
        schema_path,
    )
    assert code == 1
    assert out.strip().splitlines()[-1] == "UNSAFE: 4 of 8 rows disclosed by hilb-order"


# -- Adult -----------------------------------------------------------------------------------------
def adult() -> tuple[pd.DataFrame, Schema]:
    from kerckhoffs.datasets import load_adult

    return load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult/schema.toml")


def adult_from_files(algorithm: str, l: int) -> tuple[pd.DataFrame, Release]:  # noqa: E741
    df, schema = adult()
    release = get(algorithm).run(Table.encode(df, schema), [LDiversity(l)], seed=0)
    back = Release.from_frames(release.frames(), release.metadata(), schema)
    return df, back


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no Adult data")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_adult_l2_from_files() -> None:
    df, back = adult_from_files("hilb", 2)
    knowledge = Knowledge(population=df, schema=EXAMPLES / "adult/schema.toml")
    result = get_attack("hilb-order").run([back], knowledge)
    d = result.details
    assert (d["alignment_ambiguous"], d["alignment_resolved"], d["alignment_unresolved"]) == (
        44211,
        23974,
        20237,
    )
    assert result.verdict() == (
        "UNSAFE: 165 of 45,222 rows disclosed by hilb-order; 20,237 of 45,222 targets not "
        "located (not attacked)"
    )
    assert set(result.tuples["sa_value"][result.tuples["breached"]]) == {
        "1st-4th|5th-6th|7th-8th|Preschool"  # the sensitive set, as the files order it
    }


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no Adult data")
def test_adult_l3_from_files() -> None:
    """Under schema.toml's sensitive subset (the four values below high school, which Hilb
    folds into one bucket) the cells at l = 3 overlap so widely that the published data fix
    the group of 139 of the 45,214 individuals with several candidate groups, and the 9
    inferences drawn from them land on other values: no sensitive value is disclosed, a
    correct verdict for that release's claim. In paper 000's setting, where every value
    counts, the same attack finds disclosures (the next test).

    Propagation is not a complete solver, but here it loses nothing: checked once (2026-11-26,
    with scipy, which the project does not depend on) by taking the true alignment as one
    feasible solution and the strongly connected components of its residual graph (a count
    can change iff its type and group share a component), the count constraints with the
    propagated bounds fix exactly the same 55,772 of the 12,878,800 (type, group) counts."""
    df, back = adult_from_files("hilb", 3)
    knowledge = Knowledge(population=df, schema=EXAMPLES / "adult/schema.toml")
    result = get_attack("hilb-order").run([back], knowledge)
    d = result.details
    assert (d["alignment_ambiguous"], d["alignment_resolved"], d["alignment_unresolved"]) == (
        45214,
        139,
        45075,
    )
    assert not result.disclosed and not result.safe and result.not_located == 45075
    # line 5 passes 11,098 groups (by their lowest possible first row; on the true alignment the
    # first group failing it comes right after the cut); 9 inferences, none on the sensitive set
    assert (d["deterministic_groups"], d["inferences"]) == (11098, 9)
    _, strict = adult_from_files("hilb++strict", 3)
    assert get_attack("hilb-order").run([strict], knowledge).safe


ADULT_L3_DISCLOSED = {  # population row: (value, posterior), from files, paper 000's setting
    1308: ("11th", 0.5),
    1520: ("Bachelors", 0.5),
    2548: ("HS-grad", 1.0),
    2650: ("HS-grad", 0.375),
    6554: ("Assoc-acdm", 0.5),
    6856: ("HS-grad", 0.375),
    13395: ("11th", 0.5),
    18862: ("HS-grad", 0.5),
    21101: ("Bachelors", 0.5),
    21880: ("11th", 0.5),
    25874: ("Assoc-acdm", 0.5),
    29827: ("HS-grad", 0.5),
    33539: ("11th", 0.5),
    35506: ("Assoc-voc", 0.5),
    38886: ("HS-grad", 1.0),
    41838: ("11th", 0.5),
}


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="no Adult data")
def test_adult_l3_every_value_audit_from_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Paper 000's setting (every education value counts, spec asap.md 1.4;
    examples/adult/schema_every_value.toml), all through the command line and files: the audit
    of Hilb's l = 3 release with the population says UNSAFE with the count, and of
    hilb++strict's SAFE.

    The alignment fixes the groups of 136 individuals; line 5 passes 11,116 groups and 9
    inferences disclose 16 individuals, two of them pinned. The pinned values are checked
    against the data itself (not against the code under test), and every individual disclosed
    from files is disclosed on the true alignment too (in-process, where the rows are the
    population's)."""
    schema = EXAMPLES / "adult/schema_every_value.toml"
    data = tmp_path / "adult.csv"
    cli = [monkeypatch, capsys]
    assert (
        run_cli(*cli, "datasets", "prepare", "adult", "--from", DATA / "adult", "--out", data)[0]
        == 0
    )

    def audit(algorithm: str) -> tuple[int, str]:
        out = tmp_path / algorithm
        code = run_cli(
            *cli,
            "anonymize",
            data,
            "--schema",
            schema,
            "-a",
            algorithm,
            "--model",
            "l=3",
            "--out",
            out,
        )[0]
        assert code == 0
        code, stdout, _ = run_cli(
            *cli, "audit", "--release", out, "--knowledge", data, "--schema", schema
        )
        return code, stdout.strip().splitlines()[-1]

    assert audit("hilb") == (
        1,
        "UNSAFE: 16 of 45,222 rows disclosed by hilb-order; 45,083 of 45,222 targets not "
        "located (not attacked)",
    )
    assert audit("hilb++strict") == (
        0,
        "SAFE: no row disclosed by the 1 attack(s) that apply (hilb-order)",
    )
    found = tmp_path / "found"
    code, _, _ = run_cli(
        *cli,
        "attack",
        "hilb-order",
        "--release",
        tmp_path / "hilb",
        "--knowledge",
        data,
        "--schema",
        schema,
        "--out",
        found,
    )
    assert code == 1
    tuples = pd.read_csv(found / "tuples.csv")
    breached = tuples[tuples["breached"]]
    assert {
        int(r): (str(v), float(p))
        for r, v, p in zip(
            breached["row"], breached["sa_value"], breached["posterior"], strict=True
        )
    } == ADULT_L3_DISCLOSED
    population = pd.read_csv(data)
    pinned = [r for r, (_, p) in ADULT_L3_DISCLOSED.items() if p == 1.0]
    assert population.loc[pinned, "education"].tolist() == ["HS-grad", "HS-grad"]
    true_run = get("hilb").run(Table.encode(population, Schema.from_toml(schema)), [LDiversity(3)])
    truth = hilb_order_attack(true_run, ties="unordered").tuples
    assert set(ADULT_L3_DISCLOSED) <= set(truth["row"][truth["breached"]].tolist())
