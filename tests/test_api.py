"""The Python entry points (``kerckhoffs.api``): the three-line snippet of the README on the demo
data and on Adult, compared with the command line on the same input; ``measure`` against the
command line's ``check`` for every model; check/attack/audit reports; release ergonomics.

Expected values come from the command line (a different path through the code: files written
and read back) or from plain pandas group-bys written here, never from the function tested.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kerckhoffs as kh
from cli_runner import run_cli
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models import KAnonymity

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

DEMO_QI = ["age", "sex", "zip", "nationality"]
ADULT_QI = [
    "age",
    "workclass",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
]


def schema_toml(path: Path, df: pd.DataFrame, quasi: list[str], sensitive: str) -> Path:
    """A schema naming the same columns as ``quasi=``/``sensitive=``, with the kinds a
    DataFrame's dtypes give (a CSV has no types: digits would be read as numbers)."""
    kind = {q: "numeric" if pd.api.types.is_numeric_dtype(df[q]) else "categorical" for q in quasi}
    lines = [f'[columns."{q}"]\nrole = "quasi"\nkind = "{kind[q]}"\n' for q in quasi]
    lines.append(f'[columns."{sensitive}"]\nrole = "sensitive"\n')
    path.write_text("\n".join(lines))
    return path


def cell_text(series: pd.Series) -> pd.Series:
    """A to_pandas cell as the files print it: ``[lo-hi]``, the value when lo = hi."""
    if isinstance(series.dtype, pd.IntervalDtype):
        left = series.map(lambda iv: iv.left)
        right = series.map(lambda iv: iv.right)
        return pd.Series(
            np.where(
                left == right,
                left.astype(str),
                "[" + left.astype(str) + "-" + right.astype(str) + "]",
            ),
            index=series.index,
        )
    return series.astype(str)


def group_signature(df: pd.DataFrame, qi: list[str], sa: str) -> set[tuple]:
    """Each group as (cells, size, sorted SA values): what must match between two releases."""
    sig = set()
    for _, g in df.groupby("group", sort=False):
        cells = tuple(g[q].iloc[0] for q in qi)
        assert all((g[q] == g[q].iloc[0]).all() for q in qi), "a group with two cells"
        sig.add((cells, len(g), tuple(sorted(g[sa].astype(str)))))
    return sig


def assert_snippet_matches_cli(
    df: pd.DataFrame,
    qi: list[str],
    sa: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    df = df.copy()
    df.index = pd.Index([f"p{i}" for i in range(len(df))][::-1], name="patient")  # not 0..n-1
    release = kh.anonymize(df, quasi=qi, sensitive=sa, algorithm="mondrian", models=["k=5", "l=3"])
    got = release.to_pandas()

    # input order and input index, the SA as published, every value inside its cell
    assert got.index.equals(df.index)
    assert (got[sa].astype(str).to_numpy() == df[sa].astype(str).to_numpy()).all()
    for q in qi:
        if isinstance(got[q].dtype, pd.IntervalDtype):
            left = got[q].map(lambda iv: iv.left).astype(float)
            right = got[q].map(lambda iv: iv.right).astype(float)
            assert (left <= df[q]).all() and (df[q] <= right).all(), q
        else:
            assert got[q].dtype == "category"
            ok = (got[q].astype(str) == df[q].astype(str)) | (got[q].astype(str) == "*")
            assert ok.all(), q

    # the command line on the same input makes the same groups
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    schema = schema_toml(tmp_path / "schema.toml", df, qi, sa)
    code, _out, err = run_cli(
        monkeypatch, capsys, "anonymize", csv, "--schema", schema, "--algorithm", "mondrian",
        "--model", "k=5", "--model", "l=3", "--out", tmp_path / "cli",
    )  # fmt: skip
    assert code == 0, err
    files = pd.read_csv(tmp_path / "cli" / "release.csv", dtype=str, keep_default_na=False)
    ours = got.copy()
    for q in qi:
        ours[q] = cell_text(got[q])
    ours["group"] = ours["group"].astype(str)
    assert group_signature(ours, qi, sa) == group_signature(files, qi, sa)
    assert sorted(ours["group"].unique()) == sorted(files["group"].unique())

    # the grouped form lists the rows as the files do
    grouped = release.to_pandas(order="group")
    assert list(grouped["group"]) == [int(g) for g in files["group"]]
    assert list(grouped[sa].astype(str)) == list(files[sa])


def test_snippet_on_demo_data_matches_cli(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    df = generate_hospital(2000, seed=0).drop(columns=["patient_id"])
    assert_snippet_matches_cli(df, DEMO_QI, "disease", tmp_path, monkeypatch, capsys)


def _adult() -> pd.DataFrame:
    from kerckhoffs.data.datasets import load_adult

    return load_adult(DATA / "adult")


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared data not present")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_snippet_on_adult_matches_cli(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    df = _adult()[[*ADULT_QI, "education"]]
    assert len(df) == 45_222
    assert_snippet_matches_cli(df, ADULT_QI, "education", tmp_path, monkeypatch, capsys)


# -- measure -----------------------------------------------------------------------------------
def test_measure_matches_plain_pandas() -> None:
    df = generate_hospital(600, seed=3)
    qi = ["age", "sex"]
    m = kh.measure(df, qi, "disease")
    g = df.groupby(qi)["disease"]
    sizes = g.size()
    top = g.agg(lambda s: s.value_counts().iloc[0])
    entropy = g.agg(
        lambda s: -(s.value_counts(normalize=True) * np.log(s.value_counts(normalize=True))).sum()
    )
    assert m.rows == 600 and m.groups == len(sizes)
    assert m.k == sizes.min()
    assert m.distinct_l == g.nunique().min()
    assert m.l == pytest.approx((sizes / top).min())
    assert m.entropy_l == pytest.approx(np.exp(entropy.min()))
    assert m.alpha == pytest.approx((top / sizes).max())  # every value sensitive: alpha = top share
    assert m.m == int(np.floor(sizes / top).min())
    overall = df["disease"].value_counts(normalize=True)
    emd = g.agg(
        lambda s: (
            0.5
            * (s.value_counts(normalize=True).reindex(overall.index, fill_value=0) - overall)
            .abs()
            .sum()
        )
    )
    assert m.t == pytest.approx(emd.max())  # equal ground distance: EMD = total variation


MODELS_FOR = {
    "k": lambda m: ["k=1"],
    "l": lambda m: ["l=1"],
    "distinct_l": lambda m: ["distinct-l=1"],
    "entropy_l": lambda m: ["entropy-l=1"],
    "recursive_c": lambda m: [f"recursive-cl=1,{m.recursive_l}"],
    "t": lambda m: ["t=1"],
    "alpha": lambda m: ["alpha-k=1,1"],
    "m": lambda m: ["m=1"],
}


def achieved_column(out: str) -> dict[str, str]:
    """model name -> the achieved cell of ``kerckhoffs check``'s table."""
    cells = {}
    for line in out.splitlines():
        parts = [p.strip() for p in re.split(r"[│┃|]", line)]
        if len(parts) >= 5 and parts[1] and parts[1] != "model":
            cells[parts[1]] = parts[3].split(" (")[0]
    return cells


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared data not present")
@pytest.mark.slow  # real data (the default suite keeps to 3 minutes of CPU)
def test_measure_agrees_with_cli_check_on_adult(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "200")
    adult = tmp_path / "adult.csv"
    _adult().to_csv(adult, index=False)
    schema = ROOT / "examples" / "adult" / "schema.toml"
    rel = tmp_path / "rel"
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", adult, "--schema", schema, "--algorithm", "mondrian",
        "--model", "l=3", "--out", rel,
    )  # fmt: skip
    assert code == 0, err
    from kerckhoffs.models.base import format_number

    for target, args in [(rel, []), (adult, ["--schema", schema])]:
        m = kh.measure(target, schema=None if target == rel else schema)
        models = [spec for f in MODELS_FOR.values() for spec in f(m)]
        code, out, err = run_cli(
            monkeypatch, capsys, "check", target, *args, *[x for s in models for x in ("-m", s)]
        )
        assert code in (0, 1), err
        printed = achieved_column(out)
        names = {
            "k": "k-anonymity",
            "l": "l-diversity",
            "distinct_l": "distinct l-diversity",
            "entropy_l": "entropy l-diversity",
            "recursive_c": "recursive (c,l)-diversity",
            "t": "t-closeness",
            "alpha": "(alpha,k)-anonymity",
            "m": "m-confidentiality (per group)",
        }
        for field, name in names.items():
            assert printed[name] == format_number(getattr(m, field)), (target, field, printed)
    assert kh.measure(rel).l >= 3


# -- check ---------------------------------------------------------------------------------------
def test_check_report_on_a_table_as_it_stands() -> None:
    df = generate_hospital(400, seed=1)
    report = kh.check(df, quasi=["sex", "nationality"], sensitive="disease", models=["k=2", "l=2"])
    sizes = df.groupby(["sex", "nationality"]).size()
    assert report.achieved["k"] == sizes.min()
    assert report.satisfied == (sizes.min() >= 2 and report.achieved["l"] >= 2)
    groups = report.groups
    assert sorted(groups["size"]) == sorted(sizes)
    assert (groups["k ok"] == (groups["size"] >= 2)).all()
    text = repr(report)
    assert text.splitlines()[0].startswith("CheckReport: ")
    assert "k-anonymity (k=2)" in text and len(text.splitlines()) == 3


def test_check_a_release_uses_its_models_and_reads_directories(tmp_path: Path) -> None:
    df = generate_hospital(600, seed=0)
    release = kh.anonymize(df, quasi=DEMO_QI, sensitive="disease", algorithm="mondrian",
                           models=[KAnonymity(4), "l=2"])  # fmt: skip
    report = kh.check(release)
    assert report.satisfied and list(report.achieved) == ["k", "l"]
    assert report.achieved["k"] == release.to_pandas().groupby("group").size().min()
    release.write(tmp_path / "rel")  # no models: the ones it was made for
    back = kh.check(tmp_path / "rel", models=["k=4"])
    assert back.achieved["k"] == report.achieved["k"]
    back_release = kh.read_release(tmp_path / "rel")
    assert back_release.partition.n_groups == release.partition.n_groups
    # release.json records the models checked at write time: read back, they are remembered
    assert [m.parameter for m in back_release.models] == ["k=4", "l=2"]
    assert [r.satisfied for r in back_release.check()] == [True, True]


def test_release_without_models_refuses_to_guess() -> None:
    table = kh.Table.encode(generate_hospital(100, seed=0), kh.Schema.build(["age"], "disease"))
    bare = kh.Release(table, kh.Partition.by_qi(table))
    with pytest.raises(ParameterError, match="no privacy model"):
        bare.check()
    with pytest.raises(PrivacyCheckFailed):
        bare.write("never-written")
    assert not Path("never-written").exists()


def test_anonymize_fails_closed_and_validates_before_work() -> None:
    df = generate_hospital(300, seed=0)
    with pytest.raises(ParameterError, match="larger than the table"):
        kh.anonymize(df, quasi=["age"], sensitive="disease", algorithm="mondrian", models=["k=301"])
    with pytest.raises(ParameterError, match="no option 'frob'"):
        kh.anonymize(
            df, quasi=["age"], sensitive="disease", algorithm="mondrian", models=["k=2"], frob=1
        )
    with pytest.raises(ParameterError, match="either schema or quasi"):
        kh.anonymize(df, quasi=["age"], sensitive="disease", algorithm="mondrian", models=["k=2"],
                     schema=kh.Schema.build(["age"], "disease"))  # fmt: skip
    with pytest.raises(ParameterError, match="quasi="):
        kh.anonymize(df, algorithm="mondrian", models=["k=2"])
    with pytest.raises(InputError, match="'weight'"):
        kh.anonymize(
            df, quasi=["weight"], sensitive="disease", algorithm="mondrian", models=["k=2"]
        )


def test_library_errors_name_arguments_not_flags(tmp_path: Path) -> None:
    df = generate_hospital(200, seed=0)
    release = kh.anonymize(
        df, quasi=["age"], sensitive="disease", algorithm="mondrian", models=["k=2"]
    )
    release.write(tmp_path / "rel")
    with pytest.raises(InputError) as excinfo:
        release.write(tmp_path / "rel")
    assert "overwrite=True" in str(excinfo.value) and "--" not in str(excinfo.value)
    assert "--overwrite" in excinfo.value.cli_message
    release.write(tmp_path / "rel", overwrite=True)


def test_seed_is_a_parameter_and_a_known_seed_warns() -> None:
    df = generate_hospital(300, seed=0)
    kw = dict(quasi=["age", "zip"], sensitive="disease", models=["l=2"])
    with pytest.warns(kh.KnownSeedWarning, match="keep it secret"):
        a = kh.anonymize(df, algorithm="anatomy", seed=7, **kw)
    with pytest.warns(kh.KnownSeedWarning):
        b = kh.anonymize(df, algorithm="anatomy", seed=np.random.default_rng(7), **kw)
    assert a.partition.same_as(b.partition)  # an int seed is default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kh.anonymize(df, algorithm="mondrian", seed=7, **kw)  # deterministic: nothing to warn
        c = kh.anonymize(df, algorithm="anatomy", **kw)  # fresh secret randomness
        d = kh.anonymize(df, algorithm="anatomy", **kw)
    assert not c.partition.same_as(d.partition)


def test_bucketization_returns_the_qi_and_sa_tables() -> None:
    df = generate_hospital(600, seed=0)
    df.index = df.index + 10_000
    release = kh.anonymize(
        df, quasi=DEMO_QI, sensitive="disease", algorithm="anatomy", models=["l=3"]
    )
    qit, st = release.to_pandas()
    assert qit.index.equals(df.index)
    for q in DEMO_QI:
        assert (qit[q].to_numpy() == df[q].to_numpy()).all()
    sizes = qit.groupby("group").size()
    assert st.groupby("group")["count"].sum().equals(sizes.rename("count"))
    # the SA table holds exactly each group's values: compare with the input, group by group
    truth = df.assign(group=qit["group"]).groupby(["group", "disease"]).size()
    assert (
        st.set_index(["group", "disease"])["count"]
        .sort_index()
        .equals(truth.rename("count").sort_index())
    )
    assert release.to_pandas(order="group").qit["group"].is_monotonic_increasing


def test_to_pandas_refuses_an_unknown_order() -> None:
    release = kh.anonymize(generate_hospital(100, seed=0), quasi=["age"], sensitive="disease",
                           algorithm="mondrian", models=["k=2"])  # fmt: skip
    with pytest.raises(ParameterError, match="order"):
        release.to_pandas(order="random")


# -- attack and audit ------------------------------------------------------------------------
def test_attack_and_audit_mirror_the_cli(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    df = generate_hospital(600, seed=0)
    schema = ROOT / "examples" / "demo" / "schema.toml"
    release = kh.anonymize(
        df, schema=schema, algorithm="hilb", models=["l=3"], scheme="bucketization"
    )
    result = kh.attack(release, "hilb-order")
    table = result.to_pandas()
    assert not result.safe and {"row", "sa_value", "posterior", "breached"} <= set(table.columns)
    assert result.compromised == table.loc[table["breached"], "row"].nunique() > 0
    report = kh.audit(release)
    assert not report.safe and report.verdict.startswith("UNSAFE: ")
    frame = report.to_pandas()
    assert set(frame["attack"]) >= {"hilb-order", "seed-replay"}
    # the command line on the same release says the same
    release.write(tmp_path / "rel")
    code, out, _ = run_cli(
        monkeypatch, capsys, "audit", "--release", tmp_path / "rel", "--schema", schema
    )
    assert code == 1 and out.strip().splitlines()[-1] == report.verdict
    with pytest.raises(ParameterError, match="does not apply"):
        kh.attack(release, "minimality")
    strict = kh.anonymize(df, schema=schema, algorithm="hilb++strict", models=["l=3"])
    assert kh.audit(strict).safe


def test_hierarchies_and_dropped_rows_keep_the_input_index() -> None:
    df = generate_hospital(400, seed=2)[["age", "sex", "disease"]].copy()
    df.index = pd.Index(range(1000, 1400), name="id")
    df.loc[[1003, 1010], "sex"] = None  # dropped by the schema's policy: absent from the output
    sex = kh.Hierarchy([["F", "*"], ["M", "*"]])
    schema = kh.Schema.build(
        {"age": {"kind": "numeric", "widths": [5, 10, 20]}, "sex": {"hierarchy": sex}},
        "disease",
        missing="drop",
    )
    release = kh.anonymize(df, schema=schema, algorithm="lattice", models=["k=10"])
    got = release.to_pandas()
    assert list(got.index) == [i for i in df.index if i not in (1003, 1010)]
    # full-domain generalization publishes hierarchy levels, shown as the published text
    assert got["age"].dtype == "category" and got["sex"].dtype == "category"
    assert set(got["sex"].astype(str)) <= {"F", "M", "*"}
    assert got.groupby("group").size().min() >= 10
    with_h = kh.anonymize(df.dropna(), quasi=["age", "sex"], sensitive="disease",
                          hierarchies={"sex": sex, "age": {"widths": [10, 20]}},
                          algorithm="mondrian", models=["k=10"])  # fmt: skip
    assert isinstance(with_h.to_pandas()["age"].dtype, pd.IntervalDtype)
    with pytest.raises(ParameterError, match="'zip', which is not in quasi"):
        kh.anonymize(df, quasi=["age"], sensitive="disease", hierarchies={"zip": "z.csv"},
                     algorithm="mondrian", models=["k=2"])  # fmt: skip


def test_the_docstring_examples_run() -> None:
    """The runnable examples in kerckhoffs.api's docstrings (what the reference shows)."""
    import doctest

    import kerckhoffs.api

    failed, tried = doctest.testmod(kerckhoffs.api, optionflags=doctest.ELLIPSIS)
    assert tried >= 8 and failed == 0
