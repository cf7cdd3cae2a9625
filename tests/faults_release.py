"""Faults of reading releases and inputs: a release is read only through the files its sealed
``release.json`` lists; every file a user names must be a regular file (a FIFO would hang the
command, ``/dev/zero`` never end); JSON and TOML are bounded in nesting and integer width; a
blank ``group`` cell, a downgraded format are one line.

A FIFO made here is served by a thread (:func:`_fifo`) for a minute: a command that wrongly
opens it reads a short payload instead of hanging the suite (and then fails on its keys), and
the workspace snapshots read the same payload before and after.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from catalogue import ANON, Fault, Setup, args
from kerckhoffs.data import manifest

CHECK = ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=2"]
INTERSECT = ["attack", "intersection", "--other", "rel2", "-k", "data.csv", "--schema",
             "demo/schema.toml", "-o", "x"]  # fmt: skip
FIFO_PAYLOAD = b"fifo,payload\n"
BIG = "1" * 400
"""A 400-digit integer: Python cannot turn it into a float (OverflowError)."""


def _fifo(path: Path, seconds: float = 60.0) -> Path:
    """A FIFO at ``path``, served for ``seconds`` by a thread that writes
    :data:`FIFO_PAYLOAD` to any reader that opens it and closes (end of file)."""
    os.mkfifo(path)

    def serve() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:  # succeeds only while some reader has the FIFO open (else ENXIO)
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.02)
                continue
            try:
                os.write(fd, FIFO_PAYLOAD)
            except OSError:
                pass
            finally:
                os.close(fd)
            time.sleep(0.1)  # the reader sees end of file before the next round

    threading.Thread(target=serve, daemon=True).start()
    return path


def _reseal(folder: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit ``folder/release.json`` and seal it again, as anyone can (the seal is a digest,
    not a signature): what the reader refuses must not depend on the seal alone."""
    f = folder / "release.json"
    meta = json.loads(f.read_text())
    meta.pop("integrity", None)
    edit(meta)
    f.write_bytes(manifest.seal(meta))


# -- item: only the files the seal lists are read ------------------------------------------------
def _forged_parquet(folder: Path, source: Path | None = None) -> None:
    """A release.parquet in ``folder`` that is not the release: the rows of ``source`` (the
    folder's release.csv) in one group, every QI ``*`` (any k-anonymity check passes it)."""
    df = pd.read_csv(source or folder / "release.csv", dtype=str)
    df["group"] = 0
    for c in ("age", "sex", "zip", "nationality"):
        df[c] = "*"
    df.to_parquet(folder / "release.parquet", index=False)


def _run_quietly(argv: list[str]) -> None:
    """Run ``kerckhoffs ARGV`` for a setup, its output kept out of the output under test."""
    from kerckhoffs.cli import run

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = run(argv)
    assert code == 0, sink.getvalue()


def _csv_release(ws: Path, name: str = "csvrel") -> Path:
    _run_quietly([*ANON, "-o", name, "--format", "csv"])
    return ws / name


def _forged_in_csv_release(cmd: Callable[[str], list[str]]) -> Setup:
    def setup(ws: Path) -> list[str]:
        _forged_parquet(_csv_release(ws))
        return cmd("csvrel")

    return setup


def _forged_no_verify(ws: Path) -> list[str]:
    """With --no-verify the forged file is ignored (said in a note), so the release checked is
    the one written (k=3): k=5 fails, where the forged table would pass it."""
    _forged_parquet(_csv_release(ws))
    return ["check", "csvrel", "-m", "k=5", "--no-verify"]


def _parts_release(ws: Path) -> Path:
    """``rel`` as the Dask engine writes a release: its table in two listed parts
    (``release-00000.parquet``, ``release-00001.parquet``), no whole ``release.parquet``."""
    dst = ws / "parts"
    dst.mkdir()
    df = pd.read_parquet(ws / "rel" / "release.parquet")
    half = len(df) // 2
    names = []
    for i, part in enumerate((df.iloc[:half], df.iloc[half:])):
        names.append(f"release-{i:05d}.parquet")
        part.to_parquet(dst / names[-1], index=False)

    def edit(meta: dict[str, Any]) -> None:
        meta["files"] = {n: manifest.file_digest(dst / n) for n in names}

    (dst / "release.json").write_text((ws / "rel" / "release.json").read_text())
    _reseal(dst, edit)
    return dst


def _forged_beside_parts(ws: Path) -> list[str]:
    _forged_parquet(_parts_release(ws), ws / "rel" / "release.csv")
    return ["check", "parts", "-m", "k=5"]


# -- item: every file argument a regular file -----------------------------------------------------
def _fifo_data(ws: Path) -> list[str]:
    _fifo(ws / "pipe.csv")
    return ["check", "pipe.csv", "-s", "demo/schema.toml", "-m", "k=2"]


def _zero_data(ws: Path) -> list[str]:
    (ws / "zero.csv").symlink_to("/dev/zero")
    return ["check", "zero.csv", "-s", "demo/schema.toml", "-m", "k=2"]


def _fifo_schema(ws: Path) -> list[str]:
    _fifo(ws / "pipe.toml")
    return ["check", "data.csv", "-s", "pipe.toml", "-m", "k=2"]


def _fifo_hierarchy(ws: Path) -> list[str]:
    _fifo(ws / "demo" / "hierarchies" / "pipe.csv")
    text = (ws / "demo" / "schema.toml").read_text()
    (ws / "demo" / "schema.toml").write_text(
        text.replace("hierarchies/zip.csv", "hierarchies/pipe.csv")
    )
    return CHECK


def _fifo_knowledge(suffix: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        _fifo(ws / f"pipe{suffix}")
        return ["audit", "-r", "rel", "-k", f"pipe{suffix}", "--schema", "demo/schema.toml"]

    return setup


def _zero_knowledge(ws: Path) -> list[str]:
    (ws / "zero.toml").symlink_to("/dev/zero")
    return ["audit", "-r", "rel", "-k", "zero.toml", "--schema", "demo/schema.toml"]


def _fifo_population(ws: Path) -> list[str]:
    _fifo(ws / "pipe.csv")
    (ws / "pop.toml").write_text('[population]\nfile = "pipe.csv"\n')
    return ["audit", "-r", "rel", "-k", "pop.toml", "--schema", "demo/schema.toml"]


def _fifo_in_release(name: str, *extra: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        (ws / "rel" / name).unlink()
        _fifo(ws / "rel" / name)
        return ["check", "rel", "-m", "k=3", *extra]

    return setup


def _fifo_schema_audit(ws: Path) -> list[str]:
    _fifo(ws / "pipe.toml")
    return ["audit", "-r", "rel", "--schema", "pipe.toml"]


def _directory_as_schema(ws: Path) -> list[str]:
    (ws / "schema.toml").mkdir()
    return ["check", "data.csv", "-s", "schema.toml", "-m", "k=2"]


# -- item: bounded nesting and integers ----------------------------------------------------------
def _deep_release_json(ws: Path) -> list[str]:
    """100,000 nested arrays in release.json: Python's JSON parser would recurse past its
    limit (the seal is checked after parsing, so it does not matter whether it holds)."""
    f = ws / "rel" / "release.json"
    text = f.read_text()
    f.write_text(
        text.replace('"checks": [', '"deep": ' + "[" * 100_000 + "]" * 100_000 + ', "checks": [', 1)
    )
    return ["check", "rel", "-m", "k=3"]


def _nested_release_json(ws: Path) -> list[str]:
    """500 nested arrays (parsed, but deeper than any release.json), sealed again."""

    def edit(meta: dict[str, Any]) -> None:
        value: Any = []
        for _ in range(500):
            value = [value]
        meta["provenance"]["parameters"]["deep"] = value

    _reseal(ws / "rel", edit)
    return ["audit", "-r", "rel", "--schema", "demo/schema.toml"]


def _deep_toml(text: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        f = ws / "demo" / "schema.toml"
        f.write_text(f.read_text() + text)
        return CHECK

    return setup


def _deep_knowledge(ws: Path) -> list[str]:
    (ws / "deep.toml").write_text("releases = " + "[" * 50_000 + "]" * 50_000 + "\n")
    return ["audit", "-r", "rel", "-k", "deep.toml", "--schema", "demo/schema.toml"]


def _schema_integer(digits: int) -> Setup:
    def setup(ws: Path) -> list[str]:
        f = ws / "demo" / "schema.toml"
        f.write_text(f.read_text().replace("widths = [5, 10, 20]", f"widths = [{'1' * digits}]"))
        return CHECK

    return setup


def _dp_release(ws: Path) -> Path:
    cmd = ["anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "dp-histogram", "-m", "dp=1",
           "-O", "levels=age:4,sex:1", "-o", "dp"]  # fmt: skip
    _run_quietly(cmd)
    return ws / "dp"


def _dp_integer(key: str, digits: int = 400) -> Setup:
    """A DP release whose release.json records a ``digits``-digit integer for ``dp.KEY``,
    sealed again."""

    def setup(ws: Path) -> list[str]:
        folder = _dp_release(ws)
        _reseal(folder, lambda meta: meta["dp"].__setitem__(key, int("1" * digits)))
        return ["check", "dp", "-m", "dp=1"]

    return setup


def _json_integer_text(ws: Path) -> list[str]:
    """A 5,000-digit integer in release.json: more digits than Python converts at all."""
    f = ws / "rel" / "release.json"
    text = f.read_text()
    f.write_text(text.replace('"groups": ', '"groups": ' + "1" * 5000 + ', "was": ', 1))
    return ["check", "rel", "-m", "k=3"]


def _model_epsilon(ws: Path) -> list[str]:
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", f"dp={BIG}"]


# -- item: a blank group, a downgraded format ----------------------------------------------------
def _blank_group(ws: Path) -> list[str]:
    lines = (ws / "rel" / "release.csv").read_text().splitlines()
    lines[5] = "," + lines[5].split(",", 1)[1]  # data row 5: no group
    (ws / "blank.csv").write_text("\n".join(lines) + "\n")
    return ["check", "blank.csv", "--published", "-s", "demo/schema.toml", "-m", "k=2"]


def _blank_group_in_release(ws: Path) -> list[str]:
    f = ws / "rel" / "release.csv"
    lines = f.read_text().splitlines()
    lines[3] = "," + lines[3].split(",", 1)[1]
    f.write_text("\n".join(lines) + "\n")
    (ws / "rel" / "release.parquet").unlink()
    return ["check", "rel", "-m", "k=3", "--no-verify"]


def _downgraded(cmd: list[str], files: str = "list") -> Setup:
    """release.json lowered to format 1 as kerckhoffs 0.1 wrote it: no integrity record, its
    files a plain list (``files="list"``) or not listed (``"none"``), and the CSV edited: the
    check of the files would be switched off if format 1 were read without --no-verify."""

    def setup(ws: Path) -> list[str]:
        f = ws / "rel" / "release.json"
        meta = json.loads(f.read_text())
        meta["format_version"] = 1
        del meta["integrity"]
        if files == "list":
            meta["files"] = sorted(meta["files"])
        else:
            del meta["files"]
        f.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        _edit_groups(ws / "rel")
        return cmd

    return setup


def _edit_groups(folder: Path) -> None:
    """Every row of the CSV in one group with all QIs ``*``: a table the check would pass."""
    df = pd.read_csv(folder / "release.csv", dtype=str)
    df["group"] = 0
    for c in ("age", "sex", "zip", "nationality"):
        df[c] = "*"
    df.to_csv(folder / "release.csv", index=False)


def _downgraded_with_digests(ws: Path) -> list[str]:
    """Format 1 but still holding its integrity record: verified like format 2, so an edited
    file is refused."""
    f = ws / "rel" / "release.json"
    _reseal(ws / "rel", lambda meta: meta.__setitem__("format_version", 1))
    _edit_groups(ws / "rel")
    assert f.exists()
    return ["check", "rel", "-m", "k=3"]


# fmt: off
FAULTS = [
    # a release is read only through the files its release.json lists
    Fault("unlisted-parquet-check", _forged_in_csv_release(lambda r: ["check", r, "-m", "k=5"]),
          ("csvrel/release.parquet", "does not list", "--no-verify")),
    Fault("unlisted-parquet-audit", _forged_in_csv_release(
        lambda r: ["audit", "-r", r, "--schema", "demo/schema.toml"]),
        ("csvrel/release.parquet", "does not list")),
    Fault("unlisted-parquet-attack", _forged_in_csv_release(
        lambda r: ["attack", "intersection", "-r", r, *INTERSECT[2:]]),
        ("csvrel/release.parquet", "does not list")),
    Fault("unlisted-parquet-other", _forged_in_csv_release(
        lambda r: ["audit", "-r", "rel", "--other", r, "-k", "data.csv", "--schema",
                   "demo/schema.toml"]),
        ("csvrel/release.parquet", "does not list")),
    Fault("unlisted-parquet-no-verify-ignored", _forged_no_verify,
          ("ignoring release.parquet", "not listed", "k=5"), codes=(1,)),
    Fault("unlisted-parquet-beside-parts", _forged_beside_parts,
          ("parts/release.parquet", "does not list")),
    # every file a user names is a regular file
    Fault("fifo-as-data", _fifo_data, ("pipe.csv", "FIFO", "not a regular file")),
    Fault("dev-zero-as-data", _zero_data, ("zero.csv", "character device")),
    Fault("dev-zero-as-data-direct", args("check", "/dev/zero", "-s", "demo/schema.toml", "-m",
          "k=2"), ("/dev/zero", "character device")),
    Fault("fifo-as-schema", _fifo_schema, ("pipe.toml", "FIFO")),
    Fault("fifo-as-schema-audit", _fifo_schema_audit, ("pipe.toml", "FIFO")),
    Fault("directory-as-schema", _directory_as_schema, ("schema.toml", "directory")),
    Fault("fifo-as-hierarchy", _fifo_hierarchy, ("pipe.csv", "FIFO")),
    Fault("fifo-as-knowledge-toml", _fifo_knowledge(".toml"), ("pipe.toml", "FIFO")),
    Fault("fifo-as-knowledge-csv", _fifo_knowledge(".csv"), ("pipe.csv", "FIFO")),
    Fault("dev-zero-as-knowledge", _zero_knowledge, ("zero.toml", "character device")),
    Fault("fifo-as-population", _fifo_population, ("pop.toml", "pipe.csv", "FIFO")),
    Fault("fifo-as-release-json", _fifo_in_release("release.json"),
          ("rel/release.json", "FIFO")),
    Fault("fifo-as-release-csv", _fifo_in_release("release.csv"), ("rel/release.csv", "FIFO")),
    Fault("fifo-as-release-csv-no-verify", _fifo_in_release("release.csv", "--no-verify"),
          ("rel/release.csv", "FIFO")),
    # JSON and TOML bounded in nesting and integer width
    Fault("release-json-deep-nesting", _deep_release_json,
          ("rel/release.json", "nested more than 64")),
    Fault("release-json-nested-500", _nested_release_json,
          ("rel/release.json", "nested more than 64")),
    Fault("release-json-5000-digit-integer", _json_integer_text,
          ("rel/release.json", "too large", "5,000 digits")),
    Fault("dp-release-400-digit-epsilon", _dp_integer("epsilon"),
          ("dp/release.json", "too large", "400 digits")),
    Fault("dp-release-400-digit-privacy-map", _dp_integer("privacy_map"),
          ("dp/release.json", "too large")),
    Fault("schema-deep-arrays", _deep_toml("\nna_values = " + "[" * 50_000 + "]" * 50_000 + "\n"),
          ("demo/schema.toml", "nested more than 64")),
    Fault("schema-deep-dotted-keys", _deep_toml(
        "\n[columns." + ".".join(["x"] * 5000) + "]\nrole = 'quasi'\n"),
        ("demo/schema.toml", "dotted more than 64")),
    Fault("schema-dotted-keys-64-parts", _deep_toml(
        "\n[columns." + ".".join(["x"] * 63) + "]\nrole = 'quasi'\n"),
        ("demo/schema.toml", "nested more than 64")),
    Fault("schema-400-digit-width", _schema_integer(400),
          ("demo/schema.toml", "too large", "400 digits")),
    Fault("schema-5000-digit-width", _schema_integer(5000),
          ("demo/schema.toml", "4300 digits")),
    Fault("knowledge-deep-nesting", _deep_knowledge, ("deep.toml", "nested more than 64")),
    Fault("model-400-digit-epsilon", _model_epsilon, ("dp=", "not a finite number")),
    # a blank group cell, a downgraded format
    Fault("published-blank-group", _blank_group,
          ("blank.csv", "'group'", "data row 5", "blank")),
    Fault("release-blank-group-no-verify", _blank_group_in_release,
          ("rel", "'group'", "data row 3", "blank")),
    Fault("format-1-downgrade-check", _downgraded(["check", "rel", "-m", "k=3"]),
          ("rel/release.json", "format 1", "no file digests", "--no-verify")),
    Fault("format-1-downgrade-no-files", _downgraded(["check", "rel", "-m", "k=3"], "none"),
          ("rel/release.json", "format 1", "--no-verify")),
    Fault("format-1-downgrade-audit", _downgraded(["audit", "-r", "rel", "--schema",
          "demo/schema.toml"]), ("rel/release.json", "format 1", "--no-verify")),
    Fault("format-1-downgrade-other", _downgraded(["audit", "-r", "rel2", "--other", "rel",
          "-k", "data.csv", "--schema", "demo/schema.toml"]),
          ("rel/release.json", "format 1", "--no-verify")),
    Fault("format-1-sealed-still-verified", _downgraded_with_digests,
          ("rel/release.csv", "changed after it was written")),
]
# fmt: on
