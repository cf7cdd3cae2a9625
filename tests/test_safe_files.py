"""Files a user names are read safely (:mod:`kerckhoffs.data.io`): regular files only (a FIFO
would block the reader, ``/dev/zero`` never end), JSON and TOML bounded in size, nesting and
integer width (no ``RecursionError`` or ``OverflowError`` escapes), and running out of memory
while parsing a CSV is out of memory, not a malformed file.

The nesting and integer bounds are tested at their edges against the definition (a value
nested ``d`` deep is ``d`` brackets; an integer ``x`` fits when ``|x| < 2^63``), not against
the walk under test."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs.data import csv_arrow
from kerckhoffs.data.io import (
    MAX_INTEGER,
    MAX_NESTING,
    check_structure,
    load_json,
    load_toml,
    read_regular,
    read_table,
    regular_file,
)
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import InputError, SchemaError

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"


# -- regular files only -------------------------------------------------------------------------
def test_regular_file_refuses_every_other_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # short relative names: a socket path has ~100 bytes at most
    Path("a.csv").write_text("x\n")
    Path("link.csv").symlink_to("a.csv")
    assert regular_file("a.csv") == Path("a.csv")
    assert regular_file("link.csv") == Path("link.csv")  # a link to a regular file is one
    os.mkfifo("pipe")
    Path("dir").mkdir()
    Path("zero").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("sock")
        kinds = {
            "pipe": "a FIFO (named pipe)",
            "dir": "a directory",
            "zero": "a character device",
            "/dev/null": "a character device",
            "sock": "a socket",
        }
        for name, kind in kinds.items():
            with pytest.raises(InputError) as e:
                regular_file(name, "data file")
            assert str(e.value) == f"{name}: the data file is {kind}, not a regular file"
    finally:
        sock.close()
    with pytest.raises(SchemaError, match=r"^schema file not found: nope\.toml$"):
        regular_file("nope.toml", "schema file", SchemaError)


def test_read_regular_is_bounded_and_never_blocks(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 10)
    assert read_regular(f, limit=10) == b"x" * 10
    with pytest.raises(InputError, match="larger than"):
        read_regular(f, limit=9)
    os.mkfifo(tmp_path / "pipe.json")  # no writer: opening it to read would block
    with pytest.raises(InputError, match="FIFO"):
        read_regular(tmp_path / "pipe.json")


# -- nesting and integer width, at their edges ---------------------------------------------------
@pytest.mark.parametrize("depth", [1, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 100_000])
def test_json_nesting_edge(depth: int) -> None:
    text = ("[" * depth + "]" * depth).encode()
    if depth <= MAX_NESTING:
        value = load_json(text, "x.json")
        for _ in range(depth - 1):
            value = value[0]
        assert value == []
    else:
        with pytest.raises(InputError, match=f"x.json: .*nested more than {MAX_NESTING}"):
            load_json(text, "x.json")


@pytest.mark.parametrize("depth", [MAX_NESTING, MAX_NESTING + 1, 50_000])
def test_toml_nesting_edge(tmp_path: Path, depth: int) -> None:
    """TOML nests by arrays and by dotted keys (``a.b.c``: a table per key); both count (the
    file itself is the outermost table). 50,000 parts are refused before tomllib, whose time
    grows with the square of a dotted key's length."""
    arrays = tmp_path / "arrays.toml"
    arrays.write_text("x = " + "[" * (depth - 1) + "]" * (depth - 1) + "\n")
    keys = tmp_path / "keys.toml"
    keys.write_text("[" + ".".join(["k"] * (depth - 1)) + "]\nv = 1\n")
    for f in (arrays, keys):
        if depth <= MAX_NESTING:
            assert load_toml(f)
        else:
            with pytest.raises(InputError, match=f"(nested|dotted) more than {MAX_NESTING}"):
                load_toml(f)


@pytest.mark.parametrize(
    "number, fits",
    [
        (MAX_INTEGER - 1, True),
        (-(MAX_INTEGER - 1), True),
        (MAX_INTEGER, False),
        (int("1" * 400), False),
        (-int("1" * 400), False),
    ],
)
def test_integer_edge(tmp_path: Path, number: int, fits: bool) -> None:
    f = tmp_path / "n.toml"
    f.write_text(f"n = {number}\n")
    for load in (lambda: load_json(f'{{"n": {number}}}'.encode(), "n.json"), lambda: load_toml(f)):
        if fits:
            assert load() == {"n": number}
        else:
            with pytest.raises(InputError, match="too large"):
                load()


def test_integers_python_cannot_even_parse(tmp_path: Path) -> None:
    """More than 4,300 digits: Python refuses to convert them (ValueError): one line."""
    digits = "7" * 5000
    with pytest.raises(InputError, match=r"77777777777777777777… \(5,000 digits\) is too large"):
        load_json(f"[{digits}]".encode(), "x.json")
    f = tmp_path / "x.toml"
    f.write_text(f"n = {digits}\n")
    with pytest.raises(InputError, match=r"x\.toml: a value Python cannot read \(Exceeds"):
        load_toml(f)


def test_check_structure_allows_what_kerckhoffs_writes() -> None:
    check_structure({"a": [1, 2.5, True, None, {"b": "c"}], "n": -(2**62)}, "x")
    with pytest.raises(InputError, match="too large"):
        check_structure({"a": [{"b": [2**70]}]}, "x")


def test_invalid_json_and_toml_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"not valid JSON \(line 1, column 2"):
        load_json(b"[", "x.json")
    with pytest.raises(InputError, match="not UTF-8"):
        load_json(b"\xff", "x.json")
    f = tmp_path / "x.toml"
    f.write_text("a = [\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_toml(f)


def test_a_release_json_with_a_400_digit_epsilon_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported case: OverflowError (int too large to convert to float) from a resealed
    release.json, printed as an internal error."""
    import json

    from kerckhoffs.data import manifest

    monkeypatch.chdir(tmp_path)
    generate_hospital(120, 3).to_csv("d.csv", index=False)
    code, _, err = run_cli(
        monkeypatch, capsys, "anonymize", "d.csv", "-s", SCHEMA, "-a", "dp-histogram",
        "-m", "dp=1", "-O", "levels=age:4,sex:1", "-o", "dp",
    )  # fmt: skip
    assert code == 0, err
    meta = json.loads(Path("dp/release.json").read_text())
    del meta["integrity"]
    meta["dp"]["epsilon"] = int("1" * 400)
    Path("dp/release.json").write_bytes(manifest.seal(meta))
    code, _, err = run_cli(monkeypatch, capsys, "check", "dp", "-m", "dp=1")
    assert code == 2 and "internal error" not in err
    assert (
        err.strip().startswith("error: dp/release.json: the integer 1111") and "400 digits" in err
    )


# -- out of memory while parsing is out of memory -----------------------------------------------
def _no_memory(kind: str):  # type: ignore[no-untyped-def]
    def fail(*args: object, **kwargs: object) -> None:
        if kind == "tokenizer":  # what pandas' C tokenizer raises when a malloc fails
            raise pd.errors.ParserError("Error tokenizing data. C error: out of memory")
        if kind == "mmap":  # mapping the file for a parallel read failed
            raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))
        import pyarrow as pa

        raise pa.ArrowMemoryError("malloc of size 1073741824 failed")

    return fail


@pytest.mark.parametrize("kind", ["tokenizer", "mmap"])
def test_out_of_memory_while_parsing_a_csv_is_out_of_memory(
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "d.csv"
    generate_hospital(50, 1).to_csv(data, index=False)
    monkeypatch.setattr(pd, "read_csv", _no_memory(kind))
    with pytest.raises(MemoryError):
        read_table(data)
    # pandas' reader (a table's columns are read by pyarrow's where it reads alike)
    monkeypatch.setattr(csv_arrow, "read_dictionary_columns", lambda *a, **k: None)
    code, _, err = run_cli(monkeypatch, capsys, "check", data, "-s", SCHEMA, "-m", "k=2")
    assert code == 3 and err.startswith("error: out of memory:"), err
    assert "malformed" not in err


def test_out_of_memory_while_reading_parquet_is_out_of_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d.parquet"
    generate_hospital(50, 1).to_parquet(data, index=False)
    monkeypatch.setattr(pd, "read_parquet", _no_memory("arrow"))
    with pytest.raises(MemoryError):
        read_table(data)


def test_a_real_parse_error_is_still_malformed(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text('a,b\n1,"2\n')
    with pytest.raises(InputError, match="malformed CSV"):
        read_table(data)


def test_out_of_memory_while_preparing_a_dataset_is_out_of_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kerckhoffs.data import datasets

    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n")
    monkeypatch.setattr(pd, "read_csv", _no_memory("tokenizer"))
    with pytest.raises(MemoryError):
        datasets._read_csv(data)
