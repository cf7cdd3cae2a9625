"""Faults of the privacy ledger and the DP publication transaction: private files where they
could be published, FIFOs and devices as ledgers, ledgers edited and re-sealed (a key given
twice, float or boolean member indices, ``"version": true``, NaN, numbers out of range, deep
nesting, notions a ledger cannot hold), neighbour notions that do not match, ledger options
that cannot work, and ``--provider-rows`` where it cannot be written. Each ends in one
``error:`` line, exit 2, the workspace unchanged (``tests/catalogue.py``)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from catalogue import ANON, Fault, Setup, args
from kerckhoffs.data import manifest

DPA = [
    "anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "dp-histogram", "-m", "dp=1",
    "-O", "levels=age:4,sex:1,zip:1,nationality:1",
]  # fmt: skip
PROVIDERS = ["anonymize", "data_p.csv", "-s", "demo/schema_providers.toml"]


def _sealed(text: str) -> bytes:
    """A ledger file's bytes sealed as the format says (what someone re-sealing an edit does)."""
    raw = text.encode("utf-8")
    return raw.replace(
        manifest.PLACEHOLDER.encode(),
        ("sha256:" + hashlib.sha256(raw).hexdigest()).encode(),
    )


def _ledger_text(
    *,
    releases: str | None = None,
    version: str = "2",
    people: str = '["P000001","P000002"]',
    members: str = "[0,1]",
    epsilon: str = "0.5",
    neighbours: str = "substitution",
    budget_notion: str = "substitution",
) -> str:
    entry = (
        f'{{"name":"A","path":null,"digest":null,"epsilon":{epsilon},"delta":0.0,'
        f'"neighbours":"{neighbours}","recorded":"","members":{members}}}'
    )
    return (
        f'{{"format":"kerckhoffs-ledger","version":{version},"composition":"basic",'
        f'"neighbours":"{budget_notion}","people":{people},'
        f'"releases":{releases if releases is not None else f"[{entry}]"},'
        f'"integrity":"{manifest.PLACEHOLDER}"}}\n'
    )


def _resealed(command: str, **fields: str) -> Setup:
    """A ledger ``led.json`` edited and re-sealed, then read by ``budget`` or ``anonymize``."""

    def setup(ws: Path) -> list[str]:
        (ws / "led.json").write_bytes(_sealed(_ledger_text(**fields)))
        if command == "budget":
            return ["budget", "led.json"]
        return [*DPA, "-o", "x", "--ledger", "led.json"]

    return setup


def _fifo(command: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        fifo = ws.parent / "ledger.fifo"  # outside the workspace: its snapshot reads files
        if not fifo.exists():
            os.mkfifo(fifo)
        if command == "budget":
            return ["budget", str(fifo)]
        return [*DPA, "-o", "x", "--ledger", str(fifo)]

    return setup


def _loop(ws: Path) -> list[str]:
    (ws / "loop.json").symlink_to("loop.json")
    return [*DPA, "-o", "x", "--ledger", "loop.json"]


def _with_providers(*extra: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        lines = (ws / "data.csv").read_text().splitlines()
        rows = [lines[0] + ",provider"] + [f"{ln},H{i % 3}" for i, ln in enumerate(lines[1:])]
        (ws / "data_p.csv").write_text("\n".join(rows) + "\n")
        return [*PROVIDERS, *extra]

    return setup


def _add_remove_ledger(*extra: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        (ws / "ar.json").write_bytes(
            _sealed(_ledger_text(neighbours="add-remove", budget_notion="add-remove"))
        )
        return [*DPA, "-o", "x", "--ledger", "ar.json", *extra]

    return setup


def _blank_id(ws: Path) -> list[str]:
    lines = (ws / "data.csv").read_text().splitlines()
    lines[3] = "," + lines[3].split(",", 1)[1]
    (ws / "data.csv").write_text("\n".join(lines) + "\n")
    return [*DPA, "-o", "x", "--ledger", "l.json"]


def _edited(ws: Path) -> list[str]:
    (ws / "led.json").write_bytes(
        _sealed(_ledger_text()).replace(b'"epsilon":0.5', b'"epsilon":0.1')
    )
    return ["budget", "led.json"]


# fmt: off
FAULTS = [
    # private files where a release folder would publish them
    Fault("ledger-in-another-release", args(*DPA, "-o", "x", "--ledger", "rel/ledger.json"),
          ("--ledger rel/ledger.json", "release.json")),
    Fault("ledger-below-another-release", args(*DPA, "-o", "x", "--ledger", "rel/a/l.json"),
          ("--ledger rel/a/l.json", "release.json")),
    Fault("ledger-in-the-release", args(*DPA, "-o", "x", "--ledger", "x/l.json"),
          ("--ledger x/l.json", "inside the release directory")),
    Fault("ledger-is-an-input", args(*DPA, "-o", "x", "--ledger", "data.csv"),
          ("--ledger data.csv", "input")),
    Fault("ledger-is-a-folder", args(*DPA, "-o", "x", "--ledger", "home"),
          ("--ledger home", "directory")),
    Fault("ledger-ancestor-of-out", args(*DPA, "-o", "a/b", "--ledger", "a"),
          ("--ledger a", "a/b")),
    Fault("provider-rows-in-another-release",
          _with_providers("-a", "mondrian", "-m", "k=3", "-o", "x", "--provider-rows",
                          "rel2/p.csv"), ("--provider-rows rel2/p.csv", "release.json")),
    Fault("provider-rows-ancestor-of-out",
          _with_providers("-a", "mondrian", "-m", "k=3", "-o", "a/b", "--provider-rows", "a"),
          ("--provider-rows a", "a/b")),
    Fault("provider-rows-with-dp",
          _with_providers("-a", "dp-histogram", "-m", "dp=1", "-O",
                          "levels=age:4,sex:1,zip:1,nationality:1", "-o", "x",
                          "--provider-rows", "p.csv"), ("--provider-rows", "dp-histogram")),
    # files that are not ledgers, or not regular files
    Fault("budget-of-a-fifo", _fifo("budget"), ("ledger.fifo", "not a regular file")),
    Fault("ledger-fifo", _fifo("anonymize"), ("ledger.fifo", "not a regular file")),
    Fault("budget-of-dev-zero", args("budget", "/dev/zero"), ("/dev/zero", "not a regular file")),
    Fault("ledger-dev-zero", args(*DPA, "-o", "x", "--ledger", "/dev/zero"),
          ("/dev/zero", "not a regular file")),
    Fault("ledger-symlink-loop", _loop, ("loop.json", "symbolic links")),
    Fault("ledger-edited", _edited, ("led.json", "changed outside kerckhoffs")),
    # re-sealed edits read strictly
    Fault("ledger-releases-twice", _resealed("budget", releases='[],"releases":[]'),
          ("led.json", "'releases' is given twice")),
    Fault("ledger-float-members", _resealed("budget", members="[0.0,1]"),
          ("led.json", "members must be a list of integers")),
    Fault("ledger-bool-members", _resealed("anonymize", members="[true,false]"),
          ("led.json", "members must be a list of integers")),
    Fault("ledger-version-true", _resealed("budget", version="true"), ("led.json", "True")),
    Fault("ledger-nan-epsilon", _resealed("budget", epsilon="NaN"), ("led.json", "NaN")),
    Fault("ledger-400-digit-epsilon", _resealed("anonymize", epsilon="9" * 400),
          ("led.json", "epsilon is out of range")),
    Fault("ledger-deep-nesting", _resealed("budget", people="[" * 50_000 + "]" * 50_000),
          ("led.json", "nested too deeply")),
    Fault("ledger-people-not-text", _resealed("budget", people='["P1",2]'),
          ("led.json", "'people'")),
    Fault("ledger-label-dp-entry", _resealed("budget", neighbours="sensitive-value"),
          ("led.json", "sensitive-value")),
    Fault("ledger-substitution-entry-on-add-remove",
          _resealed("budget", budget_notion="add-remove"), ("led.json", "cannot hold")),
    # neighbour notions
    Fault("substitution-release-on-add-remove-ledger", _add_remove_ledger(),
          ("substitution", "add-remove")),
    Fault("ledger-keeps-its-notion",
          _add_remove_ledger("--ledger-neighbours", "substitution", "-O",
                             "neighbours=add-remove"), ("ar.json", "add-remove")),
    Fault("ledger-neighbours-unknown",
          args(*DPA, "-o", "x", "--ledger", "l.json", "--ledger-neighbours", "swap"),
          ("'swap'",)),
    # ledger options that cannot work
    Fault("ledger-neighbours-without-ledger",
          args(*DPA, "-o", "x", "--ledger-neighbours", "add-remove"),
          ("--ledger-neighbours", "--ledger")),
    Fault("over-budget-without-ledger", args(*DPA, "-o", "x", "--over-budget", "refuse"),
          ("--over-budget", "--ledger")),
    Fault("over-budget-without-budget",
          args(*DPA, "-o", "x", "--ledger", "l.json", "--over-budget", "refuse"),
          ("--over-budget", "--budget")),
    Fault("over-budget-unknown",
          args(*DPA, "-o", "x", "--ledger", "l.json", "--budget", "1", "--over-budget", "maybe"),
          ("--over-budget maybe",)),
    Fault("budget-400-digits",
          args(*DPA, "-o", "x", "--ledger", "l.json", "--budget", "1" + "0" * 400),
          ("budget",)),
    Fault("ledger-not-dp", args(*ANON, "-o", "x", "--ledger", "l.json"),
          ("--ledger", "DP release", "mondrian")),
    # a ledger's folder is never created (before any other check): nothing left behind
    Fault("ledger-in-new-folders-refused",
          args(*ANON, "-o", "x", "--ledger", "new/folders/l.json"),
          ("new/folders", "does not exist")),
    Fault("ledger-without-dp-model",
          args("anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "dp-histogram", "-m",
               "dp=1", "-m", "dp=2", "-O", "levels=age:4,sex:1,zip:1,nationality:1", "-o", "x",
               "--ledger", "l.json"), ("dp=",)),
    Fault("ledger-id-blank", _blank_id, ("'patient_id'", "data row 3")),
]
# fmt: on
