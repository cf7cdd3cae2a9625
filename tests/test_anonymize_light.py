"""``kerckhoffs anonymize`` in its plain form without the typer application
(:mod:`kerckhoffs.cli.anonymize_light`) and the fail-closed check of the histogram models with
numpy (:mod:`kerckhoffs.release.light`).

The oracles are the paths they stand beside: the full application (same exit code, lines and
file bytes) and the full reader (:meth:`Release.from_frames`: same results, group by group);
the group numbering and the one-cell-per-group test against brute force.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.cli import anonymize_light, app, run
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.models import parse_model
from kerckhoffs.release import Release
from kerckhoffs.release import writer as release_writer
from kerckhoffs.release.light import check_read_back, first_appearance, one_cell_per_group

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "demo"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 hospital rows and the demo schema with its hierarchies beside them."""
    folder = tmp_path_factory.mktemp("plain")
    generate_hospital(200, 4).to_csv(folder / "h.csv", index=False)
    shutil.copy(EXAMPLES / "schema.toml", folder / "schema.toml")
    shutil.copytree(EXAMPLES / "hierarchies", folder / "hierarchies")
    return folder


def _outcome(
    call: object, args: list[str], out: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, dict[str, bytes]]:
    """(code, stdout, stderr, files written) of ``call(args + ["-o", out])``, the output
    folder's name and the seconds taken made neutral."""
    code = call([*args, "-o", str(out)])  # type: ignore[operator]
    stdout, stderr = capsys.readouterr()

    def neutral(text: str) -> str:
        return re.sub(r"in \d+\.\d+\s+s", "in T s", text.replace(str(out), "OUT"))

    files = {p.name: p.read_bytes() for p in sorted(out.glob("*"))} if out.is_dir() else {}
    return code, neutral(stdout), neutral(stderr), files


@pytest.mark.parametrize(
    "rest",
    [
        ["-a", "mondrian", "-m", "k=5"],
        ["--algorithm=mdav", "--model=k=4", "--seed", "3", "--format", "csv"],
        ["-a", "anatomy", "-m", "l=2", "--scheme", "bucketization", "--seed", "2", "--overwrite"],
        ["-a", "hilb", "-m", "l=2", "--seed", "1", "--format", "parquet"],
        ["-a", "nope", "-m", "k=2"],  # refused: unknown algorithm
        ["-a", "mondrian", "-m", "k=500"],  # refused: k above the table
        ["-a", "mondrian", "-m", "k=2", "-O", "nothing=1"],  # refused: unknown option
    ],
)
def test_same_lines_and_files_as_the_full_command(
    data: Path, rest: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["anonymize", str(data / "h.csv"), "-s", str(data / "schema.toml"), *rest]
    assert anonymize_light.parse_args([*args, "-o", "x"]) is not None  # the light form
    light = _outcome(run, args, tmp_path / "one", capsys)
    full = _outcome(app.run, args, tmp_path / "two", capsys)
    assert light == full


def test_a_missing_data_file_is_the_same_error(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["anonymize", str(tmp_path / "none.csv"), "-s", str(data / "schema.toml")]
    args += ["-a", "mondrian", "-m", "k=2"]
    light = _outcome(run, args, tmp_path / "one", capsys)
    full = _outcome(app.run, args, tmp_path / "two", capsys)
    assert light == full and light[0] == 2 and light[2].startswith("error: ")


@pytest.mark.parametrize(
    "rest",
    [
        ["--help"],
        ["--engine", "dask"],
        ["--engine", "memory"],  # an option the light form does not take, even a default
        ["-a", "mdav"],  # twice
        ["-m", "-k"],  # a value that looks like an option
        ["--seed", "-1"],
        ["--seed", "1_0"],
        ["--seed", " 7"],
        ["--seed="],
        ["--no-overwrite"],
        ["--overwrite", "--overwrite"],
        ["other.csv"],  # a second data file
        ["--"],
    ],
)
def test_other_forms_are_left_to_the_full_command(rest: list[str]) -> None:
    plain = ["anonymize", "d.csv", "-s", "s.toml", "-a", "mondrian", "-m", "k=2", "-o", "o"]
    assert anonymize_light.parse_args(plain) is not None
    assert anonymize_light.parse_args([*plain, *rest]) is None
    for required in ("-s", "-a", "-m", "-o"):  # each required option missing
        i = plain.index(required)
        assert anonymize_light.parse_args(plain[:i] + plain[i + 2 :]) is None
    assert anonymize_light.run(["anonymize", "--help"]) is None  # nothing printed or run


def test_plain_arguments_are_typers() -> None:
    args = ["anonymize", "d.csv", "--schema=s.toml", "-a", "mondrian", "-m", "k=2", "-m", "l=2"]
    args += ["-o", "o", "--seed", "007", "-O", "a=1", "--option", "b=2", "--include-other"]
    got = anonymize_light.parse_args(args)
    assert got is not None
    assert (got.data, got.schema, got.out_dir) == (Path("d.csv"), Path("s.toml"), Path("o"))
    assert (got.model, got.option, got.seed) == (["k=2", "l=2"], ["a=1", "b=2"], 7)
    assert got.include_other and not got.overwrite and got.fmt is None and got.sep is None


# -- the fail-closed check with numpy --------------------------------------------------------
def _read_back(release: Release, tmp_path: Path) -> tuple[dict[str, pd.DataFrame], dict]:
    """The release's tables as the write reads them back from its staged Parquet files."""
    frames, _ = release._frames_and_rows(False, compact=True)  # type: ignore[attr-defined]
    text = release_writer.text_columns(frames, release._compact_names())  # type: ignore[attr-defined]
    for name, df in frames.items():
        release_writer.write_parquet(df, tmp_path / f"{name}.parquet", text.get(name, []))
    meta = release.metadata()
    return {n: release_writer.read_back(tmp_path, n, meta, ("parquet",)) for n in frames}, meta


@pytest.mark.parametrize(
    ("algorithm", "models"),
    [
        ("mondrian", ["k=3"]),
        ("mondrian", ["k=2", "l=2", "entropy-l=1.5"]),
        ("lattice", ["k=4", "distinct-l=2"]),
        ("mdav", ["k=5", "recursive-l=3,2"]),
    ],
)
def test_light_check_is_the_full_readers(algorithm: str, models: list[str], tmp_path: Path) -> None:
    table = Table.encode(generate_hospital(150, 1), Schema.from_toml(EXAMPLES / "schema.toml"))
    chosen = [parse_model(m) for m in models]
    release = REGISTRY[algorithm].run(table, chosen[:1])
    written, meta = _read_back(release, tmp_path)
    full = Release.from_frames(written, meta).check(chosen)
    light = check_read_back(chosen, written["release"], meta)
    if not all(r.satisfied for r in full):
        assert light is None  # the full reader words a refusal
        return
    assert light is not None
    for a, b in zip(full, light, strict=True):
        assert (a.model, a.parameter, a.achieved, a.detail, a.scope, a.satisfied) == (
            b.model,
            b.parameter,
            b.achieved,
            b.detail,
            b.scope,
            b.satisfied,
        )
        assert np.array_equal(a.group_values, b.group_values)
        assert np.array_equal(a.group_ok, b.group_ok)


def test_light_check_leaves_the_rest_to_the_full_reader(tmp_path: Path) -> None:
    table = Table.encode(generate_hospital(150, 2), Schema.from_toml(EXAMPLES / "schema.toml"))
    release = REGISTRY["mondrian"].run(table, [parse_model("k=3")])
    written, meta = _read_back(release, tmp_path)
    df = written["release"]
    k3 = [parse_model("k=3")]
    assert check_read_back(k3, df, meta) is not None
    assert check_read_back([parse_model("k=300")], df, meta) is None  # fails: not light
    assert check_read_back([parse_model("t=0.9")], df, meta) is None  # not a histogram model
    assert check_read_back(k3, df.drop(columns="group"), meta) is None
    assert check_read_back(k3, df.astype({"zip": "str"}), meta) is None
    two = df.copy()  # one group showing two zip cells: the full reader refuses it
    cells = two["zip"].cat.categories
    two.loc[0, "zip"] = cells[1] if two.loc[0, "zip"] == cells[0] else cells[0]
    assert check_read_back(k3, two, meta) is None
    with pytest.raises(Exception, match="more than one combination"):
        Release.from_frames({"release": two}, meta)
    assert check_read_back(k3, df, {**meta, "sensitive_values": ["Flu"]}) is None


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.integers(0, 6), max_size=30),
    st.booleans(),
    st.sampled_from([np.int64, np.int8, np.uint8, np.uint32]),
)
def test_first_appearance_is_factorize(labels: list[int], ordered: bool, dtype: type) -> None:
    arr = np.array(labels, dtype=dtype)
    arr = np.sort(arr) if ordered else arr
    expected = pd.factorize(arr, sort=False)[0]
    assert np.array_equal(first_appearance(arr), expected)


def test_first_appearance_hand_vectors() -> None:
    for labels, ids in [([5, 5, 9, 9, 12], [0, 0, 1, 1, 2]), ([1, 0, 1], [0, 1, 0])]:
        for dtype in (np.int32, np.uint16):
            assert first_appearance(np.array(labels, dtype=dtype)).tolist() == ids


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), st.integers(0, 2)), max_size=25))
def test_one_cell_per_group_by_brute_force(rows: list[tuple[int, int, int]]) -> None:
    if rows and rows[0][0] == 0:  # half the cases: rows listed by group, as a release has them
        rows = sorted(rows, key=lambda r: r[0])
    group = first_appearance(np.array([r[0] for r in rows], dtype=np.int64))
    codes = [np.array([r[j] for r in rows], dtype=np.int8) for j in (1, 2)]
    cells: dict[int, set[tuple[int, int]]] = {}
    for g, r in zip(group.tolist(), rows, strict=True):
        cells.setdefault(g, set()).add((r[1], r[2]))
    assert one_cell_per_group(group, codes) == all(len(c) == 1 for c in cells.values())
