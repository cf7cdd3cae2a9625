"""Question: what does ``kerckhoffs anonymize`` cost end to end on 1,000,000 rows, CSV in and
out (issue 15, row 4: 6.9 s CPU before, target <= 2.5 s)?

1,000,000 generated hospital rows (``generate_hospital(1_000_000, 0)``, schema
``examples/demo/schema.toml``), Mondrian k = 5, CSV + Parquet out; the CLI as a subprocess,
CPU = user + system of that process (``os.wait4``), wall time and peak RSS. Side by side in one
run, alternating: today's sources and the previous implementation (``_cli_runs``:
main before issue 15, extracted by ``git archive``). Both releases are asserted byte-identical
(CSV, Parquet and ``release.json``). Medians of ``--repeat`` runs each.

Also: the phases of one in-process run of ours (import, read + encode, Mondrian, write with the
fail-closed check), CPU seconds, to show where the rest goes.

Run: ``python benchmarks/bench_cli_end_to_end.py [--rows 1000000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from _cli_runs import ROOT, baseline_src, ours_src, run_cli, same_release
from _timing import save

SCHEMA = ROOT / "examples" / "demo" / "schema.toml"
TARGET_CPU_S = 2.5

PHASES = r"""
import sys, time
t0 = time.process_time()
sys.path.insert(0, sys.argv[1])
import kerckhoffs.cli
from kerckhoffs import Schema, Table, api
from kerckhoffs.models import parse_model
t1 = time.process_time()
table = Table.from_csv(sys.argv[2], Schema.from_toml(sys.argv[3]))
t2 = time.process_time()
release = api.anonymize_table(table, "mondrian", [parse_model("k=5")], verify=False)
t3 = time.process_time()
release.write(sys.argv[4], overwrite=True)
t4 = time.process_time()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from kerckhoffs.datasets import generate_hospital

    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    data = work / "hospital.csv"
    generate_hospital(args.rows, 0).to_csv(data, index=False)
    sides = {"kerckhoffs (today)": ours_src(), "baseline (before issue 15)": baseline_src()}
    outs = {name: work / f"out-{i}" for i, name in enumerate(sides)}
    runs: dict[str, list] = {name: [] for name in sides}
    for _ in range(args.repeat + 1):  # the first round warms the page cache, untimed
        for name, src in sides.items():
            cmd = ["anonymize", str(data), "-s", str(SCHEMA), "-a", "mondrian", "-m", "k=5"]
            r = run_cli(src, [*cmd, "-o", str(outs[name]), "--overwrite"])
            if r.returncode != 0:
                raise SystemExit(f"{name} failed: {r.stderr[-500:]}")
            runs[name].append(r)
    identical = same_release(*outs.values())
    assert identical, "the two releases differ"
    rows = []
    for name, rs in runs.items():
        rs = rs[1:]
        rows.append(
            {
                "method": name,
                "task": f"anonymize {args.rows:,} rows, Mondrian k=5, CSV in and out",
                "rows": args.rows,
                "median_s": statistics.median(r.wall_s for r in rs),
                "median_cpu_s": statistics.median(r.cpu_s for r in rs),
                "median_user_s": statistics.median(r.user_s for r in rs),
                "median_sys_s": statistics.median(r.sys_s for r in rs),
                "median_peak_mb": statistics.median(r.peak_mb for r in rs),
                "runs": len(rs),
                "identical_release": identical,
            }
        )
    phases = subprocess.run(
        [sys.executable, "-c", PHASES, str(ours_src()), str(data), str(SCHEMA), str(work / "p")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for label, value in zip(
        ["import", "read + encode", "Mondrian", "write (check, CSV, Parquet)"], phases, strict=True
    ):
        rows.append(
            {"method": "kerckhoffs phases (one run)", "task": label, "median_cpu_s": float(value)}
        )
    shutil.rmtree(work)
    df = pd.DataFrame(rows)
    save(
        df[df.method != "kerckhoffs phases (one run)"],
        "cli_end_to_end",
        f"kerckhoffs anonymize, {args.rows:,} rows, Mondrian k=5, CSV in/out (CPU)",
        "task",
        value="median_cpu_s",
        limit=TARGET_CPU_S,
    )
    df.to_csv(ROOT / "benchmarks" / "results" / "cli_end_to_end.csv", index=False)
    print(df.to_string(index=False))
    ours, base = (df.loc[i, "median_cpu_s"] for i in (0, 1))
    verdict = "met" if ours <= TARGET_CPU_S else "NOT met"
    print(f"CPU x{ours / base:.2f} of the baseline; target {TARGET_CPU_S} s: {verdict}")


if __name__ == "__main__":
    main()
