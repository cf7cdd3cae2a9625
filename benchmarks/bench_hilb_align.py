"""Question: how much faster is the Hilb attack on a generalized release read from files when
the alignment's count propagation recomputes only the types and groups whose pairs changed?

The attack (``kerckhoffs audit --release R --knowledge POP --schema S``) first aligns the
population with the published cells (:func:`kerckhoffs.attacks.hilb.align.align`): bounds on
the count of every (individual type, group) pair are tightened round after round until nothing
changes. The baseline (``baselines/hilb_propagate_v0.py``) recomputes every type and every
group in each round; the current version only the dirty ones. Both must give the same
alignment (asserted).

Data: Adult (45,222 rows) in paper 000's setting (``examples/adult/schema_every_value.toml``),
Hilb and Hilb++ at l = 3, the release written to frames and read back as from files, the
population the data's QIs. Each row: the whole ``align`` and the propagation alone, median
wall and CPU seconds of ``--repeat`` runs. Run: ``python benchmarks/bench_hilb_align.py
[--repeat 3]``. Writes ``benchmarks/results/hilb_align.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import kerckhoffs.attacks.hilb.align as hilb_align
from _timing import SHARED_DATA, median_wall_cpu, save
from baselines.hilb_propagate_v0 import _propagate as propagate_v0
from kerckhoffs import Release, Schema, Table
from kerckhoffs.algorithms.registry import get
from kerckhoffs.datasets import load_adult
from kerckhoffs.models import LDiversity

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "adult" / "schema_every_value.toml"
CURRENT = hilb_align._propagate
METHODS: dict[str, Callable[..., Any]] = {
    "every segment, every round (before)": propagate_v0,
    "dirty segments": CURRENT,
}


def measure(
    back: Release, df: pd.DataFrame, schema: Schema, propagate: Callable[..., Any], repeat: int
) -> tuple[tuple[float, float], tuple[float, float], tuple[Any, ...]]:
    """Median (wall, CPU) of the whole ``align`` and of the propagation alone with
    ``propagate``, and what they give (compared between methods)."""
    seen: list[Any] = []

    def record(*a: Any) -> Any:
        seen.append(a)
        return propagate(*a)

    setattr(hilb_align, "_propagate", record)  # noqa: B010  (a module attribute, patched)
    try:
        wall, cpu, a = median_wall_cpu(lambda: hilb_align.align(back, df, schema), repeat)
    finally:
        setattr(hilb_align, "_propagate", CURRENT)  # noqa: B010
    p_wall, p_cpu, bounds = median_wall_cpu(lambda: propagate(*seen[-1]), repeat)
    return (wall, cpu), (p_wall, p_cpu), (a.counts, a.individual, a.row_type, *bounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    df = load_adult(SHARED_DATA / "adult")
    schema = Schema.from_toml(SCHEMA)
    table = Table.encode(df, schema)
    rows = []
    for algorithm in ("hilb", "hilb++"):
        release = get(algorithm).run(table, [LDiversity(3)])
        back = Release.from_frames(release.frames(), release.metadata(), schema)
        outcomes = []
        for method, propagate in METHODS.items():
            whole, alone, out = measure(back, df, schema, propagate, args.repeat)
            outcomes.append(out)
            for step, (wall, cpu) in (("align", whole), ("propagation", alone)):
                rows.append(
                    {
                        "case": f"{algorithm} l=3 {step}",
                        "method": method,
                        "pairs": out[0]["pairs"],
                        "median_s": wall,
                        "median_cpu_s": cpu,
                    }
                )
                print(
                    f"{algorithm:7s} {step:12s} {method:36s} wall {wall:6.2f} s  cpu {cpu:6.2f} s"
                )
        before, after = outcomes
        assert before[0] == after[0], f"{algorithm}: the alignment counts differ"
        assert all(np.array_equal(x, y) for x, y in zip(before[1:], after[1:], strict=True))
    save(
        pd.DataFrame(rows),
        "hilb_align",
        f"Hilb attack from files on Adult, l = 3: alignment (median of {args.repeat})",
        "case",
    )


if __name__ == "__main__":
    main()
