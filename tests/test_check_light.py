"""``kerckhoffs check RELEASE`` on its light path (:mod:`kerckhoffs.cli.check_light`): the same
lines and exit code as the full command, the same histogram as the full reader, and every
other case (a tampered, resealed or violating release, another form of the command) left to
the full command, whose refusals stay the only ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kerckhoffs import anonymize
from kerckhoffs.cli import app, check_light, run
from kerckhoffs.data import manifest
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.release import Release

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Mondrian k=5 release of 300 hospital rows, CSV + Parquet."""
    df = generate_hospital(300, seed=3)
    out = tmp_path_factory.mktemp("light") / "rel"
    rel = anonymize(
        df, quasi=["age", "zip", "sex"], sensitive="disease", algorithm="mondrian", models=["k=5"]
    )
    rel.write(out)
    return out


def _both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple, tuple]:
    """(code, stdout, stderr) of the routed command, then of the full application."""
    light = (run(args), *capsys.readouterr())
    full = (app.run(args), *capsys.readouterr())
    return light, full


@pytest.mark.parametrize(
    "models",
    [["k=5"], ["k=5", "l=1"], ["distinct-l=2", "entropy-l=1.2", "recursive-l=5,2"]],
)
def test_same_lines_as_the_full_command(
    release_dir: Path, models: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", str(release_dir)] + [a for m in models for a in ("-m", m)]
    assert check_light.check_release(release_dir, models) is not None  # the light path ran
    light, full = _both(args, capsys)
    assert light == full
    assert light[0] == 0 and "re-identification risk" in light[1]


def test_histogram_and_groups_equal_the_full_readers(release_dir: Path) -> None:
    """The oracle is the full reader (pandas, Table.encode): same SA labels in the same order,
    same partition, same (groups x SA) counts."""
    full = Release.from_published(release_dir)
    meta = json.loads((release_dir / "release.json").read_text())
    qi = [q["name"] for q in meta["quasi"]]
    cols = check_light.read_text_columns(release_dir / "release.parquet", ["group", *qi, "disease"])
    assert cols is not None
    group = cols["group"]
    sa, labels = cols["disease"]
    assert labels == list(full.table.sa_column.labels)
    assert np.array_equal(group, full.partition.group)
    counts = np.zeros_like(full.histogram().counts)
    np.add.at(counts, (group, sa), 1)
    assert np.array_equal(counts, full.histogram().counts)


def test_a_violated_model_is_left_to_the_full_command(
    release_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_light.check_release(release_dir, ["k=50"]) is None
    light, full = _both(["check", str(release_dir), "-m", "k=50"], capsys)
    assert light == full and light[0] == 1 and "worst groups" in light[1]


def test_a_changed_file_is_refused_by_the_full_reader(
    release_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "rel"
    copy.mkdir()
    for f in release_dir.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    raw = bytearray((copy / "release.parquet").read_bytes())
    raw[len(raw) // 2] ^= 0x01
    (copy / "release.parquet").write_bytes(bytes(raw))
    with pytest.raises(Exception, match="changed after it was written"):
        check_light.check_release(copy, ["k=5"])
    light, full = _both(["check", str(copy), "-m", "k=5"], capsys)
    assert light == full and light[0] == 2
    assert light[2].startswith("error: ") and "changed after it was written" in light[2]


def test_a_resealed_release_mixing_cells_in_a_group_is_refused(
    release_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Parquet table edited so that one group holds two zip cells, with the digests of
    release.json recomputed: the light path does not take it, the full reader refuses it."""
    copy = tmp_path / "rel"
    copy.mkdir()
    for f in release_dir.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    table = pq.read_table(copy / "release.parquet")
    zips = table.column("zip").to_pylist()
    zips[0] = "99999"
    i = table.schema.get_field_index("zip")
    pq.write_table(table.set_column(i, "zip", pa.array(zips)), copy / "release.parquet")
    meta = json.loads((copy / "release.json").read_text())
    meta["files"]["release.parquet"] = manifest.file_digest(copy / "release.parquet")
    (copy / "release.json").write_bytes(manifest.seal(meta))
    assert check_light.check_release(copy, ["k=5"]) is None
    light, full = _both(["check", str(copy), "-m", "k=5"], capsys)
    assert light == full and light[0] == 2
    assert "more than one combination of QI cells" in light[2]


@pytest.mark.parametrize(
    ("args", "taken"),
    [
        (["check", "{d}", "-m", "k=5"], True),
        (["check", "-m", "k=5", "{d}", "--model=l=2", "--worst", "3"], True),
        (["check", "{d}", "-m", "k=5", "--worst=0"], True),
        (["check", "{d}"], False),  # no model: typer's usage error
        (["check", "{d}", "-m"], False),
        (["check", "{d}", "-m", "k=5", "--schema", "s.toml"], False),
        (["check", "{d}", "-m", "k=5", "--no-verify"], False),
        (["check", "{d}", "{d}", "-m", "k=5"], False),
        (["check", "{d}", "-m", "--help"], False),
        (["check", "{d}", "-m", "k=5", "--worst", "-1"], False),
        (["check", "{d}/release.csv", "-m", "k=5"], False),  # a file, not a release folder
        (["anonymize", "{d}", "-m", "k=5"], False),
    ],
)
def test_only_the_plain_form_is_taken(release_dir: Path, args: list[str], taken: bool) -> None:
    parsed = check_light.parse_args([a.format(d=release_dir) for a in args])
    assert (parsed is not None) == taken


def test_the_light_path_loads_neither_pandas_nor_typer(release_dir: Path) -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from kerckhoffs.cli import run; "
        "code = run(['check', sys.argv[2], '-m', 'k=5']); "
        "print(code, 'pandas' in sys.modules, 'typer' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(SRC), str(release_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr.split() == ["0", "False", "False"]


def test_verdicts_equal_a_groupby_of_the_published_cells(release_dir: Path) -> None:
    """Independent oracle, from the definitions: the equivalence classes are the rows an
    adversary cannot tell apart in the published CSV (read with pandas, not our readers): equal
    group id (it is published) and equal QI cells; k is the smallest class, distinct l the
    fewest distinct SA values in a class."""
    import pandas as pd

    pub = pd.read_csv(release_dir / "release.csv", dtype=str, keep_default_na=False)
    classes = pub.groupby(["group", "age", "zip", "sex"])["disease"]
    checked = check_light.check_release(release_dir, ["k=5", "distinct-l=2"])
    assert checked is not None
    k, distinct = checked.results
    assert checked.groups == classes.ngroups
    assert k.achieved == classes.size().min()
    assert distinct.achieved == classes.nunique().min()
    assert k.group_ok.all() and distinct.group_ok.all()
