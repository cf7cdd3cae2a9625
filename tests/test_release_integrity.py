"""A written release is read back only as it was written (digests verified on read).

Property: for random tables and random algorithms, write a release, change one byte of any
published file (``release.json`` included, by any non-zero XOR), read it back: always refused
with a one-line :class:`~kerckhoffs.errors.InputError` naming the file. Without changes it
reads back; ``verify=False`` reads an edited release as it is (the CSV when both formats
exist).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data import manifest
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models import parse_model
from kerckhoffs.release import Release

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"
ALGORITHMS = {  # name -> (models, schemes it publishes by)
    "mondrian": (["k=2"], ["generalization"]),
    "anatomy": (["l=2"], ["bucketization"]),
    "hilb": (["l=2"], ["generalization", "bucketization"]),
    "mondrian++": (["l=2"], ["generalization", "bucketization"]),
    "hilb++strict": (["l=2"], ["generalization", "bucketization"]),
    "mask+": (["k=3", "m=2"], ["generalization", "bucketization"]),
    "lattice": (["k=2"], ["generalization"]),
    "mdav": (["k=2"], ["generalization"]),
}


def _release(rows: int, seed: int, name: str, scheme: str) -> tuple[Release, list]:
    table = Table.encode(generate_hospital(rows, seed), Schema.from_toml(SCHEMA))
    models_text, _ = ALGORITHMS[name]
    models = [parse_model(m) for m in models_text]
    info = REGISTRY[name]
    options = {"scheme": scheme} if "scheme" in info.options else {}
    return info.run(table, models, seed=seed, **options), models


@st.composite
def written(draw: st.DrawFn) -> tuple[str, str, int, int]:
    name = draw(st.sampled_from(sorted(ALGORITHMS)))
    scheme = draw(st.sampled_from(ALGORITHMS[name][1]))
    return name, scheme, draw(st.integers(30, 120)), draw(st.integers(0, 10_000))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=written(),
    which=st.integers(0, 10**6),
    where=st.floats(0, 1, exclude_max=True),
    mask=st.integers(1, 255),
)
def test_one_changed_byte_is_always_refused(
    tmp_path_factory: pytest.TempPathFactory,
    spec: tuple[str, str, int, int],
    which: int,
    where: float,
    mask: int,
) -> None:
    name, scheme, rows, seed = spec
    try:
        release, models = _release(rows, seed, name, scheme)
    except ParameterError:  # e.g. a table that is not l-eligible: nothing to publish
        return
    out = tmp_path_factory.mktemp("rel") / "r"
    release.write(out, models)
    Release.from_published(out)  # untouched: reads back
    files = sorted(out.iterdir())
    target = files[which % len(files)]
    data = bytearray(target.read_bytes())
    data[int(where * len(data))] ^= mask
    target.write_bytes(bytes(data))
    with pytest.raises(InputError) as excinfo:
        Release.from_published(out)
    message = str(excinfo.value)
    assert "\n" not in message and target.name in message, message


def test_edited_on_purpose_reads_the_csv(tmp_path: Path) -> None:
    release, models = _release(60, 1, "mondrian", "generalization")
    release.write(tmp_path / "r", models)
    csv = tmp_path / "r" / "release.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:-1]) + "\n")  # one row deleted by hand
    with pytest.raises(InputError, match=r"release\.csv: changed after it was written"):
        Release.from_published(tmp_path / "r")
    back = Release.from_published(tmp_path / "r", verify=False)
    assert back.table.n == release.table.n - 1  # the CSV, not the untouched Parquet
    assert any("not verified" in n for n in back.notes)


def test_manifest_records_every_file(tmp_path: Path) -> None:
    release, models = _release(60, 2, "anatomy", "bucketization")
    release.write(tmp_path / "r", models)
    meta = json.loads((tmp_path / "r" / "release.json").read_text())
    assert sorted(meta["files"]) == ["qit.csv", "qit.parquet", "st.csv", "st.parquet"]
    for name, digest in meta["files"].items():
        assert digest == manifest.file_digest(tmp_path / "r" / name)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", meta["integrity"])
    raw = (tmp_path / "r" / "release.json").read_bytes()
    assert manifest.seal({k: v for k, v in meta.items() if k != "integrity"}) == raw


def test_a_listed_file_that_is_missing_is_named(tmp_path: Path) -> None:
    release, models = _release(60, 3, "mondrian", "generalization")
    release.write(tmp_path / "r", models)
    (tmp_path / "r" / "release.parquet").unlink()
    with pytest.raises(InputError, match=r"release\.parquet: listed in release\.json but missing"):
        Release.from_published(tmp_path / "r")
    assert np.array_equal(
        np.sort(Release.from_published(tmp_path / "r", verify=False).partition.sizes),
        np.sort(release.partition.sizes),
    )


# -- only the files release.json lists are read -------------------------------------------------
TABLES = {"generalization": ["release"], "bucketization": ["qit", "st"]}


def _histograms(release: Release) -> list[tuple[str, ...]]:
    """Each group's published SA values (as text, sorted), the groups sorted: the release's
    content whatever its group ids and value codes."""
    values = np.asarray(release.table.sa_column.decode(release.sa_published)).astype(str)
    return sorted(tuple(sorted(values[rows])) for rows in release.partition.groups())


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=written(), formats=st.sampled_from([("csv",), ("parquet",), ("csv", "parquet")]))
def test_an_unlisted_table_is_refused_and_never_read(
    tmp_path_factory: pytest.TempPathFactory, spec: tuple[str, str, int, int], formats: tuple
) -> None:
    """A table dropped into a sealed release under a name the reader would take (a whole
    Parquet beside a CSV-only release, a CSV beside a Parquet-only one) is refused with one
    line naming it; ``verify=False`` ignores it: the release read back has the groups that were
    written (the in-memory release is the oracle), never the forged one's single group."""
    name, scheme, rows, seed = spec
    try:
        release, models = _release(rows, seed, name, scheme)
    except ParameterError:
        return
    out = tmp_path_factory.mktemp("rel") / "r"
    release.write(out, models, formats=formats)
    table = TABLES[scheme][0]
    back = Release.from_published(out)
    frame = back.frames()[table].copy()
    frame["group"] = 0  # the forgery: every row in one group
    if formats == ("parquet",):
        forged = out / f"{table}.csv"
        frame.to_csv(forged, index=False)
    else:  # a whole Parquet beside a CSV, or a part as the Dask engine names them
        forged = out / (f"{table}.parquet" if formats == ("csv",) else f"{table}-00000.parquet")
        frame.to_parquet(forged, index=False)
    with pytest.raises(InputError) as excinfo:
        Release.from_published(out)
    message = str(excinfo.value)
    assert "\n" not in message and forged.name in message and "does not list" in message
    unverified = Release.from_published(out, verify=False)
    assert _histograms(unverified) == _histograms(release)
    assert any(forged.name in n and "not listed" in n for n in unverified.notes)


def test_a_forged_table_beside_a_csv_release_is_not_checked(tmp_path: Path) -> None:
    """The reported case: a CSV-only release, a forged release.parquet (one group of every
    row) beside it; k=5 would have been 'ok' on the forgery."""
    release, models = _release(60, 4, "mondrian", "generalization")
    release.write(tmp_path / "r", models, formats=("csv",))
    frame = Release.from_published(tmp_path / "r").frames()["release"]
    frame["group"] = 0
    for c in ("age", "sex", "zip", "nationality"):
        frame[c] = "*"
    frame.to_parquet(tmp_path / "r" / "release.parquet", index=False)
    with pytest.raises(InputError, match=r"r/release\.parquet: a data file release\.json does"):
        Release.from_published(tmp_path / "r")
    back = Release.from_published(tmp_path / "r", verify=False)
    assert back.partition.n_groups == release.partition.n_groups > 1
    (tmp_path / "r" / ".release.parquet").write_bytes(b"")  # hidden: never read, not refused
    (tmp_path / "r" / "release.parquet").unlink()
    assert Release.from_published(tmp_path / "r").partition.n_groups == back.partition.n_groups


# -- a release of format 1 records no digests: read only unverified -----------------------------
def _as_format_1(folder: Path, files: bool) -> None:
    meta = json.loads((folder / "release.json").read_text())
    meta["format_version"] = 1
    del meta["integrity"]
    if files:
        meta["files"] = sorted(meta["files"])
    else:
        del meta["files"]
    (folder / "release.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("files", [True, False])
def test_a_downgrade_to_format_1_does_not_switch_verification_off(
    tmp_path: Path, files: bool
) -> None:
    release, models = _release(60, 5, "mondrian", "generalization")
    release.write(tmp_path / "r", models)
    _as_format_1(tmp_path / "r", files)
    csv = tmp_path / "r" / "release.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:-1]) + "\n")  # edited: a row less
    with pytest.raises(InputError, match=r"format 1 .* no file digests.*verify=False") as e:
        Release.from_published(tmp_path / "r")
    assert e.value.cli_message.endswith("(--no-verify reads it as it is)")
    back = Release.from_published(tmp_path / "r", verify=False)
    assert back.table.n == release.table.n - 1  # what is there, said in a note
    assert any("format 1 (kerckhoffs 0.1)" in n for n in back.notes)


# -- a blank group cell -------------------------------------------------------------------------
@pytest.mark.parametrize("row", [1, 7, 60])
def test_a_blank_group_cell_names_its_row(tmp_path: Path, row: int) -> None:
    release, models = _release(60, 6, "mondrian", "generalization")
    release.write(tmp_path / "r", models, formats=("csv",))
    lines = (tmp_path / "r" / "release.csv").read_text().splitlines()
    lines[row] = "," + lines[row].split(",", 1)[1]  # line row + 1 of the file: data row `row`
    (tmp_path / "x.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as e:
        Release.from_published(tmp_path / "x.csv", Schema.from_toml(SCHEMA))
    assert str(e.value) == (
        f"{tmp_path / 'x.csv'}: release table: column 'group', data row {row}: the group is "
        "blank (every row must name its group)"
    )


def test_a_blank_group_cell_in_a_qi_table_names_its_row(tmp_path: Path) -> None:
    release, models = _release(60, 6, "anatomy", "bucketization")
    release.write(tmp_path / "r", models, formats=("csv",))
    qit = tmp_path / "r" / "qit.csv"
    lines = qit.read_text().splitlines()
    lines[4] = "," + lines[4].split(",", 1)[1]
    qit.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"r: QI table: column 'group', data row 4: the group is"):
        Release.from_published(tmp_path / "r", verify=False)


# -- any JSON value in any field of release.json: read, or refused in one line ------------------
ODD_VALUES = [None, "x", "", -1, 0, 2.5, 1e300, float("nan"), True, [], [1], {}, {"a": 1}]


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path into ``value`` (containers and scalars), the root excluded."""
    found = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _leaves(v, (*path, i))
    return found


@pytest.fixture(scope="module")
def three_releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A generalization, a bucketization and a DP release of the same table."""
    from kerckhoffs.cli import run

    root = tmp_path_factory.mktemp("three")
    generate_hospital(120, 8).to_csv(root / "d.csv", index=False)
    made = {
        "generalization": ["-a", "mondrian", "-m", "k=3"],
        "bucketization": ["-a", "anatomy", "-m", "l=2"],
        "dp": ["-a", "dp-histogram", "-m", "dp=1", "-O", "levels=age:4,sex:1"],
    }
    for name, how in made.items():
        argv = ["anonymize", str(root / "d.csv"), "-s", str(SCHEMA), *how, "-o", str(root / name)]
        assert run(argv) == 0
    return {name: root / name for name in made}


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["generalization", "bucketization", "dp"]),
    which=st.integers(0, 10**6),
    value=st.sampled_from(ODD_VALUES),
)
def test_any_value_in_release_json_is_read_or_refused_in_one_line(
    three_releases: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    which: int,
    value: Any,
) -> None:
    """An edited release.json, sealed again (anyone can: the seal is a digest, not a
    signature), with any field set to any JSON value: reading it back and checking the models
    it records either works or raises one kerckhoffs error line; never a TypeError,
    AttributeError or OverflowError from a value of the wrong type."""
    import shutil

    from kerckhoffs.errors import KerckhoffsError

    src = three_releases[kind]
    meta = json.loads((src / "release.json").read_text())
    del meta["integrity"]
    paths = [p for p in _leaves(meta) if p[0] not in {"files", "integrity"}]
    path = paths[which % len(paths)]
    target = meta
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    out = tmp_path_factory.mktemp("odd") / "r"
    shutil.copytree(src, out)
    (out / "release.json").write_bytes(manifest.seal(meta))
    try:
        release = Release.from_published(out)
        release.check(release.models or [parse_model("k=1")])
    except KerckhoffsError as exc:
        assert "\n" not in str(exc)
