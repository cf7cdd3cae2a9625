"""The fault catalogue's harness: one :class:`Fault` is a workspace change and a command that
must end in one ``error:`` line (exit 2), or, for a verdict that could not be reached, in the
exit codes it names with no traceback and no "internal error"; the workspace is compared before
and after. ``test_catalogue.py`` runs every fault of ``FAULTS`` there and of the
``tests/faults_*.py`` modules (one per area, each a list ``FAULTS``)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` with the SHA-256 of its bytes ("dir" for a directory)."""
    snap = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            snap[rel] = "link:" + os.readlink(p)
        elif p.is_dir():
            snap[rel] = "dir"
        else:
            snap[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return snap


def assert_one_error_line(code: int, out: str, err: str, keys: tuple[str, ...]) -> str:
    """Exit 2, no traceback, and exactly one ``error:`` line on stderr naming every key (notes
    and warnings may precede it)."""
    assert "Traceback" not in out + err, err
    assert code == 2, f"exit {code}\nstdout: {out[-2000:]}\nstderr: {err}"
    lines = [ln for ln in err.splitlines() if not ln.startswith(("note:", "warning:"))]
    assert len(lines) == 1, f"expected one error line, got {lines!r}"
    line = lines[0]
    assert line.startswith("error: ") and len(line) > len("error: "), line
    for key in keys:
        assert key in line, f"{key!r} not named in {line!r}"
    return line


Setup = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Fault:
    """One fault: ``setup`` prepares the workspace (its changes are part of the 'before') and
    returns the command's arguments; ``keys`` must appear in the error line."""

    id: str
    setup: Setup
    keys: tuple[str, ...]
    codes: tuple[int, ...] = (2,)
    """The exit codes allowed: 2 (the default) for bad input, where exactly one ``error:``
    line must name every key; 1 (and 2) for a verdict that could not be reached, where the
    keys must appear in the output and no line may read SAFE or ok."""


def args(*a: str) -> Setup:
    return lambda ws: list(a)


ANON = ["anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "mondrian", "-m", "k=3"]
