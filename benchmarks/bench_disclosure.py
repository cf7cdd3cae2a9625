"""Question: how fast are the disclosure-set publishers of paper 002 (spec exclusive.md)?
Targets (kerckhoffs issue 13): the running example's three outcomes (naive, inclusive,
exclusive on Table 1 under Table 2's g1-g3) under 10 ms; the exhaustive vector (all three
outcomes for every one of the 453,600 distinct tables of Table 1's SA multiset, by the
class-wide engine) under 3 s, so that its test is an ordinary one.

Side by side in one run: the recursive publishers on the running example, the inclusive one
with and without memoization (the cost experiment's switch), and the class-wide engine. CPU
and wall time, medians of several runs.

Run: ``python benchmarks/bench_disclosure.py [--repeat 7]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, save
from kerckhoffs.disclosure import (
    PAPER_CHK,
    class_outcomes,
    exclusive,
    inclusive,
    naive,
    read_sequence,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "disclosure"


def _times(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()  # warm-up (arrangement caches, numpy)
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    table = pd.read_csv(EXAMPLE / "table1.csv")
    codes, _ = pd.factorize(table["condition"], sort=True)
    sa = np.asarray(codes, dtype=np.int64)
    seq = read_sequence(EXAMPLE / "sequence.toml", len(sa))
    cases: list[tuple[str, str, Callable[[], object], float]] = [
        (
            "running example",
            "naive + inclusive + exclusive",
            lambda: (
                naive(seq, sa, PAPER_CHK),
                inclusive(seq, sa, PAPER_CHK),
                exclusive(seq, sa, PAPER_CHK),
            ),
            0.010,
        ),
        ("running example", "inclusive, memoized", lambda: inclusive(seq, sa, PAPER_CHK), 0.010),
        (
            "running example",
            "inclusive, no memo",
            lambda: inclusive(seq, sa, PAPER_CHK, memo=False),
            0.010,
        ),
        (
            "453,600 tables",
            "class-wide engine",
            lambda: class_outcomes(seq, np.bincount(sa), PAPER_CHK).joint_counts(),
            3.0,
        ),
    ]
    rows = []
    for workload, method, fn, target in cases:
        repeat = args.repeat if target < 1 else max(3, args.repeat // 2)
        wall, cpu = _times(fn, repeat)
        rows.append(
            {
                "workload": workload,
                "method": method,
                "median_s": wall,
                "cpu_s": cpu,
                "target_s": target,
                "repeat": repeat,
            }
        )
        print(f"{workload:16s} {method:30s} wall {wall * 1e3:9.2f} ms  cpu {cpu * 1e3:9.2f} ms")
    df = pd.DataFrame(rows)
    save(
        df,
        "disclosure",
        "paper 002 publishers: running example and the exhaustive class (median ms)",
        "workload",
    )
    print(f"wrote {RESULTS / 'disclosure.csv'}")


if __name__ == "__main__":
    main()
