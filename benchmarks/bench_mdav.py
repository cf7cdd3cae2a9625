"""Question: how fast is MDAV (paper 004's microaggregation) on the subsets paper 004's Fig. 1
anonymizes, against the row-by-row version it replaced?

The subsets are those of ``reproduce composition-fig1`` (seed 0, first subset): Adult 17,581
rows (7,606 distinct QI vectors) and the Census stand-in 37,593 rows (14,082 distinct), encoded
by ``mdav_encode``. Side by side in one run, for k = 5 and 30:

- ``kerckhoffs mdav_groups``: distances per distinct point, exact centroid;
- ``baseline (row by row)``: the previous implementation, kept in ``baselines/mdav_v0.py``.

The two agree except where two points tie exactly in distance to the centroid (the baseline's
float centroid lets its last bit decide); the script prints how many rows differ.
CPU (``time.process_time``) and wall time, medians of repeated runs.
Run: ``python benchmarks/bench_mdav.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from _timing import SHARED_DATA, save
from baselines.mdav_v0 import mdav_groups as baseline_groups
from kerckhoffs.algorithms.mdav import mdav_encode, mdav_groups
from kerckhoffs.attacks.composition import take_rows
from kerckhoffs.experiments import paper_004_composition as p004
from kerckhoffs.experiments.base import Context


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``fn``."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ctx = Context(SHARED_DATA)
    rows = []
    for dataset in ("adult", "census"):
        subs, _ = p004.subsets_of(ctx, dataset, 2, 0)
        x = mdav_encode(take_rows(p004.table_of(ctx, dataset), subs[0]))
        distinct = len(np.unique(x, axis=0))
        for k in (5, 30):
            differ = int((mdav_groups(x, k) != baseline_groups(x, k)).sum())
            for method, fn in (
                ("kerckhoffs mdav_groups", lambda x=x, k=k: mdav_groups(x, k)),
                ("baseline (row by row)", lambda x=x, k=k: baseline_groups(x, k)),
            ):
                wall, cpu = timed(fn, args.repeat)
                rows.append(
                    {
                        "method": method,
                        "task": f"{dataset} {len(x):,} rows, k={k}",
                        "rows": len(x),
                        "distinct": distinct,
                        "k": k,
                        "median_s": wall,
                        "median_cpu_s": cpu,
                        "rows_differing": differ,
                    }
                )
    out = pd.DataFrame(rows)
    base = out[out["method"].str.startswith("baseline")].set_index("task")["median_cpu_s"]
    out["speedup_cpu"] = out["task"].map(base) / out["median_cpu_s"]
    save(out, "mdav", "MDAV on paper 004's Fig. 1 subsets (CPU)", "task", value="median_cpu_s")
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
