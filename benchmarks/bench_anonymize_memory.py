"""Question: what is the peak memory of ``kerckhoffs anonymize`` on 3,000,000 rows (issue 15,
row 5: 1.69 GB before, reached while reading the CSV with all its columns; target <= 0.8 GB)?

Census-Income (``kerckhoffs datasets prepare census``: 148,318 rows, 12 columns) resampled
with replacement (numpy seed 0) to 3,000,000 rows and written as CSV (514 MB); schema
``examples/census/schema.toml`` (7 QIs, SA occupation; 4 columns the schema does not name),
Mondrian l = 4, CSV + Parquet out. The CLI runs as a subprocess; peak RSS, CPU (user + system)
and wall time of that process from ``os.wait4``. Side by side in one run, alternating: today's
sources and the previous implementation (``_cli_runs``: main before issue 15). Both
releases are asserted byte-identical. Medians of ``--repeat`` runs each.

Run: ``python benchmarks/bench_anonymize_memory.py [--rows 3000000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _cli_runs import ROOT, baseline_src, ours_src, run_cli, same_release
from _timing import SHARED_DATA, save

SCHEMA = ROOT / "examples" / "census" / "schema.toml"
TARGET_MB = 800


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from kerckhoffs.datasets import load_census

    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    census = load_census(SHARED_DATA / "census")
    rows = np.random.default_rng(0).integers(0, len(census), args.rows)
    data = work / "census.csv"
    census.iloc[rows].to_csv(data, index=False)
    del census, rows
    sides = {"kerckhoffs (today)": ours_src(), "baseline (before issue 15)": baseline_src()}
    outs = {name: work / f"out-{i}" for i, name in enumerate(sides)}
    runs: dict[str, list] = {name: [] for name in sides}
    for _ in range(args.repeat):
        for name, src in sides.items():
            cmd = ["anonymize", str(data), "-s", str(SCHEMA), "-a", "mondrian", "-m", "l=4"]
            r = run_cli(src, [*cmd, "-o", str(outs[name]), "--overwrite"])
            if r.returncode != 0:
                raise SystemExit(f"{name} failed: {r.stderr[-500:]}")
            runs[name].append(r)
            print(f"{name}: peak {r.peak_mb:.0f} MB, CPU {r.cpu_s:.2f} s", flush=True)
    identical = same_release(*outs.values())
    assert identical, "the two releases differ"
    shutil.rmtree(work)
    table = pd.DataFrame(
        [
            {
                "method": name,
                "task": f"anonymize {args.rows:,} rows, Mondrian l=4",
                "rows": args.rows,
                "median_peak_mb": statistics.median(r.peak_mb for r in rs),
                "max_peak_mb": max(r.peak_mb for r in rs),
                "median_s": statistics.median(r.wall_s for r in rs),
                "median_cpu_s": statistics.median(r.cpu_s for r in rs),
                "runs": len(rs),
                "identical_release": identical,
            }
            for name, rs in runs.items()
        ]
    )
    table["peak_for_plot"] = table["median_peak_mb"] / 1e3  # save() plots value * 1e3
    save(
        table,
        "anonymize_memory",
        f"kerckhoffs anonymize, Census resampled to {args.rows:,} rows: peak RSS (MB)",
        "task",
        value="peak_for_plot",
        limit=TARGET_MB / 1e3,
    )
    print(table.drop(columns="peak_for_plot").to_string(index=False))
    ours = table.loc[0, "median_peak_mb"]
    verdict = "met" if ours <= TARGET_MB else "NOT met"
    ratio = ours / table.loc[1, "median_peak_mb"]
    print(f"peak x{ratio:.2f} of the baseline; target {TARGET_MB} MB: {verdict}")


if __name__ == "__main__":
    main()
