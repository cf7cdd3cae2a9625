"""Small tables whose sets of possible tables are too large to write in decimal (paper 002's
disclosure sets on real data), for the default suite and the fault catalogue.

``|PER|`` of ``n`` rows is at most ``n!`` (one group, every sensitive value distinct), and
Python refuses to write an int of more than 4,300 digits as a string: ``1558!`` has 4,300
digits, ``1559!`` has 4,303. So 1,559 rows is the smallest table whose size message could
crash that way; :func:`write` uses 1,600 rows (``1600!/2`` has 4,434 digits): one numeric QI
``age`` = the row number (0..1599) and one sensitive ``cond``, all values distinct except
rows 0 and 1, which share ``v0``.

Candidates (full-domain lattice with ``widths = [2, 2000]``, or the same as age bins):
``pairs`` (groups of 2: could pass distinct 2-diversity, but the pair {0, 1} fails it),
``all`` (one group: passes). The naive choice is ``all`` and ``pairs`` comes earlier and could
pass: the disclosure set must be enumerated, and cannot be. With ``rows`` (groups of 1, which
can never pass) instead of ``pairs``, nothing before ``all`` can pass: the exact shortcut
decides without enumerating.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

N = 1600
EXPONENT = 4433
"""``floor(log10(1600! / 2))``: the size of ``PER(all)`` as ``about 10^EXPONENT`` (checked in
the tests against the decimal string, with Python's limit lifted)."""

SCHEMA = """
[columns.age]
role = "quasi"
kind = "numeric"
widths = [2, 2000]

[columns.cond]
role = "sensitive"
kind = "categorical"
"""


def frame(n: int = N) -> pd.DataFrame:
    """The table: ``age`` 0..n-1, ``cond`` v0, v0, v1, v2, ..., v(n-2)."""
    cond = ["v0"] + [f"v{i}" for i in range(n - 1)]
    return pd.DataFrame({"age": np.arange(n), "cond": cond})


def candidates(first: str, n: int = N) -> list[dict[str, object]]:
    """``[first, all]`` as candidates by age bins; ``first`` is ``pairs`` or ``rows``."""
    step = 2 if first == "pairs" else 1
    bins = [[i, i + step - 1] for i in range(0, n, step)]
    return [{"name": first, "age": bins}, {"name": "all", "age": [[0, n - 1]]}]


def sequence_toml(first: str, n: int = N) -> str:
    """:func:`candidates` as a sequence file (the ``-O sequence=`` format)."""
    out = []
    for c in candidates(first, n):
        ranges = ", ".join(f"[{lo}, {hi}]" for lo, hi in c["age"])  # type: ignore[attr-defined]
        out.append(f'[[generalization]]\nname = "{c["name"]}"\nage = [{ranges}]\n')
    return "\n".join(out)


def write(folder: Path, n: int = N) -> dict[str, Path]:
    """Write ``big.csv``, ``big.toml``, ``people.csv`` (the ages alone: the adversary's
    population), ``pairs.toml`` / ``rows.toml`` and ``flat.csv`` (every age 0: the lattice's
    first node is already one group) into ``folder``; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "data": folder / "big.csv",
        "schema": folder / "big.toml",
        "people": folder / "people.csv",
        "pairs": folder / "pairs.toml",
        "rows": folder / "rows.toml",
        "flat": folder / "flat.csv",
    }
    df = frame(n)
    df.to_csv(paths["data"], index=False)
    df.assign(age=0).to_csv(paths["flat"], index=False)
    df[["age"]].to_csv(paths["people"], index=False)
    paths["schema"].write_text(SCHEMA)
    paths["pairs"].write_text(sequence_toml("pairs", n))
    paths["rows"].write_text(sequence_toml("rows", n))
    return paths
